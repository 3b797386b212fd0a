"""Statistical functions: reductions (sum prod max min mean var std all any) and scans.

Every reduction goes through `_reduction.reduction`: along axes that chunks split, the
result is partial (SUM for sums and means, MAX/MIN for max/min/any/all) and nothing moves.
NumPy's ``mean``/``var``/``std`` are `_moments`'; the array API's functions here call
them. Scans (``cumsum``, ``ufunc.accumulate``) live in `_scans`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import DTypeLike

from mdarray._array.array import Axes, DistArray
from mdarray._core.constants import NO_VALUE
from mdarray._core.decided import bound, decides, reader, same_as
from mdarray._core.registry import implements, implements_ufunc_method
from mdarray._ops.engine import reduction as _reduction
from mdarray._ops.engine.fallback import fallback

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


def _reduction_decider(func, ufunc, impl):
    """The decider (`mdarray._core.decided`) of `impl`, the implementation of `func`: a call
    without ``out``, ``where`` or ``initial`` on a DistArray runs its chunk plan
    (`_reduction.call_plan`) directly."""

    def decide(args, kwargs):
        given = bound(impl, args, kwargs)
        if given is None or type(given["a"]) is not DistArray or given["out"] is not None:
            return None
        where, initial = given["where"], given.get("initial", NO_VALUE)
        if (where is not NO_VALUE and where is not True) or initial is not NO_VALUE:
            return None
        dtype = given.get("dtype")
        plain = {"keepdims": given["keepdims"], "where": where}
        if "dtype" in given:
            plain["dtype"] = dtype
        known = _reduction.call_plan(func, ufunc, given["a"], given["axis"], plain)
        if known is None:
            return None
        axes, result_dtype, plan = known
        read = reader(impl, args, kwargs, "a")
        run = _reduction.run_chunk_plan

        def runner(args, kwargs):
            return run(read(args, kwargs), plan, ufunc, axes, dtype, result_dtype, False)

        return runner

    return decide


for _funcs, _ufunc, _make in (
    ((np.sum,), np.add, _reducer),
    ((np.prod,), np.multiply, _reducer),
    ((np.max, np.amax), np.maximum, _max_like),
    ((np.min, np.amin), np.minimum, _max_like),
    ((np.all,), np.logical_and, _all_like),
    ((np.any,), np.logical_or, _all_like),
):
    _impl = implements(*_funcs, spmd=True)(_make(_funcs[0], _ufunc))
    decides(*_funcs)(_reduction_decider(_funcs[0], _ufunc, _impl))


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


for _public, _func in (
    (sum, np.sum),
    (prod, np.prod),
    (max, np.max),
    (min, np.min),
    (mean, np.mean),
    (all, np.all),
    (any, np.any),
):
    same_as(_public, _func)
