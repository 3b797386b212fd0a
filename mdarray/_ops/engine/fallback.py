"""The fallback policy: NumPy functions with no distributed implementation.

`DistArray`'s protocols send a ufunc method or function that the registry has no
implementation for here (registered as the ``fallback_ufunc`` and ``fallback_function``
methods). Under the policy of `mdarray.options` the DistArray operands are gathered to
the host, NumPy computes, and array results are distributed again.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from mdarray._array.array import DistArray, wrap
from mdarray._core.registry import FUNCTIONS, GATHERED, gathers, implements_method
from mdarray._exec.chunkwise import write_out
from mdarray._layouts.layout import Layout
from mdarray._runtime.config import check_fallback
from mdarray._storage.chunks import Chunks


@implements_method("fallback_ufunc")
def fallback_ufunc(ufunc, method, inputs, kwargs):
    return fallback(getattr(ufunc, method), inputs, kwargs, f"numpy.{ufunc.__name__}.{method}")


@implements_method("fallback_function")
def fallback_function(func, types, args, kwargs):
    if not all(issubclass(t, (DistArray, np.ndarray)) or _is_cupy_type(t) for t in types):
        return NotImplemented
    return fallback(func, args, kwargs, f"{func.__module__}.{func.__name__}")


# Where gathering is the operation itself: the reason the warning and the docs give.
gathers(
    "it writes one file through the host, so every byte reaches the host whatever runs it",
    np.save,
    np.savez,
    np.savez_compressed,
    np.savetxt,
)
gathers(
    "NumPy's business-day calendars and datetime text run on the host only (CuPy has no "
    "datetime64 or string dtypes for them to run on)",
    np.busday_count,
    np.busday_offset,
    np.is_busday,
    np.datetime_as_string,
)


@implements_method("numpy_answer")
def numpy_answer(func, args, kwargs):
    """NumPy's answer to `func` with a NumPy array subclass of its own meaning among the
    operands (a masked array, a matrix; `_operands.HOST`): the DistArrays gathered, under
    the policy, and the result kept as NumPy gives it (a masked array keeps its mask),
    except that DistArrays written into come back as themselves."""
    ufunc = getattr(func, "__self__", None)
    if isinstance(ufunc, np.ufunc):
        method = "" if func.__name__ == "__call__" else f".{func.__name__}"
        name = f"numpy.{ufunc.__name__}{method}"
    else:
        name = f"{func.__module__}.{func.__name__}"
    return fallback(func, args, kwargs, f"{name} (with a NumPy array subclass)", keep=True)


def numpy_twin(impl, numpy: ModuleType = np):
    """The NumPy function `impl` implements (its registered NumPy function, else the one
    of its name in `numpy`), or None."""
    if not _TWINS:  # first call: every op module has registered by now
        for func, implementation in FUNCTIONS.items():
            if getattr(func, "__module__", "").startswith("numpy"):
                _TWINS.setdefault(implementation, func)
    return _TWINS.get(impl) or getattr(numpy, getattr(impl, "__name__", ""), None)


_TWINS: dict = {}


def _is_cupy_type(t) -> bool:
    return t.__module__.startswith("cupy")


# NumPy functions that write into arguments: function -> positions of the written ones.
# Functions with ``copy=False`` write their first argument only then (`_written`).
_WRITERS = {
    np.copyto: (0,),
    np.put: (0,),
    np.putmask: (0,),
    np.place: (0,),
    np.fill_diagonal: (0,),
    np.put_along_axis: (0,),
    np.nan_to_num: (0,),
}


def fallback(func, args, kwargs, name: str, *, keep: bool = False):
    """Gather DistArray arguments to the host, run `func`, and re-distribute the result.

    No write is lost: a DistArray that NumPy writes into (``out=``, the first argument of
    ``copyto``, ``put``, ``putmask``, ``place``, ``fill_diagonal``, ``put_along_axis``,
    ``ufunc.at`` and ``nan_to_num(copy=False)``) gets its host copy's new value, in its
    own layout and mode, through its buffers (so its views see it), after `func` returned:
    a raise writes nothing. A written argument that `func` returns comes back as itself.
    Array results come back DistArrays, 0-d ones too (replicated on the first DistArray
    operand's devices), and named tuples keep their type (``unique_all``'s fields); with
    `keep`, results other than the written arguments are NumPy's as they are.
    """
    arrays = distarrays_in((args, kwargs))
    check_fallback(name, sum(a.nbytes for a in arrays), why=GATHERED.get(func))
    template = arrays[0]
    hosts: dict[int, np.ndarray] = {}  # one host copy per DistArray, shared by its mentions
    result = func(*gathered(args, hosts), **gathered(kwargs, hosts))
    written = _written(func, args, kwargs)
    for x in written:
        host = hosts[id(x)]
        write_out(x, wrap(Chunks.from_host(host, x.layout, x.storage.backend)), name=name)
    returned = {id(hosts[id(x)]): x for x in written}
    if keep:
        if type(result) is tuple:
            return tuple(returned.get(id(r), r) for r in result)
        return returned.get(id(result), result)
    return _distributed(_redistributed(result, template, returned), template)


def _written(func, args, kwargs) -> list[DistArray]:
    positions = _WRITERS.get(func, ())
    if func is np.nan_to_num and kwargs.get("copy", args[1] if len(args) > 1 else True):
        positions = ()
    if getattr(func, "__name__", "") == "at" and isinstance(
        getattr(func, "__self__", None), np.ufunc
    ):
        positions = (0,)
    out = kwargs.get("out")
    candidates = [args[i] for i in positions if i < len(args)]
    candidates += list(out) if isinstance(out, tuple) else [out]
    found: dict[int, DistArray] = {}
    for x in candidates:
        if isinstance(x, DistArray):
            found.setdefault(id(x), x)
    return list(found.values())


def as_distarrays(result, template: DistArray):
    """`result` with 0-d and scalar arrays in it made 0-d DistArrays replicated on
    `template`'s devices, and ndarrays made DistArrays (named tuples keep their type)."""
    return _distributed(_redistributed(result, template), template)


