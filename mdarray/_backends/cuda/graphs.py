"""Recorded work: CUDA graphs of a function's kernels on mdarray's streams, for
`mdarray.iterate`. A mixin of `_cuda_backend.CudaBackend` (``self._cupy``, ``self.on``,
``self.stream``).

A `Recording` owns the memory of the graphs recorded into it: a private CuPy memory pool
(over the caller's allocator, so its blocks come from CuPy's pool and go back there) from
which every allocation made while recording is served. A graph keeps writing the
addresses it was recorded with, so none of that memory may serve anything else while the
graph can run: the pool gives it to nobody outside the recording, and outlives every
array that still uses it (a closed recording whose memory is still held waits in
`_LINGERING` until it is free).
"""

from __future__ import annotations

import contextlib
from typing import Any

#: Closed recordings whose pool still serves arrays (a result handed to the caller):
#: released once their memory is all free again (looked at by each new recording).
_LINGERING: list = []


class Recording:
    """The memory and the graphs of one loop's recordings on `devices` (the first records
    the others' work through events: they fork from it and join it)."""

    def __init__(self, cuda: CudaGraphs, devices: tuple) -> None:
        cupy = cuda._cupy
        self._backend = cuda
        self._cupy = cupy
        self.devices = devices
        self.pool = cupy.cuda.MemoryPool(allocator=cupy.cuda.get_allocator())
        # Memory blocks handed out by the recording in progress (their addresses).
        self._made: set[int] = set()

    def _malloc(self, size: int):
        pointer = self.pool.malloc(size)
        self._made.add(pointer.mem.ptr)
        return pointer

    def record(self, fn) -> tuple[Any, Any]:
        """``(graph, fn())``: `fn`'s work on the devices' streams recorded, not run (run it
        with `launch`). Raises what `fn` raises, or CUDA's error where `fn` did what a
        recording cannot hold (waiting for the device, the legacy stream); the streams
        are left recording nothing either way."""
        backend, cupy, devices = self._backend, self._cupy, self.devices
        origin = backend.stream(devices[0])
        self._made = set()
        backend.recording_now = True
        with cupy.cuda.using_allocator(self._malloc):
            with backend.on(devices[0]):
                origin.begin_capture()
            try:
                with backend.on(devices[0]):
                    fork = origin.record()
                for device in devices[1:]:
                    with backend.on(device):
                        backend.stream(device).wait_event(fork)
                result = fn()
                backend.recording_now = False
                for device in devices[1:]:
                    with backend.on(device):
                        joined = backend.stream(device).record()
                    with backend.on(devices[0]):
                        origin.wait_event(joined)
            except BaseException:
                backend.recording_now = False
                # An invalidated capture ends with an error: the body's is the one to see.
                with backend.on(devices[0]), contextlib.suppress(Exception):
                    origin.end_capture()
                raise
            with backend.on(devices[0]):
                graph = origin.end_capture()
        return graph, result

    def barrier(self) -> None:
        """While recording: order the work recorded next on each device after all the
        work recorded so far on every device (nothing to do for one device: its stream
        orders it)."""
        backend, devices = self._backend, self.devices
        if len(devices) == 1:
            return
        marks = []
        for device in devices:
            with backend.on(device):
                marks.append(backend.stream(device).record())
        for device in devices:
            with backend.on(device):
                for mark in marks:
                    backend.stream(device).wait_event(mark)

    def made_here(self, buffer) -> bool:
        """Whether `buffer` (a chunk) lies in memory the last `record` allocated."""
        return buffer.size == 0 or buffer.data.mem.ptr in self._made

    def launch(self, graph) -> None:
        """Run `graph` once, in order after the work issued on the devices' streams and
        before the work issued on them after."""
        backend, devices = self._backend, self.devices
        origin = backend.stream(devices[0])
        for device in devices[1:]:
            with backend.on(device):
                ready = backend.stream(device).record()
            origin.wait_event(ready)
        with backend.on(devices[0]):
            graph.launch(stream=origin)
            done = origin.record() if len(devices) > 1 else None
        for device in devices[1:]:
            with backend.on(device):
                backend.stream(device).wait_event(done)

    def close(self) -> None:
        """Give back the pool's free memory now; the pool waits in `_LINGERING` while
        arrays still use some of it."""
        self.pool.free_all_blocks()
        if self.pool.used_bytes():
            _LINGERING.append(self.pool)


