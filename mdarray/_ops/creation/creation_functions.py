"""Creating DistArrays: `distributed_array` and the array API creation functions."""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from mdarray._array.array import DistArray, wrap
from mdarray._array.calls import per_process
from mdarray._backends.backend import (
    Backend,
    DeviceSet,
    backend as default_backend_object,
    backend_for,
)
from mdarray._core import regions as _regions
from mdarray._core.decided import bound, decides
from mdarray._core.modes import REPLICA, Mode, as_mode
from mdarray._core.registry import implements
from mdarray._layouts.layout import (
    Device,
    IndexMap,
    Layout,
    ShapeLike,
    layout_for_device,
    shape_tuple,
)
from mdarray._movement import redistribute as _redistribute
from mdarray._ops.shape.manipulation_functions import broadcast_to, reshape
from mdarray._runtime.config import mark_explicit
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import all_here

from .ways_in import as_layout, scatter


@per_process("array", when="src")
def distributed_array(
    array: Any, index_map: IndexMap | Layout, mode: Mode | str = REPLICA, *, src: int | None = None
) -> DistArray:
    """A DistArray holding `array`, split as `index_map` says, in `mode`.

    Parameters
    ----------
    array : array_like or DistArray
        NumPy or CuPy array, nested lists, a scalar, or a DistArray (resharded).
    index_map : dict or Layout
        ``{device: [index, ...]}`` (a bare index means one chunk), or a Layout.
    mode : Mode or str
        In a partial mode (SUM, PROD, MAX, MIN) each element's value is held by one
        chunk and the other chunks holding it hold the mode's identity.
    src : int, optional
        In an SPMD run (`mdarray.distributed`): without `src` every process passes the
        same `array` and keeps its own chunks' parts of it. With ``src=r`` only process
        ``r`` has the data (the others pass anything, None say; it is not read): its
        shape and dtype are broadcast, then it sends each process the parts of that
        process's chunks, in one grouped exchange. Collective. In a single-process run
        only ``src=0`` is valid.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(6).reshape(2, 3), {0: (0,), 1: (1,)})
    >>> x.all_chunks()[1][0]
    array([[3, 4, 5]])
    """
    mode = as_mode(mode)
    if src is not None:
        return scatter(array, index_map, mode, src)
    if isinstance(array, DistArray):
        return array.reshard(as_layout(array.shape, index_map)).change_mode(mode)
    backend = default_backend_object()
    if not backend.is_native(array):
        array = np.asarray(array)
    layout = as_layout(array.shape, index_map)
    mode.check_dtype(array.dtype)
    storage = Chunks.from_host(array, layout, backend)
    if mode.is_partial and not mode.idempotent:
        # The chunks are fresh copies, so the identities may be written into them.
        _redistribute.fill_shadowed(storage, mode.identity(array.dtype), in_place=True)
    return wrap(storage, mode)


def full(
    shape: ShapeLike, fill_value: Any, *, dtype: DTypeLike | None = None, device: Device = None
) -> DistArray:
    """A new array of `shape` filled with `fill_value`, laid out as `device` says.

    >>> import mdarray
    >>> mdarray.full((2, 2), 7, device=0).get()
    array([[7, 7],
           [7, 7]])
    """
    if isinstance(fill_value, DistArray):
        fill_value = fill_value.item()
    dtype = np.asarray(fill_value).dtype if dtype is None else np.dtype(dtype)
    backend = backend_for(device)
    shape = shape_tuple(shape)
    layout = layout_for_device(shape, device, backend)
    if np.ndim(fill_value):
        # An array fill broadcasts to the whole shape, as NumPy's does (NumPy's error if
        # it cannot); each chunk takes its own part of it.
        fill = np.empty(shape, dtype)
        np.copyto(fill, fill_value, casting="unsafe")
        return wrap(Chunks.from_host(fill, layout, backend))
    return wrap(Chunks.full(layout, fill_value, dtype, backend))


def zeros(shape: ShapeLike, *, dtype: DTypeLike | None = None, device: Device = None) -> DistArray:
    """A new array of zeros (float64 by default).

    >>> import mdarray
    >>> mdarray.zeros(3).get()
    array([0., 0., 0.])
    """
    return full(shape, 0, dtype=np.float64 if dtype is None else dtype, device=device)


