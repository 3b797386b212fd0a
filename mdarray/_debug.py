"""Seeing data movement: `count_transfers` counts bytes moved per device pair."""

from __future__ import annotations

import contextlib
import contextvars
from collections import Counter
from collections.abc import Iterator

#: Where host memory is named: a transfer's end in a TransferCount, and the "device"
#: `_redistribute.region_value` gathers to for a NumPy result.
HOST = "host"

#: A transfer's end: a device id or `HOST`.
Place = int | str

# The counters open in this context (thread or task): each counts only its own moves.
_counters: contextvars.ContextVar[tuple[TransferCount, ...]] = contextvars.ContextVar(
    "mdarray_transfer_counters", default=()
)


#: The counters open in this context (a C function: a backend skips `record_transfer`'s
#: Python call per copy where it returns an empty tuple, as it does outside
#: `count_transfers`).
counting = _counters.get


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

    def __getitem__(self, pair: tuple[Place, Place]) -> int:
        return self.bytes[pair]

    def __repr__(self) -> str:
        pairs = ", ".join(
            f"{src}->{dst}: {n}" for (src, dst), n in sorted(self.bytes.items(), key=str)
        )
        return f"TransferCount({{{pairs}}}, copies={self.copies})"


def record_transfer(src: Place, dst: Place, nbytes: int) -> None:
    """Called by the backend for every copy between two devices or host and device."""
    for counter in _counters.get():
        counter.bytes[(src, dst)] += int(nbytes)
        counter.copies += 1


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
    token = _counters.set((*_counters.get(), counter))
    try:
        yield counter
    finally:
        _counters.reset(token)
