"""Elementwise functions: every ufunc's ``__call__`` runs per chunk.

One implementation serves every NumPy ufunc, so ``a + b``, ``np.add(a, b)``,
``mdarray.add(a, b)`` and ``cupy.add(a, b)`` take one path:

1. NumPy itself resolves the dtypes, on empty stand-ins of the operands (`_resolve`,
   cached on the ufunc and the operands' types), so result dtypes, casting errors and
   rejected type combinations are NumPy's own, raised before any chunk is touched.
2. The result takes the layout of the first DistArray ``out``, else of the first DistArray
   operand of the output's shape (`_dispatch.result_layout`).
3. Partial operands stay partial where `_mode_rules` proves the algebra; otherwise they
   become REPLICA first.
4. The backend's kernel runs on each chunk, on the chunk's device, writing straight into
   ``out``'s chunks where ``out`` has the result's layout and mode, so ``x += y`` writes
   every replica of ``x`` in place.

REPLICA operands of one layout, with Python scalars, take a fast path (`_fast_call`) that
goes from the operands' chunks to the kernels with no planning and no copies.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import repeat

import numpy as np

from . import _dispatch, _mode_rules, _redistribute
from ._array import DistArray
from ._modes import REPLICA
from ._regions import full_box
from ._registry import implements, implements_ufunc_method

_PY_SCALARS = (bool, int, float, complex)
_IGNORED = frozenset({"order", "subok"})  # no effect on values; chunks are always C order
_PASSED = frozenset({"dtype", "casting"})


# Dtype resolution --------------------------------------------------------------------


def _key(x):
    """What decides dtypes for an operand: an array's dtype, or a Python scalar's weak type
    (with an int's value, whose range NumPy checks against the other operands' dtypes)."""
    if isinstance(x, (DistArray, np.generic)) or hasattr(x, "dtype"):
        return x.dtype
    if isinstance(x, int):
        return (type(x), x)
    return (type(x), None)


def _stand_in(key):
    if isinstance(key, tuple):
        kind, value = key
        return kind(0) if value is None else value
    return np.empty(0, key)


@lru_cache(maxsize=4096)
def _resolve(ufunc, keys: tuple, out_keys: tuple | None, where_key, options: tuple) -> tuple:
    """The dtypes of ``ufunc``'s outputs for operands of these types (NumPy's errors).

    With `out_keys` (dtypes, or None for outputs not given) or a `where_key`, NumPy also
    checks the casts into the outputs and of the mask, with the call's `options`.
    """
    inputs = [_stand_in(k) for k in keys]
    kwargs = dict(options)
    with np.errstate(all="ignore"):
        results = ufunc(*inputs, **kwargs)
        results = results if isinstance(results, tuple) else (results,)
        if out_keys is not None or where_key is not None:
            dtypes = out_keys or (None,) * ufunc.nout
            outs = tuple(np.empty(0, r.dtype if d is None else d) for r, d in zip(results, dtypes))
            where = True if where_key is None else _stand_in(where_key)
            ufunc(*inputs, out=outs, where=where, **kwargs)
    return tuple(r.dtype for r in results)


_KERNELS: dict = {}


def _kernel(backend, ufunc):
    """The backend's ufunc of `ufunc`'s name (None if it has none), looked up once.

    Where CuPy lacks a loop or a ufunc that NumPy has, an adapter built from CuPy's
    other ufuncs stands in (`_CUPY_ADAPTERS`)."""
    key = (backend.name, ufunc)
    kernel = _KERNELS.get(key)
    if kernel is None:
        if backend.xp is np:
            kernel = ufunc
        elif ufunc in _CUPY_ADAPTERS:
            kernel = _CUPY_ADAPTERS[ufunc](backend.xp, getattr(backend.xp, ufunc.__name__, None))
        else:
            kernel = getattr(backend.xp, ufunc.__name__, False)
        _KERNELS[key] = kernel
    return kernel or None


def _truth_of_complex(xp, kernel):
    """CuPy's logical ufuncs have no complex loops; NumPy's read a complex as ``!= 0``."""

    def call(*args, **kwargs):
        args = [a != 0 if np.dtype(_dtype_of(a)).kind == "c" else a for a in args]
        return kernel(*args, **kwargs)

    return call


def _spacing(xp, kernel):
    """CuPy has no ``spacing``: the step to the next float away from zero, computed in
    NumPy's loop dtype (float16 for int8, ...), as ``nextafter(x, ±inf) - x``."""

    def call(x, out=None, dtype=None, casting="same_kind"):
        loop = np.spacing.resolve_dtypes((np.dtype(_dtype_of(x)), None))[1]
        x = xp.asarray(x).astype(loop, copy=False)
        result = xp.nextafter(x, xp.copysign(xp.asarray(np.inf, loop), x)) - x
        if dtype is not None:
            result = result.astype(dtype)
        if out is None:
            return result
        target = out[0] if isinstance(out, tuple) else out
        xp.copyto(target, result, casting=casting)
        return out

    return call


