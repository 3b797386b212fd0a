"""Partial copies that each hold the whole array, combined lean: a reduction's partials.

A full reduction (``xp.sum(x)``) or one along the split axis (``xp.sum(x, axis=0)`` of row
blocks) leaves one partial copy of the whole, small result per input chunk. Combining
them is what `_redistribute.combine_overlaps` and `combine_partials` do in general,
with the same moves, folds and values (each device folds every copy in chunk order);
here the plan (which devices, how many copies each holds) is one cached lookup on the
layout, so a repeated call only moves and folds: no cover plans, jobs or views per call.

Used in a single-process run only; across processes `_fetch.allreduced` does the same
by one all-reduce.
"""

from __future__ import annotations

import numpy as np

from mdarray._core import regions as _regions
from mdarray._core.plan_cache import plan_cache
from mdarray._layouts.layout import Layout
from mdarray._storage.chunks import Chunks

from .fetch import to_host_now


@plan_cache
def dense_plan(layout: Layout) -> tuple | None:
    """``(first device, ((device, copies), ...))`` where every chunk of `layout` is the
    whole array and each device's chunks follow each other in its slab
    (`Layout.packing`), in layout order; else None."""
    full = _regions.full_box(layout.shape)
    if len(layout.chunks) < 2 or 0 in layout.shape or any(box != full for box in layout.boxes):
        return None
    per_device = []
    for device, (entries, _) in zip(layout.devices, layout.packing):
        chunks = [k for k, _, _ in entries]
        if chunks != sorted(chunks):
            return None
        per_device.append((device, len(entries)))
    return layout.chunk_devices[0], tuple(per_device)


def folded(chunks: Chunks, buffers: tuple, combine, device, copies: int):
    """The copies of `chunks` (each the whole array, under a `dense_plan`) folded left in
    chunk order with `combine` on `device`, the others moved there: an array of shape
    ``(copies, *shape)``, the value in each copy."""
    backend = chunks.backend
    sources = chunks.layout.chunk_devices
    with backend.on(device):
        return backend.combine_from(combine, buffers, sources, device, copies, chunks.dtype)


def combined(chunks: Chunks, combine) -> Chunks | None:
    """`chunks` in REPLICA mode, packed (each device's slab its copies of the value),
    where `dense_plan` applies; else None. The copies fold left in chunk order, as
    `_redistribute.combine_overlaps` folds them; where is the backend's (`combine_to`)."""
    plan = dense_plan(chunks.layout)
    if plan is None:
        return None
    backend = chunks.backend
    sources = chunks.layout.chunk_devices
    # Combining copies moves a value already made: NumPy warned where it was made.
    with np.errstate(all="ignore"):
        parts = backend.combine_to(combine, chunks.buffers, sources, plan[1], chunks.dtype)
    slabs = [part.reshape(-1) for part in parts]
    return Chunks.packed(chunks.layout, slabs, backend, chunks.dtype, check=False)


def host_value(chunks: Chunks, combine) -> np.ndarray | None:
    """The value of partial `chunks` on the host where `dense_plan` applies, else None."""
    plan = dense_plan(chunks.layout)
    if plan is None:
        return None
    with np.errstate(all="ignore"):
        value = folded(chunks, chunks.buffers, combine, plan[0], 1)[0]
    return to_host_now(chunks.backend, value, plan[0])
