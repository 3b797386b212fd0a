"""NumPy's stacking and splitting shorthands over DistArrays: vstack, hstack, column_stack,
split and array_split.

The stacks are `concat` after giving each operand enough axes, so each chunk is copied on
its own device and no data moves between devices. The splits are basic slices of the
input: views of its chunks, nothing copied or moved.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from mdarray._array.array import DistArray
from mdarray._core.registry import implements

from .manipulation_functions import _as_distarrays, concat, reshape


def _atleast(x: DistArray, ndim: int) -> DistArray:
    """`x` with leading axes of length one up to `ndim` (views, as ``numpy.atleast_2d``)."""
    if x.ndim >= ndim:
        return x
    return reshape(x, (1,) * (ndim - x.ndim) + x.shape)


def _atleast_nd(arys: tuple, numpy_function, make) -> Any:
    """NumPy's ``atleast_*d`` of `arys`: each DistArray by `make` (views), anything else
    as NumPy's function gives it; one array alone, else a tuple, as NumPy returns them."""
    out = tuple(make(a) if isinstance(a, DistArray) else numpy_function(a) for a in arys)
    return out[0] if len(out) == 1 else out


@implements(np.atleast_1d, spmd=True)
def atleast_1d(*arys: Any) -> Any:
    """``numpy.atleast_1d``: a 0-d DistArray as one of shape (1,), others as they are
    (views, nothing moves).

    >>> import mdarray
    >>> mdarray.atleast_1d(mdarray.asarray(5.0)).shape
    (1,)
    """
    return _atleast_nd(arys, np.atleast_1d, lambda x: _atleast(x, 1))


@implements(np.atleast_2d, spmd=True)
def atleast_2d(*arys: Any) -> Any:
    """``numpy.atleast_2d``: leading axes of length one up to two (views).

    >>> import mdarray
    >>> mdarray.atleast_2d(mdarray.ones(3)).shape
    (1, 3)
    """
    return _atleast_nd(arys, np.atleast_2d, lambda x: _atleast(x, 2))


@implements(np.atleast_3d, spmd=True)
def atleast_3d(*arys: Any) -> Any:
    """``numpy.atleast_3d``: NumPy's placement of the new axes (a 1-D array of length n
    as (1, n, 1), a 2-D one of shape (m, n) as (m, n, 1)), as views.

    >>> import mdarray
    >>> mdarray.atleast_3d(mdarray.ones((2, 3))).shape
    (2, 3, 1)
    """

    def make(x: DistArray) -> DistArray:
        if x.ndim >= 3:
            return x
        shape = {0: (1, 1, 1), 1: (1, *x.shape, 1), 2: (*x.shape, 1)}[x.ndim]
        return reshape(x, shape)

    return _atleast_nd(arys, np.atleast_3d, make)


@implements(np.vstack, spmd=True)
def vstack(tup: Sequence[Any], *, dtype=None, casting="same_kind") -> DistArray:
    """``numpy.vstack``: the arrays (1-D ones as rows) joined along the first axis, by
    `concat` (each chunk copied on its own device; nothing moves between devices).

    >>> import mdarray, numpy as np
    >>> np.vstack([mdarray.zeros(3), mdarray.ones(3)]).shape
    (2, 3)
    """
    arrays = [_atleast(a, 2) for a in _as_distarrays(tup)]
    return concat(arrays, axis=0, dtype=dtype, casting=casting)


@implements(np.hstack, spmd=True)
def hstack(tup: Sequence[Any], *, dtype=None, casting="same_kind") -> DistArray:
    """``numpy.hstack``: the arrays joined along the second axis (the first for 1-D
    arrays), by `concat` (nothing moves between devices).

    >>> import mdarray, numpy as np
    >>> np.hstack([mdarray.zeros(3), mdarray.ones(2)]).shape
    (5,)
    """
    arrays = [_atleast(a, 1) for a in _as_distarrays(tup)]
    axis = 0 if arrays and arrays[0].ndim == 1 else 1
    return concat(arrays, axis=axis, dtype=dtype, casting=casting)


@implements(np.column_stack, spmd=True)
def column_stack(tup: Sequence[Any]) -> DistArray:
    """``numpy.column_stack``: 1-D (and 0-d) arrays as columns, joined along the second
    axis with the 2-D ones, by `concat` (nothing moves between devices).

    >>> import mdarray, numpy as np
    >>> np.column_stack([mdarray.zeros(3), mdarray.ones((3, 2))]).shape
    (3, 3)
    """
    arrays = [reshape(_atleast(a, 1), (-1, 1)) if a.ndim < 2 else a for a in _as_distarrays(tup)]
    return concat(arrays, axis=1)


@implements(np.array_split, spmd=True)
def array_split(ary: DistArray, indices_or_sections: Any, axis: int = 0) -> list[DistArray]:
    """``numpy.array_split``: `ary` cut along `axis` into sections (as equal as possible)
    or at the given indices, as basic slices: views of its chunks, nothing moves.

    >>> import mdarray, numpy as np
    >>> [a.shape for a in np.array_split(mdarray.arange(5), 2)]
    [(3,), (2,)]
    """
    total = ary.shape[axis]  # IndexError for a missing axis, as NumPy
    try:
        sections = len(indices_or_sections) + 1
        points = [0, *(operator.index(i) for i in indices_or_sections), total]
    except TypeError:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extras = divmod(total, sections)
        sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
        points = np.cumsum(sizes).tolist()
    axis = operator.index(axis) % ary.ndim
    keys = [(*(slice(None),) * axis, slice(points[i], points[i + 1])) for i in range(sections)]
    return [ary[key] for key in keys]


@implements(np.split, spmd=True)
def split(ary: DistArray, indices_or_sections: Any, axis: int = 0) -> list[DistArray]:
    """``numpy.split``: as `array_split`, but a number of sections must divide the axis
    (views of the chunks, nothing moves).

    >>> import mdarray, numpy as np
    >>> [a.shape for a in np.split(mdarray.arange(6), [1, 4])]
    [(1,), (3,), (2,)]
    """
    try:
        len(indices_or_sections)
    except TypeError:
        sections = indices_or_sections
        if ary.shape[axis] % sections:
            raise ValueError("array split does not result in an equal division") from None
    return array_split(ary, indices_or_sections, axis)
