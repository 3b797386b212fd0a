"""Movement plans: which piece of which chunk goes where, as pure functions of layouts
(cached on them), for `_redistribute` to execute and price.

Each plan looks only at the chunks that meet the region it fills (`Layout.box_index`),
so a plan per chunk over a layout of n chunks costs about n log n, not n squared.
"""

from __future__ import annotations

from typing import NamedTuple

from mdarray._core import regions as _regions
from mdarray._core.plan_cache import plan_cache
from mdarray._layouts.layout import Layout


def _meeting(layout: Layout, region: tuple, device) -> list[int]:
    """Chunk numbers of `layout` that meet `region`, those on `device` first (local data
    is read locally), each group in layout order."""
    found = layout.box_index.meeting(region)
    devices = layout.chunk_devices
    return [k for k in found if devices[k] == device] + [k for k in found if devices[k] != device]


def replica_pieces(layout: Layout, region: tuple, device) -> tuple:
    """Pieces ``(chunk, region_index, chunk_index)`` giving each element of `region` once,
    from the chunks meeting it, those on `device` first (uncached: `_redistribute.replica_plan`
    caches it; a plan made of one per chunk is cached whole)."""
    order = _meeting(layout, region, device)
    cover = _regions.Cover(region, tuple(layout.boxes[k] for k in order))
    return tuple((order[p.source], p.region_index, p.source_index) for p in cover.pieces())


def shadowed_within(layout: Layout, region: tuple, k: int) -> tuple:
    """Index tuples into chunk `k` of the elements of `region` (a box inside chunk k's)
    that an earlier chunk of `layout` holds too and so owns (`Cover.shadowed`), from the
    chunks meeting the region alone: a write planned per chunk stays near n log n."""
    found = layout.box_index.meeting(region)
    cover = _regions.cover(region, tuple(layout.boxes[j] for j in found))
    return tuple(cover.shadowed(found.index(k)))


class ReshardPlan(NamedTuple):
    """How a reshard from `source` to `target` moves data (see `reshard_plan`).

    `kept[t]` is the source chunk whose buffer target chunk `t` reuses, or None. `moves`
    lists the copies ``(source chunk, target chunk, source index, target index)``: in
    REPLICA mode they fill the target chunks that are not kept; in a partial mode each
    source element is sent once and combined into the target chunk's identity-filled
    buffer (a kept target chunk whose only move is its whole source chunk reuses it).
    """

    kept: tuple
    moves: tuple


@plan_cache
def reshard_plan(source: Layout, target: Layout, partial: bool) -> ReshardPlan:
    """The plan that `reshard` executes and `reshard_cost` prices."""
    kept = _kept_chunks(source, target)
    if not partial:
        moves = tuple(
            (k, t, chunk_index, region_index)
            for t, (box, device) in enumerate(zip(target.boxes, target.chunk_devices))
            if kept[t] is None
            for k, region_index, chunk_index in replica_pieces(source, box, device)
        )
        return ReshardPlan(kept, moves)
    keeper = {k: t for t, k in enumerate(kept) if k is not None}
    moves = tuple(
        (s, t, chunk_index, target_index)
        for s in range(len(source.chunks))
        for t, chunk_index, target_index in _partial_sends(source, target, keeper.get(s), s)
    )
    return ReshardPlan(kept, moves)


@plan_cache
def _kept_chunks(source: Layout, target: Layout) -> tuple:
    """Per target chunk, the source chunk with the same box on the same device, or None.

    Each source chunk is kept by one target chunk at most, so no two chunks of the result
    share a buffer (an in-place update per chunk must not reach one buffer twice).
    """
    where: dict = {}
    for k, key in enumerate(zip(source.boxes, source.chunk_devices)):
        where.setdefault(key, []).append(k)
    kept = []
    for key in zip(target.boxes, target.chunk_devices):
        free = where.get(key)
        kept.append(free.pop(0) if free else None)
    return tuple(kept)


def _partial_sends(source: Layout, target: Layout, keeper: int | None, s: int) -> tuple:
    """Where source chunk `s` sends each element: ``(target chunk, s index, target index)``.

    Target chunks on the source's device come first, `keeper` (the one keeping `s`'s box,
    or None) before all, so elements stay on their device and a kept chunk takes its
    source whole.
    """
    order = _meeting(target, source.boxes[s], source.chunk_devices[s])
    if keeper is not None:
        order = [keeper] + [t for t in order if t != keeper]
    cover = _regions.Cover(source.boxes[s], tuple(target.boxes[t] for t in order))
    return tuple((order[p.source], p.region_index, p.source_index) for p in cover.pieces())
