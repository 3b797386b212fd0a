"""Seeing where time goes: `profile` records each public call made inside it.

The public-call boundary is two wrappers: `_processes.collective` (DistArray's protocols,
operators, indexing, ``get``, ``reshard``, ``change_mode``) and `_groups.keeping_groups`
(every function of the namespaces). Each starts with ``if recording and open_here():``, so
with no profile open anywhere a call pays one global read; `recorded` then runs the call
with the profiles of this context hidden, so the public calls it makes inside are part of
it, not calls of their own (the outermost call is the one recorded).

A call's bytes moved come from a `count_transfers` counter open around it; whether it took
the fallback from `_config.check_fallback`, which every fallback passes (`took_fallback`);
its device time from the backend's clock (`Backend.time_mark`: CUDA events on each
device's stream, resolved when the profile closes so recording does not wait for the
devices). The cpu backend's work is done when its call returns: there the host time is
the device time.
"""

from __future__ import annotations

import contextvars
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mdarray._backends.backend import Backend, backend as default_backend_object
from mdarray._core.debug import Place, count_transfers

#: How many profiles are open, in any thread: the public calls' one check when none is.
recording = 0
_RECORDING_LOCK = threading.Lock()

# The profiles open in this context (thread or task); () inside a recorded call, so the
# public calls it makes are not recorded again.
_open: contextvars.ContextVar[tuple[Profile, ...]] = contextvars.ContextVar(
    "mdarray_profiles", default=()
)
#: The profiles recording this context's calls (a C function, as `_debug.counting`).
open_here = _open.get
# The call being recorded in this context, which a fallback marks.
_current: contextvars.ContextVar[Call | None] = contextvars.ContextVar(
    "mdarray_profiled_call", default=None
)


class Call:
    """One recorded public call: its name, when it started (host clock, ns), its host
    time and device time (seconds; per device where the backend times devices), the
    bytes it moved per device pair, and whether it took the fallback or raised."""

    __slots__ = (
        "device",
        "device_start",
        "failed",
        "fallback",
        "host",
        "marks",
        "moved",
        "name",
        "start",
    )

    def __init__(self, name: str) -> None:
        self.name = name
        self.start = 0
        self.host = 0.0
        self.device: dict[int, float] | None = None
        # Per device, seconds from the profile's start to the call's start on it.
        self.device_start: dict[int, float] | None = None
        self.moved: dict[tuple[Place, Place], int] = {}
        self.fallback = False
        self.failed = False
        self.marks: tuple | None = None  # the backend's clock marks, until resolved

    @property
    def time(self) -> float:
        """Seconds the call cost: the longest device's time where the backend times
        devices, else the host time."""
        return max(self.device.values(), default=0.0) if self.device else self.host

    def __repr__(self) -> str:
        return (
            f"Call({self.name!r}, host={self.host:.3g}s, device={self.device}, "
            f"moved={sum(self.moved.values())}, fallback={self.fallback})"
        )


def recorded(name: str, fn: Any, args: tuple, kwargs: dict) -> Any:
    """``fn(*args, **kwargs)``, an outermost public call, recorded in this context's
    profiles under `name` (a ufunc's ``add.__call__`` as ``add``)."""
    profiles = _open.get()
    call = Call(name.removesuffix(".__call__"))
    clock = default_backend_object()
    hidden = _open.set(())
    current = _current.set(call)
    try:
        with count_transfers() as moved:
            start_mark = clock.time_mark()
            call.start = time.perf_counter_ns()
            try:
                return fn(*args, **kwargs)
            except BaseException:
                call.failed = True
                raise
            finally:
                call.host = (time.perf_counter_ns() - call.start) / 1e9
                if start_mark is not None:
                    call.marks = (start_mark, clock.time_mark())
                call.moved = dict(moved.bytes)
    finally:
        _current.reset(current)
        _open.reset(hidden)
        for p in profiles:
            p.calls.append(call)


def took_fallback() -> None:
    """Mark the call being recorded in this context as one that took the fallback."""
    if recording:
        call = _current.get()
        if call is not None:
            call.fallback = True


