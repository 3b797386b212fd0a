"""The DistArray core: attributes, get and __array__, the one constructor, protocols."""

import numpy as np
import pytest
from _layouts import dist_pairs, two_chunks
from hypothesis import given

import mdarray
from mdarray import SUM, DistArray, Layout
from mdarray._array.array import wrap
from mdarray._storage.chunks import Chunks
from mdarray.testing import assert_dist_equal

D = mdarray.devices()


@given(dist_pairs())
def test_attributes_match_numpy(pair):
    x, expected = pair
    assert x.shape == expected.shape
    assert x.ndim == expected.ndim
    assert x.size == expected.size
    assert x.dtype == expected.dtype
    assert x.itemsize == expected.itemsize
    assert x.nbytes == expected.nbytes
    assert x.layout.shape == x.shape
    assert x.index_map == x.layout.index_map
    assert x.devices == x.layout.devices
    assert tuple(x.device) == x.devices
    assert x.device.backend == mdarray.default_backend()
    assert x.backend == mdarray.default_backend()
    chunks = x.all_chunks()
    assert list(chunks) == list(x.devices)
    assert [c.shape for d in chunks for c in chunks[d]] == [
        s for d in chunks for s, cd in zip(x.layout.chunk_shapes, x.layout.chunk_devices) if cd == d
    ]


@given(dist_pairs())
def test_get_and_array_gather_a_fresh_host_copy(pair):
    x, expected = pair
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = x.get()
    assert type(got) is np.ndarray
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected, strict=True)
    # Each element reaches the host once; partial copies are first combined on one device.
    assert sum(n for (_, dst), n in moved.bytes.items() if dst == "host") == x.nbytes
    between_devices = sum(n for (_, dst), n in moved.bytes.items() if dst != "host")
    if x.mode.is_partial and x.layout.has_overlaps:
        first = x.layout.chunk_devices[0]
        assert moved[(first, "host")] == x.nbytes
        assert between_devices == x.itemsize * sum(
            int(np.prod(s))
            for s, d in zip(x.layout.chunk_shapes, x.layout.chunk_devices)
            if d != first
        )
    else:
        assert between_devices == 0
    if x.size:
        got[...] = 0
        assert_dist_equal(x, expected)
    np.testing.assert_array_equal(np.asarray(x), expected, strict=True)
    wider = np.result_type(expected.dtype, np.float32)
    np.testing.assert_array_equal(np.array(x, dtype=wider), expected.astype(wider), strict=True)
    # copy=False: a view of x's memory where one exists (its chunks in place in one host
    # allocation, as `__dlpack__` finds), else ValueError.
    try:
        viewed = np.array(x, copy=False)
    except ValueError as error:
        assert "without a copy" in str(error)  # noqa: PT017
    else:
        assert mdarray.default_backend() == "cpu"
        np.testing.assert_array_equal(viewed, expected, strict=True)
        assert not x.size or any(np.shares_memory(viewed, b) for b in x.storage.buffers)


def test_replica_get_reads_each_element_once():
    x = mdarray.distributed_array(np.arange(12.0), Layout.replicated((12,)))
    with mdarray.count_transfers() as moved:
        x.get()
    assert moved.total == x.nbytes


def test_no_public_constructor():
    with pytest.raises(TypeError, match="distributed_array"):
        DistArray()


def test_the_one_constructor_validates():
    backend = mdarray._backends.backend.backend()
    layout = Layout((4,), two_chunks(slice(0, 2), slice(2, 4)))
    good = [backend.full((2,), 1.0, np.float64, d) for d in layout.chunk_devices]
    x = wrap(Chunks.of(layout, good, backend, np.float64), mdarray.REPLICA)
    assert_dist_equal(x, np.ones(4))
    with pytest.raises(ValueError, match="2 chunks but 1"):
        Chunks.of(layout, good[:1], backend, np.float64)
    with pytest.raises(ValueError, match=r"chunk 1 .* shape"):
        Chunks.of(layout, [good[0], backend.full((3,), 1.0, np.float64, D[-1])], backend)
    with pytest.raises(TypeError, match="dtype"):
        Chunks.of(layout, good, backend, np.float32)
    complex_chunks = [backend.full((2,), 1, np.complex64, d) for d in layout.chunk_devices]
    with pytest.raises(TypeError, match="complex"):
        wrap(Chunks.of(layout, complex_chunks, backend), mdarray.MAX)
    bad_device = Layout((4,), {max(D) + 1: slice(None)})
    with pytest.raises(ValueError, match=f"device {max(D) + 1}"):
        Chunks.of(bad_device, good[:1], backend, np.float64)


