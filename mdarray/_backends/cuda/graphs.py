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
from collections.abc import Callable
from threading import get_ident
from typing import Any

from mdarray._core.recording import RecordingRefused

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
        with cupy.cuda.using_allocator(self._malloc):
            with backend.on(devices[0]):
                origin.begin_capture()
            backend.recording_thread = get_ident()
            try:
                with backend.on(devices[0]):
                    fork = origin.record()
                for device in devices[1:]:
                    with backend.on(device):
                        backend.stream(device).wait_event(fork)
                result = fn()
                for device in devices[1:]:
                    with backend.on(device):
                        joined = backend.stream(device).record()
                    with backend.on(devices[0]):
                        origin.wait_event(joined)
            except BaseException:
                # An invalidated capture ends with an error: the body's is the one to see.
                with backend.on(devices[0]), contextlib.suppress(Exception):
                    origin.end_capture()
                raise
            finally:
                backend.recording_thread = None
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
    _blas: Any  # `blas.Blas`
    #: The thread a `Recording` is recording in now, or None (`matmul` then keeps off
    #: cuBLAS in that thread, and the host copies refuse).
    recording_thread: int | None = None

    def stream(self, device: int) -> Any: ...

    on: Callable[[int], Any]

    #: Whether this backend records work once and launches it again (`recording`).
    records = True

    def recording(self, devices: tuple) -> Recording:
        """A new recording of work on `devices` (local devices of this process)."""
        _release_free()
        return Recording(self, tuple(devices))

    def matmul(self, a, b, **options):
        """``cupy.matmul(a, b, **options)``: one cuBLAS call where `Blas.matmul` takes
        the operands; while recording, for floating-point operands, `recorded_matmul`
        (CuPy refuses to call cuBLAS in a capture)."""
        if self.recording_thread == get_ident() and a.dtype.kind in "fc" and b.dtype.kind in "fc":
            return recorded_matmul(self._cupy, a, b, **options)
        if not options and (got := self._blas.matmul(a, b)) is not None:
            return got
        return self._cupy.matmul(a, b, **options)


#: The most multiply-adds (m * n * k) `recorded_matmul` takes: a larger product keeps the
#: device busy long enough for the host's cost to hide, and cuBLAS runs it faster (on an
#: H100, 8192x8192 power iteration 2.6x CuPy's time recorded, 2.1x as written; k-means'
#: 100000x16 by 16x8, one device's rows as one matrix, is 12.8M).
RECORDED_MATMUL_LIMIT = 1 << 24
#: Threads `recorded_matmul` aims at: a product with fewer outputs splits its sums.
_THREADS = 1 << 16
#: The fewest terms of a split sum.
_SPLIT_MIN = 32

# Each thread sums the products of one output's row and column over its share of the
# shared axis (outputs of all shares, then the shares summed in order: deterministic).
_PRODUCT_SOURCE = """
ptrdiff_t t = i;
const ptrdiff_t column = t % n;
t /= n;
const ptrdiff_t row = t % m;
const ptrdiff_t first = (t / m) * share;
const ptrdiff_t last = first + share < k ? first + share : k;
T sum = T(0);
for (ptrdiff_t j = first; j < last; ++j) {
    const ptrdiff_t at_a[] = {row, j};
    const ptrdiff_t at_b[] = {j, column};
    sum += a[at_a] * b[at_b];
}
out = sum;
"""

_PRODUCTS: dict = {}  # the kernel of `recorded_matmul`, by CuPy module


def recorded_matmul(cupy, a, b, out=None, dtype=None, **options):
    """``matmul(a, b)`` of matrices and vectors by a kernel of mdarray's own, which a CUDA
    graph can hold (CuPy calls cuBLAS only outside recordings), for the thin products of
    iterative algorithms (matrix-vector, k-means' distances and means), whose speed is
    the memory's either way: a thread per output, sums with few outputs split over
    threads and their parts summed after. Its sums run in another order than cuBLAS's
    (the last bits may differ). A larger product, a stack of them or one of half floats
    (cuBLAS sums those in single precision) raises: the recording fails and the loop
    runs as written, with cuBLAS."""
    if options or a.ndim > 2 or b.ndim > 2:
        raise RecordingRefused("this matrix product inside a recording (cuBLAS only)")
    x = a[None, :] if a.ndim == 1 else a
    y = b[:, None] if b.ndim == 1 else b
    kind = cupy.result_type(x, y) if dtype is None else cupy.dtype(dtype)
    if kind.char not in "fdFD":
        raise RecordingRefused(f"a {kind} matrix product inside a recording")
    (m, k), n = x.shape, y.shape[1]
    if m * n * k > RECORDED_MATMUL_LIMIT:
        raise RecordingRefused(
            f"a product of {m}x{k} by {k}x{n} inside a recording (cuBLAS only outside)"
        )
    kernel = _PRODUCTS.get(cupy)
    if kernel is None:
        kernel = _PRODUCTS[cupy] = cupy.ElementwiseKernel(
            "raw T a, raw T b, int64 m, int64 n, int64 k, int64 share",
            "T out",
            _PRODUCT_SOURCE,
            "mdarray_recorded_product",
        )
    shares = max(1, min(-(-_THREADS // max(m * n, 1)), k // _SPLIT_MIN))
    share = -(-k // shares) if k else 0
    parts = cupy.empty((shares, m, n), kind)
    kernel(x.astype(kind, copy=False), y.astype(kind, copy=False), m, n, k, share, parts)
    got = parts[0] if shares == 1 else parts.sum(axis=0)
    if a.ndim == 1:
        got = got[0]
    if b.ndim == 1:
        got = got[..., 0]
    if out is None:
        return got
    out[...] = got
    return out
