"""The cpu backend: NumPy chunks on virtual CPU devices.

``MDARRAY_CPU_DEVICES`` virtual devices (default 4) hold NumPy arrays. Work completes at
once; the stream and event calls keep CUDA's shape, so the code above the backends is the
same for both (see `_backend.Backend`). The devices' kernels of a large call run at once,
one thread per device (`each`, `_cpu_threads`); a small call's run in the caller's thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import operator
import os
import warnings
from collections import defaultdict, deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from itertools import islice, starmap
from types import ModuleType
from typing import Any, cast

import numpy as np
from numpy.lib.array_utils import byte_bounds

from mdarray._core import debug as _debug
from mdarray._core.debug import HOST
from mdarray._kernels import kernels as _kernels, special_values as _special_values

from . import lanes as _lanes, threads as _threads
from .pool import LIMIT as POOL_LIMIT, ResultPool

#: Bytes of a call (its largest array, read or written whole) from which its devices'
#: kernels run on the devices' threads, where each device's thread has a core of its own.
#: A hand-over costs about 35 us; on 2 shared cores a + b of float64 on 4 devices threaded
#: took 2.1x its loop's time at 1 MiB, 1.3x at 4, 1.1x at 16 and 0.9x at 64 MiB (a + b of
#: 4096x4096: 0.6x), and CG on 2048x2048 float32 (16 MiB arrays) 1.15x: with fewer cores
#: than devices the threshold is `SHARED_CORES_BYTES`.
PARALLEL_BYTES = 16 << 20
SHARED_CORES_BYTES = 64 << 20


def _warnings_raise() -> bool:
    """Whether the warnings filter raises a RuntimeWarning (the first filter that matches
    the category decides, as `warnings` does; message and module patterns are ignored,
    which errs towards raising)."""
    for action, _, category, _, _ in warnings.filters:
        if issubclass(RuntimeWarning, category):
            return action == "error"
    return False


class _Nothing:
    """A context manager that does nothing, its two methods C functions: ``int()`` on
    entry, ``"".format(*exc_info)`` (an empty string, so never suppressing an exception)
    on exit; `contextlib.nullcontext` costs two Python frames per ``with``."""

    __slots__ = ()
    __enter__ = staticmethod(int)
    __exit__ = staticmethod("".format)


_SECOND = operator.itemgetter(1)


class CpuBackend:
    """Virtual CPU devices holding NumPy chunks."""

    name = "cpu"
    xp: ModuleType = np
    # QR of 2^18 x 64 float32 in row blocks (one OpenBLAS thread): blocks of 2^16 rows
    # took 1.6 s in all, of 2^13 rows (2^19 elements) 0.71 s, the whole 2.5 s.
    factor_block_elements = 1 << 19
    nccl = None  # GPUs only
    shared_memory = True  # virtual devices: one host memory
    read_only_arrays = True  # NumPy's flags.writeable
    records = False  # NumPy runs each call as it comes: `mdarray.iterate` runs its loop
    errors_per_call = True  # `may_fail` reads NumPy's error state and warning filters
    matmul = staticmethod(np.matmul)  # the chunks' matrix product (the cuda backend's: a method)

    def __init__(self, n_devices: int) -> None:
        if n_devices < 1:
            raise ValueError(f"MDARRAY_CPU_DEVICES must be at least 1, got {n_devices}")
        self.device_ids = tuple(range(n_devices))
        self.count = n_devices
        #: `each` is worth its hand-over for a call over at least this many bytes (code
        #: above compares its largest array's ``nbytes``); ``MDARRAY_CPU_PARALLEL_BYTES``
        #: sets it, 0 for every call, a huge value for none.
        # A thread per core: each device's own, the rest for its lanes (`lanes.py`).
        self.threads = _threads.device_threads(max(n_devices, _threads.core_count()))
        self.pool = ResultPool(int(os.environ.get("MDARRAY_CPU_POOL_BYTES", POOL_LIMIT)))
        default = PARALLEL_BYTES if self.threads.count >= n_devices else SHARED_CORES_BYTES
        self.parallel_bytes = int(os.environ.get("MDARRAY_CPU_PARALLEL_BYTES", default))
        if self.threads.count < 2:
            self.parallel_bytes = 1 << 62  # one core or one device: nothing runs at once
        keep_freed_memory()

    def __repr__(self) -> str:
        return f"<mdarray cpu backend, devices {list(self.device_ids)}>"

    def join(self, device_ids: tuple, local: tuple) -> None:
        """Take part in an SPMD run: arrays name the run's global `device_ids`, of which
        this process holds `local` (virtual devices are names: any id serves)."""
        self.device_ids = tuple(device_ids)

    def leave(self) -> None:
        """Back to this process's own devices."""
        self.device_ids = tuple(range(self.count))

    #: ``on(device)``: the context in which work for `device` is issued. Nothing to set
    #: on the CPU: a do-nothing context per device, whose entry and exit are C functions,
    #: looked up by a C function too (a miss makes one, with no Python frame either), so
    #: the ``with backend.on(device)`` around every kernel costs no Python call.
    on: Callable[[int], AbstractContextManager[Any]] = cast(
        "Callable[[int], AbstractContextManager[Any]]", defaultdict(_Nothing).__getitem__
    )

    def is_native(self, obj) -> bool:
        return isinstance(obj, np.ndarray)

    def device_of(self, array) -> int | None:
        """The device an array of this backend lives on, or None if it is not one."""
        return None

    def empty(self, shape, dtype, device: int):
        return np.empty(shape, dtype)

    def empty_slabs(self, totals, dtype, devices) -> list:
        """One fresh flat array of `totals[i]` elements for each of `devices`, one after
        another in one allocation (`span` sees the row blocks of several devices as one
        array: one kernel over them, as `product_runs` runs a product), each its own
        block as `allocation_of` and the memory report see it: a view of a byte view."""
        dtype = np.dtype(dtype)
        if dtype.kind not in "biufc" or len(totals) < 2:  # no buffer format: apart
            return [np.empty((total,), dtype) for total in totals]
        whole = memoryview(np.empty((sum(totals),), dtype)).cast("B")  # type: ignore[arg-type]
        slabs = []
        start = 0
        for total in totals:
            stop = start + total * dtype.itemsize
            slabs.append(np.frombuffer(whole[start:stop], dtype))
            start = stop
        return slabs

    def full(self, shape, value, dtype, device: int):
        return np.full(shape, value, dtype)

    def from_host(self, host_array: np.ndarray, device: int, out=None):
        """A chunk array on `device` holding a copy of `host_array` (written into `out`,
        a contiguous array of its shape on `device`, when given)."""
        if _debug.counting():
            _debug.record_transfer(HOST, device, host_array.nbytes)
        if out is None:
            return np.array(host_array, copy=True, order="C")
        out[...] = host_array
        return out

    def adopt(self, array, device: int, out=None):
        """A chunk array on `device` holding `array` (an array of this backend's kind)."""
        return self.from_host(np.asarray(array), device, out)

    def export_to_current(self, device: int) -> None:
        """Nothing to order on the CPU (see `CudaBackend.export_to_current`)."""

    def move(self, array, src_device: int, dst_device: int):
        """`array` (on `src_device`) as an array on `dst_device`: a view if they are one."""
        if src_device == dst_device:
            return array
        if _debug.counting():
            _debug.record_transfer(src_device, dst_device, array.nbytes)
        return np.array(array, copy=True)

    def move_into(self, out, key: tuple, array, src_device: int, dst_device: int) -> None:
        """``out[key] = array`` for `out` on `dst_device` and `array` on `src_device`, a
        basic `key` (slices and an Ellipsis): one copy, the move's own (virtual devices
        share the host's memory)."""
        if src_device != dst_device and _debug.counting():
            _debug.record_transfer(src_device, dst_device, array.nbytes)
        out[key] = array

    def to_host_into(self, host_out: np.ndarray, array, device: int) -> None:
        if _debug.counting():
            _debug.record_transfer(device, HOST, array.nbytes)
        host_out[...] = array

    def to_host(self, array, device: int) -> np.ndarray:
        """A host copy of `array` (on `device`), complete on return."""
        if _debug.counting():
            _debug.record_transfer(device, HOST, array.nbytes)
        return np.array(array)

    def host_empty(self, shape, dtype) -> np.ndarray:
        return np.empty(shape, dtype)

    def synchronize(self, devices=None) -> None:
        pass  # `each` returns when its rows are done: no work is ever left running

    def each(self, fn, rows: list, result_dtype=None, elementwise: bool = False) -> list:
        """``[fn(*args) for device, args in rows]``, each row on its device's thread, all
        at once (`_cpu_threads.DeviceThreads.run`: done on return; the first failed
        row's error raised, after every row ran). For kernels on the device's own arrays
        only (no movement, no shared state), in calls of at least `parallel_bytes`.

        With `result_dtype`, `fn` is a kernel of one result of that dtype and of its
        array arguments' shape: a NumPy ufunc's large results are written into blocks
        of the pool (`_cpu_pool`), whose pages are warm where a block is reused.

        Where the threads outnumber the rows, a row may run in lanes (`lanes.py`): a
        ufunc's, a 2-D reduction's (`reduce`), and with `elementwise` (``fn(*args)`` is
        elementwise over its array arguments, other arguments passed as they are) any
        kernel's of `result_dtype`."""
        lanes = self.threads.count // max(1, len(rows))
        if result_dtype is not None and type(fn) is np.ufunc and fn.nout == 1:
            rows = [(d, (fn, self._pooled(d, args, result_dtype), *args)) for d, args in rows]
            fn = _into
        elif not (fn == self.reduce or (elementwise and result_dtype is not None)):
            lanes = 0
        if lanes < 2:
            return self.threads.run(fn, rows)
        return self._in_lanes([self._lanes_of(fn, args, result_dtype, lanes) for _, args in rows])

    def _lanes_of(self, fn, args: tuple, result_dtype, lanes: int) -> tuple:
        """``(out, pieces, (fn, args))`` for one row of `each`: its result array and the
        pieces that write it, one per lane; `pieces` is None where the row runs whole
        (`lanes.py` says where)."""
        if fn == self.reduce:
            split = _lanes.reduction(fn, args, lanes)
        elif fn is _into:  # a ufunc's row: (ufunc, its block of the pool or None, *operands)
            kernel, block, *operands = args
            split = _lanes.elementwise(_into, kernel, operands, lanes, result_dtype, block)
        else:
            split = _lanes.elementwise(_lanes.write_into, fn, args, lanes, result_dtype)
        return (None, None, (fn, args)) if split is None else (*split, (fn, args))

    def _in_lanes(self, split: list) -> list:
        """The results of rows ``(out, pieces, (fn, args))``: a row with `pieces` runs
        them, one lane each, into `out` (its result); one without runs ``fn(*args)``
        whole. Row ``i``'s lane ``j`` goes to thread ``i + j * len(split)``: rows on
        threads of their own, then their lanes."""
        count = len(split)
        work = []
        for i, (_, pieces, whole) in enumerate(split):
            for j, piece in enumerate(pieces or (whole,)):
                work.append((i + j * count, piece))
        got = iter(self.threads.run(_call, work))
        results = []
        for out, pieces, _ in split:
            if pieces:
                deque(islice(got, len(pieces)), 0)  # each wrote its part of `out`
                results.append(out)
            else:
                results.append(next(got))
        return results

    def _pooled(self, device: int, args, dtype):
        """A block of the pool for the result of a kernel over `args`, or None."""
        shape = next((a.shape for a in args if type(a) is np.ndarray), None)
        if shape is None or not self.pool.wants(math.prod(shape) * np.dtype(dtype).itemsize):
            return None
        return self.pool.take(device, shape, dtype)

    # Seeing time and memory: work is done when its call returns, so no device clock
    # (host time is device time); NumPy allocates from the heap but for the pool's
    # large results.
    def time_mark(self) -> None:
        return None

    def time_elapsed(self, start, end) -> dict[int, float]:
        return {}

    def pool_bytes(self, device: int) -> tuple[int, int] | None:
        """``(used, total)`` bytes of the pool of large results (`_cpu_pool`)."""
        return self.pool.figures(device) if self.pool.limit else None

    def allocation_of(self, array) -> tuple[int, int]:
        """``(address, bytes)`` of the memory block holding `array`: the array at the
        root of its views (whose bounds are the block NumPy allocated)."""
        root = array
        while isinstance(root.base, np.ndarray):
            root = root.base
        low, high = byte_bounds(root)
        return low, high - low

    def span(self, buffers, starts=None, shape=None):
        """The block `buffers` tile in one allocation (`_kernels.span`), else None."""
        return _kernels.span(buffers, _address, _block_view, starts, shape)

    def pointer(self, array) -> int:
        """The address of `array`'s first element."""
        return _address(array)

    def copy(self, array, device: int):
        """A contiguous copy of `array` (on `device`) on the same device."""
        return np.array(array, copy=True, order="C")

    # Kernels ------------------------------------------------------------------------

    def ufunc_kernel(self, ufunc):
        """The kernel that runs `ufunc` on this backend's arrays: NumPy's own, with the
        standard's special values where NumPy departs from them (`_special_values`)."""
        return _STANDARD.get(ufunc, ufunc)

    def ufunc_kernel_for(self, kernel, nbytes: int, like=None):
        """`kernel` (`ufunc_kernel`'s) for operands of at most `nbytes` (and calls `like`
        given arguments): the same."""
        return kernel

    def block_launch(self, kernel, like, out=None) -> None:
        """None: NumPy's kernels take arrays, not pointers."""

    def recording(self, devices: tuple):
        """Refuses: NumPy's calls cannot be recorded (`records` is False)."""
        raise NotImplementedError("the cpu backend records no work (records is False)")

    def fused_kernel(self, fn, kernel_name: str | None = None):
        """The per-chunk kernel of ``mdarray.fuse(fn)``: `fn` on the chunk's NumPy arrays.

        Where `fn` calls a ufunc whose kernel here departs from NumPy's
        (`_special_values`), the arrays are seen as `_StandardChunk`, so its ufuncs are
        this backend's kernels (``inf // 2`` is inf, as in the unfused op); otherwise `fn`
        runs on the plain arrays (NumPy reuses the temporaries of a plain chain)."""

        def kernel(*args):
            if not _special_values.calls_fixed(fn, args):
                return fn(*args)
            views = [a.view(_StandardChunk) if type(a) is np.ndarray else a for a in args]
            got = fn(*views)
            for arg, view in zip(args, views):
                if got is view:
                    return arg  # an operand itself: the caller sees it is not fresh
            return got.view(np.ndarray) if isinstance(got, _StandardChunk) else got

        return kernel

    def may_fail(self, ufunc) -> bool:
        """Whether a kernel may raise after writing part of its output: NumPy's integer
        power (negative exponents), any ufunc under ``np.errstate(... = "raise")``, and
        any ufunc while the warnings filter turns NumPy's RuntimeWarnings into errors
        (``warnings.simplefilter("error")``, as test suites run)."""
        return ufunc is np.power or "raise" in np.geterr().values() or _warnings_raise()

    def writes_each(self, ufunc) -> bool:
        """Whether `write_each` runs several calls of `ufunc`'s kernel with no Python line
        between them: NumPy's own ufuncs (C code), not the `_special_values` wrappers."""
        return ufunc not in _STANDARD

    def write_each(self, kernel, calls: list) -> None:
        """Each ``kernel(*args, out=outs)`` of `calls` (``(device, args, outs)``), in order,
        each writing its outs in place, in one C-level loop (`itertools.starmap` drained by
        a deque): between two calls of a NumPy ufunc no Python line runs, so an interrupt
        lands before the first call or after the last, or inside a call from the Python
        it runs after writing (a floating-point warning shown). A call that fails on its
        own (a failed allocation, before it writes) after earlier calls wrote runs again
        with the rest before the error propagates; after an interrupt in a call, the rest
        run: every device holds the new value, never part of it, and none is written
        twice."""
        call = kernel
        if not isinstance(kernel, np.ufunc) and calls:
            # A wrapper (NumPy's special values) takes its outs by keyword; it runs one
            # call at a time only (`writes_each`).
            nin = len(calls[0][1])
            call = lambda *row: kernel(*row[:nin], out=row[nin:])  # noqa: E731
        rows = [(*args, *outs) for _, args, outs in calls]
        if (
            calls
            and calls[0][2][0].nbytes * len(calls) >= self.parallel_bytes
            and self.threads.count > 1
        ):
            self._write_each_at_once(call, calls, rows)
            return
        pending = iter(rows)
        try:
            deque(starmap(call, pending), 0)
        except BaseException as error:
            failed = len(rows) - operator.length_hint(pending) - 1
            if failed > 0 or isinstance(error, KeyboardInterrupt):
                again = failed + isinstance(error, KeyboardInterrupt)
                for row in rows[again:]:
                    call(*row)
            raise

    def _write_each_at_once(self, call, calls: list, rows: list) -> None:
        """`write_each`'s calls on the devices' threads: every call runs (the first error
        waits for the rest); a call that failed on its own runs once more before the
        error propagates, as in the loop (an interrupted one is not run again)."""
        _, errors = self.threads.run_all(
            call, [(device, row) for (device, _, _), row in zip(calls, rows)]
        )
        if not errors:
            return
        first = errors[min(errors)]
        if not isinstance(first, KeyboardInterrupt):
            for k in sorted(errors):  # a failed call wrote nothing: it runs once more
                with contextlib.suppress(Exception):
                    call(*rows[k])
        raise first

    def call_masked(self, kernel, args, outs: tuple, mask, options) -> tuple:
        """``kernel(*args)`` written into `outs` where `mask` is true."""
        kernel(*args, out=outs, where=mask, **options)
        return outs

    def call_into(self, kernel, args, out, options) -> None:
        """``out[...] = kernel(*args)`` for a fresh `out` of the call's result dtype (a cell
        of a result chunk): a NumPy ufunc writes it itself, the same loop and values with
        no temporary; other kernels (fused functions, the standard's fixes) compute, then
        copy."""
        if type(kernel) is np.ufunc:
            kernel(*args, out=out, **options)
        else:
            out[...] = kernel(*args, **options)

    def reduce(self, ufunc, chunk, axes: tuple, dtype, result_dtype, skip_nan: bool = False,
               shape=None):  # fmt: skip
        """`ufunc` reduced over `axes` of one chunk, keeping dims (or in `shape`), as
        `result_dtype`; NaNs as the identity where `skip_nan` (``np.add`` and
        ``np.multiply``)."""
        if dtype is not None and np.dtype(dtype).kind in "mM":
            dtype = None  # NumPy's ufuncs refuse a time unit (``m8[s]``): the chunk's own
        if skip_nan:
            nan_reduce = np.nansum if ufunc is np.add else np.nanprod
            out = nan_reduce(chunk, axis=axes, dtype=dtype, keepdims=True)
        elif ufunc in _FOLDED and len(axes) == 1 and chunk.shape[axes[0]] > 1:
            # NumPy's reduce of these may run an AVX-512 loop whose running result is read
            # as its first element (``arctan2.reduce([1., 1., 1.])`` is arctan2(1, 1) on
            # such hosts, depending on the shape); accumulate is the documented left fold.
            folds = ufunc.accumulate(chunk, axis=axes[0], dtype=dtype)
            out = np.take(folds, [-1], axis=axes[0])
        else:
            out = ufunc.reduce(chunk, axis=axes, dtype=dtype, keepdims=True)
        if not isinstance(out, np.ndarray):
            out = np.array(out)  # a 0-d reduce gives a scalar: chunks are writable arrays
        out = out if out.dtype == result_dtype else out.astype(result_dtype)
        return out if shape is None else out.reshape(shape)

    def sort_keys(self, values):
        """`values` as keys that sort as NumPy sorts them: themselves."""
        return values

    def arg_pick(self, chunk, axis: int, largest: bool):
        """argmax (`largest`) or argmin of `chunk` along `axis` (NumPy's own: the first
        NaN wins)."""
        return chunk.argmax(axis=axis) if largest else chunk.argmin(axis=axis)

    def accumulate(self, ufunc, chunk, axis: int, dtype):
        """`ufunc` accumulated along `axis` of one chunk."""
        if dtype is not None and np.dtype(dtype).kind in "mM":
            dtype = None  # as in `reduce`
        return ufunc.accumulate(chunk, axis=axis, dtype=dtype)

    def linalg_errors(self):
        """Where linear algebra reports a singular matrix: NumPy raises LinAlgError."""
        return contextlib.nullcontext()

    def convolve(self, a, v):
        """The full discrete convolution of 1-D `a` and `v` (NumPy's direct sums)."""
        return np.convolve(a, v, mode="full")

    def assign(self, out, index: tuple, value) -> None:
        """``out[index] = value`` for an index of slices or int arrays per axis."""
        _kernels.assign(np, out, index, value)

    def combine(self, ufunc, pieces, copies: int, dtype):
        """`ufunc` folded left over `pieces` (arrays of one shape on one device, at least
        one) as a new array of `dtype` holding `copies` copies of the result stacked on a
        new first axis: one allocation and one NumPy call per piece after the first."""
        return _kernels.combine_copies(np, ufunc, pieces, copies, dtype)

    def combine_from(self, ufunc, pieces, sources, device: int, copies: int, dtype):
        """`combine` of `pieces` lying on the devices `sources`, on `device`: each read
        where it lies (virtual devices share the host's memory: the fold's reads are the
        moves), those of other devices recorded as moved."""
        if _debug.counting():
            for piece, source in zip(pieces, sources):
                if source != device:
                    _debug.record_transfer(source, device, piece.nbytes)
        return self.combine(ufunc, pieces, copies, dtype)

    def combine_to(self, ufunc, pieces, sources, targets: tuple, dtype) -> list:
        """`combine_from` on each target ``(device, copies)`` of `targets`, folded once:
        the devices share the host's memory, so the first target folds and the others get
        their copies of its value (recorded as moves), each a part of one allocation."""
        first = targets[0][0]
        total = sum(map(_SECOND, targets))  # (no generator: a frame per item)
        out = self.combine_from(ufunc, pieces, sources, first, total, dtype)
        parts = []
        start = 0
        for device, copies in targets:
            if device != first and _debug.counting():
                _debug.record_transfer(first, device, out[0].nbytes * copies)
            parts.append(out[start : start + copies])
            start += copies
        return parts