def _distributed(result, template: DistArray):
    if isinstance(result, tuple):
        items = [_distributed(r, template) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    if isinstance(result, (np.ndarray, np.generic)):
        layout = Layout.replicated((), devices=template.devices)
        return wrap(Chunks.from_host(np.asarray(result), layout, template.storage.backend))
    return result


def distarrays_in(obj) -> list:
    """The DistArrays in `obj` (in lists, tuples and dict values), in order."""
    if isinstance(obj, DistArray):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [a for item in obj for a in distarrays_in(item)]
    if isinstance(obj, dict):
        return [a for item in obj.values() for a in distarrays_in(item)]
    return []


def gathered(obj, hosts: dict[int, np.ndarray] | None = None):
    """`obj` with every DistArray in it (in lists, tuples, dicts) gathered to the host
    (one copy per DistArray, kept in `hosts` by the DistArray's id where given)."""
    if isinstance(obj, DistArray):
        if hosts is None:
            return obj.get()
        if id(obj) not in hosts:
            hosts[id(obj)] = obj.get()
        return hosts[id(obj)]
    if isinstance(obj, list):
        return [gathered(item, hosts) for item in obj]
    if isinstance(obj, tuple):
        return tuple(gathered(item, hosts) for item in obj)
    if isinstance(obj, dict):
        return {k: gathered(v, hosts) for k, v in obj.items()}
    return obj


def _redistributed(result, template: DistArray, returned: dict | None = None):
    if returned and id(result) in returned:
        return returned[id(result)]
    if isinstance(result, tuple):
        items = [_redistributed(r, template, returned) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    if isinstance(result, list):
        return [_redistributed(r, template, returned) for r in result]
    if isinstance(result, np.ndarray) and result.ndim:
        layout = (
            template.layout
            if result.shape == template.shape
            else Layout.block(result.shape, devices=template.devices)
        )
        return wrap(Chunks.from_host(result, layout, template.storage.backend))
    return result
