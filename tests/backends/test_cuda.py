"""The cuda backend on real GPUs: streams, CuPy interop and zero-copy exports.

Skipped unless CuPy imports and the default backend is cuda (``MDARRAY_BACKEND=cuda`` on
a GPU machine). Every test here also holds with one GPU: several chunks share a device.
"""

import numpy as np
import pytest
from _backend_facts import CUDA_ONLY

import mdarray
from mdarray._backends import backend as _backend
from mdarray.testing import assert_allclose, assert_array_equal, assert_dist_equal

cupy = pytest.importorskip("cupy")

pytestmark = CUDA_ONLY


def _two_chunks_per_device(shape):
    """Row blocks, two per device, in device order."""
    devices = mdarray.devices()
    n = 2 * len(devices)
    cuts = np.linspace(0, shape[0], n + 1).astype(int)
    index_map = {}
    for k in range(n):
        index_map.setdefault(devices[k // 2], []).append((slice(cuts[k], cuts[k + 1]),))
    return mdarray.Layout(shape, index_map)


def _slow_fill(shape, value, stream):
    """A large array filled on `stream` after enough queued work that a race would show."""
    with stream:
        out = cupy.empty(shape, cupy.float32)
        for _ in range(20):
            out.fill(-1.0)
            out *= 1.0
        out.fill(value)
    return out


def test_chunks_live_on_their_devices_as_cupy_arrays():
    layout = _two_chunks_per_device((64, 8))
    host = np.arange(64 * 8, dtype=np.float32).reshape(64, 8)
    x = mdarray.distributed_array(host, layout)
    for device, chunks in x.all_chunks().items():
        assert len(chunks) == 2
        for chunk in chunks:
            assert isinstance(chunk, cupy.ndarray)
            assert chunk.device.id == device
    assert_dist_equal(x, host)


def test_cupy_source_on_a_user_stream_is_read_after_it_is_written():
    stream = cupy.cuda.Stream(non_blocking=True)
    source = _slow_fill((2048, 2048), 3.0, stream)
    with stream:
        x = mdarray.distributed_array(source, _two_chunks_per_device(source.shape))
        # The user overwrites the source on their stream right away: the copy must have
        # been ordered before this.
        source.fill(5.0)
    np.testing.assert_array_equal(x.get(), np.full((2048, 2048), 3.0, np.float32))


def test_mdarray_work_while_a_user_stream_is_current():
    stream = cupy.cuda.Stream(non_blocking=True)
    host = np.random.default_rng(0).standard_normal((512, 256)).astype(np.float32)
    with stream:
        x = mdarray.distributed_array(host, _two_chunks_per_device(host.shape))
        y = (x * 2 + 1).reshard(mdarray.Layout.block(host.shape, axis=1))
        z = y.change_mode("sum").change_mode("replica")
        got = z.get()
    np.testing.assert_allclose(got, host * 2 + 1, rtol=1e-6)


def test_cupy_operands_mix_with_distarrays():
    host = np.arange(48, dtype=np.float32).reshape(6, 8)
    x = mdarray.distributed_array(host, _two_chunks_per_device(host.shape))
    other = cupy.asarray(host[::-1].copy())
    with mdarray.options(fallback="raise"):
        assert_dist_equal(x + other, host + host[::-1])
        assert_dist_equal(other * x, host[::-1] * host)
        assert_dist_equal(x - cupy.float32(1), host - np.float32(1))


def test_assertions_take_cupy_arrays_on_either_side():
    host = np.arange(6.0).reshape(2, 3)
    x = mdarray.distributed_array(host, mdarray.Layout.block(host.shape))
    on_gpu, other = cupy.asarray(host), cupy.asarray(host + 1)
    for left, right in [(x, on_gpu), (on_gpu, x), (on_gpu, host), (host, on_gpu)]:
        assert_array_equal(left, right, strict=True)
        assert_allclose(left, right * (1 + 1e-12), rtol=1e-9)
    with pytest.raises(AssertionError, match="Mismatched elements: 6 / 6"):
        assert_array_equal(x, other)
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        assert_allclose(other, x)


def test_cupy_operand_written_on_a_user_stream():
    stream = cupy.cuda.Stream(non_blocking=True)
    other = _slow_fill((1024, 1024), 2.0, stream)
    x = mdarray.ones((1024, 1024), dtype="float32", device=mdarray.DeviceSet(mdarray.devices()))
    with stream, mdarray.options(fallback="raise"):
        y = x + other
        other.fill(0.0)
    np.testing.assert_array_equal(y.get(), np.full((1024, 1024), 3.0, np.float32))


def test_cuda_array_interface_on_a_single_chunk_is_zero_copy():
    device = mdarray.devices()[-1]
    host = np.arange(12, dtype=np.float64).reshape(3, 4)
    x = mdarray.distributed_array(host, {device: (slice(None),)})
    chunk = x.all_chunks()[device][0]
    interface = x.__cuda_array_interface__
    assert interface["data"][0] == chunk.data.ptr
    assert tuple(interface["shape"]) == (3, 4)
    with cupy.cuda.Device(device):
        view = cupy.asarray(_Exported(interface))  # a consumer of the interface only
    assert view.data.ptr == chunk.data.ptr
    np.testing.assert_array_equal(cupy.asnumpy(view), host)


class _Exported:
    def __init__(self, interface):
        self.__cuda_array_interface__ = interface


def test_cuda_array_interface_is_absent_on_several_chunks():
    """A 2x2 grid of blocks made together does not lie in place as one strided array
    (column blocks would: a column-major view): DLPack's copy=False export raises, its
    default export is a gathered copy; row blocks export as one view of their slab."""
    devices = mdarray.devices()
    halves = (slice(0, 4), slice(4, 8))
    grid = {devices[0]: [(rows, slice(j, j + 1)) for rows in halves for j in (0, 1)]}
    host = np.arange(16, dtype=np.float32).reshape(8, 2)
    x = mdarray.distributed_array(host, grid)
    assert not hasattr(x, "__cuda_array_interface__")
    with pytest.raises(BufferError, match="do not lie in place"):
        x.__dlpack__(copy=False)
    np.testing.assert_array_equal(cupy.from_dlpack(x).get(), host)
    rows = mdarray.distributed_array(np.zeros((8, 2)), _two_chunks_per_device((8, 2)))
    assert not hasattr(rows, "__cuda_array_interface__")
    if len(devices) == 1:
        viewed = cupy.from_dlpack(rows)
        assert viewed.data.ptr == rows.storage.buffers[0].data.ptr


def test_dlpack_copies_on_the_device_and_refuses_a_copy_it_may_not_make():
    """``copy=True`` exports a copy on the value's device (CuPy's own export copies only
    to the CPU); ``copy=False`` towards the CPU needs a copy: BufferError."""
    device = mdarray.devices()[0]
    host = np.arange(10, dtype=np.int32)
    x = mdarray.distributed_array(host, {device: (slice(None),)})
    with cupy.cuda.Device(device):
        copied = cupy.from_dlpack(x, copy=True)
    assert copied.data.ptr != x.storage.buffers[0].data.ptr
    np.testing.assert_array_equal(cupy.asnumpy(copied), host)
    with pytest.raises(BufferError, match="needs a copy"):
        x.__dlpack__(copy=False, dl_device=(1, 0))
    np.testing.assert_array_equal(np.from_dlpack(x, device="cpu"), host)


def test_dlpack_on_a_single_chunk_shares_memory():
    device = mdarray.devices()[0]
    host = np.arange(10, dtype=np.int32)
    x = mdarray.distributed_array(host, {device: (slice(None),)})
    with cupy.cuda.Device(device):
        y = cupy.from_dlpack(x)
    assert y.data.ptr == x.all_chunks()[device][0].data.ptr
    np.testing.assert_array_equal(cupy.asnumpy(y), host)


def test_cupy_asarray_gathers_onto_the_current_device():
    host = np.arange(40, dtype=np.float32).reshape(10, 4)
    x = mdarray.distributed_array(host, _two_chunks_per_device(host.shape))
    device = mdarray.devices()[-1]
    stream = cupy.cuda.Stream(non_blocking=True)
    with cupy.cuda.Device(device), stream, mdarray.options(fallback="allow"):
        gathered = cupy.asarray(x)
        gathered += 1  # on the user's stream: must see the gathered values
    stream.synchronize()  # the user's (non-blocking) stream, before reading on another
    assert isinstance(gathered, cupy.ndarray)
    assert gathered.device.id == device
    np.testing.assert_array_equal(cupy.asnumpy(gathered), host + 1)


def test_get_of_column_blocks_and_3d_boxes():
    rng = np.random.default_rng(1)
    host = rng.standard_normal((64, 300)).astype(np.float32)
    x = mdarray.distributed_array(host, mdarray.Layout.block(host.shape, axis=1))
    np.testing.assert_array_equal(x.get(), host)
    cube = rng.standard_normal((6, 10, 12))
    layout = mdarray.Layout.grid(cube.shape, (1, 2, 2))
    assert_dist_equal(mdarray.distributed_array(cube, layout), cube)


def test_large_gets_are_staged_into_pageable_arrays():
    host = np.random.default_rng(2).standard_normal((1500, 1600)).astype(np.float32)  # 9 MiB
    x = mdarray.distributed_array(host, mdarray.Layout.block(host.shape, axis=1))
    got = x.get()
    assert not _backend.backend()._is_pinned(got)
    np.testing.assert_array_equal(got, host)


def test_staging_ring_handles_rows_larger_than_its_buffers():
    backend = _backend.CudaBackend()  # a private instance with a tiny ring
    backend.staged_min_bytes = 1 << 10
    backend.staging_buffer_bytes = 1 << 12
    backend.staging_buffers = 3
    device = mdarray.devices()[0]
    host = np.random.default_rng(3).standard_normal((40, 30, 50)).astype(np.float32)
    chunk = backend.from_host(host, device)
    out = backend.host_empty(host.shape, host.dtype)
    assert not backend._is_pinned(out)
    backend.to_host_into(out, chunk, device)
    bigger = np.zeros((40, 60, 50), np.float32)
    backend.to_host_into(bigger[:, 10:40], chunk, device)
    backend.synchronize([device])
    np.testing.assert_array_equal(out, host)
    np.testing.assert_array_equal(bigger[:, 10:40], host)
    assert not bigger[:, :10].any()
    assert not bigger[:, 40:].any()


def test_get_returns_independent_host_arrays():
    x = mdarray.distributed_array(np.arange(1000.0), _two_chunks_per_device((1000,)))
    first = x.get()
    second = x.get()
    first[:] = 0
    np.testing.assert_array_equal(second, np.arange(1000.0))


def test_moves_between_gpus_are_peer_copies():
    devices = mdarray.devices()
    if len(devices) < 2:
        pytest.skip("needs two GPUs")
    host = np.arange(32.0).reshape(4, 8)
    x = mdarray.distributed_array(host, {devices[0]: (slice(None),)})
    with mdarray.count_transfers() as moved:
        y = x.reshard({devices[1]: (slice(None),)})
    assert moved[(devices[0], devices[1])] == host.nbytes
    assert y.all_chunks()[devices[1]][0].device.id == devices[1]
    assert_dist_equal(y, host)


def test_unknown_gpu_is_refused_by_name():
    backend = _backend.backend()
    missing = max(backend.device_ids) + 1
    with pytest.raises(ValueError, match=f"device {missing} is not a device of the cuda backend"):
        backend.stream(missing)


def test_backend_streams_are_one_per_device_and_reused():
    backend = _backend.backend()
    device = mdarray.devices()[0]
    assert backend.stream(device) is backend.stream(device)
    with backend.on(device):
        assert cupy.cuda.get_current_stream() == backend.stream(device)
        with backend.on(device):  # re-entrant
            assert cupy.cuda.Device().id == device
    assert cupy.cuda.get_current_stream() != backend.stream(device)
