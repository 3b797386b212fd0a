"""Every movement of data between layouts, modes, devices and the host: storage in,
storage out.

One primitive, `region_value`, makes a region of an array present on a device (or the
host). Reshard, mode changes and `to_host` are built on it and on the cover plans of
`_regions`, so each destination element is read from one source even where source chunks
overlap, and a faster transfer path in the backend speeds all of them up. Everything here
takes `Chunks` and the mode their copies are in, and returns `Chunks`; results share the
buffers they do not change with their source (`Chunks.derive`, copy on write).

In an SPMD run (`_processes`) every function here is collective: each process walks the
same plan, computes the targets on its own devices, and the pieces that cross processes
move in one `Exchange` per step (`Fetch`); a target on another process's device is a
`Remote` here.
"""

from __future__ import annotations

import contextlib
from typing import NamedTuple

import numpy as np

from mdarray._backends.backend import Backend
from mdarray._core import regions as _regions
from mdarray._core.debug import HOST, TransferCount
from mdarray._core.modes import REPLICA, Mode
from mdarray._core.plan_cache import plan_cache
from mdarray._kernels import kernels as _kernels
from mdarray._layouts.layout import Layout
from mdarray._spmd import processes as _processes
from mdarray._spmd.processes import Remote, is_local
from mdarray._storage.chunks import Chunks

from . import dense_partials as _dense_partials
from .fetch import (
    Fetch,
    allreduced,
    gather_host,
    read_here,
    reduce_scattered,
    share_host,
    to_host_now,
)
from .plans import replica_pieces, reshard_plan


# Combining the copies of a partial result moves a value the user already computed:
# NumPy warned (or not) where that value was made, so moving it warns of nothing
# (``inf + -inf`` in a SUM that is read or resharded later is NaN, silently).
def _quiet() -> np.errstate:
    return np.errstate(all="ignore")


@plan_cache
def replica_plan(layout: Layout, region: tuple, device) -> tuple:
    """Pieces ``(chunk, region_index, chunk_index)`` giving each element of `region` once."""
    return replica_pieces(layout, region, device)


@plan_cache
def gather_steps(layout: Layout, region: tuple, device) -> tuple | None:
    """`replica_plan` as steps ``(chunk, key into the region, key into the chunk or None
    for the whole chunk, the chunk's device)`` with basic keys (slices and an Ellipsis,
    made once here, not per piece moved); None where some index is not basic."""
    steps = []
    for k, region_index, chunk_index in replica_plan(layout, region, device):
        if not _regions.is_basic(region_index):
            return None
        chunk_key = None
        if chunk_index is not None:
            if not _regions.is_basic(chunk_index):
                return None
            chunk_key = (*chunk_index, Ellipsis)
        steps.append((k, (*region_index, Ellipsis), chunk_key, layout.chunk_devices[k]))
    return tuple(steps)


@plan_cache
def partial_plan(layout: Layout, region: tuple) -> tuple:
    """Pieces ``(chunk, region_index, chunk_index)`` for every chunk that meets `region`."""
    out = []
    for k in layout.box_index.meeting(region):
        box = layout.boxes[k]
        common = _regions.intersect(region, box)
        if common is not None:
            out.append(
                (k, _regions.local_box_index(region, common), _regions.local_box_index(box, common))
            )
    return tuple(out)


def region_value(chunks: Chunks, mode: Mode, region: tuple, device):
    """The value on `region` (a box) of `chunks` in `mode`, as a new contiguous array on
    `device`.

    `device` may be ``HOST``: the result is then a NumPy array. In REPLICA mode each
    element is copied once from the chunk that holds it (local chunks first); in a partial
    mode every chunk meeting the region contributes and the copies are combined (without
    overlaps each element has one copy, its value, and is read as in REPLICA mode).
    """
    return _region_value(chunks, mode, region, device, None)