# Protocols --------------------------------------------------------------------------


@given(dist_pairs(max_blocks=1, overlapping=False, strided=False, devices=D[:1]))
def test_single_chunk_exports_without_copying(pair):
    x, expected = pair
    if len(x.layout.chunks) != 1:
        return
    chunk = x.storage.buffers[0]
    assert x.__dlpack_device__() == chunk.__dlpack_device__()
    if mdarray.default_backend() == "cpu":
        assert not hasattr(x, "__cuda_array_interface__")
        exported = np.from_dlpack(x)
        assert np.shares_memory(exported, chunk) or not x.size
        np.testing.assert_array_equal(exported, expected)
    else:
        assert x.__cuda_array_interface__["data"][0] == chunk.data.ptr


@given(dist_pairs())
def test_several_chunks_export_through_dlpack(pair):
    """Several chunks: no ``__cuda_array_interface__``. DLPack exports without a copy
    where the chunks lie in place in one allocation (one array views them all), else
    ``copy=False`` raises BufferError and the export is the value gathered onto the
    first chunk's device (what ``np.from_dlpack`` takes: the array API's DLPack tests)."""
    x, expected = pair
    if len(x.layout.chunks) == 1:
        return
    assert not hasattr(x, "__cuda_array_interface__")
    try:
        x.__dlpack__(copy=False)
        viewed = True
    except BufferError as error:
        message = str(error)
        viewed = False
    if not viewed:
        assert "copy=None or copy=True" in message
    assert x.__dlpack_device__() == x.storage.buffers[0].__dlpack_device__()
    if mdarray.default_backend() == "cpu":
        exported = np.from_dlpack(x)
        np.testing.assert_array_equal(exported, expected)
        if viewed and x.size:
            assert any(np.shares_memory(exported, chunk) for chunk in x.storage.buffers)
        copied = np.from_dlpack(x, copy=True)
        np.testing.assert_array_equal(copied, expected)
        assert not any(np.shares_memory(copied, chunk) for chunk in x.storage.buffers)
    if viewed:  # another DLPack device than the value's: a copy, refused
        with pytest.raises(BufferError, match="needs a copy"):
            x.__dlpack__(copy=False, dl_device=(2 if mdarray.default_backend() == "cpu" else 1, 0))


CPU_ONLY = pytest.mark.skipif(
    mdarray.default_backend() != "cpu", reason="the cpu backend's allocations"
)


@CPU_ONLY
@pytest.mark.parametrize(
    "make",
    [
        mdarray.asarray,
        lambda host: mdarray.full(host.shape, 2.0),
        lambda host: mdarray.reshape(mdarray.asarray(host.ravel()), host.shape),
        lambda host: mdarray.asarray(host)[1:],
        lambda host: mdarray.asarray(host)[::2, 1::2],
        lambda host: mdarray.asarray(host).T,
        lambda host: mdarray.asarray(host).copy(),
        lambda host: mdarray.asarray(host).astype(mdarray.float32),
        lambda host: mdarray.reshape(mdarray.arange(24.0), host.shape),
    ],
    ids=[
        "rows",
        "full",
        "reshaped",
        "rows view",
        "strided view",
        "transposed",
        "copy",
        "cast",
        "arange reshaped",
    ],
)
def test_chunks_in_one_allocation_export_without_a_copy(make):
    host = np.arange(24.0).reshape(4, 6)
    x = make(host)
    expected = x.get()
    exported = np.from_dlpack(x, copy=False)
    np.testing.assert_array_equal(exported, expected)
    assert any(np.shares_memory(exported, chunk) for chunk in x.storage.buffers)
    exported[0, 0] = -1.0  # a view of x: the write reaches x
    assert x[0, 0] == -1.0
    # An array sharing x's memory by copy on write keeps its value through such a write.
    x = make(host)
    sibling = x.reshard(x.layout)
    np.from_dlpack(x)[0, 0] = -1.0
    assert sibling[0, 0] == expected[0, 0]


