"""Data types: the array API dtype names, `astype`, and the dtype queries NumPy asks.

`astype` keeps a partial mode only where the cast commutes with combining the copies for
every value (the one cast rule, `_mode_rules.keeps_mode`); otherwise the array is made
REPLICA first. The
queries (`np.shape`, `np.result_type`, ...) read the layout and dtype, never the data.
"""

from __future__ import annotations

import builtins
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import DTypeLike

from mdarray._array.array import DistArray, wrap
from mdarray._core.decided import bound, decides, reader
from mdarray._core.limits import native
from mdarray._core.mode_rules import keeps_mode
from mdarray._core.modes import REPLICA
from mdarray._core.registry import implements, implements_method, local
from mdarray._exec.chunkwise import Casting, cast, cast_slabs
from mdarray._layouts.layout import Device, Layout
from mdarray._storage.chunks import Chunks

bool = np.bool_  # the array API names the boolean dtype `bool`
int8 = np.int8
int16 = np.int16
int32 = np.int32
int64 = np.int64
uint8 = np.uint8
uint16 = np.uint16
uint32 = np.uint32
uint64 = np.uint64
float16 = np.float16  # not an array API dtype: NumPy code looks it up (SciPy)
float32 = np.float32
float64 = np.float64
complex64 = np.complex64
complex128 = np.complex128

DTYPES = {
    "bool": np.dtype(bool),
    "int8": np.dtype(int8),
    "int16": np.dtype(int16),
    "int32": np.dtype(int32),
    "int64": np.dtype(int64),
    "uint8": np.dtype(uint8),
    "uint16": np.dtype(uint16),
    "uint32": np.dtype(uint32),
    "uint64": np.dtype(uint64),
    "float32": np.dtype(float32),
    "float64": np.dtype(float64),
    "complex64": np.dtype(complex64),
    "complex128": np.dtype(complex128),
}


@implements(np.astype, spmd=True)
def astype(
    x: DistArray, dtype: DTypeLike, /, *, copy: builtins.bool = True, device: Device = None
) -> DistArray:
    """`x` cast to `dtype`, in the same layout (and mode where the cast rule allows).

    >>> import mdarray
    >>> x = mdarray.distributed_array([1.5, 2.5], {0: slice(0, 1), 1: slice(1, 2)})
    >>> mdarray.astype(x, mdarray.int32).get()
    array([1, 2], dtype=int32)
    """
    if not isinstance(x, DistArray):
        raise TypeError(f"astype: expected a DistArray, got {type(x).__name__}")
    target = np.dtype(dtype)
    out = x if target == x.dtype and not copy else wrap(*cast(x.storage, x.mode, target))
    return out if device is None else out.to_device(device)


@decides(astype, np.astype)
def _decide_astype(args, kwargs):
    """The runner of a cast that keeps the array's mode (`cast`'s commonest call): the
    packed slabs cast on their devices (`cast_slabs`), else each chunk."""
    given = bound(astype, args, kwargs)
    if given is None or type(given["x"]) is not DistArray or given["device"] is not None:
        return None
    x, target = given["x"], native(np.dtype(given["dtype"]))
    if x.dtype.kind not in "biufc" or target.kind not in "biufc":
        return None  # (strings sized by their values, objects: the whole way)
    if target == x.dtype and not given["copy"]:
        return None
    if not keeps_mode(x.mode, x.dtype, target):
        return None
    read, mode = reader(astype, args, kwargs, "x"), x.mode

    def runner(args, kwargs):
        storage = read(args, kwargs).storage
        out = cast_slabs(storage, target)
        if out is None:  # chunk by chunk (one process: every chunk is here)
            on, buffers = storage.backend.on, []
            for buffer, device in zip(storage.buffers, storage.layout.chunk_devices):
                with on(device):
                    buffers.append(buffer.astype(target))
            out = Chunks.made(storage.layout, buffers, storage.backend, target)
        return wrap(out, mode)

    return runner


@implements(np.copy, spmd=True)
def copy(a: DistArray, order: str = "K", subok: builtins.bool = False) -> DistArray:
    """A copy of `a` with the same layout and mode; each chunk is copied on its device."""
    return astype(a, a.dtype, copy=True)


def _dtype_of(x):
    return x.dtype if isinstance(x, DistArray) else x


