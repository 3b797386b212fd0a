"""The cuda backend: CuPy chunks on CUDA GPUs, one stream per device.

All work for a chunk is issued on its device's stream, so work on one device is ordered by
the stream. A chunk's ready event is recorded on its device's stream when another device
needs it (a copy waits for the event), which orders cross-device work without a host
synchronization. CuPy is imported when the backend is created, never at import.

Where CuPy lacks a kernel NumPy has (``spacing``, complex loops of the logical ufuncs,
``reduce``/``accumulate`` of some ufuncs), an adapter built from CuPy's other kernels
stands in, so the code above the backends never asks which backend it runs on.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Callable
from operator import attrgetter
from typing import Any

import numpy as np

from mdarray._core import debug as _debug, regions as _regions
from mdarray._kernels import kernels as _kernels, special_values as _special_values

from .blas import Blas
from .clock import CudaClock
from .contexts import Contexts, DeviceStream
from .elementwise import OWN_KERNELS, POINTER_LAUNCHES, Chain, Elementwise, launcher
from .graphs import CudaGraphs
from .host import CudaHostCopies, contiguous
from .kernels import (
    ADAPTERS,
    copy_rows,
    pick_kernel,
    plain_fill,
    scipy_twin,
    write_scalar,
    zero_bits,
)
from .staging import StagingRing
from .sums import MIN_BYTES as SMALL_SUM, column_sum, whole_sum


class CudaBackend(CudaClock, CudaHostCopies, CudaGraphs):
    """CUDA GPUs holding CuPy chunks, one stream per device."""

    name = "cuda"
    # cuSOLVER's factorizations do not hinge on a CPU cache, and each cut costs launches.
    factor_block_elements = 0
    # Each device's stream runs its work while the host issues the next device's: `each`
    # (the cpu backend's threads) is never worth it here.
    parallel_bytes = 1 << 62
    # Each GPU reads its own memory: a piece read by several devices moves to each.
    shared_memory = False
    read_only_arrays = False  # CuPy's arrays are always writable
    errors_per_call = False  # CuPy's kernels never fail midway (`may_fail`)

    def __init__(self) -> None:
        import cupy  # noqa: PLC0415  (lazy: mdarray works without CuPy)

        self.xp = cupy
        self._cupy = cupy
        self._blas = Blas(cupy)
        self.device_ids = tuple(range(cupy.cuda.runtime.getDeviceCount()))
        # CUDA ordinal of each device this process holds, by device id, and back: the
        # identity until an SPMD run (`join`) gives the devices global ids.
        self._ordinals = {d: d for d in self.device_ids}
        self._ids = {d: d for d in self.device_ids}
        # CuPy objects (cupy.cuda.Stream, ...): CuPy has no type information.
        self._streams: dict[int, Any] = {}
        self._contexts = Contexts(self._context)
        self.on = self._contexts.__getitem__
        # Per device: host copies to finish when the device syncs: (host view, pinned
        # staging) pairs, or the ring's jobs.
        self._pending: dict[int, list] = {}
        # The ring of pinned staging buffers for large copies into pageable memory.
        self.staged_min_bytes = 8 << 20
        # Measured on an H200 host (benchmarks/transfer_paths.py), 1 GiB to the host:
        # 16 x 4 MiB with 16 threads took 62 ms warm, 108 ms cold; 6 x 16 MiB with 8
        # threads 89 ms warm; pinned results were 20 ms warm but 0.4-0.5 s cold.
        self.staging_buffer_bytes = 4 << 20
        self.staging_buffers = 16
        self.host_copy_threads = min(16, os.cpu_count() or 1)
        self._ring: StagingRing | None = None
        self._kernels: dict = {}
        # cupy.fuse of the fold of a combining ufunc, by ufunc (`combine`).
        self._folds: dict = {}
        # The NCCL communicators of an SPMD run (`_transport.NcclLinks`), or None.
        self.nccl: Any = None

    def __repr__(self) -> str:
        return f"<mdarray cuda backend, devices {list(self.device_ids)}>"

    def stream(self, device: int):
        stream = self._streams.get(device)
        if stream is None:
            if device not in self._ordinals:
                raise ValueError(
                    f"device {device} is not a device of the cuda backend in this process "
                    f"(devices {list(self._ordinals)})"
                )
            with self._cupy.cuda.Device(self._ordinals[device]):
                # A blocking stream: it stays ordered with the legacy default stream that
                # users' own CuPy code runs on, so arrays handed in need no extra events.
                stream = self._cupy.cuda.Stream(non_blocking=False)
            self._streams[device] = stream
        return stream

    #: ``on(device)``: the context issuing work on `device`'s stream, with `device`
    #: current (`_context`), kept per device: a C lookup once made (`contexts.Contexts`).
    on: Callable[[int], Any]

    def _context(self, device: int):
        if len(self._ordinals) == 1:
            # One GPU is always the current device: entering the stream suffices and
            # saves a device switch per chunk (about 1.5 us of a 4 us enter/exit).
            return self.stream(device)
        return DeviceStream(self._cupy.cuda.Device(self._ordinals[device]), self.stream(device))

    def is_native(self, obj) -> bool:
        return isinstance(obj, self._cupy.ndarray)

    def device_of(self, array) -> int | None:
        if isinstance(array, self._cupy.ndarray):
            return self._ids[array.device.id]
        return None

    def join(self, device_ids: tuple, local: tuple) -> None:
        """Take part in an SPMD run: arrays name the run's global `device_ids`, of which
        this process holds `local` (its GPUs, in CUDA ordinal order)."""
        ordinals = sorted(self._ordinals.values())
        self._reset(dict(zip(local, ordinals)), tuple(device_ids))

    def leave(self) -> None:
        """Back to this process's own GPUs under their CUDA ordinals."""
        ordinals = sorted(self._ordinals.values())
        self._reset({o: o for o in ordinals}, tuple(ordinals))

    def _reset(self, ordinals: dict, device_ids: tuple) -> None:
        self.synchronize()
        # Each GPU keeps its stream under its new id: work issued before stays ordered
        # with work issued after.
        streams = {self._ordinals[d]: s for d, s in self._streams.items() if d in self._ordinals}
        self._ordinals = ordinals
        self._ids = {o: g for g, o in ordinals.items()}
        self.device_ids = device_ids
        self._streams = {d: streams[o] for d, o in ordinals.items() if o in streams}
        self._contexts.clear()

    def ordinal(self, device: int) -> int:
        """The CUDA ordinal of `device` (one this process holds)."""
        return self._ordinals[device]

    def empty(self, shape, dtype, device: int):
        with self.on(device):
            return self._cupy.empty(shape, dtype)

    def empty_slabs(self, totals, dtype, devices) -> list:
        """One fresh flat array of `totals[i]` elements on each of `devices`."""
        return [self.empty((total,), dtype, d) for total, d in zip(totals, devices)]

    def full(self, shape, value, dtype, device: int):
        with self.on(device):
            if zero_bits(value, dtype):
                return self._cupy.zeros(shape, dtype)  # one memset
            out = self._cupy.empty(shape, dtype)
            write_scalar(out, value)
            return out

    def _foreign_stream(self, device: int):
        """The caller's current stream on `device` when it is not ordered with ours.

        The legacy default stream (ptr 0) needs no events: our streams are blocking, so
        CUDA orders them with it. Any other stream (a user's non-blocking stream, the
        per-thread default stream) is ordered with ours only through events.
        """
        with self._cupy.cuda.Device(self._ordinals[device]):
            current = self._cupy.cuda.get_current_stream()
        if current.ptr == 0 or current.ptr == self.stream(device).ptr:
            return None
        return current

    def adopt(self, array, device: int, out=None):
        """A copy of the CuPy `array` (of the caller's stream) as a chunk on `device`
        (written into `out`, a contiguous array of its shape on `device`, when given).

        Our stream waits for the caller's current stream before reading `array`, and the
        caller's stream waits for the copy, so the caller may free or overwrite `array`
        at once (CuPy's pool reuses its memory on the caller's stream).
        """
        src_device = self._ids[array.device.id]
        foreign = self._foreign_stream(src_device)
        if foreign is not None:
            self.stream(src_device).wait_event(foreign.record())
        if out is not None:
            moved = self.move(array, src_device, device)
            with self.on(device):
                out[...] = moved
        elif src_device == device:
            with self.on(device):
                out = self._cupy.array(array, copy=True, order="C")
        else:
            out = self.move(array, src_device, device, copy=True)
        if foreign is not None:
            foreign.wait_event(self.stream(src_device).record())
        return out

    def export_to_current(self, device: int) -> None:
        """Order the caller's current stream on `device` after work issued there by us.

        Call before handing a chunk (or a result gathered on `device`) to code that runs
        on the caller's stream: ``cupy.asarray(x)``, ``__cuda_array_interface__``.
        """
        foreign = self._foreign_stream(device)
        if foreign is not None:
            foreign.wait_event(self.stream(device).record())

    def move(self, array, src_device: int, dst_device: int, copy: bool = False):
        """`array` (on `src_device`) as an array on `dst_device`.

        Same device: the array itself (a view) unless `copy`. Another device: the
        destination stream waits for the source's ready event, copies peer to peer, and the
        source stream then waits for the copy, so neither side's buffer is reused early.
        """
        cupy = self._cupy
        if src_device == dst_device:
            if not copy:
                return array
            with self.on(dst_device):
                return cupy.array(array, copy=True, order="C")
        _debug.record_transfer(src_device, dst_device, array.nbytes)  # a refusing guard stops it
        with self.on(src_device):
            src = contiguous(array)
            ready = self.stream(src_device).record()
        dst_stream = self.stream(dst_device)
        with self.on(dst_device):
            out = cupy.empty(src.shape, src.dtype)
            dst_stream.wait_event(ready)
            if src.nbytes:
                cupy.cuda.runtime.memcpyPeerAsync(
                    out.data.ptr,
                    self._ordinals[dst_device],
                    src.data.ptr,
                    self._ordinals[src_device],
                    src.nbytes,
                    dst_stream.ptr,
                )
            done = dst_stream.record()
        self.stream(src_device).wait_event(done)
        return out

    def move_into(self, out, key: tuple, array, src_device: int, dst_device: int) -> None:
        """``out[key] = array`` for `out` on `dst_device` (the current device) and `array`
        on `src_device`, a basic `key`: the array moved (`move`), then copied in (one 2-D
        copy where `copy_rows` takes it)."""
        piece = self.move(array, src_device, dst_device)
        if not copy_rows(self._cupy, out, key, piece):
            out[key] = piece

    def call_into(self, kernel, args, out, options) -> None:
        """``out[...] = kernel(*args)`` for a fresh `out` of the call's result dtype: the
        kernel's result (CuPy's promotion may differ from NumPy's dtype), then a copy."""
        _kernels.assign(self._cupy, out, (), kernel(*args, **options))

    def each(self, fn, rows: list, result_dtype=None, elementwise: bool = False) -> list:
        """``[fn(*args) for device, args in rows]``, each issued on its device's stream
        (`result_dtype` and `elementwise`: the cpu backend's pool and lanes; CuPy's pool
        and the device's own parallelism serve here)."""
        out = []
        for device, args in rows:
            with self.on(device):
                out.append(fn(*args))
        return out

    def synchronize(self, devices=None) -> None:
        """Wait for the work issued on `devices` (all by default), then finish staged
        host copies."""
        for device in list(self._ordinals) if devices is None else devices:
            if device in self._streams:
                self._streams[device].synchronize()
            for item in self._pending.pop(device, ()):
                if isinstance(item, tuple):
                    host_out, staging = item
                    host_out[...] = staging
                else:
                    item.result()

    def copy(self, array, device: int):
        """A contiguous copy of `array` (on `device`) on the same device."""
        with self.on(device):
            return self._cupy.array(array, copy=True, order="C")

    # Kernels ------------------------------------------------------------------------

    def span(self, buffers, starts=None, shape=None):
        """The block `buffers` tile in one allocation (`_kernels.span`), else None."""
        return _kernels.span(buffers, self.pointer, self._block_view, starts, shape)

    #: ``pointer(array)``: the address of `array`'s first element (a C call, no frame).
    pointer = staticmethod(attrgetter("data.ptr"))

    def _block_view(self, buffers, first, shape, strides):
        """The strided view over CuPy chunk buffers that `_kernels.span` found, where
        they share one memory allocation; else None."""
        memory = first.data.mem
        if any(b.data.mem is not memory for b in buffers if b.size):
            return None
        return self._cupy.ndarray(shape, first.dtype, memptr=first.data, strides=strides)

    def ufunc_kernel(self, ufunc):
        """CuPy's kernel for the NumPy `ufunc` (an adapter where CuPy lacks a loop or the
        ufunc), or None where there is none."""
        kernel = self._kernels.get(ufunc)
        if kernel is None:
            adapter = ADAPTERS.get(ufunc)
            own = getattr(self._cupy, ufunc.__name__, None)
            if adapter is not None:
                kernel = adapter(self._cupy, own)
            else:  # (SciPy's special functions: CuPy's twins as they are)
                kernel = launcher(self._cupy, ufunc, own) if own is not None else scipy_twin(ufunc)
            kernel = _special_values.standard(self._cupy, ufunc, kernel)
            self._kernels[ufunc] = kernel = kernel or False
        return kernel or None

    def ufunc_kernel_for(self, kernel, nbytes: int, like=None):
        """`kernel` (`ufunc_kernel`'s) for operands of at most `nbytes` (`Elementwise.sized`:
        bound to calls `like` these; else CuPy's ufunc below mdarray's own kernels' size)."""
        return kernel.sized(nbytes, like) if type(kernel) is Elementwise else kernel

    def block_launch(self, kernel, like, out=None):
        """`kernel` (`ufunc_kernel`'s) bound to device blocks like `like` (and `out`),
        launched on their memory by pointer (`Elementwise.bound`: `Bound.into`), or None
        (always, unless `elementwise.POINTER_LAUNCHES`)."""
        if not POINTER_LAUNCHES or type(kernel) is not Elementwise:
            return None
        return kernel.bound(like, out)

    def fused_kernel(self, fn, kernel_name: str | None = None):
        """The per-chunk kernel of ``mdarray.fuse(fn)``: ``cupy.fuse`` of `fn`, one GPU
        kernel per call, its NumPy ufuncs and operators run as CuPy's (`_kernels.UfuncsAs`:
        CuPy's traced values take only CuPy's names; CuPy compiles it once per dtypes,
        and the fused function keeps the kernel). Where `fn` calls a ufunc whose kernel
        here fixes the standard's special values (`_special_values.calls_fixed`), or is
        called with a Python scalar (which CuPy's fuse types by value), it runs unfused on
        this backend's kernels, one per op, as the unfused ops do."""
        return _fused(self, fn, kernel_name)

    def may_fail(self, ufunc) -> bool:
        """CuPy's kernels never raise after writing part of their output."""
        return False

    def writes_each(self, ufunc) -> bool:
        """Never: each device's call runs Python (its device and stream set), where an
        interrupt may land after a launch, so writes of several calls are staged."""
        return False

    def write_each(self, kernel, calls: list) -> None:
        """Each ``kernel(*args, out=outs)`` of `calls` on its device (one call: see
        `writes_each`)."""
        for device, args, outs in calls:
            with self.on(device):
                kernel(*args, out=tuple(outs))

    def call_masked(self, kernel, args, outs: tuple, mask, options) -> tuple:
        """``kernel(*args)`` written into `outs` where `mask` is true. CuPy's ufuncs take
        no public ``where``: compute everywhere, copy under the mask."""
        got = kernel(*args, **options)
        for target, value in zip(outs, got if isinstance(got, tuple) else (got,)):
            self._cupy.copyto(target, value, casting="unsafe", where=mask)
        return outs

    def reduce(self, ufunc, chunk, axes: tuple, dtype, result_dtype, skip_nan: bool = False,
               shape=None):  # fmt: skip
        """`ufunc` reduced over `axes` of one chunk, keeping dims (or in `shape`), as
        `result_dtype`; NaNs as the identity where `skip_nan` (``np.add`` and
        ``np.multiply``: CuPy's ``nansum`` and ``nanprod``, one kernel; complex NaNs
        replaced first)."""
        whole = ufunc is np.add and not skip_nan and len(axes) == chunk.ndim  # one launch
        if whole:  # (a one-element result: -1, flat, is (1,))
            out = whole_sum(self._cupy, chunk, result_dtype, (1,) if shape == -1 else shape)
            if out is not None:
                return out
        name = _REDUCERS.get(ufunc.__name__)
        if (
            shape is not None
            and name is not None
            and not skip_nan
            and chunk.nbytes < SMALL_SUM
            and chunk.dtype == result_dtype
            and (name not in _ACCUMULATING or chunk.dtype.char in _OWN_ACCUMULATOR)
        ):
            # The array's own method, no keywords: CuPy's shortest call (its dtype and
            # keepdims arguments cost about as much as the reshape after).
            return _shaped(getattr(chunk, name)(axis=axes), shape)
        out = self._reduce(ufunc, chunk, axes, dtype, result_dtype, skip_nan, name)
        return out if shape is None else _shaped(out, shape)

    def _reduce(self, ufunc, chunk, axes: tuple, dtype, result_dtype, skip_nan: bool, name):
        cupy = self._cupy
        sums = column_sum(cupy, ufunc, chunk, axes, result_dtype, skip_nan)
        if sums is not None:  # a large sum(axis=0), at bandwidth
            return sums
        if skip_nan and chunk.dtype.kind == "c":
            # CuPy's complex nan kernels give only complex results and read NaN in the
            # parts one by one (nan+1j sums to 1j; NumPy takes an element with a NaN part
            # as NaN, so 0): NaNs replaced first, then the plain kernel.
            chunk = cupy.where(cupy.isnan(chunk), chunk.dtype.type(ufunc.identity), chunk)
        elif skip_nan:
            name = {"add": "nansum", "multiply": "nanprod"}[ufunc.__name__]
        if name is not None:
            kwargs = {"dtype": result_dtype} if ufunc in (np.add, np.multiply) else {}
            out = getattr(cupy, name)(chunk, axis=axes, keepdims=True, **kwargs)
        else:
            kernel = getattr(cupy, ufunc.__name__)
            out = _kernels.fold_reduce(
                cupy, kernel, chunk, axes, dtype, ufunc.identity, result_dtype
            )
        return out if out.dtype == result_dtype else out.astype(result_dtype)

    def sort_keys(self, values):
        """`values` as keys that CuPy's sort orders as NumPy's does: real floats with every
        NaN made positive (CuPy's sort puts a NaN whose sign bit is set before every
        number; NumPy's puts every NaN last, in order)."""
        if values.dtype.kind != "f":
            return values
        cupy = self._cupy
        return cupy.where(cupy.isnan(values), values.dtype.type(np.nan), values)

    def arg_pick(self, chunk, axis: int, largest: bool):
        """argmax (`largest`) or argmin of `chunk` along `axis`, NaNs as NumPy takes them:
        the first NaN wins (CuPy's kernels return some NaN, not the first, where a row
        holds several). Real floats in one reduction kernel over (value, index) pairs;
        complex ones by the first NaN's position found apart."""
        cupy = self._cupy
        kind = chunk.dtype.kind
        if kind not in "fc":
            return chunk.argmax(axis=axis) if largest else chunk.argmin(axis=axis)
        if kind == "f" and chunk.dtype.itemsize >= 4:
            return pick_kernel(cupy, largest)(chunk, axis=axis)
        k = chunk.argmax(axis=axis) if largest else chunk.argmin(axis=axis)
        n = chunk.shape[axis]
        positions = cupy.arange(n).reshape((n,) + (1,) * (chunk.ndim - axis - 1))
        first_nan = cupy.where(cupy.isnan(chunk), positions, n).min(axis=axis)
        return cupy.where(first_nan < n, first_nan, k)

    def accumulate(self, ufunc, chunk, axis: int, dtype):
        """`ufunc` accumulated along `axis` of one chunk."""
        cupy = self._cupy
        if ufunc is np.add:
            return cupy.cumsum(chunk, axis=axis, dtype=dtype)
        if ufunc is np.multiply:
            return cupy.cumprod(chunk, axis=axis, dtype=dtype)
        return _kernels.fold_accumulate(getattr(cupy, ufunc.__name__), chunk, axis, dtype)

    def convolve(self, a, v):
        """The full discrete convolution of 1-D `a` and `v` by direct sums, as NumPy's:
        ``cupy.convolve`` of floats goes through an FFT, whose rounding turns exact
        zeros into about 1e-16."""
        with warnings.catch_warnings():  # its first import: "cupyx.jit is experimental"
            warnings.simplefilter("ignore", FutureWarning)
            import cupyx.scipy.signal  # noqa: PLC0415  (lazy, as CuPy)

        return cupyx.scipy.signal.convolve(a, v, mode="full", method="direct")

    def linalg_errors(self):
        """Where linear algebra reports a singular matrix: CuPy's solvers fill NaN unless
        asked to check (one small read of their status), so they raise LinAlgError here
        as NumPy does."""
        import cupyx  # noqa: PLC0415  (lazy, as CuPy)

        return cupyx.errstate(linalg="raise")

    def combine_from(self, ufunc, pieces, sources, device: int, copies: int, dtype):
        """`combine` of `pieces` lying on the devices `sources`, on `device` (the current
        one): those of other devices moved there first (`move`)."""
        moved = [p if s == device else self.move(p, s, device) for p, s in zip(pieces, sources)]
        return self.combine(ufunc, moved, copies, dtype)

    def combine_to(self, ufunc, pieces, sources, targets: tuple, dtype) -> list:
        """`combine_from` on each target ``(device, copies)`` of `targets`: each device
        folds the pieces itself (its moves in, no second hop out), the devices at once."""
        out = []
        for device, copies in targets:
            with self.on(device):
                out.append(self.combine_from(ufunc, pieces, sources, device, copies, dtype))
        return out

    def combine(self, ufunc, pieces, copies: int, dtype):
        """`ufunc` folded left over `pieces` (arrays of one shape on the current device, at
        least one) as a new array of `dtype` holding `copies` copies of the result stacked
        on a new first axis.

        For one of CuPy's ufuncs and two pieces or more: one kernel, ``cupy.fuse`` of the
        fold (`_kernels.fold`, CuPy's own ufunc per step, so values are those of the
        unfused calls), reading every piece once and writing its result (one allocation);
        the first piece is broadcast over the copies. Otherwise (one piece, or a combining
        function that is no ufunc, as complex PROD's): one call per piece after the first.
        """
        cupy = self._cupy
        if len(pieces) < 2 or not isinstance(ufunc, type(cupy.add)):
            return _kernels.combine_copies(cupy, ufunc, pieces, copies, dtype)
        fused = self._folds.get(ufunc)
        if fused is None:
            name = f"mdarray_fold_{ufunc.__name__}"
            fused = cupy.fuse(kernel_name=name)(_kernels.fold(ufunc))
            self._folds[ufunc] = fused
        shape = (copies, *pieces[0].shape)
        out = fused(cupy.broadcast_to(pieces[0], shape), *pieces[1:])
        return out if out.dtype == dtype else out.astype(dtype)

    def assign(self, out, index: tuple, value) -> None:
        """``out[index] = value`` for an index of slices or int arrays per axis."""
        scalar = isinstance(value, _SCALARS) or (type(value) is np.ndarray and not value.ndim)
        if scalar and _regions.is_basic(index):  # a host scalar (CuPy's 0-d arrays: below)
            key = (*index, ...)
            if plain_fill(out.dtype, value):
                out[key] = value  # one CuPy call, no view made first
            else:
                write_scalar(out[key], value)
        elif not copy_rows(self._cupy, out, index, value):
            _kernels.assign(self._cupy, out, index, value)


