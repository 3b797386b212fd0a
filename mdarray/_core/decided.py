"""Decided calls: a repeated call runs what its first call decided, nothing more.

A program repeats few calls on few layouts (an iteration of CG or k-means is the same
dozen calls each time). The first call of an operation on operands of given layouts,
modes and dtypes goes the whole way: dispatch, checks, dtype resolution, planning. Where
the path it took can be said as a closure over what it decided (the kernel, the result's
layout, mode and dtypes, a cached plan), the op module leaves that closure here, a
*runner*, under the call's key (`DistArray`'s ``__array_ufunc__`` makes the key:
the operation, and per operand its layout, mode and dtype, or a Python scalar's kind).
The next call with the same key runs the runner at once.

What a key does not hold, a runner checks each time it runs, returning None to send the
call the whole way: whether an operand's chunks are packed now, whether its blocks'
memory lines up. Values never enter a decision (only a Python int's sign and bit length,
which decide NumPy's promotion, and a bool's value), so a write to an operand cannot make
a runner stale; layouts are immutable, and a mode or dtype is fixed for an array's life.
Runners exist only in a single-process run (an SPMD run decides every call the whole
way: its agreement and checks are per call), and the options (`mdarray.options`) govern
only the host fallback, which no runner takes.

Functions (``np.sum``, ``mdarray.argmin``, ...) take runners too, from a *decider*: a
function registered for them here (`decides`) that, given a call's arguments, says what
every call of that key would decide, as a runner, or None. A function's key holds every
argument that is not an array by type and value (an ``axis``, a ``dtype``, a scalar
operand), so a runner may take all of them as given and read only its array operands.

Keys name a layout by its ``id``: each entry keeps its layouts alive, so no other layout
can take that id while the entry exists. The table is bounded: past `MAX_ENTRIES` it
starts again empty (a program that walks through many layouts keeps memory flat).
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import Any

MAX_ENTRIES = 4096

#: The op of a view's key: ``(VIEW, an array's call key, its hashable index)`` names the
#: runner of ``x[key]`` by slices (`mdarray._ops.indexing.indexing._View`, which holds the
#: plan that DistArray's ``__getitem__`` and ``__setitem__`` read first).
VIEW = "getitem"
#: ``{(an array's call key, hashable index): runner}`` of ``x[index] = scalar``
#: (`mdarray._ops.indexing.indexing._ScalarWrite`, which holds the layout the key names by
#: id). Apart from `RUNNERS` and bounded at 1024: a loop over rows leaves one per row.
SCALAR_WRITES: dict[tuple, Any] = {}
#: ``{key: (runner, layouts the key names)}``.
RUNNERS: dict[tuple, tuple[Callable[..., Any], tuple]] = {}
#: ``{function: decider}``: ``decider(args, kwargs)`` is a runner for every call of
#: `function` whose key equals this call's, or None (`decides`).
DECIDERS: dict[Callable[..., Any], Callable[[tuple, dict], Any]] = {}
_LOCK = threading.Lock()


def decides(*funcs: Callable[..., Any]) -> Callable[[Callable], Callable]:
    """Register the decorated ``decider(args, kwargs)`` for `funcs` (public functions or
    the NumPy functions DistArray implements): it returns a runner ``runner(args,
    kwargs)`` for the calls of this call's key (`mdarray._storage.stored.decided_function`), or None
    where the call must go the whole way each time. A runner returns the call's result,
    or None to send that one call the whole way."""

    def register(decider: Callable[[tuple, dict], Any]) -> Callable[[tuple, dict], Any]:
        for func in funcs:
            DECIDERS[func] = decider
        return decider

    return register


def same_as(public: Callable[..., Any], func: Callable[..., Any]) -> None:
    """Let `public` take `func`'s decider: every call of `public` that binds to its own
    parameters is ``func(*args, **kwargs)`` (an array API function that calls NumPy's)."""

    def decide(args: tuple, kwargs: dict) -> Any:
        if bound(public, args, kwargs) is None:
            return None
        decider = DECIDERS.get(func)
        return None if decider is None else decider(args, kwargs)

    DECIDERS[public] = decide


def never(args: tuple, kwargs: dict) -> None:
    """The runner of a key that decides nothing: every call goes the whole way."""


def bound(func: Callable[..., Any], args: tuple, kwargs: dict) -> dict[str, Any] | None:
    """`func`'s arguments in a call with `args` and `kwargs`, by name, defaults
    included; None where the call does not bind to `func`'s parameters."""
    try:
        binding = _signature(func).bind(*args, **kwargs)
    except TypeError:
        return None
    binding.apply_defaults()
    return binding.arguments


def reader(func: Callable[..., Any], args: tuple, kwargs: dict, name: str) -> Callable:
    """``read(args, kwargs)``: the argument `name` of `func` (given, not defaulted) in
    any call with this call's key, by position or keyword as this call gives it."""
    if name in kwargs:
        return lambda a, k: k[name]
    position = list(_signature(func).parameters).index(name)
    return lambda a, k: a[position]


_SIGNATURES: dict[Callable[..., Any], inspect.Signature] = {}


def _signature(func: Callable[..., Any]) -> inspect.Signature:
    known = _SIGNATURES.get(func)
    if known is None:
        known = _SIGNATURES[func] = inspect.signature(func)
    return known


def remember(key: tuple | None, runner: Callable[..., Any], layouts: tuple) -> None:
    """Leave `runner` for the calls of `key` (None: the call takes none); `layouts` are
    the layouts the key names by id, kept alive with the entry."""
    if key is None:
        return
    with _LOCK:
        if len(RUNNERS) >= MAX_ENTRIES:
            RUNNERS.clear()
        RUNNERS[key] = (runner, layouts)
        if _added is not None:
            _added.append(key)


# The keys left since `track_new`, while it tracks (else None).
_added: list | None = None


def track_new() -> None:
    """Note the runners left from now on (a recording's: `forget_new` drops them)."""
    global _added  # noqa: PLW0603 (one tracker, as `plan_cache`'s)
    _added = []


def forget_new(drop: bool) -> None:
    """Stop noting new runners; with `drop`, forget those noted (a failed recording's,
    as its plans: `plan_cache.forget_new`)."""
    global _added
    with _LOCK:
        added, _added = _added or [], None
        for key in added if drop else ():
            RUNNERS.pop(key, None)


def clear() -> None:
    """Forget every runner (the next call of each key goes the whole way)."""
    with _LOCK:
        RUNNERS.clear()
        SCALAR_WRITES.clear()
