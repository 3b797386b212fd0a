"""NumPy's NaN-ignoring reductions and scans (``nansum`` ... ``nancumprod``), native.

Each works as NumPy's own does, on the chunks: NaNs are replaced per chunk (by 0 for
sums, 1 for products, -inf / +inf for max / argmax and min / argmin) and the plain
reduction runs through the reduction engine, so along split axes the result is a partial
(SUM, PROD, MAX, MIN) and nothing moves until it is combined. Integer and bool inputs
hold no NaN: they take the plain function's path (``nansum`` of ints is ``sum``).

What else each needs:

- ``nanmax``/``nanmin`` must tell an all-NaN slice (NaN, with NumPy's RuntimeWarning)
  from one whose extreme is -inf / +inf: per chunk, whether some slice is NaN everywhere
  in it. Where no chunk has one, nothing moves; else the per-chunk flags (bools, one
  partial per extra device) are combined and NaN written into every copy of those slices.
- ``nanmean`` divides the sums by the counts of non-NaN elements, both combined first:
  NumPy divides the sum, and each copy's quotient would round apart (``0 / 0`` is NaN
  where a slice has no number).
- ``nanvar``/``nanstd`` take NumPy's two passes: the mean (combined, result-sized), then
  a sum of squared deviations divided by ``count - ddof``.
- ``nanargmax``/``nanargmin`` raise on an all-NaN slice as NumPy does, then run
  ``argmax``/``argmin`` (their (value, index) pairs are combined at once).
- ``nancumsum``/``nancumprod`` scan the replaced chunks with ``cumsum``/``cumprod`` (the
  carries of earlier chunks move, never the input).
"""

from __future__ import annotations

import numpy as np

from mdarray._array.array import DistArray, in_mode, wrap
from mdarray._core.constants import NO_VALUE
from mdarray._core.modes import REPLICA
from mdarray._core.registry import implements
from mdarray._exec.chunkwise import map_chunks, write_out
from mdarray._movement.collectives import agree_any
from mdarray._ops.creation.data_type_functions import astype
from mdarray._ops.engine import reduction as _reduction
from mdarray._ops.engine.fallback import fallback
from mdarray._runtime.config import warn
from mdarray._storage.local import local_chunks

# Helpers ------------------------------------------------------------------------------


def _given(kwargs: dict) -> dict:
    return {k: v for k, v in kwargs.items() if v is not NO_VALUE}


def _has_nan(dtype) -> bool:
    return np.dtype(dtype).kind in "fc"


def _replaced(x: DistArray, value) -> DistArray:
    """`x` (combined) with each NaN replaced by `value`, per chunk; `x` itself where its
    dtype holds no NaN."""
    if not _has_nan(x.dtype):
        return x
    x = in_mode(x, REPLICA)
    xp = x.storage.backend.xp
    fill = x.dtype.type(value)
    return wrap(x.storage.map(lambda c: xp.where(xp.isnan(c), fill, c), dtype=x.dtype))


def _not_nan_count(x: DistArray, axes: tuple, keepdims: bool, where) -> DistArray:
    """How many non-NaN elements (not masked out by `where`) each result element reduces:
    the partial counts combined (one partial per extra device)."""
    xp = x.storage.backend.xp
    valid = wrap(x.storage.map(lambda c: ~xp.isnan(c), dtype=np.dtype(bool)))
    counts = _reduction.reduce(valid, np.add, axes, keepdims, np.intp, dtype=np.intp, where=where)
    return in_mode(counts, REPLICA)


def _any(x: DistArray, skip=()) -> bool:
    """Whether some chunk of `x` holds a true element (chunk numbers in `skip` aside):
    one scalar per chunk reaches the host, and the processes of an SPMD run agree on
    the answer (collective)."""
    return agree_any(
        any(
            bool(buffer.any())
            for k, _, buffer in local_chunks(x.storage)
            if k not in skip and buffer.size
        )
    )


