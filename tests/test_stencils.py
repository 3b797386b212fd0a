"""partition and argpartition against NumPy over drawn layouts and modes, natively
(under ``fallback="raise"``), checked by the partition property (NumPy leaves the order
inside the partitions unspecified)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mdarray
from mdarray.testing import strategies as mst


def _check_partitioned(got: np.ndarray, value: np.ndarray, kth, axis: int) -> None:
    """`got` is `value` partitioned at `kth` along `axis`: same elements per lane, each kth
    element in its sorted place, the ones before it no greater, the ones after no less."""
    want = np.sort(value, axis=axis)
    np.testing.assert_array_equal(np.sort(got, axis=axis), want)
    n = value.shape[axis]
    for position in np.atleast_1d(kth):
        k = int(position) % n
        at = np.take(got, [k], axis=axis)
        np.testing.assert_array_equal(at, np.take(want, [k], axis=axis))
        assert np.all(np.take(got, range(k), axis=axis) <= at)
        assert np.all(np.take(got, range(k + 1, n), axis=axis) >= at)


@settings(max_examples=40)
@given(
    st.sampled_from(["float64", "int32", "bool"]).flatmap(
        lambda dtype: mst.dist_arrays(dtype=dtype)
    ),
    st.data(),
)
def test_partition_matches_numpy(pair, data):
    x, value = pair
    axis = data.draw(st.sampled_from([None, *range(-x.ndim - 1, x.ndim + 1)]))
    length = value.size if axis is None else (value.shape[axis] if -x.ndim <= axis < x.ndim else 1)
    kth = data.draw(
        st.integers(-length - 1, length)
        | st.lists(st.integers(-length - 1, length), min_size=1, max_size=3)
    )
    try:
        np.partition(value, kth, axis=axis)
    except Exception as error:
        if x.ndim == 0:
            return
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            np.partition(x, kth, axis=axis)
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            np.argpartition(x, kth, axis=axis)
        return
    if x.ndim == 0:
        return
    flat = value.reshape(-1) if axis is None else value
    lane_axis = 0 if axis is None else axis
    with mdarray.options(fallback="raise"):
        got = np.partition(x, kth, axis=axis)
        order = np.argpartition(x, kth, axis=axis)
    assert got.dtype == value.dtype
    assert got.shape == flat.shape
    assert order.dtype == np.intp
    assert order.shape == flat.shape
    if flat.size:
        _check_partitioned(got.get(), flat, kth, lane_axis)
        _check_partitioned(
            np.take_along_axis(flat, order.get(), axis=lane_axis), flat, kth, lane_axis
        )


def test_partition_moves_only_to_make_the_axis_whole():
    value = np.arange(60.0)[::-1].reshape(12, 5).copy()
    x = mdarray.distributed_array(value, mdarray.Layout.block(value.shape, devices=[0, 1, 2]))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.partition(x, 2, axis=1)
    assert moved.total == 0
    _check_partitioned(got.get(), value, 2, 1)
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.partition(x, 4, axis=0)
    assert 0 < moved.total <= value.nbytes
    _check_partitioned(got.get(), value, 4, 0)
