"""NumPy's functions that build an array out of others' pieces, native: ``insert``,
``delete``, ``trim_zeros``, ``block``, ``kron``.

``insert`` and ``delete`` work out on the host, from the axis' length alone, which
position of the result comes from where (NumPy's own ``insert`` and ``delete`` on the
positions ``0 .. n-1``: its rules and errors), then take those positions of the array
joined with the new values (``concatenate`` and ``take`` along the axis: only moved
rows move). ``trim_zeros`` reads, per trimmed axis, which positions hold a nonzero (one
reduction over the other axes) and returns the slice. ``block`` is nested
``concatenate``; ``kron`` one broadcast product of the two operands' interleaved axes.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from mdarray._array.array import DistArray
from mdarray._core.registry import implements
from mdarray._ops.creation.creation_functions import asarray
from mdarray._ops.engine.fallback import distarrays_in, fallback


def _host(value):
    return value.get() if isinstance(value, DistArray) else value


def _axis_of(arr: DistArray, axis) -> tuple[Any, int]:
    if axis is None:
        return np.ravel(arr), 0
    return arr, np.lib.array_utils.normalize_axis_index(operator.index(axis), arr.ndim)


def _positions(func, axis: int, *args) -> np.ndarray:
    """NumPy's `func` on the axis' positions, its index errors naming `axis`."""
    try:
        return func(*args)
    except IndexError as error:
        raise IndexError(str(error).replace("for axis 0", f"for axis {axis}")) from None


@implements(np.delete, spmd=True)
def _delete(arr, obj, axis=None):
    """``numpy.delete``: the positions NumPy keeps (its ``delete`` of the axis'
    positions), taken along the axis."""
    if not isinstance(arr, DistArray):
        return fallback(np.delete, (arr, obj), {"axis": axis}, "numpy.delete")
    arr, axis = _axis_of(arr, axis)
    kept = _positions(np.delete, axis, np.arange(arr.shape[axis]), _host(obj))
    return np.take(arr, kept, axis=axis)


@implements(np.insert, spmd=True)
def _insert(arr, obj, values, axis=None):
    """``numpy.insert``: `values` (cast to arr's dtype, shaped as NumPy shapes them)
    joined after `arr` along the axis, then the positions NumPy's ``insert`` gives
    taken in the result's order."""
    if not isinstance(arr, DistArray):
        return fallback(np.insert, (arr, obj, values), {"axis": axis}, "numpy.insert")
    arr, axis = _axis_of(arr, axis)
    where = _host(obj)
    index = np.asarray(where) if not isinstance(where, slice) else None
    if index is not None and index.dtype == np.bool_:
        kwargs = {"axis": axis}
        return fallback(np.insert, (arr, obj, values), kwargs, "numpy.insert")
    new: Any
    if isinstance(values, DistArray):
        new = values.astype(arr.dtype)
        new = np.reshape(new, (1,) * (arr.ndim - new.ndim) + new.shape)
    else:
        new = np.array(values, dtype=arr.dtype, ndmin=arr.ndim)
    if index is not None and index.ndim == 0:
        new = np.moveaxis(new, 0, axis)
    n = arr.shape[axis]
    count = new.shape[axis] if index is not None and index.size == 1 else None
    if count is None:
        count = len(np.arange(n)[where]) if index is None else index.size
    shape = (*arr.shape[:axis], count, *arr.shape[axis + 1 :])
    new = np.broadcast_to(new, shape)
    # NumPy's rules (and errors) for the positions, on the positions alone.
    order = _positions(np.insert, axis, np.arange(n), where, np.arange(n, n + count))
    if not isinstance(new, DistArray):
        new = asarray(np.ascontiguousarray(new), device=arr.device)
    return np.take(np.concatenate((arr, new), axis=axis), order, axis=axis)


@implements(np.trim_zeros, spmd=True)
def _trim_zeros(filt, trim="fb", axis=None):
    """``numpy.trim_zeros``: per trimmed axis the first and last position with a
    nonzero (one ``any`` over the other axes), and the slice between them."""
    if filt.ndim == 0:
        return fallback(np.trim_zeros, (filt,), {"trim": trim, "axis": axis}, "numpy.trim_zeros")
    np.trim_zeros(np.ones((1,) * filt.ndim), trim, axis)  # NumPy's errors for trim and axis
    trim = trim.lower()
    if axis is None:
        axes = tuple(range(filt.ndim))
    else:
        axes = np.lib.array_utils.normalize_axis_tuple(axis, filt.ndim, argname="axis")
    if not axes:
        return filt
    found: list[tuple[int, int]] = []
    for k in range(filt.ndim):
        others = tuple(j for j in range(filt.ndim) if j != k)
        held: Any = np.flatnonzero(np.any(filt, axis=others) if others else filt)
        if held.size == 0:
            break
        found.append((int(held[0].get()), int(held[-1].get()) + 1))
    spans = found if len(found) == filt.ndim else None
    index = []
    for k in range(filt.ndim):
        if k not in axes:
            index.append(slice(None))
        elif spans is None:
            index.append(slice(0, 0))
        else:
            start, stop = spans[k]
            index.append(slice(start if "f" in trim else None, stop if "b" in trim else None))
    return filt[tuple(index)]


def _depth_and_leaves(arrays, index: tuple = ()) -> tuple[int, list]:
    """The nesting depth of `arrays` and its leaves with their positions, checked as
    NumPy's ``block`` checks them."""
    if type(arrays) is tuple:
        raise TypeError(
            f"{_place(index)} is a tuple. Only lists can be used to arrange blocks, and "
            "np.block does not allow implicit conversion from tuple to ndarray."
        )
    if type(arrays) is not list:
        return 0, [(index, arrays)]
    if len(arrays) == 0:
        raise ValueError(f"List at {_place(index)} cannot be empty")
    depths = []
    leaves: list = []
    for k, item in enumerate(arrays):
        depth, found = _depth_and_leaves(item, (*index, k))
        depths.append((depth, found[0][0]))
        leaves += found
    first = depths[0][0]
    for depth, at in depths[1:]:
        if depth != first:
            raise ValueError(
                f"List depths are mismatched. First element was at depth {first + len(index) + 1}, "
                f"but there is an element at depth {depth + len(index) + 1} ({_place(at)})"
            )
    return first + 1, leaves


def _place(index: tuple) -> str:
    return "arrays" + "".join(f"[{k}]" for k in index)


@implements(np.block, spmd=True)
def _block(arrays):
    """``numpy.block``: the leaves given at least as many axes as the nesting is deep
    (and as the deepest leaf), joined along the last axis innermost, the next one
    outward, and so on."""
    depth, leaves = _depth_and_leaves(arrays)
    like = distarrays_in([leaf for _, leaf in leaves])
    if not like:
        return fallback(np.block, (arrays,), {}, "numpy.block")
    ndim = max([depth, *(np.ndim(leaf) for _, leaf in leaves)])

    def leaf_of(value):
        if isinstance(value, DistArray):
            return np.reshape(value, (1,) * (ndim - value.ndim) + value.shape)
        return asarray(np.array(value, ndmin=ndim), device=like[0].device)

    def joined(item, level: int):
        if type(item) is not list:
            return leaf_of(item)
        parts = [joined(part, level + 1) for part in item]
        return np.concatenate(parts, axis=-(depth - level))

    result = joined(arrays, 0)
    return result.copy() if depth == 0 else result


@implements(np.kron, spmd=True)
def _kron(a, b):
    """``numpy.kron``: ``a`` with a new axis after each of its axes times ``b`` with one
    before each of its own (the shorter padded with leading axes), reshaped."""
    like = distarrays_in([a, b])[0]
    a = a if isinstance(a, DistArray) else asarray(np.asarray(a), device=like.device)
    b = b if isinstance(b, DistArray) else asarray(np.asarray(b), device=like.device)
    if a.ndim == 0 or b.ndim == 0:
        return np.multiply(a, b)
    ndim = max(a.ndim, b.ndim)
    a = np.reshape(a, (1,) * (ndim - a.ndim) + a.shape)
    b = np.reshape(b, (1,) * (ndim - b.ndim) + b.shape)
    spread_a = np.reshape(a, tuple(n for side in a.shape for n in (side, 1)))
    spread_b = np.reshape(b, tuple(n for side in b.shape for n in (1, side)))
    shape = tuple(p * q for p, q in zip(a.shape, b.shape))
    return np.reshape(spread_a * spread_b, shape)
