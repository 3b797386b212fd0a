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
            with backend.on(devices[0]):
                graph = origin.end_capture()
        return graph, result

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
    """`Recording`s for `mdarray.iterate`."""

    _cupy: Any

    def stream(self, device: int) -> Any: ...
    def on(self, device: int) -> Any: ...

    #: Whether this backend records work once and launches it again (`recording`).
    records = True

    def recording(self, devices: tuple) -> Recording:
        """A new recording of work on `devices` (local devices of this process)."""
        _release_free()
        return Recording(self, tuple(devices))
