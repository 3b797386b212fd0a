"""Options that change how operations behave, the warnings they give, and the transfer
guard.

Options have process-wide values (`set_options`, first read from the environment at
import) and per-context overrides (the `options` ``with`` block: a context variable, so
each thread or asyncio task sees only its own blocks).

Warnings (`warn`) point at the first frame outside the mdarray package, as NumPy's
point at their caller's line, so the default filters show each once per place in the
user's code. The transfer guard (`TRANSFER_GUARD`) is an observer of `_debug`'s one
report per copy between devices: it sees every move, before it is issued.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import logging
import operator
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import CodeType, FrameType
from typing import Any, TypeVar

from mdarray._core import debug as _debug
from mdarray._core.debug import HOST, Place

from .profile import took_fallback

F = TypeVar("F", bound=Callable[..., Any])


class PerformanceWarning(UserWarning):
    """An operation ran on gathered data instead of on the distributed chunks."""


class TransferError(RuntimeError):
    """An operation would have moved data between devices implicitly, under
    ``mdarray.options(transfer_guard="raise")``: raised before that copy, so the
    operation changed none of its operands."""

    __module__ = "mdarray"  # its public home, as tracebacks and docs name it


FALLBACK_POLICIES = ("warn", "raise", "allow")
TRANSFER_GUARDS = ("allow", "log", "raise")


@dataclass(frozen=True)
class Options:
    #: What to do with a NumPy function that has no distributed implementation:
    #: ``"warn"`` (gather, run, re-distribute, warn), ``"raise"`` (TypeError) or ``"allow"``.
    fallback: str = "warn"
    #: Arrays larger than this many bytes are never gathered implicitly.
    fallback_limit: int = 1 << 30
    #: What to do with a move between devices that an operation makes implicitly:
    #: ``"allow"``, ``"log"`` (logger ``mdarray``) or ``"raise"`` (`TransferError`).
    transfer_guard: str = "allow"


# The process-wide values (`set_options`); a `with options(...)` block sets `_current`.
_defaults = Options()
_current: contextvars.ContextVar[Options] = contextvars.ContextVar("mdarray_options")


def get_options() -> Options:
    return _current.get(_defaults)


def _byte_count(value: Any, name: str) -> int:
    try:
        if isinstance(value, bool):
            raise TypeError
        count = operator.index(value)
    except TypeError:
        count = -1
    if count < 0:
        raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    return count


def _one_of(value: Any, allowed: tuple[str, ...], name: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def _checked(changes: dict[str, Any], names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`changes` validated; an error names the option, or its `names` entry (an
    environment variable)."""
    unknown = set(changes) - set(Options.__dataclass_fields__)
    if unknown:
        raise TypeError(f"unknown mdarray option(s): {', '.join(sorted(unknown))}")
    out = dict(changes)
    for option, value in changes.items():
        name = names[option] if names else option
        if option == "fallback_limit":
            out[option] = _byte_count(value, name)
        else:
            allowed = FALLBACK_POLICIES if option == "fallback" else TRANSFER_GUARDS
            out[option] = _one_of(value, allowed, name)
    return out


def _guarded(opts: Options, observers: tuple) -> tuple:
    """`observers` with the transfer guard first where `opts` set one: every copy between
    devices is then reported (`_debug.counting` is truthy) and checked before any
    counter counts it."""
    if opts.transfer_guard == "allow" or TRANSFER_GUARD in observers:
        return observers
    return (TRANSFER_GUARD, *observers)


