"""DistArray: one array whose chunks live on several devices."""

from __future__ import annotations

import operator

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from . import _redistribute
from ._backend import DeviceSet
from ._layout import Layout
from ._modes import Mode, as_mode


class DistArray(NDArrayOperatorsMixin):
    """An N-D array whose chunks live on several devices.

    A DistArray has a `layout` (which device holds which part), a `mode` (how overlapping
    copies combine into the value) and one contiguous array per chunk: CuPy arrays on
    CUDA devices or NumPy arrays on virtual CPU devices. It is a NumPy duck array: NumPy
    and CuPy functions and the Python operators accept it and return DistArrays. Make one
    with `distributed_array` or an array-API creation function.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(6.0), mdarray.Layout.block((6,), devices=[0, 1]))
    >>> x.shape, x.mode, x.devices
    ((6,), mdarray.REPLICA, (0, 1))
    """

    __slots__ = ("_layout", "_chunks", "_slabs", "_mode", "_dtype", "_backend", "__weakref__")
    __array_priority__ = 100

    def __init__(self, *args, **kwargs) -> None:
        raise TypeError("make a DistArray with mdarray.distributed_array or a creation function")

    @classmethod
    def _new(cls, layout: Layout, data, mode: Mode, dtype, backend) -> DistArray:
        """The one constructor: checks chunk count, shapes, dtypes and devices."""
        data = tuple(data)
        dtype = np.dtype(dtype)
        if len(data) != len(layout.chunks):
            raise ValueError(
                f"layout has {len(layout.chunks)} chunks but {len(data)} arrays were given"
            )
        _check_devices(layout, backend)
        for k, (array, shape, device) in enumerate(
            zip(data, layout.chunk_shapes, layout.chunk_devices)
        ):
            if tuple(array.shape) != shape:
                raise ValueError(
                    f"chunk {k} on device {device} has shape {array.shape}, its index needs {shape}"
                )
            if array.dtype != dtype:
                raise TypeError(
                    f"chunk {k} on device {device} has dtype {array.dtype}, the array's is {dtype}"
                )
            where = backend.device_of(array)
            if where is not None and where != device:
                raise ValueError(
                    f"chunk {k} is on device {where}, its index map puts it on device {device}"
                )
        mode.check_dtype(dtype)
        self = object.__new__(cls)
        self._layout = layout
        _hold(data)
        self._chunks = data
        self._slabs = None
        self._mode = mode
        self._dtype = dtype
        self._backend = backend
        return self

    @classmethod
    def _from_slabs(
        cls, layout: Layout, slabs, mode: Mode, dtype, backend, chunks=None, *, check=True
    ):
        """A packed DistArray: one flat slab per device of `layout` (`Layout.packing`),
        owned by this array alone; `chunks` are the slabs' views when already made.

        ``check=False`` is for slabs a kernel just made from checked operands of the same
        layout (the elementwise fast path, where the checks would cost a third of a call).
        """
        slabs = tuple(slabs)
        dtype = np.dtype(dtype)
        if check:
            _check_slabs(layout, slabs, dtype, backend)
        mode.check_dtype(dtype)
        self = object.__new__(cls)
        self._layout = layout
        self._slabs = slabs
        self._chunks = None
        if chunks is not None:
            self._chunks = tuple(chunks)
            _hold(self._chunks)
        self._mode = mode
        self._dtype = dtype
        self._backend = backend
        return self

    @property
    def _data(self) -> tuple:
        """The chunk arrays in layout order (views into the slabs of a packed array)."""
        chunks = self._chunks
        if chunks is None:
            chunks = self._chunks = unpack_slabs(self._layout, self._slabs, self._backend)
            _hold(chunks)
        return chunks

    def _own_slabs(self):
        """The slabs of a packed array, where no other DistArray holds its chunks (so
        they may be written in place); else None."""
        if self._slabs is None:
            return None
        if self._chunks is not None and any(_holders.get(id(c), 0) > 1 for c in self._chunks):
            return None
        return self._slabs

    def __del__(self) -> None:
        chunks = getattr(self, "_chunks", None)
        if chunks is not None and _release is not None:
            _release(chunks)

    def _set_data(self, data) -> None:
        """Replace this array's chunk buffers in place (``out=`` rebinding)."""
        data = tuple(data)
        _hold(data)
        if self._chunks is not None:
            _release(self._chunks)
        self._chunks = data
        self._slabs = None

    def _writable(self, chunks=None) -> tuple:
        """This array's chunk buffers, ready to be written in place.

        Unchanged chunks of a reshard or mode change share their buffer with the source
        array instead of copying it; a buffer held by another DistArray is copied here
        first (copy on write), so an in-place update never shows through another array.
        """
        data = list(self._data)
        copied = False
        for k in range(len(data)) if chunks is None else chunks:
            if _holders.get(id(data[k]), 0) > 1:
                with self._backend.on(self._layout.chunk_devices[k]):
                    data[k] = self._backend.xp.array(data[k], copy=True)
                copied = True
        if copied:
            self._set_data(data)
        return self._data

    def _with(self, *, layout=None, data=None, mode=None, dtype=None) -> DistArray:
        """A DistArray like this one with some parts replaced (validated)."""
        return DistArray._new(
            self._layout if layout is None else layout,
            self._data if data is None else data,
            self._mode if mode is None else mode,
            self._dtype if dtype is None else dtype,
            self._backend,
        )

    # Attributes ---------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return self._layout.shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self._layout.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def mode(self) -> Mode:
        """How overlapping copies combine: REPLICA or a partial SUM/PROD/MAX/MIN."""
        return self._mode

    @property
    def layout(self) -> Layout:
        return self._layout

    @property
    def index_map(self) -> dict:
        return self._layout.index_map

    @property
    def devices(self) -> tuple[int, ...]:
        """Device ids holding chunks, in order of first appearance."""
        return self._layout.devices

    @property
    def device(self) -> DeviceSet:
        """The devices holding this array's chunks, usable as ``device=`` in creation."""
        return DeviceSet(self._layout.devices, self._backend.name)

    @property
    def backend(self) -> str:
        return self._backend.name

    def all_chunks(self) -> dict:
        """``{device: [chunk array, ...]}``: the chunk arrays, in index-map order."""
        out: dict = {}
        for device, array in zip(self._layout.chunk_devices, self._data):
            out.setdefault(device, []).append(array)
        return out

    # Moving data --------------------------------------------------------------------

    def get(self) -> np.ndarray:
        """The value as a NumPy array on the host (partial results are combined).

        >>> import mdarray, numpy as np
        >>> x = mdarray.distributed_array([1, 2, 3], {0: slice(0, 2), 1: slice(1, 3)})
        >>> x.get()
        array([1, 2, 3])
        """
        return _redistribute.to_host(self)

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a DistArray cannot be viewed as a NumPy array without a copy")
        out = self.get()
        return out if dtype is None else out.astype(dtype, copy=False)

    def change_mode(self, mode) -> DistArray:
        """This array's value in `mode` (a Mode or its name), with the same layout.

        The result may share chunk buffers with this array where they need no change.

        >>> import mdarray, numpy as np
        >>> x = mdarray.distributed_array(np.ones(4), mdarray.Layout.replicated((4,), devices=[0, 1]))
        >>> [c.tolist() for c in x.change_mode("sum").all_chunks()[1]]
        [[0.0, 0.0, 0.0, 0.0]]
        """
        return _redistribute.change_mode(self, as_mode(mode))

    def reshard(self, index_map) -> DistArray:
        """This array with a new layout (an index map or a Layout), in the same mode.

        The result may share chunk buffers with this array where a chunk keeps its place.

        >>> import mdarray, numpy as np
        >>> x = mdarray.distributed_array(np.arange(4), mdarray.Layout.block((4,), devices=[0, 1]))
        >>> x.reshard({1: slice(None)}).index_map
        {1: [(slice(0, 4, 1),)]}
        """
        return _redistribute.reshard(self, self._as_layout(index_map))

    def reshard_cost(self, index_map):
        """The bytes per device pair that ``reshard(index_map)`` would move, moving nothing.

        Returns a `TransferCount` like the one `mdarray.count_transfers` yields: ``total``,
        ``cost[(src, dst)]`` and ``copies``.

        >>> import mdarray, numpy as np
        >>> x = mdarray.distributed_array(np.zeros(8), mdarray.Layout.block((8,), devices=[0, 1]))
        >>> x.reshard_cost(mdarray.Layout.replicated((8,), devices=[0, 1])).bytes
        Counter({(1, 0): 32, (0, 1): 32})
        """
        return _redistribute.reshard_cost(self, self._as_layout(index_map))

    def _as_layout(self, index_map) -> Layout:
        """`index_map` (a dict or Layout) as a Layout of this array's shape and backend."""
        layout = index_map if isinstance(index_map, Layout) else Layout(self.shape, index_map)
        if layout.shape != self.shape:
            raise ValueError(
                f"reshard: layout shape {layout.shape} does not match the array's {self.shape}"
            )
        _check_devices(layout, self._backend)
        return layout

    def to_device(self, device, /, *, stream=None) -> DistArray:
        """This array on `device`: a device id, a DeviceSet or a Layout (see `DeviceSet`)."""
        from ._creation_functions import layout_for_device

        return self.reshard(layout_for_device(self.shape, device, self._backend))

    # Presentation -------------------------------------------------------------------

    def __repr__(self) -> str:
        from ._visualize import summary

        part, summarize = _printed_part(self)
        values = np.array2string(
            part, separator=", ", prefix="DistArray(", threshold=0 if summarize else None
        )
        return f"DistArray({values}, dtype={self.dtype}, mode={self.mode}, {summary(self)})"

    def visualize(self) -> str:
        """A text picture of which device holds which part of the array.

        The first two axes are drawn as a grid of cells (blocks of positions), each
        labelled with the devices holding it; then the chunks and bytes per device, and
        how many elements overlapping chunks share and what their copies mean in this
        array's mode.

        >>> import mdarray, numpy as np
        >>> x = mdarray.distributed_array(np.zeros((2, 4)), mdarray.Layout.block((2, 4), axis=1, devices=[0, 1]))
        >>> print(x.visualize())
        DistArray shape=(2, 4) dtype=float64 mode=replica: 2 chunks on devices [0, 1]
          0
        0 0 0 1 1
        1 0 0 1 1
        cells: blocks of axis 0 (rows) x axis 1 (columns); a cell's symbol says which devices hold it
        device 0: 1 chunk, 32 B
        device 1: 1 chunk, 32 B
        no overlaps: each element is held by one chunk
        """
        from ._visualize import picture

        return picture(self)

    def _repr_html_(self) -> str:
        from ._visualize import html

        return html(self)

    # NumPy methods: each goes through the NumPy function, so one registered
    # implementation serves ``x.sum()``, ``np.sum(x)`` and ``mdarray.sum(x)``.

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        return np.sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        return np.prod(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)

    def max(self, axis=None, out=None, keepdims=False, **kwargs):
        return np.max(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    def min(self, axis=None, out=None, keepdims=False, **kwargs):
        return np.min(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        return np.mean(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
        return np.var(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, **kwargs)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
        return np.std(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, **kwargs)

    def all(self, axis=None, out=None, keepdims=False, **kwargs):
        return np.all(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    def any(self, axis=None, out=None, keepdims=False, **kwargs):
        return np.any(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    def argmax(self, axis=None, out=None, *, keepdims=False):
        return np.argmax(self, axis=axis, out=out, keepdims=keepdims)

    def argmin(self, axis=None, out=None, *, keepdims=False):
        return np.argmin(self, axis=axis, out=out, keepdims=keepdims)

    def cumsum(self, axis=None, dtype=None, out=None):
        return np.cumsum(self, axis=axis, dtype=dtype, out=out)

    def cumprod(self, axis=None, dtype=None, out=None):
        return np.cumprod(self, axis=axis, dtype=dtype, out=out)

    def astype(self, dtype, copy=True):
        return np.astype(self, dtype, copy=copy)

    def copy(self):
        return np.copy(self)

    def reshape(self, *shape, **kwargs):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return np.reshape(self, shape, **kwargs)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
            axes = axes[0]
        return np.transpose(self, axes or None)

    @property
    def T(self) -> DistArray:
        return np.transpose(self)

    @property
    def mT(self) -> DistArray:
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return np.matrix_transpose(self)

    def __getitem__(self, key):
        from ._indexing import getitem

        return getitem(self, key)

    def __setitem__(self, key, value) -> None:
        from ._indexing import setitem

        setitem(self, key, value)

    # Python scalar protocols --------------------------------------------------------

    def __len__(self) -> int:
        if not self.ndim:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.ndim:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    def item(self, *args):
        return self.get().item(*args)

    def tolist(self):
        return self.get().tolist()

    def _scalar(self, kind):
        if self.size != 1:
            raise TypeError("only arrays with one element can be converted to Python scalars")
        return kind(self.get().reshape(()))

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()"
            )
        return bool(self.get().reshape(()))

    def __int__(self) -> int:
        return self._scalar(int)

    def __float__(self) -> float:
        return self._scalar(float)

    def __complex__(self) -> complex:
        return self._scalar(complex)

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError("only integer arrays can be converted to an index")
        return operator.index(self._scalar(int))

    # Protocols ----------------------------------------------------------------------

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _dispatch().array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _dispatch().array_function(func, types, args, kwargs)

    def __array_namespace__(self, /, *, api_version=None):
        import mdarray

        if api_version not in (None, "2022.12", "2023.12", "2024.12"):
            raise ValueError(f"unsupported array API version {api_version!r}")
        return mdarray

    def _single_chunk(self, protocol: str, error):
        # One chunk holds every element once, so its copy is the value in any mode.
        if len(self._data) != 1 or self._data[0].shape != self.shape:
            raise error(
                f"{protocol} needs the whole value in one chunk on one device; this array has "
                f"{len(self._data)} chunks in mode {self.mode}: gather it with "
                "x.reshard(mdarray.Layout.replicated(x.shape, devices=[d])) or x.get() first"
            )
        return self._data[0]

    @property
    def __cuda_array_interface__(self) -> dict:
        if self._backend.name != "cuda":
            raise AttributeError("__cuda_array_interface__ exists only for arrays on CUDA devices")
        chunk = self._single_chunk("__cuda_array_interface__", AttributeError)
        # A consumer orders itself after the caller's current stream (the interface's
        # "stream"): order that stream after mdarray's work on the chunk first.
        self._backend.export_to_current(self._layout.chunk_devices[0])
        return chunk.__cuda_array_interface__

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        chunk = self._single_chunk("__dlpack__", BufferError)
        kwargs = {"stream": stream} if stream is not None else {}
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        self._backend.export_to_current(self._layout.chunk_devices[0])
        return chunk.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._single_chunk("__dlpack_device__", BufferError).__dlpack_device__()

    def __cupy_get_ndarray__(self):
        import cupy

        from ._dispatch import check_fallback

        check_fallback("cupy.asarray", self.nbytes)
        if self._backend.name == "cuda":
            device = cupy.cuda.Device().id
            from ._regions import full_box

            out = _redistribute.region_value(self, full_box(self.shape), device)
            self._backend.export_to_current(device)  # the caller uses it on its stream
            return out
        return cupy.asarray(self.get())

    def __cupy_override_elementwise_kernel__(self, kernel, *args, **kwargs):
        """CuPy's hook for its ufuncs and ElementwiseKernels (``cupy.cos(x)``): the
        kernel runs chunk by chunk and the result is a DistArray."""
        from ._cupy_hooks import cupy_elementwise

        return cupy_elementwise(kernel, args, kwargs)

    def __cupy_override_reduction_kernel__(self, kernel, axis, dtype, out, keepdims):
        """CuPy's hook for its reduction kernels (``cupy.sum(x, axis=0)``, ``cupy.amax``):
        the result is a DistArray, partial where the axes are split."""
        from ._cupy_hooks import cupy_reduction

        return cupy_reduction(self, kernel, axis, dtype, out, keepdims)


# How many DistArrays hold each chunk buffer, by identity. reshard and change_mode hand
# unchanged buffers to their result; `DistArray._writable` copies a buffer held twice.
# Views made by indexing are other objects, so writes through them reach their base as
# NumPy's views do.
_holders: dict[int, int] = {}


def _printed_part(x: DistArray) -> tuple:
    """``(values, summarize)``: what NumPy's printer shows of `x`, gathered. All of it when
    it is small; else only the edges of every long axis (``edgeitems`` each side), which
    NumPy prints with the same "..." when told to summarize (threshold 0), so the repr of
    a 1 GiB array moves kilobytes."""
    options = np.get_printoptions()
    if x.size <= options["threshold"]:
        return x.get(), False
    edge = options["edgeitems"]
    sides = [
        # One element more than shown keeps the axis longer than 2 * edgeitems, so NumPy
        # prints "..." in its place.
        [slice(0, edge + 1), slice(n - edge, n)] if n > 2 * edge else [slice(None)]
        for n in x.shape
    ]

    def gather(axis: int, key: tuple) -> np.ndarray:
        if axis == x.ndim:
            return x[key].get()
        parts = [gather(axis + 1, (*key, side)) for side in sides[axis]]
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=axis)

    return gather(0, ()), True


def _check_slabs(layout: Layout, slabs: tuple, dtype, backend) -> None:
    if len(slabs) != len(layout.devices):
        raise ValueError(f"layout has {len(layout.devices)} devices but {len(slabs)} slabs")
    _check_devices(layout, backend)
    for slab, device, (_, total) in zip(slabs, layout.devices, layout.packing):
        if slab.shape != (total,) or slab.dtype != dtype:
            raise ValueError(
                f"the slab of device {device} is {slab.dtype}{list(slab.shape)}, "
                f"the layout needs {dtype}[{total}]"
            )
        where = backend.device_of(slab)
        if where is not None and where != device:
            raise ValueError(f"the slab of device {device} is on device {where}")


def _dispatch():
    """The dispatch module (imported on first use: it imports this one)."""
    global _dispatch_module
    if _dispatch_module is None:
        from . import _dispatch as module

        _dispatch_module = module
    return _dispatch_module


_dispatch_module = None


def unpack_slabs(layout: Layout, slabs, backend) -> tuple:
    """The chunk views of a packed array's slabs."""
    data = [None] * len(layout.chunks)
    for slab, device, (entries, _) in zip(slabs, layout.devices, layout.packing):
        with backend.on(device):
            for k, offset, size in entries:
                data[k] = slab[offset : offset + size].reshape(layout.chunk_shapes[k])
    return tuple(data)


def packed_empty(layout: Layout, dtype, backend) -> tuple:
    """Fresh slabs for a packed array of `layout` (see `Layout.packing`)."""
    return tuple(
        backend.empty((total,), dtype, device)
        for device, (_, total) in zip(layout.devices, layout.packing)
    )


def _hold(data) -> None:
    for array in data:
        _holders[id(array)] = _holders.get(id(array), 0) + 1


def _release(data) -> None:
    for array in data:
        count = _holders.get(id(array), 0) - 1
        if count > 0:
            _holders[id(array)] = count
        else:
            _holders.pop(id(array), None)


def _check_devices(layout: Layout, backend) -> None:
    for device in layout.devices:
        if device not in backend.device_ids:
            raise ValueError(
                f"device {device} in the index map is not a device of the {backend.name} backend "
                f"(devices {list(backend.device_ids)})"
            )
