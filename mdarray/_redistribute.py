"""Every movement of data between layouts, modes, devices and the host.

One primitive, `region_value`, makes a region of an array present on a device (or the
host). Reshard, mode changes and `get` are built on it and on the cover plans of
`_regions`, so each destination element is read from one source even where source chunks
overlap, and a faster transfer path in the backend speeds all of them up.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import _regions
from ._backend import HOST
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
    mode every chunk meeting the region contributes and the copies are combined.
    """
    backend = x._backend
    if x.mode.is_partial:
        if device == HOST:
            return _to_host(backend, region_value(x, region, x.layout.chunk_devices[0]))
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
    backend = x._backend
    ufunc = x.mode.ufunc(backend.xp)
    out = backend.full(_regions.box_shape(region), x.mode.identity(x.dtype), x.dtype, device)
    with backend.on(device):
        for k, region_index, chunk_index in partial_plan(x.layout, region):
            piece = backend.move(x._data[k][chunk_index], x.layout.chunk_devices[k], device)
            target = out[(*region_index, ...)]
            ufunc(target, piece, out=target)
    return out


def _to_host(backend, array, device=None):
    if device is None:
        device = backend.device_of(array)
        device = 0 if device is None else device
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


def reshard(x, layout: Layout):
    """`x` with `layout`, in the same mode.

    Chunks whose box and device do not change keep their buffers. In REPLICA mode every
    other destination chunk gathers its region once. In a partial mode every element's
    contributions are sent once, each to one destination chunk (one on the source's
    device where there is one), which combines them into its identity-filled buffer.
    """
    if layout == x.layout:
        return x
    backend = x._backend
    kept = _kept_chunks(x.layout, layout)
    if not x.mode.is_partial:
        data = [
            x._data[kept[t]] if t in kept else region_value(x, box, device)
            for t, (box, device) in enumerate(zip(layout.boxes, layout.chunk_devices))
        ]
        return x._with(layout=layout, data=data)
    identity = x.mode.identity(x.dtype)
    data = [
        backend.full(shape, identity, x.dtype, device)
        for shape, device in zip(layout.chunk_shapes, layout.chunk_devices)
    ]
    ufunc = x.mode.ufunc(backend.xp)
    for s, src_device in enumerate(x.layout.chunk_devices):
        for t, chunk_index, target_index in _partial_sends(x.layout, layout, s):
            piece = backend.move(x._data[s][chunk_index], src_device, layout.chunk_devices[t])
            with backend.on(layout.chunk_devices[t]):
                target = data[t][(*target_index, ...)]
                ufunc(target, piece, out=target)
    return x._with(layout=layout, data=data)


@lru_cache(maxsize=4096)
def _kept_chunks(source: Layout, target: Layout) -> dict:
    """Target chunk -> source chunk with the same box on the same device."""
    where = {}
    for k, key in enumerate(zip(source.boxes, source.chunk_devices)):
        where.setdefault(key, k)
    return {
        t: where[key]
        for t, key in enumerate(zip(target.boxes, target.chunk_devices))
        if key in where
    }


@lru_cache(maxsize=4096)
def _partial_sends(source: Layout, target: Layout, s: int) -> tuple:
    """Where source chunk `s` sends each element: ``(target chunk, s index, target index)``."""
    order = _preference(target, source.chunk_devices[s])
    box = source.boxes[s]
    cover = _regions.cover(box, tuple(target.boxes[t] for t in order))
    out = []
    for piece in cover.pieces():
        t = order[piece.source]
        out.append((t, piece.region_index, piece.source_index))
    return tuple(out)


def change_mode(x, mode: Mode):
    """`x` in `mode`, with the same layout.

    REPLICA to a partial mode keeps one copy of each element and sets the others to the
    identity: chunks that share no element with another keep their buffers (no copy). A
    partial mode to REPLICA combines the overlaps; chunks without overlaps keep their
    buffers. Partial to another partial mode goes through REPLICA.
    """
    if mode is x.mode:
        return x
    if mode.is_partial:
        mode.check_dtype(x.dtype)
    if x.mode.is_partial:
        replica = x._with(
            mode=REPLICA,
            data=[
                region_value(x, box, device) if k in _overlapping(x.layout) else x._data[k]
                for k, (box, device) in enumerate(zip(x.layout.boxes, x.layout.chunk_devices))
            ],
        )
        return change_mode(replica, mode)
    backend = x._backend
    identity = mode.identity(x.dtype)
    data = list(x._data)
    for k, shadowed in enumerate(x.layout.cover.shadowed):
        if shadowed:
            device = x.layout.chunk_devices[k]
            with backend.on(device):
                data[k] = chunk = backend.xp.array(data[k], copy=True)
                for chunk_index in shadowed:
                    _assign(chunk, chunk_index, identity, backend.xp)
    return x._with(mode=mode, data=data)


@lru_cache(maxsize=4096)
def _overlapping(layout: Layout) -> frozenset:
    """Chunks that share at least one element with another chunk."""
    cover = layout.cover.cover
    count = sum(held.astype(np.int64) for held in cover.holds)
    return frozenset(k for k, held in enumerate(cover.holds) if (count[held] > 1).any())