def _region_value(chunks: Chunks, mode: Mode, region: tuple, device, root: int | None):
    backend = chunks.backend
    layout = chunks.layout
    ufunc_name = mode.ufunc_name  # None for REPLICA: not a partial mode
    if ufunc_name is not None and layout.has_overlaps:
        if device == HOST and _processes.current() is None:
            value = _dense_partials.host_value(chunks, mode.ufunc(backend.xp, chunks.dtype))
            if value is not None:
                return value
        if device == HOST:
            first = layout.chunk_devices[0]
            value = region_value(chunks, mode, region, first)
            host = to_host_now(backend, value, first) if is_local(first) else None
            return share_host(backend, host, _regions.box_shape(region), chunks.dtype,
                               _processes.owner(first), root)  # fmt: skip
        combine = mode.ufunc(chunks.backend.xp, chunks.dtype)
        return combine_partials(chunks, combine, mode.identity(chunks.dtype), region, device)
    shape = _regions.box_shape(region)
    if device != HOST and _processes.current() is None:
        steps = gather_steps(layout, region, device)
        if steps is not None:
            return gathered(chunks, steps, shape, device)
    plan = replica_plan(layout, region, device)
    if device == HOST:
        return gather_host(chunks, plan, shape, root)
    return _gather(chunks, plan, shape, device)


def region_pieces(chunks: Chunks, region: tuple, device) -> list | None:
    """The pieces giving each element of `region` (a box) of REPLICA `chunks` once, as
    ``(key into the region, piece on device)`` by `gather_steps`: views where a piece lies
    on `device`, moved copies of the others; for writing them straight into a target (no
    gathered copy of the region). One process and basic keys only: None otherwise."""
    if _processes.current() is not None:
        return None
    steps = gather_steps(chunks.layout, region, device)
    if steps is None:
        return None
    backend, buffers = chunks.backend, chunks.buffers
    out = []
    with backend.on(device):
        for k, key, chunk_key, source in steps:
            piece = buffers[k] if chunk_key is None else buffers[k][chunk_key]
            out.append((key[:-1], backend.move(piece, source, device)))  # (the Ellipsis off)
    return out


def regions_value(chunks: Chunks, regions, devices) -> list:
    """`region_value` of REPLICA `chunks` for each region on its device, with one
    exchange between processes for all of them (a `Remote` for another process's
    device; None for a region given as None)."""
    if _processes.current() is None:
        layout = chunks.layout
        plans = [
            None if r is None else gather_steps(layout, r, d) for r, d in zip(regions, devices)
        ]
        if all(steps is not None or r is None for steps, r in zip(plans, regions)):
            return [
                None if steps is None else gathered(chunks, steps, _regions.box_shape(r), d)
                for steps, r, d in zip(plans, regions, devices)
            ]
    fetch = Fetch(chunks)
    out = [
        None
        if region is None
        else _gather(
            chunks,
            replica_plan(chunks.layout, region, device),
            _regions.box_shape(region),
            device,
            fetch=fetch,
        )
        for region, device in zip(regions, devices)
    ]
    fetch.run()
    return out


def to_host(chunks: Chunks, mode: Mode) -> np.ndarray:
    """The value of `chunks` in `mode` as a NumPy array on the host (on every process of
    an SPMD run)."""
    return _region_value(chunks, mode, _regions.full_box(chunks.layout.shape), HOST, None)


def to_root(chunks: Chunks, mode: Mode, root: int) -> np.ndarray | None:
    """`to_host` on process `root` of an SPMD run only (None on the others)."""
    return _region_value(chunks, mode, _regions.full_box(chunks.layout.shape), HOST, root)


def gathered(chunks: Chunks, steps: tuple, shape: tuple, device):
    """A new array on `device` filled by `gather_steps` (one process: every piece here),
    each piece by one `Backend.move_into`."""
    backend = chunks.backend
    buffers = chunks.buffers
    move_into = backend.move_into
    out = backend.empty(shape, chunks.dtype, device)
    with backend.on(device):
        for k, key, chunk_key, source in steps:
            piece = buffers[k] if chunk_key is None else buffers[k][chunk_key]
            move_into(out, key, piece, source, device)
    return out


