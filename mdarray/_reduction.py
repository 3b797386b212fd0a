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
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from . import _dispatch, _redistribute
from ._array import DistArray
from ._layout import Layout
from ._modes import MAX, MIN, PROD, REPLICA, SUM

NO_VALUE = np._NoValue

# Reducing ufunc -> (mode whose combine it is, result dtype kinds where that holds).
# Each row: the reduction of a union is the ufunc of the reductions of the parts.
_PARTIAL_MODES = {
    np.add: (SUM, "biufc"),  # sum(p ++ q) == sum(p) + sum(q)
    np.multiply: (PROD, "biufc"),  # prod(p ++ q) == prod(p) * prod(q)
    np.maximum: (MAX, "biuf"),  # max(p ++ q) == maximum(max(p), max(q)), NaNs propagate
    np.minimum: (MIN, "biuf"),
    np.logical_and: (MIN, "b"),  # on bools, and == min
    np.logical_or: (MAX, "b"),  # on bools, or == max
    np.bitwise_and: (MIN, "b"),
    np.bitwise_or: (MAX, "b"),
    np.fmax: (MAX, "biu"),  # without NaNs, fmax == maximum
    np.fmin: (MIN, "biu"),
}
# op(a, a) == a: overlapping copies may all contribute.
_IDEMPOTENT = frozenset(
    [np.maximum, np.minimum, np.fmax, np.fmin, np.logical_and, np.logical_or]
    + [np.bitwise_and, np.bitwise_or]
)
# Associative and commutative: partials may combine in any order.
_REORDERABLE = _IDEMPOTENT | {np.add, np.multiply, np.logical_xor, np.bitwise_xor}
# Local kernels of the array module for ufuncs whose `.reduce` CuPy may lack.
_XP_REDUCERS = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "max",
    "minimum": "min",
    "logical_and": "all",
    "logical_or": "any",
}


def partial_mode(ufunc, dtype):
    """The mode that combines partial `ufunc` reductions of `dtype`, or None."""
    mode, kinds = _PARTIAL_MODES.get(ufunc, (None, ""))
    return mode if np.dtype(dtype).kind in kinds else None


def identity(ufunc, dtype):
    """A value of `dtype` that `ufunc` leaves every operand unchanged with, or None."""
    dtype = np.dtype(dtype)
    if ufunc in (np.fmax, np.fmin) and dtype.kind == "f":
        return dtype.type(np.nan)  # fmax(nan, v) == v
    mode = partial_mode(ufunc, dtype)
    if mode is not None:
        return mode.identity(dtype)
    if ufunc not in _REORDERABLE or ufunc.identity is None:
        return None
    # astype wraps -1 (bitwise_and's identity) to all ones for unsigned dtypes.
    return np.array(ufunc.identity).astype(dtype)[()]


# Plans ------------------------------------------------------------------------------


def reduced_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    return tuple(1 if a in axes else n for a, n in enumerate(shape) if keepdims or a not in axes)


@lru_cache(maxsize=4096)
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


def whole_layout(x: DistArray, axes: tuple) -> Layout:
    """A layout of `x`'s shape whose chunks hold the `axes` whole (blocks along the
    largest other axis, or everything on one device)."""
    kept = [a for a in range(x.ndim) if a not in axes]
    if kept:
        axis = max(kept, key=lambda a: x.shape[a])
        return Layout.block(x.shape, axis=axis, devices=x.devices)
    return Layout.replicated(x.shape, devices=x.devices[:1])


# Chunk helpers ----------------------------------------------------------------------


def local_reduce(backend, ufunc, chunk, axes: tuple, dtype, result_dtype):
    """`ufunc` reduced over `axes` of one chunk, keeping dims, as `result_dtype`."""
    xp = backend.xp
    if xp is np:
        out = ufunc.reduce(chunk, axis=axes, dtype=dtype, keepdims=True)
    elif ufunc.__name__ in _XP_REDUCERS:
        reducer = getattr(xp, _XP_REDUCERS[ufunc.__name__])
        kwargs = {"dtype": result_dtype} if ufunc in (np.add, np.multiply) else {}
        out = reducer(chunk, axis=axes, keepdims=True, **kwargs)
    else:
        out = _fold(xp, getattr(xp, ufunc.__name__), chunk, axes, dtype, ufunc.identity)
    return out if out.dtype == result_dtype else out.astype(result_dtype)


