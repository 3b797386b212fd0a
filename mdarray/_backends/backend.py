"""Backends: where chunks live, how work on a device is ordered, and how bytes move.

`Backend` is the contract the layers above code against; two classes implement it:
`CpuBackend` (NumPy chunks on virtual CPU devices, `_cpu_backend`) and `CudaBackend`
(CuPy chunks on GPUs, `_cuda_backend`, which imports CuPy lazily, so importing mdarray
works without CuPy or without a GPU). Code above this layer never asks which backend it
runs on: what differs is a method here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from functools import cache
from types import ModuleType
from typing import Any, Protocol, SupportsIndex, runtime_checkable

import numpy as np

from mdarray._backends.cpu.backend import CpuBackend
from mdarray._backends.cuda.backend import CudaBackend
from mdarray._core.debug import HOST

__all__ = ["HOST", "Backend", "CpuBackend", "CudaBackend", "DeviceSet"]


@runtime_checkable
class Backend(Protocol):
    """What a backend provides: devices, allocation, movement, ordering and kernels.

    Devices are ints. Every method that makes or reads an array on a device issues its
    work in that device's order (``with backend.on(device)``); nothing synchronizes the
    host but `synchronize`.
    """

    name: str
    #: The array module of the chunks (NumPy or CuPy), for generic array functions.
    xp: ModuleType
    device_ids: tuple[int, ...]
    #: Elements of a block that a local factorization takes whole; a larger one is cut
    #: into row blocks of this size, factored one by one (TSQR on one device), because a
    #: block that stays in cache factors faster. 0: never cut.
    factor_block_elements: int
    #: The NCCL communicators of an SPMD run on GPUs (`_transport.NcclLinks`), or None.
    nccl: Any
    #: A call whose largest array has at least this many bytes runs its devices' kernels
    #: through `each` (the cpu backend's device threads); smaller ones loop in the caller.
    parallel_bytes: int
    #: Whether the devices share one memory (the cpu backend's virtual devices): a value
    #: fetched to one device for reading serves the others, read where it lies.
    shared_memory: bool
    #: Whether an array may refuse writes (NumPy's ``flags.writeable``; CuPy's arrays
    #: have no such flag), so a write checks its target's chunks first.
    read_only_arrays: bool
    #: Whether work can be recorded once and launched again (`recording`: CUDA graphs).
    records: bool
    #: Whether `may_fail` depends on the call's moment (NumPy's error state and warning
    #: filters), so what it says is asked per call, not decided once.
    errors_per_call: bool

    @property
    def matmul(self) -> Callable[..., Any]:
        """The chunks' matrix product, ``matmul(a, b, **options)`` as NumPy's (on CUDA
        one that a recording can hold, too)."""

    # Devices and ordering
    def join(self, device_ids: tuple, local: tuple) -> None: ...
    def leave(self) -> None: ...
    def on(self, device: int) -> AbstractContextManager[Any]: ...
    def synchronize(self, devices=None) -> None: ...
    def each(self, fn, rows: list, result_dtype=None, elementwise: bool = False) -> list: ...
    def export_to_current(self, device: int) -> None: ...
    def is_native(self, obj) -> bool: ...
    def device_of(self, array) -> int | None: ...

    # Allocation and copies
    def empty(self, shape, dtype, device: int) -> Any: ...
    def empty_slabs(self, totals: Sequence[int], dtype, devices: Sequence[int]) -> list: ...
    def full(self, shape, value, dtype, device: int) -> Any: ...
    def copy(self, array, device: int) -> Any: ...
    def span(
        self, buffers: list, starts: list | None = None, shape: tuple | None = None
    ) -> Any: ...
    def pointer(self, array) -> int: ...
    def host_empty(self, shape, dtype) -> np.ndarray: ...

    # Movement (every call records its bytes with `_debug.record_transfer`)
    def from_host(self, host_array: np.ndarray, device: int, out=None) -> Any: ...
    def adopt(self, array, device: int, out=None) -> Any: ...
    def move(self, array, src_device: int, dst_device: int) -> Any: ...
    def move_into(self, out, key: tuple, array, src_device: int, dst_device: int) -> None: ...
    def to_host_into(self, host_out: np.ndarray, array, device: int) -> None: ...
    def to_host(self, array, device: int) -> np.ndarray: ...

    # Kernels
    def ufunc_kernel(self, ufunc) -> Any: ...
    def ufunc_kernel_for(self, kernel, nbytes: int, like=None) -> Any: ...
    def block_launch(self, kernel, like, out=None) -> Any: ...
    def fused_kernel(self, fn, kernel_name: str | None = None) -> Any: ...
    def recording(self, devices: tuple) -> Any: ...
    def may_fail(self, ufunc) -> bool: ...
    def writes_each(self, ufunc) -> bool: ...
    def write_each(self, kernel, calls: list) -> None: ...
    def call_masked(self, kernel, args, outs: tuple, mask, options) -> tuple: ...
    def call_into(self, kernel, args, out, options) -> None: ...
    def reduce(
        self, ufunc, chunk, axes: tuple, dtype, result_dtype, skip_nan: bool = False, shape=None
    ) -> Any: ...
    def accumulate(self, ufunc, chunk, axis: int, dtype) -> Any: ...
    def arg_pick(self, chunk, axis: int, largest: bool) -> Any: ...
    def sort_keys(self, values) -> Any: ...
    def assign(self, out, index: tuple, value) -> None: ...
    def convolve(self, a, v) -> Any: ...
    def linalg_errors(self) -> AbstractContextManager: ...
    def combine(self, ufunc, pieces, copies: int, dtype) -> Any: ...
    def combine_from(self, ufunc, pieces, sources, device: int, copies: int, dtype) -> Any: ...
    def combine_to(self, ufunc, pieces, sources, targets: tuple, dtype) -> list: ...

    # Seeing time and memory (`_profile`, `_memory_report`)
    def time_mark(self) -> Any: ...
    def time_elapsed(self, start, end) -> dict[int, float]: ...
    def pool_bytes(self, device: int) -> tuple[int, int] | None: ...
    def allocation_of(self, array) -> tuple[int, int]: ...


@cache
def get_backend(name: str) -> Backend:
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
        import cupy  # noqa: PLC0415  (lazy: mdarray works without CuPy)

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


def backend() -> Backend:
    """The default backend object."""
    return get_backend(default_backend_name())


def backend_for(device: Any) -> Backend:
    """The backend that ``device=`` names: a DeviceSet's own, else the default one."""
    if isinstance(device, DeviceSet):
        return get_backend(device.backend)
    return backend()


