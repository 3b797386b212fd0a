"""The reduction engine: each chunk reduces locally; partial results combine later.

Reducing along axes that chunks split gives one partial result per input chunk, laid out
in the *plan layout*: each input chunk's box with the reduced axes collapsed to
``range(0, 1)`` (or removed), so result chunk ``k`` belongs to input chunk ``k``. Where the
reducing ufunc has a mode (``add`` -> SUM, ``maximum`` -> MAX, ...), the result is left in
that mode and nothing moves; other associative ufuncs (``bitwise_xor``, ``fmax`` on floats)
combine the small partials at once; the rest reshard the input so that the reduced axes
are whole in every chunk. A partial result may only count each element once: where input
chunks overlap, non-idempotent ufuncs reduce only the elements a chunk owns (the layout's
cover), the others seeing the identity.

NumPy itself checks every argument and picks the result dtype: the front end `reduction`
runs the NumPy function on a *probe*, a tiny array of ones with the input's dtype and
zero-length axes, so errors, warnings and dtypes are NumPy's own.

A repeated call decides nothing again: `call_plan` caches, on the function, the input's
layout, mode and dtype and the arguments (with their types), NumPy's answer on the probe
and `reduce`'s decisions (`chunk_plan`: the result layout and mode, each chunk's step),
so the call only runs the per-chunk kernels (`run_chunk_plan`); ``np.mean`` divides in
the same pass (`mean`). Calls that need more (``out=``, a mask, ``initial``, a reshard,
partials combined at once) take the general path. An error on the probe is raised every
time, never cached.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple, Protocol

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from mdarray._array.array import DistArray, in_mode, wrap
from mdarray._backends.backend import Backend
from mdarray._core.constants import NO_VALUE
from mdarray._core.mode_rules import (
    IDEMPOTENT,
    REORDERABLE,
    reduction_identity,
    reduction_mode,
)
from mdarray._core.modes import REPLICA, Mode
from mdarray._core.plan_cache import plan_cache
from mdarray._exec.chunkwise import (
    aligned,
    block_layout,
    blocks,
    map_elements,
    shape_of,
    write_out,
)
from mdarray._layouts.layout import Layout
from mdarray._movement import redistribute as _redistribute
from mdarray._movement.collectives import several
from mdarray._storage import local as _this_process
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import placed

from .fallback import fallback

# The reduction rows (which ufunc leaves which mode) live with the other mode facts.
partial_mode = reduction_mode
identity = reduction_identity


# Plans ------------------------------------------------------------------------------


def reduced_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    return tuple(1 if a in axes else n for a, n in enumerate(shape) if keepdims or a not in axes)


@plan_cache
def reduce_plan(layout: Layout, axes: tuple, keepdims: bool) -> tuple:
    """``(plan_layout, whole)``: the layout of per-chunk results (chunk k from input
    chunk k), and whether every chunk that yields elements holds its reduced axes whole
    (then each result chunk is complete, not partial)."""
    shape = layout.shape
    whole = True
    index_map: dict = {}
    for (device, index), box in zip(layout.chunks, layout.boxes):
        yields = all(len(box[a]) for a in range(len(shape)) if a not in axes)
        if yields and any(box[a] != range(shape[a]) for a in axes):
            whole = False
        reduced = tuple(
            slice(0, 1, 1) if a in axes else index[a]
            for a in range(len(shape))
            if keepdims or a not in axes
        )
        index_map.setdefault(device, []).append(reduced)
    return Layout(reduced_shape(shape, axes, keepdims), index_map), whole


# What a chunk's result is made by (`ChunkPlan.steps`).
REDUCE, EMPTY, IDENTITY = "reduce", "empty", "identity"


class ChunkPlan(NamedTuple):
    """What `reduce` decides for one input (layout, mode, dtype) and reduction, where
    nothing moves before the per-chunk kernels: the result's `layout` (the plan layout)
    and `mode`, and per chunk its result's shape and the step making it (`REDUCE` its
    chunk, `EMPTY` for a result without elements, `IDENTITY` where the chunk holds an
    empty part of a reduced axis: `fill`, the identity, in the result dtype).

    `blocked`, where a device holds several chunks that make one block
    (`_chunkwise.block_layout`): ``(plan, packed layout or None, whether every block is
    reduced)``, the same reduction over one block per device, so a device runs one kernel
    whatever its chunks. Where the blocking axis 0 is not reduced, a device's block result
    is its slab of this plan's layout (the packed layout); else the result keeps the block
    plan's layout (one partial per device, not per chunk)."""

    layout: Layout
    mode: Mode
    steps: tuple
    fill: object
    blocked: tuple | None = None