_PYTHON_SCALARS = (bool, int, float, complex)
_SCALARS = (*_PYTHON_SCALARS, np.generic)


def _fused(backend: CudaBackend, fn, kernel_name):
    """The kernel `CudaBackend.fused_kernel` gives for `fn`."""
    cupy = backend._cupy
    # cupy.fuse(f, kernel_name=...) would return a decorator: the name goes first. CuPy
    # names the kernel after the function, which must then be a C identifier.
    name = kernel_name or re.sub(r"\W", "_", getattr(fn, "__name__", "fused"))
    name = name if name.isidentifier() else f"fused_{name}"
    fused = cupy.fuse(kernel_name=name)(
        _kernels.with_kernels(fn, lambda ufunc: getattr(cupy, ufunc.__name__))
    )
    eager = _kernels.with_kernels(fn, backend.ufunc_kernel)
    own = Chain(cupy, fn, name) if OWN_KERNELS else None

    def kernel(*args):
        # CuPy's fuse types a Python scalar argument by its value, so a ufunc of Python
        # scalars alone (``np.sin(2.5)``) runs in float16 where NumPy gives float64: such
        # calls, like those of a ufunc with fixed special values, run op by op.
        if any(type(a) in _PYTHON_SCALARS for a in args) or _special_values.calls_fixed(fn, args):
            return eager(*args)
        if own is not None:  # mdarray's generated kernel where the chain qualifies
            got = own(*args)
            if got is not None:
                return got
        return fused(*args)

    return kernel


# CuPy reductions by the name of the ufunc they reduce with (CuPy's ufuncs may lack
# ``reduce``).
# Dtypes whose sums and products CuPy runs in the dtype itself, as ``dtype=`` would.
_OWN_ACCUMULATOR = frozenset("fdFDlLqQ")
_ACCUMULATING = frozenset({"sum", "prod"})
_REDUCERS = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "max",
    "minimum": "min",
    "logical_and": "all",
    "logical_or": "any",
}


def _shaped(a, shape):
    """`a` in `shape` (-1: flat), made by a view only where its shape differs (a view is
    a library call)."""
    if a.shape == shape or (shape == -1 and a.ndim == 1):
        return a
    return a.reshape(shape)
