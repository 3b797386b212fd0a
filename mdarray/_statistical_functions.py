"""Statistical functions: reductions (sum prod max min mean var std all any) and scans.

Every reduction goes through `_reduction.reduction`: along axes that chunks split, the
result is partial (SUM for sums and means, MAX/MIN for max/min/any/all) and nothing moves.
NumPy's ``mean``/``var``/``std`` are `_moments`'; the array API's functions here call
them. Scans (``cumsum``, ``ufunc.accumulate``) scan each chunk locally and add in the
carry of the chunks before it along the axis (one result-sized piece per earlier chunk).
"""

from __future__ import annotations

import builtins
import operator
from typing import Any, cast

import numpy as np
from numpy.typing import DTypeLike

from . import _reduction, _regions
from ._array import Axes, DistArray, laid_out, wrap
from ._chunkwise import write_out
from ._decided import bound, decides, reader, same_as
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


def _reduction_decider(func, ufunc, impl):
    """The decider (`mdarray._decided`) of `impl`, the implementation of `func`: a call
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