@plan_cache
def chunk_plan(layout: Layout, mode: Mode, dtype: np.dtype, ufunc, axes: tuple,
               keepdims: bool, result_dtype: np.dtype) -> ChunkPlan | None:  # fmt: skip
    """The `ChunkPlan` of `ufunc` over `axes` of an input of `layout`, `mode` and
    `dtype`, or None where `reduce`'s general path is needed: a partial input in
    another mode or dtype, partials no mode can hold (combined at once), a reshard, or
    overlapping chunks whose shadowed elements must be set to the identity first. The
    decisions are `reduce`'s own, made once per key."""
    result_mode = partial_mode(ufunc, result_dtype)
    if mode.is_partial and not (mode is result_mode and result_dtype == dtype):
        return None
    plan, whole = reduce_plan(layout, axes, keepdims)
    if mode.is_partial:
        out_mode = mode
    elif whole:
        out_mode = REPLICA
    elif result_mode is not None:
        out_mode = result_mode
        if ufunc not in IDEMPOTENT and layout.has_overlaps:
            return None
    else:
        return None
    steps = []
    for box, shape in zip(layout.boxes, plan.chunk_shapes):
        if not all(shape):
            steps.append((shape, EMPTY))
        elif any(len(box[a]) == 0 for a in axes):
            steps.append((shape, IDENTITY))
        else:
            steps.append((shape, REDUCE))
    blocked = None
    coarse = block_layout(layout)
    if coarse is not None:
        inner = chunk_plan(coarse, mode, dtype, ufunc, axes, keepdims, result_dtype)
        if inner is not None:
            repack = bool(layout.shape) and 0 not in axes and inner.mode is out_mode
            whole = all(step is REDUCE for _, step in inner.steps)
            blocked = (inner, plan if repack else None, whole)
    return ChunkPlan(plan, out_mode, tuple(steps), identity(ufunc, result_dtype), blocked)


def run_chunk_plan(x: DistArray, plan: ChunkPlan, ufunc, axes: tuple, dtype, result_dtype,
                   skip_nan: bool, divisor=None) -> DistArray:  # fmt: skip
    """The per-chunk kernels of `plan` on `x`'s chunks, nothing else (see `reduce`); with
    a `divisor`, a REPLICA result's chunks (each holds the whole value) divided by it on
    their devices (`mean`). A partial result stays undivided: no float SUM is scaled
    copy by copy (see `_core.mode_rules`)."""
    storage = x.storage
    backend = storage.backend
    if plan.blocked is not None and not several():
        column = blocks(storage)
        if column is not None:
            inner, packed, whole = plan.blocked
            # A block's result is its device's slab: of the per-chunk layout along the
            # rows, else of the block plan's (one chunk per device).
            layout, mode = (packed, plan.mode) if packed is not None else (inner.layout, inner.mode)
            divide = divisor if mode is REPLICA else None
            if whole and divide is None and column[0].nbytes * len(column) < backend.parallel_bytes:
                # The commonest call, `_run_steps`'s loop in short: a kernel per block.
                kernel, on, slabs = backend.reduce, backend.on, []
                for device, block in zip(inner.layout.chunk_devices, column):
                    with on(device):
                        slabs.append(kernel(ufunc, block, axes, dtype, result_dtype, skip_nan, -1))
            else:
                slabs = _run_steps(column, inner, backend, ufunc, axes, dtype, result_dtype,
                                   skip_nan, divide, flat=True)  # fmt: skip
            return wrap(Chunks.packed(layout, slabs, backend, result_dtype, check=False), mode)
    out = _run_steps(storage.buffers, plan, backend, ufunc, axes, dtype, result_dtype, skip_nan,
                     divisor if plan.mode is REPLICA else None)  # fmt: skip
    return wrap(Chunks.made(plan.layout, out, backend, result_dtype), plan.mode)


