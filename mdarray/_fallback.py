"""The fallback policy: NumPy functions with no distributed implementation.

`DistArray`'s protocols send a ufunc method or function that the registry has no
implementation for here (registered as the ``fallback_ufunc`` and ``fallback_function``
methods). Under the policy of `mdarray.options` the DistArray operands are gathered to
the host, NumPy computes, and array results are distributed again.
"""

from __future__ import annotations

import numpy as np

from ._array import DistArray, wrap
from ._chunkwise import write_out
from ._config import check_fallback
from ._layout import Layout
from ._registry import implements_method
from ._storage import Chunks


@implements_method("fallback_ufunc")
def fallback_ufunc(ufunc, method, inputs, kwargs):
    return fallback(getattr(ufunc, method), inputs, kwargs, f"numpy.{ufunc.__name__}.{method}")


@implements_method("fallback_function")
def fallback_function(func, types, args, kwargs):
    if not all(issubclass(t, (DistArray, np.ndarray)) or _is_cupy_type(t) for t in types):
        return NotImplemented
    return fallback(func, args, kwargs, f"{func.__module__}.{func.__name__}")


def _is_cupy_type(t) -> bool:
    return t.__module__.startswith("cupy")


def fallback(func, args, kwargs, name: str):
    """Gather DistArray arguments to the host, run `func`, and re-distribute the result."""
    arrays = _distarrays((args, kwargs))
    check_fallback(name, sum(a.nbytes for a in arrays))
    template = arrays[0]
    result = func(*gathered(args), **gathered(kwargs))
    return _redistributed(result, template)


def fallback_arrays(func, args, kwargs, name: str):
    """`fallback` for functions that return arrays: a 0-d or scalar result comes back a
    0-d DistArray too (replicated on the operands' devices), named tuples keep their type
    (``unique_all``'s fields), and a DistArray ``out=`` is written as NumPy would have
    written it (the result is computed, then written through out's buffers)."""
    out = kwargs.get("out")
    if isinstance(out, DistArray):
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    template = _distarrays((args, kwargs))[0]
    result = _distributed(fallback(func, args, kwargs, name), template)
    if isinstance(out, DistArray):
        return write_out(out, result, casting="same_kind", name=name)
    return result


def _distributed(result, template: DistArray):
    if isinstance(result, tuple):
        items = [_distributed(r, template) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    if isinstance(result, (np.ndarray, np.generic)):
        layout = Layout.replicated((), devices=template.devices)
        return wrap(Chunks.from_host(np.asarray(result), layout, template.storage.backend))
    return result


def _distarrays(obj) -> list:
    if isinstance(obj, DistArray):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [a for item in obj for a in _distarrays(item)]
    if isinstance(obj, dict):
        return [a for item in obj.values() for a in _distarrays(item)]
    return []


def gathered(obj):
    """`obj` with every DistArray in it (in lists, tuples, dicts) gathered to the host."""
    if isinstance(obj, DistArray):
        return obj.get()
    if isinstance(obj, list):
        return [gathered(item) for item in obj]
    if isinstance(obj, tuple):
        return tuple(gathered(item) for item in obj)
    if isinstance(obj, dict):
        return {k: gathered(v) for k, v in obj.items()}
    return obj


def _redistributed(result, template: DistArray):
    if isinstance(result, tuple):
        items = [_redistributed(r, template) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    if isinstance(result, list):
        return [_redistributed(r, template) for r in result]
    if isinstance(result, np.ndarray) and result.ndim:
        layout = (
            template.layout
            if result.shape == template.shape
            else Layout.block(result.shape, devices=template.devices)
        )
        return wrap(Chunks.from_host(result, layout, template.storage.backend))
    return result