def ones(shape: ShapeLike, *, dtype: DTypeLike | None = None, device: Device = None) -> DistArray:
    """A new array of ones (float64 by default).

    >>> import mdarray
    >>> mdarray.ones(2, dtype="int32").get()
    array([1, 1], dtype=int32)
    """
    return full(shape, 1, dtype=np.float64 if dtype is None else dtype, device=device)


def empty(shape: ShapeLike, *, dtype: DTypeLike | None = None, device: Device = None) -> DistArray:
    """A new array with unspecified values (float64 by default).

    >>> import mdarray
    >>> mdarray.empty((2, 3)).shape
    (2, 3)
    """
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    backend = backend_for(device)
    layout = layout_for_device(shape_tuple(shape), device, backend)
    return wrap(Chunks.empty(layout, dtype, backend))


# Array API creation functions ---------------------------------------------------------
# Each computes its chunks on their devices from the chunk's box; no full array is ever
# built on the host.


def _per_chunk(layout: Layout, backend: Backend, make, dtype) -> DistArray:
    """A REPLICA DistArray whose chunk with box `box` is ``make(box)``, on its device; in
    shared memory written into chunks made together, which one NumPy array views whole
    (``np.asarray``, DLPack), as arrays from the host are."""
    if backend.shared_memory and all_here():
        out = Chunks.empty(layout, dtype, backend)
        for buffer, box in zip(out.buffers, layout.boxes):
            buffer[...] = make(box)
        return wrap(out)
    return wrap(Chunks.generate(layout, backend, lambda k: make(layout.boxes[k]), dtype))


_KINDS = {"O": "Python objects", "S": "bytes", "U": "strings"}


def asarray(
    obj: Any,
    /,
    *,
    dtype: DTypeLike | None = None,
    device: Device = None,
    copy: bool | None = None,
) -> DistArray:
    """`obj` (DistArray, NumPy or CuPy array, nested lists, scalar) as a DistArray.

    A DistArray is returned as it is unless `dtype`, `device` or ``copy=True`` ask for a
    change; ``copy=False`` raises ValueError where a copy would be needed. Python data
    that NumPy would hold as strings, bytes or objects raises TypeError (the array API's
    data types, the same on every backend) unless `dtype` asks for one; a NumPy array
    keeps its dtype.

    >>> import mdarray
    >>> mdarray.asarray([[1, 2], [3, 4]], device=mdarray.DeviceSet([0, 1])).index_map[1]
    [(slice(1, 2, 1), slice(0, 2, 1))]
    """
    if isinstance(obj, DistArray):
        return _distarray_as(obj, dtype, device, copy)
    if copy is False:
        raise ValueError(
            "asarray: copy=False, but creating a DistArray from a non-DistArray copies the data"
        )
    backend = backend_for(device)
    if backend.is_native(obj):
        array = obj if dtype is None else obj.astype(dtype)
    else:
        array = np.asarray(obj, dtype=dtype)
        if dtype is None and array.dtype.kind in "OSU":
            raise TypeError(
                f"Unsupported data in asarray: a {type(obj).__name__} of "
                f"{_KINDS[array.dtype.kind]}; the array API's data types are numbers and bools "
                "(CuPy's too): pass a NumPy array (the cpu backend holds every NumPy dtype) "
                "or dtype= to hold them"
            )
    return distributed_array(array, layout_for_device(array.shape, device, backend))


def from_dlpack(x: Any, /, *, device: Device = None, copy: bool | None = None) -> DistArray:
    """A DistArray holding the data of `x`, any object exporting DLPack (a NumPy, CuPy or
    PyTorch array, a DistArray of one chunk), laid out as `device` says.

    The data is copied into the chunks (a DistArray never shares memory with a foreign
    array), so ``copy=False`` raises ValueError, as `asarray` does; a DistArray is
    returned as `asarray` returns it.

    >>> import mdarray, numpy as np
    >>> mdarray.from_dlpack(np.arange(3.0)).get()
    array([0., 1., 2.])
    """
    if isinstance(x, DistArray):
        return asarray(x, device=device, copy=copy)
    if copy is False:
        raise ValueError("from_dlpack: copy=False, but a DistArray copies a foreign array's data")
    backend = backend_for(device)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack needs an object with __dlpack__, got {type(x).__name__}")
    if x.__dlpack_device__()[0] == 1:  # kDLCPU: NumPy reads it, whatever the backend
        return asarray(np.from_dlpack(x), device=device)
    return asarray(backend.xp.from_dlpack(x), device=device)


