"""`iterate`: a loop body run many times, its Python run once where the backend records.

``iterate(body, state, times)`` is ``for _ in range(times): state = body(*state)``
(``body(state)`` for a single array). An iteration of a real algorithm (CG, k-means, a
fit) is dozens of small operations, each costing the host more than its kernels cost
the device; recorded once as a CUDA graph, an iteration is one launch.

Where the backend records (`Backend.records`) and one process runs the program:

1. The state is copied into memory of the loop's own, a *slot*: the state as the loop
   holds it, apart from every array the caller can see.
2. From a slot, the body is recorded (`Recording.record`: nothing runs) on the slot's
   arrays, then launched. Each result the recording made in its own memory stays there;
   any other (an argument returned as it came, an array from outside) is copied into new
   memory inside the recording. The recording ends by copying its results into the slot
   it read (after every read of it), so from then on each iteration is one launch with
   no Python per operation. Loops whose copies would add up to `TURNS_BYTES` save them:
   the results of the first recording are a second slot, and the recording from there
   ends by copying into the first, so the two take turns. Where the state's layouts
   change, each new layout gets its slot the same way.
3. A recording that fails leaves the state as it was (nothing ran). The first failure
   may come of first calls (a plan that copies a constant from the host once, then
   keeps it): that iteration runs as written, its result becomes a slot, and the
   recording is tried again. A second failure, or a refusal no retry can mend
   (`RecordingRefused`: a copy-on-write move of an array made before the body ran, a
   matrix product for cuBLAS), ends the recording: the loop goes on as written, with a
   PerformanceWarning saying why (or a host wait, ``float(x)``, a boolean mask's size;
   a copy from the host). The plans and decided runners first made while recording are
   dropped at each failure (they may hold memory that no kernel filled).
4. The result is the last slot's arrays, in the loop's memory (its pool lives on while
   they do). Matrix products inside a recording are the backend's own kernel
   (`recorded_matmul`), whose sums may differ from cuBLAS's in the last bits.

The body must be a function of its state: Python side effects (appending to a list,
printing) happen in the iterations that run or record it only; arrays it reads from
outside are read at each iteration as they are then; an array of the state that it
hands outside (to a global) sees later iterations' values. While a body is recorded,
another thread must leave the devices' streams alone (its work there would be recorded
too); its host copies and moves are not refused as the recording thread's are.
"""

from __future__ import annotations

import collections
import operator
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

from mdarray._array.array import DistArray, in_group, wrap
from mdarray._core import decided as _decided, plan_cache as _plan_cache
from mdarray._core.recording import Recording as _Recording, RecordingRefused
from mdarray._runtime.config import PerformanceWarning
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import all_here

#: Recordings one loop makes at most (a state whose layouts keep changing runs as written).
MAX_RECORDINGS = 4
#: The latest recordings, newest last: ``(seconds, None)`` for one made, ``(seconds,
#: reason)`` for one that failed (`tools/device/iterate_costs.py` reads them).
RECENT: collections.deque = collections.deque(maxlen=32)
#: Loops whose copies of the state per launch would move this many bytes or more take
#: turns between two slots instead: a second recording costs about an iteration as
#: written (1-2 ms for CG on 2048x2048 on an H100), where 2 GiB of copies take ~1.3 ms.
TURNS_BYTES = 2 << 30
#: Fewer iterations than this run as written: a recording costs about an iteration as
#: written.
MIN_TIMES = 4


