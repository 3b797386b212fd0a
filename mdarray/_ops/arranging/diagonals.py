"""Diagonals: diagonal, trace and diag (NumPy's and ``numpy.linalg``'s).

Each chunk gives the diagonal elements it holds, extracted where it lies: the result is
laid out from those pieces (the other axes as the chunk has them, then the diagonal
positions it holds), so `diagonal` moves nothing and keeps the mode (every copy of a
diagonal element is a copy in the result). `trace` sums that diagonal (a reduction, which
may leave a partial SUM). ``diag`` of a vector builds a matrix in row blocks, each block
fetching the part of the vector on its rows.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from mdarray._array.array import DistArray, wrap
from mdarray._core import regions as _regions
from mdarray._core.modes import REPLICA
from mdarray._core.plan_cache import plan_cache
from mdarray._core.registry import implements
from mdarray._layouts.layout import Layout, _normalize_axis
from mdarray._movement import redistribute as _redistribute
from mdarray._storage.chunks import Chunks

from .rearranging_functions import _grouped


@plan_cache
def diagonal_plan(layout: Layout, offset: int, axis1: int, axis2: int):
    """``(result layout, per result chunk (source chunk, index into it))`` for the
    diagonal at `offset` over `axis1` and `axis2` of an array of `layout`, or None where
    no chunk holds a diagonal element (the result is empty)."""
    ndim = len(layout.shape)
    others = [a for a in range(ndim) if a not in (axis1, axis2)]
    n1, n2 = layout.shape[axis1], layout.shape[axis2]
    # Diagonal element d sits at (d + o1, d + o2).
    o1, o2 = max(0, -offset), max(0, offset)
    length = max(0, min(n1 - o1, n2 - o2))
    shape = (*(layout.shape[a] for a in others), length)
    entries = []
    for k, (device, box) in enumerate(zip(layout.chunk_devices, layout.boxes)):
        if not all(len(box[a]) for a in others):
            continue
        r1, r2 = box[axis1], box[axis2]
        # e = d + o1 + o2: both sides shifted to non-negative positions.
        e = _regions.intersect_range(
            range(r1.start + o2, r1.stop + o2, r1.step), range(r2.start + o1, r2.stop + o1, r2.step)
        )
        if not len(e):
            continue
        d = range(e.start - o1 - o2, e.stop - o1 - o2, e.step)
        local = [slice(None)] * ndim
        local[axis1] = _regions.local_index(r1, range(d.start + o1, d.stop + o1, d.step))
        local[axis2] = _regions.local_index(r2, range(d.start + o2, d.stop + o2, d.step))
        index = (*(_regions.to_slice(box[a]) for a in others), _regions.to_slice(d))
        entries.append((device, index, (k, tuple(local))))
    if not entries:
        return None
    result, sources = _grouped(shape, entries)
    return result, tuple(sources)


@implements(np.diagonal, spmd=True)
def diagonal(a: DistArray, offset: int = 0, axis1: int = 0, axis2: int = 1) -> DistArray:
    """``numpy.diagonal``: the diagonal elements each chunk holds, extracted where the
    chunk lies (nothing moves); the result keeps the mode. The other axes come first, the
    diagonal last, as NumPy's.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(16).reshape(4, 4), mdarray.Layout.grid((4, 4), (2, 2)))
    >>> np.diagonal(x, 1).get()
    array([ 1,  6, 11])
    """
    offset = operator.index(offset)
    np.diagonal(np.empty((0,) * a.ndim), offset, axis1, axis2)  # NumPy's errors
    axis1, axis2 = _normalize_axis(axis1, a.ndim), _normalize_axis(axis2, a.ndim)
    plan = diagonal_plan(a.layout, offset, axis1, axis2)
    if plan is None:
        length = max(0, min(a.shape[axis1] - max(0, -offset), a.shape[axis2] - max(0, offset)))
        others = tuple(n for i, n in enumerate(a.shape) if i not in (axis1, axis2))
        layout = Layout.block((*others, length), devices=a.devices)
        return wrap(Chunks.empty(layout, a.dtype, a.storage.backend), a.mode)
    layout, sources = plan
    buffers = a.storage.buffers
    xp = a.storage.backend.xp

    def make(t: int):
        k, local = sources[t]
        return xp.diagonal(buffers[k][local], 0, axis1, axis2).copy()

    return wrap(Chunks.generate(layout, a.storage.backend, make, a.dtype), a.mode)


@implements(np.trace, spmd=True)
def trace(a: DistArray, offset=0, axis1=0, axis2=1, dtype=None, out=None) -> DistArray:
    """``numpy.trace``: the sum of `diagonal` (extracted per chunk, nothing moves) along
    its last axis, by the reduction engine (a partial SUM per device where it can be).

    >>> import mdarray, numpy as np
    >>> int(np.trace(mdarray.asarray(np.arange(9).reshape(3, 3))))
    12
    """
    return np.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)


@implements(np.linalg.diagonal, spmd=True)
def _linalg_diagonal(x: DistArray, /, *, offset: int = 0) -> DistArray:
    return diagonal(x, offset, -2, -1)


@implements(np.linalg.trace, spmd=True)
def _linalg_trace(x: DistArray, /, *, offset: int = 0, dtype: Any = None) -> DistArray:
    np.linalg.trace(np.empty((0,) * x.ndim), offset=offset)  # NumPy's errors
    return trace(x, offset, -2, -1, dtype=dtype)


@implements(np.diag, spmd=True)
def diag(v: DistArray, k: int = 0) -> DistArray:
    """``numpy.diag``: a matrix's `diagonal` (nothing moves), or a matrix with a vector on
    its `k`-th diagonal, in row blocks over the vector's devices: each block fetches the
    elements of the vector on its rows (at most the vector moves, once).

    >>> import mdarray, numpy as np
    >>> np.diag(mdarray.asarray(np.array([1, 2])), 1).get()
    array([[0, 1, 0],
           [0, 0, 2],
           [0, 0, 0]])
    """
    k = operator.index(k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    size = v.shape[0]
    n = size + abs(k)
    o1, o2 = max(0, -k), max(0, k)
    layout = Layout.block((n, n), devices=v.devices)
    backend = v.storage.backend
    xp = backend.xp
    storage = _redistribute.change_mode(v.storage, v.mode, REPLICA)
    # Per row block, the elements of v on its rows: all fetched in one step.
    held = [
        range(max(rows.start - o1, 0), min(rows.stop - o1, size))
        for rows in (box[0] for box in layout.boxes)
    ]
    fetched = [t for t, h in enumerate(held) if h]
    pieces = dict(
        zip(
            fetched,
            _redistribute.regions_value(
                storage, [(held[t],) for t in fetched], [layout.chunk_devices[t] for t in fetched]
            ),
        )
    )

    def make(t: int):
        rows = layout.boxes[t][0]
        out = xp.zeros(layout.chunk_shapes[t], v.dtype)
        if t in pieces:
            positions = xp.arange(len(held[t]))
            first = held[t].start
            out[positions + (first + o1 - rows.start), positions + (first + o2)] = pieces[t]
        return out

    return wrap(Chunks.generate(layout, backend, make, v.dtype), REPLICA)
