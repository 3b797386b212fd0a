"""Set functions: unique_all, unique_counts, unique_inverse and unique_values.

Their output shapes depend on the values, so for now they gather the array to the host,
run NumPy's functions of the same names and distribute the results again, under the
fallback policy (`mdarray.options`). As in NumPy, each NaN is a distinct value and the
two signed zeros are one; the results are NumPy's named tuples, fields DistArrays.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from ._array import DistArray
from ._creation_functions import asarray
from ._fallback import fallback
from ._registry import implements


@implements(np.unique_all)
def _unique_all(x):
    return fallback(np.unique_all, (x,), {}, "numpy.unique_all")


@implements(np.unique_counts)
def _unique_counts(x):
    return fallback(np.unique_counts, (x,), {}, "numpy.unique_counts")


@implements(np.unique_inverse)
def _unique_inverse(x):
    return fallback(np.unique_inverse, (x,), {}, "numpy.unique_inverse")


@implements(np.unique_values)
def _unique_values(x):
    # Sorted, as the other three and every array library's (NumPy's own is in hash order
    # since 2.3; scikit-learn's labels rely on the sorted order of a non-NumPy namespace).
    return fallback(_sorted_unique_values, (x,), {}, "numpy.unique_values")


def _sorted_unique_values(x):
    return np.unique(x.reshape(-1), equal_nan=False)


def unique_all(x: DistArray, /) -> Any:
    """The unique elements of `x` (flattened), with the index of each one's first
    occurrence, the indices that rebuild `x` from them, and their counts (array API).

    Parameters
    ----------
    x : DistArray
        The input array (flattened).

    Returns
    -------
    UniqueAllResult
        A named tuple ``(values, indices, inverse_indices, counts)`` of DistArrays:
        `values` sorted, `inverse_indices` of `x`'s shape.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([2, 1, 2]))
    >>> with mdarray.options(fallback="allow"):
    ...     result = mdarray.unique_all(x)
    >>> result.values.get(), result.indices.get(), result.counts.get()
    (array([1, 2]), array([1, 0]), array([1, 2]))
    """
    return np.unique_all(asarray(x))


def unique_counts(x: DistArray, /) -> Any:
    """The unique elements of `x` (flattened) and how often each occurs (array API).

    Parameters
    ----------
    x : DistArray
        The input array (flattened).

    Returns
    -------
    UniqueCountsResult
        A named tuple ``(values, counts)`` of DistArrays, `values` sorted.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([2, 1, 2]))
    >>> with mdarray.options(fallback="allow"):
    ...     values, counts = mdarray.unique_counts(x)
    >>> values.get(), counts.get()
    (array([1, 2]), array([1, 2]))
    """
    return np.unique_counts(asarray(x))


def unique_inverse(x: DistArray, /) -> Any:
    """The unique elements of `x` (flattened) and the indices into them that rebuild `x`
    (array API).

    Parameters
    ----------
    x : DistArray
        The input array (flattened).

    Returns
    -------
    UniqueInverseResult
        A named tuple ``(values, inverse_indices)`` of DistArrays: `values` sorted,
        `inverse_indices` of `x`'s shape.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([2, 1, 2]))
    >>> with mdarray.options(fallback="allow"):
    ...     values, inverse = mdarray.unique_inverse(x)
    >>> values.get(), inverse.get()
    (array([1, 2]), array([1, 0, 1]))
    """
    return np.unique_inverse(asarray(x))


def unique_values(x: DistArray, /) -> DistArray:
    """The unique elements of `x` (flattened), sorted (array API); each NaN is its own.

    Parameters
    ----------
    x : DistArray
        The input array (flattened).

    Returns
    -------
    DistArray
        The unique values, 1-D, of `x`'s dtype.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([2.0, np.nan, 1.0, 2.0, np.nan]))
    >>> with mdarray.options(fallback="allow"):
    ...     mdarray.unique_values(x).get()
    array([ 1.,  2., nan, nan])
    """
    return cast(DistArray, np.unique_values(asarray(x)))
