"""Statistical functions: reductions (sum prod max min mean var std all any) and scans.

Every reduction goes through `_reduction.reduction`: along axes that chunks split, the
result is partial (SUM for sums and means, MAX/MIN for max/min/any/all) and nothing moves.
``var``/``std`` compute the mean first (combined: it is result-sized, the input does not
move), then a partial SUM of squared deviations: the same two passes as NumPy, so the
values agree with NumPy's closely; ``std`` needs the combined variance for its square
root. Scans (``cumsum``, ``ufunc.accumulate``) live in `_scans`.
"""

from __future__ import annotations

import builtins

import numpy as np
from numpy.typing import DTypeLike

from . import _reduction
from ._array import Axes, DistArray, in_mode, wrap
from ._chunkwise import map_chunks, write_out
from ._data_type_functions import astype
from ._fallback import fallback
from ._modes import REPLICA
from ._reduction import NO_VALUE
from ._registry import implements, implements_ufunc_method

# Reductions by ufunc ----------------------------------------------------------------


@implements_ufunc_method("reduce", spmd=True)
def ufunc_reduce(ufunc, inputs, kwargs):
    """``np.<ufunc>.reduce`` of a DistArray (partial where the axes are split)."""
    kwargs = dict(kwargs)
    (array,) = inputs
    if not isinstance(array, DistArray):
        return fallback(ufunc.reduce, inputs, kwargs, f"numpy.{ufunc.__name__}.reduce")
    axis = kwargs.pop("axis", 0)
    out = kwargs.pop("out", None)
    return _reduction.reduction(ufunc.reduce, ufunc, array, axis, out, **kwargs)


def _reducer(func, ufunc, *, has_dtype: bool = True, has_initial: bool = True):
    """The DistArray implementation of NumPy's reduction `func` by `ufunc`."""
    name = f"numpy.{func.__name__}"

    def impl(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE,
             where=NO_VALUE):  # fmt: skip
        kwargs = {"keepdims": keepdims, "where": where}
        if has_initial:
            kwargs["initial"] = initial
        if has_dtype:
            kwargs["dtype"] = dtype
        if not isinstance(a, DistArray):
            return fallback(func, (a,), dict(kwargs, axis=axis, out=out), name)
        return _reduction.reduction(func, ufunc, a, axis, out, **kwargs)

    return impl


def _max_like(func, ufunc):
    impl = _reducer(func, ufunc, has_dtype=False)

    def max_impl(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE):
        return impl(a, axis, None, out, keepdims, initial, where)

    return max_impl


def _all_like(func, ufunc):
    impl = _reducer(func, ufunc, has_dtype=False, has_initial=False)

    def all_impl(a, axis=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE):
        return impl(a, axis, None, out, keepdims, NO_VALUE, where)

    return all_impl


implements(np.sum, spmd=True)(_reducer(np.sum, np.add))
implements(np.prod, spmd=True)(_reducer(np.prod, np.multiply))
implements(np.max, np.amax, spmd=True)(_max_like(np.max, np.maximum))
implements(np.min, np.amin, spmd=True)(_max_like(np.min, np.minimum))
implements(np.all, spmd=True)(_all_like(np.all, np.logical_and))
implements(np.any, spmd=True)(_all_like(np.any, np.logical_or))


# Mean, variance, standard deviation ------------------------------------------------


def _count(x: DistArray, axes: tuple, keepdims: bool, where):
    """How many elements each result element reduces (an int, or per element)."""
    if where is True:
        return int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    if isinstance(where, DistArray):
        if where.shape != x.shape:
            raise ValueError(f"where= DistArray of shape {where.shape} must have shape {x.shape}")
        return _reduction.reduce(where, np.add, axes, keepdims, np.intp)
    mask = np.broadcast_to(np.asarray(where, dtype=bool), x.shape)
    return np.sum(mask, axis=axes, keepdims=keepdims)


def _divide(x: DistArray, divisor) -> DistArray:
    """`x` / `divisor` per chunk: linear, so a SUM result stays SUM where every divisor
    is at least 1 (the row ``sum(p) / c`` of `_mode_rules`: a divisor of 0 makes the
    identities' 0 / 0 NaN, one under 1 may overflow a copy where the value does not);
    otherwise the partials are combined first."""
    xp = x.storage.backend.xp
    if isinstance(divisor, DistArray) or not np.all(np.abs(divisor) >= 1):
        x = in_mode(x, REPLICA)
    return wrap(map_chunks(x, xp.true_divide, divisor), x.mode)