def _fold(xp, ufunc, chunk, axes, dtype, identity=None):
    """A left fold along each axis: for ufuncs without a reduce in the array module.

    Like NumPy, a ufunc with an identity starts from it (``hypot.reduce([-1.0])`` is 1)."""
    try:
        out = ufunc.reduce(chunk, axis=axes, dtype=dtype, keepdims=True)
    except (AttributeError, NotImplementedError, TypeError):
        pass
    else:
        # CuPy's reduce starts from the first element: joining the identity afterwards
        # gives NumPy's value (e o (x0 o x1 ...) == (e o x0) o x1 ... for these ufuncs).
        return out if identity is None else ufunc(xp.asarray(identity, dtype=out.dtype), out)
    out = chunk if dtype is None else chunk.astype(dtype)
    for axis in axes:
        acc = out[(slice(None),) * axis + (slice(0, 1),)]
        if identity is not None:
            acc = ufunc(xp.asarray(identity, dtype=out.dtype), acc)
        for i in range(1, out.shape[axis]):
            acc = ufunc(acc, out[(slice(None),) * axis + (slice(i, i + 1),)])
        out = acc
    return out


def combine_now(layout: Layout, data, ufunc, value, backend) -> list:
    """Per-chunk partial results of `ufunc` (no mode can hold them) combined at once:
    every chunk that overlaps another gets the full value of its box (identity `value`)."""
    out = list(data)
    for k, (box, device) in enumerate(zip(layout.boxes, layout.chunk_devices)):
        if len(_redistribute.partial_plan(layout, box)) > 1:
            out[k] = _redistribute.combine_partials(
                layout, data, box, device, ufunc.__name__, value, backend
            )
    return out


def astype(x: DistArray, dtype) -> DistArray:
    """`x` with chunks cast to `dtype` (the mode kept: callers cast only where the cast
    commutes with combining, or the mode is REPLICA)."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    backend = x._backend
    data = []
    for chunk, device in zip(x._data, x.layout.chunk_devices):
        with backend.on(device):
            data.append(chunk.astype(dtype))
    # A cast commutes with combining copies only between float (or complex) dtypes.
    if x.mode.is_partial and not (x.dtype.kind in "fc" and dtype.kind in "fc"):
        return astype(x.change_mode(REPLICA), dtype)
    return x._with(data=data, dtype=dtype)


def map_chunks(x: DistArray, func, *operands, dtype=None, mode=None) -> DistArray:
    """``func(chunk, *aligned operand chunks)`` per chunk of `x` (operands aligned with
    `_dispatch.aligned_chunks`), keeping `x`'s layout."""
    backend = x._backend
    aligned = [_dispatch.aligned_chunks(op, x.layout, backend) for op in operands]
    data = []
    for k, device in enumerate(x.layout.chunk_devices):
        with backend.on(device):
            data.append(func(x._data[k], *(a[k] for a in aligned)))
    return _dispatch.wrap(
        x.layout, data, backend, x.mode if mode is None else mode, dtype or data[0].dtype
    )


# The engine -------------------------------------------------------------------------


def reduce(x: DistArray, ufunc, axes: tuple, keepdims: bool, result_dtype, *, dtype=None,
           where=True, initial=NO_VALUE) -> DistArray:  # fmt: skip
    """`ufunc` reduced over `axes` of `x` (non-empty): partial where the axes are split.

    `where` (an operand broadcastable to `x`) masks elements out; `initial` joins the
    reduction once; `dtype` is the user's dtype, `result_dtype` NumPy's for the result.
    """
    result_dtype = np.dtype(result_dtype)
    backend = x._backend
    mode = partial_mode(ufunc, result_dtype)
    if x.mode.is_partial and not (x.mode is mode and result_dtype == x.dtype):
        x = x.change_mode(REPLICA)
    plan, whole = reduce_plan(x.layout, axes, keepdims)
    combine = None
    if x.mode.is_partial:
        out_mode = x.mode  # linear: the reduction of each copy is a copy of the reduction
    elif whole:
        out_mode = REPLICA
    elif mode is not None or (ufunc in _REORDERABLE and identity(ufunc, x.dtype) is not None):
        out_mode = mode or REPLICA
        combine = None if mode is not None else identity(ufunc, result_dtype)
    else:
        x = x.reshard(whole_layout(x, axes))
        plan, _ = reduce_plan(x.layout, axes, keepdims)
        out_mode = REPLICA
    data = x._data
    if (out_mode.is_partial or combine is not None) and ufunc not in _IDEMPOTENT:
        if x.mode is REPLICA and x.layout.has_overlaps:
            data = _redistribute.fill_shadowed(x.layout, data, identity(ufunc, x.dtype), backend)
    masks = None if where is True else _dispatch.aligned_chunks(where, x.layout, backend)
    results = []
    for k, (box, shape, device) in enumerate(
        zip(x.layout.boxes, plan.chunk_shapes, x.layout.chunk_devices)
    ):
        with backend.on(device):
            results.append(
                _reduce_chunk(
                    backend,
                    device,
                    ufunc,
                    x,
                    data[k],
                    box,
                    axes,
                    shape,
                    dtype,
                    result_dtype,
                    None if masks is None else masks[k],
                )  # fmt: skip
            )
    if combine is not None:
        results = combine_now(plan, results, ufunc, combine, backend)
    if initial is not NO_VALUE:
        results = _with_initial(plan, results, ufunc, out_mode, initial, result_dtype, backend)
    return _dispatch.wrap(plan, results, backend, out_mode, result_dtype)


