"""The cache of plans: results of pure functions of layouts, regions and shapes.

Planning a movement (who sends which part of which chunk where) costs far more than
looking it up, and a program reuses few layouts many times, so plan functions remember
their results. One cache serves them all, within a memory budget measured in bytes (keys included: a layout held by a key holds its own cached
cover), so a program that walks through many layouts keeps memory flat: the oldest
entry goes first unless it was used since it last came up (then it goes to the back,
unmarked: the "second chance" order, close to least recently used, which a hit pays with
one store, not a second hashing of its key). Safe under threads: two threads may compute
one plan at once, and one result is kept.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

F = TypeVar("F", bound=Callable[..., Any])

MAX_BYTES = 32 * 2**20
MAX_ENTRIES = 20_000


class _Cache:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        # Per key ``[value, bytes, used since it last came up]``.
        self.entries: OrderedDict[tuple, list] = OrderedDict()
        self.bytes = 0
        # The keys put since `track_new`, while it tracks (else None).
        self.added: list | None = None

    def get(self, key: tuple) -> list | None:
        hit = self.entries.get(key)
        if hit is not None:
            hit[2] = True
        return hit

    def put(self, key: tuple, value: Any, size: int) -> None:
        with self.lock:
            entries = self.entries
            if key in entries:
                return
            entries[key] = [value, size, False]
            self.bytes += size
            if self.added is not None:
                self.added.append(key)
            while len(entries) > 1 and (self.bytes > MAX_BYTES or len(entries) > MAX_ENTRIES):
                oldest, entry = entries.popitem(last=False)
                if entry[2] and oldest is not key:  # used since it came up: a second chance
                    entry[2] = False
                    entries[oldest] = entry
                    continue
                self.bytes -= entry[1]

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.bytes = 0


_cache = _Cache()


def plan_cache(function: F) -> F:
    """Remember `function`'s results by its (hashable, positional) arguments."""

    entries = _cache.entries

    @functools.wraps(function)
    def cached(*args):
        key = (function, args)
        hit = entries.get(key)  # a hit, the common case, inline: no lock, one frame
        if hit is not None:
            hit[2] = True  # used: kept when it comes up for eviction
            return hit[0]
        value = function(*args)
        _cache.put(key, value, nbytes((args, value)))
        return value

    return cached  # type: ignore[return-value]


def lookup(key: tuple) -> Any:
    """The plan remembered for `key` (`remember`), or None: for plans whose builder needs
    more than its key (the operands themselves), where `plan_cache` cannot wrap it."""
    hit = _cache.get(key)
    return None if hit is None else hit[0]


def remember(key: tuple, value: Any) -> None:
    """Keep `value` (not None) as the plan for `key`, a hashable, immutable tuple."""
    _cache.put(key, value, nbytes((key, value)))


def track_new() -> None:
    """Note the plans remembered from now on (a recording's: `forget_new` drops them)."""
    _cache.added = []


def forget_new(drop: bool) -> None:
    """Stop noting new plans; with `drop`, forget those noted (a failed recording's: they
    may hold memory no kernel filled)."""
    with _cache.lock:
        added, _cache.added = _cache.added or [], None
        for key in added if drop else ():
            entry = _cache.entries.pop(key, None)
            if entry is not None:
                _cache.bytes -= entry[1]


def usage() -> tuple[int, int]:
    """``(entries, bytes)`` held now."""
    with _cache.lock:
        return len(_cache.entries), _cache.bytes


def clear() -> None:
    _cache.clear()


# Past this many items a container is measured by an even sample of them, scaled up:
# the plans of many chunks are long tuples of like items, and walking every one of them
# at each miss would make remembering a plan cost as much as making it.
_SAMPLE = 64


def nbytes(value) -> int:
    """The memory `value` holds: containers, arrays and mdarray's own objects, walked
    once each (what they share with other entries is counted again: an overestimate;
    a container of more than `_SAMPLE` items by a sample of them)."""
    seen: set[int] = set()
    todo: list[tuple[Any, float]] = [(value, 1.0)]
    total = 0.0
    while todo:
        item, weight = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        total += weight * sys.getsizeof(item)
        if isinstance(item, np.ndarray):
            if item.base is not None:
                todo.append((item.base, weight))
        elif isinstance(item, (tuple, list, set, frozenset)):
            _walk(todo, item, weight)
        elif isinstance(item, dict):
            _walk(todo, item.keys(), weight)
            _walk(todo, item.values(), weight)
        elif type(item).__module__.startswith("mdarray"):
            known = getattr(item, "plan_bytes", None)  # measured once by the object
            if isinstance(known, int):
                total += weight * known
            else:
                _walk(todo, _attributes(item), weight)
    return int(total)


def _walk(todo: list, items, weight: float) -> None:
    """Put `items` on `todo`, or an even sample of them weighted for the rest."""
    n = len(items)
    if n <= _SAMPLE:
        todo.extend((item, weight) for item in items)
        return
    items = items if isinstance(items, (tuple, list)) else list(items)
    scaled = weight * n / _SAMPLE
    todo.extend((items[j * n // _SAMPLE], scaled) for j in range(_SAMPLE))


def _attributes(item) -> list:
    out = list(getattr(item, "__dict__", {}).values())
    for cls in type(item).__mro__:
        out.extend(
            getattr(item, name)
            for name in getattr(cls, "__slots__", ())
            if name != "__dict__" and hasattr(item, name)
        )
    return out