def _call(fn, args):
    return fn(*args)


def _into(ufunc, out, *args):
    """``ufunc(*args)``, written into `out` where given (by keyword: NumPy deprecates a
    positional ``out`` for some ufuncs)."""
    return ufunc(*args) if out is None else ufunc(*args, out=out)


# glibc's mallopt parameters, and the values `keep_freed_memory` sets: allocations below
# 32 MiB (glibc's own ceiling for its moving threshold) come from the heap, and up to
# 128 MiB freed at its top stays there (a CG iteration on 4 virtual devices of 2048x2048
# float32 frees about that much between allocations).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 128 << 20


def keep_freed_memory() -> None:
    """Let the C allocator keep freed memory for the next allocation (glibc only).

    A chunked array's results are one allocation per device, each smaller than NumPy's
    whole array: glibc hands chunks of a few MiB back to the system as soon as the heap's
    free top passes twice its moving mmap threshold, and the next result's pages fault
    again on first touch (CG on 4 devices, 2048x2048 float32: about 6800 faults per
    iteration, NumPy's own run about 500). Raising both thresholds keeps that memory in
    the process (no fault at all in either run). Skipped where the C library has no
    ``mallopt``, where the user set glibc's own ``MALLOC_*_`` variables, and where
    ``MDARRAY_CPU_KEEP_MEMORY=0``.
    """
    if os.environ.get("MDARRAY_CPU_KEEP_MEMORY", "1") == "0":
        return
    if any(f"MALLOC_{name}_" in os.environ for name in ("TRIM_THRESHOLD", "MMAP_THRESHOLD")):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return
    mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)


