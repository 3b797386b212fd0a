"""distributed_array: from NumPy, CuPy, nested lists, scalars and DistArrays, in every mode.

(The array API creation functions are tested in test_creation_api.py.)
"""

import numpy as np
import pytest
from _layouts import dist_pairs, sources, two_chunks
from hypothesis import assume, example, given, strategies as st

import mdarray
from mdarray import MAX, PROD, REPLICA, SUM, Layout
from mdarray.testing import assert_chunks_hold, assert_dist_equal, strategies as mst

D = mdarray.devices()


def _held_once(x, expected):
    """In SUM and PROD each element's value sits in exactly one chunk."""
    identity = x.mode.identity(x.dtype)
    held = np.zeros(x.shape, np.int64)
    for (_, index), chunk in zip(x.layout.chunks, x.storage.buffers):
        held[index] += mdarray.testing._host(chunk) != identity
    np.testing.assert_array_equal(held, expected != identity)


@given(sources())
@example((np.arange(6).reshape(2, 3), Layout((2, 3), two_chunks((0,), (1,))), SUM))
@example((np.ones((3, 4), np.complex64), Layout.replicated((3, 4)), PROD))
@example((np.zeros((0, 4)), Layout((0, 4), {D[0]: ()}), SUM))
@example((np.array(3.0), Layout.replicated(()), SUM))
def test_from_numpy_in_every_mode(case):
    array, layout, mode = case
    before = array.copy()
    with mdarray.options(fallback="raise"):
        x = mdarray.distributed_array(array, layout.index_map, str(mode))
    assert x.layout == layout
    assert x.mode is mode
    assert x.dtype == array.dtype
    assert x.shape == array.shape
    assert x.ndim == array.ndim
    assert x.size == array.size
    assert x.nbytes == array.nbytes
    assert x.itemsize == array.itemsize
    assert_chunks_hold(x, array)
    if mode in (SUM, PROD):
        _held_once(x, array)
    if mode is REPLICA or mode.idempotent:
        for (_, index), chunk in zip(layout.chunks, x.storage.buffers):
            np.testing.assert_array_equal(mdarray.testing._host(chunk), array[index])
    assert_dist_equal(x, array)
    # The chunks are copies: changing the source later does not change x.
    np.testing.assert_array_equal(array, before)
    if array.size:
        array[...] = array.flat[0] + 1 if array.dtype.kind != "b" else ~array
        assert_dist_equal(x, before)


@given(sources())
def test_from_nested_lists_and_scalars(case):
    array, layout, mode = case
    as_list = array.tolist()
    expected = np.asarray(as_list)
    assume(expected.shape == array.shape)  # nested lists cannot spell shapes like (0, 0)
    x = mdarray.distributed_array(as_list, layout, mode)
    assert_chunks_hold(x, expected)
    assert_dist_equal(x, expected)


@pytest.mark.parametrize("value", [3, 2.5, True, 1 + 2j, np.float32(1.5), np.int8(-3)])
def test_from_scalars(value):
    x = mdarray.distributed_array(value, dict.fromkeys(D, ()))
    assert x.shape == ()
    assert x.dtype == np.asarray(value).dtype
    assert_dist_equal(x, np.asarray(value))
    assert x.item() == value


@given(dist_pairs(), st.data())
def test_from_dist_arrays(pair, data):
    x, expected = pair
    layout = data.draw(mst.layouts(x.shape))
    mode = data.draw(mst.modes(x.dtype))
    chunks_before = [mdarray.testing._host(c).copy() for c in x.storage.buffers]
    y = mdarray.distributed_array(x, data.draw(st.sampled_from([layout, layout.index_map])), mode)
    assert y.layout == layout
    assert y.mode is mode
    assert_chunks_hold(y, expected)
    assert_dist_equal(y, expected)
    for before, chunk in zip(chunks_before, x.storage.buffers):
        np.testing.assert_array_equal(mdarray.testing._host(chunk), before)


def test_from_a_partial_array_onto_duplicate_chunks():
    # Two identical chunks on one device must not both take the source chunk's buffer:
    # in SUM mode that would count its value twice.
    x = mdarray.distributed_array(np.array([1], np.int8), {D[0]: ()}, "sum")
    for mode in ("sum", "replica"):
        y = mdarray.distributed_array(x, {D[0]: [(), ()]}, mode)
        assert_chunks_hold(y, np.array([1], np.int8))


