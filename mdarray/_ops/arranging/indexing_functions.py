"""Indexing functions: take and take_along_axis.

``take`` with a 1-D integer index along one axis runs natively (only the requested rows
move, see `_advanced_indexing`), ``take_along_axis`` chunk by chunk along an axis no
chunk splits (see `_along_axis`), in a run of several processes too; the other forms
gather the operands to the host, pick with NumPy and distribute the result again, under
the fallback policy (`mdarray.options`). ``numpy.take``'s ``out=`` is written back into the
DistArray, in its layout and mode, as NumPy would have changed it.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from mdarray._array.array import DistArray, wrap
from mdarray._core.registry import implements
from mdarray._exec.chunkwise import write_out
from mdarray._layouts.layout import Layout
from mdarray._ops.creation.creation_functions import asarray
from mdarray._ops.engine.fallback import fallback, gathered
from mdarray._ops.indexing.advanced import host_indices, is_int_vector, take_rows
from mdarray._ops.indexing.along_axis import take_along_axis_chunkwise
from mdarray._runtime.config import check_fallback
from mdarray._storage.chunks import Chunks


@implements(np.take, spmd=True)
def _take(a, indices, axis=None, out=None, mode="raise"):
    """``numpy.take``: a 1-D integer index along an axis (or of a 1-D array) without
    ``out=`` runs natively (`_advanced_indexing.take_rows`: only the requested rows
    move); the rest through the fallback policy."""
    native = (
        out is None
        and mode == "raise"
        and isinstance(a, DistArray)
        and a.ndim > 0
        and is_int_vector(indices)
        and (axis is not None or a.ndim == 1)
    )
    if native:
        axis = normalize_axis_index(0 if axis is None else axis, a.ndim)
        if a.size == 0:  # NumPy's checks (none for an empty result) on an empty host copy
            index = indices.get() if isinstance(indices, DistArray) else indices
            empty = np.take(np.empty(a.shape, a.dtype), index, axis=axis)
            return asarray(empty, device=a.device)
        return take_rows(a, host_indices(indices, a.shape[axis], axis), axis)
    kwargs = {"axis": axis, "mode": mode}
    if out is None:
        return fallback(np.take, (a, indices), kwargs, "numpy.take")
    if not isinstance(out, DistArray):
        fallback(np.take, (a, indices), {**kwargs, "out": out}, "numpy.take")
        return out
    operands = [op for op in (a, indices, out) if isinstance(op, DistArray)]
    check_fallback("numpy.take", sum(op.nbytes for op in operands))
    # NumPy checks and writes a host copy of `out`; its new value is then written back.
    host = out.get()
    np.take(gathered(a), gathered(indices), out=host, **kwargs)
    write_out(out, wrap(Chunks.from_host(host, out.layout, out.storage.backend)))
    return out


def take(x: DistArray, indices: Any, /, *, axis: int | None = None) -> DistArray:
    """The elements of `x` at `indices` (a 1-D integer array; negative ones count from
    the end) along `axis` (array API). Without `axis`, `x` is flattened first, as in
    NumPy.

    Parameters
    ----------
    x : DistArray
        The array to pick from.
    indices : DistArray or array_like
        1-D integer indices along `axis`.
    axis : int, optional
        The axis to pick along (required where `x` has more than one axis, by the
        standard; NumPy flattens).

    Returns
    -------
    DistArray
        `x`'s shape with `axis` replaced by the length of `indices`.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.arange(10, 16).reshape(2, 3))
    >>> with mdarray.options(fallback="raise"):  # only the requested columns move
    ...     mdarray.take(x, mdarray.asarray(np.array([2, -3])), axis=1).get()
    array([[12, 10],
           [15, 13]])
    """
    if not isinstance(indices, DistArray):
        x = asarray(x)
    return np.take(x, indices, axis=axis)


@implements(np.take_along_axis, spmd=True)
def _take_along_axis(arr, indices, axis=-1):
    """``numpy.take_along_axis`` per chunk (`take_along_axis_chunkwise`) where `arr` is a
    DistArray and `indices` an integer DistArray or NumPy array of arr's number of axes,
    the axes other than `axis` broadcast against each other (as the array API's
    ``take_along_axis`` has them); nothing selected gives an empty array. The rest
    (``axis=None``, indices into an empty axis, shapes that do not broadcast) through the
    fallback policy, where NumPy's errors come from."""
    shapes = None
    if (
        isinstance(arr, DistArray)
        and isinstance(indices, (DistArray, np.ndarray))
        and axis is not None
        and arr.ndim > 0
        and indices.ndim == arr.ndim
        and indices.dtype.kind in "iu"
    ):
        axis = normalize_axis_index(axis, arr.ndim)
        shapes = _along_shapes(arr.shape, indices.shape, axis)
    if shapes is not None:
        arr_shape, out_shape = shapes
        if not int(np.prod(out_shape)):
            layout = Layout.block(out_shape, devices=arr.layout.devices)
            return wrap(Chunks.empty(layout, arr.dtype, arr.storage.backend))
        if arr_shape[axis]:
            if arr.shape != arr_shape:
                arr = np.broadcast_to(arr, arr_shape)
            if indices.shape != out_shape:
                indices = np.broadcast_to(indices, out_shape)
            return take_along_axis_chunkwise(arr, indices, axis)
    return fallback(np.take_along_axis, (arr, indices), {"axis": axis}, "numpy.take_along_axis")


def _along_shapes(shape: tuple, index_shape: tuple, axis: int) -> tuple | None:
    """The shapes of arr and of the result where `shape` (arr's) and `index_shape`
    broadcast off `axis`; None where they do not."""
    off = lambda s: tuple(1 if a == axis else n for a, n in enumerate(s))  # noqa: E731
    try:
        common = np.broadcast_shapes(off(shape), off(index_shape))
    except ValueError:
        return None
    with_axis = lambda n: (*common[:axis], n, *common[axis + 1 :])  # noqa: E731
    return with_axis(shape[axis]), with_axis(index_shape[axis])


def take_along_axis(x: DistArray, indices: Any, /, *, axis: int = -1) -> DistArray:
    """The elements of `x` at `indices` along `axis`, one index per position of the other
    axes (which broadcast), as `argsort` gives them (array API).

    Parameters
    ----------
    x : DistArray
        The array to pick from.
    indices : DistArray or array_like
        Integer indices, of `x`'s number of axes.
    axis : int
        The axis to pick along (the last by default).

    Returns
    -------
    DistArray
        The picked elements, shaped as `indices` broadcast against `x` off `axis`.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([[3, 1, 2], [0, 5, 4]]))
    >>> with mdarray.options(fallback="raise"):  # per chunk: nothing moves
    ...     mdarray.take_along_axis(x, mdarray.argsort(x, axis=1), axis=1).get()
    array([[1, 2, 3],
           [0, 4, 5]])
    """
    if not isinstance(indices, DistArray):
        x = asarray(x)
    return cast(DistArray, np.take_along_axis(x, indices, axis=axis))