def _gather(chunks: Chunks, plan, shape, device, out=None, fetch=None):
    """A new array on `device` (or `out`) filled by the pieces ``(chunk, out_index,
    chunk_index)``; a `Remote` where `device` is another process's. With `fetch`, pieces
    from other processes arrive when the caller runs it."""
    own = fetch is None
    if fetch is None:
        fetch = Fetch(chunks)
    backend = chunks.backend
    if fetch.alone:  # one process: `Fetch.into` inlined, a shifted slice's host cost
        out = backend.empty(shape, chunks.dtype, device) if out is None else out
        buffers, devices, xp = chunks.buffers, chunks.layout.chunk_devices, backend.xp
        with backend.on(device):
            for k, region_index, index in plan:
                piece = buffers[k] if index is None else _regions.apply_index(buffers[k], index, xp)
                backend.assign(out, region_index, backend.move(piece, devices[k], device))
    elif not is_local(device):
        for k, region_index, chunk_index in plan:
            fetch.into(k, chunk_index, device, None, region_index)
        out = Remote(shape, chunks.dtype, device) if out is None else out
    else:
        if out is None:
            out = backend.empty(shape, chunks.dtype, device)
        with backend.on(device):
            for k, region_index, chunk_index in plan:
                fetch.into(k, chunk_index, device, out, region_index)
    if own:
        fetch.run()
    return out


class CombinePlan(NamedTuple):
    """How the partial copies meeting a region combine on one device.

    `whole` lists the pieces ``(chunk, chunk_index, basic)`` that cover the whole region
    (`chunk_index` None where the piece is the whole chunk; `basic` where it is all
    slices), `parts`
    the pieces ``(chunk, region_index, chunk_index)`` that cover part of it, each in the
    order they combine.
    """

    whole: tuple
    parts: tuple


def _split_pieces(shape: tuple, pieces, chunk_shapes: tuple) -> CombinePlan:
    """`pieces` ``(chunk, region_index, chunk_index)`` of a region of `shape` (of chunks
    of `chunk_shapes`), split into those covering all of it and the others."""
    size = int(np.prod(shape, dtype=np.int64))
    whole, parts = [], []
    for k, region_index, chunk_index in pieces:
        # Slices with positive steps that give every position of the region give them in
        # order: the piece lines up with the region element for element.
        if _regions.is_basic(region_index) and _regions.index_size(region_index, shape) == size:
            # A piece of the chunk's own size is the whole chunk: no view to make.
            own = int(np.prod(chunk_shapes[k], dtype=np.int64)) == size
            whole.append((k, None if own else chunk_index, _regions.is_basic(chunk_index)))
        else:
            parts.append((k, region_index, chunk_index))
    return CombinePlan(tuple(whole), tuple(parts))


@plan_cache
def combine_plan(layout: Layout, region: tuple) -> CombinePlan:
    """The `CombinePlan` of every chunk of `layout` that meets `region`."""
    shape = _regions.box_shape(region)
    return _split_pieces(shape, partial_plan(layout, region), layout.chunk_shapes)


def combine_pieces(chunks: Chunks, combine, identity, shape: tuple, device, plan: CombinePlan,
                   copies: int = 1):  # fmt: skip
    """The pieces of `plan` (of the buffers of `chunks`) combined with `combine` over a
    region of `shape`, as a new array on `device` of shape ``(copies, *shape)``: the value
    `copies` times (`identity` where no piece contributes).

    Backend calls: one move per piece held on another device, then one call of
    ``backend.combine`` for the whole pieces, which is one kernel and its result's
    allocation on the cuda backend however many pieces there are (one allocation and a
    call per piece after the first on the cpu backend); without whole pieces one
    identity fill instead; then one combining call per partial piece. A region all of
    whose pieces cover it whole (partial copies of the same box, a reduction's partial
    results) thus costs one kernel per group of copies.
    """
    return _combine_all(chunks, combine, identity, [(shape, device, plan, copies)])[0]


def _combine_all(chunks: Chunks, combine, identity, jobs) -> list:
    """`combine_pieces` for each job ``(shape, device, plan, copies)``, with one exchange
    between processes for all of them; a `Remote` for a job on another process's
    device."""
    if _processes.current() is None:  # one process: each job reads its pieces as it combines
        return [_combine_job(chunks, combine, identity, job, _HERE) for job in jobs]
    fetch = Fetch(chunks)
    pieces = []
    for shape, device, plan, copies in jobs:
        # No device to issue work on where the destination is another process's.
        with chunks.backend.on(device) if is_local(device) else contextlib.nullcontext():
            pieces.append(_pieces(fetch, plan, device) if all((copies, *shape)) else None)
    fetch.run()
    return [_combine_job(chunks, combine, identity, job, got) for job, got in zip(jobs, pieces)]


