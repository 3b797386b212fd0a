"""This process's chunks: how op code runs per chunk (or per device) in an SPMD run too.

A process computes only the chunks of its own devices; every other chunk of a result is
a placeholder (`Remote`: its shape and dtype, no data) that its own process fills. Op
code never asks which process holds a device, nor makes a placeholder: it imports this
module as `_this_process` and walks this process's positions (`_this_process.mine`: the
positions of `devices` whose device this process holds; `local_chunks`: a Chunks' own
buffers with their positions and devices), leaves None at
the others' positions, and has the gaps filled (`placed`; `Chunks.of`, `map` and
`generate` fill chunks' gaps by themselves). `is_placeholder` tells a buffer another
process holds from data. In a single-process run `mine` is `enumerate` and hot loops
skip `placed` on `ALL_HERE`: no Python frame of this module per call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from mdarray._spmd import processes as _processes
from mdarray._spmd.processes import Remote

__all__ = [
    "all_here",
    "is_placeholder",
    "local_chunks",
    "mine",
    "placed",
    "placed_slabs",
    "placeholder",
]


def all_here() -> bool:
    """Whether this process holds every device (no SPMD run joined): every chunk is data."""
    return ALL_HERE


def _mine_of_this_process(devices: Sequence[int]) -> Iterable[tuple[int, int]]:
    local = _processes._LOCAL
    return [(k, device) for k, device in enumerate(devices) if device in local]  # type: ignore[operator]


#: Whether this process holds every device; op code's hot loops read it as
#: ``_this_process.ALL_HERE`` to skip `placed` (no Python frame in one process).
ALL_HERE = True
#: ``mine(devices)``: ``(position, device)`` for each of `devices` that this process
#: holds, in order; `enumerate` itself in one process. Read it as ``_this_process.mine``: joining
#: or leaving a run rebinds it (`_refresh`).
mine: Callable[[Sequence[int]], Iterable[tuple[int, int]]] = enumerate


def _refresh() -> None:
    global ALL_HERE, mine  # noqa: PLW0603  (rebound on join and leave, read by attribute)
    ALL_HERE = _processes._LOCAL is None
    mine = enumerate if ALL_HERE else _mine_of_this_process


_processes.ON_CHANGE.append(_refresh)
_refresh()


def local_chunks(storage: Any) -> Iterable[tuple[int, int, Any]]:
    """``(k, device, buffer)`` for each chunk of `storage` (a Chunks) this process holds."""
    buffers = storage.buffers
    devices = storage.layout.chunk_devices
    if ALL_HERE:
        return zip(range(len(buffers)), devices, buffers)
    return [(k, d, b) for k, (d, b) in enumerate(zip(devices, buffers)) if type(b) is not Remote]


def placed(results: list, shapes: Sequence, devices: Sequence[int], dtype) -> list:
    """`results` (one per position, None at each that another process holds) with a
    placeholder of ``shapes[k]`` and `dtype` (per position where a sequence of dtypes) on
    ``devices[k]`` in each gap."""
    if ALL_HERE:
        return results
    return [
        Remote(shapes[k], dtype[k] if isinstance(dtype, (list, tuple)) else dtype, devices[k])
        if r is None
        else r
        for k, r in enumerate(results)
    ]


def is_placeholder(buffer: Any) -> bool:
    """Whether `buffer` stands for a chunk another process holds (no data here)."""
    return type(buffer) is Remote


def placeholder(shape: Sequence[int], dtype: Any, device: int) -> Remote:
    """The placeholder of a piece of `shape` and `dtype` on another process's `device`,
    where a piece is no position of a list (a fold's input, one of several outputs)."""
    return Remote(shape, np.dtype(dtype), device)


def placed_slabs(slabs: list, layout: Any, dtype) -> list:
    """`slabs` (one per device of `layout`, None at each that another process holds) with
    a placeholder of that device's packed slab (`Layout.packing`) in each gap."""
    if ALL_HERE:
        return slabs
    return [
        Remote((total,), dtype, device) if s is None else s
        for s, device, (_, total) in zip(slabs, layout.devices, layout.packing)
    ]
