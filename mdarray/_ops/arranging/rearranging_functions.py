"""Manipulations that copy elements to new positions: repeat, tile and roll.

`repeat` and `tile` copy each chunk on its own device into the chunks of a layout made
from x's (boundaries scaled by the count or shifted by the counts before them; copies of
x's layout side by side), so nothing moves between devices. `roll` relabels x's chunks
with their rolled positions (views, split where they wrap) and reshards them back to x's
layout, so only what crosses chunk boundaries moves. Repeating by one count per element
over chunks strided along the axis takes the fallback policy (`mdarray.options`).
"""

from __future__ import annotations

import itertools
import math
import operator
from typing import Any, cast

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from mdarray._array.array import DistArray, in_mode, laid_out, wrap
from mdarray._core import regions as _regions
from mdarray._core.modes import REPLICA
from mdarray._core.plan_cache import plan_cache
from mdarray._core.registry import implements
from mdarray._layouts.layout import Layout, _normalize_axis
from mdarray._ops.creation.creation_functions import asarray
from mdarray._ops.engine.fallback import fallback
from mdarray._ops.shape.manipulation_functions import ravel, reshape
from mdarray._storage.chunks import Chunks


def _grouped(shape: tuple, entries: list) -> tuple[Layout, list]:
    """The layout of `entries` ``(device, index, payload)`` and their payloads in its chunk
    order (a Layout lists chunks grouped by device, in order of first appearance)."""
    index_map: dict = {}
    payloads: dict = {}
    for device, index, payload in entries:
        index_map.setdefault(device, []).append(index)
        payloads.setdefault(device, []).append(payload)
    return Layout(shape, index_map), [p for device in index_map for p in payloads[device]]


def _empty_like_layout(x: DistArray, shape: tuple) -> DistArray:
    layout = Layout.block(shape, devices=x.devices)
    return wrap(Chunks.empty(layout, x.dtype, x.storage.backend), x.mode)


def _host_counts(repeats) -> np.ndarray | None:
    """`repeats` as integer counts on the host (a DistArray of counts is read there: the
    counts move, not the array), or None where NumPy's own checks must speak."""
    if isinstance(repeats, (bool, np.bool_)):
        return None
    counts = repeats.get() if isinstance(repeats, DistArray) else np.asarray(repeats)
    if counts.dtype.kind not in "iu" or counts.ndim > 1:
        return None
    return counts


def _repeated_pieces(r: range, count: int) -> list[range]:
    """The positions that a chunk's positions `r` along the axis take after repeating each
    `count` times: one range, or `count` strided ones for a strided chunk."""
    if count == 0:
        return [range(0)]
    if r.step == 1 or len(r) <= 1:
        return [range(r.start * count, r.start * count + len(r) * count)]
    return [range(r.start * count + j, r[-1] * count + j + 1, r.step * count) for j in range(count)]


@implements(np.repeat, spmd=True)
def _repeat(a, repeats, axis=None):
    """``numpy.repeat``, per chunk on its own device (nothing moves but the counts); the
    mode is kept, each element being a copy of one element of `a`. By one count, the
    result's chunks are a's with their positions along `axis` scaled by it (a strided
    chunk becomes `count` strided chunks); by one count per element, each chunk's
    positions start at the sum of the counts before it (strided chunks along `axis`: the
    fallback policy)."""
    if not isinstance(a, DistArray):
        return fallback(np.repeat, (a, repeats), {"axis": axis}, "numpy.repeat")
    given = (a, axis)
    if axis is None or a.ndim == 0:  # NumPy takes a 0-d array as 1-D here
        a, axis = ravel(a), 0 if axis is None else axis
    axis = _normalize_axis(axis, a.ndim)
    counts = _host_counts(repeats)
    if counts is not None and counts.size == 1:
        return _repeat_by(a, int(counts.reshape(-1)[0]), axis)
    strided = any(len(box[axis]) > 1 and box[axis].step > 1 for box in a.layout.boxes)
    if counts is None or counts.shape != (a.shape[axis],) or strided:
        return fallback(np.repeat, (given[0], repeats), {"axis": given[1]}, "numpy.repeat")
    if (counts < 0).any():
        raise ValueError("repeats may not contain negative values.")
    return _repeat_each(a, counts, axis)


