"""repeat/tile/roll against NumPy over drawn layouts and modes, 0-d and empty arrays and
NumPy's errors included, natively (``fallback="raise"``); what each moves."""

import numpy as np
import pytest
from _layouts import devices, dist_pairs, holders, spread
from _oracle import check_against_numpy
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray.testing import assert_dist_equal


def check_natively(func, numpy_func, args, numpy_args, kwargs=None):
    """`func` gives `numpy_func`'s value (or error) under ``fallback="raise"``."""
    kwargs = kwargs or {}
    try:
        want = numpy_func(*numpy_args, **kwargs)
    except Exception as error:
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            func(*args, **kwargs)
        return
    with mdarray.options(fallback="raise"):
        got = func(*args, **kwargs)
    assert_dist_equal(got, np.asarray(want))


@settings(max_examples=60)
@given(dist_pairs(), st.data())
def test_repeat_by_one_count_matches_numpy(pair, data):
    x, value = pair
    axis = data.draw(st.none() | st.integers(-x.ndim - 1, x.ndim))
    repeats = data.draw(st.integers(-1, 3) | st.integers(0, 3).map(lambda n: np.array([n])))
    check_natively(mdarray.repeat, np.repeat, (x, repeats), (value, repeats), {"axis": axis})
    check_natively(np.repeat, np.repeat, (x, repeats), (value, repeats), {"axis": axis})


@settings(max_examples=60)
@given(dist_pairs(), st.data())
def test_repeat_per_element_matches_numpy(pair, data):
    """One count per element: natively, except over chunks strided along the axis."""
    x, value = pair
    axis = data.draw(st.none() | st.integers(-x.ndim - 1, x.ndim))
    n = value.size if axis is None else (value.shape[axis] if -x.ndim <= axis < x.ndim else 1)
    numpy_repeats = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    repeats = mdarray.asarray(numpy_repeats, device=x.device)
    # axis=None repeats the flattened array, whose chunks are strided where x's split a
    # later axis.
    along = mdarray.reshape(x, (-1,)) if axis is None else x
    strided = any(
        s.step > 1 and s.stop - s.start > 1 for _, index in along.layout.chunks for s in index
    )
    check = check_against_numpy if strided else check_natively
    check(mdarray.repeat, np.repeat, (x, repeats), (value, numpy_repeats), {"axis": axis})
    check(np.repeat, np.repeat, (x, numpy_repeats), (value, numpy_repeats), {"axis": axis})


@settings(max_examples=60)
@given(
    dist_pairs(),
    st.lists(st.integers(0, 2), max_size=4).map(tuple) | st.integers(-1, 3),
)
def test_tile_matches_numpy(pair, repetitions):
    x, value = pair
    check_natively(mdarray.tile, np.tile, (x, repetitions), (value, repetitions))
    check_natively(np.tile, np.tile, (x, repetitions), (value, repetitions))


@settings(max_examples=60)
@given(dist_pairs(), st.data())
def test_roll_matches_numpy(pair, data):
    x, value = pair
    bound = max(x.ndim, 1)
    if data.draw(st.booleans()):
        shift, axis = (
            data.draw(st.integers(-9, 9)),
            data.draw(st.none() | st.integers(-bound, bound)),
        )
    else:
        axis = tuple(data.draw(st.lists(st.integers(-bound, bound - 1), min_size=1, max_size=3)))
        shift = tuple(
            data.draw(st.lists(st.integers(-9, 9), min_size=len(axis), max_size=len(axis)))
        )
    check_natively(mdarray.roll, np.roll, (x, shift), (value, shift), {"axis": axis})
    check_natively(np.roll, np.roll, (x, shift), (value, shift), {"axis": axis})


def _row_blocks():
    value = np.arange(48.0).reshape(12, 4)
    layout = mdarray.Layout.block((12, 4), devices=devices(0, 1, 2))
    return mdarray.distributed_array(value, layout), value


@pytest.mark.parametrize("shift", [1, -2, 5])
def test_roll_moves_only_what_crosses_chunk_boundaries(shift):
    """Row blocks of 4 rows: each chunk fetches |shift| rows (up to 4) from a neighbour,
    a transfer where the neighbour sits on another device."""
    x, value = _row_blocks()
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.roll(x, shift, axis=0)
    holder = holders(x.layout)
    crossing = np.count_nonzero(np.roll(holder, shift, axis=0) != holder)
    assert moved.total == crossing * value.itemsize
    assert got.layout == x.layout
    assert_dist_equal(got, np.roll(value, shift, axis=0))
    with mdarray.count_transfers() as moved:
        np.roll(x, shift, axis=1)  # within each chunk
    assert moved.total == 0


