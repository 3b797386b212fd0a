"""NumPy's neighbourhood functions without gathering: partition and argpartition.

partition and argpartition run per chunk along an axis that no chunk splits: nothing
moves. Along a split axis the array is first resharded so that the axis is whole in
every chunk (one movement, as sort does), then each chunk partitions its own lanes.
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ._array import DistArray, wrap
from ._fallback import fallback
from ._layout import Layout
from ._manipulation_functions import reshape
from ._modes import REPLICA
from ._registry import implements
from ._sorting_functions import splits


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
