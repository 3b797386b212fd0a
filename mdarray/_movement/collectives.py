"""The few questions op code asks of the run of processes, and its agreed decisions.

Op code runs per chunk through the storage layer (`_storage.local`) and moves data
through `redistribute`; what remains between processes is here: whether this is a run
of several processes (`several`: single-process fast paths, device threads and blocks,
step aside), decisions taken on every process alike from each one's own data
(`agree_any`, `merged_everywhere`, `agree_dtype`), and the agreement on a failure before
a write (`agreeing`). In a single-process run each answers at once.
"""

from __future__ import annotations

from typing import Any

from mdarray._spmd import processes as _processes
from mdarray._spmd.processes import (
    agree_any,
    agree_dtype,
    agreeing,
    check_root,
    merged_everywhere,
    owner,
    several,
)

__all__ = [
    "agree_any",
    "agree_dtype",
    "agreeing",
    "allgathered",
    "broadcast",
    "check_root",
    "from_owner",
    "merged_everywhere",
    "owner",
    "rank_and_size",
    "several",
]


def rank_and_size() -> tuple[int, int]:
    """``(this process's rank, the number of processes)``; ``(0, 1)`` in one process."""
    group = _processes.current()
    return (0, 1) if group is None else (group.rank, group.size)


def broadcast(value: Any, root: int) -> Any:
    """Process `root`'s `value` (a small host value) on every process; `value` itself in
    one process."""
    group = _processes.current()
    return value if group is None else group.bcast(value, root=root)


def allgathered(value: Any) -> list:
    """Every process's `value` (a small host value), in rank order, on every process."""
    group = _processes.current()
    return [value] if group is None else group.allgather(value)


def from_owner(device: int, value: Any) -> Any:
    """`value` as the process holding `device` has it (a host value: results' shapes and
    dtypes), on every process: one broadcast in a run of several, else `value`."""
    group = _processes.current()
    if group is None or group.size == 1:
        return value
    return group.bcast(value, root=group.owner(device))
