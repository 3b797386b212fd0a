"""NumPy's neighbourhood functions without gathering: gradient, partition, argpartition.

gradient runs per chunk along each axis: a chunk fetches one element past each of its
ends along the axis (a halo, through `_redistribute.region_value`; at the array's ends
the few elements its one-sided differences need), so only those edge elements move.

partition and argpartition run per chunk along an axis that no chunk splits: nothing
moves. Along a split axis the array is first resharded so that the axis is whole in
every chunk (one movement, as sort does), then each chunk partitions its own lanes.
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from . import _redistribute
from ._array import DistArray, wrap
from ._fallback import fallback
from ._layout import Layout
from ._manipulation_functions import reshape
from ._modes import REPLICA
from ._registry import implements
from ._sorting_functions import splits
from ._storage import Chunks


def _kth_positions(kth, length: int) -> np.ndarray | None:
    """`kth` as integer positions checked as NumPy checks them; None when it is not an
    integer array (left to the fallback)."""
    positions = np.asarray(kth)
    if positions.dtype.kind not in "iu" or positions.ndim > 1:
        return None
    for k in positions.reshape(-1).tolist():
        normal = k + length if k < 0 else k
        if not 0 <= normal < length:
            raise ValueError(f"kth(={normal}) out of bounds ({length})")
    return positions


def _whole_axis(x: DistArray, axis: int) -> DistArray:
    """`x` resharded so that no chunk splits `axis` (blocks along the longest other axis,
    or one chunk for a 1-D array)."""
    if x.ndim == 1:
        return x.reshard(Layout.block(x.shape, devices=x.layout.devices[:1]))
    other = max((a for a in range(x.ndim) if a != axis), key=lambda a: x.shape[a])
    return x.reshard(Layout.block(x.shape, axis=other, devices=x.layout.devices))


def _partitioned(name: str, a, kth, axis, kind, order, arg: bool):
    func = np.argpartition if arg else np.partition
    args = {"kth": kth, "axis": axis, "kind": kind, "order": order}
    if not isinstance(a, DistArray) or order is not None or kind != "introselect" or a.ndim == 0:
        return fallback(func, (a,), args, name)
    x = a.change_mode(REPLICA) if a.mode.is_partial else a
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = normalize_axis_index(operator.index(axis), x.ndim)
    # NumPy checks kth only against a non-empty array.
    positions = _kth_positions(kth, x.shape[axis] if x.size else 1 << 62)
    if positions is None:
        return fallback(func, (a,), args, name)
    if x.size == 0:
        if arg:
            return wrap(x.storage.map(lambda c: c.astype(np.intp), dtype=np.intp))
        return wrap(x.storage.map(lambda c: c.copy()))
    if splits(x.layout, axis):
        x = _whole_axis(x, axis)
    xp = x.storage.backend.xp
    if arg:
        return wrap(
            x.storage.map(lambda c: xp.argpartition(c, positions, axis=axis), dtype=np.intp)
        )
    return wrap(x.storage.map(lambda c: xp.partition(c, positions, axis=axis)))


@implements(np.partition)
def _partition(a, kth, axis=-1, kind="introselect", order=None):
    """``numpy.partition``, per chunk along an axis no chunk splits (nothing moves); a
    split axis is made whole first (one reshard).

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([[3, 1, 2], [9, 7, 8]]))
    >>> with mdarray.options(fallback="raise"):
    ...     np.partition(x, 0, axis=1).get()[:, 0]
    array([1, 7])
    """
    return _partitioned("numpy.partition", a, kth, axis, kind, order, arg=False)


@implements(np.argpartition)
def _argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """``numpy.argpartition``, moving as `numpy.partition` does.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([3, 1, 2]))
    >>> with mdarray.options(fallback="raise"):
    ...     int(np.argpartition(x, 0).get()[0])
    1
    """
    return _partitioned("numpy.argpartition", a, kth, axis, kind, order, arg=True)


def _gradient_chunks(x: DistArray, axis: int, spacing, edge_order: int, dtype) -> Chunks:
    """The chunks of ``numpy.gradient(x, spacing, axis=axis)`` in `x`'s layout, each from
    its chunk's box widened by one along `axis` (and to the ``edge_order + 1`` elements an
    end of the array needs): the differences that NumPy takes there, bit for bit."""
    storage = x.storage
    backend, layout = storage.backend, x.layout
    xp = backend.xp
    n = x.shape[axis]

    def make(k: int):
        box = layout.boxes[k]
        if any(len(r) == 0 for r in box):
            return xp.empty(layout.chunk_shapes[k], dtype)
        kept = box[axis]
        low, high = max(kept.start - 1, 0), min(kept[-1] + 2, n)
        if kept.start == 0:
            high = max(high, edge_order + 1)
        if kept[-1] == n - 1:
            low = min(low, n - edge_order - 1)
        region = (*box[:axis], range(low, high), *box[axis + 1 :])
        device = layout.chunk_devices[k]
        if region == box and x.mode is REPLICA:
            piece = storage.buffers[k]
        else:
            piece = _redistribute.region_value(storage, x.mode, region, device)
        out = xp.gradient(piece, spacing, axis=axis, edge_order=edge_order)
        step = (slice(None),) * axis + (slice(kept.start - low, kept[-1] - low + 1, kept.step),)
        return out[step]

    return Chunks.generate(layout, backend, make, dtype)


@implements(np.gradient)
def _gradient(f, *varargs, axis=None, edge_order=1):
    """``numpy.gradient`` with uniform spacings (none, one scalar, or one per axis), per
    chunk from a halo of one element each side along each axis: only those move.
    Coordinate arrays go to the fallback.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([1.0, 4.0, 9.0, 16.0]))
    >>> with mdarray.options(fallback="raise"):
    ...     np.gradient(x).get()
    array([3., 4., 6., 7.])
    """
    args = {"axis": axis, "edge_order": edge_order}
    uniform = all(np.ndim(h) == 0 and not isinstance(h, DistArray) for h in varargs)
    if not isinstance(f, DistArray) or f.ndim == 0 or not uniform or edge_order not in (1, 2):
        return fallback(np.gradient, (f, *varargs), args, "numpy.gradient")
    axes = normalize_axis_tuple(range(f.ndim) if axis is None else axis, f.ndim)
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    # NumPy's output dtype (integers give float64) and its errors for this dtype.
    dtype = np.gradient(np.zeros(3, f.dtype), edge_order=edge_order).dtype
    x = f.change_mode(REPLICA) if f.mode.is_partial else f
    outs = []
    for ax, h in zip(axes, spacings):
        if x.shape[ax] < edge_order + 1:
            raise ValueError(
                "Shape of array too small to calculate a numerical gradient, "
                "at least (edge_order + 1) elements are required."
            )
        outs.append(wrap(_gradient_chunks(x, ax, h, edge_order, dtype), REPLICA))
    return outs[0] if len(axes) == 1 else tuple(outs)