def _repeat_by(a: DistArray, count: int, axis: int) -> DistArray:
    if count < 0:  # NumPy checks the count only where the axis has elements
        if a.shape[axis]:
            raise ValueError("negative dimensions are not allowed")
        count = 0
    shape = (*a.shape[:axis], a.shape[axis] * count, *a.shape[axis + 1 :])
    entries = []
    for k, ((device, index), box) in enumerate(zip(a.layout.chunks, a.layout.boxes)):
        pieces = _repeated_pieces(box[axis], count)
        whole = len(pieces) == 1
        for piece in pieces:
            new = (*index[:axis], _regions.to_slice(piece), *index[axis + 1 :])
            entries.append((device, new, (k, whole)))
    layout, sources = _grouped(shape, entries)
    buffers = a.storage.buffers
    xp = a.storage.backend.xp

    def make(t: int):
        k, whole = sources[t]
        return xp.repeat(buffers[k], count, axis=axis) if whole else buffers[k].copy()

    return wrap(Chunks.generate(layout, a.storage.backend, make, a.dtype), a.mode)


def _repeat_each(a: DistArray, counts: np.ndarray, axis: int) -> DistArray:
    """`a` (no strided chunk along `axis`) with element i along `axis` repeated
    ``counts[i]`` times: each chunk starts at the sum of the counts before it."""
    offsets = np.concatenate(([0], np.cumsum(counts, dtype=np.intp))).tolist()
    shape = (*a.shape[:axis], offsets[-1], *a.shape[axis + 1 :])
    entries = []
    for k, ((device, index), box) in enumerate(zip(a.layout.chunks, a.layout.boxes)):
        r = box[axis]
        held = range(offsets[r.start], offsets[r[-1] + 1]) if len(r) else range(0)
        new = (*index[:axis], _regions.to_slice(held), *index[axis + 1 :])
        entries.append((device, new, (k, r)))
    layout, sources = _grouped(shape, entries)
    buffers = a.storage.buffers
    xp = a.storage.backend.xp

    def make(t: int):
        k, r = sources[t]
        if not len(r):
            return buffers[k].copy()
        return xp.repeat(buffers[k], counts[r.start : r[-1] + 1].tolist(), axis=axis)

    return wrap(Chunks.generate(layout, a.storage.backend, make, a.dtype), a.mode)


def repeat(x: DistArray, repeats: Any, /, *, axis: int | None = None) -> DistArray:
    """Each element of `x` repeated `repeats` times (an int, or one count per element
    along `axis`) along `axis`; `x` is flattened first without `axis` (array API).

    Parameters
    ----------
    x : DistArray
        The input array.
    repeats : int or DistArray
        The number of repetitions: one for all, or a 1-D integer array with one per
        element along `axis` (read on the host). Each chunk is repeated where it lies:
        nothing else moves between devices.
    axis : int, optional
        The axis to repeat along; None flattens `x` first.

    Returns
    -------
    DistArray
        The repeated array, of `x`'s dtype.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([1, 2, 3]))
    >>> mdarray.repeat(x, 2).get()
    array([1, 1, 2, 2, 3, 3])
    """
    if not isinstance(repeats, DistArray):
        x = asarray(x)
    return cast(DistArray, np.repeat(x, repeats, axis=axis))