def _distarray_as(x: DistArray, dtype, device, copy) -> DistArray:
    copied = False
    if dtype is not None and np.dtype(dtype) != x.dtype:
        if copy is False:
            raise ValueError(f"asarray: copy=False, but casting {x.dtype} to {dtype} copies")
        x, copied = x.astype(dtype), True
    if device is not None and not (isinstance(device, DeviceSet) and device == x.device):
        # (x's own device group: x is on it whatever its layout, so nothing moves)
        layout = layout_for_device(x.shape, device, x.storage.backend)
        if layout == x.layout and x.device != DeviceSet(layout.devices, x.backend):
            x = x.reshard(layout)  # the same buffers in the group `device` names
        elif layout != x.layout:
            if copy is False:
                raise ValueError("asarray: copy=False, but moving to the requested device copies")
            x, copied = x.reshard(layout), True
    if copy and not copied:
        x = x.copy()
    return x


def arange(
    start: float,
    /,
    stop: float | None = None,
    step: float = 1,
    *,
    dtype: DTypeLike | None = None,
    device: Device = None,
) -> DistArray:
    """Evenly spaced values in ``[start, stop)``, each chunk computed on its device.

    >>> import mdarray
    >>> mdarray.arange(1, 10, 3, device=mdarray.DeviceSet([0, 1])).get()
    array([1, 4, 7])
    """
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ZeroDivisionError("arange: step must not be zero")
    dtype = np.result_type(start, stop, step) if dtype is None else np.dtype(dtype)
    if all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        n = int(max(0, -((start - stop) // step)))
    else:
        n = max(0, math.ceil((stop - start) / step))
    backend = backend_for(device)
    layout = layout_for_device((n,), device, backend)
    xp = backend.xp
    if dtype.kind in "iub":
        return _per_chunk(
            layout, backend, lambda box: start + step * xp.arange(*_ends(box[0])), dtype
        )
    # Floats as NumPy fills them: the first value plus i times the first difference.
    first = np.array(start, dtype=dtype)[()]
    delta = np.array(start + step, dtype=dtype)[()] - first
    return _per_chunk(
        layout,
        backend,
        lambda box: first + xp.arange(*_ends(box[0])).astype(dtype) * delta,
        dtype,
    )


def _ends(r: range) -> tuple[int, int, int]:
    return r.start, r.stop, r.step


def linspace(
    start: complex,
    stop: complex,
    /,
    num: int,
    *,
    dtype: DTypeLike | None = None,
    device: Device = None,
    endpoint: bool = True,
) -> DistArray:
    """`num` evenly spaced values from `start` to `stop`, computed as NumPy does.

    >>> import mdarray
    >>> mdarray.linspace(0, 1, 5, device=mdarray.DeviceSet([0, 1])).get()
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = num - 1 if endpoint else num
    inexact = np.result_type(start, stop, 1.0)
    dtype = inexact if dtype is None else np.dtype(dtype)
    delta = np.subtract(stop, start, dtype=inexact)
    step = delta / div if div > 0 else None
    backend = backend_for(device)
    layout = layout_for_device((num,), device, backend)
    xp = backend.xp

    def make(box):
        y = xp.arange(*_ends(box[0])).astype(inexact)
        if step is None:
            y = y * delta
        elif step == 0:
            y = y / div * delta
        else:
            y = y * step
        y += start
        if endpoint and num > 1 and len(box[0]) and box[0][-1] == num - 1:
            y[-1] = stop
        if dtype.kind in "iu":
            y = xp.floor(y)
        return y

    return _per_chunk(layout, backend, make, dtype)


def eye(
    n_rows: int,
    n_cols: int | None = None,
    /,
    *,
    k: int = 0,
    dtype: DTypeLike | None = None,
    device: Device = None,
) -> DistArray:
    """A 2-D array with ones on the `k`-th diagonal, each chunk computed on its device.

    >>> import mdarray
    >>> mdarray.eye(2, 3, k=1, dtype=mdarray.int8).get()
    array([[0, 1, 0],
           [0, 0, 1]], dtype=int8)
    """
    n_cols = n_rows if n_cols is None else n_cols
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    backend = backend_for(device)
    layout = layout_for_device((n_rows, n_cols), device, backend)
    xp = backend.xp

    def make(box):
        rows, cols = (xp.arange(*_ends(r)) for r in box)
        return rows[:, None] + k == cols[None, :]

    return _per_chunk(layout, backend, make, dtype)


def _like_layout(x, shape, device) -> Layout:
    """The layout of a ``*_like`` result: x's own unless `shape` or `device` differ."""
    shape = x.shape if shape is None else shape_tuple(shape)
    if device is None:
        return x.layout if shape == x.shape else Layout.block(shape, devices=x.devices)
    return layout_for_device(shape, device, x.storage.backend)


@implements(np.full_like, spmd=True)
def full_like(
    x: DistArray,
    /,
    fill_value: Any,
    dtype: DTypeLike | None = None,
    order: str = "K",
    subok: bool = True,
    shape: ShapeLike | None = None,
    *,
    device: Device = None,
) -> DistArray:
    """An array like `x` (same layout by default) filled with `fill_value`.

    >>> import mdarray
    >>> mdarray.full_like(mdarray.zeros(3, device=1), 2.5).get(), mdarray.full_like(mdarray.zeros(3, device=1), 2.5).devices
    (array([2.5, 2.5, 2.5]), (1,))
    """
    dtype = x.dtype if dtype is None else np.dtype(dtype)
    layout = _like_layout(x, shape, device)
    value = np.array(fill_value.item() if isinstance(fill_value, DistArray) else fill_value)
    return wrap(Chunks.full(layout, value.astype(dtype)[()], dtype, x.storage.backend))


@implements(np.zeros_like, spmd=True)
def zeros_like(
    x: DistArray,
    /,
    dtype: DTypeLike | None = None,
    order: str = "K",
    subok: bool = True,
    shape: ShapeLike | None = None,
    *,
    device: Device = None,
) -> DistArray:
    """Zeros like `x` (same layout by default).

    >>> import mdarray
    >>> mdarray.zeros_like(mdarray.ones(2)).get()
    array([0., 0.])
    """
    return full_like(x, 0, dtype=dtype, device=device, shape=shape)


@implements(np.ones_like, spmd=True)
def ones_like(
    x: DistArray,
    /,
    dtype: DTypeLike | None = None,
    order: str = "K",
    subok: bool = True,
    shape: ShapeLike | None = None,
    *,
    device: Device = None,
) -> DistArray:
    """Ones like `x` (same layout by default).

    >>> import mdarray
    >>> mdarray.ones_like(mdarray.zeros(2, dtype="int8")).get()
    array([1, 1], dtype=int8)
    """
    return full_like(x, 1, dtype=dtype, device=device, shape=shape)


@implements(np.empty_like, spmd=True)
def empty_like(
    x: DistArray,
    /,
    dtype: DTypeLike | None = None,
    order: str = "K",
    subok: bool = True,
    shape: ShapeLike | None = None,
    *,
    device: Device = None,
) -> DistArray:
    """An uninitialized array like `x` (same layout by default).

    >>> import mdarray
    >>> mdarray.empty_like(mdarray.zeros((2, 3))).shape
    (2, 3)
    """
    dtype = x.dtype if dtype is None else np.dtype(dtype)
    layout = _like_layout(x, shape, device)
    return wrap(Chunks.empty(layout, dtype, x.storage.backend))


def _triangle(x, k, keep) -> DistArray:
    if x.ndim < 2:
        raise ValueError("tril/triu need an array of at least 2 dimensions")
    backend = x.storage.backend
    xp = backend.xp
    layout = x.layout
    zero = xp.zeros((), dtype=x.dtype)
    # Zeroing every copy makes an element's value zero in SUM (zero is its identity), MAX
    # and MIN (idempotent); in PROD the copies that the owner shadows hold the identity.
    identity = x.mode.identity(x.dtype) if x.mode.name == "prod" else None
    buffers = x.storage.buffers

    def make(j):
        rows, cols = (xp.arange(*_ends(r)) for r in layout.boxes[j][-2:])
        mask = xp.broadcast_to(keep(cols[None, :] - rows[:, None], k), buffers[j].shape)
        out = xp.where(mask, buffers[j], zero)
        for index in layout.shadowed[j] if identity is not None else ():
            kept = _regions.apply_index(mask, index, xp)
            backend.assign(
                out, index, xp.where(kept, _regions.apply_index(out, index, xp), identity)
            )
        return out

    return wrap(Chunks.generate(layout, backend, make, x.dtype), x.mode)


@implements(np.tril, spmd=True)
def tril(x: DistArray, /, k: int = 0) -> DistArray:
    """`x` with the elements above the `k`-th diagonal zeroed, chunk by chunk.

    >>> import mdarray
    >>> mdarray.tril(mdarray.ones((2, 2))).get()
    array([[1., 0.],
           [1., 1.]])
    """
    return _triangle(x, k, operator.le)


@implements(np.triu, spmd=True)
def triu(x: DistArray, /, k: int = 0) -> DistArray:
    """`x` with the elements below the `k`-th diagonal zeroed, chunk by chunk.

    >>> import mdarray
    >>> mdarray.triu(mdarray.ones((2, 2))).get()
    array([[1., 1.],
           [0., 1.]])
    """
    return _triangle(x, k, operator.ge)


@implements(np.meshgrid, spmd=True)
def meshgrid(
    *arrays: Any, indexing: str = "xy", copy: bool = True, sparse: bool = False
) -> list[DistArray]:
    """Coordinate arrays from 1-D arrays: each output keeps its input's split along its
    own axis and is whole along the others.

    >>> import mdarray
    >>> [g.shape for g in mdarray.meshgrid(mdarray.arange(3), mdarray.arange(2))]
    [(2, 3), (2, 3)]
    """
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    vectors = [a if isinstance(a, DistArray) else asarray(a) for a in arrays]
    shape = [a.size for a in vectors]
    if indexing == "xy" and len(vectors) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(vectors):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(vectors) > 1 else i
        grid = reshape(a, tuple(-1 if d == axis else 1 for d in range(len(vectors))))
        if not sparse:
            grid = broadcast_to(grid, tuple(shape))
        out.append(grid.copy() if copy else grid)
    return out


def _like_decider(impl, fill):
    """The decider (`mdarray._core.decided`) of a ``*_like`` function `impl`: without
    ``device=``, and for `full_like` with a Python scalar fill (the key holds its value),
    the runner makes its chunks in the decided layout and dtype at once. `fill` is the
    value (None: `empty_like`; ``"fill_value"``: `full_like`'s argument)."""

    def decide(args, kwargs):
        given = bound(impl, args, kwargs)
        if given is None or type(given["x"]) is not DistArray or given["device"] is not None:
            return None
        x = given["x"]
        value = given.get("fill_value") if fill == "fill_value" else fill
        if fill is not None and type(value) not in (bool, int, float):
            return None
        dtype = x.dtype if given["dtype"] is None else np.dtype(given["dtype"])
        layout = _like_layout(x, given["shape"], None)
        backend = x.storage.backend
        if fill is None:
            return lambda args, kwargs: wrap(Chunks.empty(layout, dtype, backend))
        value = np.array(value).astype(dtype)[()]
        return lambda args, kwargs: wrap(Chunks.full(layout, value, dtype, backend))

    return decide


for _impl, _func, _fill in (
    (zeros_like, np.zeros_like, 0),
    (ones_like, np.ones_like, 1),
    (empty_like, np.empty_like, None),
    (full_like, np.full_like, "fill_value"),
):
    decides(_impl, _func)(_like_decider(_impl, _fill))


# Making an array where the user says is a move the user asks for (`_config.mark_explicit`).
mark_explicit(distributed_array, asarray, from_dlpack)
