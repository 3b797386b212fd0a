"""Points by integer arrays on an array's leading axes: ``x[rows, cols]`` and
``x[rows, cols] = value`` (``x[i, j, ...]``, the index arrays broadcast together, then
full slices).

The points' flat positions are worked out on the host (checked as NumPy checks them); a
read is `take_rows` of x with those axes as one (only the requested rows move), a write a
mask assignment over those axes (`mask_setitem`), the last value where a point repeats.
"""

from __future__ import annotations

import typing

import numpy as np

from mdarray._array.array import DistArray
from mdarray._movement.redistribute import to_host

from .advanced import host_indices, mask_setitem, take_rows
from .index_plans import is_advanced


def point_arrays(x: DistArray, key) -> tuple | None:
    """The index arrays of `key` where it is two or more of them on x's first axes, then
    only full slices and at most one Ellipsis (``x[rows, cols]``); else None."""
    items = key if isinstance(key, tuple) else (key,)
    k = 0
    while k < len(items) and is_advanced(items[k]):
        k += 1
    rest = [item for item in items[k:] if item is not Ellipsis]
    if k < 2 or k + len(rest) > x.ndim or len(items) - k - len(rest) > 1:
        return None
    if any(item != slice(None) for item in rest):
        return None
    return items[:k]


def take_points(x: DistArray, arrays: tuple) -> DistArray | None:
    """``x[i0, i1, ...]`` for integer arrays on x's first axes, broadcast together: their
    flat positions on the host (checked as NumPy checks them), then `take_rows` of x with
    those axes as one; None where an array holds booleans."""
    points = _flat_points(x, arrays)
    if points is None:
        return None
    flat, shape = points
    k = len(arrays)
    rows = x.reshape((int(np.prod(x.shape[:k])), *x.shape[k:]))
    return take_rows(rows, flat, 0).reshape((*shape, *x.shape[k:]))


def _flat_points(x: DistArray, arrays: tuple) -> tuple | None:
    """``(flat positions, broadcast shape)`` of integer index arrays on x's first axes,
    on the host, checked as NumPy checks them; None where an array holds booleans."""
    hosts = []
    for a in arrays:
        host = to_host(a.storage, a.mode) if isinstance(a, DistArray) else np.asarray(a)
        if host.dtype.kind == "b":
            return None
        hosts.append(host.astype(np.intp) if not host.size else host)
    try:
        shape = np.broadcast_shapes(*(h.shape for h in hosts))
    except ValueError:
        shapes = " ".join(str(h.shape) for h in hosts)
        raise IndexError(
            f"shape mismatch: indexing arrays could not be broadcast together with shapes {shapes}"
        ) from None
    positions = tuple(
        host_indices(np.broadcast_to(h, shape).ravel(), n, axis)
        for axis, (h, n) in enumerate(zip(hosts, x.shape))
    )
    flat = (
        np.ravel_multi_index(positions, x.shape[: len(hosts)])
        if positions[0].size
        else positions[0]
    )
    return flat, shape


def put_points(x: DistArray, arrays: tuple, value) -> bool:
    """``x[i0, i1, ...] = value`` for integer arrays on x's first axes (`take_points`'
    key) as a mask assignment (`mask_setitem`): the points marked in a host mask of those
    axes, the value's entries in the points' row-major order, the last one where a point
    repeats (NumPy's rule). False where an array holds booleans."""
    points = _flat_points(x, arrays)
    if points is None:
        return False
    flat, shape = points
    k = len(arrays)
    rest = x.shape[k:]
    # The last occurrence of each point, points in ascending order.
    unique, last = np.unique(flat[::-1], return_index=True)
    chosen = flat.size - 1 - last
    marks = np.zeros(int(np.prod(x.shape[:k])), dtype=bool)
    marks[unique] = True
    mask = marks.reshape(x.shape[:k])
    if np.ndim(value) == 0:
        mask_setitem(x, mask, value)
        return True
    full = (*shape, *rest)
    np.broadcast_shapes(np.shape(value), full)  # NumPy's error where it does not fit
    if isinstance(value, DistArray):
        spread = typing.cast(DistArray, np.broadcast_to(value, full))  # a DistArray's own view
        values = take_rows(spread.reshape((int(np.prod(shape)), *rest)), chosen.astype(np.intp), 0)
    else:
        values = np.broadcast_to(np.asarray(value), full).reshape((-1, *rest))[chosen]
    mask_setitem(x, mask, values)
    return True
