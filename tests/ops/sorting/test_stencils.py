"""gradient, convolve and cross against NumPy over drawn layouts and modes, moving only halos; partition and argpartition against NumPy over drawn layouts and modes, natively
(under ``fallback="raise"``), checked by the partition property (NumPy leaves the order
inside the partitions unspecified)."""

import numpy as np
import pytest
from _layouts import devices, dist_pairs, fetched, holders
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray.testing import assert_dist_equal


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
    st.sampled_from(["float64", "int32", "bool"]).flatmap(lambda dtype: dist_pairs(dtype=dtype)),
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
    x = mdarray.distributed_array(
        value, mdarray.Layout.block(value.shape, devices=devices(0, 1, 2))
    )
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.partition(x, 2, axis=1)
    assert moved.total == 0
    _check_partitioned(got.get(), value, 2, 1)
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.partition(x, 4, axis=0)
    assert moved.total == fetched(x.layout, got.layout) * value.itemsize
    _check_partitioned(got.get(), value, 4, 0)


@settings(max_examples=40)
@given(
    st.sampled_from(["float64", "float32", "int32"]).flatmap(lambda dtype: dist_pairs(dtype=dtype)),
    st.data(),
)
def test_gradient_matches_numpy(pair, data):
    x, value = pair
    if x.ndim == 0:
        return
    axis = data.draw(
        st.none()
        | st.integers(-x.ndim - 1, x.ndim)
        | st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=1, max_size=2).map(tuple)
    )
    edge_order = data.draw(st.sampled_from([1, 2]))
    count = x.ndim if axis is None else len(np.atleast_1d(axis))
    varargs = data.draw(
        st.sampled_from(
            [(), (0.5,), (2,), tuple(0.25 * (i + 1) for i in range(count)), (1.0,) * (count + 1)]
        )
    )
    try:
        want = np.gradient(value, *varargs, axis=axis, edge_order=edge_order)
    except Exception as error:
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            np.gradient(x, *varargs, axis=axis, edge_order=edge_order)
        return
    with mdarray.options(fallback="raise"):
        got = np.gradient(x, *varargs, axis=axis, edge_order=edge_order)
    if isinstance(want, tuple):
        assert isinstance(got, tuple)
        assert len(got) == len(want)
    else:
        got, want = (got,), (want,)
    for g, w in zip(got, want):
        assert_dist_equal(g, w)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_moves_only_the_halo(edge_order):
    """Row blocks along axis 0: each chunk boundary between devices moves one row each
    way."""
    value = np.arange(60.0).reshape(12, 5) ** 2
    x = mdarray.distributed_array(
        value, mdarray.Layout.block(value.shape, devices=devices(0, 1, 2))
    )
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.gradient(x, 0.5, axis=0, edge_order=edge_order)
    # Elements with a neighbour below them on another device: one row each way there.
    across = np.count_nonzero(np.diff(holders(x.layout), axis=0))
    assert moved.total == 2 * across * value.itemsize
    assert_dist_equal(got, np.gradient(value, 0.5, axis=0, edge_order=edge_order))
    assert got.devices == x.devices
    with mdarray.count_transfers() as moved:
        np.gradient(x, axis=1)
    assert moved.total == 0