def _all_nan(x: DistArray, axes: tuple, keepdims: bool, where) -> DistArray | None:
    """Where the slices of REPLICA `x` along `axes` are NaN (or masked out) everywhere, as
    REPLICA flags; None where no slice is.

    A slice NaN everywhere is so in every chunk holding part of it: where no chunk has
    such a slice, the per-chunk flags are not combined and nothing moves."""
    xp = x.storage.backend.xp
    nan = wrap(x.storage.map(xp.isnan, dtype=np.dtype(bool)))
    flags = _reduction.reduce(nan, np.logical_and, axes, keepdims, np.bool_, where=where)
    # A chunk whose part of the reduced axes is empty holds the identity (True) there;
    # where a device's chunks were reduced as one block, its result is such only where
    # every one of its chunks is.
    boxes, devices = x.layout.boxes, x.layout.chunk_devices
    empty = {k for k, box in enumerate(boxes) if any(len(box[a]) == 0 for a in axes)}
    if len(flags.layout.chunks) != len(boxes):
        full = {devices[k] for k in range(len(boxes)) if k not in empty}
        empty = {k for k, d in enumerate(flags.layout.chunk_devices) if d not in full}
    if not _any(flags, empty):
        return None
    flags = in_mode(flags, REPLICA)
    return flags if _any(flags) else None


def _set_nan(result: DistArray, flags: DistArray) -> DistArray:
    """`result` with NaN in every copy of the flagged elements (the value NaN in every
    mode: NaN propagates through the combining ufunc)."""
    xp = result.storage.backend.xp
    nan = result.dtype.type(np.nan)
    chunks = map_chunks(result, lambda r, f: xp.where(f, nan, r), flags, dtype=result.dtype)
    return wrap(chunks, result.mode)


def _divide_by_count(total: DistArray, count: DistArray) -> DistArray:
    """`total` / `count` (REPLICA, of total's layout) per copy, as NumPy's
    ``_divide_by_count``: in total's dtype, 0 / 0 giving NaN without a warning.

    A partial total is combined first: a quotient of each copy rounds apart (the sum of
    the quotients is not NumPy's quotient of the sum), and a complex one of a zero copy
    may flip the zero's sign."""
    total = in_mode(total, REPLICA)
    xp = total.storage.backend.xp
    dtype = total.dtype

    def divide(t, c):
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.true_divide(t, c).astype(dtype, copy=False)

    return wrap(map_chunks(total, divide, count, dtype=dtype), total.mode)


def _drop_axes(x: DistArray, axes: tuple) -> DistArray:
    """`x` reduced with kept dims, without them (a view per chunk; the mode stays)."""
    plan, _ = _reduction.reduce_plan(x.layout, axes, False)
    shapes = plan.chunk_shapes
    return wrap(x.storage.view(plan, lambda t, c: c.reshape(shapes[t])), x.mode)


def _on_host(value):
    return value.get() if isinstance(value, DistArray) else value


def _front(func, a: DistArray, axis, out, kwargs: dict, stat):
    """Shared front end: NumPy checks the arguments on a probe; an empty input gives
    NumPy's own result (and warnings) on an empty host array, as nothing is there to
    move; else ``stat(x, axes, keepdims, where)`` on the combined input; then ``out=``."""
    out = _reduction.unwrap_out(out)
    kwargs = _given(kwargs)
    checked = _reduction.check_with_probe(func, a, out, dict(kwargs, axis=axis))
    axes = _reduction.normalize_axes(axis, a.ndim)
    keepdims = bool(kwargs.get("keepdims", False))
    shape = _reduction.reduced_shape(a.shape, axes, keepdims)
    if a.size == 0:
        host_kwargs = {k: _on_host(v) for k, v in kwargs.items()}
        value = np.asarray(func(np.empty(a.shape, a.dtype), axis=axis, **host_kwargs))
        result = _reduction.filled(a, shape, value, checked.dtype)
    else:
        x = in_mode(a, REPLICA)
        result = stat(x, axes, keepdims, kwargs.get("where", True))
        result = astype(result, checked.dtype, copy=False)
    return result if out is None else write_out(out, result)