def _dtype_of(a):
    return a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype


_CUPY_ADAPTERS = {
    np.logical_and: _truth_of_complex,
    np.logical_not: _truth_of_complex,
    np.logical_or: _truth_of_complex,
    np.logical_xor: _truth_of_complex,
    np.spacing: _spacing,
}


def _may_fail(ufunc, backend) -> bool:
    """Whether a kernel may raise after writing part of its output: NumPy's integer power
    (negative exponents) and any ufunc under ``np.errstate(... = "raise")``. Such calls
    write into ``out`` only once every chunk has succeeded, so a failure changes nothing."""
    if backend.xp is not np:
        return False
    return ufunc is np.power or "raise" in np.geterr().values()


# The fast path -----------------------------------------------------------------------


def _fast_call(ufunc, inputs, kwargs):
    """REPLICA DistArrays of one layout and Python scalars, ``out`` at most: kernels with
    no planning. None when the general path is needed.

    Packed operands (`Layout.packing`) line up slab to slab, so the kernel runs once per
    device on the slabs; others run once per chunk.
    """
    layout = None
    keys = []
    arrays = []
    for x in inputs:
        kind = type(x)
        if kind is DistArray:
            if x._mode is not REPLICA:
                return None
            if layout is None:
                layout, backend = x._layout, x._backend
            elif x._layout is not layout and x._layout != layout:
                return None
            keys.append(x._dtype)
            arrays.append(x)
        elif kind in _PY_SCALARS:
            keys.append((kind, x if kind is int or kind is bool else None))
            arrays.append(x)
        else:
            return None
    if layout is None:
        return None
    out = kwargs.get("out")
    if len(kwargs) != (out is not None):
        return None
    out_keys = None
    if out is not None:
        for o in out:
            if type(o) is not DistArray or o._mode is not REPLICA or o._layout != layout:
                return None
        out_keys = tuple(o._dtype for o in out)
    dtypes = _resolve(ufunc, tuple(keys), out_keys, None, ())
    kernel = _kernel(backend, ufunc)
    if kernel is None or (out is not None and _may_fail(ufunc, backend)):
        return None
    packed = all(type(x) is not DistArray or x._slabs is not None for x in arrays)
    if packed:
        return _slab_call(ufunc, kernel, layout, backend, arrays, out, dtypes)
    columns = [x._data if type(x) is DistArray else repeat(x) for x in arrays]
    on = backend.on
    if out is not None:
        for device, args, targets in zip(
            layout.chunk_devices, zip(*columns), zip(*(o._writable() for o in out))
        ):
            with on(device):
                kernel(*args, out=targets)
        return out[0] if len(out) == 1 else out
    results = []
    for device, args in zip(layout.chunk_devices, zip(*columns)):
        with on(device):
            results.append(kernel(*args))
    return _wrap_results(ufunc, layout, results, backend, REPLICA, dtypes)


