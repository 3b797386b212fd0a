"""NumPy's ``apply_along_axis`` and ``apply_over_axes`` with the function given
DistArrays.

``apply_along_axis`` calls the function on each 1-D slice of the array along the axis
(a DistArray view: the slice stays where it lies, and what the function does with it is
the function's own native work), then stacks the results as NumPy does (in the first
result's dtype, the result's axes where the slices' axis was). ``apply_over_axes`` is
NumPy's loop over the axes, each call given the DistArray.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from mdarray._array.array import DistArray
from mdarray._core.registry import implements
from mdarray._ops.creation.creation_functions import asarray
from mdarray._ops.engine.fallback import fallback


@implements(np.apply_along_axis, spmd=True)
def _apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``numpy.apply_along_axis``: `func1d` of each 1-D slice along `axis`, the results
    stacked in the first one's dtype and shape."""
    if not isinstance(arr, DistArray):
        name = "numpy.apply_along_axis"
        return fallback(np.apply_along_axis, (func1d, axis, arr, *args), kwargs, name)
    axis = np.lib.array_utils.normalize_axis_index(operator.index(axis), arr.ndim)
    outer = arr.shape[:axis] + arr.shape[axis + 1 :]
    if any(n == 0 for n in outer):
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    moved: Any = np.moveaxis(arr, axis, -1)  # type: ignore[type-var]
    results = []
    for index in np.ndindex(*outer):
        got = func1d(moved[index], *args, **kwargs)
        results.append(
            got if isinstance(got, DistArray) else asarray(np.asanyarray(got), device=arr.device)
        )
    first = results[0]
    if any(r.shape != first.shape for r in results):
        raise ValueError(
            "could not broadcast input array from shape "
            f"{next(r.shape for r in results if r.shape != first.shape)} into shape {first.shape}"
        )
    stacked = np.stack([r.astype(first.dtype, copy=False) for r in results])
    stacked = np.reshape(stacked, outer + first.shape)
    # The result's axes go where the slices' axis was.
    order = (
        *range(axis),
        *range(len(outer), len(outer) + first.ndim),
        *range(axis, len(outer)),
    )
    return np.transpose(stacked, order)


@implements(np.apply_over_axes, spmd=True)
def _apply_over_axes(func, a, axes):
    """``numpy.apply_over_axes``: ``func(a, axis)`` for each axis in turn, a result that
    lost the axis given it back (``expand_dims``)."""
    if not isinstance(a, DistArray):
        return fallback(np.apply_over_axes, (func, a, axes), {}, "numpy.apply_over_axes")
    value: Any = a
    n = a.ndim
    if np.ndim(axes) == 0:
        axes = (axes,)
    for given in axes:
        axis = n + given if given < 0 else given
        result: Any = func(value, axis)
        if result.ndim == value.ndim:
            value = result
        else:
            result = np.expand_dims(result, axis)
            if result.ndim != value.ndim:
                raise ValueError("function is not returning an array of the correct shape")
            value = result
    return value