def _warn(message: str) -> None:
    """NumPy's RuntimeWarning, attributed to the first caller outside mdarray (as
    NumPy's points at its caller's line)."""
    warn(message, RuntimeWarning)


# nansum, nanprod ------------------------------------------------------------------------


def _nan_reducer(func, ufunc, value):
    """NumPy's `func` (``np.nansum``): `ufunc`'s reduction of `x` with NaNs as `value`."""
    name = f"numpy.{func.__name__}"

    def impl(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE,
             where=NO_VALUE):  # fmt: skip
        kwargs = {"dtype": dtype, "keepdims": keepdims, "initial": initial, "where": where}
        if not isinstance(a, DistArray):
            return fallback(func, (a,), _given(dict(kwargs, axis=axis, out=out)), name)
        if not _has_nan(a.dtype):
            return _reduction.reduction(func, ufunc, a, axis, out, **kwargs)
        # Per chunk the backend's nansum (one pass); the copies of a partial input are
        # combined first (a NaN copy does not make the value NaN).
        x = in_mode(a, REPLICA)
        return _reduction.reduction(func, ufunc, x, axis, out, skip_nan=True, **kwargs)

    return impl


_nansum = _nan_reducer(np.nansum, np.add, 0)
_nanprod = _nan_reducer(np.nanprod, np.multiply, 1)


@implements(np.nansum, spmd=True)
def _np_nansum(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE,
               where=NO_VALUE):  # fmt: skip
    """``numpy.nansum``: the sum with NaNs as 0; partial (SUM) along split axes.

    Nothing moves until the partial sums are combined; combining moves one partial per
    extra device.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([1.0, np.nan, 2.0, 4.0]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> s = np.nansum(x)
    >>> s.mode, float(s)
    (mdarray.SUM, 7.0)
    """
    return _nansum(a, axis, dtype, out, keepdims, initial, where)


@implements(np.nanprod, spmd=True)
def _np_nanprod(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE,
                where=NO_VALUE):  # fmt: skip
    """``numpy.nanprod``: the product with NaNs as 1; partial (PROD) along split axes.

    Nothing moves until the partial products are combined (one partial per extra device).

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([2.0, np.nan, 3.0, 4.0]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> float(np.nanprod(x))
    24.0
    """
    return _nanprod(a, axis, dtype, out, keepdims, initial, where)


# nanmax, nanmin -------------------------------------------------------------------------


def _nan_extreme(func, ufunc, nan_ufunc, value):
    """NumPy's `func` (``np.nanmax``): `ufunc` (``maximum``) over `x` with NaNs as `value`
    (-inf), NaN where a slice is NaN everywhere. Complex inputs reduce by `nan_ufunc`
    (``fmax``), which has neither a mode nor an identity there: the engine reshards them
    so that the reduced axes are whole in each chunk (device to device, not to the host)."""
    name = f"numpy.{func.__name__}"

    def impl(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE):
        kwargs = {"keepdims": keepdims, "initial": initial, "where": where}
        if not isinstance(a, DistArray):
            return fallback(func, (a,), _given(dict(kwargs, axis=axis, out=out)), name)
        if a.dtype.kind in "biu":
            return _reduction.reduction(func, ufunc, a, axis, out, **kwargs)
        # fmax ignores a NaN initial: as good as none.
        nan_initial = initial is not NO_VALUE and bool(np.isnan(initial))
        start = NO_VALUE if nan_initial else initial

        def stat(x, axes, keep, where):
            if x.dtype.kind == "c":
                result = _reduction.reduce(
                    x, nan_ufunc, axes, keep, x.dtype, where=where, initial=start
                )
                if _any(wrap(result.storage.map(result.storage.backend.xp.isnan))):
                    _warn("All-NaN slice encountered")
                return result
            result = _reduction.reduce(
                _replaced(x, value), ufunc, axes, keep, x.dtype, where=where, initial=start
            )
            if start is not NO_VALUE:
                return result  # the initial stands in every slice: none is NaN
            flags = _all_nan(x, axes, keep, where)
            if flags is None:
                return result
            _warn("All-NaN slice encountered")
            return _set_nan(result, flags)

        return _front(func, a, axis, out, kwargs, stat)

    return impl


