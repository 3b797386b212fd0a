"""Array API creation functions against NumPy: every ``device=`` form, chunks computed
on their devices (no host-to-device copies), and the ``*_like`` layouts."""

import re

import numpy as np
import pytest
from _layouts import device, devices, dist_pairs, distinct
from hypothesis import given, strategies as st

import mdarray
from mdarray.testing import (
    assert_chunks_hold,
    assert_dist_allclose,
    assert_dist_equal,
    strategies as mst,
)


def _devices(shape):
    return st.one_of(
        st.none(),
        st.sampled_from(mdarray.devices()),
        st.lists(st.sampled_from(mdarray.devices()), min_size=1, unique=True).map(
            mdarray.DeviceSet
        ),
        mst.layouts(shape),
    )


def _expected_layout(x, device):
    if isinstance(device, mdarray.Layout):
        assert x.layout == device
    elif isinstance(device, mdarray.DeviceSet):
        assert set(x.devices) <= set(device)
    elif device is not None:
        assert x.devices == (device,)


@given(
    st.integers(-6, 6),
    st.integers(-6, 12),
    st.integers(-3, 3).filter(bool),
    st.sampled_from([None, "int16", "float32", "float64"]),
    st.data(),
)
def test_arange_matches_numpy_on_device(start, stop, step, dtype, data):
    want = np.arange(start, stop, step, dtype=dtype)
    device = data.draw(_devices(want.shape))
    with mdarray.count_transfers() as moved:
        x = mdarray.arange(start, stop, step, dtype=dtype, device=device)
    assert moved.total == 0
    assert_dist_equal(x, want)
    _expected_layout(x, device)


@pytest.mark.parametrize("args", [(0.5, 3.2, 0.3), (0, 1, 0.1), (2.0,), (1, -1, -0.25)])
@pytest.mark.parametrize("dtype", [None, "float32"])
def test_arange_of_floats_matches_numpy(args, dtype):
    assert_dist_allclose(
        mdarray.arange(*args, dtype=dtype), np.arange(*args, dtype=dtype), rtol=1e-6
    )


@given(
    st.integers(-5, 5),
    st.integers(-5, 5),
    st.integers(0, 9),
    st.booleans(),
    st.sampled_from([None, "float32", "int32", "complex128"]),
    st.data(),
)
def test_linspace_matches_numpy_on_device(start, stop, num, endpoint, dtype, data):
    want = np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    device = data.draw(_devices(want.shape))
    with mdarray.count_transfers() as moved:
        x = mdarray.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, device=device)
    assert moved.total == 0
    assert_dist_allclose(x, want, rtol=1e-6)
    _expected_layout(x, device)


@given(st.integers(0, 6), st.none() | st.integers(0, 6), st.integers(-7, 7), st.data())
def test_eye_matches_numpy_on_device(n, m, k, data):
    want = np.eye(n, m, k=k, dtype=np.int8)
    device = data.draw(_devices(want.shape))
    with mdarray.count_transfers() as moved:
        x = mdarray.eye(n, m, k=k, dtype=mdarray.int8, device=device)
    assert moved.total == 0
    assert_dist_equal(x, want)


@given(st.data())
def test_like_functions_take_the_layout_of_their_input(data):
    x, expected = data.draw(dist_pairs())
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        results = [
            (np.zeros_like(x), np.zeros_like(expected)),
            (mdarray.ones_like(x, dtype=mdarray.float32), np.ones_like(expected, np.float32)),
            (np.full_like(x, 3), np.full_like(expected, 3)),
            (mdarray.full_like(x, 2, device=0), np.full_like(expected, 2)),
        ]
        empty = np.empty_like(x)
    assert moved.total == 0
    for got, want in results[:3]:
        assert got.layout == x.layout
        assert got.mode is mdarray.REPLICA
        assert_dist_equal(got, want)
    assert results[3][0].devices == (0,)
    assert empty.layout == x.layout
    assert empty.dtype == x.dtype


@given(st.data())
def test_tril_and_triu_match_numpy_and_keep_the_mode(data):
    shape = data.draw(mst.shapes(min_dims=2))
    x, expected = data.draw(dist_pairs(shape=shape))
    k = data.draw(st.integers(-3, 3))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        lower, upper = mdarray.tril(x, k=k), np.triu(x, k)
    assert moved.total == 0
    assert lower.mode is x.mode
    assert upper.mode is x.mode
    assert_chunks_hold(lower, np.tril(expected, k))
    assert_chunks_hold(upper, np.triu(expected, k))