class Profile:
    """The public calls recorded by `profile`, one `Call` each, in the order they ended.

    Printed, a table per operation name sorted by total time: calls, total and mean
    time, bytes moved and fallbacks. `summary` gives its rows, `to_chrome_trace` writes
    the calls as a Chrome / Perfetto trace.
    """

    def __init__(self, clock: Backend) -> None:
        self.calls: list[Call] = []
        self.backend = clock.name
        #: Whether device time is measured apart from host time (CUDA events); on the
        #: cpu backend a call's work is done when it returns, so its device time is its
        #: host time.
        self.device_timed = False
        self._clock = clock
        self._origin = (time.perf_counter_ns(), clock.time_mark())

    def _resolve(self) -> None:
        """Read the device times of the calls' clock marks (waits for their devices)."""
        clock, (_, origin) = self._clock, self._origin
        for call in self.calls:
            if call.marks is not None:
                start, end = call.marks
                call.device = clock.time_elapsed(start, end)
                call.device_start = clock.time_elapsed(origin, start)
                call.marks = None
                self.device_timed = True

    def summary(self) -> list[dict[str, Any]]:
        """Per operation name: ``name``, ``calls``, ``total`` and ``mean`` seconds
        (device time where `device_timed`, else host time), ``host`` seconds, ``moved``
        bytes and ``fallbacks``; sorted by total, largest first."""
        rows: dict[str, dict[str, Any]] = {}
        for call in self.calls:
            row = rows.setdefault(
                call.name,
                {"name": call.name, "calls": 0, "total": 0.0, "host": 0.0, "moved": 0},
            )
            row["calls"] += 1
            row["total"] += call.time
            row["host"] += call.host
            row["moved"] += sum(call.moved.values())
            row["fallbacks"] = row.get("fallbacks", 0) + call.fallback
        for row in rows.values():
            row["mean"] = row["total"] / row["calls"]
        return sorted(rows.values(), key=lambda row: (-row["total"], row["name"]))

    def __str__(self) -> str:
        rows = self.summary()
        timed = "device" if self.device_timed else "host"
        note = "" if self.device_timed else f" ({self.backend} backend: device time is host time)"
        total = sum(row["total"] for row in rows)
        lines = [f"mdarray profile: {len(self.calls)} calls, {total * 1e3:.3f} ms {timed}{note}"]
        width = max([9, *(len(row["name"]) for row in rows)])
        lines.append(
            f"{'operation':<{width}}  {'calls':>6}  {'total ms':>10}  {'mean ms':>9}  "
            f"{'host ms':>9}  {'moved B':>11}  {'fallbacks':>9}"
        )
        lines.extend(
            f"{row['name']:<{width}}  {row['calls']:>6}  {row['total'] * 1e3:>10.3f}  "
            f"{row['mean'] * 1e3:>9.3f}  {row['host'] * 1e3:>9.3f}  {row['moved']:>11}  "
            f"{row['fallbacks']:>9}"
            for row in rows
        )
        return "\n".join(lines)

    __repr__ = __str__

    def to_chrome_trace(self, path: Any) -> None:
        """Write the calls to `path` as Chrome trace JSON (open it in Perfetto or
        ``chrome://tracing``): one complete event (``"ph": "X"``, ``ts`` and ``dur`` in
        microseconds) per call on the host track, with its bytes moved and fallback in
        ``args``; where the backend times devices, one more per call and device on that
        device's track."""
        origin = self._origin[0]
        events: list[dict[str, Any]] = [
            {"name": "thread_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "host"}}
        ]
        for call in sorted(self.calls, key=lambda c: c.start):
            args = {
                "moved": {
                    f"{src}->{dst}": n for (src, dst), n in sorted(call.moved.items(), key=str)
                },
                "fallback": call.fallback,
                "failed": call.failed,
            }
            events.append(
                {
                    "name": call.name,
                    "cat": "mdarray",
                    "ph": "X",
                    "pid": 0,
                    "tid": 0,
                    "ts": (call.start - origin) / 1e3,
                    "dur": call.host * 1e6,
                    "args": args,
                }
            )
            if call.device and call.device_start:
                for device, seconds in call.device.items():
                    events.append(
                        {
                            "name": call.name,
                            "cat": "mdarray",
                            "ph": "X",
                            "pid": 0,
                            "tid": device + 1,
                            "ts": call.device_start[device] * 1e6,
                            "dur": seconds * 1e6,
                            "args": args,
                        }
                    )
        if self.device_timed:
            devices = sorted({d for c in self.calls for d in c.device or ()})
            events[1:1] = [
                {
                    "name": "thread_name",
                    "ph": "M",
                    "pid": 0,
                    "tid": d + 1,
                    "args": {"name": f"device {d}"},
                }
                for d in devices
            ]
        with Path(path).open("w") as file:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, file)


@contextmanager
def profile() -> Iterator[Profile]:
    """Record each public mdarray call made inside the ``with`` block, by this thread
    (or asyncio task).

    A call is recorded once, as the outermost public call (``x.sum()`` is one ``sum``
    however many public calls it makes inside): its name, host time, device time where
    the backend times devices (CUDA events on each device's stream, read when the block
    ends; on the cpu backend the host time is the device time), bytes moved per device
    pair (as `count_transfers` counts them) and whether it took the fallback. The
    `Profile` prints as a table per operation, sorted by total time, and writes a Chrome
    trace (`Profile.to_chrome_trace`). Outside a profile a public call pays one check.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(8.0), mdarray.Layout.block((8,), devices=[0, 1]))
    >>> with mdarray.profile() as p:
    ...     y = (x + 1).sum()
    >>> [(row["name"], row["calls"]) for row in sorted(p.summary(), key=lambda r: r["name"])]
    [('add', 1), ('sum', 1)]
    """
    global recording  # noqa: PLW0603  (a module global: the hot path's one cheap read)
    found = Profile(default_backend_object())
    token = _open.set((*_open.get(), found))
    with _RECORDING_LOCK:
        recording += 1
    try:
        yield found
    finally:
        with _RECORDING_LOCK:
            recording -= 1
        _open.reset(token)
        found._resolve()
