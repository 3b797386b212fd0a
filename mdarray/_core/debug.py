"""Seeing data movement: `count_transfers` counts bytes moved per device pair.

Every copy between devices, or between a device and the host, is reported to the
*observers* of the current context (`record_transfer`): the counters of the open
`count_transfers` blocks, and the transfer guard of `mdarray.options` (`_config`) where
one is set. Where there are none, a backend skips the report with one C call.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections import Counter
from collections.abc import Iterator
from typing import Protocol

#: Where host memory is named: a transfer's end in a TransferCount, and the "device"
#: `_redistribute.region_value` gathers to for a NumPy result.
HOST = "host"

#: A transfer's end: a device id or `HOST`.
Place = int | str


class Observer(Protocol):
    def moved(self, src: Place, dst: Place, nbytes: int) -> None: ...


# The observers set in this context (thread or task): each sees only its own moves. Unset,
# the context has the process-wide default (`observe_by_default`).
_counters: contextvars.ContextVar[tuple[Observer, ...]] = contextvars.ContextVar(
    "mdarray_transfer_counters", default=()
)


#: The observers of this context (C calls only: a backend skips `record_transfer`'s
#: Python call per copy where it returns an empty tuple, as it does outside
#: `count_transfers` with no transfer guard set).
counting = functools.partial(_counters.get, ())


def observe_by_default(observers: tuple[Observer, ...]) -> None:
    """Make `observers` those of every context that has set none (`_config.set_options`
    puts the transfer guard here)."""
    global counting  # noqa: PLW0603 (backends look it up here at each copy)
    counting = functools.partial(_counters.get, observers)


@contextlib.contextmanager
def observed_by(observers: tuple[Observer, ...]) -> Iterator[None]:
    """Make `observers` this context's inside the ``with`` block."""
    token = _counters.set(observers)
    try:
        yield
    finally:
        _counters.reset(token)


class TransferCount:
    """Bytes moved per ``(source, destination)`` device pair inside `count_transfers`.

    ``"host"`` stands for host memory. ``total`` is the sum over pairs; ``copies`` the
    number of separate copies issued.
    """

    def __init__(self) -> None:
        self.bytes: Counter[tuple[Place, Place]] = Counter()
        self.copies = 0

    @property
    def total(self) -> int:
        return sum(self.bytes.values())

    def moved(self, src: Place, dst: Place, nbytes: int) -> None:
        self.bytes[(src, dst)] += int(nbytes)
        self.copies += 1

    def __getitem__(self, pair: tuple[Place, Place]) -> int:
        return self.bytes[pair]

    def __repr__(self) -> str:
        pairs = ", ".join(
            f"{src}->{dst}: {n}" for (src, dst), n in sorted(self.bytes.items(), key=str)
        )
        return f"TransferCount({{{pairs}}}, copies={self.copies})"


def record_transfer(src: Place, dst: Place, nbytes: int) -> None:
    """Called by the backend for every copy between two devices or host and device,
    before the copy is issued (so a guard that raises stops it)."""
    for observer in counting():
        observer.moved(src, dst, nbytes)


@contextlib.contextmanager
def count_transfers() -> Iterator[TransferCount]:
    """Count bytes moved between devices (and host) inside the ``with`` block, by this
    thread (or asyncio task): other threads' moves are not counted.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.ones(8), mdarray.Layout.block((8,), devices=[0, 1]))
    >>> with mdarray.count_transfers() as moved:
    ...     y = x.reshard(mdarray.Layout.replicated((8,), devices=[0, 1]))
    >>> moved.total
    64
    """
    counter = TransferCount()
    with observed_by((*counting(), counter)):
        yield counter
