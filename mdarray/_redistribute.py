"""Every movement of data between layouts, modes, devices and the host.

One primitive, `region_value`, makes a region of an array present on a device (or the
host). Reshard, mode changes and `get` are built on it and on the cover plans of
`_regions`, so each destination element is read from one source even where source chunks
overlap, and a faster transfer path in the backend speeds all of them up.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from . import _regions
from ._backend import HOST
from ._debug import TransferCount
from ._layout import Layout
from ._modes import REPLICA, Mode


@lru_cache(maxsize=4096)
def _preference(layout: Layout, device) -> tuple[int, ...]:
    """Chunk numbers of `layout`, those on `device` first: local data is read locally."""
    local = [k for k, d in enumerate(layout.chunk_devices) if d == device]
    return tuple(local + [k for k, d in enumerate(layout.chunk_devices) if d != device])


@lru_cache(maxsize=4096)
def replica_plan(layout: Layout, region: tuple, device) -> tuple:
    """Pieces ``(chunk, region_index, chunk_index)`` giving each element of `region` once."""
    order = _preference(layout, device)
    cover = _regions.cover(region, tuple(layout.boxes[k] for k in order))
    return tuple((order[p.source], p.region_index, p.source_index) for p in cover.pieces())


@lru_cache(maxsize=4096)
def partial_plan(layout: Layout, region: tuple) -> tuple:
    """Pieces ``(chunk, region_index, chunk_index)`` for every chunk that meets `region`."""
    out = []
    for k, box in enumerate(layout.boxes):
        common = _regions.intersect(region, box)
        if common is not None:
            out.append(
                (k, _regions.local_box_index(region, common), _regions.local_box_index(box, common))
            )
    return tuple(out)


def region_value(x, region: tuple, device):
    """The value of `x` on `region` (a box) as a new contiguous array on `device`.

    `device` may be ``"host"``: the result is then a NumPy array. In REPLICA mode each
    element is copied once from the chunk that holds it (local chunks first); in a partial
    mode every chunk meeting the region contributes and the copies are combined (without
    overlaps each element has one copy, its value, and is read as in REPLICA mode).
    """
    backend = x._backend
    if x.mode.is_partial and x.layout.has_overlaps:
        if device == HOST:
            first = x.layout.chunk_devices[0]
            return _to_host(backend, region_value(x, region, first), first)
        return _combine_region(x, region, device)
    shape = _regions.box_shape(region)
    plan = replica_plan(x.layout, region, device)
    if device == HOST:
        out = backend.host_empty(shape, x.dtype)
        staged = []
        for k, region_index, chunk_index in plan:
            piece = _regions.apply_index(x._data[k], chunk_index, backend.xp)
            if _regions.is_basic(region_index):
                backend.to_host_into(out[(*region_index, ...)], piece, x.layout.chunk_devices[k])
            else:
                staged.append((region_index, _to_host(backend, piece, x.layout.chunk_devices[k])))
        backend.synchronize(x.layout.devices)
        for region_index, piece in staged:
            _assign(out, region_index, piece, np)
        return out
    return _gather(x, plan, shape, device)


def _gather(x, plan, shape, device, out=None):
    """A new array on `device` (or `out`) filled by the pieces ``(chunk, out_index,
    chunk_index)``."""
    backend = x._backend
    if out is None:
        out = backend.empty(shape, x.dtype, device)
    with backend.on(device):
        for k, region_index, chunk_index in plan:
            piece = _regions.apply_index(x._data[k], chunk_index, backend.xp)
            _assign(
                out,
                region_index,
                backend.move(piece, x.layout.chunk_devices[k], device),
                backend.xp,
            )
    return out


def _combine_region(x, region: tuple, device):
    return combine_partials(
        x.layout, x._data, region, device, x.mode.ufunc_name, x.mode.identity(x.dtype), x._backend
    )


def combine_partials(
    layout: Layout, data, region: tuple, device, ufunc_name: str, identity, backend
):
    """The chunks `data` of `layout` combined with the ufunc `ufunc_name` over `region`,
    as a new array on `device` (`identity` where no chunk contributes)."""
    combine = getattr(backend.xp, ufunc_name)
    dtype = data[0].dtype
    out = backend.full(_regions.box_shape(region), identity, dtype, device)
    with backend.on(device):
        for k, region_index, chunk_index in partial_plan(layout, region):
            piece = backend.move(data[k][chunk_index], layout.chunk_devices[k], device)
            target = out[(*region_index, ...)]
            combine(target, piece, out=target)
    return out


def _to_host(backend, array, device):
    out = backend.host_empty(array.shape, array.dtype)
    backend.to_host_into(out, array, device)
    backend.synchronize([device])
    return out


def _assign(out, region_index, piece, xp) -> None:
    if _regions.is_basic(region_index):
        out[region_index] = piece
    else:
        positions = [xp.asarray(_regions._positions(i, n)) for i, n in zip(region_index, out.shape)]
        out[xp.ix_(*positions)] = piece


def to_host(x) -> np.ndarray:
    """The value of `x` as a NumPy array on the host."""
    return region_value(x, _regions.full_box(x.shape), HOST)


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


@lru_cache(maxsize=4096)
def reshard_plan(source: Layout, target: Layout, partial: bool) -> ReshardPlan:
    """The plan that `reshard` executes and `reshard_cost` prices."""
    kept = _kept_chunks(source, target)
    if not partial:
        moves = tuple(
            (k, t, chunk_index, region_index)
            for t, (box, device) in enumerate(zip(target.boxes, target.chunk_devices))
            if kept[t] is None
            for k, region_index, chunk_index in replica_plan(source, box, device)
        )
        return ReshardPlan(kept, moves)
    moves = tuple(
        (s, t, chunk_index, target_index)
        for s in range(len(source.chunks))
        for t, chunk_index, target_index in _partial_sends(source, target, kept, s)
    )
    return ReshardPlan(kept, moves)


def reshard(x, layout: Layout):
    """`x` with `layout`, in the same mode.

    Chunks whose box and device do not change keep their buffers. In REPLICA mode every
    other destination chunk gathers its region once. In a partial mode every element's
    contributions are sent once, each to one destination chunk (one on the source's
    device where there is one), which combines them into its identity-filled buffer.
    """
    if layout == x.layout:
        return x
    plan = reshard_plan(x.layout, layout, x.mode.is_partial)
    if x.mode.is_partial:
        return x._with(layout=layout, data=_partial_reshard(x, layout, plan))
    moves: dict = {}
    for s, t, chunk_index, target_index in plan.moves:
        moves.setdefault(t, []).append((s, target_index, chunk_index))
    if any(k is not None for k in plan.kept):
        data = [
            x._data[k] if k is not None else _gather(x, moves.get(t, ()), shape, device)
            for t, (k, shape, device) in enumerate(
                zip(plan.kept, layout.chunk_shapes, layout.chunk_devices)
            )
        ]
        return x._with(layout=layout, data=data)
    # Nothing kept: the target is packed (`Layout.packing`), so elementwise ops on it run
    # one kernel per device.
    from ._array import DistArray, packed_empty, unpack_slabs

    slabs = packed_empty(layout, x.dtype, x._backend)
    views = unpack_slabs(layout, slabs, x._backend)
    for t, (view, device) in enumerate(zip(views, layout.chunk_devices)):
        _gather(x, moves.get(t, ()), view.shape, device, out=view)
    return DistArray._from_slabs(layout, slabs, x.mode, x.dtype, x._backend, chunks=views)


def _partial_reshard(x, layout: Layout, plan: ReshardPlan) -> list:
    backend = x._backend
    senders: dict = {}
    for s, t, _, _ in plan.moves:
        senders.setdefault(t, set()).add(s)
    # A kept chunk fed only by its own source chunk already holds its contributions.
    reused = {t for t, k in enumerate(plan.kept) if k is not None and senders.get(t, set()) <= {k}}
    identity = x.mode.identity(x.dtype)
    data = [
        x._data[k] if t in reused else backend.full(shape, identity, x.dtype, device)
        for t, (k, shape, device) in enumerate(
            zip(plan.kept, layout.chunk_shapes, layout.chunk_devices)
        )
    ]
    ufunc = x.mode.ufunc(backend.xp)
    for s, t, chunk_index, target_index in plan.moves:
        if t in reused:
            continue
        target_device = layout.chunk_devices[t]
        piece = _regions.apply_index(x._data[s], chunk_index, backend.xp)
        piece = backend.move(piece, x.layout.chunk_devices[s], target_device)
        with backend.on(target_device):
            _combine_into(data[t], target_index, piece, ufunc, backend.xp)
    return data


def _combine_into(out, index: tuple, piece, ufunc, xp) -> None:
    """``out[index] = ufunc(out[index], piece)`` in place, for slices or int arrays."""
    if _regions.is_basic(index):
        target = out[(*index, ...)]
        ufunc(target, piece, out=target)
    else:
        _assign(out, index, ufunc(_regions.apply_index(out, index, xp), piece), xp)


def reshard_cost(x, layout: Layout):
    """The bytes per device pair that ``reshard(x, layout)`` would move, as a TransferCount."""
    count = TransferCount()
    if layout == x.layout:
        return count
    plan = reshard_plan(x.layout, layout, x.mode.is_partial)
    for s, t, chunk_index, _ in plan.moves:
        pair = (x.layout.chunk_devices[s], layout.chunk_devices[t])
        if pair[0] != pair[1]:
            nbytes = _regions.index_size(chunk_index, x.layout.chunk_shapes[s]) * x.itemsize
            count.bytes[pair] += nbytes
            count.copies += 1
    return count


@lru_cache(maxsize=4096)
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


def _partial_sends(source: Layout, target: Layout, kept: tuple, s: int) -> tuple:
    """Where source chunk `s` sends each element: ``(target chunk, s index, target index)``.

    Target chunks on the source's device come first, the one keeping `s`'s box before all,
    so elements stay on their device and a kept chunk takes its source whole.
    """
    order = list(_preference(target, source.chunk_devices[s]))
    if s in kept:
        t = kept.index(s)
        order.remove(t)
        order.insert(0, t)
    cover = _regions.cover(source.boxes[s], tuple(target.boxes[t] for t in order))
    return tuple((order[p.source], p.region_index, p.source_index) for p in cover.pieces())


def change_mode(x, mode: Mode):
    """`x` in `mode`, with the same layout.

    REPLICA to SUM or PROD keeps one copy of each element and sets the others to the
    identity: chunks that share no element with another keep their buffers (no copy).
    REPLICA to MAX or MIN copies nothing: equal copies already combine to the value. A
    partial mode to REPLICA combines the overlaps; chunks without overlaps keep their
    buffers. A partial mode to another goes through REPLICA, since copies of one partial
    mode mean nothing in another.
    """
    if mode is x.mode:
        return x
    if mode.is_partial:
        mode.check_dtype(x.dtype)
    if x.mode.is_partial:
        overlapping = _overlapping(x.layout)
        replica = x._with(
            mode=REPLICA,
            data=[
                region_value(x, box, device) if k in overlapping else x._data[k]
                for k, (box, device) in enumerate(zip(x.layout.boxes, x.layout.chunk_devices))
            ],
        )
        return change_mode(replica, mode)
    return x._with(mode=mode, data=replica_to_partial(x.layout, x._data, mode, x._backend))


def replica_to_partial(layout: Layout, data, mode: Mode, backend, *, copy: bool = True) -> list:
    """Chunks of a REPLICA value that hold the same value in partial `mode`.

    For SUM and PROD each element stays in the chunk that owns it and the others get the
    identity (see `fill_shadowed`). MAX and MIN need no change: equal copies combine to
    the value.
    """
    if mode.idempotent:
        return list(data)
    return fill_shadowed(layout, data, mode.identity(data[0].dtype), backend, copy=copy)


def fill_shadowed(layout: Layout, data, value, backend, *, copy: bool = True) -> list:
    """`data` with every element that another chunk owns set to `value`, so each element
    is counted once. Chunks that shadow nothing keep their buffers; the others are
    copied first unless `copy` is False."""
    data = list(data)
    for k, shadowed in enumerate(layout.cover.shadowed):
        if shadowed:
            with backend.on(layout.chunk_devices[k]):
                if copy:
                    data[k] = backend.xp.array(data[k], copy=True)
                for chunk_index in shadowed:
                    _assign(data[k], chunk_index, value, backend.xp)
    return data


@lru_cache(maxsize=4096)
def _overlapping(layout: Layout) -> frozenset:
    """Chunks that share at least one element with another chunk."""
    cover = layout.cover.cover
    count = sum(held.astype(np.int64) for held in cover.holds)
    return frozenset(k for k, held in enumerate(cover.holds) if (count[held] > 1).any())
