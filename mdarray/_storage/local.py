"""This process's chunks: how op code runs per chunk (or per device) in an SPMD run too.

A process computes only the chunks of its own devices; every other chunk of a result is
a placeholder (`Remote`: its shape and dtype, no data) that its own process fills. Op
code never asks which process holds a device, nor makes a placeholder: it walks this
process's positions (`mine`: the positions of `devices` whose device this process holds;
`local_chunks`: a Chunks' own buffers with their positions and devices), leaves None at
the others' positions, and has the gaps filled (`placed`; `Chunks.of`, `map` and
`generate` fill chunks' gaps by themselves). `is_placeholder` tells a buffer another
process holds from data. In a single-process run `mine` is `enumerate` and `placed`
returns its list: no Python frame per chunk, one per loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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
    return _processes._LOCAL is None


def mine(devices: Sequence[int]) -> Iterable[tuple[int, int]]:
    """``(position, device)`` for each of `devices` that this process holds, in order."""
    local = _processes._LOCAL
    if local is None:
        return enumerate(devices)
    return [(k, device) for k, device in enumerate(devices) if device in local]


def local_chunks(storage: Any) -> Iterable[tuple[int, int, Any]]:
    """``(k, device, buffer)`` for each chunk of `storage` (a Chunks) this process holds."""
    buffers = storage.buffers
    devices = storage.layout.chunk_devices
    if _processes._LOCAL is None:
        return zip(range(len(buffers)), devices, buffers)
    return [(k, d, b) for k, (d, b) in enumerate(zip(devices, buffers)) if type(b) is not Remote]


def placed(results: list, shapes: Sequence, devices: Sequence[int], dtype) -> list:
    """`results` (one per position, None at each that another process holds) with a
    placeholder of ``shapes[k]`` and `dtype` (per position where a sequence of dtypes) on
    ``devices[k]`` in each gap."""
    if _processes._LOCAL is None:
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
    if _processes._LOCAL is None:
        return slabs
    return [
        Remote((total,), dtype, device) if s is None else s
        for s, device, (_, total) in zip(slabs, layout.devices, layout.packing)
    ]
