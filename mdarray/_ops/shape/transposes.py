"""Transposes: `permute_dims` (``x.T``, ``np.transpose``), `matrix_transpose`, `swapaxes`
and `moveaxis`. Each chunk is transposed where it lies: a view, no data moves, every mode
survives; a repeated transpose of arrays of one layout runs what its first call decided.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from mdarray._array.array import Axes, DistArray, wrap
from mdarray._core.decided import bound, decides, reader
from mdarray._core.plan_cache import plan_cache
from mdarray._core.registry import implements
from mdarray._layouts.layout import Layout, _normalize_axis


def _axes_tuple(axis, ndim: int, argname: str | None = None) -> tuple[int, ...]:
    """`axis` (None for all, an int or a sequence) as non-negative axes, with NumPy's
    errors (naming `argname` where NumPy does: ``source: axis 5 is out of bounds ...``)."""
    if axis is None:
        return tuple(range(ndim))
    return normalize_axis_tuple(axis, ndim, argname)


@plan_cache
def permuted_layout(layout: Layout, axes: tuple) -> Layout:
    index_map: dict = {}
    for device, index in layout.chunks:
        index_map.setdefault(device, []).append(tuple(index[a] for a in axes))
    return Layout(tuple(layout.shape[a] for a in axes), index_map)


@implements(np.transpose, spmd=True)
def permute_dims(x: DistArray, /, axes: Sequence[int] | None = None) -> DistArray:
    """`x` with its axes permuted (reversed by default): each chunk is transposed where it
    lies, no data moves.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.ones((2, 3)), mdarray.Layout.block((2, 3), devices=[0, 1]))
    >>> mdarray.permute_dims(x, (1, 0)).index_map[1]
    [(slice(0, 3, 1), slice(1, 2, 1))]
    """
    ndim = x.ndim
    if axes is None:  # ``x.T``: reversed, nothing to check
        axes = tuple(range(ndim - 1, -1, -1))
    else:
        axes = tuple([operator.index(a) for a in axes])
        if len(axes) != ndim:
            raise ValueError("axes don't match array")
        axes = tuple([_normalize_axis(a, ndim) for a in axes])
        if len(set(axes)) != len(axes):
            raise ValueError("repeated axis in transpose")
    known = x.storage.remapped()
    if known is not None and known[1][0] == "permute":
        undone = known[1][1]  # x is a permutation of the source's axes by `undone`
        if all(undone[a] == j for j, a in enumerate(axes)):
            # The permutation undoes it: the source's own chunks (``x.T.T``), no remap.
            return wrap(known[0], x.mode)
    layout = permuted_layout(x.layout, axes)
    return wrap(x.storage.remap(layout, lambda _, b: b.transpose(axes), ("permute", axes)), x.mode)


@decides(np.transpose, permute_dims)
def _decide_transpose(args, kwargs):
    """The runner of a transpose by the same axes of arrays of one layout (``x.T``, a
    ``onehot.T @ x`` each iteration): the permuted layout decided once, each call a late
    remap; a transpose undoing the one its operand is (``x.T.T``) goes the whole way."""
    given = bound(permute_dims, args, kwargs)
    if given is None or type(given["x"]) is not DistArray:
        return None
    x, axes = given["x"], given["axes"]
    if axes is None:
        axes = tuple(range(x.ndim - 1, -1, -1))
    else:
        axes = tuple([_normalize_axis(operator.index(a), x.ndim) for a in axes])
        if len(axes) != x.ndim or len(set(axes)) != len(axes):
            return None
    layout, mode, token = permuted_layout(x.layout, axes), x.mode, ("permute", axes)
    read = reader(permute_dims, args, kwargs, "x")

    def make(_, b):
        return b.transpose(axes)

    def runner(args, kwargs):
        storage = read(args, kwargs).storage
        if (known := storage.remapped()) is not None and known[1][0] == "permute":
            return None
        return wrap(storage.remap(layout, make, token), mode)

    return runner


@implements(np.matrix_transpose, spmd=True)
def matrix_transpose(x: DistArray, /) -> DistArray:
    """`x` with its last two axes swapped (no data moves).

    >>> import mdarray
    >>> mdarray.matrix_transpose(mdarray.zeros((2, 3, 4))).shape
    (2, 4, 3)
    """
    if x.ndim < 2:
        raise ValueError("matrix transpose with ndim < 2 is undefined")
    axes = list(range(x.ndim))
    axes[-2], axes[-1] = axes[-1], axes[-2]
    return permute_dims(x, tuple(axes))


@implements(np.swapaxes, spmd=True)
def swapaxes(x: DistArray, axis1: int, axis2: int) -> DistArray:
    """`x` with two axes interchanged (no data moves)."""
    axes = list(range(x.ndim))
    a, b = _normalize_axis(axis1, x.ndim), _normalize_axis(axis2, x.ndim)
    axes[a], axes[b] = axes[b], axes[a]
    return permute_dims(x, tuple(axes))


@implements(np.moveaxis, spmd=True)
def moveaxis(x: DistArray, source: Axes, destination: Axes, /) -> DistArray:
    """`x` with axes moved to new positions (no data moves).

    >>> import mdarray
    >>> mdarray.moveaxis(mdarray.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    source = _axes_tuple(source, x.ndim, "source")
    destination = _axes_tuple(destination, x.ndim, "destination")
    if len(source) != len(destination):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    order = [a for a in range(x.ndim) if a not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return permute_dims(x, tuple(order))