def test_from_cupy_arrays():
    if mdarray.default_backend() != "cuda":
        pytest.skip("CuPy chunks need the cuda backend")
    import cupy  # noqa: PLC0415  (only on the cuda backend; CI has no CuPy)

    with cupy.cuda.Device(D[-1]):
        source = cupy.arange(12.0).reshape(3, 4)
    x = mdarray.distributed_array(source, Layout.block((3, 4), axis=1), "sum")
    assert_chunks_hold(x, source.get())
    assert all(isinstance(c, cupy.ndarray) for c in x.storage.buffers)
    assert all(c.device.id == d for c, d in zip(x.storage.buffers, x.layout.chunk_devices))


# Bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index_map", "mode", "error", "words"),
    [
        ({max(D) + 1: slice(None)}, REPLICA, ValueError, [f"device {max(D) + 1}"]),
        ({D[0]: slice(0, 2)}, REPLICA, ValueError, ["element (2, 0)", "uncovered"]),
        ({D[0]: slice(None, None, -1)}, SUM, ValueError, ["step"]),
        ({D[0]: 9}, SUM, IndexError, ["index 9"]),
        ({D[0]: (0, 0, 0)}, SUM, IndexError, ["too many"]),
        ({D[0]: "all"}, SUM, TypeError, ["'all'"]),
        ({"0": slice(None)}, SUM, TypeError, ["'0'"]),
        (Layout.block((4, 3), devices=D[:1]), SUM, ValueError, ["(4, 3)", "(3, 4)"]),
        ({D[0]: ()}, "mean", ValueError, ["unknown mode"]),
        ({D[0]: ()}, MAX, TypeError, ["complex"]),
        ({D[0]: ()}, "min", TypeError, ["complex"]),
    ],
)
@pytest.mark.parametrize("kind", ["numpy", "list", "distarray"])
def test_bad_input(index_map, mode, error, words, kind):
    array = np.arange(12, dtype=np.complex128).reshape(3, 4)
    before = array.copy()
    source = {
        "numpy": array,
        "list": array.tolist(),
        "distarray": mdarray.distributed_array(array, two_chunks(slice(0, 2), slice(1, 3))),
    }[kind]
    with pytest.raises(error) as info:
        mdarray.distributed_array(source, index_map, mode)
    for word in words:
        assert word in str(info.value)
    np.testing.assert_array_equal(array, before)
    if kind == "distarray":
        assert source.mode is REPLICA
        assert_chunks_hold(source, before)


def test_arrays_made_alike_share_one_layout_object():
    """``device=`` gives one Layout object per shape and devices, so the plans and decided
    calls kept by layout serve every array made alike (a loop's ``ones(n, device=...)``
    reuses them instead of planning again)."""
    x = mdarray.zeros((6, 4))
    for device in (x.device, None, x.devices[0]):
        a = mdarray.ones((6, 4), device=device)
        b = mdarray.full((6, 4), 2.0, device=device)
        assert a.layout is b.layout
        np.testing.assert_array_equal((a + b).get(), np.full((6, 4), 3.0))
    assert mdarray.ones(3, device=x.devices[0]).layout == mdarray.Layout.replicated(
        (3,), devices=[x.devices[0]]
    )
    assert mdarray.ones((6, 4)).layout == mdarray.Layout.block((6, 4), devices=x.devices)


@pytest.mark.parametrize(
    ("name", "args", "kwargs"),
    [
        ("logspace", (0, 3, 7), {}),
        ("logspace", (1.5, -2, 5), {"base": 2.0, "endpoint": False, "dtype": np.float32}),
        ("geomspace", (1, 1000, 4), {}),
        ("geomspace", (-8, -1, 4), {"endpoint": False}),
    ],
)
def test_numpy_spacing_functions_give_numpys_values_where_device_says(name, args, kwargs):
    """``logspace`` and ``geomspace``, NumPy names that SciPy looks up on a namespace."""
    want = getattr(np, name)(*args, **kwargs)
    for device in (None, mdarray.devices()[-1], mdarray.DeviceSet(mdarray.devices())):
        got = getattr(mdarray, name)(*args, **kwargs, device=device)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.get(), want)
    assert mdarray.float16 is np.float16
