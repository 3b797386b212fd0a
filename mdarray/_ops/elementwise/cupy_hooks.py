"""CuPy's override hooks: CuPy kernels called on DistArrays return DistArrays.

CuPy calls ``__cupy_override_elementwise_kernel__`` for its ufuncs and
ElementwiseKernels and ``__cupy_override_reduction_kernel__`` for its reductions when an
argument has them. Kernels with a NumPy twin take the NumPy function's distributed path
(mode rules, partial results); any other kernel runs chunk by chunk.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from mdarray._array.array import DistArray, wrap
from mdarray._core import regions as _regions
from mdarray._core.modes import REPLICA
from mdarray._core.registry import UFUNC_METHODS, UFUNC_OVERRIDES, implements_method
from mdarray._exec.chunkwise import aligned, backend_of, result_layout, write_out
from mdarray._exec.operands import as_operand
from mdarray._movement.redistribute import region_value
from mdarray._ops.engine import reduction as _reduction
from mdarray._ops.engine.ufunc_plans import call_shape
from mdarray._storage.chunks import Chunks

# Elementwise kernels -------------------------------------------------------------------


@implements_method("cupy_get_ndarray")
def cupy_get_ndarray(x: DistArray):
    """``cupy.asarray(x)``: the value gathered onto CuPy's current device (the cuda
    backend), or to the host and then onto it (the cpu backend)."""
    import cupy  # noqa: PLC0415  (lazy: mdarray works without CuPy)

    backend = x.storage.backend
    if backend.name == "cuda":
        device = cupy.cuda.Device().id
        out = region_value(x.storage, x.mode, _regions.full_box(x.shape), device)
        backend.export_to_current(device)  # the caller uses it on its stream
        return out
    return cupy.asarray(x.get())


@implements_method("cupy_elementwise")
def cupy_elementwise(kernel, args, kwargs):
    """CuPy's ``__cupy_override_elementwise_kernel__``: ``cupy.cos(x)``, ``cupy_array + x``
    and a user's ``cupy.ElementwiseKernel`` over DistArrays.

    CuPy hands over its kernel and the call's arguments (outputs may follow the inputs
    positionally). A CuPy ufunc with a NumPy twin takes the NumPy ufunc's path (mode
    rules, ``out``, ``where``); any other kernel runs on each chunk of the result's layout
    with its operands aligned to it in REPLICA mode.
    """
    ufunc = _numpy_twin(kernel)
    if ufunc is not None:
        kwargs = dict(kwargs)
        if "_where" in kwargs:
            kwargs["where"] = kwargs.pop("_where")
        if len(args) > ufunc.nin:
            kwargs["out"] = tuple(args[ufunc.nin :])
        elif kwargs.get("out") is not None and not isinstance(kwargs["out"], tuple):
            kwargs["out"] = (kwargs["out"],)
        impl = UFUNC_OVERRIDES.get((ufunc, "__call__")) or UFUNC_METHODS["__call__"]
        return impl(ufunc, tuple(args[: ufunc.nin]), kwargs)
    return _kernel_call(kernel, args, kwargs)


def _numpy_twin(kernel):
    """The NumPy ufunc of a CuPy ufunc (named ``cupy_<name>``), else None."""
    name = getattr(kernel, "name", "")
    if type(kernel).__name__ != "ufunc" or not name.startswith("cupy_"):
        return None
    ufunc = getattr(np, name[len("cupy_") :], None)
    if isinstance(ufunc, np.ufunc) and ufunc.nin == kernel.nin and ufunc.nout == kernel.nout:
        return ufunc
    return None


def _kernel_call(kernel, args, kwargs):
    """Any elementwise kernel ``kernel(*inputs, *outputs)``, chunk by chunk."""
    name = getattr(kernel, "name", type(kernel).__name__)
    if kwargs:
        raise TypeError(f"{name}: {sorted(kwargs)} cannot be used with DistArray arguments")
    if any(getattr(p, "raw", False) for p in getattr(kernel, "params", ())):
        raise TypeError(
            f"{name} has raw parameters, which index whole arrays: it cannot run chunk by "
            "chunk on DistArrays; gather them with x.get() or cupy.asarray(x) first"
        )
    nin, nout = kernel.nin, kernel.nout
    if len(args) not in (nin, nin + nout):
        raise TypeError(f"{name} takes {nin} or {nin + nout} arguments, got {len(args)}")
    inputs = tuple(as_operand(x) for x in args[:nin])
    outs = tuple(args[nin:]) or None
    shape = call_shape(inputs, outs, None)
    backend = backend_of((*inputs, *(outs or ())))
    first_out = next((o for o in outs or () if isinstance(o, DistArray)), None)
    layout = first_out.layout if first_out is not None else result_layout(shape, inputs)
    columns = [aligned(x, layout, backend) for x in inputs]
    # Outputs the kernel writes into: all of them, when all are REPLICA DistArrays of
    # `layout` of one chunk (several kernel calls compute first, then `write_out` commits).
    direct = (
        outs
        if outs is not None
        and len(layout.chunks) == 1
        and all(isinstance(o, DistArray) and o.layout == layout and o.mode is REPLICA for o in outs)
        else None
    )
    targets = [o.storage.writable() for o in direct] if direct is not None else []
    results = []
    for k, device in enumerate(layout.chunk_devices):
        args_k = [column[k] for column in columns]
        if direct is not None:
            args_k += [t[k] for t in targets]
        with backend.on(device):
            got = kernel(*args_k)
        results.append(got if isinstance(got, tuple) else (got,))
    if direct is not None:
        return direct[0] if nout == 1 else direct
    values = [wrap(Chunks.of(layout, [r[i] for r in results], backend)) for i in range(nout)]
    if outs is not None:
        for o, value in zip(outs, values):
            write_out(o, value)
        values = list(outs)
    return values[0] if nout == 1 else tuple(values)


# Reduction kernels ---------------------------------------------------------------------

# CuPy reduction kernels by name (``kernel.name`` without its ``cupy_`` prefix).
_CUPY_KERNELS: dict[str, Callable[..., Any]] = {
    "sum": np.sum,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "all": np.all,
    "any": np.any,
    "argmax": np.argmax,
    "argmin": np.argmin,
    "mean": np.mean,
}


@implements_method("cupy_reduction")
def cupy_reduction(x: DistArray, kernel, axis, dtype, out, keepdims):
    """A CuPy reduction `kernel` over `x` (``__cupy_override_reduction_kernel__``).

    Kernels NumPy has a function for take its distributed path (partial results);
    any other kernel runs per chunk after a reshard that makes the axes whole.
    """
    name = str(getattr(kernel, "name", "")).removeprefix("cupy_")
    func = _CUPY_KERNELS.get(name)
    if func is not None:
        kwargs = {"axis": axis, "out": out, "keepdims": builtins.bool(keepdims)}
        if dtype is not None and func in (np.sum, np.prod, np.mean):
            kwargs["dtype"] = dtype
        return func(x, **kwargs)
    axes = _reduction.normalize_axes(axis, x.ndim)
    if x.mode.is_partial:
        x = x.change_mode(REPLICA)
    plan, whole = _reduction.reduce_plan(x.layout, axes, builtins.bool(keepdims))
    if not whole:
        x = x.reshard(x.layout.whole_along(axes))
        plan, _ = _reduction.reduce_plan(x.layout, axes, builtins.bool(keepdims))
    buffers = x.storage.buffers

    def reduce_chunk(k):
        chunk = kernel(buffers[k], axis=axes, dtype=dtype, keepdims=True)
        return chunk.reshape(plan.chunk_shapes[k])

    result = wrap(Chunks.generate(plan, x.storage.backend, reduce_chunk, None))
    return result if out is None else write_out(out, result)