def _slab_call(ufunc, kernel, layout, backend, arrays, out, dtypes):
    """One kernel per device over the slabs of packed operands (see `_fast_call`)."""
    targets = None
    if out is not None:
        targets = [o._own_slabs() for o in out]
        if any(t is None for t in targets):
            return None
    results = []
    for d, device in enumerate(layout.devices):
        args = [x._slabs[d] if type(x) is DistArray else x for x in arrays]
        with backend.on(device):
            if targets is not None:
                kernel(*args, out=tuple(t[d] for t in targets))
                continue
            got = kernel(*args)
            got = got if isinstance(got, tuple) else (got,)
            # NumPy's dtype is the contract where CuPy promotes differently.
            results.append([g if g.dtype == t else g.astype(t) for g, t in zip(got, dtypes)])
    if out is not None:
        return out[0] if len(out) == 1 else out
    values = [
        DistArray._from_slabs(layout, [r[i] for r in results], REPLICA, dtype, backend, check=False)
        for i, dtype in enumerate(dtypes)
    ]
    return values[0] if ufunc.nout == 1 else tuple(values)


def _wrap_results(ufunc, layout, results, backend, mode, dtypes):
    """DistArrays from per-chunk results (tuples for several outputs), in `dtypes`."""
    if ufunc.nout == 1:
        return _wrap(layout, results, backend, mode, dtypes[0])
    return tuple(
        _wrap(layout, [r[i] for r in results], backend, mode, dtypes[i]) for i in range(ufunc.nout)
    )


def _wrap(layout, data, backend, mode, dtype):
    if data[0].dtype != dtype:
        # A backend whose kernels promote differently from NumPy (CuPy in corner cases):
        # NumPy's dtype is the contract.
        data = _cast_chunks(layout, data, backend, dtype)
    return _dispatch.wrap(layout, data, backend, mode, dtype)


def _cast_chunks(layout, data, backend, dtype):
    out = []
    for device, chunk in zip(layout.chunk_devices, data):
        with backend.on(device):
            out.append(chunk.astype(dtype))
    return out


# The general path --------------------------------------------------------------------


@implements_ufunc_method("__call__")
def ufunc_call(ufunc, inputs, kwargs):
    """Run `ufunc` on each chunk of the result's layout, operands aligned to it."""
    result = _fast_call(ufunc, inputs, kwargs)
    if result is not None:
        return result
    if ufunc.signature is not None:
        # A gufunc without its own implementation (matmul has one): its core dimensions
        # may be split across chunks, so it cannot run chunk by chunk.
        return _fallback_call(ufunc, inputs, kwargs)
    kwargs = dict(kwargs)
    outs = _outputs(ufunc, kwargs.pop("out", None))
    where = kwargs.pop("where", True)
    for name in _IGNORED & kwargs.keys():
        del kwargs[name]
    if kwargs.keys() - _PASSED:
        if "signature" in kwargs:
            return _fallback_call(ufunc, inputs, {**kwargs, "out": outs, "where": where})
        unknown = sorted(kwargs.keys() - _PASSED)[0]
        raise TypeError(f"'{unknown}' is an invalid keyword to ufunc '{ufunc.__name__}'")
    inputs = tuple(_as_operand(x) for x in inputs)
    if any(x is NotImplemented for x in inputs):
        return NotImplemented
    where = _as_where(where)
    options = tuple(sorted(kwargs.items()))
    out_keys = None if outs is None else tuple(None if o is None else o.dtype for o in outs)
    where_key = None if where is None else _key(where)
    dtypes = _resolve(ufunc, tuple(map(_key, inputs)), out_keys, where_key, options)
    shape = _call_shape(inputs, outs, where)
    backend = _dispatch.backend_of((*inputs, *(outs or ()), where))
    kernel = _kernel(backend, ufunc)
    if kernel is None:
        where = True if where is None else where
        return _fallback_call(ufunc, inputs, {**kwargs, "out": outs, "where": where})
    first_out = next((o for o in outs or () if isinstance(o, DistArray)), None)
    layout = first_out.layout if first_out is not None else _dispatch.result_layout(shape, inputs)
    inputs, mode = _operands_in_mode(ufunc, inputs, layout, dtypes, where)
    columns = [
        x._data
        if isinstance(x, DistArray) and x._mode is not REPLICA
        # Partial operands kept by a mode rule already have the result's layout.
        else _dispatch.aligned_chunks(x, layout, backend)
        for x in inputs
    ]
    in_place = not _may_fail(ufunc, backend)
    direct = tuple(
        in_place and isinstance(o, DistArray) and o._layout == layout and o._mode is mode
        for o in outs or (None,) * ufunc.nout
    )
    targets = _targets(ufunc, outs, direct, where, layout, backend, dtypes)
    masks = None if where is None else _dispatch.aligned_chunks(where, layout, backend)
    results = _run(kernel, columns, targets, masks, layout, backend, kwargs)
    return _deliver(ufunc, outs, direct, results, layout, backend, mode, dtypes)