def _pieces(fetch: Fetch, plan: CombinePlan, device) -> tuple:
    """The pieces of `plan` on `device` (see `Fetch.get`): the whole ones, the parts."""
    whole = [fetch.get(k, chunk_index, device) for k, chunk_index, _ in plan.whole]
    return whole, [fetch.get(k, chunk_index, device) for k, _, chunk_index in plan.parts]


# `_combine_job`'s pieces in a single-process run: the job reads them itself.
_HERE = object()


def _combine_job(chunks: Chunks, combine, identity, job, got):
    """One job of `_combine_all`, its pieces `got` (fetched, or arrived; None where the
    job's result is empty); `_HERE` in a single-process run, where the job reads them
    itself (`read_here`)."""
    backend = chunks.backend
    dtype = chunks.dtype
    shape, device, plan, copies = job
    out_shape = (copies, *shape)
    if got is not _HERE and not is_local(device):
        return Remote(out_shape, dtype, device)
    with backend.on(device), _quiet():
        if not all(out_shape):
            return backend.empty(out_shape, dtype, device)
        if got is _HERE:
            got = (
                [read_here(chunks, k, chunk_index, device) for k, chunk_index, _ in plan.whole],
                [read_here(chunks, k, chunk_index, device) for k, _, chunk_index in plan.parts],
            )
        whole, parts = got
        if whole:
            result = backend.combine(combine, whole, copies, dtype)
        else:
            result = backend.full(out_shape, identity, dtype, device)
        every_copy = slice(0, copies, 1)
        for (_, region_index, _), piece in zip(plan.parts, parts):
            _kernels.combine_into(backend.xp, result, (every_copy, *region_index), piece, combine)
    return result


def combine_partials(chunks: Chunks, combine, identity, region: tuple, device):
    """The buffers of `chunks` combined with `combine` (a binary ufunc of the backend's
    array module) over `region`, as a new array on `device` (`identity` where no chunk
    contributes); see `combine_pieces` for the backend calls it makes."""
    plan = combine_plan(chunks.layout, region)
    shape = _regions.box_shape(region)
    return _first_copy(combine_pieces(chunks, combine, identity, shape, device, plan), device)


@plan_cache
def overlap_groups(layout: Layout) -> tuple:
    """The chunks of `layout` that share an element with another, grouped by box and
    device: ``(chunks, box, device)``. The chunks of a group hold the same value once
    combined, so it is computed once for all of them."""
    groups: dict = {}
    for k in sorted(_overlapping(layout)):
        groups.setdefault((layout.boxes[k], layout.chunk_devices[k]), []).append(k)
    return tuple((tuple(ks), box, device) for (box, device), ks in groups.items())


@plan_cache
def _overlap_jobs(layout: Layout) -> tuple:
    """The `_combine_all` jobs of `overlap_groups`: ``(shape, device, plan, copies)``."""
    return tuple(
        (_regions.box_shape(box), device, combine_plan(layout, box), len(targets))
        for targets, box, device in overlap_groups(layout)
    )


@plan_cache
def _fills_slabs(layout: Layout) -> bool:
    """Whether each device's chunks make one group of `overlap_groups`, in layout order:
    the group's stacked copies are then that device's packed slab (`Layout.packing`)."""
    groups = {device: targets for targets, _, device in overlap_groups(layout)}
    return len(groups) == len(overlap_groups(layout)) and all(
        groups.get(device) == tuple(k for k, _, _ in entries)
        for device, (entries, _) in zip(layout.devices, layout.packing)
    )