_nanmax = _nan_extreme(np.nanmax, np.maximum, np.fmax, -np.inf)
_nanmin = _nan_extreme(np.nanmin, np.minimum, np.fmin, np.inf)


@implements(np.nanmax, spmd=True)
def _np_nanmax(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE):
    """``numpy.nanmax``: the maximum ignoring NaNs; partial (MAX) along split axes.

    An all-NaN slice gives NaN and NumPy's RuntimeWarning. Nothing moves where no chunk
    holds a slice that is NaN everywhere in it; else those per-chunk flags (bools) are
    combined, one partial per extra device.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([1.0, np.nan, 5.0, 2.0]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> m = np.nanmax(x)
    >>> m.mode, float(m)
    (mdarray.MAX, 5.0)
    """
    return _nanmax(a, axis, out, keepdims, initial, where)


@implements(np.nanmin, spmd=True)
def _np_nanmin(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE):
    """``numpy.nanmin``: the minimum ignoring NaNs; partial (MIN) along split axes.

    All-NaN slices and data movement as `numpy.nanmax`.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([1.0, np.nan, 5.0, -2.0]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> float(np.nanmin(x))
    -2.0
    """
    return _nanmin(a, axis, out, keepdims, initial, where)


# nanargmax, nanargmin -------------------------------------------------------------------


def _nan_arg(func, plain, value):
    """NumPy's `func` (``np.nanargmax``): ValueError on an all-NaN slice, else `plain`
    (``np.argmax``) of `x` with NaNs as `value`."""
    name = f"numpy.{func.__name__}"

    def impl(a, axis=None, out=None, *, keepdims=NO_VALUE):
        kwargs = _given({"keepdims": keepdims})
        if not isinstance(a, DistArray):
            return fallback(func, (a,), dict(kwargs, axis=axis, out=out), name)
        if _has_nan(a.dtype):
            _reduction.check_with_probe(
                func, a, _reduction.unwrap_out(out), dict(kwargs, axis=axis)
            )
            a = in_mode(a, REPLICA)
            axes = _reduction.normalize_axes(axis, a.ndim)
            if a.size and _all_nan(a, axes, False, True) is not None:
                raise ValueError("All-NaN slice encountered")
            a = _replaced(a, value)
        return plain(a, axis=axis, out=out, **kwargs)

    return impl


_nanargmax = _nan_arg(np.nanargmax, np.argmax, -np.inf)
_nanargmin = _nan_arg(np.nanargmin, np.argmin, np.inf)


@implements(np.nanargmax, spmd=True)
def _np_nanargmax(a, axis=None, out=None, *, keepdims=NO_VALUE):
    """``numpy.nanargmax``: the index of the maximum ignoring NaNs (ValueError on an
    all-NaN slice, as NumPy).

    The all-NaN check moves what `numpy.nanmax`'s does; the chunks' (value, index) pairs
    are then combined, one result-sized pair per extra device.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([1.0, np.nan, 5.0, 2.0]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> int(np.nanargmax(x))
    2
    """
    return _nanargmax(a, axis, out, keepdims=keepdims)


@implements(np.nanargmin, spmd=True)
def _np_nanargmin(a, axis=None, out=None, *, keepdims=NO_VALUE):
    """``numpy.nanargmin``: the index of the minimum ignoring NaNs (ValueError on an
    all-NaN slice); data movement as `numpy.nanargmax`.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([np.nan, 3.0, 5.0, 2.0]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> int(np.nanargmin(x))
    3
    """
    return _nanargmin(a, axis, out, keepdims=keepdims)


