"""Manipulations that copy elements to new positions: repeat, tile and roll.

Each output chunk needs elements from anywhere in the input, so for now they gather the
array to the host, run NumPy and distribute the result again, under the fallback policy
(`mdarray.options`).
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from ._array import DistArray
from ._creation_functions import asarray
from ._fallback import fallback
from ._registry import implements


@implements(np.repeat)
def _repeat(a, repeats, axis=None):
    return fallback(np.repeat, (a, repeats), {"axis": axis}, "numpy.repeat")


def repeat(x: DistArray, repeats: Any, /, *, axis: int | None = None) -> DistArray:
    """Each element of `x` repeated `repeats` times (an int, or one count per element
    along `axis`) along `axis`; `x` is flattened first without `axis` (array API).

    Parameters
    ----------
    x : DistArray
        The input array.
    repeats : int or DistArray
        The number of repetitions: one for all, or a 1-D integer array with one per
        element along `axis`.
    axis : int, optional
        The axis to repeat along; None flattens `x` first.

    Returns
    -------
    DistArray
        The repeated array, of `x`'s dtype.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([1, 2, 3]))
    >>> with mdarray.options(fallback="allow"):
    ...     mdarray.repeat(x, mdarray.asarray(np.array([2, 0, 1]))).get()
    array([1, 1, 3])
    """
    if not isinstance(repeats, DistArray):
        x = asarray(x)
    return cast(DistArray, np.repeat(x, repeats, axis=axis))


@implements(np.tile)
def _tile(A, reps):
    return fallback(np.tile, (A, reps), {}, "numpy.tile")


def tile(x: DistArray, repetitions: tuple[int, ...], /) -> DistArray:
    """`x` repeated `repetitions[i]` times along each axis ``i`` (array API); the shorter
    of `x`'s shape and `repetitions` is padded with ones on the left.

    Parameters
    ----------
    x : DistArray
        The input array.
    repetitions : tuple of ints
        The number of copies along each axis.

    Returns
    -------
    DistArray
        The tiled array, of `x`'s dtype.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([1, 2]))
    >>> with mdarray.options(fallback="allow"):
    ...     mdarray.tile(x, (2, 2)).get()
    array([[1, 2, 1, 2],
           [1, 2, 1, 2]])
    """
    return cast(DistArray, np.tile(asarray(x), repetitions))


@implements(np.roll)
def _roll(a, shift, axis=None):
    return fallback(np.roll, (a, shift), {"axis": axis}, "numpy.roll")


def roll(
    x: DistArray,
    /,
    shift: int | tuple[int, ...],
    *,
    axis: int | tuple[int, ...] | None = None,
) -> DistArray:
    """`x` with its elements shifted by `shift` along `axis`, those leaving one end coming
    back at the other (array API); without `axis`, along the flattened array.

    Parameters
    ----------
    x : DistArray
        The input array.
    shift : int or tuple of ints
        The number of places to shift (towards higher indices where positive), one per
        axis of `axis` or one for all.
    axis : int or tuple of ints, optional
        The axes to shift along; None shifts the flattened array and keeps the shape.

    Returns
    -------
    DistArray
        The rolled array, of `x`'s shape and dtype.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.arange(5))
    >>> with mdarray.options(fallback="allow"):
    ...     mdarray.roll(x, 2).get()
    array([3, 4, 0, 1, 2])
    """
    return cast(DistArray, np.roll(asarray(x), shift, axis=axis))