def combine_overlaps(chunks: Chunks, combine, identity) -> Chunks:
    """`chunks` with every chunk that shares an element with another replaced by the
    combined value of its box (`combine`, `identity` as in `combine_partials`); the
    other chunks keep their buffers.

    The chunks of one box on one device get views of one array, filled by one
    `combine_pieces` call: on the cuda backend, where every piece covers the box (as for
    a reduction's partial results), one kernel and one allocation for the whole group,
    plus one move per piece on another device. Where each device's chunks are one such
    group (a reduction's partials on each device), the result is packed: those arrays
    are the slabs, so the ops that follow run one kernel per device. Across processes,
    copies that all hold the whole array (a reduction's partials over every process)
    combine by one all-reduce (`allreduced`).
    """
    if _processes.current() is not None:
        dense = allreduced(chunks, combine)
        if dense is not None:
            return dense
    layout = chunks.layout
    combined = {}
    outs = _combine_all(chunks, combine, identity, _overlap_jobs(layout))
    for (targets, _, device), out in zip(overlap_groups(layout), outs):
        combined[targets] = (out, device)
    if _fills_slabs(layout):
        slabs = {device: _flat(out, device) for out, device in combined.values()}
        return Chunks.packed(
            layout, [slabs[d] for d in layout.devices], chunks.backend, chunks.dtype
        )
    buffers = list(chunks.buffers)
    for targets, (out, device) in combined.items():
        for m, k in enumerate(targets):
            buffers[k] = _copy_of(out, m, device)
    return chunks.derive(buffers=buffers)


def _flat(array, device):
    """`array` as one axis (a `Remote` stays one, of the flat shape)."""
    if isinstance(array, Remote):
        return Remote((array.size,), array.dtype, device)
    return array.reshape(-1)


def reshard(chunks: Chunks, mode: Mode, layout: Layout) -> Chunks:
    """`chunks` (in `mode`) laid out as `layout`, in the same mode.

    Chunks whose box and device do not change keep their buffers. In REPLICA mode every
    other destination chunk gathers its region once. In a partial mode every element's
    contributions are sent once, each to one destination chunk (one on the source's
    device where there is one), which combines them (`combine_pieces`: one kernel where
    they all cover it, as in partial -> blocks).
    """
    if layout == chunks.layout:
        return chunks
    plan = reshard_plan(chunks.layout, layout, mode.is_partial)
    if mode.is_partial and _processes.current() is not None:
        scattered = reduce_scattered(chunks, mode.ufunc(chunks.backend.xp, chunks.dtype), layout)
        if scattered is not None:
            return scattered
    if mode.is_partial:
        return chunks.derive(layout, _partial_reshard(chunks, mode, layout))
    moves: dict = {}
    for s, t, chunk_index, target_index in plan.moves:
        moves.setdefault(t, []).append((s, target_index, chunk_index))
    fetch = Fetch(chunks)
    if any(k is not None for k in plan.kept):
        buffers = chunks.buffers
        made = [
            buffers[k]
            if k is not None
            else _gather(chunks, moves.get(t, ()), shape, device, fetch=fetch)
            for t, (k, shape, device) in enumerate(
                zip(plan.kept, layout.chunk_shapes, layout.chunk_devices)
            )
        ]
        fetch.run()
        return chunks.derive(layout, made)
    # Nothing kept: the target is packed (`Layout.packing`), so elementwise ops on it run
    # one kernel per device.
    out = Chunks.empty(layout, chunks.dtype, chunks.backend)
    for t, (view, device) in enumerate(zip(out.buffers, layout.chunk_devices)):
        _gather(chunks, moves.get(t, ()), view.shape, device, out=view, fetch=fetch)
    fetch.run()
    return out


def _partial_reshard(chunks: Chunks, mode: Mode, layout: Layout) -> list:
    """The buffers of the target chunks: each combines what is sent to it
    (`combine_pieces`), or reuses its kept source chunk where only that one sends."""
    source = chunks.buffers
    identity = mode.identity(chunks.dtype)
    ufunc = mode.ufunc(chunks.backend.xp, chunks.dtype)
    kept = reshard_plan(chunks.layout, layout, True).kept
    targets = list(
        zip(_partial_targets(chunks.layout, layout), layout.chunk_shapes, layout.chunk_devices)
    )
    jobs = [(shape, device, plan, 1) for plan, shape, device in targets if plan is not None]
    combined = iter(_combine_all(chunks, ufunc, identity, jobs))
    return [
        source[kept[t]] if plan is None else _first_copy(next(combined), device)
        for t, (plan, _, device) in enumerate(targets)
    ]


def _first_copy(stacked, device):
    """The first of the stacked copies `combine_pieces` made."""
    return _copy_of(stacked, 0, device)


def _copy_of(stacked, m: int, device):
    """Copy `m` of the stacked copies `combine_pieces` made (a `Remote` of one copy's
    shape where they are another process's)."""
    if isinstance(stacked, Remote):
        return Remote(stacked.shape[1:], stacked.dtype, device)
    return stacked[m, ...]