# nanmean, nanvar, nanstd ----------------------------------------------------------------


def _nanmean(x, axes, keepdims, where, dtype) -> DistArray:
    """Partial sums of the non-NaN elements over their combined counts (partial stays)."""
    count = _not_nan_count(x, axes, keepdims, where)
    sum_dtype = x.dtype if dtype is None else np.dtype(dtype)
    total = _reduction.reduce(
        x, np.add, axes, keepdims, sum_dtype, dtype=dtype, where=where, skip_nan=_has_nan(x.dtype)
    )
    if _any(wrap(count.storage.map(lambda c: c == 0))):
        _warn("Mean of empty slice")
    return _divide_by_count(total, count)


@implements(np.nanmean, spmd=True)
def _np_nanmean(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE):
    """``numpy.nanmean``: the mean of the non-NaN elements.

    The sums and the counts of non-NaN elements are combined (one result-sized partial
    per extra device each), then divided, as NumPy divides the sum. An empty slice gives
    NaN and NumPy's warning.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([1.0, np.nan, 2.0, 6.0]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> m = np.nanmean(x)
    >>> m.mode, float(m)
    (mdarray.REPLICA, 3.0)
    """
    kwargs = {"dtype": dtype, "keepdims": keepdims, "where": where}
    if not isinstance(a, DistArray):
        return fallback(np.nanmean, (a,), _given(dict(kwargs, axis=axis, out=out)), "numpy.nanmean")
    if not _has_nan(a.dtype) and a.size:  # (an empty input: NumPy's warnings below)
        return np.mean(a, axis=axis, out=out, **_given(kwargs))

    def stat(x, axes, keep, where):
        return _nanmean(x, axes, keep, where, dtype)

    return _front(np.nanmean, a, axis, out, kwargs, stat)


def _squared_deviations(xp):
    """NumPy's nanvar per element: ``x - mean`` in x's dtype, 0 at NaNs, ``|d|**2``."""

    def squares(chunk, mean):
        d = xp.subtract(chunk, mean).astype(chunk.dtype, copy=False)
        d = xp.where(xp.isnan(chunk), chunk.dtype.type(0), d)
        if d.dtype.kind == "c":
            return (d * d.conj()).real
        return d * d

    return squares


def _nanvar(x, axes, keepdims, where, dtype, ddof) -> DistArray:
    """NumPy's two passes: the mean of the non-NaN elements (combined, result-sized),
    then partial sums of squared deviations over ``count - ddof`` (NaN where <= 0)."""
    xp = x.storage.backend.xp
    count = _not_nan_count(x, axes, True, where)
    sum_dtype = x.dtype if dtype is None else np.dtype(dtype)
    total = _reduction.reduce(
        x, np.add, axes, True, sum_dtype, dtype=dtype, where=where, skip_nan=_has_nan(x.dtype)
    )
    mean = in_mode(_divide_by_count(total, count), REPLICA)
    squares = wrap(map_chunks(x, _squared_deviations(xp), mean))
    var_dtype = squares.dtype if dtype is None else np.dtype(dtype)
    var = _reduction.reduce(squares, np.add, axes, True, var_dtype, dtype=dtype, where=where)
    dof = wrap(count.storage.map(lambda c: c - ddof))
    if ddof != int(ddof):
        # dof may lie in (0, 1): a copy over it may overflow where the value does not.
        var = in_mode(var, REPLICA)
    bad = wrap(dof.storage.map(lambda d: d <= 0))
    var = _divide_by_count(var, dof)
    if _any(bad):
        _warn("Degrees of freedom <= 0 for slice.")
        var = _set_nan(var, bad)
    return var if keepdims else _drop_axes(var, axes)