def _reduce_chunk(backend, device, ufunc, x, chunk, box, axes, shape, dtype, result_dtype, mask):
    if not all(shape):
        return backend.empty(shape, result_dtype, device)
    if any(len(box[a]) == 0 for a in axes):
        # An empty part of a split axis contributes the identity.
        return backend.full(shape, identity(ufunc, result_dtype), result_dtype, device)
    if mask is not None:
        chunk = backend.xp.where(mask, chunk, identity(ufunc, x.dtype)).astype(x.dtype)
    return local_reduce(backend, ufunc, chunk, axes, dtype, result_dtype).reshape(shape)


def _with_initial(layout, data, ufunc, mode, initial, dtype, backend) -> list:
    """`initial` joined once into each element: into every copy for idempotent ufuncs
    and REPLICA results, else only into the copy that owns the element."""
    combine = getattr(backend.xp, ufunc.__name__)
    value = np.array(initial).astype(dtype)[()]
    fills = [
        backend.full(shape, value, dtype, device)
        for shape, device in zip(layout.chunk_shapes, layout.chunk_devices)
    ]
    if mode.is_partial and ufunc not in _IDEMPOTENT:
        fills = _redistribute.fill_shadowed(layout, fills, identity(ufunc, dtype), backend)
    out = []
    for chunk, fill, device in zip(data, fills, layout.chunk_devices):
        with backend.on(device):
            out.append(combine(chunk, fill).astype(dtype, copy=False))
    return out


# Front end: NumPy's argument checks on a probe, empty inputs, ``out=`` -------------


def probe(x: DistArray) -> np.ndarray:
    """A tiny array of ones like `x`: same dtype, same zero-length axes."""
    return np.ones(tuple(min(n, 1) for n in x.shape), x.dtype)


def check_with_probe(func, x: DistArray, out, kwargs) -> np.ndarray:
    """Run NumPy's `func` on the probe with `kwargs` (``where`` as True, ``out`` of the
    probe result's shape): NumPy raises its own errors; returns the probe result."""
    kwargs = dict(kwargs)
    if "where" in kwargs and kwargs["where"] is not True:
        _check_where(kwargs["where"], x.shape)
        kwargs["where"] = np.True_  # a mask, as NumPy sees one (not the default True)
    small = probe(x)
    # The probe's counts are not the input's: its warnings ("Degrees of freedom <= 0")
    # would be wrong; NumPy's errors stay.
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        result = np.asarray(func(small, **kwargs))
        if out is not None:
            func(small, out=np.empty(result.shape, out.dtype), **kwargs)
    return result


def _check_where(where, shape) -> None:
    where_shape = _dispatch.shape_of(where)
    if np.broadcast_shapes(where_shape, shape) != tuple(shape):
        raise ValueError(
            f"where= of shape {where_shape} does not broadcast to the input's shape {shape}"
        )


def filled(x: DistArray, shape: tuple, value_probe: np.ndarray, dtype) -> DistArray:
    """The result of reducing an empty `x`: every element equals the probe's (the
    identity, `initial`, or NaN), blocks over `x`'s devices."""
    backend = x._backend
    layout = Layout.block(shape, devices=x.devices)
    value = value_probe.reshape(-1)[0] if value_probe.size else 0
    data = [
        backend.full(s, value, dtype, d) for s, d in zip(layout.chunk_shapes, layout.chunk_devices)
    ]
    return _dispatch.wrap(layout, data, backend, REPLICA, dtype)


def reduction(func, ufunc, x: DistArray, axis, out=None, **kwargs):
    """A NumPy reduction `func` (``np.sum`` or ``np.add.reduce``) of `x` by `ufunc`.

    `kwargs` are those the caller gave (``dtype keepdims initial where``).
    """
    out = unwrap_out(out)
    kwargs = {k: v for k, v in kwargs.items() if v is not NO_VALUE}
    if kwargs.get("where", True) is not True and identity(ufunc, x.dtype) is None:
        # No value masks an element out of this ufunc's reduction: NumPy decides.
        name = f"numpy.{getattr(func, '__name__', ufunc.__name__)} with where="
        return _dispatch.fallback(func, (x,), dict(kwargs, axis=axis, out=out), name)
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
        )
    return result if out is None else _dispatch.write_out(out, result)


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
