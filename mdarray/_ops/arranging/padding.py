"""``numpy.pad`` over DistArrays: the constant, edge, reflect, symmetric and wrap modes.

The result is laid out from the input's: each chunk keeps its place shifted by the leading
pad widths, and chunks at the array's edges widen to hold the new border (`padded_layout`).
Each result chunk is made on its device from the regions of the input its elements come
from (`_redistribute.regions_value`, every chunk's in one step): its own chunk's data
locally, and for the edge, reflect, symmetric and wrap modes the border elements from the
chunks holding them, so only border-sized pieces move. The other modes take the fallback policy.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from mdarray._array.array import DistArray, wrap
from mdarray._core import regions as _regions
from mdarray._core.modes import REPLICA
from mdarray._core.plan_cache import plan_cache
from mdarray._core.registry import implements
from mdarray._layouts.layout import Layout
from mdarray._movement import redistribute as _redistribute
from mdarray._ops.engine.fallback import fallback
from mdarray._storage.chunks import Chunks

#: Modes whose padded value along an axis is the input at a position (an index map).
INDEXED_MODES = ("edge", "reflect", "symmetric", "wrap")


@plan_cache
def padded_layout(layout: Layout, widths: tuple) -> Layout:
    """`layout` padded by `widths` (per axis ``(before, after)``): each chunk shifted by
    ``before``, widened to the new ends where it holds the array's first or last element
    (or spans an empty axis). Blocks over the devices where that leaves elements uncovered
    (strided chunks at an edge)."""
    shape = tuple(n + b + a for n, (b, a) in zip(layout.shape, widths))
    index_map: dict = {}
    for device, box in zip(layout.chunk_devices, layout.boxes):
        index = []
        for r, n, (before, _), m in zip(box, layout.shape, widths, shape):
            start, stop = r.start + before, r.stop + before
            if not n:
                start, stop = 0, m
            elif len(r) and (r.step == 1 or len(r) == 1):
                start = 0 if r.start == 0 else start
                stop = m if r[-1] == n - 1 else r[-1] + 1 + before
            elif not len(r):
                start = stop = 0
            index.append(slice(start, stop, r.step if len(r) > 1 else 1))
        index_map.setdefault(device, []).append(tuple(index))
    try:
        return Layout(shape, index_map)
    except ValueError:
        return Layout.block(shape, devices=layout.devices)


def _runs(sources: np.ndarray) -> list[tuple[int, int, int, int]]:
    """`sources` (input positions along an axis, -1 for a constant) cut into runs
    ``(begin, count, first, step)``: positions ``first + j * step``; ``first == -1`` for
    a run of constants."""
    runs = []
    j = 0
    while j < len(sources):
        first = int(sources[j])
        count = 1
        if first < 0:
            while j + count < len(sources) and sources[j + count] < 0:
                count += 1
            runs.append((j, count, -1, 0))
        else:
            step = int(sources[j + 1]) - first if j + 1 < len(sources) else 0
            while (
                j + count < len(sources)
                and sources[j + count] >= 0
                and int(sources[j + count]) - int(sources[j + count - 1]) == step
            ):
                count += 1
            runs.append((j, count, first, step if count > 1 else 0))
        j += count
    return runs


def _region(runs: tuple) -> tuple:
    """The ascending region of the input that holds the product of `runs` (one per
    axis)."""
    region = []
    for _, count, first, step in runs:
        last = first + (count - 1) * step
        if step == 0:
            region.append(range(first, first + 1))
        else:
            region.append(range(min(first, last), max(first, last) + 1, abs(step)))
    return tuple(region)


def _shaped(piece, runs: tuple, xp):
    """`piece` (the input's `_region` of `runs`) flipped or repeated to the runs' order."""
    for axis, (_, count, _, step) in enumerate(runs):
        if step < 0:
            piece = xp.flip(piece, axis=axis)
        elif step == 0 and count > 1:
            piece = xp.repeat(piece, count, axis=axis)
    return piece


def _parts(per_axis: list, fill: bool) -> list:
    """The products of runs a chunk of runs `per_axis` reads from the input, in the
    order its `make` uses them: every product (joined per axis), or for the constant
    mode the one ascending run per axis where the chunk meets the input."""
    if not all(per_axis):
        return []
    if not fill:
        return list(itertools.product(*per_axis))
    inner = tuple([run for run in runs if run[2] >= 0] for runs in per_axis)
    return [tuple(axis_runs[0] for axis_runs in inner)] if all(inner) else []


def _pairs(value, ndim: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(value), (ndim, 2))


@implements(np.pad, spmd=True)
def pad(array: DistArray, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> DistArray:
    """``numpy.pad`` for the constant, edge, reflect, symmetric (``reflect_type='even'``)
    and wrap modes; others by the fallback policy. The result keeps the input's layout,
    shifted and with the edge chunks widened (`padded_layout`); each chunk is made on its
    device from its own data and, for the modes other than constant, the border elements
    fetched from the chunks holding them. REPLICA mode.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(4), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> y = np.pad(x, (1, 2), constant_values=9)
    >>> y.get(), y.index_map
    (array([9, 0, 1, 2, 3, 9, 9]), {0: [(slice(0, 3, 1),)], 1: [(slice(3, 7, 1),)]})
    """
    native = (mode == "constant" and set(kwargs) <= {"constant_values"}) or (
        mode in INDEXED_MODES and kwargs.get("reflect_type", "even") == "even"
    )
    if not isinstance(mode, str) or not native or isinstance(pad_width, dict):
        return fallback(np.pad, (array, pad_width), {"mode": mode, **kwargs}, "numpy.pad")
    stand_in = np.zeros(tuple(min(n, 2) for n in array.shape), array.dtype)
    np.pad(stand_in, pad_width, mode, **kwargs)  # type: ignore[call-overload]  # NumPy's errors
    widths = tuple(tuple(int(w) for w in pair) for pair in _pairs(pad_width, array.ndim))
    layout = padded_layout(array.layout, widths)
    fill = mode == "constant"
    constants = _pairs(kwargs.get("constant_values", 0), array.ndim)
    # Per axis, the input position each padded position takes (-1: a constant).
    maps = [
        np.pad(np.arange(n), pair, mode, constant_values=-1)  # type: ignore[call-overload]
        if fill
        else np.pad(np.arange(n), pair, mode)  # type: ignore[call-overload]
        for n, pair in zip(array.shape, widths)
    ]
    storage = array.storage
    xp = storage.backend.xp
    # Every chunk's reads of the input, fetched in one step (one exchange between the
    # processes of an SPMD run).
    per_chunk = [
        [_runs(m[_regions.to_slice(r)]) for m, r in zip(maps, box)] for box in layout.boxes
    ]
    wanted = [(t, part) for t, per_axis in enumerate(per_chunk) for part in _parts(per_axis, fill)]
    fetched = _redistribute.regions_value(
        _redistribute.change_mode(storage, array.mode, REPLICA),
        [_region(part) for _, part in wanted],
        [layout.chunk_devices[t] for t, _ in wanted],
    )
    pieces: dict = {}
    for (t, part), piece in zip(wanted, fetched):
        pieces.setdefault(t, []).append((part, piece))

    def make(t: int):
        box = layout.boxes[t]
        shape = layout.chunk_shapes[t]
        per_axis = per_chunk[t]
        got = iter(pieces.get(t, ()))
        if not all(per_axis):
            return xp.empty(shape, array.dtype)
        if not fill:
            return _joined(per_axis, got, xp)
        out = xp.empty(shape, array.dtype)
        for axis, (runs, r) in enumerate(zip(per_axis, box)):
            lead = (slice(None),) * axis
            for begin, count, first, _ in runs:
                if first < 0:  # before the input, then after it (both for an empty axis)
                    held = r[begin : begin + count]
                    low = len(range(held.start, min(held.stop, widths[axis][0]), held.step))
                    before_key = (*lead, slice(begin, begin + low))
                    after_key = (*lead, slice(begin + low, begin + count))
                    # Through the backend: a signed zero is written bit for bit on CuPy.
                    storage.backend.assign(out, before_key, constants[axis][0])
                    storage.backend.assign(out, after_key, constants[axis][1])
        # The input's part: one ascending run per axis, where the chunk meets it.
        for part, piece in got:
            key = tuple(slice(begin, begin + count) for begin, count, _, _ in part)
            out[key] = _shaped(piece, part, xp)
        return out

    return wrap(Chunks.generate(layout, storage.backend, make, array.dtype), REPLICA)


def _joined(per_axis: list, got, xp):
    """The product of the runs of `per_axis`, joined per axis, from the fetched pieces
    `got` (``(runs, piece)`` in product order)."""

    def build(axis: int):
        if axis == len(per_axis):
            part, piece = next(got)
            return _shaped(piece, part, xp)
        parts = [build(axis + 1) for _ in per_axis[axis]]
        return parts[0] if len(parts) == 1 else xp.concatenate(parts, axis=axis)

    return build(0)