# Non-reorderable ufuncs whose reduce NumPy may run wrongly (`CpuBackend.reduce`).
_FOLDED = frozenset({np.arctan2, np.power})

# NumPy's ufuncs that `_special_values` patches, wrapped once.
_STANDARD = {ufunc: _special_values.standard(np, ufunc, ufunc) for ufunc in _special_values.FIXED}


class _StandardChunk(np.ndarray):
    """A chunk's NumPy array inside a fused function: its ufunc calls (operators
    included) run `CpuBackend.ufunc_kernel`'s kernels, so ``x // 2`` of ``inf`` is
    ``inf`` there as in the unfused op; results stay `_StandardChunk`."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = tuple(_plain(x) for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(_plain(o) for o in kwargs["out"])
        if method == "__call__":
            got = _STANDARD.get(ufunc, ufunc)(*inputs, **kwargs)
        else:
            got = getattr(ufunc, method)(*inputs, **kwargs)
        if isinstance(got, tuple):
            return tuple(_standard(g) for g in got)
        return _standard(got)


def _plain(x):
    return x.view(np.ndarray) if isinstance(x, _StandardChunk) else x


def _standard(x):
    return x.view(_StandardChunk) if type(x) is np.ndarray else x


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _block_view(buffers, first, shape, strides):
    """The strided view over NumPy chunk buffers that `_kernels.span` found, where
    they lie in one allocation; else None."""
    root = first
    while isinstance(root.base, np.ndarray):
        root = root.base
    if isinstance(root.base, memoryview) and isinstance(root.base.obj, np.ndarray):
        root = root.base.obj  # a slab of `CpuBackend.empty_slabs`: their one allocation
    if root.base is not None:
        return None
    try:  # NumPy refuses a view past the allocation's end: chunks of another one
        return np.ndarray(shape, first.dtype, root, _address(first) - _address(root), strides)
    except (TypeError, ValueError):
        return None
