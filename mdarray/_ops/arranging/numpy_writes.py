"""NumPy's functions that write into their first argument, native: ``copyto``, ``put``,
``putmask``, ``place``, ``fill_diagonal``, ``put_along_axis``.

Each checks everything NumPy checks (shapes, index bounds, casts: the casts on 0-d or
one-element stand-ins of the operands' dtypes, so the errors are NumPy's own) before
it writes, then writes once through the DistArray's own assignment (``a[...] = value``,
``a[mask] = value`` or ``a[rows, cols] = value``), which changes nothing where it fails:
a failed call leaves the array as it was. Positions given as indices are read on the host
(as indexing reads them); the written values stay DistArrays where they are ones, and
move only to the chunks that hold the written elements. ``copyto`` and ``putmask``
(``where`` and a whole assignment) run across processes too; the others write points or
masks, which have no multi-process implementation yet, so an SPMD run takes the fallback.
"""

from __future__ import annotations

import operator

import numpy as np

from mdarray._array.array import DistArray
from mdarray._core.registry import implements
from mdarray._exec.operands import stand_in
from mdarray._ops.engine.fallback import fallback


def _host(value) -> np.ndarray:
    return value.get() if isinstance(value, DistArray) else np.asarray(value)


def _in_dtype(values, dtype: np.dtype):
    """`values` as NumPy's writers convert them: a DistArray cast (unsafe), anything
    else by ``np.asarray(values, dtype)`` (a Python integer out of range raises)."""
    if isinstance(values, DistArray):
        return values.astype(dtype, copy=False)
    return np.asarray(values, dtype=dtype)


def _write_flat(a: DistArray, positions: np.ndarray, values) -> None:
    """``a.flat[positions] = values``: `positions` host integers in range, `values` of
    their length in a's dtype (a DistArray or a NumPy array); the last write of a
    repeated position wins, as in NumPy."""
    if positions.size == 0:
        return
    if a.ndim == 0:
        a[...] = values[-1]
    elif a.ndim == 1:
        a[positions] = values
    else:
        a[np.unravel_index(positions, a.shape)] = values


def _cycled(values, n: int):
    """The flattened `values` repeated (or cut) to length `n`."""
    if isinstance(values, DistArray):
        return np.resize(values, (n,))
    return np.resize(np.ravel(values), (n,))


@implements(np.copyto, spmd=True)
def _copyto(dst, src, casting="same_kind", where=True):
    """``numpy.copyto``: `src` cast to dst's dtype under `casting`, written where `where`
    holds (``where(where, src, dst)`` otherwise), by one assignment."""
    if not isinstance(dst, DistArray):
        kwargs = {"casting": casting, "where": where}
        return fallback(np.copyto, (dst, src), kwargs, "numpy.copyto")
    if isinstance(src, (list, tuple)):
        src = np.asarray(src)
    if isinstance(where, (list, tuple)):
        where = np.asarray(where)
    for name, operand in (("input array", src), ("where mask", where)):
        shape = np.shape(operand)
        if np.broadcast_shapes(shape, dst.shape) != dst.shape:
            raise ValueError(
                f"could not broadcast {name} from shape {shape} into shape {dst.shape}"
            )
    # NumPy's own cast checks, on one-element stand-ins of the operands' dimensions (a
    # Python scalar stays one: it is weak).
    probe = stand_in(dst, one=True)
    np.copyto(probe, stand_in(src, one=True), casting=casting, where=stand_in(where, one=True))
    if where is True or (not isinstance(where, DistArray) and np.all(where)):
        dst[...] = _in_dtype(src, dst.dtype)
        return None
    if not isinstance(where, DistArray) and not np.any(where):
        return None
    dst[...] = np.where(where, _in_dtype(src, dst.dtype), dst)
    return None


@implements(np.put)
def _put(a, ind, v, mode="raise"):
    """``numpy.put``: ``a.flat[ind] = v``, `v` repeated to the length of `ind`; indices
    out of range raise (``mode="raise"``), wrap or clip as NumPy's."""
    if not isinstance(a, DistArray):
        return fallback(np.put, (a, ind, v), {"mode": mode}, "numpy.put")
    if mode not in ("raise", "wrap", "clip"):
        np.put(np.zeros(1), [0], 0, mode=mode)  # NumPy's error for the mode
    indices = np.asarray(_host(ind)).astype(np.intp).ravel()
    values = v if isinstance(v, DistArray) else np.asarray(v)
    if indices.size == 0 or values.size == 0:
        return None
    if a.size == 0:
        raise IndexError("cannot replace elements of an empty array")
    if mode == "raise":
        wrong = (indices < -a.size) | (indices >= a.size)
        if wrong.any():
            bad = int(indices[wrong][0])
            raise IndexError(f"index {bad} is out of bounds for axis 0 with size {a.size}")
        positions = np.where(indices < 0, indices + a.size, indices)
    elif mode == "wrap":
        positions = np.mod(indices, a.size)
    else:
        positions = np.clip(indices, 0, a.size - 1)
    _write_flat(a, positions, _cycled(_in_dtype(v, a.dtype), positions.size))
    return None


