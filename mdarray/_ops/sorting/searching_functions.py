"""Searching functions: argmax, argmin, where, count_nonzero, nonzero and searchsorted.

Each chunk finds its best value and that value's *global* index along the axis (or the
flat index for ``axis=None``). Chunks that split the axis then exchange these
(value, index) pairs, which are result-sized, never the input: a pair wins with the
better value, ties going to the lower index like NumPy, and a NaN beating every number
(the first NaN wins, as in NumPy).
"""

from __future__ import annotations

import builtins
import operator
from typing import NamedTuple, cast

import numpy as np

from mdarray._array.array import DistArray, in_mode, wrap
from mdarray._backends.backend import Backend
from mdarray._core.constants import NO_VALUE
from mdarray._core.decided import bound, decides, reader, same_as
from mdarray._core.modes import MAX, MIN, REPLICA
from mdarray._core.plan_cache import plan_cache
from mdarray._core.registry import implements
from mdarray._exec.chunkwise import (
    aligned,
    backend_of,
    block_layout,
    blocks,
    map_elements,
    result_layout,
    shape_of,
    write_out,
)
from mdarray._exec.operands import stand_in
from mdarray._movement import redistribute as _redistribute
from mdarray._movement.collectives import several
from mdarray._movement.fetch import fetch_pieces
from mdarray._ops.creation.creation_functions import asarray
from mdarray._ops.engine import reduction as _reduction
from mdarray._ops.engine.fallback import fallback
from mdarray._ops.engine.ufunc_plans import run, where_call, where_plan
from mdarray._ops.indexing.advanced import nonzero as native_nonzero
from mdarray._storage import local as _this_process
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import local_chunks, placed

from .sorting_functions import runs, to_host

#: The index of an empty part's (value, index) pair: it loses to every real one.
EMPTY = np.iinfo(np.intp).max


