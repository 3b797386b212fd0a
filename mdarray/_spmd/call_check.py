"""``MDARRAY_CHECK_COLLECTIVES=1``: every public call of an SPMD run first checks that
every process is making the same call, at the same place in the sequence of calls.

What a call is, for the check (`describe`): its name, its number among this process's
calls, and every argument: a DistArray by the call that made it (`Births`: the array
returned as result j of call #n is the same array on every process only if every process
made the same calls), its layout, mode and dtype; a NumPy array by its shape, dtype and a
digest of its bytes; keys, scalars, axes, dtypes and the rest by their reprs; a function
by its qualified name. Arguments that differ between processes by design (the chunks of
`from_local_chunks`) are left out (`_processes.per_process`).

How it is checked (`CallCheck.check`): each process sends its record to process 0, which
compares them and answers every process with one verdict; each side waits at most
``MDARRAY_CHECK_TIMEOUT`` seconds (60 by default; process 0 that long, the others twice
that), so a process that left the run early, or raised alone before making the call,
gives an error naming it instead of a hang. The messages travel on a communicator of
their own, so they never meet the library's data. After a timeout the run is out of step:
the program should end.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import weakref
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

__all__ = ["CallCheck", "describe", "is_agreed", "mark_agreed"]

# Set on an exception raised alike on every process (agreed, or the check's own): the
# call it leaves tells the others nothing more.
_AGREED = "__mdarray_agreed__"


def mark_agreed(error: BaseException) -> BaseException:
    """`error`, marked as raised on every process of the run."""
    setattr(error, _AGREED, True)
    return error


def is_agreed(error: BaseException) -> bool:
    """Whether `error` was raised on every process (`mark_agreed`)."""
    return getattr(error, _AGREED, False)


# The package's own frames are skipped when naming where a call was made.
_PACKAGE = str(Path(__file__).parents[1]) + os.sep  # the mdarray package
_RECORD, _VERDICT = 11, 12  # message tags
_RECORD_BYTES, _VERDICT_BYTES = 1024, 8192
# A call's arguments as shown in an error (the comparison uses the whole text's digest).
_SHOWN = 300


def timeout() -> float:
    """Seconds process 0 waits for every process to make a call (``MDARRAY_CHECK_TIMEOUT``)."""
    return float(os.environ.get("MDARRAY_CHECK_TIMEOUT", "60"))


class Births:
    """Which call made each DistArray a process holds: ``#n.j`` for result j of call #n.

    Keyed by ``id`` (a DistArray is unhashable) with a weak reference that drops the entry
    when the array goes, so a later array at the same address is not mistaken for it.
    """

    def __init__(self) -> None:
        self._names: dict[int, tuple[weakref.ref, str]] = {}

    def name(self, array: Any) -> str:
        entry = self._names.get(id(array))
        return entry[1] if entry is not None and entry[0]() is array else "?"

    def record(self, result: Any, number: int) -> None:
        """Name the DistArrays `result` holds (itself, or in a tuple or list) after call
        `number`, those without a name yet."""
        values = result if isinstance(result, (tuple, list)) else (result,)
        for j, value in enumerate(values):
            if _is_distarray(value) and self.name(value) == "?":
                self._names[id(value)] = (
                    weakref.ref(value, self._forget(id(value))),
                    f"#{number}.{j}",
                )

    def _forget(self, key: int) -> Callable[[weakref.ref], None]:
        """The callback that drops the entry `key` when its array goes."""
        return lambda _: self._names.pop(key, None) and None


def _is_distarray(value: Any) -> bool:
    return (
        not isinstance(value, type)  # DistArray itself (``types`` of __array_function__)
        and hasattr(value, "layout")
        and hasattr(value, "mode")
        and hasattr(value, "storage")
    )


@lru_cache(maxsize=256)
def _layout_digest(layout: Any) -> str:
    return hashlib.sha1(repr(layout).encode()).hexdigest()[:8]


def _bytes_digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()[:8]


def describe(value: Any, births: Births | None = None) -> str:
    """`value` as text that is equal on two processes where the value is the same: no
    addresses, arrays by their metadata and birth, host data by a digest of its bytes."""
    if _is_distarray(value):
        born = "?" if births is None else births.name(value)
        return (
            f"DistArray{born}({value.shape}, {value.dtype}, {value.mode}, "
            f"layout {_layout_digest(value.layout)})"
        )
    if isinstance(value, np.ndarray):
        data = (
            repr(value.tolist()).encode()  # object arrays hold addresses
            if value.dtype.hasobject
            else np.ascontiguousarray(value).tobytes()
        )
        return f"ndarray({value.shape}, {value.dtype.str}, {_bytes_digest(data)})"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(describe(v, births) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, dict):
        items = sorted(f"{describe(k, births)}: {describe(v, births)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, slice):
        return f"slice({value.start!r}, {value.stop!r}, {value.step!r})"
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    if isinstance(value, np.ufunc):
        return f"ufunc {value.__name__}"
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{getattr(value, '__module__', '?')}.{value.__qualname__}"
    if hasattr(value, "shape") and hasattr(value, "dtype"):  # CuPy's and other arrays
        return f"{type(value).__name__}({value.shape}, {value.dtype})"
    try:
        text = repr(value)
    except Exception:  # the check must not fail on one process alone
        return type(value).__qualname__
    if " at 0x" in text:  # the default repr: an address, different on every process
        return type(value).__qualname__
    return text


def call_site() -> str:
    """Where the program made the current call: the first frame outside the package."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    if frame is None:
        return "?"
    return f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno}"


