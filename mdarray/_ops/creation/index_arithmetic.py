"""NumPy's functions of integer positions and bits, native: ``unravel_index``,
``ravel_multi_index``, ``lexsort``, ``digitize``, ``packbits``, ``unpackbits``.

Each is elementwise integer arithmetic (divisions, remainders, products, shifts) or a
composition of the native sort (``argsort`` with ``kind="stable"``,
``take_along_axis``), run where the chunks lie; ``digitize`` runs the backend's own on
each chunk against the bins (`with_tables`). NumPy's own checks of
shapes, dtypes and arguments run first on empty stand-ins (its errors, its words); the
bounds checks read two scalars (the extremes).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from mdarray._array.array import DistArray, in_mode, wrap
from mdarray._core.modes import REPLICA
from mdarray._core.registry import implements
from mdarray._ops.engine.fallback import distarrays_in, fallback

from .creation_functions import asarray


def _like(host, like: DistArray) -> DistArray:
    return asarray(np.asarray(host), device=like.device)


def _dims(shape) -> tuple[int, ...]:
    return (operator.index(shape),) if np.ndim(shape) == 0 else tuple(shape)


def _first_bad(values: DistArray, bad: DistArray) -> int:
    """The first element of `values` (flattened) where `bad` holds."""
    position = int(np.flatnonzero(bad)[0].get())
    return int(np.ravel(values)[position].get())


@implements(np.unravel_index, spmd=True)
def _unravel_index(indices, shape, order="C"):
    """``numpy.unravel_index``: the coordinates by remainders and quotients, last axis
    first (first axis first with ``order="F"``)."""
    if not isinstance(indices, DistArray):
        return fallback(np.unravel_index, (indices, shape), {"order": order}, "numpy.unravel_index")
    np.unravel_index(np.zeros(0, indices.dtype), shape, order=order)  # NumPy's own checks
    dims = _dims(shape)
    size = int(np.prod(dims, dtype=np.int64))
    flat = indices.astype(np.intp)
    if flat.size:
        bad = (flat < 0) | (flat >= size)
        if bool(np.any(bad)):
            value = _first_bad(flat, bad)
            raise ValueError(f"index {value} is out of bounds for array with size {size}")
    coordinates: list = [None] * len(dims)
    axes = range(len(dims) - 1, -1, -1) if order == "C" else range(len(dims))
    rest = flat
    for axis in axes:
        coordinates[axis] = rest % dims[axis] if dims[axis] else rest
        rest = rest // dims[axis] if dims[axis] else rest
    return tuple(coordinates)


@implements(np.ravel_multi_index, spmd=True)
def _ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """``numpy.ravel_multi_index``: the flat position, the sum of each coordinate times
    its axis' stride (out-of-range coordinates raise, wrap or clip, per axis)."""
    like = distarrays_in(list(multi_index))
    if not like or not isinstance(multi_index, (tuple, list)):
        kwargs = {"mode": mode, "order": order}
        return fallback(
            np.ravel_multi_index, (multi_index, dims), kwargs, "numpy.ravel_multi_index"
        )
    arrays = [a if isinstance(a, DistArray) else _like(a, like[0]) for a in multi_index]
    stand_ins = tuple(np.zeros(0, a.dtype) for a in arrays)
    np.ravel_multi_index(stand_ins, dims, mode=mode, order=order)  # NumPy's own checks
    dims = _dims(dims)
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    strides = [1] * len(dims)
    axes = list(range(len(dims) - 1, -1, -1)) if order == "C" else list(range(len(dims)))
    stride = 1
    for axis in axes:
        strides[axis] = stride
        stride *= dims[axis]
    coordinates: list[Any] = []
    for given, n, how in zip(arrays, dims, modes):
        a: Any = given.astype(np.intp)
        if how == "raise":
            if a.size and bool(np.any((a < 0) | (a >= n))):
                raise ValueError("invalid entry in coordinates array")
        elif how == "wrap":
            a = a % n if n else a
        else:
            a = np.clip(a, 0, max(n - 1, 0))
        coordinates.append(a)
    total = _like(np.zeros(shape, np.intp), like[0])
    for a, s in zip(coordinates, strides):
        total = total + a * s
    return total


@implements(np.lexsort, spmd=True)
def _lexsort(keys, axis=-1):
    """``numpy.lexsort``: a stable argsort by the first key, then by each next key in the
    order found so far (the last key is the primary one)."""
    if isinstance(keys, DistArray):
        if keys.ndim == 0:
            return fallback(np.lexsort, (keys,), {"axis": axis}, "numpy.lexsort")
        keys = [keys] if keys.ndim == 1 else [keys[k] for k in range(keys.shape[0])]
    keys = list(keys)
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    like = distarrays_in(keys)[0]
    keys = [k if isinstance(k, DistArray) else _like(k, like) for k in keys]
    if any(k.shape != keys[0].shape for k in keys):
        raise ValueError("all keys need to be the same shape")
    if keys[0].ndim == 0:
        return fallback(np.lexsort, (keys,), {"axis": axis}, "numpy.lexsort")
    axis = np.lib.array_utils.normalize_axis_index(operator.index(axis), keys[0].ndim)
    order = np.argsort(keys[0], axis=axis, kind="stable")
    for key in keys[1:]:
        by = np.argsort(np.take_along_axis(key, order, axis=axis), axis=axis, kind="stable")
        order = np.take_along_axis(order, by, axis=axis)
    return order.astype(np.intp, copy=False)