def _sentinel(dtype, largest: bool):
    """A value no real element loses to (for empty parts of a split axis)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "biufc":  # no identity (strings, objects): the pair's EMPTY index
        return np.zeros((), dtype)[()]  # makes it lose (`_better`)
    if dtype.kind == "c":
        part = -np.inf if largest else np.inf
        return dtype.type(complex(part, part))
    return (MAX if largest else MIN).identity(dtype)


def _local(backend: Backend, chunk, box, axis, largest: bool, global_shape):
    """This chunk's (value, global index) pair along `axis` (None: over the whole chunk),
    with kept dims."""
    xp = backend.xp
    if axis is None:
        k = backend.arg_pick(chunk.reshape(-1), 0, largest)
        # asarray: an object array's element is a Python object, not a NumPy scalar.
        value = xp.asarray(chunk.reshape(-1)[k], dtype=chunk.dtype).reshape((1,) * chunk.ndim)
        # The global flat index, computed on the device (no host synchronization).
        strides = np.cumprod((1, *global_shape[:0:-1]))[::-1]
        flat = xp.zeros((), np.intp)
        for r, coord, stride in zip(box, xp.unravel_index(k, chunk.shape), strides):
            flat = flat + (coord * r.step + r.start) * int(stride)
        return value, xp.asarray(flat, dtype=np.intp).reshape((1,) * chunk.ndim)
    k = xp.expand_dims(backend.arg_pick(chunk, axis, largest), axis)
    value = xp.take_along_axis(chunk, k, axis=axis)
    r = box[axis]
    return value, (k * r.step + r.start).astype(np.intp, copy=False)


def _better(xp, value, index, other, other_index, largest: bool):
    """Where the (other, other_index) pair beats (value, index)."""
    if value.dtype.kind not in "biufc":  # no NaN; an empty part's pair (`_sentinel`) loses
        strictly = other > value if largest else other < value
        wins = strictly | ((other == value) & (other_index < index))
        return (other_index != EMPTY) & ((index == EMPTY) | wins)
    nan_other, nan_here = xp.isnan(other), xp.isnan(value)
    with np.errstate(invalid="ignore"):  # NumPy warns comparing complex NaNs; masked here
        strictly = other > value if largest else other < value
        tie = (other == value) | (nan_other & nan_here)
    return (nan_other & ~nan_here) | (~nan_here & strictly) | (tie & (other_index < index))


def arg_extreme(x: DistArray, axis, keepdims: bool, largest: bool) -> DistArray:
    """argmax (`largest`) or argmin of non-empty `x`; partial pairs combined at once."""
    if x.mode.is_partial:
        x = x.change_mode(REPLICA)
    backend = x.storage.backend
    axes = _reduction.normalize_axes(axis, x.ndim)
    plan, whole = _reduction.reduce_plan(x.layout, axes, True)
    values: list = [None] * len(plan.chunks)  # another process computes its pair
    indices: list = [None] * len(plan.chunks)
    for k, device, chunk in local_chunks(x.storage):
        box, shape = x.layout.boxes[k], plan.chunk_shapes[k]
        with backend.on(device):
            if not all(shape) or any(len(box[a]) == 0 for a in axes):
                values[k] = backend.full(shape, _sentinel(x.dtype, largest), x.dtype, device)
                indices[k] = backend.full(shape, EMPTY, np.intp, device)
                continue
            values[k], indices[k] = _local(backend, chunk, box, axis, largest, x.shape)
    values = placed(values, plan.chunk_shapes, plan.chunk_devices, x.dtype)
    indices = placed(indices, plan.chunk_shapes, plan.chunk_devices, np.intp)
    if not whole:
        indices = _combine(plan, values, indices, largest, backend)
    result = wrap(Chunks.of(plan, indices, backend, np.intp))
    if keepdims:
        return result
    return _drop_axes(result, axes)


def _combine(layout, values, indices, largest, backend: Backend) -> list:
    """Each chunk's pairs merged with the pairs of every chunk meeting its box (fetched
    in one step per part of the pair)."""
    xp = backend.xp
    out = list(indices)
    plans = [_redistribute.partial_plan(layout, box) for box in layout.boxes]
    wanted = [
        (j, chunk_index, device)
        for k, (plan, device) in enumerate(zip(plans, layout.chunk_devices))
        if len(plan) > 1
        for j, _, chunk_index in plan
        if j != k
    ]
    dtype = values[0].dtype
    others = iter(fetch_pieces(Chunks.of(layout, values, backend, dtype), wanted))
    other_indices = iter(fetch_pieces(Chunks.of(layout, indices, backend, np.intp), wanted))
    local = {k for k, _ in _this_process.mine(layout.chunk_devices)}
    for k, (plan, device) in enumerate(zip(plans, layout.chunk_devices)):
        if len(plan) <= 1:
            continue
        pieces = [
            (region_index, next(others), next(other_indices))
            for j, region_index, _ in plan
            if j != k
        ]
        if k not in local:  # its process merges its pairs
            continue
        with backend.on(device):
            best_value = xp.array(values[k], copy=True)
            best_index = xp.array(indices[k], copy=True)
            for region_index, other, other_index in pieces:
                here = (*region_index, ...)
                wins = _better(xp, best_value[here], best_index[here], other, other_index, largest)
                best_value[here] = xp.where(wins, other, best_value[here])
                best_index[here] = xp.where(wins, other_index, best_index[here])
        out[k] = best_index
    return out


def _drop_axes(x: DistArray, axes: tuple) -> DistArray:
    plan, _ = _reduction.reduce_plan(x.layout, axes, False)
    shapes = plan.chunk_shapes
    return wrap(x.storage.view(plan, lambda t, c: c.reshape(shapes[t])), x.mode)


def _fast_plan(func, x: DistArray, axis, keepdims) -> tuple | None:
    """`_whole_plan` of a call, or None (unhashable arguments)."""
    storage = x.storage
    key = (func, storage.layout, x.mode, storage.dtype, type(axis), axis, type(keepdims), keepdims)
    try:
        hash(key)
    except TypeError:
        return None
    return _whole_plan(*key)


@plan_cache
def _whole_plan(func, layout, mode, dtype, _axis_type, axis, _keep_type, keepdims):
    """``(axis, result layout)`` where argmax/argmin along `axis` (an int) of a non-empty
    REPLICA input needs no combining: every chunk holds the axis whole (from its start,
    step 1, so a chunk's local index is the global one); None for the general path.
    NumPy's checks on the probe run once per key (an error is raised, not remembered)."""
    args = {"axis": axis} if keepdims is NO_VALUE else {"axis": axis, "keepdims": keepdims}
    _reduction.check_with_probe(func, _Probe(layout.shape, dtype), None, args)
    if mode is not REPLICA or axis is None or 0 in layout.shape or not layout.shape:
        return None
    axis = operator.index(axis) % len(layout.shape)
    plan, whole = _reduction.reduce_plan(layout, (axis,), keepdims is True)
    if not whole or layout.splits(axis):
        return None
    if not all(all(shape) for shape in plan.chunk_shapes):
        return None
    return axis, plan


class _Probe(NamedTuple):
    """What `check_with_probe` reads of an array."""

    shape: tuple
    dtype: np.dtype


def _whole_axis(x: DistArray, plan: tuple, largest: bool) -> DistArray:
    """The indices along the whole axis of each chunk, in the result's layout."""
    axis, layout = plan
    storage = x.storage
    backend = storage.backend
    on = backend.on
    if axis != 0 and block_layout(x.layout) is not None and not several():
        # One pick per device over its block of row chunks (axis 0 stays whole in each
        # chunk's rows): the block's indices are its slab of the result's layout.
        column = blocks(storage)
        if column is not None:
            slabs = []
            for block, device in zip(column, x.layout.devices):
                with on(device):
                    slabs.append(backend.arg_pick(block, axis, largest).reshape(-1))
            return wrap(Chunks.packed(layout, slabs, backend, np.intp, check=False))
    out: list = [None] * len(layout.chunks)  # another process computes its indices
    for k, device, chunk in local_chunks(storage):
        with on(device):
            out[k] = backend.arg_pick(chunk, axis, largest).reshape(layout.chunk_shapes[k])
    out = placed(out, layout.chunk_shapes, layout.chunk_devices, np.intp)
    return wrap(Chunks.made(layout, out, backend, np.intp))


def _arg_impl(func, largest: bool):
    name = f"numpy.{func.__name__}"

    def impl(a, axis=None, out=None, *, keepdims=NO_VALUE):
        args = {"axis": axis, "out": out}
        if keepdims is not NO_VALUE:
            args["keepdims"] = keepdims
        if not isinstance(a, DistArray):
            return fallback(func, (a,), args, name)
        if out is None:
            plan = _fast_plan(func, a, axis, keepdims)
            if plan is not None:
                return _whole_axis(a, plan, largest)
        out = _reduction.unwrap_out(out)
        probe_args = {k: v for k, v in args.items() if k != "out"}
        checked = _reduction.check_with_probe(func, a, out, probe_args)
        if a.size == 0:  # NumPy raised on the probe if the searched axis is empty
            axes = _reduction.normalize_axes(axis, a.ndim)
            shape = _reduction.reduced_shape(a.shape, axes, keepdims is True)
            return _reduction.filled(a, shape, checked, np.intp)
        # A 0-d array has one element whatever axis NumPy accepted.
        axis = None if axis is None or a.ndim == 0 else operator.index(axis) % a.ndim
        result = arg_extreme(a, axis, bool(keepdims is True), largest)
        return result if out is None else write_out(out, result)

    return impl


def _arg_decider(func, impl, largest: bool):
    """The decider (`mdarray._core.decided`) of `impl`: a call without ``out`` whose axis each
    chunk holds whole runs `_whole_axis` on its plan directly."""

    def decide(args, kwargs):
        given = bound(impl, args, kwargs)
        if given is None or type(given["a"]) is not DistArray or given["out"] is not None:
            return None
        plan = _fast_plan(func, given["a"], given["axis"], given["keepdims"])
        if plan is None:
            return None
        read = reader(impl, args, kwargs, "a")
        return lambda args, kwargs: _whole_axis(read(args, kwargs), plan, largest)

    return decide


for _func, _largest in ((np.argmax, True), (np.argmin, False)):
    _impl = implements(_func, spmd=True)(_arg_impl(_func, largest=_largest))
    decides(_func)(_arg_decider(_func, _impl, _largest))


def argmax(x: DistArray, /, *, axis: int | None = None, keepdims: bool = False) -> DistArray:
    """Indices of the maximum along `axis` (array API); ties and NaNs as in NumPy.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([[1, 7], [7, 2]]), mdarray.Layout.block((2, 2), devices=[0, 1]))
    >>> int(mdarray.argmax(x)), mdarray.argmax(x, axis=0).get().tolist()
    (1, [1, 0])
    """
    return np.argmax(x, axis=axis, keepdims=keepdims)


def argmin(x: DistArray, /, *, axis: int | None = None, keepdims: bool = False) -> DistArray:
    """Indices of the minimum along `axis` (array API); ties and NaNs as in NumPy.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([3, 1, 1, 5]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> int(mdarray.argmin(x))
    1
    """
    return np.argmin(x, axis=axis, keepdims=keepdims)


# where --------------------------------------------------------------------------------

_NOT_GIVEN = object()


@implements(np.where, spmd=True)
def _where(condition, x=_NOT_GIVEN, y=_NOT_GIVEN):
    """``numpy.where(condition, x, y)`` chunk by chunk: the three operands are cut to the
    result's layout (that of the first DistArray operand of the result's shape) and each
    chunk picks from its own pieces. Only operands laid out otherwise move. The
    one-argument form is ``nonzero``."""
    if x is _NOT_GIVEN and y is _NOT_GIVEN:
        return fallback(np.where, (condition,), {}, "numpy.where (one argument)")
    if x is _NOT_GIVEN or y is _NOT_GIVEN:
        raise ValueError("either both or neither of x and y should be given")
    planned = where_call(condition, x, y)
    if planned is not None:
        return planned
    operands = (condition, x, y)
    shape = np.broadcast_shapes(*(shape_of(op) for op in operands))
    # NumPy's promotion, Python scalars weak: from empty stand-ins of the arrays.
    dtype = np.where(*(stand_in(op) for op in operands)).dtype
    layout = result_layout(shape, operands)
    backend = backend_of(operands)
    columns = [aligned(op, layout, backend) for op in operands]

    def pick(k):
        c, a, b = (column[k] for column in columns)
        if not backend.is_native(c):  # a scalar condition: CuPy's where takes arrays only
            c = backend.xp.asarray(c)
        chunk = backend.xp.where(c, a, b)
        if chunk.shape != layout.chunk_shapes[k]:
            chunk = backend.xp.broadcast_to(chunk, layout.chunk_shapes[k]).copy()
        return chunk

    return wrap(Chunks.generate(layout, backend, pick, dtype), REPLICA)


def where(condition, x1, x2, /) -> DistArray:
    """Elements of `x1` where `condition` is true, else of `x2` (the array API's
    ``where``; scalars allowed for `x1` and `x2`).

    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.arange(4.0))
    >>> mdarray.where(x > 1, x, -1.0).get()
    array([-1., -1.,  2.,  3.])
    """
    if not any(isinstance(op, DistArray) for op in (condition, x1, x2)):
        condition = asarray(condition)
    return np.where(condition, x1, x2)


same_as(argmax, np.argmax)
same_as(argmin, np.argmin)


@decides(np.where, where)
def _decide_where(args, kwargs):
    """``where(condition, x, y)`` with its plan (`where_call`), found once."""
    if kwargs or len(args) != 3 or not builtins.any(type(a) is DistArray for a in args):
        return None
    plan = where_plan(args)
    if plan is None:
        return None
    return lambda args, kwargs: run(plan, args, 1)


# count_nonzero, nonzero, searchsorted ---------------------------------------------------


@implements(np.count_nonzero, spmd=True)
def _count_nonzero(a, axis=None, *, keepdims=False):
    """A sum of each element's truth (``a != 0`` for numbers): chunks count their own
    elements, and a split axis gives a partial (SUM) count, nothing moved."""
    if a.dtype.kind in "biufc":
        truth = np.not_equal(a, 0)
    else:
        truth = wrap(map_elements(in_mode(a, REPLICA).storage, _truth, np.bool_))
    return np.sum(truth, axis=axis, dtype=np.intp, keepdims=keepdims)


def _truth(chunk):
    """Each element's truth as NumPy's ``count_nonzero`` counts it, for the dtypes other
    than numbers: an object's ``bool``, a non-empty string, a time other than zero (NaT
    included), a structure with a non-zero field."""
    if chunk.dtype.kind == "O":
        return chunk.astype(np.bool_)
    return chunk != np.zeros((), chunk.dtype)


def count_nonzero(
    x: DistArray, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False
) -> DistArray:
    """The number of non-zero elements of `x` along `axis` (all of them by default), as
    a DistArray of the default index dtype (array API). NaN counts as non-zero, complex
    numbers where either part is non-zero.

    Parameters
    ----------
    x : DistArray
        The input array.
    axis : int or tuple of ints, optional
        The axes to count along; all by default.
    keepdims : bool
        Keep the counted axes, of length one.

    Returns
    -------
    DistArray
        The counts; 0-d where all axes are counted.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([[0, 1, 2], [3, 0, 0]]))
    >>> int(mdarray.count_nonzero(x)), mdarray.count_nonzero(x, axis=1).get()
    (3, array([2, 1]))
    """
    return np.count_nonzero(asarray(x), axis=axis, keepdims=keepdims)


@implements(np.nonzero, spmd=True)
def _nonzero(a):
    if isinstance(a, DistArray) and a.ndim:
        return native_nonzero(a)
    return fallback(np.nonzero, (a,), {}, "numpy.nonzero")


def nonzero(x: DistArray, /) -> tuple[DistArray, ...]:
    """The indices of the non-zero elements of `x`, one 1-D DistArray per axis, in C
    order (array API). A 0-d `x` raises ValueError, as in NumPy.

    Each chunk of x in row blocks finds its own non-zero elements (x is resharded to
    blocks along axis 0 first where it is laid out otherwise); the host reads one count
    per chunk.

    Parameters
    ----------
    x : DistArray
        The input array, of at least one axis.

    Returns
    -------
    tuple of DistArray
        The indices along each axis.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([[0, 1], [2, 0]]))
    >>> with mdarray.options(fallback="raise"):
    ...     rows, cols = mdarray.nonzero(x)
    >>> rows.get(), cols.get()
    (array([0, 1]), array([1, 0]))
    """
    return cast(tuple[DistArray, ...], np.nonzero(asarray(x)))


@implements(np.searchsorted)
def _searchsorted(a, v, side="left", sorter=None):
    """``numpy.searchsorted`` of a 1-D DistArray `a`: the first value of each piece of
    `a` (read by the host: one per chunk) routes each query to the one piece it lands
    in; that piece's device answers it with ``searchsorted`` plus the piece's offset.
    Only the queries (there) and their answers (back) move; `sorter` reads its indices
    to the host (``take``)."""
    if not isinstance(a, DistArray) or (sorter is not None and not isinstance(sorter, DistArray)):
        return fallback(
            np.searchsorted, (a, v), {"side": side, "sorter": sorter}, "numpy.searchsorted"
        )
    v = v if isinstance(v, DistArray) else asarray(v)
    # NumPy's errors (an `a` of another rank, a bad `side`) from empty stand-ins.
    dtype = np.result_type(a.dtype, v.dtype)
    np.searchsorted(np.empty((0,) * a.ndim, a.dtype), np.empty(0, v.dtype), side=side)
    if sorter is not None:
        a = np.take(a, sorter)
    if a.mode.is_partial:
        a = a.change_mode(REPLICA)
    if v.mode.is_partial:
        v = v.change_mode(REPLICA)
    backend = v.storage.backend
    xp = backend.xp
    pieces = runs(a)
    starts = np.cumsum([0, *(piece.shape[0] for _, piece in pieces)])
    firsts = to_host(backend, [piece[:1] for _, piece in pieces], [d for d, _ in pieces])
    firsts_host = np.concatenate([np.empty(0, dtype), *firsts]).astype(dtype)

    def answer(chunk, device):
        queries = chunk.reshape(-1).astype(dtype, copy=False)
        route = xp.searchsorted(backend.from_host(firsts_host, device), queries, side=side) - 1
        out = xp.zeros(queries.shape, np.intp)
        (counts,) = to_host(backend, [xp.bincount(route + 1, minlength=len(pieces) + 1)], [device])
        for p in np.flatnonzero(counts[1:]):
            here = route == p
            target, piece = pieces[p]
            moved = backend.move(queries[here], device, target)
            with backend.on(target):
                found = xp.searchsorted(piece.astype(dtype, copy=False), moved, side=side)
            out[here] = backend.move(found.astype(np.intp), target, device) + int(starts[p])
        return out.reshape(chunk.shape)

    devices = v.layout.chunk_devices
    buffers = v.storage.buffers
    return wrap(
        Chunks.generate(v.layout, backend, lambda k: answer(buffers[k], devices[k]), np.intp)
    )


def searchsorted(
    x1: DistArray, x2: DistArray, /, *, side: str = "left", sorter: DistArray | None = None
) -> DistArray:
    """Where the elements of `x2` would be inserted into the sorted 1-D `x1` to keep it
    sorted (array API); `sorter` holds the indices that sort `x1`, if it is not sorted.

    The first value of each chunk of `x1` goes to the host and routes each element of
    `x2` to the chunk it lands in; that chunk's device answers it. Only the elements of
    `x2` and their answers move (`sorter`'s indices are read by the host).

    Parameters
    ----------
    x1 : DistArray
        A 1-D array, sorted ascending (NaNs last) unless `sorter` is given.
    x2 : DistArray
        The values to insert.
    side : {"left", "right"}
        Which position to give a value equal to elements of `x1`: before them or after.
    sorter : DistArray, optional
        Indices that sort `x1` ascending.

    Returns
    -------
    DistArray
        Indices into `x1` (default index dtype), of `x2`'s shape.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x1 = mdarray.asarray(np.array([1.0, 2.0, 2.0, 5.0]))
    >>> with mdarray.options(fallback="raise"):
    ...     mdarray.searchsorted(x1, mdarray.asarray(np.array([2.0, 6.0])), side="right").get()
    array([3, 4])
    """
    if not any(isinstance(op, DistArray) for op in (x1, x2, sorter)):
        x1 = asarray(x1)
    return cast(DistArray, np.searchsorted(x1, x2, side=side, sorter=sorter))  # type: ignore[call-overload]
