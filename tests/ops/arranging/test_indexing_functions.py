"""take/take_along_axis against NumPy over drawn layouts and modes, indices as DistArrays
or NumPy arrays, out-of-range ones included; numpy.take's out= written back into a
DistArray in its layout and mode."""

import math

import numpy as np
import pytest
from _layouts import devices, dist_pairs
from _oracle import check_against_numpy
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray.testing import assert_chunks_hold, assert_dist_equal, strategies as mst


def _indices(data, shape, length):
    """Integer indices in ``[-length, length]`` (the last one out of range), as a DistArray
    of a drawn layout or a NumPy array."""
    size = math.prod(shape)
    drawn = data.draw(st.lists(st.integers(-length, length), min_size=size, max_size=size))
    value = np.array(drawn, dtype=np.intp).reshape(shape)
    if data.draw(st.booleans()):
        return value, value
    return mdarray.distributed_array(value, data.draw(mst.layouts(shape))), value


def _axis_length(shape, axis):
    if axis is None:
        return math.prod(shape)
    return shape[axis] if -len(shape) <= axis < len(shape) else 1


@settings(max_examples=40)
@given(dist_pairs(), st.data())
def test_take_matches_numpy(pair, data):
    x, value = pair
    axis = data.draw(st.none() | st.integers(-x.ndim - 1, x.ndim))
    k = data.draw(st.integers(0, 4))
    indices, index_value = _indices(data, (k,), _axis_length(value.shape, axis))
    check_against_numpy(np.take, np.take, (x, indices), (value, index_value), {"axis": axis})
    check_against_numpy(mdarray.take, np.take, (x, indices), (value, index_value), {"axis": axis})


def test_take_out_is_written_back_in_its_layout_and_mode():
    value = np.arange(12.0).reshape(3, 4)
    x = mdarray.asarray(value)
    out = mdarray.distributed_array(np.zeros((3, 2)), mdarray.Layout.block((3, 2), axis=1), "sum")
    layout = out.layout
    with mdarray.options(fallback="allow"):
        returned = np.take(x, np.array([3, 0]), axis=1, out=out)
        with pytest.raises(IndexError):
            np.take(x, np.array([9, 0]), axis=1, out=out)
    assert returned is out
    assert out.layout == layout
    assert out.mode is mdarray.SUM
    assert_chunks_hold(out, value[:, [3, 0]])
    host_out = np.zeros(2)
    with mdarray.options(fallback="allow"):
        assert np.take(mdarray.asarray(np.arange(4.0)), [1, 2], out=host_out) is host_out
    np.testing.assert_array_equal(host_out, [1.0, 2.0])


@settings(max_examples=40)
@given(dist_pairs(), st.data())
def test_take_along_axis_matches_numpy(pair, data):
    x, value = pair
    axis = data.draw(st.integers(-x.ndim - 1, x.ndim))
    shape = list(value.shape)
    valid = -x.ndim <= axis < x.ndim
    if valid:
        shape[axis] = data.draw(st.integers(0, 3))
    length = value.shape[axis] if valid else 1
    indices, index_value = _indices(data, tuple(shape), length)
    args = (x, indices), (value, index_value), {"axis": axis}
    check_against_numpy(mdarray.take_along_axis, np.take_along_axis, *args)


def test_take_along_axis_with_argsort_and_the_warning():
    """Along an axis runs per chunk; axis=None (flattened) still gathers, with a warning."""
    value = np.array([[3, 1, 2], [0, 5, 4]])
    x = mdarray.asarray(value)
    with mdarray.options(fallback="raise"):
        got = mdarray.take_along_axis(x, mdarray.asarray(np.argsort(value, axis=0)), axis=0)
    assert_dist_equal(got, np.sort(value, axis=0))
    flat = np.argsort(value, axis=None)
    with pytest.warns(mdarray.PerformanceWarning, match="numpy.take_along_axis"):
        got = np.take_along_axis(x, mdarray.asarray(flat), axis=None)
    assert_dist_equal(got, np.take_along_axis(value, flat, axis=None))


@given(st.data())
def test_take_along_axis_runs_per_chunk_in_every_mode(data):
    x, value = data.draw(dist_pairs(shape=data.draw(mst.shapes(min_dims=1))))
    axis = data.draw(st.integers(0, x.ndim - 1))
    shape = list(value.shape)
    shape[axis] = data.draw(st.integers(1, 3))
    n = value.shape[axis]
    if not n or not value.size:
        return
    drawn = data.draw(
        st.lists(st.integers(-n, n - 1), min_size=math.prod(shape), max_size=math.prod(shape))
    )
    index_value = np.array(drawn, dtype=np.intp).reshape(shape)
    indices = index_value
    if data.draw(st.booleans()):
        indices = mdarray.distributed_array(index_value, data.draw(mst.layouts(tuple(shape))))
    with mdarray.options(fallback="raise"):
        got = np.take_along_axis(x, indices, axis=axis)
        also = mdarray.take_along_axis(x, indices, axis=axis)
    want = np.take_along_axis(value, index_value, axis=axis)
    assert_chunks_hold(got, want)
    assert_chunks_hold(also, want)


def test_take_along_an_unsplit_axis_moves_nothing():
    value = np.arange(24.0).reshape(4, 6)
    x = mdarray.distributed_array(value, mdarray.Layout.block((4, 6), devices=devices(0, 1)))
    order = np.argsort(-value, axis=1)[:, :4]
    indices = mdarray.distributed_array(order, mdarray.Layout.block((4, 4), devices=devices(0, 1)))
    with mdarray.count_transfers() as moved, mdarray.options(fallback="raise"):
        got = np.take_along_axis(x, indices, axis=1)
    assert moved.total == 0
    assert_chunks_hold(got, np.take_along_axis(value, order, axis=1))
    # A split axis is made whole by one reshard of x (at most x's bytes move).
    split = mdarray.distributed_array(value, mdarray.Layout.block((4, 6), axis=1))
    with mdarray.count_transfers() as moved, mdarray.options(fallback="raise"):
        got = np.take_along_axis(split, indices, axis=1)
    assert moved.total <= value.nbytes + order.nbytes
    assert_chunks_hold(got, np.take_along_axis(value, order, axis=1))


def test_take_along_axis_bounds_error_as_numpy():
    value = np.zeros((2, 3))
    bad = np.array([[0, 5, -9], [7, 1, 1]])
    x = mdarray.distributed_array(value, mdarray.Layout.block((2, 3), devices=devices(0, 1)))
    with pytest.raises(IndexError) as numpy_error:
        np.take_along_axis(value, bad, axis=1)
    for indices in (bad, mdarray.asarray(bad)):
        with mdarray.options(fallback="raise"), pytest.raises(IndexError) as ours:
            np.take_along_axis(x, indices, axis=1)
        assert str(ours.value) == str(numpy_error.value)


def test_take_from_empty_arrays_checks_as_numpy():
    """No bounds check where the result is empty; NumPy's IndexError where it is not."""
    with mdarray.options(fallback="raise"):
        got = np.take(mdarray.asarray(np.zeros((0, 2, 0))), [0, 0, 3], axis=-1)
        assert got.shape == (0, 2, 3)
        with pytest.raises(IndexError, match="non-empty take from an empty axes"):
            np.take(mdarray.asarray(np.zeros((2, 0))), [5], axis=-1)
