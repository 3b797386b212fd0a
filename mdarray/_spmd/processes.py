"""The processes of an SPMD run: which process holds which device, the chunks a process
does not hold, and how the processes agree on every failure.

Without `join` (one process, the default) every device is local and nothing here costs
anything: `is_local` is true for every device. After `join` (``mdarray.distributed.
initialize``) each process brings its devices; they get global ids, consecutive by rank,
gathered into one table that every process holds. Layouts name global ids, so they are the
same metadata on every process; a process allocates and computes only the chunks of its
own devices and holds a `Remote` for each of the others.

Agreement. Every public call (`collective`: DistArray's protocols and methods, and
`entry` in the namespaces' functions) is one agreed step of the run: it returns on every
process or raises on every process. Every message the library sends between processes
is preceded by one agreement round (`Group.ready`: an all-reduce of one flag); a process
whose call raised (its data overflowed under ``np.errstate``, an allocation failed)
takes part in the others' next round with its error, so they raise too (an error of the
same class, naming the process) instead of waiting for a message that never comes; and
the outermost call ends with a round, so a failure after the call's last message is
agreed as well. Calls made inside a call (``np.mean`` calling ``sum``) are part of it.
With one process none of this runs.

With ``MDARRAY_CHECK_COLLECTIVES=1`` each outermost call first checks that every process
makes the same call (`_call_check`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, TypeVar

import numpy as np

from mdarray._backends.backend import Backend
from mdarray._core.registry import SPMD
from mdarray._runtime import profile as _profile
from mdarray._runtime.config import MPI_INSTALL, missing, transparent

from .call_check import CallCheck, is_agreed, mark_agreed

__all__ = ["Group", "Remote", "collective", "current", "entry", "is_local", "owner"]

P = ParamSpec("P")
R = TypeVar("R")


class Group:
    """The processes of an SPMD run and the global device table.

    `comm` is the library's own duplicate of the user's communicator, so its messages
    never meet the user's. `owners[i]` is the rank holding global device
    ``device_ids[i]``; `local` lists this process's devices.
    """

    def __init__(self, comm, local_counts: tuple[int, ...], mpi: Any) -> None:
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.alone = self.size == 1
        owners: list[int] = []
        for rank, count in enumerate(local_counts):
            owners.extend([rank] * count)
        self.device_ids = tuple(range(len(owners)))
        self.owners = tuple(owners)
        self.local = tuple(d for d, r in zip(self.device_ids, owners) if r == self.rank)
        self.local_set = frozenset(self.local)
        # Whether a public call runs on this process: the calls inside it are its parts,
        # and only the outermost agrees and is checked.
        self.depth = 0
        self._flag = np.zeros(1, np.int32)
        self._any = np.zeros(1, np.int32)
        self._max = mpi.MAX
        # Whether each call first checks that every process makes the same call.
        self.check = CallCheck(comm, mpi) if checking_collectives() and not self.alone else None

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

    # Agreement ------------------------------------------------------------------------

    def ready(self, failure: BaseException | None = None) -> None:
        """One agreement round: before every message between processes and at the end of
        every public call. Returns where no process failed; else raises on every process
        but the failing one, which gets back with `failure` marked agreed, to raise it."""
        if self.alone:
            return
        self._flag[0] = failure is not None
        self.comm.Allreduce(self._flag, self._any, op=self._max)
        if not self._any[0]:
            return
        notes = self.comm.allgather(None if failure is None else _note(failure))
        if failure is not None:
            mark_agreed(failure)
            return
        raise _agreed_error(notes)

    def call(self, name: str, func: Callable[..., R], args: tuple, kwargs: dict) -> R:
        """``func(*args, **kwargs)``, the public call `name`, as one agreed step, checked
        first under ``MDARRAY_CHECK_COLLECTIVES``."""
        self.depth = 1
        try:
            if self.check is not None:
                self.check.check(name, *_shared_arguments(func, args, kwargs))
            result = func(*args, **kwargs)
        except BaseException as error:
            self.depth = 0
            if not is_agreed(error):
                self.ready(error)
            raise
        self.depth = 0
        self.ready()
        if self.check is not None:
            self.check.made(result)
        return result

    # The collectives the library makes, each after an agreement round ---------------

    def allgather(self, value: Any) -> list:
        self.ready()
        return self.comm.allgather(value)

    def bcast(self, value: Any, root: int) -> Any:
        self.ready()
        return self.comm.bcast(value, root=root)

    def allreduce(self, send, receive, op) -> None:
        self.ready()
        self.comm.Allreduce(send, receive, op=op)

    def reduce_scatter(self, send, receive, counts: list[int], op) -> None:
        self.ready()
        self.comm.Reduce_scatter(send, receive, recvcounts=counts, op=op)


def _note(error: BaseException) -> tuple[str, str, str]:
    """What the other processes learn of `error`: its class's module and name, and its
    text."""
    text = f"{type(error).__name__}: {error}"
    if len(text) > 2000:
        text = text[:2000] + "..."
    return type(error).__module__, type(error).__qualname__, text


def _agreed_error(notes: list) -> BaseException:
    """The error of a process that did not fail: of the first failing process's error's
    class where this process knows it and it takes a message (so ``except
    FloatingPointError`` takes the same branch everywhere), else RuntimeError; its text
    names the processes that failed and how."""
    failed = [(rank, note) for rank, note in enumerate(notes) if note is not None]
    text = "; ".join(f"process {rank} failed: {note[2]}" for rank, note in failed)
    kind = _known_class(*failed[0][1][:2])
    try:
        error = kind(text)
    except Exception:  # a class whose constructor wants more than a message
        error = RuntimeError(text)
    return mark_agreed(error)


def _known_class(module: str, qualname: str) -> type[Exception]:
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if isinstance(found, type) and issubclass(found, Exception):
        return found
    return RuntimeError


def _shared_arguments(func: Callable[..., Any], args: tuple, kwargs: dict) -> tuple:
    """`args` and `kwargs` of a call of `func`, those it takes per process (`per_process`)
    replaced by a placeholder."""
    local = getattr(func, "__mdarray_per_process__", None)
    if local is None:
        return args, kwargs
    names, when = local
    bound = _signature(func).bind_partial(*args, **kwargs).arguments
    if when is not None and bound.get(when) is None:
        return args, kwargs
    return (), {k: "<per process>" if k in names else v for k, v in bound.items()}


@functools.cache
def _signature(func: Callable[..., Any]) -> inspect.Signature:
    return inspect.signature(func)


def per_process(*names: str, when: str | None = None) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Mark the arguments `names` of a public function as differing between processes by
    design (each process's own chunks), so ``MDARRAY_CHECK_COLLECTIVES`` leaves them out;
    with `when`, only where the argument `when` is given (not None)."""

    def mark(func: Callable[P, R]) -> Callable[P, R]:
        func.__mdarray_per_process__ = (frozenset(names), when)  # type: ignore[attr-defined]
        return func

    return mark


