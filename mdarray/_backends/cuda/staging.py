"""Host staging for the cuda backend: copies between devices and pageable host memory.

A copy between a device and pageable host memory runs at a fraction of the link's speed
(the driver stages it through its own small pinned buffer, one piece at a time), and
pinning a large host array first costs more than the copy (about 0.4 s per GiB on an H200
host). `StagingRing` keeps a few small pinned buffers instead: each piece crosses the link
with ``cudaMemcpyAsync`` into or out of a buffer while worker threads copy other pieces
between the buffers and the pageable array (which also spreads the first touch of fresh
pages over the threads). `row_copies` plans 2-D copies into strided pinned host views.

No CuPy here: the backend passes CUDA's runtime module and its stream objects in.
"""

from __future__ import annotations

import collections
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np


class StagingRing:
    """Pinned staging buffers used in turn, and the threads that fill and empty them.

    Each buffer remembers its last use: a host-copy job (device to host; waited for before
    the buffer is reused) or the event of a copy to a device (the next filler waits for
    it). One transfer at a time uses the ring (a lock), so buffers are taken in order.
    """

    def __init__(self, runtime, buffers: list, threads: int) -> None:
        self._runtime = runtime
        self._buffers = buffers
        self._busy: list = [None] * len(buffers)
        self._next = 0
        self._lock = threading.Lock()
        self._workers = ThreadPoolExecutor(threads, "mdarray-host-copy")

    def _take(self) -> int:
        slot = self._next
        self._next = (slot + 1) % len(self._buffers)
        busy = self._busy[slot]
        if busy is not None and not hasattr(busy, "synchronize"):
            busy.result()  # a host-copy job: the buffer is free once it is done
            self._busy[slot] = None
        return slot

    def to_host(self, host_out: np.ndarray, src, stream, pending: list) -> None:
        """Copy the C-contiguous device array `src` into pageable `host_out` (same shape).

        Asynchronous: the host copies are jobs appended to `pending`; the copy is done
        when they are.
        """
        runtime = self._runtime
        with self._lock:
            for index, offset, nbytes in segments(src.shape, src.itemsize, self.buffer_bytes):
                slot = self._take()
                buffer = self._buffers[slot]
                if self._busy[slot] is not None:
                    stream.wait_event(self._busy[slot])  # its last copy to a device
                runtime.memcpyAsync(
                    buffer.ctypes.data,
                    src.data.ptr + offset,
                    nbytes,
                    runtime.memcpyDeviceToHost,
                    stream.ptr,
                )
                target = host_out[index]
                staged = buffer[:nbytes].view(src.dtype).reshape(target.shape)
                job = self._workers.submit(_copy_when_ready, stream.record(), target, staged)
                self._busy[slot] = job
                pending.append(job)

    def to_device(self, dst_ptr: int, host: np.ndarray, stream) -> None:
        """Copy C-contiguous `host` to device memory at `dst_ptr`, ordered on `stream`.

        Workers fill up to a ring's worth of buffers ahead; each filled buffer is copied
        with ``cudaMemcpyAsync`` and its event says when it may be filled again. On return
        `host` may be freed: every piece is in a buffer or on its way.
        """
        runtime = self._runtime
        flat = host.reshape(-1).view(np.uint8)
        window: collections.deque = collections.deque()

        def issue_oldest() -> None:
            job, slot, start, nbytes = window.popleft()
            job.result()
            runtime.memcpyAsync(
                dst_ptr + start,
                self._buffers[slot].ctypes.data,
                nbytes,
                runtime.memcpyHostToDevice,
                stream.ptr,
            )
            self._busy[slot] = stream.record()

        with self._lock:
            for start in range(0, flat.size, self.buffer_bytes):
                if len(window) == len(self._buffers):
                    issue_oldest()  # the slot taken next is the one it used
                slot = self._take()
                piece = flat[start : start + self.buffer_bytes]
                job = self._workers.submit(
                    _fill_when_free, self._busy[slot], self._buffers[slot], piece
                )
                window.append((job, slot, start, piece.size))
            while window:
                issue_oldest()

    @property
    def buffer_bytes(self) -> int:
        return self._buffers[0].nbytes


def _copy_when_ready(event, target: np.ndarray, staged: np.ndarray) -> None:
    event.synchronize()
    np.copyto(target, staged)


def _fill_when_free(event, buffer: np.ndarray, piece: np.ndarray) -> None:
    if event is not None:
        event.synchronize()  # the buffer's last copy to a device is done
    buffer[: piece.size] = piece


def segments(shape: tuple, itemsize: int, limit: int):
    """Pieces ``(index, byte offset, bytes)`` of a C-contiguous array of `shape`, in
    order, each a box of at most `limit` bytes (or one row of the last axis' elements)."""
    if not shape:
        yield (), 0, itemsize
        return
    row = int(np.prod(shape[1:], dtype=np.int64)) * itemsize
    if row <= limit or len(shape) == 1:
        per = max(1, limit // max(row, 1))
        for start in range(0, shape[0], per):
            stop = min(start + per, shape[0])
            yield (slice(start, stop),), start * row, (stop - start) * row
        return
    for i in range(shape[0]):
        for index, offset, nbytes in segments(shape[1:], itemsize, limit):
            yield (slice(i, i + 1), *index), i * row + offset, nbytes


# Copies into a strided host view take at most this many 2-D copies; more are staged.
_MAX_ROW_COPIES = 16
# Rows narrower than this copy slowly one by one (a 2-D copy moves a row at a time).
_MIN_ROW_BYTES = 512


def row_copies(view: np.ndarray):
    """2-D copies ``(byte offset, row bytes, rows, pitch)`` that fill `view` in C order
    from a contiguous source, or None where that takes too many or too narrow copies.
    """
    itemsize = view.itemsize
    if any(s < 0 for s in view.strides):
        return None
    # Merge axes that are contiguous with the next one; size-1 axes do not matter.
    axes: list[list[int]] = []
    for n, stride in zip(view.shape, view.strides):
        if n == 1:
            continue
        if axes and axes[-1][1] == n * stride:
            axes[-1] = [axes[-1][0] * n, stride]
        else:
            axes.append([n, stride])
    width = axes.pop()[0] * itemsize if axes and axes[-1][1] == itemsize else itemsize
    if not axes:
        return ((0, width, 1, width),)
    rows, pitch = axes.pop()
    outer = [n for n, _ in axes]
    count = int(np.prod(outer, dtype=np.int64))
    if count > _MAX_ROW_COPIES or (rows > 1 and width < _MIN_ROW_BYTES):
        return None
    return tuple(
        (sum(i * s for i, (_, s) in zip(position, axes)), width, rows, pitch)
        for position in np.ndindex(*outer)
    )
