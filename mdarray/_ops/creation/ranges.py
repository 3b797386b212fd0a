"""NumPy's ``linspace``, ``logspace`` and ``geomspace``: the namespace's ``logspace`` and
``geomspace`` (NumPy's values, laid out as ``device=`` says), and NumPy's three functions
with DistArray endpoints.

Endpoints given as arrays make one sequence per element: the samples run along a new
axis. Each function is NumPy's arithmetic in NumPy's order (the sample numbers times
the step, plus the start, the last sample set to the stop; for ``geomspace`` the
logarithms and the endpoints put back), as native elementwise operations, so the values
and dtypes are NumPy's; nothing moves but the endpoints to the samples' chunks.
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.typing import DTypeLike

from mdarray._array.array import DistArray
from mdarray._core.registry import implements
from mdarray._layouts.layout import Device
from mdarray._ops.engine.fallback import distarrays_in, fallback

from .creation_functions import asarray

_SCALARS = (bool, int, float, complex)


def logspace(
    start: complex,
    stop: complex,
    num: int = 50,
    endpoint: bool = True,
    base: complex = 10.0,
    dtype: DTypeLike | None = None,
    axis: int = 0,
    *,
    device: Device = None,
) -> DistArray:
    """NumPy's ``logspace`` (its signature, its values: computed by NumPy from the
    scalars or host arrays given), laid out as `device` says. A NumPy name array-agnostic
    code looks up on a namespace (SciPy).

    >>> import mdarray
    >>> mdarray.logspace(0, 2, 3).get()
    array([  1.,  10., 100.])
    """
    values = np.logspace(start, stop, num, endpoint, base, dtype, axis)
    return asarray(values, device=device)


def geomspace(
    start: complex,
    stop: complex,
    num: int = 50,
    endpoint: bool = True,
    dtype: DTypeLike | None = None,
    axis: int = 0,
    *,
    device: Device = None,
) -> DistArray:
    """NumPy's ``geomspace`` (its signature, its values: computed by NumPy from the
    scalars or host arrays given), laid out as `device` says.

    >>> import mdarray
    >>> mdarray.geomspace(1, 8, 4).get()
    array([1., 2., 4., 8.])
    """
    values = np.geomspace(start, stop, num, endpoint, dtype, axis)
    return asarray(values, device=device)


def _kind(value):
    """What NumPy's promotion reads of `value`: a Python scalar as it is (weak), else
    its dtype."""
    if isinstance(value, _SCALARS):
        return value
    return value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype


def _operand(value):
    if isinstance(value, (DistArray, *_SCALARS)):
        return value
    return np.asarray(value)


@implements(np.linspace, spmd=True)
def _linspace(
    start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None
):
    """``numpy.linspace``: ``arange(num) * step + start`` along a new axis, the last
    sample the stop (with `endpoint`)."""
    if device is not None:
        kwargs = {"num": num, "endpoint": endpoint, "retstep": retstep, "dtype": dtype}
        kwargs.update(axis=axis, device=device)
        return fallback(np.linspace, (start, stop), kwargs, "numpy.linspace")
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = num - 1 if endpoint else num
    start, stop = _operand(start), _operand(stop)
    inexact = np.result_type(_kind(start), _kind(stop), 0.0)
    dtype = inexact if dtype is None else np.dtype(dtype)
    delta = np.subtract(stop, start, dtype=inexact)
    samples = np.arange(0, num, dtype=inexact).reshape((-1,) + (1,) * np.ndim(delta))
    if div > 0:
        step = delta / div
        # A denormal step (zero): NumPy divides the samples first.
        y = (samples / div) * delta if bool(np.any(step == 0)) else samples * step
    else:
        step = np.nan
        y = samples * delta
    y = y + start
    if endpoint and num > 1:
        y[-1, ...] = stop
    if axis != 0:
        y = np.moveaxis(y, 0, axis)
    if np.issubdtype(dtype, np.integer):
        y = np.floor(y)
    y = y.astype(dtype, copy=False)
    return (y, step) if retstep else y


@implements(np.logspace, spmd=True)
def _logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``numpy.logspace``: `base` to the power of `linspace`'s samples."""
    if not isinstance(base, (float, int)) and np.ndim(base):
        ndim = len(np.broadcast_shapes(np.shape(start), np.shape(stop), np.shape(base)))
        start, stop, base = (_at_least(v, ndim) for v in (start, stop, base))
        base = np.expand_dims(base, axis=axis)
    y = np.linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    powers = np.power(base, y)
    return powers if dtype is None else powers.astype(dtype, copy=False)


def _at_least(value, ndim: int):
    if isinstance(value, DistArray):
        return np.reshape(value, (1,) * (ndim - value.ndim) + value.shape)
    return np.array(value, ndmin=ndim)


@implements(np.geomspace, spmd=True)
def _geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``numpy.geomspace``: `logspace` between the logarithms of the endpoints turned to
    the positive real axis, the endpoints set exactly, the sign turned back."""
    if not distarrays_in([start, stop]):
        kwargs = {"num": num, "endpoint": endpoint, "dtype": dtype, "axis": axis}
        return fallback(np.geomspace, (start, stop), kwargs, "numpy.geomspace")
    start = start if isinstance(start, DistArray) else np.asarray(start)
    stop = stop if isinstance(stop, DistArray) else np.asarray(stop)
    if bool(np.any(start == 0)) or bool(np.any(stop == 0)):
        raise ValueError("Geometric sequence cannot include zero")
    inexact = np.result_type(start.dtype, stop.dtype, float(num), np.zeros((), dtype))
    dtype = inexact if dtype is None else np.dtype(dtype)
    start = start.astype(inexact, copy=True)
    stop = stop.astype(inexact, copy=True)
    sign = np.sign(start)
    start = start / sign
    stop = stop / sign
    result = np.logspace(np.log10(start), np.log10(stop), num=num, endpoint=endpoint, dtype=inexact)
    if num > 0:
        result[0] = start
        if num > 1 and endpoint:
            result[-1] = stop
    result = result * sign
    if axis != 0:
        result = np.moveaxis(result, 0, axis)
    return result.astype(dtype, copy=False)