def test_asarray_from_host_data_and_distarrays():
    layout = mdarray.Layout.block((2, 3), axis=1, devices=devices(1, 2))
    x = mdarray.asarray([[1, 2, 3], [4, 5, 6]], device=layout)
    assert x.layout == layout
    assert x.dtype == np.int64
    assert mdarray.asarray(x) is x
    copied = mdarray.asarray(x, copy=True)
    copied[0, 0] = 9
    assert x.get()[0, 0] == 1
    assert_dist_equal(mdarray.asarray(x, dtype=mdarray.float32), np.float32(x.get()))
    assert mdarray.asarray(x, device=device(3)).devices == (device(3),)
    assert_dist_equal(mdarray.asarray(2.5), np.asarray(2.5))
    assert_dist_equal(mdarray.asarray(np.arange(4), dtype="int8"), np.arange(4, dtype="int8"))
    with pytest.raises(ValueError, match="copy=False"):
        mdarray.asarray(x, dtype=mdarray.float32, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        mdarray.asarray([1, 2], copy=False)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid_matches_numpy(indexing, sparse):
    inputs = [np.arange(3), np.arange(4.0), np.arange(2)]
    arrays = [mdarray.asarray(a, device=mdarray.DeviceSet(distinct(0, 1))) for a in inputs]
    with mdarray.options(fallback="raise"):
        grids = np.meshgrid(*arrays, indexing=indexing, sparse=sparse)
    for got, want in zip(grids, np.meshgrid(*inputs, indexing=indexing, sparse=sparse)):
        assert_dist_equal(got, want)


@pytest.mark.parametrize(
    ("shape", "fill"),
    [((2, 3), [1, 2, 3]), ((2, 3), [[1], [2]]), ((4,), 7.5), ((), [[3]]), ((3,), [1, 2])],
)
def test_full_broadcasts_an_array_fill_value_as_numpy(shape, fill):
    try:
        want = np.full(shape, fill)
    except ValueError as error:
        with pytest.raises(ValueError, match=re.escape(str(error))):
            mdarray.full(shape, fill)
        return
    got = mdarray.full(shape, fill)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)


def test_full_refuses_a_fill_value_that_does_not_broadcast():
    with pytest.raises(ValueError, match=r"from shape \(2,\) into shape \(4,\)"):
        mdarray.full((4,), [1, 2])


def test_from_dlpack_copies_a_foreign_array_into_chunks():
    host = np.arange(12.0).reshape(3, 4)
    x = mdarray.from_dlpack(host)
    np.testing.assert_array_equal(x.get(), host)
    host[0, 0] = -1  # a copy: the DistArray does not follow
    assert x.get()[0, 0] == 0
    assert mdarray.from_dlpack(x) is x
    with pytest.raises(ValueError, match="copy=False"):
        mdarray.from_dlpack(host, copy=False)
    with pytest.raises(TypeError, match="__dlpack__"):
        mdarray.from_dlpack([1, 2])


@pytest.mark.parametrize(
    "make",
    [
        lambda: mdarray.asarray(np.arange(8.0))[:1],
        lambda: mdarray.asarray(np.ones((3, 4)), device=mdarray.Layout.block((3, 4), axis=1)),
    ],
    ids=["a view on fewer devices", "columns"],
)
@pytest.mark.skipif(len(mdarray.devices()) < 2, reason="a layout unlike blocks needs two devices")
def test_asarray_on_its_own_device_moves_nothing(make):
    """``device=x.device`` names the group x is on: nothing moves, whatever x's layout,
    so ``copy=False`` holds (the array API's from_dlpack test passes ``x.device``)."""
    x = make()
    assert x.layout != mdarray.Layout.block(x.shape, devices=x.device)
    for same in (
        mdarray.asarray(x, device=x.device, copy=False),
        mdarray.from_dlpack(x, device=x.device, copy=False),
        mdarray.asarray(x, device=x.device),
    ):
        assert same is x


@pytest.mark.parametrize("data", [["yes", "no"], [b"a"], [1, None], "text"])
def test_asarray_of_python_strings_or_objects_refuses_as_the_array_api(data):
    """Python data NumPy would hold as strings, bytes or objects: TypeError on every
    backend (the array API's data types, CuPy's), which clients catch to tell an
    unsupported input (scikit-learn's ``label_binarize``); a NumPy array of that dtype,
    or ``dtype=``, holds them (cpu backend)."""
    with pytest.raises(TypeError, match="array API's data types"):
        mdarray.asarray(data)
    host = np.asarray(data)
    if mdarray.default_backend() == "cpu":
        np.testing.assert_array_equal(mdarray.asarray(host).get(), host)
        np.testing.assert_array_equal(mdarray.asarray(data, dtype=host.dtype).get(), host)