def _outputs(ufunc, out) -> tuple | None:
    """``out`` as a tuple with one entry (an array or None) per output, or None."""
    if out is None:
        return None
    out = out if isinstance(out, tuple) else (out,)
    if len(out) != ufunc.nout:
        raise ValueError("The 'out' tuple must have exactly one entry per ufunc output")
    if all(o is None for o in out):
        return None
    return tuple(o if o is None or isinstance(o, DistArray) else _as_array(o) for o in out)


def _as_array(x):
    if isinstance(x, np.ndarray) or _dispatch.backend_of(()).is_native(x):
        return x
    raise TypeError(f"return arrays must be of ArrayType, got {type(x).__name__}")


def _as_operand(x):
    """An operand as the per-chunk code takes it: DistArrays, NumPy and CuPy arrays and
    scalars as they are (Python scalars stay weakly typed), other array-likes as NumPy
    arrays; NotImplemented for another library's duck arrays."""
    if isinstance(x, (DistArray, np.ndarray, np.generic, *_PY_SCALARS)):
        return x
    if _dispatch.backend_of(()).is_native(x):
        return x
    if getattr(type(x), "__array_ufunc__", None) is not None and not hasattr(x, "__array__"):
        return NotImplemented
    return np.asarray(x)


def _as_where(where):
    """None for a mask that is True everywhere; a host scalar stays a scalar."""
    if isinstance(where, (bool, np.bool_)) and where:
        return None
    return _as_operand(where)


def _call_shape(inputs, outs, where) -> tuple:
    shapes = [_dispatch.shape_of(x) for x in inputs]
    if where is not None:
        shapes.append(_dispatch.shape_of(where))
    out_shapes = [o.shape for o in outs or () if o is not None]
    shape = np.broadcast_shapes(*shapes, *out_shapes)
    for out_shape in out_shapes:
        if out_shape != shape:
            raise ValueError(
                f"non-broadcastable output operand with shape {out_shape} doesn't match "
                f"the broadcast shape {shape}"
            )
    return shape


def _operands_in_mode(ufunc, inputs, layout, dtypes, where):
    """The operands to run per chunk and the result's mode: partial where a mode rule
    proves it (never under a mask, which mixes in old values), else all REPLICA."""
    if not any(isinstance(x, DistArray) and x._mode.is_partial for x in inputs):
        return inputs, REPLICA
    if where is None and ufunc.nout == 1:
        mode = _mode_rules.result_mode(ufunc, inputs, layout, dtypes[0])
        if mode is not None:
            return inputs, mode
    return tuple(x.change_mode(REPLICA) if isinstance(x, DistArray) else x for x in inputs), REPLICA