def _run_steps(buffers, plan: ChunkPlan, backend: Backend, ufunc, axes, dtype, result_dtype, skip_nan,
               divisor, flat: bool = False) -> list:  # fmt: skip
    """Each of `plan`'s steps on its buffer (a chunk, or a device's block); `flat`: each
    result 1-D (a slab), else of its chunk's shape."""
    kernel = backend.reduce
    on = backend.on
    divide = None if divisor is None else backend.xp.true_divide
    done = None  # a large call's kernels, run at once on the devices' threads
    if buffers and buffers[0].nbytes * len(buffers) >= backend.parallel_bytes and not several():
        rows = [
            (device, (ufunc, chunk, axes, dtype, result_dtype, skip_nan))
            for chunk, device, (_, step) in zip(buffers, plan.layout.chunk_devices, plan.steps)
            if step is REDUCE
        ]
        done = iter(backend.each(kernel, rows))
    steps = plan.steps
    out = [None] * len(steps)  # another process's chunk: its process computes it
    for k, device in _this_process.mine(plan.layout.chunk_devices):
        shape, step = steps[k]
        chunk = buffers[k]
        with on(device):
            if step is REDUCE:
                if done is None:
                    result = kernel(
                        ufunc, chunk, axes, dtype, result_dtype, skip_nan, -1 if flat else shape
                    )
                else:
                    result = next(done).reshape(-1 if flat else shape)
            elif step is EMPTY:
                result = backend.empty(shape, result_dtype, device)
            else:
                result = backend.full(shape, plan.fill, result_dtype, device)
            if divide is not None:
                result = divide(result, divisor)
                # NumPy's kernels give scalars for 0-d operands: chunks are 0-d arrays.
                result = np.array(result) if isinstance(result, np.generic) else result
            if flat and result.ndim != 1:
                result = result.reshape(-1)
        out[k] = result
    if _this_process.ALL_HERE:
        return out
    return placed(out, plan.layout.chunk_shapes, plan.layout.chunk_devices, result_dtype)


# Chunk helpers ----------------------------------------------------------------------


def combine_now(chunks: Chunks, ufunc, value) -> Chunks:
    """Per-chunk partial results of `ufunc` (no mode can hold them) combined at once:
    every chunk that overlaps another gets the full value of its box (identity `value`;
    `_redistribute.combine_overlaps`)."""
    combine = getattr(chunks.backend.xp, ufunc.__name__)
    return _redistribute.combine_overlaps(chunks, combine, value)


# The engine -------------------------------------------------------------------------


def reduce(x: DistArray, ufunc, axes: tuple, keepdims: bool, result_dtype, *, dtype=None,
           where=True, initial=NO_VALUE, skip_nan=False) -> DistArray:  # fmt: skip
    """`ufunc` reduced over `axes` of `x` (non-empty): partial where the axes are split.

    `where` (an operand broadcastable to `x`) masks elements out; `initial` joins the
    reduction once; `dtype` is the user's dtype, `result_dtype` NumPy's for the result;
    `skip_nan` (``np.add`` and ``np.multiply`` of a REPLICA `x`) reads NaN as the identity,
    in the backend's one reduction per chunk (``nansum``).
    """
    result_dtype = np.dtype(result_dtype)
    if where is True and initial is NO_VALUE:
        known = chunk_plan(x.layout, x.mode, x.dtype, ufunc, axes, keepdims, result_dtype)
        if known is not None:
            return run_chunk_plan(x, known, ufunc, axes, dtype, result_dtype, skip_nan)
    mode = partial_mode(ufunc, result_dtype)
    if x.mode.is_partial and not (x.mode is mode and result_dtype == x.dtype):
        x = x.change_mode(REPLICA)
    plan, whole = reduce_plan(x.layout, axes, keepdims)
    combine = None
    if x.mode.is_partial:
        out_mode = x.mode  # linear: the reduction of each copy is a copy of the reduction
    elif whole:
        out_mode = REPLICA
    elif mode is not None or (ufunc in REORDERABLE and identity(ufunc, x.dtype) is not None):
        out_mode = mode or REPLICA
        combine = None if mode is not None else identity(ufunc, result_dtype)
    else:
        x = x.reshard(x.layout.whole_along(axes))
        plan, _ = reduce_plan(x.layout, axes, keepdims)
        out_mode = REPLICA
    storage = x.storage
    backend = storage.backend
    if (
        (out_mode.is_partial or combine is not None)
        and ufunc not in IDEMPOTENT
        and x.mode is REPLICA
        and x.layout.has_overlaps
    ):
        storage = _redistribute.fill_shadowed(storage, identity(ufunc, x.dtype))
    buffers = storage.buffers
    masks = None if where is True else aligned(where, x.layout, backend)
    boxes = x.layout.boxes
    fill = identity(ufunc, x.dtype)

    def reduce_chunk(k):
        shape = plan.chunk_shapes[k]
        if not all(shape):
            return backend.xp.empty(shape, result_dtype)
        if any(len(boxes[k][a]) == 0 for a in axes):
            # An empty part of a split axis contributes the identity.
            return backend.xp.full(shape, identity(ufunc, result_dtype), result_dtype)
        chunk = buffers[k]
        if masks is not None:
            chunk = backend.xp.where(masks[k], chunk, fill).astype(x.dtype)
        return backend.reduce(ufunc, chunk, axes, dtype, result_dtype, skip_nan, shape)

    results = Chunks.generate(plan, backend, reduce_chunk, result_dtype)
    if combine is not None:
        results = combine_now(results, ufunc, combine)
    if initial is not NO_VALUE:
        results = _with_initial(results, ufunc, out_mode, initial)
    return wrap(results, out_mode)