@CPU_ONLY
def test_numpy_asarray_views_chunks_in_one_allocation():
    """``np.asarray(x)`` is a view where one NumPy array views the value, as NumPy's of
    an ndarray: writes reach each other both ways (SciPy's ndimage writes its results
    into ``np.asarray(output)``), and an array made to share x's memory by copy on
    write gets its own (chunks apart: `test_chunks_apart_export_a_copy_only`)."""
    host = np.arange(24.0).reshape(4, 6)
    x = mdarray.asarray(host)
    a = np.asarray(x)
    assert any(np.shares_memory(a, b) for b in x.storage.buffers)
    a[0, 0] = -1.0
    assert x[0, 0] == -1.0
    x[1, 1] = -2.0
    assert a[1, 1] == -2.0
    y = x.change_mode("sum")
    a[2, 2] = -3.0
    assert x[2, 2] == -3.0
    assert y[2, 2] == host[2, 2]


@CPU_ONLY
@pytest.mark.skipif(len(D) < 2, reason="chunks apart: computed on two devices")
def test_chunks_apart_export_a_copy_only():
    host = np.arange(24.0).reshape(4, 6) + 1.0
    x = mdarray.asarray(np.arange(24.0).reshape(4, 6)) + 1.0  # a fresh array per device
    assert not np.shares_memory(x.storage.buffers[0], x.storage.buffers[1])
    with pytest.raises(BufferError, match="copy=None or copy=True"):
        x.__dlpack__(copy=False)
    np.testing.assert_array_equal(np.from_dlpack(x), host)
    gathered = np.asarray(x)
    gathered[3, 3] = 100.0
    assert x[3, 3] == host[3, 3]
    with pytest.raises(ValueError, match="without a copy"):
        np.asarray(x, copy=False)
    # A gathered copy leaves x as it was: a copy made of x may still share its memory.
    shared = x.change_mode(x.mode)
    assert any(a is b for a in x.storage.buffers for b in shared.storage.buffers)


def test_array_namespace():
    x = mdarray.distributed_array([1.0, 2.0], {D[0]: ()})
    assert x.__array_namespace__() is mdarray
    assert x.__array_namespace__(api_version="2024.12") is mdarray
    with pytest.raises(ValueError, match="1999"):
        x.__array_namespace__(api_version="1999.01")


# Python scalar protocols ------------------------------------------------------------


def test_scalar_protocols():
    x = mdarray.distributed_array(np.array([3]), dict.fromkeys(D, ()), SUM)
    assert int(x) == 3
    assert float(x) == 3.0
    assert complex(x) == 3 + 0j
    assert bool(x)
    assert [0, 1, 2, 3][x] == 3
    assert x.item() == 3
    assert x.tolist() == [3]
    assert len(x) == 1
    zero_d = mdarray.distributed_array(2.5, {D[0]: ()})
    with pytest.raises(TypeError):
        len(zero_d)
    with pytest.raises(TypeError):
        iter(zero_d).__next__()
    with pytest.raises(TypeError):
        zero_d.__index__()
    many = mdarray.distributed_array(np.arange(3), {D[0]: ()})
    with pytest.raises(ValueError, match="ambiguous"):
        bool(many)
    with pytest.raises(TypeError):
        int(many)


def test_zero_d_arrays_act_as_numpy_scalars_in_python_protocols():
    """``np.iterable(x[0])`` is False (iter raises at once), a 0-d array formats and
    rounds as a NumPy scalar; ``in`` compares elementwise."""
    values = np.arange(4.0) * 1.2345
    x = mdarray.distributed_array(values, Layout.block((4,), devices=mdarray.devices()))
    m, want = np.mean(x), np.mean(values)
    assert not np.iterable(x[0])
    assert np.iterable(x)
    with pytest.raises(TypeError, match="0-d"):
        iter(m)
    assert f"{m:.3f}" == f"{want:.3f}"
    assert f"{x[2]:e}" == f"{values[2]:e}"
    assert round(m) == round(want)
    np.testing.assert_array_equal(round(m, 2).get(), round(want, 2))
    assert (values[2] in x) is True
    assert (7.5 in x) is (7.5 in values)
    assert ("a" in x) is ("a" in values)
    with pytest.raises(TypeError, match="format"):
        f"{x:.2f}"
    with pytest.raises(TypeError, match="__round__"):
        round(x)
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)


@given(dist_pairs())
def test_str_prints_the_values_as_numpy_does(pair):
    x, value = pair
    assert str(x) == str(value)
    assert f"{x}" == str(value)
    assert repr(x).startswith("DistArray(")
    assert f"mode={x.mode}" in repr(x)  # repr keeps the layout summary