def collective(
    name: str | Callable[..., str], local: Callable[..., bool] | None = None
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Make a method a public call: one agreed (and checked) step in a run of several
    processes (`Group.call`), unless `local` says, from the call's arguments, that this
    call is answered from metadata alone. `name` is the call's name, or gives it from the
    call's arguments. In one process the method runs as it is, at the cost of this
    wrapper."""

    def decorate(method: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(method)
        @transparent
        def public(*args: P.args, **kwargs: P.kwargs) -> R:
            if _profile.recording and _profile.open_here() and not (local and local(*args)):
                called = name if isinstance(name, str) else name(*args)
                return _profile.recorded(called, public, args, kwargs)
            group = _GROUP
            if group is None or group.alone or group.depth or (local and local(*args)):
                return method(*args, **kwargs)
            called = name if isinstance(name, str) else name(*args)
            return group.call(called, method, args, kwargs)

        return public

    return decorate


def entry() -> Group | None:
    """Where a public call starting now must be one agreed step (`Group.call`): the group
    of a run of several processes, unless a call is already running; else None."""
    group = _GROUP
    if group is None or group.alone or group.depth:
        return None
    return group


_GROUP: Group | None = None
_SEVERAL = False  # `several`: _GROUP holds more than one process
# The local devices after `join`, else None: every device is local.
_LOCAL: frozenset[int] | None = None


#: ``current()``: the process group after `join`, else None. A C-level call (a partial of
#: ``getattr`` on this module): every op asks it, and a function would be a Python frame.
current: Callable[[], Group | None] = functools.partial(getattr, sys.modules[__name__], "_GROUP")
#: ``several()``: whether this is an SPMD run of more than one process (a C call, as
#: `current`: op code asks it on every call).
several: Callable[[], bool] = functools.partial(getattr, sys.modules[__name__], "_SEVERAL")


def is_local(device: int) -> bool:
    """Whether this process holds `device` (always, in a single-process run)."""
    return _LOCAL is None or device in _LOCAL


def owner(device: int) -> int:
    """The rank holding `device` (0 in a single-process run)."""
    return 0 if _GROUP is None else _GROUP.owner(device)


def runs_here(impl) -> bool:
    """Whether `impl` (an implementation in `_registry`'s tables) may run as it is:
    always in one process; in a run of several, only one marked ``spmd=True``."""
    return impl in SPMD or not several()


def check_root(root: Any) -> None:
    """Raise ValueError unless `root` is the rank of a process of the run."""
    size = 1 if _GROUP is None else _GROUP.size
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)) or not 0 <= root < size:
        raise ValueError(f"root must be the rank of a process (0..{size - 1}), got {root!r}")


#: Called with no argument after this process joins or leaves a run: the layers above
#: keep their single-process shortcuts in step (`_storage.local`).
ON_CHANGE: list[Callable[[], None]] = []


def _changed() -> None:
    for hook in ON_CHANGE:
        hook()


def join(comm, backend: Backend) -> Group:
    """Join the SPMD run of `comm`'s processes with `backend`'s devices: gather the device
    table and give the backend its global ids."""
    try:
        from mpi4py import MPI  # noqa: PLC0415  (lazy: MPI only in an SPMD run)
    except ImportError as error:
        raise missing("mpi4py", MPI_INSTALL, "mdarray.distributed") from error

    global _GROUP, _LOCAL, _SEVERAL
    if _GROUP is not None:
        raise RuntimeError("mdarray.distributed is already initialized")
    own = comm.Dup()
    counts = tuple(own.allgather(len(backend.device_ids)))
    group = Group(own, counts, MPI)
    backend.join(group.device_ids, group.local)
    _GROUP, _LOCAL, _SEVERAL = group, group.local_set, group.size > 1
    _changed()
    return group


def leave(backend: Backend) -> None:
    """Undo `join` (collective, a checked call: a process that leaves while the others
    make another call raises with them): the backend gets its own devices back."""
    global _GROUP, _LOCAL, _SEVERAL
    if _GROUP is None:
        return
    group = _GROUP
    if group.check is not None:
        group.check.check("finalize", (), {})
    group.ready()
    _GROUP, _LOCAL, _SEVERAL = None, None, False
    _changed()
    backend.leave()
    if group.check is not None:
        group.check.comm.Free()
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
    return np.dtype(group.bcast(None if dtype is None else np.dtype(dtype).str, root=root))


def agree_any(flag: bool) -> bool:
    """Whether `flag` (read from this process's data) is true on some process: the same
    answer on every process (one small allgather in a run of several), so a decision
    taken on it takes the same branch everywhere."""
    group = _GROUP
    if group is None or group.size == 1:
        return bool(flag)
    return any(group.allgather(bool(flag)))


def merged_everywhere(local: dict) -> dict:
    """Every process's `local` entries (host values, keyed alike on every process: say
    by piece number) merged into one dict, the same on every process (one allgather in
    a run of several)."""
    group = _GROUP
    if group is None or group.size == 1:
        return dict(local)
    merged: dict = {}
    for part in group.allgather(local):
        merged.update(part)
    return merged


def checking_collectives() -> bool:
    return os.environ.get("MDARRAY_CHECK_COLLECTIVES", "") not in ("", "0")


def agreeing(may_fail: bool) -> contextlib.AbstractContextManager[None]:
    """Run the block (local work that `may_fail` on its data), then agree: in a run of
    several processes every process raises there if any raised, so all of them take the
    same branch after it (a write lands only where no process failed). Elsewhere a
    shared do-nothing context: no generator per call."""
    if not may_fail or not several():
        return _AS_IT_IS
    return _agreed()


_AS_IT_IS = contextlib.nullcontext()


@contextlib.contextmanager
def _agreed() -> Iterator[None]:
    group = _GROUP
    assert group is not None
    try:
        yield
    except BaseException as error:
        if not is_agreed(error):
            group.ready(error)
        raise
    group.ready()