def _mean(x, axes, keepdims, dtype, where) -> DistArray:
    total = _reduction.reduce(x, np.add, axes, keepdims, dtype, dtype=dtype, where=where)
    return _divide(total, _count(x, axes, keepdims, where))


def _squared_deviations(chunk, mean):
    """``|chunk - mean|**2`` with NumPy's promotion (as NumPy's var computes it)."""
    d = chunk - mean
    if d.dtype.kind == "c":
        return d.real * d.real + d.imag * d.imag
    return d * d


def _var(x, axes, keepdims, dtype, where, ddof, requested=None) -> DistArray:
    """Two passes like NumPy: the mean (combined, result-sized), then a partial SUM of
    squared deviations over the chunks, divided by ``max(count - ddof, 0)``.

    The squares are summed in the `requested` dtype when the caller gave one, as NumPy
    does (a complex sum divided by 0 is inf+nanj, a real one inf)."""
    if x.mode.is_partial:
        x = x.change_mode(REPLICA)
    mean = in_mode(_mean(x, axes, True, dtype, where), REPLICA)
    squares = wrap(map_chunks(x, _squared_deviations, mean))
    sum_dtype = squares.dtype if requested is None else np.dtype(requested)
    total = _reduction.reduce(
        squares, np.add, axes, keepdims, sum_dtype, dtype=requested, where=where
    )
    count = _count(x, axes, keepdims, where)
    divisor = (
        builtins.max(count - ddof, 0) if isinstance(count, int) else np.maximum(count - ddof, 0)
    )
    return _divide(total, divisor)


def _moment(func, stat, a, axis, dtype, out, keepdims, where, **extra):
    """Shared front end of mean/var/std: NumPy checks arguments on the probe."""
    out = _reduction.unwrap_out(out)
    kwargs = {"axis": axis, "dtype": dtype, "keepdims": keepdims, "where": where, **extra}
    kwargs = {k: v for k, v in kwargs.items() if v is not NO_VALUE}
    checked = _reduction.check_with_probe(func, a, out, kwargs)
    axes = _reduction.normalize_axes(axis, a.ndim)
    keep = bool(kwargs.get("keepdims", False))
    if a.size == 0:  # NumPy on an empty host array of the shape: its values and warnings
        value = np.asarray(func(np.empty(a.shape, a.dtype), **kwargs))
        result = _reduction.filled(a, value.shape, value, value.dtype)
    else:
        where = kwargs.get("where", True)
        result = stat(a, axes, keep, _reduction.compute_dtype(a.dtype, dtype), where)
        result = astype(result, checked.dtype, copy=False)
    return result if out is None else write_out(out, result)


@implements(np.mean, spmd=True)
def _np_mean(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE):
    args = {"axis": axis, "dtype": dtype, "out": out, "keepdims": keepdims, "where": where}
    if not isinstance(a, DistArray):
        return fallback(np.mean, (a,), args, "numpy.mean")
    fast = None if out is not None else _reduction.mean(a, axis, dtype, keepdims, where)
    return _moment(np.mean, _mean, a, axis, dtype, out, keepdims, where) if fast is None else fast


def _ddof(ddof, correction):
    if correction is not NO_VALUE:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        return correction
    return ddof


def _variance_impl(func, root: bool):
    name = f"numpy.{func.__name__}"

    def impl(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NO_VALUE, *, where=NO_VALUE,
             mean=NO_VALUE, correction=NO_VALUE):  # fmt: skip
        args = {"axis": axis, "dtype": dtype, "out": out, "ddof": ddof, "keepdims": keepdims}
        args.update(where=where, mean=mean, correction=correction)
        if not isinstance(a, DistArray) or mean is not NO_VALUE:
            args = {k: v for k, v in args.items() if v is not NO_VALUE}
            return fallback(func, (a,), args, name)
        n = _ddof(ddof, correction)

        def stat(x, axes, keep, compute, where):
            var = _var(x, axes, keep, compute, where, n, requested=dtype)
            if not root:
                return var
            return np.sqrt(in_mode(var, REPLICA))

        return _moment(func, stat, a, axis, dtype, out, keepdims, where, ddof=n)

    return impl


