"""NumPy's ``mean``, ``var`` and ``std`` of DistArrays (the array API's functions of
these names, in `_statistical_functions`, call them).

A mean is a partial SUM (`_reduction`) divided by the count: on each chunk where the
count is a power of two (the quotients then round nothing), else after the partials
combine, as NumPy divides the sum. ``var``/``std`` compute the mean first (combined: it is
result-sized, the input does not move), then a partial SUM of squared deviations: the
same two passes as NumPy, so the values agree with NumPy's closely; ``std`` needs the
combined variance for its square root.
"""

from __future__ import annotations

import builtins

import numpy as np

from mdarray._array.array import DistArray, in_mode, wrap
from mdarray._core.constants import NO_VALUE
from mdarray._core.decided import bound, decides, reader
from mdarray._core.modes import REPLICA
from mdarray._core.registry import implements
from mdarray._exec.chunkwise import map_chunks, write_out
from mdarray._ops.creation.data_type_functions import astype
from mdarray._ops.engine import reduction as _reduction
from mdarray._ops.engine.fallback import fallback


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
    """`x` / `divisor` per chunk, the partials of a SUM combined first: NumPy divides the
    sum, and no float SUM scales copy by copy (see `_core.mode_rules`)."""
    xp = x.storage.backend.xp
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


@decides(np.mean)
def _decide_mean(args, kwargs):
    """A call without ``out`` or ``where`` runs its plan (`_reduction.mean_plan`)."""
    given = bound(_np_mean, args, kwargs)
    if given is None or type(given["a"]) is not DistArray or given["out"] is not None:
        return None
    a = given["a"]
    known = _reduction.mean_plan(
        a, given["axis"], given["dtype"], given["keepdims"], given["where"]
    )
    if known is None:
        return None
    read = reader(_np_mean, args, kwargs, "a")
    run = _reduction.run_mean
    return lambda args, kwargs: run(read(args, kwargs), known)


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