def _with_initial(results: Chunks, ufunc, mode, initial) -> Chunks:
    """`initial` joined once into each element: into every copy for idempotent ufuncs
    and REPLICA results, else only into the copy that owns the element."""
    backend = results.backend
    dtype = results.dtype
    combine = getattr(backend.xp, ufunc.__name__)
    fills = Chunks.full(results.layout, np.array(initial).astype(dtype)[()], dtype, backend)
    if mode.is_partial and ufunc not in IDEMPOTENT:
        fills = _redistribute.fill_shadowed(fills, identity(ufunc, dtype), in_place=True)
    return results.map(combine, fills.buffers, dtype=dtype)


# Front end: NumPy's argument checks on a probe, empty inputs, ``out=`` -------------


def probe(x: DistArray) -> np.ndarray:
    """A tiny array of ones like `x`: same dtype, same zero-length axes."""
    return _probe(x.shape, x.dtype)


def _probe(shape: tuple, dtype) -> np.ndarray:
    return np.ones(tuple(min(n, 1) for n in shape), dtype)


class Described(Protocol):
    """What the probe checks read of an operand: a DistArray, or its shape and dtype alone."""

    @property
    def shape(self) -> tuple: ...
    @property
    def dtype(self) -> np.dtype: ...


def check_with_probe(func, x: Described, out, kwargs) -> np.ndarray:
    """Run NumPy's `func` on the probe with `kwargs` (``where`` as True, ``out`` of the
    probe result's shape): NumPy raises its own errors; returns the probe result."""
    return _check(func, x.shape, x.dtype, out, kwargs)


def _check(func, shape: tuple, dtype, out, kwargs) -> np.ndarray:
    kwargs = dict(kwargs)
    if "where" in kwargs and kwargs["where"] is not True:
        _check_where(kwargs["where"], shape)
        kwargs["where"] = np.True_  # a mask, as NumPy sees one (not the default True)
    small = _probe(shape, dtype)
    # The probe's counts are not the input's: its warnings ("Degrees of freedom <= 0")
    # would be wrong; NumPy's errors stay.
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        result = func(small, **kwargs)
        # A Python object (an object array's sum) is an object result, not an int's.
        result = np.asarray(result, None if hasattr(result, "dtype") else object)
        if out is not None:
            func(small, out=np.empty(result.shape, out.dtype), **kwargs)
    return result


def _check_where(where, shape) -> None:
    where_shape = shape_of(where)
    if np.broadcast_shapes(where_shape, shape) != tuple(shape):
        raise ValueError(
            f"where= of shape {where_shape} does not broadcast to the input's shape {shape}"
        )