@settings(max_examples=60)
@given(
    st.sampled_from(["float64", "int32"]).flatmap(
        lambda dtype: st.integers(0, 9).flatmap(
            lambda n: st.tuples(
                dist_pairs(shape=(n,), dtype=dtype), st.integers(0, 11), st.booleans()
            )
        )
    ),
    st.sampled_from(["full", "same", "valid"]),
    st.data(),
)
def test_convolve_matches_numpy(drawn, mode, data):
    (x, value), m, distributed = drawn
    kernel, kernel_value = data.draw(dist_pairs(shape=(m,), dtype=value.dtype))
    v = kernel if distributed else kernel_value
    try:
        want = np.convolve(value, kernel_value, mode=mode)
    except Exception as error:
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            np.convolve(x, v, mode=mode)
        return
    with mdarray.options(fallback="raise"):
        got = np.convolve(x, v, mode=mode)
    if want.dtype.kind == "f":
        assert got.dtype == want.dtype
        np.testing.assert_allclose(
            got.get(), want, rtol=1e-12, atol=1e-12 * np.abs(want).max(initial=0)
        )
    else:
        assert_dist_equal(got, want)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_moves_only_halos_and_the_kernel(mode):
    """Signal in 3 blocks, result in blocks over its devices: each result chunk fetches
    the signal elements it needs (its range plus len(v) - 1, a halo) from other devices,
    and v."""
    value = np.arange(12.0) ** 1.5
    kernel = np.array([1.0, -2.0, 0.5, 3.0])
    x = mdarray.distributed_array(
        value, mdarray.Layout.block(value.shape, devices=devices(0, 1, 2))
    )
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.convolve(x, kernel, mode=mode)
    holder = holders(x.layout)
    start = {"full": 0, "same": (len(kernel) - 1) // 2, "valid": len(kernel) - 1}[mode]
    halos = 0
    for (kept,), device in zip(got.layout.boxes, got.layout.chunk_devices):
        # Full-mode output i needs signal elements i - len(v) + 1 .. i.
        low = max(kept.start + start - len(kernel) + 1, 0)
        halos += np.count_nonzero(holder[low : kept.stop + start] != device) * value.itemsize
    expected = halos + len(got.layout.chunk_devices) * kernel.nbytes
    assert moved.total == expected
    assert_dist_equal(got, np.convolve(value, kernel, mode=mode))
    assert got.devices == x.devices


@st.composite
def _cross_operands(draw):
    """Shapes with a vector axis (mostly of length 3) anywhere, broadcasting together."""
    rest = draw(st.lists(st.integers(1, 4), max_size=2))
    rest_b = [draw(st.sampled_from([r, 1])) for r in rest][draw(st.integers(0, len(rest))) :]
    length_a, length_b = draw(st.sampled_from([(3, 3), (3, 3), (3, 4), (4, 3)]))
    axisa = draw(st.integers(0, len(rest)))
    axisb = draw(st.integers(0, len(rest_b)))
    shape_a = (*rest[:axisa], length_a, *rest[axisa:])
    shape_b = (*rest_b[:axisb], length_b, *rest_b[axisb:])
    dtype = draw(st.sampled_from(["float64", "int32"]))
    return (
        draw(dist_pairs(shape=shape_a, dtype=dtype)),
        draw(dist_pairs(shape=shape_b, dtype=dtype)),
        axisa,
        axisb,
    )


@settings(max_examples=60)
@given(_cross_operands(), st.booleans(), st.data())
def test_cross_matches_numpy(operands, distributed, data):
    (x, value), (y, other), axisa, axisb = operands
    ndim = max(value.ndim, other.ndim)
    axisc = data.draw(st.integers(-ndim - 1, ndim))
    b = y if distributed else other
    try:
        want = np.cross(value, other, axisa=axisa, axisb=axisb, axisc=axisc)
    except Exception as error:
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            np.cross(x, b, axisa=axisa, axisb=axisb, axisc=axisc)
        return
    with mdarray.options(fallback="raise"):
        assert_dist_equal(np.cross(x, b, axisa=axisa, axisb=axisb, axisc=axisc), want)


def test_cross_moves_nothing_for_matching_layouts():
    value = np.arange(36.0).reshape(12, 3)
    layout = mdarray.Layout.block(value.shape, devices=devices(0, 1, 2))
    x = mdarray.distributed_array(value, layout)
    y = mdarray.distributed_array(value[::-1] ** 2, layout)
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.cross(x, y)
    assert moved.total == 0
    assert_dist_equal(got, np.cross(value, value[::-1] ** 2))
