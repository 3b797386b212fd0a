"""Manipulations that copy elements to new positions: repeat, tile and roll.

`repeat` and `tile` copy each chunk on its own device into the chunks of a layout made
from x's (boundaries scaled by the count or shifted by the counts before them; copies of
x's layout side by side), so nothing moves between devices. `roll` keeps x's layout; each chunk fetches the shifted
region of x it holds (at most two pieces per rolled axis) through
`_redistribute.region_value`, so only what crosses chunk boundaries moves. Repeating by
one count per element over chunks strided along the axis takes the fallback policy
(`mdarray.options`).
"""

from __future__ import annotations

import itertools
import math
import operator
from typing import Any, cast

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from . import _redistribute, _regions
from ._array import DistArray, wrap
from ._creation_functions import asarray
from ._fallback import fallback
from ._layout import Layout, _normalize_axis
from ._manipulation_functions import ravel, reshape
from ._modes import REPLICA
from ._registry import implements
from ._storage import Chunks


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


@implements(np.repeat)
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


@implements(np.tile)
def _tile(A, reps):
    """``numpy.tile``: the result is copies of A's layout side by side, each chunk copied
    on its own device (nothing moves); the mode is kept."""
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
    entries = []
    for copy in itertools.product(*(range(r) for r in repetitions)):
        for k, (device, index) in enumerate(A.layout.chunks):
            shifted = tuple(
                slice(s.start + c * n, s.stop + c * n, s.step)
                for s, c, n in zip(index, copy, A.shape)
            )
            entries.append((device, shifted, k))
    layout, sources = _grouped(shape, entries)
    buffers = A.storage.buffers
    return wrap(
        Chunks.generate(layout, A.storage.backend, lambda t: buffers[sources[t]].copy(), A.dtype),
        A.mode,
    )


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


def _rolled_pieces(r: range, shift: int, n: int) -> list[range]:
    """The positions of x along an axis of length `n` that the positions `r` hold after
    rolling by `shift` (in ``[0, n)``): at most two ranges, in order."""
    source = range(r.start - shift, r.stop - shift, r.step)
    wrapped = len(range(source.start, min(source.stop, 0), r.step)) if source.start < 0 else 0
    head, tail = source[:wrapped], source[wrapped:]
    pieces = [range(head.start + n, head.stop + n, r.step), tail]
    return [p for p in pieces if len(p)]


def _assembled(storage: Chunks, mode, per_axis: list, device, xp):
    """The array on `device` made of x's regions, the product of `per_axis` (per axis, the
    ranges of x in order), joined along each axis; each region through `region_value`."""

    def build(axis: int, prefix: tuple):
        if axis == len(per_axis):
            return _redistribute.region_value(storage, mode, prefix, device)
        parts = [build(axis + 1, (*prefix, r)) for r in per_axis[axis]]
        return parts[0] if len(parts) == 1 else xp.concatenate(parts, axis=axis)

    return build(0, ())


@implements(np.roll)
def _roll(a, shift, axis=None):
    """``numpy.roll``: the result keeps a's layout; each chunk fetches the shifted region
    of `a` it holds (at most two pieces per rolled axis), so only the elements that cross
    chunk boundaries move. REPLICA mode (the regions are read as values). Without `axis`,
    the flattened array is rolled (`ravel`, then `reshape`)."""
    if axis is None:
        return reshape(_roll(ravel(a), shift, 0), a.shape)
    axes = normalize_axis_tuple(axis, a.ndim, allow_duplicate=True)
    broadcasted = np.broadcast(shift, axes)
    if broadcasted.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    shifts = dict.fromkeys(range(a.ndim), 0)
    for sh, ax in broadcasted:
        shifts[ax] += int(sh)
    storage = a.storage
    layout = a.layout
    xp = storage.backend.xp

    def make(k: int):
        box = layout.boxes[k]
        if not _regions.box_size(box):
            return xp.empty(layout.chunk_shapes[k], a.dtype)
        per_axis = [
            _rolled_pieces(r, shifts[ax] % n, n) if shifts[ax] % n else [r]
            for ax, (r, n) in enumerate(zip(box, a.shape))
        ]
        return _assembled(storage, a.mode, per_axis, layout.chunk_devices[k], xp)

    return wrap(Chunks.generate(layout, storage.backend, make, a.dtype), REPLICA)


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
        The result keeps x's layout, each chunk fetching its shifted region: only the
        elements that cross chunk boundaries move.

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
