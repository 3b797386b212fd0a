"""Seeing memory: `memory_report` gives, per device, the bytes live DistArrays hold.

Nothing is counted as arrays are made: the report walks the live arrays when asked
(the garbage collector's list of objects), so the hot path pays nothing. Each chunk's
memory is the block that holds it (`Backend.allocation_of`: the NumPy array at the root
of its views, CuPy's pool block), and blocks are counted once per device however many
arrays share them: views, copy-on-write copies (`Chunks.derive`) and the chunks of one
packed slab are one block.
"""

from __future__ import annotations

import gc
from typing import Any

from mdarray._backends.backend import backend as default_backend_object
from mdarray._spmd.processes import Remote

from .stored import Stored


class MemoryReport:
    """What `memory_report` found, per device of the default backend.

    ``arrays[device]`` is the bytes held by live DistArray chunks on the device (each
    memory block once); ``pool[device]`` is ``(used, total)`` bytes of the backend's
    memory pool, where it has one (CuPy's on CUDA devices; empty on the cpu backend).
    `as_dict` gives both by device; printed, it is a table.
    """

    def __init__(self, backend_name: str, arrays: dict[int, int], pool: dict) -> None:
        self.backend = backend_name
        self.arrays = arrays
        self.pool = pool

    @property
    def total(self) -> int:
        """Bytes held by live DistArray chunks on every device together."""
        return sum(self.arrays.values())

    def as_dict(self) -> dict[int, dict[str, int]]:
        """``{device: {"arrays": bytes, "pool_used": bytes, "pool_total": bytes}}`` (the
        pool's figures only where the backend has a pool)."""
        out: dict[int, dict[str, int]] = {}
        for device, held in self.arrays.items():
            out[device] = {"arrays": held}
            if device in self.pool:
                out[device]["pool_used"], out[device]["pool_total"] = self.pool[device]
        return out

    def __str__(self) -> str:
        pooled = bool(self.pool)
        lines = [f"mdarray memory ({self.backend} backend): {self.total} B in live arrays"]
        header = f"{'device':>6}  {'arrays B':>14}"
        lines.append(header + (f"  {'pool used B':>14}  {'pool total B':>14}" if pooled else ""))
        for device, held in self.arrays.items():
            line = f"{device:>6}  {held:>14}"
            if device in self.pool:
                used, total = self.pool[device]
                line += f"  {used:>14}  {total:>14}"
            lines.append(line)
        return "\n".join(lines)

    __repr__ = __str__


def memory_report() -> MemoryReport:
    """Per device, the bytes held by live DistArrays' chunks and the backend's pool.

    Memory several arrays share (a view and its base, copy-on-write copies, the chunks of
    one packed slab) is counted once, as the whole block that holds it. On CUDA devices
    it also reports CuPy's default memory pool (used and total bytes), which holds freed
    blocks for reuse. It looks at the arrays when called, so making arrays costs nothing
    more; only this process's devices and the default backend's arrays are counted.

    >>> import gc, mdarray, numpy as np
    >>> before = mdarray.memory_report().arrays
    >>> x = mdarray.distributed_array(np.zeros(100), mdarray.Layout.block((100,), devices=[0, 1]))
    >>> after = mdarray.memory_report().arrays
    >>> after[0] - before[0], after[1] - before[1]
    (400, 400)
    """
    chosen = default_backend_object()
    blocks: dict[int, list[tuple[int, int]]] = {d: [] for d in chosen.device_ids}
    for obj in gc.get_objects():
        if not isinstance(obj, Stored):
            continue
        storage = obj.storage
        if storage.backend is not chosen:
            continue
        slabs = storage.slabs
        if slabs is not None:
            held = zip(storage.layout.devices, slabs)
        else:
            held = zip(storage.layout.chunk_devices, storage.buffers)
        for device, array in held:
            if not isinstance(array, Remote) and device in blocks:
                blocks[device].append(chosen.allocation_of(array))
    arrays = {device: _covered(found) for device, found in blocks.items()}
    pool: dict[int, Any] = {}
    for device in chosen.device_ids:
        figures = chosen.pool_bytes(device)
        if figures is not None:
            pool[device] = figures
    return MemoryReport(chosen.name, arrays, pool)


def _covered(blocks: list[tuple[int, int]]) -> int:
    """The bytes that `blocks` (``(address, bytes)``) cover, each byte once."""
    total = 0
    end = -1
    for start, size in sorted(blocks):
        stop = start + size
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total
