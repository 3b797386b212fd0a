"""The cuda backend's copies between the host and its devices: pinned host arrays for small
results, a ring of pinned staging buffers (`_staging.StagingRing`) for large pageable ones,
2-D copies into strided pinned memory. A mixin of `_cuda_backend.CudaBackend` (``self._cupy``,
``self.stream``, ``self.on``, the staging settings and ``self._pending``, which its
``synchronize`` finishes)."""

from __future__ import annotations

from collections.abc import Callable
from threading import get_ident
from typing import Any

import numpy as np

from mdarray._core import debug as _debug
from mdarray._core.debug import HOST

from .staging import StagingRing, row_copies


class CudaHostCopies:
    """Host <-> device copies of the cuda backend."""

    _cupy: Any
    _pending: dict[int, list]
    _ring: StagingRing | None
    staged_min_bytes: int
    staging_buffer_bytes: int
    staging_buffers: int
    host_copy_threads: int

    def stream(self, device: int) -> Any: ...

    on: Callable[[int], Any]

    recording_thread: int | None

    def _not_recording(self) -> None:
        """Refuse a copy between the host and a device while recording (`graphs`): the
        recording would repeat it at each launch, from or into host memory that may be
        gone by then (the recording fails; the loop runs as written)."""
        if self.recording_thread == get_ident():
            raise RuntimeError("the loop body copies between the host and a device")

    def from_host(self, host_array: np.ndarray, device: int, out=None):
        """A chunk on `device` holding a copy of `host_array` (written into `out`, a
        contiguous array of its shape on `device`, when given).

        A large pageable array goes through the ring of pinned staging buffers: worker
        threads fill the buffers while earlier ones cross the link.
        """
        if self.recording_thread is not None:  # (no frame outside recordings)
            self._not_recording()
        _debug.record_transfer(HOST, device, host_array.nbytes)
        host = np.asarray(host_array, order="C")  # ascontiguousarray would make 0-d 1-d
        if not host.dtype.isnative:  # CuPy's arrays hold the machine's byte order
            host = host.astype(host.dtype.newbyteorder("="))
        stream = self.stream(device)
        with self.on(device):
            if out is None:
                out = self._cupy.empty(host.shape, host.dtype)
            if host.nbytes >= self.staged_min_bytes and not self._is_pinned(host):
                self._staging_ring().to_device(out.data.ptr, host, stream)
            else:
                out.set(host, stream=stream)
            return out

    def host_empty(self, shape, dtype) -> np.ndarray:
        """A host array to copy device data into.

        Small arrays come from CuPy's pinned pool: copies into page-locked memory run
        asynchronously at the link's speed, and the pool makes the next allocation of the
        same size cheap. Large ones are ordinary (pageable) arrays, filled through a few
        pinned staging buffers by `to_host_into`: pinning a fresh gigabyte costs more than
        copying it (0.5 s against 20 ms on an H200 host), and results the caller keeps
        would hold page-locked memory for as long as they live.
        """
        dtype = np.dtype(dtype)
        shape = tuple(shape)
        count = int(np.prod(shape, dtype=np.int64))
        if count * dtype.itemsize >= self.staged_min_bytes:
            return np.empty(shape, dtype)
        memory = self._cupy.cuda.alloc_pinned_memory(max(count * dtype.itemsize, 1))
        return np.ndarray(shape, dtype, buffer=memory)

    def to_host_into(self, host_out: np.ndarray, array, device: int) -> None:
        """Copy device `array` into `host_out` (same shape) asynchronously.

        The copy is complete after `synchronize(device)`. Into pinned memory: 2-D copies
        (one per run of rows of a strided `host_out`), or a pinned staging buffer written
        into place by `synchronize` where that takes too many copies. Into pageable
        memory: through the ring of pinned staging buffers, with the host-side copies (and
        the first touch of fresh pages) done by worker threads while the next piece
        crosses the link.
        """
        cupy = self._cupy
        if self.recording_thread is not None:  # (no frame outside recordings)
            self._not_recording()
        _debug.record_transfer(device, HOST, array.nbytes)
        if not array.size:
            return
        stream = self.stream(device)
        with self.on(device):
            src = contiguous(array)
            if not self._is_pinned(host_out):
                self._staging_ring().to_host(
                    host_out, src, stream, self._pending.setdefault(device, [])
                )
                return
            plan = row_copies(host_out)
            if plan is None:
                staging = self._cupy_pinned(src.shape, src.dtype)
                plan = row_copies(staging)
                self._pending.setdefault(device, []).append((host_out, staging))
                host_out = staging
            base = host_out.ctypes.data
            src_offset = 0
            for dst_offset, width, height, pitch in plan:
                cupy.cuda.runtime.memcpy2DAsync(
                    base + dst_offset,
                    pitch,
                    src.data.ptr + src_offset,
                    width,
                    width,
                    height,
                    cupy.cuda.runtime.memcpyDeviceToHost,
                    stream.ptr,
                )
                src_offset += width * height

    def to_host(self, array, device: int) -> np.ndarray:
        """A host copy of `array` (on `device`), complete on return: CuPy's copy on the
        device's stream, waited for (for small arrays; large ones go by `to_host_into`)."""
        if self.recording_thread is not None:  # (no frame outside recordings)
            self._not_recording()
        _debug.record_transfer(device, HOST, array.nbytes)
        with self.on(device):
            return array.get(stream=self.stream(device))

    def _cupy_pinned(self, shape, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        memory = self._cupy.cuda.alloc_pinned_memory(max(nbytes, 1))
        return np.ndarray(tuple(shape), dtype, buffer=memory)

    def _is_pinned(self, host_array: np.ndarray) -> bool:
        runtime = self._cupy.cuda.runtime
        try:
            kind = runtime.pointerGetAttributes(host_array.ctypes.data).type
        except runtime.CUDARuntimeError:
            return False
        return kind == runtime.memoryTypeHost

    def _staging_ring(self):
        """The ring of pinned staging buffers, created on first use."""
        if self._ring is None:
            buffers = [
                self._cupy_pinned((self.staging_buffer_bytes,), np.uint8)
                for _ in range(self.staging_buffers)
            ]
            self._ring = StagingRing(self._cupy.cuda.runtime, buffers, self.host_copy_threads)
        return self._ring


def contiguous(array):
    """`array` if C-contiguous, else a C-contiguous copy of the same shape (0-d too)."""
    return array if array.flags.c_contiguous else array.copy(order="C")