def _targets(ufunc, outs, direct, where, layout, backend, dtypes):
    """Per output, the chunk arrays the kernel writes into, or None to let it allocate.

    ``out``'s own chunks where it has the result's layout and mode; under a mask, fresh
    chunks holding ``out``'s old values (or uninitialized ones for no ``out``), since
    where the mask is False the output keeps what it held."""
    targets = []
    for i in range(ufunc.nout):
        o = None if outs is None else outs[i]
        if direct[i]:
            targets.append(o._writable())
        elif where is None:
            targets.append(None)
        elif o is None:
            targets.append(
                [
                    backend.empty(shape, dtypes[i], device)
                    for shape, device in zip(layout.chunk_shapes, layout.chunk_devices)
                ]
            )
        else:
            old = _dispatch.aligned_chunks(o, layout, backend)
            targets.append(_private_copies(old, o, layout, backend))
    return targets


def _private_copies(chunks, owner, layout, backend):
    """`chunks`, copied where they are `owner`'s own buffers (they are written into)."""
    own = {id(c) for c in owner._data} if isinstance(owner, DistArray) else set()
    out = []
    for chunk, device in zip(chunks, layout.chunk_devices):
        if id(chunk) in own:
            with backend.on(device):
                chunk = backend.xp.array(chunk, copy=True)
        out.append(chunk)
    return out


def _run(kernel, columns, targets, masks, layout, backend, options):
    """Run `kernel` on every chunk: per chunk, the tuple of its output arrays."""
    results = []
    for k, device in enumerate(layout.chunk_devices):
        args = [column[k] for column in columns]
        given = [None if t is None else t[k] for t in targets]
        mask = None if masks is None else masks[k]
        with backend.on(device):
            results.append(_run_chunk(kernel, args, given, mask, backend.xp, options))
    return results


def _run_chunk(kernel, args, given, mask, xp, options):
    """One chunk: ``kernel(*args)`` into the `given` outputs (None: allocated), under
    `mask`; the outputs."""
    if isinstance(mask, (bool, np.bool_)):
        if not mask:
            return tuple(given)  # a False scalar mask writes nothing
        mask = None
    if mask is None:
        if any(t is not None for t in given):
            # A bare array for one output: CuPy's non-ufunc kernels (clip) take no tuple.
            got = kernel(*args, out=given[0] if len(given) == 1 else tuple(given), **options)
        else:
            got = kernel(*args, **options)
        return got if isinstance(got, tuple) else (got,)
    if xp is np:
        kernel(*args, out=tuple(given), where=mask, **options)
        return tuple(given)
    # CuPy's ufuncs take no public ``where``: compute everywhere, copy under the mask.
    got = kernel(*args, **options)
    for t, g in zip(given, got if isinstance(got, tuple) else (got,)):
        xp.copyto(t, g, casting="unsafe", where=mask)
    return tuple(given)


def _deliver(ufunc, outs, direct, results, layout, backend, mode, dtypes):
    """The call's return value: new DistArrays, or the ``out`` arrays written."""
    values = []
    for i in range(ufunc.nout):
        o = None if outs is None else outs[i]
        if direct[i]:
            values.append(o)
            continue
        data = [r[i] for r in results]
        if o is None:
            values.append(_wrap(layout, data, backend, mode, dtypes[i]))
            continue
        _write_into(o, _dispatch.wrap(layout, data, backend, mode))
        values.append(o)
    return values[0] if ufunc.nout == 1 else tuple(values)