def iterate(body: Callable[..., Any], state: Any, times: int) -> Any:
    """The state after `times` iterations of `body`: ``for _ in range(times): state =
    body(*state)`` (``body(state)`` where `state` is one DistArray).

    `state` is a DistArray or a tuple of DistArrays (0-d arrays for scalars), and `body`
    returns the same: as many arrays, best each of the layout, mode and dtype of the one
    it replaces (a change costs one more recording). On CUDA, in one process, the body
    is recorded once (twice for loops of a large state: see `TURNS_BYTES`) as CUDA
    graphs, launched after that with no Python per operation (see the module docstring:
    the body must be a function of its state, and waits for no value on the host); on
    the cpu backend, in SPMD runs or for fewer than four iterations, the loop runs as
    written. The arrays given are never written (unless `body` writes them).

    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.ones(4))
    >>> y = mdarray.iterate(lambda v: v * 2, x, 5)
    >>> y.get()
    array([32., 32., 32., 32.])
    """
    if not callable(body):
        raise TypeError(f"mdarray.iterate: body must be callable, not {type(body).__name__}")
    times = operator.index(times)
    if times < 0:
        raise ValueError(f"mdarray.iterate: times must be >= 0, not {times}")
    single = isinstance(state, DistArray)
    leaves = _leaves(state, "the initial state")
    step = _Step(body, single, len(leaves))
    if times == 0:
        return state
    backend = leaves[0].storage.backend
    if (
        times < MIN_TIMES
        or not backend.records
        or not all_here()
        or _Recording.thread is not None
        or any(x.storage.backend is not backend for x in leaves)
    ):
        for _ in range(times):
            leaves = step(leaves)
        return _packed(leaves, single)
    # Every device: the body may reach any, and work on a device left out of the
    # recording would run once, now, instead of at each launch.
    devices = tuple(backend.device_ids)
    turns = times * sum(x.nbytes for x in leaves) >= TURNS_BYTES
    loop = _Loop(step, backend.recording(devices), turns)
    try:
        leaves = loop.run(leaves, times)
    finally:
        loop.recording.close()
    return _packed(leaves, single)


class _Step:
    """One iteration as written: `body` on the leaves, its result checked."""

    def __init__(self, body: Callable[..., Any], single: bool, count: int) -> None:
        self.body, self.single, self.count = body, single, count

    def __call__(self, leaves: tuple) -> tuple:
        got = self.body(leaves[0]) if self.single else self.body(*leaves)
        out = _leaves(got, "the body's result")
        if len(out) != self.count or isinstance(got, DistArray) != self.single:
            raise TypeError(
                f"mdarray.iterate: the body returned {_describe(got)} for a state of "
                f"{'one DistArray' if self.single else f'a tuple of {self.count}'}"
            )
        return out


class _Loop:
    """The slots and recordings of one `iterate` call (see the module docstring)."""

    def __init__(self, step: _Step, recording: Any, turns: bool) -> None:
        self.step = step
        self.recording = recording
        # Two slots taking turns (no copy per launch, a second recording), or one, each
        # launch ending by copying the results into the slot it read.
        self.turns = turns
        # Slots by their key; per slot (by id), its recording and the slot it leads to.
        self.slots: dict[tuple, list[tuple]] = {}
        self.next: dict[int, tuple[Any, tuple]] = {}
        self.recorded = 0
        self.retried = False
        self.failed: str | None = None

    def run(self, state: tuple, times: int) -> tuple:
        slot = self._adopt(state)
        for _ in range(times):
            if self.failed is None:
                follow = self.next.get(id(slot)) or self._record(slot)
                if follow is not None:
                    self.recording.launch(follow[0])
                    slot = follow[1]
                    continue
                if self.failed is None:  # a first failure: once as written, then again
                    slot = self._adopt(self.step(slot))
                    continue
            slot = self.step(slot)
        return slot

    def _adopt(self, state: tuple) -> tuple:
        """A new slot holding copies of `state`."""
        slot = tuple(_fresh_copy(x) for x in state)
        self.slots.setdefault(_key(slot), []).append(slot)
        return slot

    def _record(self, slot: tuple) -> tuple[Any, tuple] | None:
        """Record the body from `slot`: ``(graph, next slot)``; None (and the reason in
        `failed`) where it cannot be recorded."""
        if self.recorded == MAX_RECORDINGS:
            self._fail(f"the state's layouts changed {MAX_RECORDINGS} times")
            return None
        self.recorded += 1
        target: list[tuple | None] = [None]

        def recorded() -> tuple:
            out = tuple(x if self._made_here(x) else _fresh_copy(x) for x in self.step(slot))
            key = _key(out)
            others = [s for s in self.slots.get(key, ()) if s is not slot or not self.turns]
            if others:
                target[0] = others[0]
                if others[0] is slot:  # written where it was read: after every read of it
                    self.recording.barrier()
                for dst, src in zip(others[0], out):
                    _copy_into(dst, src)
            return out

        _Recording.epoch += 1
        _Recording.thread = threading.get_ident()
        _plan_cache.track_new()
        _decided.track_new()
        start = time.perf_counter()
        made = False
        try:
            graph, out = self.recording.record(recorded)
            made = True
        except Exception as error:  # any failure: the loop runs as written
            RECENT.append((time.perf_counter() - start, f"{type(error).__name__}: {error}"))
            if not self.retried and not isinstance(error, RecordingRefused):
                self.retried = True  # first calls may cache what a recording cannot hold
                return None
            self._fail(f"{type(error).__name__}: {error}")
            return None
        finally:
            _Recording.thread = None
            _plan_cache.forget_new(drop=not made)  # (an interrupt's too)
            _decided.forget_new(drop=not made)
        RECENT.append((time.perf_counter() - start, None))
        slot_next = target[0]
        if slot_next is None:
            slot_next = out
            self.slots.setdefault(_key(out), []).append(out)
        follow = (graph, slot_next)
        self.next[id(slot)] = follow
        return follow

    def _made_here(self, x: DistArray) -> bool:
        made_here = self.recording.made_here
        return all(made_here(b) for b in _local_buffers(x))

    def _fail(self, reason: str) -> None:
        self.failed = reason
        warnings.warn(
            f"mdarray.iterate: the loop body could not be recorded ({reason}); the loop "
            "runs as written",
            PerformanceWarning,
            stacklevel=4,
        )


