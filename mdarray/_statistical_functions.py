"""Statistical functions: reductions (sum prod max min mean var std all any) and scans.

Every reduction goes through `_reduction.reduction`: along axes that chunks split, the
result is partial (SUM for sums and means, MAX/MIN for max/min/any/all) and nothing moves.
``var``/``std`` compute the mean first (combined: it is result-sized, the input does not
move), then a partial SUM of squared deviations: the same two passes as NumPy, so the
values agree with NumPy's closely; ``std`` needs the combined variance for its square
root. Scans (``cumsum``, ``ufunc.accumulate``) scan each chunk locally and add in the
carry of the chunks before it along the axis (one result-sized piece per earlier chunk).
"""

from __future__ import annotations

import builtins
import operator
from typing import Any, cast

import numpy as np
from numpy.typing import DTypeLike

from . import _reduction, _regions
from ._array import Axes, DistArray, in_mode, laid_out, wrap
from ._chunkwise import map_chunks, write_out
from ._data_type_functions import astype
from ._fallback import fallback
from ._fetch import fetch_pieces
from ._layout import Layout
from ._mode_rules import REORDERABLE
from ._modes import REPLICA
from ._plan_cache import plan_cache
from ._processes import Remote, is_local
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


# Scans ------------------------------------------------------------------------------


def _flatten(x: DistArray) -> DistArray:
    """`x` as 1-D in C order: blocks of whole rows are contiguous runs of the flat array,
    so a reshard to row blocks and a local reshape per chunk suffice."""
    if x.ndim == 1:
        return x
    if x.ndim == 0:
        layout = Layout(
            (1,), {d: [slice(0, 1)] * x.layout.chunk_devices.count(d) for d in x.devices}
        )
        return wrap(x.storage.view(layout, lambda _, c: c.reshape(1)), x.mode)
    rows = laid_out(x, Layout.block(x.shape, axis=0, devices=x.devices))
    row = int(np.prod(x.shape[1:], dtype=np.int64))
    index_map: dict = {}
    for box, device in zip(rows.layout.boxes, rows.layout.chunk_devices):
        index_map.setdefault(device, []).append(slice(box[0].start * row, box[0].stop * row))
    layout = Layout((x.size,), index_map)
    return wrap(rows.storage.view(layout, lambda _, c: c.reshape(-1)), rows.mode)


@plan_cache
def _carry_plan(layout: Layout, axis: int) -> tuple:
    """Per chunk k: ``(j, j_index, k_index)`` for each chunk j wholly before k along
    `axis` that shares other-axis positions with it (indices into the axis-collapsed
    boxes). With no overlaps these pieces cover exactly the positions before chunk k."""
    collapsed = [(*box[:axis], range(1), *box[axis + 1 :]) for box in layout.boxes]
    plan = []
    for k, box in enumerate(layout.boxes):
        pieces = []
        for j, other in enumerate(layout.boxes):
            if (
                j == k
                or not len(box[axis])
                or not len(other[axis])
                or other[axis][-1] >= box[axis][0]
            ):
                continue
            common = _regions.intersect(collapsed[j], collapsed[k])
            if common is not None:
                pieces.append(
                    (
                        j,
                        _regions.local_box_index(collapsed[j], common),
                        _regions.local_box_index(collapsed[k], common),
                    )
                )
        plan.append(tuple(pieces))
    return tuple(plan)


def _scan_ready(layout: Layout, axis: int) -> bool:
    return not layout.has_overlaps and builtins.all(
        box[axis].step == 1 or len(box[axis]) <= 1 for box in layout.boxes
    )


def scan(x: DistArray, ufunc, axis: int, dtype, result_dtype, include_initial: bool = False):
    """`ufunc` accumulated along `axis`: local scans plus the carry of earlier chunks."""
    result_dtype = np.dtype(result_dtype)
    if x.mode.is_partial:
        x = x.change_mode(REPLICA)
    value = _reduction.identity(ufunc, result_dtype)
    reorderable = ufunc in REORDERABLE and value is not None
    if not reorderable:
        x = x.reshard(_reduction.whole_layout(x, (axis,)))
    elif not _scan_ready(x.layout, axis):
        x = x.reshard(Layout.block(x.shape, axis=axis, devices=x.devices))
    backend = x.storage.backend
    scans = x.storage.map(
        lambda chunk: backend.accumulate(ufunc, chunk, axis, dtype), dtype=result_dtype
    )
    if reorderable:
        scans = _add_carries(scans, ufunc, axis, value)
    result = wrap(scans)
    if include_initial:
        result = _with_initial_slice(result, axis, value)
    return result


def _add_carries(chunks, ufunc, axis, value):
    """Per chunk, its local scan combined with the totals of the chunks before it (their
    last slices along `axis`, fetched in one step)."""
    layout, backend, dtype = chunks.layout, chunks.backend, chunks.dtype
    combine = getattr(backend.xp, ufunc.__name__)
    plan = _carry_plan(layout, axis)
    lengths = [len(box[axis]) for box in layout.boxes]
    wanted = [
        (j, (*j_index[:axis], slice(lengths[j] - 1, lengths[j]), *j_index[axis + 1 :]), device)
        for pieces, device in zip(plan, layout.chunk_devices)
        for j, j_index, _ in pieces
    ]
    totals = iter(fetch_pieces(chunks, wanted))
    scans = chunks.buffers
    out = list(scans)
    for k, (pieces, device) in enumerate(zip(plan, layout.chunk_devices)):
        got = [next(totals) for _ in pieces]
        if not pieces or not is_local(device):
            continue
        shape = (*layout.chunk_shapes[k][:axis], 1, *layout.chunk_shapes[k][axis + 1 :])
        carry = backend.full(shape, value, dtype, device)
        with backend.on(device):
            for (_, _, k_index), total in zip(pieces, got):
                part = carry[k_index]
                combine(part, total, out=part)
            out[k] = combine(scans[k], carry)
    return chunks.derive(buffers=out)