def _write_into(o, value) -> None:
    """Write the DistArray `value` into `o` (a DistArray keeps its layout, mode and
    dtype; a NumPy or CuPy array gets the gathered value); casts were checked before."""
    backend = value._backend
    if isinstance(o, DistArray):
        if o._mode.is_partial and value.dtype != o.dtype:
            # Cast values, not partial copies (int8 copies wrap where their sum may not).
            value = value.change_mode(REPLICA)
            value = value._with(
                data=_cast_chunks(value.layout, value._data, backend, o.dtype), dtype=o.dtype
            )
        value = value.change_mode(o._mode).reshard(o._layout)
        for device, target, chunk in zip(o._layout.chunk_devices, o._writable(), value._data):
            if target is not chunk:
                with backend.on(device):
                    target[...] = chunk
        return
    if isinstance(o, np.ndarray):
        np.copyto(o, value.get(), casting="unsafe")
        return
    device = backend.device_of(o)
    piece = _redistribute.region_value(value, full_box(value.shape), device)
    with backend.on(device):
        o[...] = piece
    backend.export_to_current(device)


def _fallback_call(ufunc, inputs, kwargs):
    """Gather, compute with NumPy and write back, under the fallback policy."""
    outs = kwargs.get("out")
    result = _dispatch.fallback(ufunc, inputs, kwargs, f"numpy.{ufunc.__name__}")
    if not outs:
        return result
    results = result if isinstance(result, tuple) else (result,)
    delivered = []
    for o, r in zip(outs, results):
        if isinstance(o, DistArray):
            _write_into(o, r)
        delivered.append(r if o is None else o)
    return delivered[0] if len(delivered) == 1 else tuple(delivered)


# The array API's elementwise functions -------------------------------------------------

# Array API name -> NumPy ufunc; each function is ``ufunc(*args, **kwargs)``, so it takes
# the same path as ``np.add(a, b)`` and ``a + b``.
ARRAY_API_UFUNCS = {
    "abs": np.absolute,
    "acos": np.arccos,
    "acosh": np.arccosh,
    "add": np.add,
    "asin": np.arcsin,
    "asinh": np.arcsinh,
    "atan": np.arctan,
    "atan2": np.arctan2,
    "atanh": np.arctanh,
    "bitwise_and": np.bitwise_and,
    "bitwise_invert": np.invert,
    "bitwise_left_shift": np.left_shift,
    "bitwise_or": np.bitwise_or,
    "bitwise_right_shift": np.right_shift,
    "bitwise_xor": np.bitwise_xor,
    "ceil": np.ceil,
    "conj": np.conjugate,
    "copysign": np.copysign,
    "cos": np.cos,
    "cosh": np.cosh,
    "divide": np.divide,
    "equal": np.equal,
    "exp": np.exp,
    "expm1": np.expm1,
    "floor": np.floor,
    "floor_divide": np.floor_divide,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "hypot": np.hypot,
    "isfinite": np.isfinite,
    "isinf": np.isinf,
    "isnan": np.isnan,
    "less": np.less,
    "less_equal": np.less_equal,
    "log": np.log,
    "log10": np.log10,
    "log1p": np.log1p,
    "log2": np.log2,
    "logaddexp": np.logaddexp,
    "logical_and": np.logical_and,
    "logical_not": np.logical_not,
    "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "multiply": np.multiply,
    "negative": np.negative,
    "nextafter": np.nextafter,
    "not_equal": np.not_equal,
    "positive": np.positive,
    "pow": np.power,
    "reciprocal": np.reciprocal,
    "remainder": np.remainder,
    "sign": np.sign,
    "signbit": np.signbit,
    "sin": np.sin,
    "sinh": np.sinh,
    "sqrt": np.sqrt,
    "square": np.square,
    "subtract": np.subtract,
    "tan": np.tan,
    "tanh": np.tanh,
    "trunc": np.trunc,
}

# Elementwise functions of the array API that are not NumPy ufuncs ------------------------

_CLIP = np._core.umath.clip  # the ufunc behind ndarray.clip


@implements(np.clip)
def _clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None, **kwargs):
    """``numpy.clip`` through the ``clip`` ufunc (or ``minimum``/``maximum`` for one bound)."""
    low = a_min if min is None else min
    high = a_max if max is None else max
    out_kwargs = {} if out is None else {"out": out}
    if low is None and high is None:
        return a.copy() if out is None else np.positive(a, **out_kwargs, **kwargs)
    if low is None:
        return np.minimum(a, high, **out_kwargs, **kwargs)
    if high is None:
        return np.maximum(a, low, **out_kwargs, **kwargs)
    return _CLIP(a, low, high, **out_kwargs, **kwargs)


