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

Keys name a layout by its ``id``: each entry keeps its layouts alive, so no other layout
can take that id while the entry exists. The table is bounded: past `MAX_ENTRIES` it
starts again empty (a program that walks through many layouts keeps memory flat).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

MAX_ENTRIES = 4096

#: ``{key: (runner, layouts the key names)}``.
RUNNERS: dict[tuple, tuple[Callable[..., Any], tuple]] = {}
_LOCK = threading.Lock()


def remember(key: tuple | None, runner: Callable[..., Any], layouts: tuple) -> None:
    """Leave `runner` for the calls of `key` (None: the call takes none); `layouts` are
    the layouts the key names by id, kept alive with the entry."""
    if key is None:
        return
    with _LOCK:
        if len(RUNNERS) >= MAX_ENTRIES:
            RUNNERS.clear()
        RUNNERS[key] = (runner, layouts)


def clear() -> None:
    """Forget every runner (the next call of each key goes the whole way)."""
    with _LOCK:
        RUNNERS.clear()