def filled(x: DistArray, shape: tuple, value_probe: np.ndarray, dtype) -> DistArray:
    """The result of reducing an empty `x`: every element equals the probe's (the
    identity, `initial`, or NaN), blocks over `x`'s devices."""
    layout = Layout.block(shape, devices=x.devices)
    value = value_probe.reshape(-1)[0] if value_probe.size else 0
    return wrap(Chunks.full(layout, value, dtype, x.storage.backend))


def reduction(func, ufunc, x: DistArray, axis, out=None, *, skip_nan=False, **kwargs):
    """A NumPy reduction `func` (``np.sum`` or ``np.add.reduce``) of `x` by `ufunc`.

    `kwargs` are those the caller gave (``dtype keepdims initial where``); `skip_nan` as
    for `reduce`.
    """
    if out is None:
        known = call_plan(func, ufunc, x, axis, kwargs)
        if known is not None:
            axes, result_dtype, plan = known
            dtype = kwargs.get("dtype")
            dtype = None if dtype is NO_VALUE else dtype
            return run_chunk_plan(x, plan, ufunc, axes, dtype, result_dtype, skip_nan)
    out = unwrap_out(out)
    kwargs = {k: v for k, v in kwargs.items() if v is not NO_VALUE}
    if kwargs.get("where", True) is not True and identity(ufunc, x.dtype) is None:
        # No value masks an element out of this ufunc's reduction: NumPy decides.
        name = f"numpy.{getattr(func, '__name__', ufunc.__name__)} with where="
        return fallback(func, (x,), dict(kwargs, axis=axis, out=out), name)
    checked = check_with_probe(func, x, out, dict(kwargs, axis=axis))
    axes = normalize_axes(axis, x.ndim)
    keepdims = bool(kwargs.get("keepdims", False))
    shape = reduced_shape(x.shape, axes, keepdims)
    if x.size == 0:
        result = filled(x, shape, checked, checked.dtype)
    else:
        result = reduce(
            x,
            ufunc,
            axes,
            keepdims,
            checked.dtype,
            dtype=kwargs.get("dtype"),
            where=kwargs.get("where", True),
            initial=kwargs.get("initial", NO_VALUE),
            skip_nan=skip_nan,
        )
    return result if out is None else write_out(out, result)


def normalize_axes(axis, ndim: int) -> tuple:
    """Axes as a tuple of non-negative ints (NumPy has checked them; a 0-d array
    reduces over no axis whatever it is given)."""
    if axis is None or ndim == 0:
        return tuple(range(ndim))
    return tuple(normalize_axis_tuple(axis, ndim))


def unwrap_out(out):
    """``out=`` as one array or None (ufunc methods pass a 1-tuple)."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError(f"expected one output array, got {len(out)}")
        out = out[0]
    return out


# NumPy's checks of a repeated call, cached -------------------------------------------

# The arguments `checked_call` takes besides ``axis`` (``where`` only as True, ``initial``
# only as `NO_VALUE`): others need the general path.
_PLAIN = frozenset({"dtype", "keepdims", "where", "initial"})


def call_plan(func, ufunc, x: DistArray, axis, kwargs: dict) -> tuple | None:
    """``(axes, result dtype, chunk plan)`` of a repeated `reduction` call on a
    non-empty `x` (`kwargs` as `reduction` takes them, ``where`` only as True and
    ``initial`` not given), or None where the call needs the general path (other
    arguments, an empty `x`, unhashable ones, a `chunk_plan` of None). NumPy's checks on
    the probe and `reduce`'s decisions are made once per key; an error is raised each
    time, never remembered."""
    where = kwargs.get("where", NO_VALUE)
    if (where is not NO_VALUE and where is not True) or kwargs.get(
        "initial", NO_VALUE
    ) is not NO_VALUE:
        return None
    if not _PLAIN.issuperset(kwargs):
        return None
    storage = x.storage
    dtype = kwargs.get("dtype", NO_VALUE)
    keepdims = kwargs.get("keepdims", NO_VALUE)
    # Types in the key: ``axis=True`` is an error, ``axis=1`` is not, and they hash alike.
    key = (func, ufunc, storage.layout, x.mode, storage.dtype, type(axis), axis, type(dtype),
           dtype, type(keepdims), keepdims)  # fmt: skip
    try:
        hash(key)
    except TypeError:
        return None
    return _call_plan(*key)


@plan_cache
def _call_plan(func, ufunc, layout, mode, dtype, _axis_type, axis, _dtype_type, requested,
               _keep_type, keepdims):  # fmt: skip
    """`call_plan`'s answer for one key (runs NumPy on the probe)."""
    kwargs = {"axis": axis}
    if requested is not NO_VALUE:
        kwargs["dtype"] = requested
    if keepdims is not NO_VALUE:
        kwargs["keepdims"] = keepdims
    result_dtype = _check(func, layout.shape, dtype, None, kwargs).dtype
    if 0 in layout.shape:
        return None
    axes = normalize_axes(axis, len(layout.shape))
    keep = bool(keepdims is not NO_VALUE and keepdims)
    plan = chunk_plan(layout, mode, dtype, ufunc, axes, keep, result_dtype)
    return None if plan is None else (axes, result_dtype, plan)


