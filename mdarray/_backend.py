"""Backends: where chunks live, how work on a device is ordered, and how bytes move.

Two backends share one interface:

- ``cpu``: NumPy chunks on ``MDARRAY_CPU_DEVICES`` virtual devices (default 4). Work
  completes at once; the stream and event calls keep CUDA's shape so the code above this
  module is the same for both.
- ``cuda``: CuPy chunks on GPU ids. Each device has one stream and all work for a chunk
  is issued on its device's stream, so work on one device is ordered by the stream. A
  chunk's ready event is recorded on its device's stream when another device needs it
  (a copy waits for the event), which orders cross-device work without a host
  synchronization.

This is the only module that imports CuPy, lazily, so importing mdarray works without
CuPy or without a GPU.
"""

from __future__ import annotations

import contextlib
import os
from functools import cache

import numpy as np

from . import _debug
from ._staging import StagingRing, row_copies

HOST = "host"


class CpuBackend:
    """Virtual CPU devices holding NumPy chunks."""

    name = "cpu"
    xp = np

    def __init__(self, n_devices: int) -> None:
        if n_devices < 1:
            raise ValueError(f"MDARRAY_CPU_DEVICES must be at least 1, got {n_devices}")
        self.device_ids = tuple(range(n_devices))

    def __repr__(self) -> str:
        return f"<mdarray cpu backend, devices {list(self.device_ids)}>"

    def on(self, device: int):
        """Context in which work for `device` is issued (nothing to set on the CPU)."""
        return contextlib.nullcontext()

    def is_native(self, obj) -> bool:
        return isinstance(obj, np.ndarray)

    def device_of(self, array) -> int | None:
        """The device an array of this backend lives on, or None if it is not one."""
        return None

    def empty(self, shape, dtype, device: int):
        return np.empty(shape, dtype)

    def full(self, shape, value, dtype, device: int):
        return np.full(shape, value, dtype)

    def from_host(self, host_array: np.ndarray, device: int, out=None):
        """A chunk array on `device` holding a copy of `host_array` (written into `out`,
        a contiguous array of its shape on `device`, when given)."""
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
        _debug.record_transfer(src_device, dst_device, array.nbytes)
        return np.array(array, copy=True)

    def to_host_into(self, host_out: np.ndarray, array, device: int) -> None:
        _debug.record_transfer(device, HOST, array.nbytes)
        host_out[...] = array

    def host_empty(self, shape, dtype) -> np.ndarray:
        return np.empty(shape, dtype)

    def synchronize(self, devices=None) -> None:
        pass