def devices() -> tuple[int, ...]:
    """Device ids of the default backend.

    >>> import mdarray
    >>> len(mdarray.devices()) >= 1
    True
    """
    return backend().device_ids


def synchronize(devices: Any = None) -> None:
    """Wait until the work queued on `devices` is done: a device id, an iterable of them,
    a DeviceSet (``x.device``), or None for every device of the default backend.

    mdarray queues work on each device in order and returns before it is done (on CUDA
    devices); a timing or a hand-over to code outside mdarray waits here first. Host
    copies that mdarray staged complete too. ``x.block_until_ready()`` waits for one
    array's devices.

    >>> import mdarray
    >>> mdarray.synchronize()
    >>> mdarray.synchronize(mdarray.devices()[0])
    """
    chosen = backend()
    if devices is None:
        chosen.synchronize()
        return
    if isinstance(devices, DeviceSet):
        if devices.backend != chosen.name:
            raise ValueError(
                f"synchronize: {devices!r} is of the {devices.backend} backend, not the "
                f"default {chosen.name} backend"
            )
        ids: tuple[int, ...] = devices.device_ids
    elif isinstance(devices, (int, np.integer)) and not isinstance(devices, (bool, np.bool_)):
        ids = (_device_id(devices),)
    elif isinstance(devices, (str, bytes)) or not isinstance(devices, Iterable):
        raise TypeError(
            "synchronize: devices must be a device id, an iterable of them, a DeviceSet or "
            f"None, got {devices!r} ({type(devices).__name__})"
        )
    else:
        ids = tuple(map(_device_id, devices))
    unknown = [d for d in ids if d not in chosen.device_ids]
    if unknown:
        raise ValueError(
            f"synchronize: device {unknown[0]} is not a device of the {chosen.name} backend "
            f"(its devices are {list(chosen.device_ids)})"
        )
    chosen.synchronize(ids)


_INT = frozenset({int})


def _device_id(device: Any) -> int:
    """A device id: an integer (a Python or NumPy int; not a bool, a float or a string,
    which would name a device by accident), not negative."""
    if isinstance(device, (bool, np.bool_)) or not isinstance(device, (int, np.integer)):
        raise TypeError(f"a device id is an int, got {device!r} ({type(device).__name__})")
    if device < 0:
        raise ValueError(f"device ids are non-negative, got {device}")
    return int(device)


class DeviceSet:
    """A set of devices of one backend: what ``x.device`` returns.

    Hashable and iterable over device ids. As ``device=`` of a creation function it means
    the default layout (blocks along axis 0) over these devices, whatever the shape.

    >>> import mdarray
    >>> ds = mdarray.DeviceSet([0, 1])
    >>> list(ds), ds.backend in ("cpu", "cuda")
    ([0, 1], True)
    >>> mdarray.DeviceSet([1]) == 1
    True
    """

    __slots__ = ("backend", "device_ids")

    def __init__(self, device_ids: Iterable[SupportsIndex], backend: str | None = None) -> None:
        ids: tuple[Any, ...] = tuple(device_ids)
        if not _INT.issuperset(map(type, ids)) or (ids and min(ids) < 0):
            ids = tuple(map(_device_id, ids))  # ids made by mdarray pass the test above
        self.device_ids: tuple[int, ...] = ids
        self.backend = default_backend_name() if backend is None else backend
        if not self.device_ids:
            raise ValueError("a DeviceSet needs at least one device")

    def __iter__(self) -> Iterator[int]:
        return iter(self.device_ids)

    def __len__(self) -> int:
        return len(self.device_ids)

    def __contains__(self, device: object) -> bool:
        return device in self.device_ids

    def __eq__(self, other: object) -> bool:
        # A device id names the set of that one device (``device=0`` gives arrays whose
        # ``.device == 0``, as the array API's clients check).
        if isinstance(other, int) and not isinstance(other, bool):
            return self.device_ids == (other,)
        if not isinstance(other, DeviceSet):
            return NotImplemented
        return (self.device_ids, self.backend) == (other.device_ids, other.backend)

    def __hash__(self) -> int:
        if len(self.device_ids) == 1:  # equal to its device id, so hashed as it
            return hash(self.device_ids[0])
        return hash((self.device_ids, self.backend))

    def __repr__(self) -> str:
        return f"DeviceSet({list(self.device_ids)}, backend={self.backend!r})"


def union_of(groups: list[DeviceSet]) -> DeviceSet:
    """The device group of operands of several groups: the one that holds every other
    (``x_on_1 + y`` and ``y + x_on_1`` are both in y's group), else their devices in
    ascending order, whatever the operands' order."""
    widest = max(groups, key=len)
    devices = set(widest.device_ids)
    if all(devices.issuperset(g.device_ids) for g in groups):
        return widest
    return DeviceSet(sorted(set().union(*(g.device_ids for g in groups))), widest.backend)