@implements(np.round, np.around)
def _round(a, decimals=0, out=None):
    """``numpy.round`` chunk by chunk."""
    return _chunkwise(a, out, lambda xp, c: xp.round(c, decimals), a.dtype)


@implements(np.real)
def _real(val):
    """The real part, chunk by chunk (a contiguous copy per chunk)."""
    dtype = np.real(np.empty(0, val.dtype)).dtype
    return _chunkwise(val, None, lambda xp, c: xp.ascontiguousarray(xp.real(c)), dtype)


@implements(np.imag)
def _imag(val):
    """The imaginary part, chunk by chunk (zeros for real dtypes)."""
    dtype = np.imag(np.empty(0, val.dtype)).dtype
    return _chunkwise(val, None, lambda xp, c: xp.ascontiguousarray(xp.imag(c)), dtype)


def _chunkwise(x, out, function, dtype):
    """``function(xp, chunk)`` on each chunk of REPLICA `x`, written into `out` if given."""
    x = x.change_mode(REPLICA)
    backend = x._backend
    data = []
    for device, chunk in zip(x._layout.chunk_devices, x._data):
        with backend.on(device):
            data.append(function(backend.xp, chunk))
    result = _wrap(x._layout, data, backend, REPLICA, np.dtype(dtype))
    if out is None:
        return result
    _write_into(out, result)
    return out


# The array API names -------------------------------------------------------------------

# Array API elementwise functions that are not ufuncs: name -> NumPy function.
ARRAY_API_OTHERS = {"clip": np.clip, "imag": np.imag, "real": np.real, "round": np.round}

# Sample inputs for each function's example, inside every function's domain.
_EXAMPLE_INPUTS = {"acosh": "[1.5, 2.0]", "integer": "[1, 2]", "bool": "[True, False]"}
_EXAMPLE_EXTRA_ARGS = {"clip": ", 0.3, 0.4"}


def _example(name: str, func) -> str:
    nin = getattr(func, "nin", 1)
    types = getattr(func, "types", ["d->d"])
    kinds = {np.dtype(t[0]).kind for t in types if t[0] not in "OmMV"}
    if "f" in kinds:
        values = _EXAMPLE_INPUTS.get(name, "[0.25, 0.5]")
    elif kinds & set("iu"):
        values = _EXAMPLE_INPUTS["integer"]
    else:
        values = _EXAMPLE_INPUTS["bool"]
    ours = ", ".join(["x"] * nin) + _EXAMPLE_EXTRA_ARGS.get(name, "")
    theirs = ours.replace("x", "x.get()")
    return (
        ">>> import mdarray, numpy as np\n"
        f">>> x = mdarray.distributed_array(np.array({values}), {{0: slice(0, 1), 1: slice(1, 2)}})\n"
        f">>> np.array_equal(mdarray.{name}({ours}).get(), np.{func.__name__}({theirs}))\n"
        "True\n"
    )


def _array_api_function(name: str, func):
    def function(*args, **kwargs):
        return func(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__module__ = "mdarray"
    function.__doc__ = (
        f"The array API's ``{name}``: ``numpy.{func.__name__}`` on DistArrays, chunk by chunk."
        f"\n\nTakes what ``numpy.{func.__name__}`` takes and returns DistArrays; the result's "
        "layout and mode\nare described on ``DistArray``.\n\n" + _example(name, func)
    )
    return function


ARRAY_API_FUNCTIONS = {
    name: _array_api_function(name, func)
    for name, func in sorted({**ARRAY_API_UFUNCS, **ARRAY_API_OTHERS}.items())
}