@implements(np.tile, spmd=True)
def _tile(A, reps):
    """``numpy.tile``: the result is copies of A's layout side by side, each chunk copied
    on its own device (nothing moves); the mode is kept. Along an axis that a chunk spans
    whole, its copies lie side by side and make one chunk (a tile of the chunk): tiling a
    row of 4 chunks 50000 times gives 4 column chunks, not 200000 chunks of one element."""
    try:
        repetitions = tuple(operator.index(r) for r in reps)
    except TypeError:
        repetitions = (operator.index(reps),)
    if A.ndim < len(repetitions):
        A = reshape(A, (1,) * (len(repetitions) - A.ndim) + A.shape)
    repetitions = (1,) * (A.ndim - len(repetitions)) + repetitions
    shape = tuple(n * r for n, r in zip(A.shape, repetitions))
    # NumPy lets a negative count through for an empty array where the shape stays >= 0.
    if any(n < 0 for n in shape) or (A.size and any(r < 0 for r in repetitions)):
        raise ValueError("negative dimensions are not allowed")
    if not math.prod(shape):
        return _empty_like_layout(A, shape)
    if _tiled_count(A.layout, repetitions) > _MOST_COPIES * len(A.layout.chunks):
        return _tiled_blocks(A, repetitions, shape)
    layout, sources = _tiled_layout(A.layout, repetitions)
    buffers = A.storage.buffers
    xp = A.storage.backend.xp

    def make(t: int):
        k, counts = sources[t]
        return xp.tile(buffers[k], counts) if any(c > 1 for c in counts) else buffers[k].copy()

    return wrap(Chunks.generate(layout, A.storage.backend, make, A.dtype), A.mode)


#: Past this many chunks per chunk of the input, a tile is laid out in blocks instead of
#: copies of the input's chunks (a 2-element array tiled 50000 times would be 100000
#: chunks, and every later operation would plan over them).
_MOST_COPIES = 4


def _tiled_blocks(A: DistArray, repetitions: tuple, shape: tuple) -> DistArray:
    """``numpy.tile`` as row blocks over A's devices: A (small, next to its tile) is
    first whole on each of them, and each block reads its positions modulo A's shape."""
    devices = A.devices
    whole = laid_out(in_mode(A, REPLICA), Layout.replicated(A.shape, devices=devices))
    held = dict(zip(whole.layout.chunk_devices, whole.storage.buffers))
    layout = Layout.block(shape, devices=devices)
    xp = A.storage.backend.xp

    def make(t: int):
        box = layout.boxes[t]
        positions = [xp.arange(r.start, r.stop) % n for r, n in zip(box, A.shape)]
        return held[layout.chunk_devices[t]][xp.ix_(*positions)]

    return wrap(Chunks.generate(layout, A.storage.backend, make, A.dtype), REPLICA)


@plan_cache
def _tiled_count(layout: Layout, repetitions: tuple) -> int:
    """How many chunks `_tiled_layout` makes."""
    return sum(
        math.prod(
            1 if len(r) == n else count for r, n, count in zip(box, layout.shape, repetitions)
        )
        for box in layout.boxes
    )


@plan_cache
def _tiled_layout(layout: Layout, repetitions: tuple) -> tuple[Layout, tuple]:
    """The layout of `layout` tiled by `repetitions` and, per chunk, ``(source chunk, its
    tile counts per axis)``: along an axis a chunk spans whole its copies make one chunk,
    along another each copy is a chunk of its own."""
    entries = []
    for k, ((device, index), box) in enumerate(zip(layout.chunks, layout.boxes)):
        per_axis = []
        for s, r, n, count in zip(index, box, layout.shape, repetitions):
            if len(r) == n:  # whole: the copies follow one another
                per_axis.append([(slice(0, n * count, 1), count)])
            else:
                per_axis.append(
                    [(slice(s.start + c * n, s.stop + c * n, s.step), 1) for c in range(count)]
                )
        for combination in itertools.product(*per_axis):
            new = tuple(piece for piece, _ in combination)
            entries.append((device, new, (k, tuple(count for _, count in combination))))
    tiled, sources = _grouped(tuple(n * r for n, r in zip(layout.shape, repetitions)), entries)
    return tiled, tuple(sources)