class CudaBackend:
    """CUDA GPUs holding CuPy chunks, one stream per device."""

    name = "cuda"

    def __init__(self) -> None:
        import cupy

        self.xp = cupy
        self._cupy = cupy
        self.device_ids = tuple(range(cupy.cuda.runtime.getDeviceCount()))
        self._streams: dict[int, object] = {}
        self._contexts: dict[int, object] = {}
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
        self._ring = None

    def __repr__(self) -> str:
        return f"<mdarray cuda backend, devices {list(self.device_ids)}>"

    def stream(self, device: int):
        stream = self._streams.get(device)
        if stream is None:
            if device not in self.device_ids:
                raise ValueError(
                    f"device {device} is not a device of the cuda backend "
                    f"(devices {list(self.device_ids)})"
                )
            with self._cupy.cuda.Device(device):
                # A blocking stream: it stays ordered with the legacy default stream that
                # users' own CuPy code runs on, so arrays handed in need no extra events.
                stream = self._cupy.cuda.Stream(non_blocking=False)
            self._streams[device] = stream
        return stream

    def on(self, device: int):
        """Context issuing work on `device`'s stream, with `device` current."""
        context = self._contexts.get(device)
        if context is None:
            if len(self.device_ids) == 1:
                # One GPU is always the current device: entering the stream suffices and
                # saves a device switch per chunk (about 1.5 us of a 4 us enter/exit).
                context = self.stream(device)
            else:
                context = _DeviceStream(self._cupy.cuda.Device(device), self.stream(device))
            self._contexts[device] = context
        return context

    def is_native(self, obj) -> bool:
        return isinstance(obj, self._cupy.ndarray)

    def device_of(self, array) -> int | None:
        if isinstance(array, self._cupy.ndarray):
            return array.device.id
        return None

    def empty(self, shape, dtype, device: int):
        with self.on(device):
            return self._cupy.empty(shape, dtype)

    def full(self, shape, value, dtype, device: int):
        with self.on(device):
            return self._cupy.full(shape, value, dtype)

    def from_host(self, host_array: np.ndarray, device: int, out=None):
        """A chunk on `device` holding a copy of `host_array` (written into `out`, a
        contiguous array of its shape on `device`, when given).

        A large pageable array goes through the ring of pinned staging buffers: worker
        threads fill the buffers while earlier ones cross the link.
        """
        _debug.record_transfer(HOST, device, host_array.nbytes)
        host = np.asarray(host_array, order="C")  # ascontiguousarray would make 0-d 1-d
        stream = self.stream(device)
        with self.on(device):
            if out is None:
                out = self._cupy.empty(host.shape, host.dtype)
            if host.nbytes >= self.staged_min_bytes and not self._is_pinned(host):
                self._staging_ring().to_device(out.data.ptr, host, stream)
            else:
                out.set(host, stream=stream)
            return out

    def _foreign_stream(self, device: int):
        """The caller's current stream on `device` when it is not ordered with ours.

        The legacy default stream (ptr 0) needs no events: our streams are blocking, so
        CUDA orders them with it. Any other stream (a user's non-blocking stream, the
        per-thread default stream) is ordered with ours only through events.
        """
        with self._cupy.cuda.Device(device):
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
        src_device = array.device.id
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
        with self.on(src_device):
            src = _contiguous(array)
            ready = self.stream(src_device).record()
        dst_stream = self.stream(dst_device)
        with self.on(dst_device):
            out = cupy.empty(src.shape, src.dtype)
            dst_stream.wait_event(ready)
            if src.nbytes:
                cupy.cuda.runtime.memcpyPeerAsync(
                    out.data.ptr, dst_device, src.data.ptr, src_device, src.nbytes, dst_stream.ptr
                )
            done = dst_stream.record()
        self.stream(src_device).wait_event(done)
        _debug.record_transfer(src_device, dst_device, src.nbytes)
        return out

    def host_empty(self, shape, dtype) -> np.ndarray:
        """A host array to copy device data into.

        Small arrays come from CuPy's pinned pool: copies into page-locked memory run
        asynchronously at the link's speed, and the pool makes the next allocation of the
        same size cheap. Large ones are ordinary (pageable) arrays, filled through a few
        pinned staging buffers by `to_host_into`: pinning a fresh gigabyte costs more than
        copying it (0.5 s against 20 ms on an H200 host), and results the caller keeps
        would hold page-locked memory for as long as they live.
        """
        dtype = np.dtype(dtype)
        shape = tuple(shape)
        count = int(np.prod(shape, dtype=np.int64))
        if count * dtype.itemsize >= self.staged_min_bytes:
            return np.empty(shape, dtype)
        memory = self._cupy.cuda.alloc_pinned_memory(max(count * dtype.itemsize, 1))
        return np.ndarray(shape, dtype, buffer=memory)

    def to_host_into(self, host_out: np.ndarray, array, device: int) -> None:
        """Copy device `array` into `host_out` (same shape) asynchronously.

        The copy is complete after `synchronize(device)`. Into pinned memory: 2-D copies
        (one per run of rows of a strided `host_out`), or a pinned staging buffer written
        into place by `synchronize` where that takes too many copies. Into pageable
        memory: through the ring of pinned staging buffers, with the host-side copies (and
        the first touch of fresh pages) done by worker threads while the next piece
        crosses the link.
        """
        cupy = self._cupy
        _debug.record_transfer(device, HOST, array.nbytes)
        if not array.size:
            return
        stream = self.stream(device)
        with self.on(device):
            src = _contiguous(array)
            if not self._is_pinned(host_out):
                self._staging_ring().to_host(
                    host_out, src, stream, self._pending.setdefault(device, [])
                )
                return
            plan = row_copies(host_out)
            if plan is None:
                staging = self._cupy_pinned(src.shape, src.dtype)
                plan = row_copies(staging)
                self._pending.setdefault(device, []).append((host_out, staging))
                host_out = staging
            base = host_out.ctypes.data
            src_offset = 0
            for dst_offset, width, height, pitch in plan:
                cupy.cuda.runtime.memcpy2DAsync(
                    base + dst_offset,
                    pitch,
                    src.data.ptr + src_offset,
                    width,
                    width,
                    height,
                    cupy.cuda.runtime.memcpyDeviceToHost,
                    stream.ptr,
                )
                src_offset += width * height

    def _cupy_pinned(self, shape, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        memory = self._cupy.cuda.alloc_pinned_memory(max(nbytes, 1))
        return np.ndarray(tuple(shape), dtype, buffer=memory)

    def _is_pinned(self, host_array: np.ndarray) -> bool:
        runtime = self._cupy.cuda.runtime
        try:
            kind = runtime.pointerGetAttributes(host_array.ctypes.data).type
        except runtime.CUDARuntimeError:
            return False
        return kind == runtime.memoryTypeHost

    def _staging_ring(self):
        """The ring of pinned staging buffers, created on first use."""
        if self._ring is None:
            buffers = [
                self._cupy_pinned((self.staging_buffer_bytes,), np.uint8)
                for _ in range(self.staging_buffers)
            ]
            self._ring = StagingRing(self._cupy.cuda.runtime, buffers, self.host_copy_threads)
        return self._ring

    def synchronize(self, devices=None) -> None:
        """Wait for the work issued on `devices` (all by default), then finish staged
        host copies."""
        for device in self.device_ids if devices is None else devices:
            if device in self._streams:
                self._streams[device].synchronize()
            for item in self._pending.pop(device, ()):
                if isinstance(item, tuple):
                    host_out, staging = item
                    host_out[...] = staging
                else:
                    item.result()


def _contiguous(array):
    """`array` if C-contiguous, else a C-contiguous copy of the same shape (0-d too)."""
    return array if array.flags.c_contiguous else array.copy(order="C")


class _DeviceStream:
    """Enter a CUDA device and its stream together (one reusable object per device)."""

    __slots__ = ("device", "stream")

    def __init__(self, device, stream) -> None:
        self.device = device
        self.stream = stream

    def __enter__(self):
        self.device.__enter__()
        self.stream.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.stream.__exit__(*exc)
        self.device.__exit__(*exc)


@cache
def get_backend(name: str):
    """The backend called `name` ("cpu" or "cuda"), created once."""
    if name == "cpu":
        return CpuBackend(int(os.environ.get("MDARRAY_CPU_DEVICES", "4")))
    if name == "cuda":
        try:
            backend = CudaBackend()
        except ImportError as error:
            raise RuntimeError(
                "the cuda backend needs CuPy: pip install 'mdarray[cuda12]'"
            ) from error
        if not backend.device_ids:
            raise RuntimeError("the cuda backend found no CUDA device")
        return backend
    raise ValueError(f"unknown mdarray backend {name!r}; expected 'cpu' or 'cuda'")


@cache
def default_backend_name() -> str:
    name = os.environ.get("MDARRAY_BACKEND")
    if name:
        if name not in ("cpu", "cuda"):
            raise ValueError(f"MDARRAY_BACKEND must be 'cpu' or 'cuda', got {name!r}")
        return name
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            return "cuda"
    except Exception:  # no CuPy, no driver, or no device: the CPU serves
        pass
    return "cpu"


def default_backend() -> str:
    """The name of the default backend: ``"cuda"`` when CuPy sees a GPU, else ``"cpu"``.

    ``MDARRAY_BACKEND=cpu|cuda`` overrides the choice.

    >>> import mdarray
    >>> mdarray.default_backend() in ("cpu", "cuda")
    True
    """
    return default_backend_name()


def backend():
    """The default backend object."""
    return get_backend(default_backend_name())


def devices() -> tuple[int, ...]:
    """Device ids of the default backend.

    >>> import mdarray
    >>> len(mdarray.devices()) >= 1
    True
    """
    return backend().device_ids


class DeviceSet:
    """A set of devices of one backend: what ``x.device`` returns.

    Hashable and iterable over device ids. As ``device=`` of a creation function it means
    the default layout (blocks along axis 0) over these devices, whatever the shape.

    >>> import mdarray
    >>> ds = mdarray.DeviceSet([0, 1])
    >>> list(ds), ds.backend in ("cpu", "cuda")
    ([0, 1], True)
    """

    __slots__ = ("device_ids", "backend")

    def __init__(self, device_ids, backend: str | None = None) -> None:
        self.device_ids = tuple(int(d) for d in device_ids)
        self.backend = default_backend_name() if backend is None else backend
        if not self.device_ids:
            raise ValueError("a DeviceSet needs at least one device")

    def __iter__(self):
        return iter(self.device_ids)

    def __len__(self) -> int:
        return len(self.device_ids)

    def __contains__(self, device) -> bool:
        return device in self.device_ids

    def __eq__(self, other) -> bool:
        if not isinstance(other, DeviceSet):
            return NotImplemented
        return (self.device_ids, self.backend) == (other.device_ids, other.backend)

    def __hash__(self) -> int:
        return hash((self.device_ids, self.backend))

    def __repr__(self) -> str:
        return f"DeviceSet({list(self.device_ids)}, backend={self.backend!r})"
