"""The processes of an SPMD run: which process holds which device, and the chunks a
process does not hold.

Without `join` (one process, the default) every device is local and nothing here costs
anything: `is_local` is true for every device. After `join` (``mdarray.distributed.
initialize``) each process brings its devices; they get global ids, consecutive by rank,
gathered into one table that every process holds. Layouts name global ids, so they are the
same metadata on every process; a process allocates and computes only the chunks of its
own devices and holds a `Remote` for each of the others.

Collective calls (anything that may move data between processes) run on every process in
the same order. With ``MDARRAY_CHECK_COLLECTIVES=1`` each one first checks that every
process is making the same call (`check_collective`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["Group", "Remote", "current", "is_local", "owner"]


class Group:
    """The processes of an SPMD run and the global device table.

    `comm` is the library's own duplicate of the user's communicator, so its messages
    never meet the user's. `owners[i]` is the rank holding global device
    ``device_ids[i]``; `local` lists this process's devices.
    """

    def __init__(self, comm, local_counts: tuple[int, ...]) -> None:
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        owners: list[int] = []
        for rank, count in enumerate(local_counts):
            owners.extend([rank] * count)
        self.device_ids = tuple(range(len(owners)))
        self.owners = tuple(owners)
        self.local = tuple(d for d, r in zip(self.device_ids, owners) if r == self.rank)
        self.local_set = frozenset(self.local)
        # Whether collectives first check that every process makes the same call.
        self.checking = checking_collectives()

    def owner(self, device: int) -> int:
        """The rank holding `device`."""
        try:
            return self.owners[device]
        except (IndexError, TypeError):
            raise ValueError(
                f"device {device!r} is not a device of this run (devices 0..{len(self.owners) - 1})"
            ) from None

    def ranks_of(self, devices) -> frozenset[int]:
        return frozenset(self.owners[d] for d in devices)


_GROUP: Group | None = None
# The local devices after `join`, else None: every device is local.
_LOCAL: frozenset[int] | None = None


def current() -> Group | None:
    """The process group after `join`, else None."""
    return _GROUP


def is_local(device: int) -> bool:
    """Whether this process holds `device` (always, in a single-process run)."""
    return _LOCAL is None or device in _LOCAL


def owner(device: int) -> int:
    """The rank holding `device` (0 in a single-process run)."""
    return 0 if _GROUP is None else _GROUP.owner(device)


def several() -> bool:
    """Whether this is an SPMD run of more than one process."""
    return _GROUP is not None and _GROUP.size > 1


def check_root(root: Any) -> None:
    """Raise ValueError unless `root` is the rank of a process of the run."""
    size = 1 if _GROUP is None else _GROUP.size
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)) or not 0 <= root < size:
        raise ValueError(f"root must be the rank of a process (0..{size - 1}), got {root!r}")


def join(comm, backend) -> Group:
    """Join the SPMD run of `comm`'s processes with `backend`'s devices: gather the device
    table and give the backend its global ids."""
    global _GROUP, _LOCAL
    if _GROUP is not None:
        raise RuntimeError("mdarray.distributed is already initialized")
    own = comm.Dup()
    counts = tuple(own.allgather(len(backend.device_ids)))
    group = Group(own, counts)
    backend.join(group.device_ids, group.local)
    _GROUP, _LOCAL = group, group.local_set
    return group


def leave(backend) -> None:
    """Undo `join`: the backend gets its own devices back."""
    global _GROUP, _LOCAL
    if _GROUP is None:
        return
    group = _GROUP
    _GROUP, _LOCAL = None, None
    backend.leave()
    group.comm.Free()


class Remote:
    """A chunk (or slab) held by another process: its shape and dtype, no data.

    Metadata reads work (`shape`, `dtype`, `ndim`, `size`, `nbytes`); anything that would
    need the data raises, naming the device, so an operation that forgot to skip another
    process's chunk fails loudly instead of computing on nothing.
    """

    __slots__ = ("device", "dtype", "shape")

    def __init__(self, shape, dtype, device: int) -> None:
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self.device = device

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"Remote({self.shape}, {self.dtype}, device={self.device})"

    def _unreachable(self) -> RuntimeError:
        return RuntimeError(
            f"the chunk on device {self.device} is held by process {owner(self.device)}, "
            "not this one: this operation has no multi-process implementation yet"
        )

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise self._unreachable()

    def __getitem__(self, key: Any) -> Any:
        raise self._unreachable()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # protocol lookups (copy, pickle, array interfaces)
            raise AttributeError(name)
        raise self._unreachable()


def agree_dtype(dtype, devices) -> np.dtype:
    """The dtype of results computed on `devices`' chunks, on every process: `dtype`
    where this process computed one (None where it held none of them); sent from the
    owner of the first device where some process held none (a collective then)."""
    group = _GROUP
    if group is None or group.ranks_of(devices) == frozenset(range(group.size)):
        return np.dtype(dtype)
    root = group.owner(next(iter(devices)))
    return np.dtype(group.comm.bcast(None if dtype is None else np.dtype(dtype).str, root=root))


def agree_any(flag: bool) -> bool:
    """Whether `flag` (read from this process's data) is true on some process: the same
    answer on every process (one small allgather in a run of several), so a decision
    taken on it takes the same branch everywhere."""
    group = _GROUP
    if group is None or group.size == 1:
        return bool(flag)
    return any(group.comm.allgather(bool(flag)))


def merged_everywhere(local: dict) -> dict:
    """Every process's `local` entries (host values, keyed alike on every process: say
    by piece number) merged into one dict, the same on every process (one allgather in
    a run of several)."""
    group = _GROUP
    if group is None or group.size == 1:
        return dict(local)
    merged: dict = {}
    for part in group.comm.allgather(local):
        merged.update(part)
    return merged


def checking_collectives() -> bool:
    return os.environ.get("MDARRAY_CHECK_COLLECTIVES", "") not in ("", "0")


def check_call(name: str, values, *extra: Any) -> None:
    """`check_collective` of the call `name` on `values` (its arguments): the layout,
    mode and dtype of each array among them, and the `extra` values' reprs (a target
    layout, a mode), name the call. Free unless checking: nothing is computed before."""
    if _GROUP is None or not _GROUP.checking:
        return
    keys = [
        (hash(v.layout), str(v.mode), str(v.dtype))
        for v in values
        if hasattr(v, "layout") and hasattr(v, "mode")
    ]
    check_collective(name, *keys, *map(repr, extra))


def check_collective(name: str, *keys: Any) -> None:
    """With ``MDARRAY_CHECK_COLLECTIVES=1``: raise on every process unless every process
    is calling the collective `name` on the same metadata `keys` (layouts, modes, ...)."""
    group = _GROUP
    if group is None or not group.checking:
        return
    digest = hashlib.sha1(repr((name, *keys)).encode()).hexdigest()[:16]
    calls = group.comm.allgather((name, digest))
    if len(set(calls)) > 1:
        lines = ", ".join(f"rank {r}: {c[0]} ({c[1]})" for r, c in enumerate(calls))
        raise RuntimeError(
            f"processes disagree on the collective call (name and layout hash): {lines}. "
            "Every process must make the same collective calls in the same order."
        )


def agreeing(may_fail: bool) -> contextlib.AbstractContextManager[None]:
    """Run the block (local work that `may_fail` on its data); in a run of several
    processes every process then raises if any raised, before the next collective, so
    none is left waiting. Elsewhere a shared do-nothing context: no generator per call."""
    if not may_fail or not several():
        return _AS_IT_IS
    return _agreed()


_AS_IT_IS = contextlib.nullcontext()


@contextlib.contextmanager
def _agreed() -> Iterator[None]:
    try:
        yield
    except Exception as error:  # re-raised by agree_error, on every process
        agree_error(error)
    else:
        agree_error(None)


def agree_error(error: BaseException | None) -> None:
    """Raise on every process if any raised: `error` here (None where this process had
    none). For errors only the data shows (the others see the same metadata)."""
    group = _GROUP
    if group is None:
        if error is not None:
            raise error
        return
    failed = group.comm.allgather(None if error is None else f"{type(error).__name__}: {error}")
    if error is not None:
        raise error
    for rank, message in enumerate(failed):
        if message is not None:
            raise RuntimeError(f"process {rank} failed: {message}")