@plan_cache
def _partial_targets(source: Layout, target: Layout) -> tuple:
    """Per target chunk of a partial reshard: None where it reuses the buffer of the
    source chunk it keeps (only that one sends to it), else the `CombinePlan` of what
    the source chunks send it."""
    plan = reshard_plan(source, target, True)
    sent: dict = {}
    for s, t, chunk_index, target_index in plan.moves:
        sent.setdefault(t, []).append((s, target_index, chunk_index))
    out: list[CombinePlan | None] = []
    for t, (k, shape) in enumerate(zip(plan.kept, target.chunk_shapes)):
        pieces = sent.get(t, [])
        if k is not None and {s for s, _, _ in pieces} <= {k}:
            out.append(None)
        else:
            out.append(_split_pieces(shape, pieces, source.chunk_shapes))
    return tuple(out)


def reshard_cost(chunks: Chunks, mode: Mode, layout: Layout) -> TransferCount:
    """The bytes per device pair that ``reshard(chunks, mode, layout)`` would move."""
    count = TransferCount()
    if layout == chunks.layout:
        return count
    source = chunks.layout
    plan = reshard_plan(source, layout, mode.is_partial)
    for s, t, chunk_index, _ in plan.moves:
        pair = (source.chunk_devices[s], layout.chunk_devices[t])
        if pair[0] != pair[1]:
            nbytes = (
                _regions.index_size(chunk_index, source.chunk_shapes[s]) * chunks.dtype.itemsize
            )
            count.bytes[pair] += nbytes
            count.copies += 1
    return count


def change_mode(chunks: Chunks, mode: Mode, new: Mode) -> Chunks:
    """`chunks` (in `mode`) holding the same value in mode `new`, with the same layout.

    REPLICA to SUM or PROD keeps one copy of each element and sets the others to the
    identity: chunks that share no element with another keep their buffers (no copy).
    REPLICA to MAX or MIN copies nothing: equal copies already combine to the value. A
    partial mode to REPLICA combines the overlaps (`combine_overlaps`); chunks without
    overlaps keep their buffers. The chunks of one box on one device are combined once:
    where every copy meeting the box covers it whole (a reduction's partial results), that
    is one backend call (`Backend.combine`; one kernel and one allocation on the cuda
    backend) per box and device, plus one move per copy held on another device. A
    partial mode to another goes through REPLICA, since copies of one partial mode mean
    nothing in another.
    """
    if new is mode:
        return chunks
    if new.is_partial:
        new.check_dtype(chunks.dtype)
    if mode.is_partial:
        combine = mode.ufunc(chunks.backend.xp, chunks.dtype)
        replica = None if _processes.current() else _dense_partials.combined(chunks, combine)
        if replica is None:
            replica = combine_overlaps(chunks, combine, mode.identity(chunks.dtype))
        return change_mode(replica, REPLICA, new)
    if new.idempotent:
        return chunks.derive()
    return fill_shadowed(chunks, new.identity(chunks.dtype))


def fill_shadowed(chunks: Chunks, value, *, in_place: bool = False) -> Chunks:
    """`chunks` with every element that another chunk owns set to `value`, so each
    element is counted once. Chunks that shadow nothing keep their buffers; the others are
    copied first, or written where they are with `in_place` (fresh buffers only)."""
    layout = chunks.layout
    backend = chunks.backend
    buffers = list(chunks.buffers)
    for k, shadowed in enumerate(layout.shadowed):
        if shadowed and is_local(layout.chunk_devices[k]):
            with backend.on(layout.chunk_devices[k]):
                if not in_place:
                    buffers[k] = backend.copy(buffers[k], layout.chunk_devices[k])
                for chunk_index in shadowed:
                    backend.assign(buffers[k], chunk_index, value)
    return chunks if in_place else chunks.derive(buffers=buffers)


@plan_cache
def _overlapping(layout: Layout) -> frozenset:
    """Chunks that share at least one element with another chunk."""
    return frozenset(layout.cover.overlapping())


def host_copy(backend: Backend, array, device) -> np.ndarray:
    """A small `array` on `device` copied to the host (counted as a transfer)."""
    return to_host_now(backend, array, device)