# Means --------------------------------------------------------------------------------


def mean(x: DistArray, axis, dtype, keepdims, where) -> DistArray | None:
    """``np.mean`` of `x` by one cached plan (`mean_plan`), or None where it needs the
    general path."""
    known = mean_plan(x, axis, dtype, keepdims, where)
    return None if known is None else run_mean(x, known)


def mean_plan(x: DistArray, axis, dtype, keepdims, where) -> tuple | None:
    """The plan of ``np.mean`` of `x` (`_mean_plan`): the sums of the `chunk_plan`,
    combined and divided by the count (`run_mean`), as `_ops.reductions.moments._mean`
    computes them (no ``out=``, ``where`` not given or True); None where it needs the general
    path (an empty `x`, a count under 1, a cast after the division, unhashable
    arguments)."""
    if where is not NO_VALUE and where is not True:
        return None
    storage = x.storage
    key = (storage.layout, x.mode, storage.dtype, type(axis), axis, type(dtype), dtype,
           type(keepdims), keepdims)  # fmt: skip
    try:
        hash(key)
    except TypeError:
        return None
    return _mean_plan(*key)


def run_mean(x: DistArray, known: tuple) -> DistArray:
    """`mean_plan`'s plan `known` run on `x`: where the sums come out REPLICA, each chunk
    divided by the count on its device; else the partial sums combined first and the sum
    divided, as NumPy divides it (no float SUM is scaled copy by copy, see
    `_core.mode_rules`)."""
    axes, compute, count, plan = known
    total = run_chunk_plan(x, plan, np.add, axes, compute, compute, False, count)
    if total.mode is REPLICA:
        return total
    divide = total.storage.backend.xp.true_divide
    combined = in_mode(total, REPLICA).storage
    return wrap(map_elements(combined, lambda sums: divide(sums, count)), REPLICA)


@plan_cache
def _mean_plan(layout, mode, dtype, _axis_type, axis, _dtype_type, requested, _keep_type,
               keepdims):  # fmt: skip
    """``(axes, compute dtype, count, chunk plan)`` of `mean` for one key, or None."""
    kwargs = {"axis": axis, "dtype": requested}
    if keepdims is not NO_VALUE:
        kwargs["keepdims"] = keepdims
    result_dtype = _check(np.mean, layout.shape, dtype, None, kwargs).dtype
    compute = compute_dtype(dtype, requested)
    if 0 in layout.shape or compute != result_dtype:
        return None
    axes = normalize_axes(axis, len(layout.shape))
    count = math.prod(layout.shape[a] for a in axes)
    keep = bool(keepdims is not NO_VALUE and keepdims)
    plan = chunk_plan(layout, mode, dtype, np.add, axes, keep, compute)
    if plan is None or count < 1 or (plan.mode is not REPLICA and plan.mode.name != "sum"):
        return None
    return axes, compute, count, plan


def compute_dtype(dtype: np.dtype, requested) -> np.dtype:
    """The dtype NumPy computes means in: `requested`, else float64 for ints and bools,
    float32 for float16."""
    if requested is not None:
        return np.dtype(requested)
    if dtype.kind in "biu":
        return np.dtype(np.float64)
    return np.dtype(np.float32) if dtype == np.float16 else dtype
