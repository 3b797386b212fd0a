"""The dispatch tables and the decorators that fill them; nothing else.

- `FUNCTIONS`: NumPy (or CuPy) function -> implementation over DistArrays, used by
  ``__array_function__``.
- `UFUNC_METHODS`: ufunc method name (``"__call__"``, ``"reduce"``, ...) -> implementation
  ``impl(ufunc, inputs, kwargs)``, used by ``__array_ufunc__``; every ufunc goes through it.
- `UFUNC_OVERRIDES`: ``(ufunc, method)`` -> implementation, for ufuncs whose method needs
  more than the general one.
- `METHODS`: name -> implementation of a DistArray method whose code lives in an op
  module (``"getitem"``, ``"setitem"``, ``"fallback"``, CuPy's hooks, ...). DistArray
  reaches op code only through these tables, so the op modules sit above it and import it,
  never the other way round.
- `SPMD`: the implementations that run in an SPMD run across processes
  (`mdarray.distributed`): each process computes its own chunks and moves data only
  through the movement layer. The decorators' ``spmd=True`` adds one. In a run of
  several processes DistArray sends every other function to the fallback (gathered on
  every process, computed there, each keeping its part): correct everywhere, fast where
  marked (`_processes.runs_here`).
- `GATHERED`: NumPy function -> why it has no distributed implementation, for the
  functions where gathering to the host is the operation itself (``numpy.save`` writes
  one file through the host). The fallback's warning and error and the docs' table say
  it (`gathers` fills it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

FUNCTIONS: dict[Any, Callable[..., Any]] = {}
UFUNC_METHODS: dict[str, Callable[..., Any]] = {}
UFUNC_OVERRIDES: dict[tuple[Any, str], Callable[..., Any]] = {}


class _Methods(dict):
    """DistArray methods' code by name: ``METHODS[name]`` is one dict lookup (no Python
    frame: DistArray's indexing and comparisons look theirs up on every call)."""

    def __missing__(self, name: str) -> Any:
        raise RuntimeError(f"no implementation of {name!r} is registered: import mdarray first")


METHODS: dict[str, Callable[..., Any]] = _Methods()
SPMD: set[Callable[..., Any]] = set()
# Public functions and implementations answered from metadata alone (`local`).
LOCAL: set[Callable[..., Any]] = set()
# Implementations that gather their operands onto one device (`_one_device`): a fallback
# under the policy where data moves there.
ONE_DEVICE: set[Callable[..., Any]] = set()
GATHERED: dict[Any, str] = {}


def local(impl: F) -> F:
    """Mark `impl` (a public function, or the implementation of a NumPy function) as
    answered from metadata alone (``shape``, ``result_type``, ``devices``): it never
    sends a message nor fails on the data, so in an SPMD run it is no step the processes
    agree on (`_processes.collective`), and one process may call it alone."""
    LOCAL.add(impl)
    return impl


def spmd(impl: F) -> F:
    """Mark `impl` as running across the processes of an SPMD run (see `SPMD`)."""
    SPMD.add(impl)
    return impl


def implements(*funcs: Any, spmd: bool = False, one_device: bool = False) -> Callable[[F], F]:
    """Register the decorated function as the DistArray implementation of `funcs` (and as
    running across processes with `spmd`; as computing on one device with `one_device`).
    The function keeps its type (a public one's is the namespace name's)."""

    def register(impl: F) -> F:
        for func in funcs:
            if func in FUNCTIONS:
                raise ValueError(f"{func!r} is registered twice")
            FUNCTIONS[func] = impl
        if spmd:
            SPMD.add(impl)
        if one_device:
            ONE_DEVICE.add(impl)
        return impl

    return register


def gathers(reason: str, *funcs) -> None:
    """Record that `funcs` gather to the host by design, and why (`reason`: a clause
    that completes "gathered because ..."), so the fallback's warning and the docs say it."""
    for func in funcs:
        if func in FUNCTIONS or func in GATHERED:
            raise ValueError(f"{func!r} is registered twice")
        GATHERED[func] = reason


def implements_ufunc_method(method: str, ufuncs=None, spmd: bool = False):
    """Register the decorated ``impl(ufunc, inputs, kwargs)`` for a ufunc method (and as
    running across processes with `spmd`).

    With `ufuncs`, only for those ufuncs (an override); without, for every ufunc.
    """

    def register(impl):
        if spmd:
            SPMD.add(impl)
        if ufuncs is None:
            if method in UFUNC_METHODS:
                raise ValueError(f"ufunc method {method!r} is registered twice")
            UFUNC_METHODS[method] = impl
        else:
            for ufunc in ufuncs:
                if (ufunc, method) in UFUNC_OVERRIDES:
                    raise ValueError(f"{ufunc.__name__}.{method} is registered twice")
                UFUNC_OVERRIDES[(ufunc, method)] = impl
        return impl

    return register


def implements_method(name: str):
    """Register the decorated function as the code behind the DistArray method `name`."""

    def register(impl):
        if name in METHODS:
            raise ValueError(f"DistArray method {name!r} is registered twice")
        METHODS[name] = impl
        return impl

    return register


def method(name: str) -> Callable[..., Any]:
    """The registered code of DistArray method `name`."""
    return METHODS[name]
