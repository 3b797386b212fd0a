"""DistArray: one array whose chunks live on several devices, a thin facade.

A DistArray is storage (`Chunks`: layout, buffers, backend, dtype) plus a mode; its
attributes come from `Stored`. It reaches op code only through the registry
(`_registry`): NumPy's protocols look implementations up in its tables, and the methods
whose code lives in op modules (indexing, CuPy's hooks, the fallback) are registered
there by name. So the op modules import this one and never the other way round.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Collection
from types import ModuleType
from typing import Any, overload

import numpy as np
from numpy.typing import DTypeLike

from mdarray._backends.backend import DeviceSet, union_of
from mdarray._core.debug import TransferCount
from mdarray._core.decided import RUNNERS, SCALAR_WRITES, VIEW
from mdarray._core.modes import REPLICA, Mode, as_mode
from mdarray._core.regions import hashable_key
from mdarray._core.registry import FUNCTIONS, LOCAL, METHODS, UFUNC_METHODS, UFUNC_OVERRIDES
from mdarray._exec.operands import BINARY_OPERATORS, OURS, TAKEN, Operators, foreign
from mdarray._layouts import svg as _svg, visualize as _visualize
from mdarray._layouts.layout import Device, IndexMap, Layout, check_devices, layout_for_device
from mdarray._movement import redistribute as _redistribute
from mdarray._runtime import profile as _profile
from mdarray._runtime.config import check_fallback, mark_explicit
from mdarray._spmd import processes as _processes
from mdarray._storage.chunks import Chunks
from mdarray._storage.stored import Stored, decided_call, decided_function

from .exports import Exports
from .ndarray_methods import NDArrayMethods
from .python_protocols import PythonProtocols

#: ``axis=`` of a reduction: one axis, several, or all of them (None).
Axes = int | tuple[int, ...] | None


class DistArray(Stored, NDArrayMethods, PythonProtocols, Exports, Operators):
    """An N-D array whose chunks live on several devices.

    A DistArray has a `layout` (which device holds which part), a `mode` (how overlapping
    copies combine into the value) and one contiguous array per chunk: CuPy arrays on
    CUDA devices or NumPy arrays on virtual CPU devices. It is a NumPy duck array: NumPy
    and CuPy functions and the Python operators accept it and return DistArrays, and
    the `mdarray` module is its array API namespace.

    DistArray is not called directly (``DistArray(...)`` raises TypeError). Make arrays
    with `mdarray.distributed_array` (from data and an index map or Layout),
    `mdarray.asarray` and the creation functions (``mdarray.zeros((n,), device=...)``),
    `mdarray.from_local_chunks` or `mdarray.from_callback`; every operation on arrays
    returns new ones.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(6.0), mdarray.Layout.block((6,), devices=[0, 1]))
    >>> x.shape, x.mode, x.devices
    ((6,), mdarray.REPLICA, (0, 1))
    """

    __slots__ = ("__weakref__", "_group")
    __array_priority__ = 100
    _group: DeviceSet | None  # the device group, made on first use (see `device`)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Refuses: arrays are made by `mdarray.distributed_array` and the rest (above)."""
        raise TypeError("make a DistArray with mdarray.distributed_array or a creation function")

    # Not called directly, so no parameters to show: help() and the docs would otherwise
    # show the refusing __init__'s (*args, **kwargs). `_new` is the constructor.
    __signature__ = inspect.Signature()

    @classmethod
    def _new(cls, storage: Chunks, mode: Mode = REPLICA) -> DistArray:
        """The one constructor: `storage` (checked when it was made) in `mode`, which the
        dtype must be able to hold. `storage` must belong to this array alone (make
        another array on the same buffers with `Chunks.derive`)."""
        if mode is not REPLICA:  # every dtype holds REPLICA: no call for the common case
            mode.check_dtype(storage.dtype)
        self = object.__new__(cls)
        self._storage = storage
        self._mode = mode
        self._group = None
        self._call_key = (id(storage.layout), mode, storage.dtype, storage.backend)
        return self

    # Attributes (shape, dtype, mode, layout, ... come from Stored) --------------------

    @property
    def index_map(self) -> dict[int, list[tuple[slice, ...]]]:
        """``{device: [index, ...]}``, the layout's normalized index map: each chunk's
        index is a tuple of one slice per axis (start, stop and step set)."""
        return self.layout.index_map

    @property
    def devices(self) -> tuple[int, ...]:
        """Device ids holding chunks, in order of first appearance."""
        return self.layout.devices

    @property
    def device(self) -> DeviceSet:
        """The array's device group, the devices it is distributed over (the DeviceSet
        ``device=`` named when it was made, by default every device of the backend; else
        its layout's devices, empty chunks included), usable as ``device=`` in creation. What is computed from arrays keeps their group, so ``x[:5].device ==
        x.device`` though ``x[:5]`` may live on fewer devices (`devices` names those).

        >>> import mdarray, numpy as np
        >>> x = mdarray.distributed_array(np.arange(4.0), mdarray.Layout.block((4,), devices=[0, 1]))
        >>> x[:2].devices, x[:2].device == x.device
        ((0,), True)
        """
        if self._group is None:
            self._group = DeviceSet(self.layout.devices, self._storage.backend.name)
        return self._group

    @property
    def backend(self) -> str:
        """The name of the backend that holds the chunks, ``"cpu"`` or ``"cuda"``."""
        return self._storage.backend.name

    # Moving data --------------------------------------------------------------------

    @overload
    def get(self, root: None = None) -> np.ndarray: ...
    @overload
    def get(self, root: int) -> np.ndarray | None: ...
    @_processes.collective("get")
    def get(self, root: int | None = None) -> np.ndarray | None:
        """The value as a NumPy array on the host (partial results are combined).

        In an SPMD run (`mdarray.distributed`) it is collective and returns the value on
        every process, or with `root` only on that process (None on the others).

        >>> import mdarray, numpy as np
        >>> x = mdarray.distributed_array([1, 2, 3], {0: slice(0, 2), 1: slice(1, 3)})
        >>> x.get()
        array([1, 2, 3])
        """
        if root is None:
            return _redistribute.to_host(self._storage, self._mode)
        _processes.check_root(root)
        return _redistribute.to_root(self._storage, self._mode, root)

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        """``numpy.asarray(x)``: a view of the array's memory where one NumPy array views
        the value (the cpu backend's chunks lying in place in one allocation, as for
        `__dlpack__`), as NumPy's own ``asarray`` of an ndarray is: writes through it reach
        the array, and the array's reach it. Else, or with ``copy=True``, the value
        gathered to the host (`get`), a new writable array; ``copy=False`` raises
        ValueError where no view exists."""
        view = None
        if not copy and self._storage.backend.shared_memory:
            view = self._exported_view()
        if view is None:
            if copy is False:
                raise ValueError(
                    "a DistArray whose chunks do not lie in place in one host allocation "
                    "cannot be viewed as a NumPy array without a copy"
                )
            out = self.get()
        else:
            out = view[0]
        return out if dtype is None else out.astype(dtype, copy=False)

    @_processes.collective("change_mode")
    def change_mode(self, mode: Mode | str) -> DistArray:
        """This array's value in `mode` (a Mode or its name), with the same layout.

        The result may share chunk buffers with this array where they need no change.

        >>> import mdarray, numpy as np
        >>> x = mdarray.distributed_array(np.ones(4, int), mdarray.Layout.replicated((4,), devices=[0, 1]))
        >>> [c.tolist() for c in x.change_mode("sum").all_chunks()[1]]
        [[0, 0, 0, 0]]
        """
        mode = as_mode(mode)
        if mode is self._mode:
            # A new array all the same, sharing the buffers (copy on write): whether a
            # later write to one reaches the other must not depend on the mode.
            return in_group(DistArray._new(self._storage.derive(), mode), (self,))
        result = DistArray._new(_redistribute.change_mode(self._storage, self._mode, mode), mode)
        return in_group(result, (self,))

    @_processes.collective("reshard")
    def reshard(self, index_map: IndexMap | Layout) -> DistArray:
        """This array with a new layout (an index map or a Layout), in the same mode.

        The result may share chunk buffers with this array where a chunk keeps its place.

        >>> import mdarray, numpy as np
        >>> x = mdarray.distributed_array(np.arange(4), mdarray.Layout.block((4,), devices=[0, 1]))
        >>> x.reshard({1: slice(None)}).index_map
        {1: [(slice(0, 4, 1),)]}
        """
        layout = self._as_layout(index_map)
        if layout == self.layout:
            return DistArray._new(self._storage.derive(), self._mode)
        return DistArray._new(_redistribute.reshard(self._storage, self._mode, layout), self._mode)

    def reshard_cost(self, index_map: IndexMap | Layout) -> TransferCount:
        """The bytes per device pair that ``reshard(index_map)`` would move, moving nothing.

        Returns a `TransferCount` like the one `mdarray.count_transfers` yields: ``total``,
        ``bytes[(src, dst)]`` and ``copies``.

        >>> import mdarray, numpy as np
        >>> x = mdarray.distributed_array(np.zeros(8), mdarray.Layout.block((8,), devices=[0, 1]))
        >>> x.reshard_cost(mdarray.Layout.replicated((8,), devices=[0, 1])).bytes
        Counter({(1, 0): 32, (0, 1): 32})
        """
        return _redistribute.reshard_cost(self._storage, self._mode, self._as_layout(index_map))

    def _as_layout(self, index_map: IndexMap | Layout) -> Layout:
        """`index_map` (a dict or Layout) as a Layout of this array's shape and backend."""
        layout = index_map if isinstance(index_map, Layout) else Layout(self.shape, index_map)
        if layout.shape != self.shape:
            raise ValueError(
                f"reshard: layout shape {layout.shape} does not match the array's {self.shape}"
            )
        check_devices(layout, self._storage.backend)
        return layout

    def to_device(self, device: Device, /, *, stream: Any = None) -> DistArray:
        """This array on `device`: a device id, a DeviceSet or a Layout (see `DeviceSet`)."""
        return self.reshard(layout_for_device(self.shape, device, self._storage.backend))

    # Presentation -------------------------------------------------------------------

    def __repr__(self) -> str:
        part, summarize = _visualize.printed_part(self)
        values = np.array2string(
            part, separator=", ", prefix="DistArray(", threshold=0 if summarize else None
        )
        return (
            f"DistArray({values}, dtype={self.dtype}, mode={self.mode}, {_visualize.summary(self)})"
        )

    def __str__(self) -> str:
        """The values as ``str`` of a NumPy array prints them (``repr`` adds the layout)."""
        return str(self.get())

    def visualize(self) -> str:
        """A text picture of which device holds which part of the array.

        The first two axes are drawn as a grid of cells (blocks of positions), each
        labelled with the devices holding it (a 1-D array is one row, a 0-d array one
        cell); further axes are folded into the cells, with a line per axis saying where
        chunks split it. Then the chunks and bytes per device, and how many elements
        overlapping chunks share and what their copies mean in this array's mode. In a
        notebook the array draws itself as an SVG picture instead (``_repr_html_``).

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
        return _visualize.picture(self)

    def _repr_html_(self) -> str:
        """The notebook picture: a table of sizes beside an inline SVG of the chunks
        coloured by device."""
        return _svg.html(self)

    def to_svg(self) -> str:
        """The notebook picture's SVG alone (one ``<svg>`` element: the chunks coloured by
        device, the legend, the caption), to save as a ``.svg`` file or embed."""
        return _svg.svg(self)

    def __eq__(self, other: object) -> Any:
        """``x == other``: ``numpy.equal`` elementwise, a bool DistArray."""
        return METHODS["compare"](np.equal, self, other)

    def __ne__(self, other: object) -> Any:
        """``x != other``: ``numpy.not_equal`` elementwise, a bool DistArray."""
        return METHODS["compare"](np.not_equal, self, other)

    __hash__ = None  # type: ignore[assignment]  # mutable, as ndarray

    def __getitem__(self, key: Any) -> DistArray:
        """``x[key]``, with NumPy's indexing (basic, boolean and integer arrays).

        A basic index (ints, slices, ``...``, ``None``) keeps the chunks it touches where
        they lie, in the array's mode: no data moves, and the result lives on the devices
        holding that part (its `device` group stays this array's). Integer and boolean
        array indices move the selected elements; their result is REPLICA.

        >>> import mdarray, numpy as np
        >>> x = mdarray.distributed_array(np.arange(6), mdarray.Layout.block((6,), devices=[0, 1]))
        >>> x[4:].devices, x[4:].get()
        ((1,), array([4, 5]))
        """
        result = None
        if _processes.current() is None and not _profile.recording:
            # A view by slices whose first call left its plan (`_core.decided.VIEW`) is
            # selected here; other keys, SPMD runs and profiles take the public call.
            hashable = hashable_key(key)
            entry = None if hashable is None else RUNNERS.get((VIEW, self._call_key, hashable))
            if entry is not None:
                basic, layout, _, groups, _, blocks = entry[0].plan  # type: ignore[attr-defined]
                result = self._new(self._storage.select(layout, groups, basic, blocks), self._mode)
        if result is None:
            result = self._getitem(key)
        if (
            type(result) is DistArray
            and result._group is None
            and (result.layout.devices == self.layout.devices)
        ):
            result._group = self._group  # `in_group`'s (None: made from those devices)
            return result
        return in_group(result, (self,))

    @_processes.collective("getitem")
    def _getitem(self, key: Any) -> Any:
        return METHODS["getitem"](self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        """``x[key] = value``: writes every copy of the selected elements (in the array's
        mode: a partial array's other copies take the identity), through the buffers, so
        views see it. On failure no copy changes."""
        if _processes.current() is None and not _profile.recording:
            # A write its first call left a runner for ends here: ``x[key] op= y`` ends with
            # ``x[key] = t``, t the view it wrote in place (the view's runner); ``x[i] = 1.0``.
            hashable = hashable_key(key)
            if hashable is not None:
                if type(value) is DistArray:
                    entry = RUNNERS.get((VIEW, self._call_key, hashable))
                    runner = None if entry is None else entry[0]
                else:
                    runner = SCALAR_WRITES.get((self._call_key, hashable))
                if runner is not None and runner.set(self, value):  # type: ignore[attr-defined]
                    return
        self._setitem(key, value)

    @_processes.collective("setitem")
    def _setitem(self, key: Any, value: Any) -> None:
        METHODS["setitem"](self, key, value)

    # Protocols ----------------------------------------------------------------------

    @_processes.collective(lambda self, ufunc, method_name, *_: f"{ufunc.__name__}.{method_name}")
    def __array_ufunc__(
        self, ufunc: np.ufunc, method_name: str, *inputs: Any, **kwargs: Any
    ) -> Any:
        """NumPy's ufunc protocol (NEP 13): ``np.sin(x)``, ``np.add(x, y, out=x)`` and the
        operators run chunk by chunk where the operands' layouts allow (else they are
        aligned to the first DistArray's layout), with the mode rules deciding whether a
        partial result stays partial. Methods without a distributed implementation take
        the fallback policy (`mdarray.options`)."""
        if method_name == "__call__" and (done := decided_call(ufunc, inputs, kwargs)) is not None:
            return done if "out" in kwargs else in_group(done, inputs)  # out keeps its group
        operands = (*inputs, *kwargs["out"]) if "out" in kwargs else inputs
        if not TAKEN.issuperset(map(type, operands)):  # NEP 13: `_operands.foreign`
            answer = foreign(getattr(ufunc, method_name), map(type, operands), inputs, kwargs)
            if answer is not OURS:
                return answer
        impl = UFUNC_OVERRIDES.get((ufunc, method_name)) or UFUNC_METHODS.get(method_name)
        if impl is None or not _processes.runs_here(impl):
            return in_group(METHODS["fallback_ufunc"](ufunc, method_name, inputs, kwargs), inputs)
        return in_group(impl(ufunc, inputs, kwargs), inputs)

    @_processes.collective(
        lambda self, func, *_: getattr(func, "__name__", "function"),
        local=lambda self, func, *_: FUNCTIONS.get(func) in LOCAL,
    )
    def __array_function__(self, func: Callable[..., Any], types: Collection[type],
                           args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:  # fmt: skip
        """NumPy's function protocol (NEP 18): ``np.sum(x)``, ``np.concatenate`` and the
        rest run their distributed implementation where the registry has one, else the
        fallback policy (`mdarray.options`); another library's array defers."""
        if (done := decided_function(func, args, kwargs)) is not None:
            return in_group(done, (*args, *kwargs.values()))
        if not TAKEN.issuperset(types):  # NEP 18: `_operands.foreign`
            answer = foreign(func, types, args, kwargs)
            if answer is not OURS:
                return answer
        impl = FUNCTIONS.get(func)
        if impl is not None and _processes.runs_here(impl):
            return in_group(impl(*args, **kwargs), (*args, *kwargs.values()))
        return in_group(METHODS["fallback_function"](func, types, args, kwargs), args)

    def __array_namespace__(self, /, *, api_version: str | None = None) -> ModuleType:
        """The array API namespace, the `mdarray` module (versions 2022.12 to 2024.12)."""
        if api_version not in (None, "2022.12", "2023.12", "2024.12"):
            raise ValueError(f"unsupported array API version {api_version!r}")
        return sys.modules[__package__.partition(".")[0]]

    def __cupy_get_ndarray__(self) -> Any:
        """CuPy's ``cupy.asarray(x)``: the value gathered onto CuPy's current device
        (under the fallback policy)."""
        check_fallback("cupy.asarray", self.nbytes)
        return METHODS["cupy_get_ndarray"](self)

    def __cupy_override_elementwise_kernel__(self, kernel: Any, *args: Any, **kwargs: Any) -> Any:
        """CuPy's hook for its ufuncs and ElementwiseKernels (``cupy.cos(x)``): the
        kernel runs chunk by chunk and the result is a DistArray."""
        return METHODS["cupy_elementwise"](kernel, args, kwargs)

    def __cupy_override_reduction_kernel__(
        self, kernel: Any, axis: Any, dtype: Any, out: Any, keepdims: bool
    ) -> Any:
        """CuPy's hook for its reduction kernels (``cupy.sum(x, axis=0)``, ``cupy.amax``):
        the result is a DistArray, partial where the axes are split."""
        return METHODS["cupy_reduction"](self, kernel, axis, dtype, out, keepdims)


# Moves the user asks for: the transfer guard lets them through (`_config.mark_explicit`).
_EXPLICIT = "get __array__ change_mode reshard to_device item tolist __cupy_get_ndarray__"
_SHOWN = "__repr__ __str__ __format__ __bool__ __int__ __float__ __complex__ __index__"
mark_explicit(*(getattr(DistArray, name) for name in f"{_EXPLICIT} {_SHOWN}".split()))


def _decided_first(name: str) -> Callable[..., Any]:
    """DistArray's operator `name`: the runner its call decided (`decided_call`), where the
    other operand is a DistArray or a Python number (no NumPy dispatch, no `__array_ufunc__`);
    else, and in SPMD runs and profiles, the `Operators` mixin's, which checks and records."""
    ufunc, reflected, in_place = BINARY_OPERATORS[name]
    mixin = getattr(Operators, name)

    def operator(self: DistArray, other: Any) -> Any:
        kind = type(other)
        if kind is DistArray and not _profile.recording:
            # Two arrays: the key `decided_key` makes, made here (the commonest call).
            key: tuple
            if reflected:
                inputs, key = (other, self), (ufunc, other._call_key, self._call_key)
            elif in_place:
                inputs = (self, other)
                key = (ufunc, self._call_key, other._call_key, ("out", self._call_key))
            else:
                inputs, key = (self, other), (ufunc, self._call_key, other._call_key)
            entry = RUNNERS.get(key)
            if entry is not None and _processes.current() is None:
                done = entry[0](inputs, (self,) if in_place else None)
                if done is not None and in_place:
                    return done
                if done is not None:
                    group = self._group
                    if group is other._group and done._group is None and done.layout is self.layout:
                        done._group = group  # `in_group`'s commonest case
                        return done
                    return in_group(done, inputs)
        elif kind in _QUICK and not _profile.recording:
            inputs = (other, self) if reflected else (self, other)
            if in_place:  # what the ufunc gives back with out: x itself (its own group)
                if (done := decided_call(ufunc, inputs, {"out": (self,)})) is not None:
                    return done
            elif (done := decided_call(ufunc, inputs, {})) is not None:
                return in_group(done, inputs)
        return mixin(self, other)

    operator.__name__, operator.__qualname__ = name, f"DistArray.{name}"
    operator.__doc__ = mixin.__doc__
    return operator


def _decided_unary(name: str) -> Callable[..., Any]:
    """DistArray's unary operator `name`: the runner its call decided, else the mixin's."""
    mixin = getattr(Operators, name)
    ufunc = mixin.ufunc  # (`_exec.operands` names it)

    def operator(self: DistArray) -> Any:
        if not _profile.recording and (done := decided_call(ufunc, (self,), {})) is not None:
            return in_group(done, (self,))
        return mixin(self)

    operator.__name__, operator.__qualname__, operator.__doc__ = (
        name,
        f"DistArray.{name}",
        mixin.__doc__,
    )
    return operator


_QUICK = frozenset({DistArray, int, float, complex, bool})
for _name in BINARY_OPERATORS:
    setattr(DistArray, _name, _decided_first(_name))
for _name in ("__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(DistArray, _name, _decided_unary(_name))


def in_group(result: Any, operands: Collection[Any]) -> Any:
    """`result` with every new DistArray in it (itself, or a tuple's or list's items) given
    the device group of the DistArray `operands` (their union, sequences looked into), where
    its devices lie in it. Operands returned as results (``out=``) keep their own group."""
    if type(result) is DistArray:
        # The common case inline (every op's result passes here): operands of one group,
        # `result` one of them, or new.
        first = group = None
        common = True
        for value in operands:
            kind = type(value)
            if kind is tuple or kind is list:
                common = False
                break
            if kind is DistArray:
                if value is result:  # its own group, fixed now: `placed_in` must not set one
                    result.device  # noqa: B018  (made on first use)
                    return result
                if first is None:
                    first, group = value, value._group
                elif group is None or (value._group is not group and value._group != group):
                    common = False
                    break
        if common and first is not None:
            group = group if group is not None else first.device
            devices = first._storage.layout.devices
            if result._group is None and result._storage.layout.devices == devices:
                result._group = group
            if result._group is group:
                return result
    results = _arrays_in((result,))
    arrays = _arrays_in(operands) if results else None
    if not arrays:
        return result
    first = arrays[0]
    group = first._group if first._group is not None else first.device
    for x in arrays:
        other = x._group if x._group is not None else x.device
        if other is not group and other != group:
            group = union_of([x._group if x._group is not None else x.device for x in arrays])
            break
    devices = first._storage.layout.devices
    for r in results:
        if r._group is group:
            continue
        if any(r is x for x in arrays):
            r.device  # noqa: B018  (its own group, made on first use)
            continue
        layout = r._storage.layout
        if r._group is None and layout.devices == devices:
            r._group = group  # the common case: an operand's devices lie in its group
            continue
        # A group an inner step gave (from an intermediate on fewer devices) widens.
        if (
            r._group is not group
            and r.backend == group.backend
            and (r._group is None or set(r._group.device_ids) < set(group.device_ids))
            and set(layout.devices) <= set(group.device_ids)
        ):
            r._group = group
    return result


def placed_in(result: Any, group: DeviceSet | None) -> Any:
    """`result` with every new DistArray in it (itself, or a tuple's or list's items) in
    the device group `group` (None: every device of its backend), where its devices lie
    in it."""
    for r in result if isinstance(result, (tuple, list)) else (result,):
        if type(r) is DistArray and r._group is None:
            backend = r._storage.backend
            chosen = group or DeviceSet(backend.device_ids, backend.name)
            if set(r._storage.layout.devices) <= set(chosen.device_ids):
                r._group = chosen
    return result


def _arrays_in(values: Collection[Any]) -> list[DistArray]:
    """The DistArrays among `values` and in their tuples and lists (one level)."""
    found = []
    for value in values:
        if type(value) is DistArray:
            found.append(value)
        elif isinstance(value, (tuple, list)):
            found.extend(v for v in value if type(v) is DistArray)
    return found


#: ``wrap(storage, mode=REPLICA)``: a DistArray of `storage` (which no other array holds)
#: in `mode` (the constructor itself: no frame of its own on every op's result).
wrap = DistArray._new


def in_mode(x: DistArray, mode: Mode) -> DistArray:
    """`x` itself where it is in `mode`, else ``x.change_mode(mode)``: for op code that
    only reads the result (``change_mode`` always makes a new array)."""
    return x if x.mode is mode else x.change_mode(mode)


def laid_out(x: DistArray, layout: Layout) -> DistArray:
    """`x` itself where it has `layout`, else ``x.reshard(layout)`` (see `in_mode`)."""
    return x if x.layout == layout else x.reshard(layout)