implements(np.var, spmd=True)(_variance_impl(np.var, root=False))
implements(np.std, spmd=True)(_variance_impl(np.std, root=True))


# Array API functions ------------------------------------------------------------------
# Each calls the NumPy function, so it takes the one registered path above (NumPy's stubs
# say an ndarray comes back; on a DistArray, `__array_function__` returns a DistArray).


def sum(
    x: DistArray, /, *, axis: Axes = None, dtype: DTypeLike | None = None, keepdims: bool = False
) -> DistArray:
    """The sum over `axis` (array API); partial (SUM mode) along split axes.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(6).reshape(2, 3), mdarray.Layout.block((2, 3), devices=[0, 1]))
    >>> s = mdarray.sum(x, axis=0)
    >>> s.mode, s.get()
    (mdarray.SUM, array([3, 5, 7]))
    """
    return np.sum(x, axis=axis, dtype=dtype, keepdims=keepdims)


def prod(
    x: DistArray, /, *, axis: Axes = None, dtype: DTypeLike | None = None, keepdims: bool = False
) -> DistArray:
    """The product over `axis` (array API); partial (PROD mode) along split axes.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(1, 5), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> int(mdarray.prod(x))
    24
    """
    return np.prod(x, axis=axis, dtype=dtype, keepdims=keepdims)


def max(x: DistArray, /, *, axis: Axes = None, keepdims: bool = False) -> DistArray:
    """The maximum over `axis` (array API); partial (MAX mode) along split axes.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([3, 9, 2, 5]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> m = mdarray.max(x)
    >>> m.mode, int(m)
    (mdarray.MAX, 9)
    """
    return np.max(x, axis=axis, keepdims=keepdims)


def min(x: DistArray, /, *, axis: Axes = None, keepdims: bool = False) -> DistArray:
    """The minimum over `axis` (array API); partial (MIN mode) along split axes.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([3, 9, 2, 5]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> int(mdarray.min(x))
    2
    """
    return np.min(x, axis=axis, keepdims=keepdims)


def mean(x: DistArray, /, *, axis: Axes = None, keepdims: bool = False) -> DistArray:
    """The arithmetic mean over `axis` (array API); partial (SUM mode) along split axes.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(4.0), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> float(mdarray.mean(x))
    1.5
    """
    return np.mean(x, axis=axis, keepdims=keepdims)


def var(
    x: DistArray,
    /,
    *,
    axis: Axes = None,
    correction: float | None = None,
    keepdims: bool = False,
    ddof: float | None = None,
) -> DistArray:
    """The variance over `axis` (array API), dividing by ``N - correction`` (NumPy's
    ``ddof=`` is taken too, for code written against NumPy's namespace).

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(4.0), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> float(mdarray.var(x, correction=1))
    1.6666666666666667
    """
    return np.var(x, axis=axis, keepdims=keepdims, **_correction(correction, ddof))


def _correction(correction, ddof) -> dict:
    if correction is not None and ddof is not None:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    value = ddof if correction is None else correction
    return {"correction": 0.0 if value is None else value}


def std(
    x: DistArray,
    /,
    *,
    axis: Axes = None,
    correction: float | None = None,
    keepdims: bool = False,
    ddof: float | None = None,
) -> DistArray:
    """The standard deviation over `axis` (array API), dividing by ``N - correction``
    (or NumPy's ``ddof=``).

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([1.0, 3.0]), mdarray.Layout.block((2,), devices=[0, 1]))
    >>> float(mdarray.std(x))
    1.0
    """
    return np.std(x, axis=axis, keepdims=keepdims, **_correction(correction, ddof))


def all(x: DistArray, /, *, axis: Axes = None, keepdims: bool = False) -> DistArray:
    """Whether every element over `axis` is true (array API); MIN mode along split axes.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([1, 2, 0]), mdarray.Layout.block((3,), devices=[0, 1]))
    >>> bool(mdarray.all(x))
    False
    """
    return np.all(x, axis=axis, keepdims=keepdims)


def any(x: DistArray, /, *, axis: Axes = None, keepdims: bool = False) -> DistArray:
    """Whether some element over `axis` is true (array API); MAX mode along split axes.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([0, 0, 3]), mdarray.Layout.block((3,), devices=[0, 1]))
    >>> bool(mdarray.any(x))
    True
    """
    return np.any(x, axis=axis, keepdims=keepdims)