def _leaves(state: Any, what: str) -> tuple:
    items = (state,) if isinstance(state, DistArray) else state
    if not isinstance(items, (tuple, list)) or not items:
        raise TypeError(
            f"mdarray.iterate: {what} must be a DistArray or a tuple of DistArrays, "
            f"not {_describe(state)}"
        )
    for k, item in enumerate(items):
        if not isinstance(item, DistArray):
            raise TypeError(
                f"mdarray.iterate: item {k} of {what} is {_describe(item)}, not a DistArray "
                "(make scalars 0-d arrays: mdarray.asarray(v, device=x.device))"
            )
    return tuple(items)


def _describe(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    if isinstance(value, DistArray):
        return "a DistArray"
    return f"an object of type {type(value).__name__}"


def _packed(leaves: tuple, single: bool) -> Any:
    return leaves[0] if single else leaves


def _key(leaves: tuple) -> tuple:
    """What a recording from these arrays depends on: per array, all that a plan may
    (`signature`: layout, mode, dtype, backend) and its device group."""
    return tuple((x.signature(), x.device) for x in leaves)


def _local_buffers(x: DistArray) -> tuple:
    """The memory of `x`'s chunks: its slabs where packed, else its buffers (recordings
    run in one process: every chunk is here)."""
    storage = x.storage
    slabs = storage.slabs
    return storage.buffers if slabs is None else slabs


def _fresh_copy(x: DistArray) -> DistArray:
    """A copy of `x` in new packed memory (of its layout, mode and group), made by
    copies on its devices' streams."""
    storage = x.storage
    out = in_group(wrap(Chunks.empty(storage.layout, storage.dtype, storage.backend), x.mode), (x,))
    _copy_into(out, x)
    return out


def _copy_into(dst: DistArray, src: DistArray) -> None:
    """Copy `src`'s chunks into `dst`'s memory (one layout), on the devices' streams: a
    copy per device where both are packed, else per chunk."""
    target, source = dst.storage, src.storage
    backend = target.backend
    if target.slabs is not None and source.slabs is not None:
        pairs = zip(target.slabs, source.slabs, target.layout.devices)
    else:
        pairs = zip(target.buffers, source.buffers, target.layout.chunk_devices)
    for out, value, device in pairs:
        if out.size:
            with backend.on(device):
                backend.assign(out, (), value)
