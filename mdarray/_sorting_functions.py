"""Sorting functions: sort and argsort.

For now both gather the array to the host, sort with NumPy and distribute the result
again, under the fallback policy (`mdarray.options`). A descending sort is an ascending
stable sort of the reversed axis, reversed back (reversing is a relabeling of the chunks,
no data moves): equal elements then keep their original order, as the array API asks.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from ._array import DistArray
from ._creation_functions import asarray
from ._fallback import fallback
from ._manipulation_functions import flip, reshape
from ._registry import implements


@implements(np.sort)
def _sort(a, axis=-1, kind=None, order=None, *, stable=None):
    return fallback(
        np.sort, (a,), {"axis": axis, "kind": kind, "order": order, "stable": stable}, "numpy.sort"
    )


@implements(np.argsort)
def _argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    return fallback(
        np.argsort,
        (a,),
        {"axis": axis, "kind": kind, "order": order, "stable": stable},
        "numpy.argsort",
    )


def sort(
    x: DistArray, /, *, axis: int = -1, descending: bool = False, stable: bool = True
) -> DistArray:
    """A sorted copy of `x` along `axis` (array API); NaNs sort last, as in NumPy
    (first when `descending`).

    Parameters
    ----------
    x : DistArray
        The array to sort.
    axis : int
        The axis to sort along (the last by default).
    descending : bool
        Sort from largest to smallest.
    stable : bool
        Keep equal elements in their original order (always so when `descending`).

    Returns
    -------
    DistArray
        The sorted array, of `x`'s shape and dtype.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([3, 1, 2]))
    >>> with mdarray.options(fallback="allow"):
    ...     mdarray.sort(x, descending=True).get()
    array([3, 2, 1])
    """
    x = asarray(x)
    if descending:
        return flip(np.sort(flip(x, axis=axis), axis=axis, stable=True), axis=axis)
    return cast(DistArray, np.sort(x, axis=axis, stable=stable))


def argsort(
    x: DistArray, /, *, axis: int = -1, descending: bool = False, stable: bool = True
) -> DistArray:
    """The indices that sort `x` along `axis` (array API); equal elements keep their
    order when `stable`, descending included.

    Parameters
    ----------
    x : DistArray
        The array to sort.
    axis : int
        The axis to sort along (the last by default).
    descending : bool
        Sort from largest to smallest.
    stable : bool
        Keep equal elements in their original order (always so when `descending`).

    Returns
    -------
    DistArray
        Indices along `axis` (default index dtype), of `x`'s shape.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([3, 1, 3, 2]))
    >>> with mdarray.options(fallback="allow"):
    ...     mdarray.argsort(x, descending=True).get()
    array([0, 2, 3, 1])
    """
    x = asarray(x)
    if descending:
        if x.ndim == 0:  # NumPy's argsort takes a 0-d array as 1-D
            x = reshape(x, (1,))
        # Positions in the reversed axis, counted back from its end.
        reversed_order = flip(np.argsort(flip(x, axis=axis), axis=axis, stable=True), axis=axis)
        return (x.shape[axis] - 1) - reversed_order
    return cast(DistArray, np.argsort(x, axis=axis, stable=stable))