@implements(np.putmask, spmd=True)
def _putmask(a, /, mask, values):
    """``numpy.putmask``: where `mask` holds, element n of the flattened array becomes
    ``values.flat[n % values.size]``."""
    if not isinstance(a, DistArray):
        return fallback(np.putmask, (a, mask, values), {}, "numpy.putmask")
    if np.size(mask) != a.size:
        raise ValueError("putmask: mask and data must be the same size")
    mask = np.reshape(mask if isinstance(mask, DistArray) else np.asarray(mask), a.shape)
    cast = _in_dtype(values, a.dtype)
    if cast.size == 0:
        return None
    whole = np.reshape(_cycled(cast, a.size), a.shape)
    a[...] = np.where(mask.astype(bool, copy=False), whole, a)
    return None


@implements(np.place)
def _place(arr, mask, vals):
    """``numpy.place``: the elements where `mask` holds take `vals` in order, repeated
    as needed."""
    if not isinstance(arr, DistArray):
        return fallback(np.place, (arr, mask, vals), {}, "numpy.place")
    if np.size(mask) != arr.size:
        raise ValueError("place: mask and data must be the same size")
    mask = np.reshape(mask if isinstance(mask, DistArray) else np.asarray(mask), arr.shape)
    mask = mask.astype(bool, copy=False)
    count = int(np.count_nonzero(mask))
    cast = _in_dtype(vals, arr.dtype)
    if cast.size == 0:
        if count:
            raise ValueError("Cannot insert from an empty array!")
        return None
    if count:
        arr[mask] = _cycled(cast, count)
    return None


@implements(np.fill_diagonal)
def _fill_diagonal(a, val, wrap=False):
    """``numpy.fill_diagonal``: the main diagonal (of a tall matrix, with `wrap` the
    diagonals that restart below it) takes `val`, repeated as needed."""
    if not isinstance(a, DistArray):
        return fallback(np.fill_diagonal, (a, val), {"wrap": wrap}, "numpy.fill_diagonal")
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else min(a.size, a.shape[1] * a.shape[1])
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.sum(np.cumprod(a.shape[:-1])))
        end = a.size
    positions = np.arange(0, end, step, dtype=np.intp)
    cast = _in_dtype(val, a.dtype)
    if cast.size == 0 or positions.size == 0:
        return None
    _write_flat(a, positions, _cycled(cast, positions.size))
    return None


def _flat_rule() -> str:
    """How NumPy's ``put_along_axis(..., axis=None)`` writes, read from NumPy at import:
    ``"put"`` through ``arr.flat``, values repeated or cut to the indices' length, as
    `put` (NumPy 2.3); else values broadcast against the indices, ``"through"`` the array
    or into a flattened ``"copy"``, so the array stays as it was (NumPy 2.4)."""
    probe = np.zeros(3)
    try:
        np.put_along_axis(probe, np.arange(3), np.ones(2), None)
    except ValueError:
        probe = np.zeros(1)
        np.put_along_axis(probe, np.zeros(1, np.intp), 1.0, None)
        return "through" if probe[0] else "copy"
    return "put"


_FLAT_RULE = _flat_rule()


@implements(np.put_along_axis)
def _put_along_axis(arr, indices, values, axis):
    """``numpy.put_along_axis``: ``arr[i0, ..., indices, ..., iN] = values`` with the other
    axes' positions broadcast against `indices` (the flattened array without `axis`)."""
    if not isinstance(arr, DistArray):
        args = (arr, indices, values, axis)
        return fallback(np.put_along_axis, args, {}, "numpy.put_along_axis")
    host = _host(indices)
    flat = axis is None
    shape: tuple[int, ...]
    if flat:
        if host.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        shape, axis = (arr.size,), 0
    else:
        shape = arr.shape
        axis = np.lib.array_utils.normalize_axis_index(operator.index(axis), arr.ndim)
    if not np.issubdtype(host.dtype, np.integer):
        raise IndexError("`indices` must be an integer array")
    if host.ndim != len(shape):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    size = shape[axis]
    wrong = (host < -size) | (host >= size)
    if wrong.any():
        bad = int(host[wrong][0])
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {size}")
    along = np.where(host < 0, host + size, host).astype(np.intp)
    grids = [
        along
        if d == axis
        else np.arange(n, dtype=np.intp).reshape([-1 if e == d else 1 for e in range(len(shape))])
        for d, n in enumerate(shape)
    ]
    result_shape = np.broadcast_shapes(*(g.shape for g in grids))
    if flat and _FLAT_RULE == "put":
        return _put(arr, along, values)
    cast = _in_dtype(values, arr.dtype)
    if np.broadcast_shapes(np.shape(cast), result_shape) != result_shape:
        raise ValueError(
            f"shape mismatch: value array of shape {np.shape(cast)} could not be broadcast "
            f"to indexing result of shape {result_shape}"
        )
    if flat and _FLAT_RULE == "copy":
        return None  # NumPy wrote into a flattened copy: the array is unchanged
    grid = tuple(np.broadcast_to(g, result_shape) for g in grids)
    positions = np.ravel_multi_index(grid, shape).ravel()
    _write_flat(arr, positions, np.ravel(np.broadcast_to(cast, result_shape)))
    return None
