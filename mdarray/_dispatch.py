"""From a NumPy call to per-chunk kernels: unwrap, align, run per chunk, wrap.

`array_ufunc` and `array_function` look implementations up in `_registry`; a NumPy
function with none goes to the fallback policy (`_config.options`). The helpers below
are shared by the op modules: `result_layout` picks the layout of a result,
`aligned_chunks` brings any operand (DistArray, NumPy, CuPy or scalar) to a layout, chunk
by chunk, and `wrap` builds the result.
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np

from . import _redistribute, _registry
from ._array import DistArray
from ._backend import backend as default_backend_object
from ._config import PerformanceWarning, get_options
from ._layout import Layout
from ._modes import REPLICA


def array_ufunc(ufunc, method, inputs, kwargs):
    impl = _registry.UFUNC_OVERRIDES.get((ufunc, method)) or _registry.UFUNC_METHODS.get(method)
    if impl is None:
        return fallback(getattr(ufunc, method), inputs, kwargs, f"numpy.{ufunc.__name__}.{method}")
    return impl(ufunc, inputs, kwargs)


def array_function(func, types, args, kwargs):
    impl = _registry.FUNCTIONS.get(func)
    if impl is not None:
        return impl(*args, **kwargs)
    if not all(issubclass(t, (DistArray, np.ndarray)) or _is_cupy_type(t) for t in types):
        return NotImplemented
    return fallback(func, args, kwargs, f"{func.__module__}.{func.__name__}")


def _is_cupy_type(t) -> bool:
    return t.__module__.startswith("cupy")


# Fallback ---------------------------------------------------------------------------


def check_fallback(name: str, nbytes: int) -> None:
    """Apply the fallback policy to gathering `nbytes` for `name`; raise or warn."""
    opts = get_options()
    if opts.fallback == "raise":
        raise TypeError(
            f"{name} has no distributed implementation for DistArray (fallback='raise')"
        )
    if nbytes > opts.fallback_limit:
        raise TypeError(
            f"{name} has no distributed implementation and its DistArray operands ({nbytes} bytes) "
            f"exceed fallback_limit={opts.fallback_limit} bytes: they are not gathered implicitly"
        )
    if opts.fallback == "warn":
        warnings.warn(
            f"{name} has no distributed implementation: the DistArray operands were gathered "
            "to the host, computed there, and the result re-distributed",
            PerformanceWarning,
            stacklevel=4,
        )


def fallback(func, args, kwargs, name: str):
    """Gather DistArray arguments to the host, run `func`, and re-distribute the result."""
    arrays = _distarrays((args, kwargs))
    check_fallback(name, sum(a.nbytes for a in arrays))
    template = arrays[0]
    result = func(*_gathered(args), **_gathered(kwargs))
    return _redistributed(result, template)


def _distarrays(obj) -> list:
    if isinstance(obj, DistArray):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [a for item in obj for a in _distarrays(item)]
    if isinstance(obj, dict):
        return [a for item in obj.values() for a in _distarrays(item)]
    return []


def _gathered(obj):
    if isinstance(obj, DistArray):
        return obj.get()
    if isinstance(obj, list):
        return [_gathered(item) for item in obj]
    if isinstance(obj, tuple):
        return tuple(_gathered(item) for item in obj)
    if isinstance(obj, dict):
        return {k: _gathered(v) for k, v in obj.items()}
    return obj


def _redistributed(result, template: DistArray):
    from ._creation_functions import distributed_array

    if isinstance(result, tuple):
        return tuple(_redistributed(r, template) for r in result)
    if isinstance(result, list):
        return [_redistributed(r, template) for r in result]
    if isinstance(result, np.ndarray) and result.ndim:
        layout = (
            template.layout
            if result.shape == template.shape
            else Layout.block(result.shape, devices=template.devices)
        )
        return distributed_array(result, layout)
    return result


# Shared helpers for op modules --------------------------------------------------------


def result_layout(shape: tuple, operands) -> Layout:
    """The layout of the first DistArray operand of `shape`, else blocks over the devices
    of the first DistArray operand (or of the backend)."""
    first = None
    for x in operands:
        if isinstance(x, DistArray):
            if x.shape == shape:
                return x.layout
            first = x if first is None else first
    devices = first.devices if first is not None else default_backend_object().device_ids
    return Layout.block(shape, devices=devices)


@lru_cache(maxsize=4096)
def broadcast_regions(layout: Layout, operand_shape: tuple) -> tuple:
    """For each chunk of `layout`, the box of an operand of `operand_shape` it reads
    under broadcasting (the operand's axes align with the layout's trailing axes)."""
    offset = len(layout.shape) - len(operand_shape)
    return tuple(
        tuple(
            range(0, 1) if n == 1 and layout.shape[offset + a] != 1 else box[offset + a]
            for a, n in enumerate(operand_shape)
        )
        for box in layout.boxes
    )


def aligned_chunks(operand, layout: Layout, backend) -> list:
    """`operand` cut to the chunks of `layout` (broadcast, on each chunk's device).

    A DistArray of the same layout and REPLICA mode gives its chunks as they are; any
    other DistArray is brought over with `_redistribute.region_value`; NumPy and CuPy
    arrays are sliced and copied to the devices; scalars are returned as they are.
    """
    if isinstance(operand, DistArray):
        if operand.layout == layout and operand.mode is REPLICA:
            return list(operand._data)
        if operand.mode is not REPLICA:
            operand = operand.change_mode(REPLICA)
        regions = broadcast_regions(layout, operand.shape)
        out = []
        for region, device in zip(regions, layout.chunk_devices):
            out.append(_redistribute.region_value(operand, region, device))
        return out
    if isinstance(operand, np.ndarray) or backend.is_native(operand):
        if operand.ndim == 0:
            return (
                [operand[()]] * len(layout.chunks)
                if isinstance(operand, np.ndarray)
                else [backend.adopt(operand, d) for d in layout.chunk_devices]
            )
        regions = broadcast_regions(layout, operand.shape)
        out = []
        for region, device in zip(regions, layout.chunk_devices):
            piece = operand[tuple(slice(r.start, r.stop, r.step) for r in region)]
            if isinstance(operand, np.ndarray):
                out.append(backend.from_host(piece, device))
            else:
                out.append(backend.adopt(piece, device))
        return out
    return [operand] * len(layout.chunks)


def wrap(layout: Layout, data, backend, mode=REPLICA, dtype=None) -> DistArray:
    """A DistArray from per-chunk results (dtype from the first chunk unless given)."""
    data = list(data)
    if dtype is None:
        dtype = data[0].dtype
    return DistArray._new(layout, data, mode, dtype, backend)


def shape_of(x) -> tuple:
    """The shape of an operand without gathering it (DistArray, array or scalar)."""
    return x.shape if isinstance(x, DistArray) else np.shape(x)


def backend_of(operands):
    """The backend of the first DistArray operand."""
    for x in operands:
        if isinstance(x, DistArray):
            return x._backend
    return default_backend_object()


def write_out(out, result: DistArray, *, casting=None, name: str = ""):
    """Make `out` (``out=`` of a ufunc or function) hold `result`'s value; return `out`.

    A DistArray `out` keeps its layout; where that is the result's layout it takes the
    result's chunks and mode as they are (a partial result stays partial, no copy), else
    the value is resharded to it. Its chunks are rebound, not written through, so
    arrays sharing buffers with `out` are left alone. A NumPy `out` gets the gathered value.
    With `casting`, the cast from the result's dtype is checked first, as NumPy does.
    """
    if tuple(out.shape) != result.shape:
        raise ValueError(
            f"{name or 'output'}: out has shape {tuple(out.shape)}, the result's is {result.shape}"
        )
    if casting is not None and not np.can_cast(result.dtype, out.dtype, casting):
        raise TypeError(
            f"Cannot cast ufunc {name!r} output from {result.dtype!r} to {out.dtype!r} "
            f"with casting rule {casting!r}"
        )
    if not isinstance(out, DistArray):
        out[...] = result.get()
        return out
    value = result.astype(out.dtype, copy=False)
    if value.layout != out.layout:
        value = value.change_mode(REPLICA).reshard(out.layout)
    out._set_data(value._data)
    out._mode = value.mode
    return out
