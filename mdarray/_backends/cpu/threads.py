"""The cpu backend's device threads: the kernels of one large call, one device each, at once.

A virtual device is a name, so its kernels ran in the caller's thread, device after device.
NumPy releases the GIL inside its loops (ufuncs, reductions, sorts, BLAS), so the devices'
kernels of one call can run at the same time on threads: `DeviceThreads.run` is a
fork-join (the caller hands each device's rows to that device's thread and waits for all),
so nothing reads a result before its kernel finished, no kernel outlives the call, and
every error is raised in the caller. Small calls never come here
(`CpuBackend.parallel_bytes`): a hand-over costs tens of microseconds.

Each row runs in a copy of the caller's `contextvars` context: NumPy 2's error state
(``np.errstate``) is a context variable, so a worker warns or raises as the caller would;
Python's warning filters are the process's, as in the caller.
"""

from __future__ import annotations

import contextvars
import operator
import os
import threading
from collections import deque
from collections.abc import Callable, Sequence
from queue import SimpleQueue
from typing import Any


class DeviceThreads:
    """One worker thread per virtual device (device ``d`` on thread ``d % count``),
    started when first needed; `count` is at most the cores this process may use, so a
    machine of fewer cores than devices gives a thread several devices, not more
    runnable threads than cores."""

    def __init__(self, count: int, cores: int | None = None) -> None:
        self.count = max(1, min(count, core_count() if cores is None else cores))
        #: Rows handed to a worker so far (tests check small calls hand none over).
        self.submits = 0
        self._inboxes: list[SimpleQueue] = []
        self._lock = threading.Lock()
        self._local = threading.local()

    def run(self, fn: Callable, rows: Sequence[tuple[int, tuple]]) -> list:
        """``[fn(*args) for device, args in rows]``: each row on the thread of its device
        (the device id modulo the thread count), a device's rows in order. Returns when
        every row has finished; then, if any row raised, raises the error of the first
        such row (in rows order), as the loop would have, though the other devices' rows
        ran."""
        results, errors = self.run_all(fn, rows)
        if errors:
            raise errors[min(errors)]
        return results

    def run_all(self, fn: Callable, rows: Sequence[tuple[int, tuple]]) -> tuple[list, dict]:
        """`run`'s results and, by row position, the errors of the rows that raised (a
        device's rows after its failed one did not run).

        The rows are handed over in one C-level loop (no Python line runs between two
        hand-overs), and an interrupt while waiting waits on: an interrupt (which only
        the main thread receives) lands before any row is handed over or after every row
        finished, never between, as in `CpuBackend.write_each`'s loop."""
        batches: dict[int, list] = {}
        for index, (device, args) in enumerate(rows):
            batches.setdefault(device % self.count, []).append((index, args))
        if len(batches) < 2 or getattr(self._local, "worker", False):
            # One device's rows (nothing to run at once), or a worker's own call (a
            # kernel calling mdarray): the caller runs them.
            return _inline(fn, rows)
        inboxes = self._inboxes or self._start()
        done: SimpleQueue = SimpleQueue()
        targets = [inboxes[thread] for thread in batches]
        tasks = [(contextvars.copy_context(), fn, batch, done) for batch in batches.values()]
        self.submits += len(rows)
        pending = iter(tasks)
        try:
            deque(map(SimpleQueue.put, targets, pending), 0)
        finally:
            answers = _wait(done, len(tasks) - operator.length_hint(pending))
        results: list[Any] = [None] * len(rows)
        errors: dict[int, BaseException] = {}
        for got, failed in answers:
            for index, value in got.items():
                results[index] = value
            errors.update(failed)
        return results, errors

    def _start(self) -> list[SimpleQueue]:
        with self._lock:
            if not self._inboxes:
                inboxes: list[SimpleQueue] = [SimpleQueue() for _ in range(self.count)]
                for k, inbox in enumerate(inboxes):
                    name = f"mdarray-cpu-device-{k}"
                    worker = threading.Thread(target=self._work, args=(inbox,), name=name)
                    worker.daemon = True
                    worker.start()
                self._inboxes = inboxes
        return self._inboxes

    def _work(self, inbox: SimpleQueue) -> None:
        self._local.worker = True
        while True:
            context, fn, batch, done = inbox.get()
            results: dict[int, Any] = {}
            errors: dict[int, BaseException] = {}
            context.run(_run_batch, fn, batch, results, errors)
            done.put((results, errors))
            del context, fn, batch, done, results, errors  # hold no chunk between calls

    def forget(self) -> None:
        """After a fork: the parent's workers are not in the child; start new ones."""
        self._inboxes = []
        self._lock = threading.Lock()


def _inline(fn: Callable, rows: Sequence[tuple[int, tuple]]) -> tuple[list, dict]:
    results: list[Any] = [None] * len(rows)
    errors: dict[int, BaseException] = {}
    _run_batch(fn, list(enumerate(args for _, args in rows)), results, errors)
    return results, errors


def _run_batch(fn: Callable, batch: list, results, errors: dict) -> None:
    """Each row of `batch` (``(index, args)``), in order; a failed row's error kept and the
    device's later rows skipped, as the loop skips what follows an error."""
    for index, args in batch:
        try:
            results[index] = fn(*args)
        except BaseException as error:  # raised by `run` in the caller
            errors[index] = error
            return


def _wait(done: SimpleQueue, pending: int) -> list:
    """The answers of `pending` workers; an interrupt while waiting waits on for the rest
    (no kernel may write after the call returned) and then propagates."""
    answers: list = []
    interrupted: BaseException | None = None
    while True:
        try:
            while len(answers) < pending:
                answers.append(done.get())
            break
        except BaseException as error:  # KeyboardInterrupt: raised once all answered
            interrupted = interrupted or error
    if interrupted is not None:
        raise interrupted
    return answers


# Set by MPI launchers in each process: how many processes of the run share this host
# (MPICH's Hydra, Open MPI).
_LOCAL_PROCESSES = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE")


def core_count() -> int:
    """The cores this process may use: those it is bound to, or where it is bound to all
    of the host's (the launcher bound nothing), its share of them among the processes an
    MPI launcher started on this host."""
    total = os.cpu_count() or 1
    mine = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else total
    if mine < total:
        return mine
    for variable in _LOCAL_PROCESSES:
        value = os.environ.get(variable, "")
        if value.isdigit() and int(value) > 1:
            return max(1, mine // int(value))
    return mine


_ALL: list[DeviceThreads] = []


def device_threads(count: int) -> DeviceThreads:
    """A `DeviceThreads` for `count` devices, forgotten in a forked child."""
    threads = DeviceThreads(count)
    _ALL.append(threads)
    return threads


def _after_fork() -> None:
    for threads in _ALL:
        threads.forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
