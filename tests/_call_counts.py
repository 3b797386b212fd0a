"""Counting the Python function calls of one operation: the host-cost guard's measure.

A repeated call on the same layouts should only look up what the first call decided and run
its kernels, so the number of Python functions it enters is a deterministic proxy for its
host cost: unlike a timing, it does not depend on the machine's load. `calls` counts every
Python-level call (``sys.setprofile``'s "call" events: mdarray's, NumPy's and ndindex's
Python code alike; C functions are not counted) of one run of `fn` after `warmup` runs.
"""

from __future__ import annotations

import gc
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

from mdarray._core import decided as _decided


def calls(fn: Callable[[], Any], *, warmup: int = 3) -> int:
    """Python function calls made by one ``fn()`` after `warmup` calls (caches warm)."""
    return sum(profile(fn, warmup=warmup).values())


def profile(fn: Callable[[], Any], *, warmup: int = 3) -> Counter:
    """``{(file, line, function): calls}`` of one ``fn()`` after `warmup` calls. With
    a warm-up the table of decided calls starts empty (`mdarray._core.decided.clear`):
    a full table starts again empty when it must take one more, which inside the counted
    call would send its calls the whole way (``warmup=0`` counts the table as it is).
    No garbage collection runs inside the count (its weakref callbacks are calls too)."""
    if warmup:
        _decided.clear()
    for _ in range(warmup):
        fn()
    counts: Counter = Counter()

    def hook(frame, event, arg):
        if event == "call":
            code = frame.f_code
            counts[(code.co_filename, code.co_firstlineno, code.co_name)] += 1

    collecting = gc.isenabled()
    gc.collect()
    gc.disable()
    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
        if collecting:
            gc.enable()
    # The lambda or function handed in is the caller's own, not the operation's.
    own = fn.__code__ if hasattr(fn, "__code__") else None
    if own is not None:
        counts[(own.co_filename, own.co_firstlineno, own.co_name)] -= 1
    return +counts


def report(fn: Callable[[], Any], *, top: int = 25, warmup: int = 3) -> str:
    """The `top` most called functions of one ``fn()``, one line each (for debugging)."""
    counts = profile(fn, warmup=warmup)
    lines = [f"{sum(counts.values())} calls"]
    for (file, line, name), n in counts.most_common(top):
        lines.append(f"{n:6d}  {name}  {file.rsplit('/', 2)[-1]}:{line}")
    return "\n".join(lines)


def outcomes(monkeypatch, owner: Any, name: str) -> list:
    """Per call of ``owner.name`` from now on (patched with `monkeypatch`), whether it
    answered (True: a result other than None): which calls took an optional path."""
    seen: list = []
    original = getattr(owner, name)

    def spy(*args, **kwargs):
        result = original(*args, **kwargs)
        seen.append(result is not None)
        return result

    monkeypatch.setattr(owner, name, spy)
    return seen