def _nan_variance(func, root: bool):
    name = f"numpy.{func.__name__}"

    def impl(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NO_VALUE, *, where=NO_VALUE,
             mean=NO_VALUE, correction=NO_VALUE):  # fmt: skip
        kwargs = {"dtype": dtype, "ddof": ddof, "keepdims": keepdims, "where": where}
        kwargs.update(mean=mean, correction=correction)
        if not isinstance(a, DistArray) or (mean is not NO_VALUE and _has_nan(a.dtype)):
            # A given mean is rare: NumPy computes with it.
            return fallback(func, (a,), _given(dict(kwargs, axis=axis, out=out)), name)
        if not _has_nan(a.dtype) and (a.size or mean is not NO_VALUE):
            plain = np.std if root else np.var
            return plain(a, axis=axis, out=out, **_given(kwargs))
        if correction is not NO_VALUE:
            if ddof != 0:
                raise ValueError("ddof and correction can't be provided simultaneously.")
            ddof = correction
        kwargs = {"dtype": dtype, "ddof": ddof, "keepdims": keepdims, "where": where}

        def stat(x, axes, keep, where):
            var = _nanvar(x, axes, keep, where, dtype, ddof)
            return np.sqrt(in_mode(var, REPLICA)) if root else var

        return _front(func, a, axis, out, kwargs, stat)

    return impl


_nanvar_impl = _nan_variance(np.nanvar, root=False)
_nanstd_impl = _nan_variance(np.nanstd, root=True)


@implements(np.nanvar, spmd=True)
def _np_nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NO_VALUE, *, where=NO_VALUE,
               mean=NO_VALUE, correction=NO_VALUE):  # fmt: skip
    """``numpy.nanvar``: the variance of the non-NaN elements, dividing by
    ``count - ddof`` (NaN and NumPy's warning where that is <= 0); partial (SUM) along
    split axes.

    The counts and sums for the mean are combined (result-sized, one partial per extra
    device); the sums of squared deviations stay partial. ``mean=`` uses the fallback.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([1.0, np.nan, 3.0, 5.0]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> float(np.nanvar(x, ddof=1))
    4.0
    """
    return _nanvar_impl(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                        correction=correction)  # fmt: skip


@implements(np.nanstd, spmd=True)
def _np_nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NO_VALUE, *, where=NO_VALUE,
               mean=NO_VALUE, correction=NO_VALUE):  # fmt: skip
    """``numpy.nanstd``: the square root of `numpy.nanvar`, whose partial result is
    combined first (one result-sized partial per extra device).

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([1.0, np.nan, 3.0, np.nan]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> float(np.nanstd(x))
    1.0
    """
    return _nanstd_impl(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                        correction=correction)  # fmt: skip


# nancumsum, nancumprod ------------------------------------------------------------------


@implements(np.nancumsum, spmd=True)
def _np_nancumsum(a, axis=None, dtype=None, out=None):
    """``numpy.nancumsum``: the cumulative sum with NaNs as 0, a scan with carries
    between chunks (one result row per earlier chunk moves, never the input).

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([1.0, np.nan, 2.0, 4.0]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> np.nancumsum(x).get()
    array([1., 1., 3., 7.])
    """
    if not isinstance(a, DistArray):
        return fallback(
            np.nancumsum, (a,), {"axis": axis, "dtype": dtype, "out": out}, "numpy.nancumsum"
        )
    return np.cumsum(_replaced(a, 0), axis=axis, dtype=dtype, out=out)


@implements(np.nancumprod, spmd=True)
def _np_nancumprod(a, axis=None, dtype=None, out=None):
    """``numpy.nancumprod``: the cumulative product with NaNs as 1 (a scan with carries,
    as `numpy.nancumsum`).

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([2.0, np.nan, 3.0, 4.0]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> np.nancumprod(x).get()
    array([ 2.,  2.,  6., 24.])
    """
    if not isinstance(a, DistArray):
        return fallback(
            np.nancumprod, (a,), {"axis": axis, "dtype": dtype, "out": out}, "numpy.nancumprod"
        )
    return np.cumprod(_replaced(a, 1), axis=axis, dtype=dtype, out=out)