def _release_free() -> None:
    """Drop the lingering pools whose memory is all free again."""
    for pool in list(_LINGERING):
        if not pool.used_bytes():
            pool.free_all_blocks()
            _LINGERING.remove(pool)


class CudaGraphs:
    """`Recording`s for `mdarray.iterate`, and the matrix product that a recording can
    hold (`matmul`)."""

    _cupy: Any
    #: Whether a `Recording` is recording now (`matmul` then keeps off cuBLAS).
    recording_now = False

    def stream(self, device: int) -> Any: ...
    def on(self, device: int) -> Any: ...

    #: Whether this backend records work once and launches it again (`recording`).
    records = True

    def recording(self, devices: tuple) -> Recording:
        """A new recording of work on `devices` (local devices of this process)."""
        _release_free()
        return Recording(self, tuple(devices))

    def matmul(self, a, b, **options):
        """``cupy.matmul(a, b, **options)``; while recording, for floating-point
        operands, `recorded_matmul` (CuPy refuses to call cuBLAS in a capture)."""
        if self.recording_now and a.dtype.kind in "fc" and b.dtype.kind in "fc":
            return recorded_matmul(self._cupy, a, b, **options)
        return self._cupy.matmul(a, b, **options)


#: The most multiply-adds (m * n * k per matrix) `recorded_matmul` takes: above it a
#: product is no longer bound by memory, and only cuBLAS reaches the device's speed.
RECORDED_MATMUL_LIMIT = 1 << 28

_DOT: dict = {}  # the reduction kernel of a sum of products, by CuPy module


def recorded_matmul(cupy, a, b, out=None, dtype=None, **options):
    """``matmul(a, b)`` by a CuPy reduction kernel (a sum of products over the shared
    axis of the operands broadcast against each other, never materialized): a kernel
    a CUDA graph can hold, for the thin products of iterative algorithms (matrix-vector,
    k-means' distances and means), whose speed is the memory's either way. Its sums run
    in another order than cuBLAS's (the last bits may differ). A larger product, or one
    of half floats (cuBLAS sums those in single precision), raises: the recording fails
    and the loop runs as written, with cuBLAS."""
    if options:
        raise NotImplementedError(f"matmul with {sorted(options)} inside a recording")
    x = a[None, :] if a.ndim == 1 else a
    y = b[:, None] if b.ndim == 1 else b
    kind = cupy.result_type(x, y) if dtype is None else cupy.dtype(dtype)
    if kind.char not in "fdFD":
        raise NotImplementedError(f"a {kind} matrix product inside a recording")
    m, k = x.shape[-2:]
    n = y.shape[-1]
    if m * n * k > RECORDED_MATMUL_LIMIT:
        raise NotImplementedError(
            f"a product of {m}x{k} by {k}x{n} inside a recording (CuPy calls cuBLAS only "
            "outside recordings)"
        )
    dot = _DOT.get(cupy)
    if dot is None:
        dot = _DOT[cupy] = cupy.ReductionKernel(
            "T u, T v", "T w", "u * v", "a + b", "w = a", "0", "mdarray_dot"
        )
    got = dot(
        x.astype(kind, copy=False)[..., :, :, None],
        y.astype(kind, copy=False)[..., None, :, :],
        axis=-2,
    )
    if a.ndim == 1:
        got = got[..., 0, :]
    if b.ndim == 1:
        got = got[..., 0]
    if out is None:
        return got
    out[...] = got
    return out
