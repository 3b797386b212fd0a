"""The cuda backend's clock and memory figures, for `mdarray.profile` and
`mdarray.memory_report`: CUDA events on mdarray's stream of each device, CuPy's memory
blocks and its memory pool. A mixin of `_cuda_backend.CudaBackend` (``self._cupy``,
``self._ordinals``, ``self.stream``)."""

from __future__ import annotations

from typing import Any


class CudaClock:
    """Device time by CUDA events, and where CuPy's memory lies."""

    _cupy: Any
    _ordinals: dict[int, int]

    def stream(self, device: int) -> Any: ...

    def time_mark(self) -> tuple:
        """An event recorded now on each local device's stream: ``((device, event),
        ...)``. Recording waits for nothing."""
        marks = []
        for device, ordinal in self._ordinals.items():
            with self._cupy.cuda.Device(ordinal):
                event = self._cupy.cuda.Event()
                event.record(self.stream(device))
            marks.append((device, event))
        return tuple(marks)

    def time_elapsed(self, start: tuple, end: tuple) -> dict[int, float]:
        """Per device, the seconds between two marks on its stream (waits for `end`)."""
        out = {}
        for (device, first), (_, last) in zip(start, end):
            last.synchronize()
            out[device] = self._cupy.cuda.get_elapsed_time(first, last) / 1e3
        return out

    def pool_bytes(self, device: int) -> tuple[int, int] | None:
        """``(used, total)`` bytes of CuPy's default memory pool on `device`."""
        ordinal = self._ordinals.get(device)
        if ordinal is None:
            return None
        pool = self._cupy.get_default_memory_pool()
        with self._cupy.cuda.Device(ordinal):
            return pool.used_bytes(), pool.total_bytes()

    def allocation_of(self, array: Any) -> tuple[int, int]:
        """``(address, bytes)`` of the memory block (a pool's block, rounded up) that
        holds `array`."""
        memory = array.data.mem
        return memory.ptr, memory.size