def _with_initial_slice(x: DistArray, axis: int, value) -> DistArray:
    """`x` with one leading slice of `value` along `axis` (``include_initial``): the
    chunks move up by one and a new chunk holds the slice, so nothing is copied."""
    shape = (*x.shape[:axis], x.shape[axis] + 1, *x.shape[axis + 1 :])
    backend = x.storage.backend
    first = x.layout.chunk_devices[0]
    pieces = [
        (first, tuple(slice(0, 1) if a == axis else slice(None) for a in range(x.ndim)), None)
    ]
    for (device, index), chunk in zip(x.layout.chunks, x.storage.buffers):
        moved = index[axis]
        shifted = slice(moved.start + 1, moved.stop + 1, moved.step)
        pieces.append((device, (*index[:axis], shifted, *index[axis + 1 :]), chunk))
    index_map: dict = {}
    for device, index, _ in pieces:
        index_map.setdefault(device, []).append(index)
    layout = Layout(shape, index_map)
    slab = tuple(1 if a == axis else n for a, n in enumerate(shape))
    fill: Any = Remote(slab, x.dtype, first)  # where another process holds `first`
    if is_local(first):
        fill = backend.full(slab, value, x.dtype, first)
    pieces[0] = (first, pieces[0][1], fill)
    data = [chunk for device in index_map for d, _, chunk in pieces if d == device]
    return wrap(x.storage.derive(layout, data), x.mode)


def _scanner(func, ufunc, *, accumulate: bool = False, include_initial: bool = False):
    """The DistArray implementation of NumPy's scan `func` (``np.cumsum`` ...)."""
    name = getattr(func, "__name__", "accumulate")

    def impl(a, axis, dtype, out, initial: bool = False):
        args = {"axis": axis, "dtype": dtype, "out": out}
        if include_initial:
            args["include_initial"] = initial
        if not isinstance(a, DistArray):
            return fallback(func, (a,), args, f"numpy.{name}")
        out = _reduction.unwrap_out(out)
        probe_args = {k: v for k, v in args.items() if k != "out"}
        checked = _reduction.check_with_probe(func, a, out, probe_args)
        x = a
        if (axis is None or a.ndim == 0) and not accumulate:
            x, axis = _flatten(a), 0
        axis = operator.index(axis) % builtins.max(x.ndim, 1)
        if x.size == 0:
            shape = list(x.shape)
            shape[axis] += int(bool(initial))
            result = _reduction.filled(x, tuple(shape), checked, checked.dtype)
        else:
            local_dtype = dtype if accumulate else checked.dtype
            result = scan(x, ufunc, axis, local_dtype, checked.dtype, bool(initial))
        return result if out is None else write_out(out, result)

    return impl


_cumsum = _scanner(np.cumsum, np.add)
_cumprod = _scanner(np.cumprod, np.multiply)
_cumulative_sum = _scanner(np.cumulative_sum, np.add, include_initial=True)
_cumulative_prod = _scanner(np.cumulative_prod, np.multiply, include_initial=True)


@implements(np.cumsum, spmd=True)
def _np_cumsum(a, axis=None, dtype=None, out=None):
    return _cumsum(a, axis, dtype, out)


@implements(np.cumprod, spmd=True)
def _np_cumprod(a, axis=None, dtype=None, out=None):
    return _cumprod(a, axis, dtype, out)


@implements(np.cumulative_sum, spmd=True)
def _np_cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative_sum(x, axis, dtype, out, include_initial)


@implements(np.cumulative_prod, spmd=True)
def _np_cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative_prod(x, axis, dtype, out, include_initial)


@implements_ufunc_method("accumulate", spmd=True)
def ufunc_accumulate(ufunc, inputs, kwargs):
    """``np.<ufunc>.accumulate`` of a DistArray (a scan with carries between chunks)."""
    kwargs = dict(kwargs)
    (array,) = inputs
    func = _scanner(ufunc.accumulate, ufunc, accumulate=True)
    return func(array, kwargs.pop("axis", 0), kwargs.pop("dtype", None), kwargs.pop("out", None))


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


def cumulative_sum(
    x: DistArray,
    /,
    *,
    axis: int | None = None,
    dtype: DTypeLike | None = None,
    include_initial: bool = False,
) -> DistArray:
    """The cumulative sum along `axis` (array API): a scan with carries between chunks.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(1, 5), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> mdarray.cumulative_sum(x, include_initial=True).get()
    array([ 0,  1,  3,  6, 10])
    """
    return cast(
        DistArray,
        np.cumulative_sum(x, axis=axis, dtype=dtype, include_initial=include_initial),
    )


def cumulative_prod(
    x: DistArray,
    /,
    *,
    axis: int | None = None,
    dtype: DTypeLike | None = None,
    include_initial: bool = False,
) -> DistArray:
    """The cumulative product along `axis` (array API): a scan with carries between chunks.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(1, 5), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> mdarray.cumulative_prod(x).get()
    array([ 1,  2,  6, 24])
    """
    return cast(
        DistArray,
        np.cumulative_prod(x, axis=axis, dtype=dtype, include_initial=include_initial),
    )