def _encode(value: Any, size: int) -> bytearray:
    """`value` (a string or list of strings and numbers) as JSON in `size` bytes, its
    longest strings halved until it fits."""
    while True:
        data = json.dumps(value, ensure_ascii=False).encode()
        if len(data) <= size:
            return bytearray(data.ljust(size))
        if isinstance(value, str):
            value = value[: len(value) // 2] + "..."
        else:
            longest = max(range(len(value)), key=lambda i: len(str(value[i])))
            value = [*value]
            value[longest] = str(value[longest])[: len(str(value[longest])) // 2] + "..."


def _decode(buffer: bytearray) -> Any:
    return json.loads(bytes(buffer).rstrip())


class CallCheck:
    """The check of one SPMD run's calls (see the module docstring): `check` before each
    outermost public call, `made` after it returns."""

    def __init__(self, comm, mpi) -> None:
        self.comm = comm.Dup()  # its own: a late message never meets the library's data
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.mpi = mpi
        self.calls = 0
        self.births = Births()
        # Sends not yet known to be complete, kept with their buffers.
        self._sending: list = []

    def check(self, name: str, args: tuple, kwargs: dict) -> None:
        """Raise RuntimeError on every process unless every process makes this call (same
        `name`, arguments and number) within the timeout."""
        self.calls += 1
        text = describe((args, kwargs), self.births) if (args or kwargs) else "()"
        digest = hashlib.sha1(text.encode()).hexdigest()[:16]
        shown = text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
        record = [self.calls, name[:100], digest, shown, call_site()]
        self._reap()
        verdict = self._judge(record) if self.rank == 0 else self._hear(record)
        if verdict is not None:
            # Every process that made the call raises it: nothing more to agree on.
            raise mark_agreed(RuntimeError(verdict))

    def made(self, result: Any) -> None:
        """Name the arrays the call just checked returned (`Births`)."""
        self.births.record(result, self.calls)

    def _judge(self, mine: list) -> str | None:
        """Process 0: everyone's records, compared; the verdict sent to every other."""
        buffers = {r: bytearray(_RECORD_BYTES) for r in range(1, self.size)}
        requests = {
            r: self.comm.Irecv(buffers[r], source=r, tag=_RECORD) for r in range(1, self.size)
        }
        missing = _wait(self.mpi, requests, time.monotonic() + timeout())
        records = {0: mine} | {r: _decode(b) for r, b in buffers.items() if r not in missing}
        verdict = _verdict(mine, records, missing)
        # Not to a missing process: where it makes a call at last, it pairs with the
        # others' next one, as if it had skipped this one.
        for r in sorted(set(range(1, self.size)) - missing):
            data = _encode(verdict, _VERDICT_BYTES)
            self._sending.append((self.comm.Isend(data, dest=r, tag=_VERDICT), data))
        return verdict

    def _hear(self, mine: list) -> str | None:
        """Another process: its record sent to process 0, and the verdict back."""
        data = _encode(mine, _RECORD_BYTES)
        self._sending.append((self.comm.Isend(data, dest=0, tag=_RECORD), data))
        buffer = bytearray(_VERDICT_BYTES)
        request = {0: self.comm.Irecv(buffer, source=0, tag=_VERDICT)}
        if _wait(self.mpi, request, time.monotonic() + 2 * timeout()):
            return (
                f"process 0 (which checks the calls) did not make call #{mine[0]} "
                f"({mine[1]} at {mine[4]}) within {2 * timeout():g} s: it left the run, "
                "raised alone or waits in another collective (MDARRAY_CHECK_COLLECTIVES)"
            )
        return _decode(buffer)

    def _reap(self) -> None:
        self._sending = [(r, d) for r, d in self._sending if not r.Test()]


def _wait(mpi, requests: dict, deadline: float) -> set:
    """Wait for `requests` (receives by rank) until `deadline`; the ranks whose message
    did not come, their receives cancelled."""
    pending = dict(requests)
    delay = 1e-5
    while pending:
        pending = {r: q for r, q in pending.items() if not q.Test()}
        if not pending or time.monotonic() > deadline:
            break
        time.sleep(delay)
        delay = min(2 * delay, 0.01)
    missing = set()
    for rank, request in pending.items():
        request.Cancel()
        status = mpi.Status()
        request.Wait(status)
        if status.Is_cancelled():
            missing.add(rank)
    return missing


def _verdict(mine: list, records: dict, missing: set) -> str | None:
    """None where every record is the same call, else the error every process raises."""
    number, name, _, _, site = mine
    if missing:
        ranks = ", ".join(map(str, sorted(missing)))
        return (
            f"process {ranks} did not make call #{number} ({name} at {site}) within "
            f"{timeout():g} s, which the others made: it left the run, raised alone or waits "
            "in another collective (MDARRAY_CHECK_COLLECTIVES)"
        )
    # By name and arguments: the numbers differ after a process skipped a call, and then
    # the arrays it names differ (`Births`) or the calls themselves.
    calls = {r: tuple(record[1:3]) for r, record in records.items()}
    if len(set(calls.values())) == 1:
        return None
    groups: dict[tuple, list[int]] = {}
    for r in sorted(calls):
        groups.setdefault(calls[r], []).append(r)
    lines = []
    for members in groups.values():
        n, call, _, shown, where = records[members[0]]
        who = "process" if len(members) == 1 else "processes"
        lines.append(f"{who} {', '.join(map(str, members))}: call #{n} {call}{shown} at {where}")
    text = "; ".join(lines)
    return (
        f"processes disagree on collective call #{number}: {text}. Every process must make "
        "the same collective calls, with the same arguments, in the same order."
    )