def with_tables(x: DistArray, tables: tuple, kernel, dtype) -> DistArray:
    """``kernel(xp, chunk, *tables)`` on each chunk of `x` (made REPLICA), the small host
    `tables` (bins, edges, data points, which NumPy reads whole too) copied once to each
    device that holds a chunk: only they move."""
    x = in_mode(x, REPLICA)
    backend = x.storage.backend
    copies: dict = {}

    def run(chunk, device):
        if device not in copies:
            copies[device] = tuple(backend.from_host(t, device) for t in tables)
        return backend.xp.asarray(kernel(backend.xp, chunk, *copies[device]))

    return wrap(x.storage.map(run, x.layout.chunk_devices, dtype=np.dtype(dtype)))


@implements(np.digitize, spmd=True)
def _digitize(x, bins, right=False):
    """``numpy.digitize``: the backend's ``digitize`` on each chunk of `x`, the bins
    (read whole, as NumPy reads them) copied to each device."""
    like = distarrays_in([x, bins])[0]
    x = x if isinstance(x, DistArray) else _like(x, like)
    edges = bins.get() if isinstance(bins, DistArray) else np.asarray(bins)
    # NumPy's checks (complex x, the bins' rank and order) and dtype, on no elements.
    dtype = np.digitize(np.zeros(0, x.dtype), edges, right).dtype
    return with_tables(x, (edges,), lambda xp, chunk, e: xp.digitize(chunk, e, right), dtype)


def _bit_order(bitorder) -> str:
    if bitorder is None:
        return "big"
    if not isinstance(bitorder, str) or bitorder.lower()[:1] not in ("b", "l"):
        raise ValueError("'order' must be either 'little' or 'big'")
    return "big" if bitorder.lower()[:1] == "b" else "little"


@implements(np.packbits, spmd=True)
def _packbits(a, /, axis=None, bitorder="big"):
    """``numpy.packbits``: each run of 8 elements along `axis` (padded with zeros) as one
    byte: the nonzeros weighted by their bit's value and summed."""
    if not isinstance(a, DistArray):
        kwargs = {"axis": axis, "bitorder": bitorder}
        return fallback(np.packbits, (a,), kwargs, "numpy.packbits")
    np.packbits(np.zeros((0,) * a.ndim, a.dtype), axis=axis, bitorder=bitorder)
    order = _bit_order(bitorder)
    bits = np.not_equal(a, 0).astype(np.uint8)
    if axis is None:
        bits, axis = np.ravel(bits), 0
    axis = np.lib.array_utils.normalize_axis_index(operator.index(axis), bits.ndim)
    n = bits.shape[axis]
    extra = -n % 8
    if extra:
        widths = [(0, 0)] * bits.ndim
        widths[axis] = (0, extra)
        bits = np.pad(bits, widths)
    shape = (*bits.shape[:axis], (n + extra) // 8, 8, *bits.shape[axis + 1 :])
    weights = np.left_shift(np.uint8(1), np.arange(8, dtype=np.uint8))
    weights = weights[::-1] if order == "big" else weights
    weights = weights.reshape((8,) + (1,) * (bits.ndim - axis - 1))
    return np.sum(np.reshape(bits, shape) * weights, axis=axis + 1, dtype=np.uint8)


@implements(np.unpackbits, spmd=True)
def _unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """``numpy.unpackbits``: each byte along `axis` as its 8 bits (shifts and a mask),
    cut or padded with zeros to `count`."""
    if not isinstance(a, DistArray):
        kwargs = {"axis": axis, "count": count, "bitorder": bitorder}
        return fallback(np.unpackbits, (a,), kwargs, "numpy.unpackbits")
    probe_shape = (0,) * a.ndim
    np.unpackbits(np.zeros(probe_shape, a.dtype), axis=axis, bitorder=bitorder)
    order = _bit_order(bitorder)
    if axis is None:
        a, axis = np.ravel(a), 0
    axis = np.lib.array_utils.normalize_axis_index(operator.index(axis), a.ndim)
    n = a.shape[axis]
    if count is not None:  # NumPy's check of `count` against the axis' bits
        np.unpackbits(np.zeros(n, np.uint8), count=count)
    shifts = np.arange(8, dtype=np.uint8)
    shifts = shifts[::-1] if order == "big" else shifts
    shifts = shifts.reshape((8,) + (1,) * (a.ndim - axis - 1))
    bits = np.bitwise_and(np.right_shift(np.expand_dims(a, axis + 1), shifts), np.uint8(1))
    bits = np.reshape(bits, (*a.shape[:axis], 8 * n, *a.shape[axis + 1 :]))
    if count is None:
        return bits
    count = operator.index(count)
    keep = count if count >= 0 else 8 * n + count
    index = [slice(None)] * a.ndim
    if keep <= 8 * n:
        index[axis] = slice(0, keep)
        return bits[tuple(index)]
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, keep - 8 * n)
    return np.pad(bits, widths)