def test_tile_and_repeat_move_nothing():
    x, value = _row_blocks()
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        tiled = np.tile(x, (2, 3))
        repeated = [np.repeat(x, 3, axis=a) for a in (0, 1)]
    assert moved.total == 0
    assert_dist_equal(tiled, np.tile(value, (2, 3)))
    for a, got in enumerate(repeated):
        assert_dist_equal(got, np.repeat(value, 3, axis=a))
    assert repeated[0].layout == mdarray.Layout.block((36, 4), devices=devices(0, 1, 2))


def test_tile_joins_the_copies_of_a_chunk_that_spans_the_axis():
    """A row of column chunks tiled down the rows gives one column chunk per device (the
    copies of a chunk that spans an axis lie side by side), not a chunk per copy: SciPy's
    cubature tiles a (1, 4) mask 50625 times and indexes with it."""
    value = np.array([[True, False, True, False]])
    x = mdarray.distributed_array(
        value, mdarray.Layout.block((1, 4), axis=1, devices=devices(0, 1))
    )
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        tiled = np.tile(x, (1000, 3))
    assert moved.total == 0
    assert_dist_equal(tiled, np.tile(value, (1000, 3)))
    # along the rows each chunk spans the axis (one chunk); along the columns it does not
    assert len(tiled.layout.chunks) == 2 * 3
    assert {box[0] for box in tiled.layout.boxes} == {range(1000)}


def test_repeat_per_element_moves_only_the_counts():
    x, value = _row_blocks()
    counts = np.arange(12) % 3
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.repeat(x, counts, axis=0)
    assert moved.total == 0
    assert_dist_equal(got, np.repeat(value, counts, axis=0))
    distributed_counts = mdarray.asarray(counts)
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        np.repeat(x, distributed_counts, axis=0)
    assert moved.total <= counts.nbytes  # the counts, read on the host


def test_repeat_per_element_over_strided_chunks_warns():
    layout = mdarray.Layout((6,), spread({0: slice(0, 6, 2), 1: slice(1, 6, 2)}))
    x = mdarray.distributed_array(np.arange(6), layout)
    with pytest.warns(mdarray.PerformanceWarning, match="numpy.repeat"):
        assert_dist_equal(np.repeat(x, [1, 0, 2] * 2), np.repeat(np.arange(6), [1, 0, 2] * 2))


def test_repeat_of_an_empty_axis_takes_a_negative_count_as_numpy():
    """NumPy checks the count only where the repeated axis has elements."""
    for shape, axis in [((0,), None), ((0,), -1), ((2, 0), -1), ((0, 3), 0)]:
        x = mdarray.asarray(np.zeros(shape, np.int8))
        with mdarray.options(fallback="raise"):
            got = np.repeat(x, -1, axis=axis)
        assert got.shape == np.repeat(np.zeros(shape, np.int8), -1, axis=axis).shape
    with pytest.raises(ValueError, match="negative dimensions"):
        np.repeat(mdarray.asarray(np.zeros((0, 3))), -1, axis=-1)


@pytest.mark.parametrize("mode", ["replica", "sum"])
def test_a_tile_of_many_copies_is_laid_out_in_blocks(mode):
    """Copies of chunks that cannot join (a split axis tiled many times) would make a
    chunk per copy: past a few copies per chunk the tile is row blocks over x's devices,
    each computed from a whole copy of x on its device (x moves, the tile does not)."""
    value = np.arange(6.0).reshape(2, 3) - 2
    layout = mdarray.Layout.block((2, 3), axis=1, devices=devices(0, 1, 2))
    x = mdarray.distributed_array(value, layout).change_mode(mode)
    with mdarray.options(fallback="raise"):
        tiled = np.tile(x, (500, 7))
    assert_dist_equal(tiled, np.tile(value, (500, 7)))
    assert tiled.layout == mdarray.Layout.block((1000, 21), devices=x.devices)
    assert tiled.mode is mdarray.REPLICA
