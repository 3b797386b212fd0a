"""numpy.pad against NumPy over drawn layouts, modes and widths, natively
(``fallback="raise"``) for the constant, edge, reflect, symmetric and wrap modes; what the
constant mode moves."""

import numpy as np
import pytest
from _layouts import devices, dist_pairs, holders, spread
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray.testing import assert_dist_equal


def _widths(ndim: int):
    pair = st.tuples(st.integers(0, 4), st.integers(0, 4))
    return st.one_of(
        st.integers(-1, 4),
        pair,
        st.lists(pair, min_size=ndim, max_size=ndim),
    )


@settings(max_examples=100)
@given(dist_pairs(dtype="int16"), st.data())
def test_pad_matches_numpy(pair, data):
    x, value = pair
    mode = data.draw(st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]))
    width = data.draw(_widths(x.ndim))
    kwargs = {}
    if mode == "constant" and data.draw(st.booleans()):
        kwargs["constant_values"] = data.draw(
            st.integers(-5, 5) | st.tuples(st.integers(-5, 5), st.integers(-5, 5))
        )
    try:
        want = np.pad(value, width, mode, **kwargs)
    except Exception as error:
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            np.pad(x, width, mode, **kwargs)
        return
    with mdarray.options(fallback="raise"):
        assert_dist_equal(np.pad(x, width, mode, **kwargs), want)
        assert_dist_equal(mdarray.pad(x, width, mode, **kwargs), want)


def test_constant_pad_moves_nothing_and_widens_the_edge_chunks():
    value = np.arange(24.0).reshape(6, 4)
    x = mdarray.distributed_array(value, mdarray.Layout.block((6, 4), devices=devices(0, 1, 2)))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.pad(x, ((1, 2), (3, 0)), constant_values=-1)
    assert moved.total == 0
    assert_dist_equal(got, np.pad(value, ((1, 2), (3, 0)), constant_values=-1))
    assert got.layout == mdarray.Layout(
        (9, 7), spread({0: (slice(0, 3), slice(0, 7)), 1: (slice(3, 5),), 2: (slice(5, 9),)})
    )


def test_wrap_pad_moves_only_the_border():
    value = np.arange(24.0).reshape(6, 4)
    x = mdarray.distributed_array(value, mdarray.Layout.block((6, 4), devices=devices(0, 1, 2)))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.pad(x, ((1, 1), (0, 0)), mode="wrap")
    # The last row goes above the first and the first below the last: a transfer where
    # the edge chunks sit on different devices.
    holder = holders(x.layout)
    assert moved.total == 2 * np.count_nonzero(holder[0] != holder[-1]) * value.itemsize
    assert_dist_equal(got, np.pad(value, ((1, 1), (0, 0)), mode="wrap"))


def test_other_modes_take_the_fallback():
    x = mdarray.asarray(np.arange(4.0))
    with pytest.warns(mdarray.PerformanceWarning, match="numpy.pad"):
        assert_dist_equal(np.pad(x, 2, mode="mean"), np.pad(np.arange(4.0), 2, mode="mean"))


def test_constant_pad_of_an_empty_axis_takes_both_sides_constants():
    """Found by hypothesis: one run of constants spans the before and after sides."""
    x = mdarray.asarray(np.zeros((2, 0), np.int16))
    want = np.pad(np.zeros((2, 0), np.int16), 1, constant_values=(0, 1))
    with mdarray.options(fallback="raise"):
        assert_dist_equal(np.pad(x, 1, constant_values=(0, 1)), want)
