"""vstack, hstack, column_stack, split and array_split against NumPy over drawn layouts and
modes, natively (``fallback="raise"``); the splits move nothing."""

import numpy as np
import pytest
from _layouts import devices, dist_pairs
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray.testing import assert_dist_equal, strategies as mst


def _check(func, args, numpy_args, kwargs=None):
    kwargs = kwargs or {}
    try:
        want = func(*numpy_args, **kwargs)
    except Exception as error:
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            func(*args, **kwargs)
        return None
    with mdarray.options(fallback="raise"):
        got = func(*args, **kwargs)
    if isinstance(want, list):
        assert isinstance(got, list)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_dist_equal(g, w)
    else:
        assert_dist_equal(got, want)
    return got


@settings(max_examples=40)
@given(
    st.sampled_from([np.vstack, np.hstack, np.column_stack]),
    mst.shapes(max_dims=3),
    st.integers(1, 3),
    st.data(),
)
def test_stacks_match_numpy(func, shape, count, data):
    pairs = [data.draw(dist_pairs(shape=shape, dtype="float64")) for _ in range(count)]
    _check(func, ([x for x, _ in pairs],), ([v for _, v in pairs],))


@settings(max_examples=40)
@given(dist_pairs(), st.data())
def test_splits_match_numpy_and_move_nothing(pair, data):
    x, value = pair
    func = data.draw(st.sampled_from([np.split, np.array_split]))
    axis = data.draw(st.integers(-x.ndim - 1, x.ndim))
    if data.draw(st.booleans()):
        sections = data.draw(st.integers(-1, 4))
    else:
        sections = data.draw(st.lists(st.integers(-4, 6), max_size=3))
    if _check(func, (x, sections), (value, sections), {"axis": axis}) is not None:
        with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
            func(x, sections, axis=axis)
        assert moved.total == 0


def test_stacks_mix_numpy_operands():
    x = mdarray.asarray(np.arange(3.0))
    with mdarray.options(fallback="raise"):
        assert_dist_equal(mdarray.vstack([x, np.ones(3)]), np.vstack([np.arange(3.0), np.ones(3)]))
        assert_dist_equal(
            mdarray.column_stack([x, x]), np.column_stack([np.arange(3.0), np.arange(3.0)])
        )


@given(st.data())
def test_atleast_nd_match_numpy_natively(data):
    """``np.atleast_1d/2d/3d`` of DistArrays (any layout and mode) are views with NumPy's
    shapes and values (``fallback="raise"``); several operands give a tuple."""
    shape = data.draw(mst.shapes(max_dims=4))
    x, host = data.draw(dist_pairs(shape=shape))
    with mdarray.options(fallback="raise"):
        for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
            want = getattr(np, name)(host)
            for function in (getattr(np, name), getattr(mdarray, name)):
                got = function(x)
                assert got.shape == want.shape
                assert_dist_equal(got, want)
            pair = getattr(np, name)(x, x)
            assert isinstance(pair, tuple)
            assert [p.shape for p in pair] == [want.shape, want.shape]


def test_pieces_that_follow_on_one_device_join_into_one_chunk():
    """Stacking many small arrays held by one device gives one chunk there (a chunk per
    input would make every later operation plan over thousands of chunks); pieces on
    different devices, or that do not follow one another, stay apart."""
    values = [float(i) for i in range(300)]
    scalars = [mdarray.asarray(v, device=0) for v in values]
    blocks = [mdarray.asarray(np.full((2, 3), v), device=0) for v in values[:5]]
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        stacked = mdarray.stack(scalars)
        rows = mdarray.concat(blocks)
    assert moved.total == 0
    assert_dist_equal(stacked, np.array(values))
    assert stacked.layout == mdarray.Layout.block((300,), devices=[0])
    assert_dist_equal(rows, np.concatenate([np.full((2, 3), v) for v in values[:5]]))
    assert len(rows.layout.chunks) == 1
    first, other = devices(0, 1)
    parts = [
        mdarray.zeros(2, device=first),
        mdarray.ones(1, device=other),
        mdarray.ones(2, device=first),
    ]
    apart = mdarray.concat(parts)
    assert_dist_equal(apart, np.array([0.0, 0.0, 1.0, 1.0, 1.0]))
    if first != other:
        assert apart.index_map == {
            first: [(slice(0, 2, 1),), (slice(3, 5, 1),)],
            other: [(slice(2, 3, 1),)],
        }