@contextlib.contextmanager
def options(**changes: Any) -> Iterator[Options]:
    """Set options for the ``with`` block, for this thread (or asyncio task) only.

    Options not named keep their values; the block's values are those in force when it
    starts with `changes` applied, restored when it ends, and the block yields them.
    `set_options` sets the process-wide values, which every thread sees outside its
    blocks.

    Parameters
    ----------
    fallback : {"warn", "raise", "allow"}
        What a NumPy function with no distributed implementation does: gather, run and
        re-distribute with a `PerformanceWarning` (``"warn"``), the same silently
        (``"allow"``), or raise TypeError (``"raise"``).
    fallback_limit : int
        Arrays larger than this many bytes are never gathered implicitly (TypeError).
    transfer_guard : {"allow", "log", "raise"}
        What a move of data between devices that an operation makes implicitly does
        (aligning operands, combining partial results, fetching remote parts of an
        index): nothing (``"allow"``), a message on the ``mdarray`` logger (``"log"``),
        or `TransferError` before the copy (``"raise"``). Moves the user asks for
        (``reshard``, ``to_device``, ``change_mode``, ``get``, ``np.asarray``, printing,
        creating an array) are always allowed, and so are copies to and from the host.

    Examples
    --------
    >>> import mdarray
    >>> with mdarray.options(fallback="raise", transfer_guard="raise") as opts:
    ...     opts.fallback
    'raise'
    """
    opts = replace(get_options(), **_checked(changes))
    token = _current.set(opts)
    try:
        with _debug.observed_by(_guarded(opts, _debug.counting())):
            yield opts
    finally:
        _current.reset(token)


def set_options(**changes: Any) -> None:
    """Set options process-wide, for every thread, until changed again.

    Takes the options of `options` (``fallback``, ``fallback_limit``,
    ``transfer_guard``). A separate function rather than `options` called without
    ``with``: a ``with`` block's options belong to its thread (a context variable, so
    blocks in other threads and asyncio tasks never see them), while a program-wide
    setting must reach threads started later too, which a context variable cannot do.
    Inside a ``with options(...)`` block the block's values stay in force; the new ones
    apply where no block sets options. At import the values come from the environment:
    ``MDARRAY_FALLBACK``, ``MDARRAY_FALLBACK_LIMIT`` and ``MDARRAY_TRANSFER_GUARD``.

    Examples
    --------
    >>> import mdarray
    >>> mdarray.set_options(fallback="raise")
    >>> mdarray.set_options(fallback="warn")
    """
    global _defaults  # noqa: PLW0603 (the process-wide values are this module's state)
    _defaults = replace(_defaults, **_checked(changes))
    _debug.observe_by_default(_guarded(_defaults, ()))


#: The environment variables read at import, and the option each sets.
ENVIRONMENT = {
    "fallback": "MDARRAY_FALLBACK",
    "fallback_limit": "MDARRAY_FALLBACK_LIMIT",
    "transfer_guard": "MDARRAY_TRANSFER_GUARD",
}


def from_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    """The options `environ` sets (`ENVIRONMENT`), checked: a bad value raises
    ValueError naming the variable and the values it takes."""
    changes: dict[str, Any] = {}
    for option, variable in ENVIRONMENT.items():
        if variable not in environ:
            continue
        value: Any = environ[variable].strip()
        if option == "fallback_limit":
            try:
                value = int(value)
            except ValueError:
                raise ValueError(
                    f"{variable} must be a non-negative int (bytes), got {environ[variable]!r}"
                ) from None
        changes[option] = value
    return _checked(changes, ENVIRONMENT)


# Optional dependencies ---------------------------------------------------------------


#: What installs MPI for `mdarray.distributed` (the ``mpi`` extra: mpi4py and an MPI).
MPI_INSTALL = "pip install 'mdarray[mpi]'"


def missing(module: str, install: str, needed_by: str) -> ModuleNotFoundError:
    """The error for an optional dependency that is not installed, saying what installs
    it (raise it ``from`` the ImportError)."""
    return ModuleNotFoundError(
        f"{needed_by} needs {module}, which is not installed: {install}", name=module
    )


# Warnings and the user's frame ------------------------------------------------------