@implements(np.result_type, spmd=True)
@local
def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype NumPy's promotion gives for arrays, dtypes and Python scalars.

    >>> import mdarray
    >>> mdarray.result_type(mdarray.int8, mdarray.float32)
    dtype('float32')
    """
    return np.result_type(*(_dtype_of(x) for x in arrays_and_dtypes))


@implements(np.can_cast, spmd=True)
@local
def can_cast(from_: Any, to: Any, /, casting: Casting = "safe") -> builtins.bool:
    """Whether `from_` (a dtype or array) can be cast to `to` under `casting`.

    >>> import mdarray
    >>> mdarray.can_cast(mdarray.int8, mdarray.float32), mdarray.can_cast(mdarray.float64, mdarray.int8)
    (True, False)
    """
    return builtins.bool(np.can_cast(_dtype_of(from_), to, casting))


class finfo_object(NamedTuple):
    """`finfo`'s result: the standard's fields, Python floats (NumPy's are NumPy scalars)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype[Any]


@local
def finfo(type: Any, /) -> finfo_object:  # `type`: the array API's parameter name
    """Machine limits of a floating dtype (or of an array's dtype); for a complex dtype,
    those of its real and imaginary parts.

    >>> import mdarray
    >>> mdarray.finfo(mdarray.float32).eps
    1.1920928955078125e-07
    """
    info = np.finfo(_dtype_of(type))
    return finfo_object(
        int(info.bits),
        float(info.eps),
        float(info.max),
        float(info.min),
        float(info.smallest_normal),
        info.dtype,
    )


@local
def iinfo(type: Any, /) -> np.iinfo[Any]:
    """Machine limits of an integer dtype (or of an array's dtype).

    >>> import mdarray
    >>> mdarray.iinfo(mdarray.int8).max
    127
    """
    return np.iinfo(_dtype_of(type))


@local
def isdtype(dtype: DTypeLike, kind: DTypeLike | str | tuple[DTypeLike | str, ...]) -> builtins.bool:
    """Whether `dtype` is of `kind` (a dtype, a kind name such as ``"integral"``, or a tuple).

    >>> import mdarray
    >>> mdarray.isdtype(mdarray.float32, "real floating")
    True
    """
    return builtins.bool(np.isdtype(np.dtype(dtype), kind))


@implements(np.shape, spmd=True)
@local
def shape(a) -> tuple[int, ...]:
    return a.shape


@implements(np.ndim, spmd=True)
@local
def ndim(a) -> int:
    return a.ndim


@implements(np.size, spmd=True)
@local
def size(a, axis=None) -> int:
    if axis is None:
        return a.size
    return a.shape[axis]


@implements(np.iscomplexobj, spmd=True)
@local
def iscomplexobj(x) -> builtins.bool:
    return x.dtype.kind == "c"


@implements(np.isrealobj, spmd=True)
@local
def isrealobj(x) -> builtins.bool:
    return x.dtype.kind != "c"


@implements_method("view")
def view(x: DistArray, dtype: Any = None, type: Any = None) -> DistArray:
    """``x.view(dtype)``: each chunk's bytes read as `dtype`, a view of `x` (writes through
    either reach the other), with NumPy's rules: a dtype of another size scales the last
    axis, which must be contiguous (each chunk's), and a 0-d array keeps its item size.
    Where the size changes, each chunk's part of the last axis must start and end on
    whole elements of the new dtype. A partial (SUM, ...) array whose chunks overlap is
    combined first (a copy's bytes mean nothing alone), so its view is of that combined
    copy and writes through it do not reach `x`; without overlaps each element's one copy
    is its value, viewed in place as a REPLICA array."""
    if type is not None or (isinstance(dtype, builtins.type) and issubclass(dtype, np.ndarray)):
        raise TypeError(
            "DistArray.view(type=...): a DistArray has no ndarray subclass to view as; "
            "np.asarray(x) or x.get() gives a NumPy array"
        )
    if dtype is None or np.dtype(dtype) == x.dtype:
        return x[...]
    new = np.dtype(dtype)
    old = x.dtype
    if x.mode is not REPLICA and x.layout.has_overlaps:
        x = x.change_mode(REPLICA)  # a copy's bytes mean nothing alone: the value's do
    layout = x.layout
    if new.itemsize != old.itemsize:
        if x.ndim == 0:
            raise ValueError(
                "Changing the dtype of a 0d array is only supported if the itemsize is unchanged"
            )
        layout = _rescaled_last_axis(layout, old.itemsize, new.itemsize, new)
    resized = new.itemsize != old.itemsize

    def reinterpreted(t: int, chunk: Any) -> Any:
        if resized and chunk.size and chunk.strides[-1] != old.itemsize:  # as NumPy's check
            raise ValueError(
                "To change to a dtype of a different size, the last axis must be contiguous"
            )
        return chunk.view(new)

    # Without overlaps each element has one copy, which is its value in any mode.
    return wrap(x.storage.view(layout, reinterpreted, dtype=new), REPLICA)


def _rescaled_last_axis(layout: Layout, old: int, new: int, dtype: np.dtype) -> Layout:
    """`layout` with every chunk's part of the last axis in items of `new` bytes instead
    of `old`; ValueError (NumPy's where the array's last axis does not divide) where a
    part does not start and end on whole new items or is strided."""
    if new < old and old % new:
        raise ValueError(
            "When changing to a smaller dtype, its size must be a divisor of the size of "
            "original dtype"
        )
    if layout.shape[-1] * old % new:
        raise ValueError(
            "When changing to a larger dtype, its size must be a divisor of the total size "
            "in bytes of the last axis of the array."
        )
    index_map: dict[int, list] = {}
    for device, index in layout.chunks:
        last = index[-1]
        length = len(range(last.start, last.stop, last.step))
        if (last.step != 1 and length > 1) or last.start * old % new or length * old % new:
            raise ValueError(
                f"view as {dtype}: a chunk holds items {last.start}..{last.stop} of the last "
                f"axis, which do not fall on whole {dtype} items; reshard x so that each "
                "chunk's part of the last axis does (or holds it whole) first"
            )
        start = last.start * old // new
        rescaled = slice(start, start + length * old // new, 1)
        index_map.setdefault(device, []).append((*index[:-1], rescaled))
    return Layout((*layout.shape[:-1], layout.shape[-1] * old // new), index_map)
