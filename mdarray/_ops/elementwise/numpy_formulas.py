"""NumPy's elementwise formulas that are not ufuncs, native: ``choose``, ``piecewise``,
``real_if_close``, ``unwrap``, ``interp``, ``correlate``.

Each is NumPy's formula written with native operations (``where``, masks, ``diff``,
``cumsum``, ``convolve``), in the order NumPy computes it, so the values, dtypes and
errors are NumPy's; NumPy's checks of the arguments run first on empty or one-element
stand-ins. ``interp`` runs the backend's own on each chunk against the data points
(`_index_arithmetic.with_tables`). ``piecewise`` writes through masks, which have no
multi-process implementation: an SPMD run takes the fallback for it.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from mdarray._array.array import DistArray
from mdarray._core.registry import implements
from mdarray._exec.chunkwise import write_out
from mdarray._ops.creation.creation_functions import asarray
from mdarray._ops.creation.index_arithmetic import with_tables
from mdarray._ops.engine.fallback import distarrays_in, fallback


def _dist(value, like: DistArray) -> DistArray:
    if isinstance(value, DistArray):
        return value
    return asarray(np.asarray(value), device=like.device)


def _stand_in(value):
    if isinstance(value, (bool, int, float, complex)):
        return value
    dtype = value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype
    return np.zeros((1,) * np.ndim(value), dtype)


@implements(np.choose, spmd=True)
def _choose(a, choices, out=None, mode="raise"):
    """``numpy.choose``: from the last choice to the first, ``where(a == k, choice k,
    ...)``; `a` checked (``mode="raise"``), wrapped or clipped first."""
    if isinstance(choices, DistArray):
        choices = [choices[k] for k in range(choices.shape[0])]
    choices = list(choices)
    like = distarrays_in([a, choices])
    if not like or not choices:
        args = (a, choices)
        return fallback(np.choose, args, {"out": out, "mode": mode}, "numpy.choose")
    a = _dist(a, like[0])
    # NumPy's own checks of the dtypes (and the result's dtype), on stand-ins.
    stand_ins = [_stand_in(c) for c in choices]
    dtype = np.choose(np.zeros((1,) * a.ndim, a.dtype), stand_ins, mode=mode).dtype
    n = len(choices)
    selector = a.astype(np.intp)
    if mode == "raise":
        if a.size and bool(np.any((selector < 0) | (selector >= n))):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        selector = selector % n
    else:
        selector = np.clip(selector, 0, n - 1)
    shape = np.broadcast_shapes(a.shape, *(np.shape(c) for c in choices))
    result: Any = np.broadcast_to(_dist(choices[-1], like[0]).astype(dtype), shape)
    for k in range(n - 2, -1, -1):
        choice = choices[k]
        choice = (
            choice.astype(dtype) if isinstance(choice, DistArray) else np.asarray(choice, dtype)
        )
        result = np.where(selector == k, choice, result)
    result = result.astype(dtype, copy=False)
    if n == 1:  # no `where` made a new array
        result = result.copy()
    return result if out is None else write_out(out, result)


@implements(np.piecewise)
def _piecewise(x, condlist, funclist, *args, **kw):
    """``numpy.piecewise``: per condition, its function of ``x[cond]`` (or its value)
    written into ``y[cond]``, y zeros of x's kind; with one function more than
    conditions, the last for where none holds."""
    if not isinstance(x, DistArray) or x.ndim == 0:
        return fallback(np.piecewise, (x, condlist, funclist, *args), kw, "numpy.piecewise")
    n_functions = len(funclist)
    if (
        isinstance(condlist, DistArray)
        or np.isscalar(condlist)
        or not isinstance(condlist[0], (list, np.ndarray, DistArray))
    ):
        condlist = [condlist]
    conditions = [np.broadcast_to(_dist(c, x).astype(bool), x.shape) for c in condlist]
    n = len(conditions)
    if n == n_functions - 1:
        otherwise = conditions[0]
        for c in conditions[1:]:
            otherwise = otherwise | c
        conditions.append(~otherwise)
    elif n != n_functions:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = np.zeros_like(x)
    for condition, func in zip(conditions, funclist):
        if not callable(func):
            y[condition] = func
        else:
            values = x[condition]
            if values.size > 0:
                y[condition] = func(values, *args, **kw)
    return y


@implements(np.real_if_close, spmd=True)
def _real_if_close(a, tol=100):
    """``numpy.real_if_close``: the real part where every imaginary part is below `tol`
    (in machine epsilons where ``tol > 1``); otherwise `a` itself."""
    if not np.iscomplexobj(a):
        return a
    if tol > 1:
        tol = np.finfo(a.dtype).eps * tol
    if bool(np.all(np.absolute(np.imag(a)) < tol)):
        return np.real(a)
    return a


@implements(np.unwrap, spmd=True)
def _unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """``numpy.unwrap``: the jumps along `axis` larger than ``discont`` taken to their
    remainder modulo `period`, the corrections summed along the axis (``cumsum``) and
    added back."""
    if not isinstance(p, DistArray):
        kwargs = {"discont": discont, "axis": axis, "period": period}
        return fallback(np.unwrap, (p,), kwargs, "numpy.unwrap")
    axis = np.lib.array_utils.normalize_axis_index(operator.index(axis), p.ndim)
    jumps = np.diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    dtype = np.result_type(jumps.dtype, period)
    if np.issubdtype(dtype, np.integer):
        high, rest = divmod(period, 2)
        ambiguous = rest == 0
    else:
        high, ambiguous = period / 2, True
    low = -high
    wrapped = np.mod(jumps - low, period) + low
    if ambiguous:
        wrapped = np.where((wrapped == low) & (jumps > 0), high, wrapped).astype(wrapped.dtype)
    correction = wrapped - jumps
    correction = np.where(np.abs(jumps) < discont, 0, correction).astype(correction.dtype)
    later = tuple(slice(1, None) if k == axis else slice(None) for k in range(p.ndim))
    result = p.astype(dtype)
    result[later] = p[later] + np.cumsum(correction, axis=axis)
    return result


@implements(np.interp, spmd=True)
def _interp(x, xp, fp, left=None, right=None, period=None):
    """``numpy.interp``: the backend's ``interp`` on each chunk of `x`, the data points
    `xp` and `fp` (read whole, as NumPy reads them) copied to each device."""
    like = distarrays_in([x, xp, fp])[0]
    x = _dist(x, like)
    at, values = (v.get() if isinstance(v, DistArray) else np.asarray(v) for v in (xp, fp))
    # NumPy's checks (ranks, lengths, dtypes, period) and result dtype, on no elements.
    probe: Any = np.zeros(0, x.dtype)
    dtype = np.interp(probe, at, values, left=left, right=right, period=period).dtype

    def kernel(module, chunk, at, values):
        if len(at) == 1 and period is None:  # CuPy's kernel gives NaN at the one point
            below = values[0] if left is None else left
            above = values[0] if right is None else right
            inside = module.where(chunk > at[0], above, values[0])
            return module.where(chunk < at[0], below, inside).astype(dtype, copy=False)
        return module.interp(chunk, at, values, left=left, right=right, period=period)

    return with_tables(x, (at, values), kernel, dtype)


@implements(np.correlate, spmd=True)
def _correlate(a, v, mode="valid"):
    """``numpy.correlate``: the native ``convolve`` of `a` with `v` reversed (and
    conjugated); where `v` is the longer, the reverse of their swapped correlation."""
    like = distarrays_in([a, v])[0]
    a, v = _dist(a, like), _dist(v, like)
    if a.ndim != 1 or v.ndim != 1 or mode not in ("valid", "same", "full"):
        return fallback(np.correlate, (a, v), {"mode": mode}, "numpy.correlate")
    complex_ = np.iscomplexobj(a) or np.iscomplexobj(v)
    conjugate = np.conjugate if complex_ else (lambda z: z)  # bools stay bools
    if a.shape[0] >= v.shape[0]:
        return np.convolve(a, conjugate(v)[::-1], mode=mode)
    return conjugate(np.convolve(v, conjugate(a)[::-1], mode=mode))[::-1]