PACKAGE = f"{Path(__file__).parents[1]}{os.sep}"  # the mdarray package


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` attributed to the first frame outside the mdarray package (the
    user's line, or the library's that called mdarray), as NumPy's point at their
    caller: the default filters then show it once per place in the caller's code."""
    if sys.version_info >= (3, 12):
        warnings.warn(message, category, skip_file_prefixes=(PACKAGE,))
        return
    frame: FrameType | None = sys._getframe(1)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def check_fallback(
    name: str,
    nbytes: int,
    done: str = "gathered to the host, computed there, and the result re-distributed",
    why: str | None = None,
) -> None:
    """Apply the fallback policy to gathering `nbytes` for `name`: raise, warn or allow.
    `done` says what the operands go through, for the warning; `why`, where gathering is
    the operation itself, says why (it completes "gathered because ...")."""
    opts = get_options()
    because = "" if why is None else f" (gathered by design, because {why})"
    if opts.fallback == "raise":
        raise TypeError(
            f"{name} has no distributed implementation for DistArray{because} (fallback='raise')"
        )
    if nbytes > opts.fallback_limit:
        raise TypeError(
            f"{name} has no distributed implementation{because} and its DistArray operands "
            f"({nbytes} bytes) exceed fallback_limit={opts.fallback_limit} bytes: they are "
            "not gathered implicitly"
        )
    took_fallback()
    if opts.fallback == "warn":
        warn(
            f"{name} has no distributed implementation{because}: the DistArray operands "
            f"were {done}",
            PerformanceWarning,
        )


# The transfer guard -------------------------------------------------------------------

logger = logging.getLogger("mdarray")

# The code of the public calls that move data because the user asked for it.
_EXPLICIT: set[CodeType] = set()
# The code of decorators' wrappers (`transparent`): their frames are not the call's.
_TRANSPARENT: set[CodeType] = set()


def mark_explicit(*functions: Callable[..., Any]) -> None:
    """Make `functions` (public calls: ``DistArray.reshard``, ``asarray``...) explicit
    moves: the transfer guard lets through what they move when the user calls them
    (when op code calls them to align operands, the move stays implicit)."""
    for function in functions:
        _EXPLICIT.add(inspect.unwrap(function).__code__)


def transparent(wrapper: F) -> F:
    """Mark `wrapper`, the function a decorator returns, as no call of its own: the
    transfer guard looks through its frames to the public call it wraps."""
    _TRANSPARENT.add(wrapper.__code__)
    return wrapper


def _calls(frame: FrameType | None) -> list[FrameType]:
    """mdarray's frames from `frame` up to the first frame outside the package, innermost
    first, collective wrappers aside: the last is the public call the user made."""
    frames = []
    while frame is not None and frame.f_code.co_filename.startswith(PACKAGE):
        if frame.f_code not in _TRANSPARENT:
            frames.append(frame)
        frame = frame.f_back
    return frames


def _operation(frames: list[FrameType]) -> str:
    """The name of the public call of `frames` (`_calls`): the NumPy function or ufunc
    where NumPy dispatched it (operators and methods go through NumPy), else the
    outermost function's qualified name."""
    for frame in reversed(frames):
        code, found = frame.f_code, frame.f_locals
        if code.co_name == "__array_ufunc__" and "ufunc" in found:
            method = found.get("method_name", "__call__")
            name = f"numpy.{found['ufunc'].__name__}"
            return name if method == "__call__" else f"{name}.{method}"
        if code.co_name == "__array_function__" and "func" in found:
            func = found["func"]
            return f"{getattr(func, '__module__', 'numpy')}.{getattr(func, '__name__', func)}"
    if not frames:
        return "an mdarray call"
    return getattr(frames[-1].f_code, "co_qualname", frames[-1].f_code.co_name)


class _TransferGuard:
    """The observer that applies ``transfer_guard`` to each copy between two devices."""

    def moved(self, src: Place, dst: Place, nbytes: int) -> None:
        if src == dst or HOST in (src, dst):
            return
        level = get_options().transfer_guard
        if level == "allow":
            return
        frames = _calls(sys._getframe(1))
        if frames and frames[-1].f_code in _EXPLICIT:
            return
        what = f"{_operation(frames)} moves {int(nbytes)} bytes from device {src} to device {dst}"
        if level == "raise":
            raise TransferError(
                f"{what} implicitly (transfer_guard='raise'): stopped before that copy, its "
                "operands unchanged. Give the "
                "operands one layout first (x.reshard(layout) or x.to_device(...)), or "
                "allow it with mdarray.options(transfer_guard='allow')"
            )
        logger.warning("implicit transfer: %s", what)

    def __repr__(self) -> str:
        return "TRANSFER_GUARD"


TRANSFER_GUARD = _TransferGuard()

set_options(**from_environment(os.environ))
