"""Options that change how operations behave, set with the `options` context manager."""

from __future__ import annotations

import contextlib
import contextvars
import operator
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from ._profile import took_fallback


class PerformanceWarning(UserWarning):
    """An operation ran on gathered data instead of on the distributed chunks."""


FALLBACK_POLICIES = ("warn", "raise", "allow")


@dataclass(frozen=True)
class Options:
    #: What to do with a NumPy function that has no distributed implementation:
    #: ``"warn"`` (gather, run, re-distribute, warn), ``"raise"`` (TypeError) or ``"allow"``.
    fallback: str = "warn"
    #: Arrays larger than this many bytes are never gathered implicitly.
    fallback_limit: int = 1 << 30


_current = contextvars.ContextVar("mdarray_options", default=Options())  # noqa: B039 (frozen)


def get_options() -> Options:
    return _current.get()


def _byte_count(value: Any) -> int:
    try:
        if isinstance(value, bool):
            raise TypeError
        count = operator.index(value)
    except TypeError:
        count = -1
    if count < 0:
        raise ValueError(f"fallback_limit must be a non-negative int, got {value!r}")
    return count


@contextlib.contextmanager
def options(**changes: Any) -> Iterator[Options]:
    """Set options for the ``with`` block: ``fallback`` and ``fallback_limit``.

    >>> import mdarray
    >>> with mdarray.options(fallback="raise"):
    ...     pass
    """
    unknown = set(changes) - set(Options.__dataclass_fields__)
    if unknown:
        raise TypeError(f"unknown mdarray option(s): {', '.join(sorted(unknown))}")
    if "fallback" in changes and changes["fallback"] not in FALLBACK_POLICIES:
        raise ValueError(
            f"fallback must be one of {FALLBACK_POLICIES}, got {changes['fallback']!r}"
        )
    if "fallback_limit" in changes:
        changes["fallback_limit"] = _byte_count(changes["fallback_limit"])
    token = _current.set(replace(_current.get(), **changes))
    try:
        yield _current.get()
    finally:
        _current.reset(token)


def check_fallback(
    name: str,
    nbytes: int,
    done: str = "gathered to the host, computed there, and the result re-distributed",
) -> None:
    """Apply the fallback policy to gathering `nbytes` for `name`: raise, warn or allow.
    `done` says what the operands go through, for the warning."""
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
    took_fallback()
    if opts.fallback == "warn":
        warnings.warn(
            f"{name} has no distributed implementation: the DistArray operands were {done}",
            PerformanceWarning,
            stacklevel=4,
        )