def tile(x: DistArray, repetitions: tuple[int, ...], /) -> DistArray:
    """`x` repeated `repetitions[i]` times along each axis ``i`` (array API); the shorter
    of `x`'s shape and `repetitions` is padded with ones on the left.

    Parameters
    ----------
    x : DistArray
        The input array.
    repetitions : tuple of ints
        The number of copies along each axis. Each chunk is copied on its own device
        (the result is copies of x's layout side by side): nothing moves.

    Returns
    -------
    DistArray
        The tiled array, of `x`'s dtype.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([1, 2]))
    >>> mdarray.tile(x, (2, 2)).get()
    array([[1, 2, 1, 2],
           [1, 2, 1, 2]])
    """
    return cast(DistArray, np.tile(asarray(x), repetitions))


@plan_cache
def _rolled_layout(layout: Layout, shifts: tuple) -> tuple[Layout, tuple]:
    """x's chunks relabeled by the roll of `shifts` (one per axis, each in ``[0, n)``):
    ``(layout, sources)``, each new chunk being part ``sources[t] = (k, local index)`` of
    chunk k. A chunk's positions along a rolled axis split where they wrap past the end
    (at most two parts per rolled axis), so every part stays a box."""
    entries = []
    for k, ((device, index), box) in enumerate(zip(layout.chunks, layout.boxes)):
        if not _regions.box_size(box):
            entries.append((device, index, (k, tuple(slice(0, len(r)) for r in box))))
            continue
        per_axis = []
        for r, n, shift in zip(box, layout.shape, shifts):
            # How many of r's positions stay below n once shifted: they do not wrap.
            stay = len(range(r.start, min(r.stop, n - shift), r.step))
            parts = [(r[:stay], shift, slice(0, stay)), (r[stay:], shift - n, slice(stay, len(r)))]
            per_axis.append(
                [
                    (_regions.to_slice(range(p.start + d, p.stop + d, p.step)), local)
                    for p, d, local in parts
                    if len(p)
                ]
            )
        for combination in itertools.product(*per_axis):
            new = tuple(s for s, _ in combination)
            entries.append((device, new, (k, tuple(local for _, local in combination))))
    rolled, sources = _grouped(layout.shape, entries)
    return rolled, tuple(sources)


@implements(np.roll, spmd=True)
def _roll(a, shift, axis=None):
    """``numpy.roll``: a's chunks relabeled with their rolled positions (split where they
    wrap past the end: views, nothing copied), then resharded to a's layout, so only the
    elements that cross chunk boundaries move, in one step. The mode is kept (each
    element keeps its copies). Without `axis`, the flattened array is rolled (`ravel`,
    then `reshape`)."""
    if axis is None:
        return reshape(_roll(ravel(a), shift, 0), a.shape)
    axes = normalize_axis_tuple(axis, a.ndim, allow_duplicate=True)
    broadcasted = np.broadcast(shift, axes)
    if broadcasted.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    shifts = [0] * a.ndim
    for sh, ax in broadcasted:
        shifts[ax] += int(sh)
    rolled = tuple(s % n if n else 0 for s, n in zip(shifts, a.shape))
    layout, sources = _rolled_layout(a.layout, rolled)
    views = a.storage.view(layout, lambda t, b: b[sources[t][1]], tuple(k for k, _ in sources))
    return laid_out(wrap(views, a.mode), a.layout)


def roll(
    x: DistArray,
    /,
    shift: int | tuple[int, ...],
    *,
    axis: int | tuple[int, ...] | None = None,
) -> DistArray:
    """`x` with its elements shifted by `shift` along `axis`, those leaving one end coming
    back at the other (array API); without `axis`, along the flattened array.

    Parameters
    ----------
    x : DistArray
        The input array.
    shift : int or tuple of ints
        The number of places to shift (towards higher indices where positive), one per
        axis of `axis` or one for all.
    axis : int or tuple of ints, optional
        The axes to shift along; None shifts the flattened array and keeps the shape.
        The result keeps x's layout and mode: only the elements that cross chunk
        boundaries move.

    Returns
    -------
    DistArray
        The rolled array, of `x`'s shape and dtype.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.arange(5))
    >>> mdarray.roll(x, 2).get()
    array([3, 4, 0, 1, 2])
    """
    return cast(DistArray, np.roll(asarray(x), shift, axis=axis))
