"""Creating DistArrays: `distributed_array` and the array API creation functions."""

from __future__ import annotations

import operator

import numpy as np

from . import _redistribute, _regions
from ._array import DistArray
from ._backend import DeviceSet, get_backend
from ._backend import backend as default_backend_object
from ._layout import Layout
from ._modes import REPLICA, as_mode


def distributed_array(array, index_map, mode=REPLICA) -> DistArray:
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

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(6).reshape(2, 3), {0: (0,), 1: (1,)})
    >>> x.all_chunks()[1][0]
    array([[3, 4, 5]])
    """
    mode = as_mode(mode)
    if isinstance(array, DistArray):
        return array.reshard(_as_layout(array.shape, index_map)).change_mode(mode)
    backend = default_backend_object()
    if not backend.is_native(array):
        array = np.asarray(array)
    layout = _as_layout(array.shape, index_map)
    mode.check_dtype(array.dtype)
    from ._array import _check_devices

    _check_devices(layout, backend)
    on_host = isinstance(array, np.ndarray)
    data = []
    for box, device in zip(layout.boxes, layout.chunk_devices):
        piece = array[tuple(_regions.to_slice(r) for r in box)]
        data.append(backend.from_host(piece, device) if on_host else backend.adopt(piece, device))
    # The chunks are fresh copies, so a partial mode may write identities into them.
    data = _redistribute.replica_to_partial(layout, data, mode, backend, copy=False)
    return DistArray._new(layout, data, mode, array.dtype, backend)


def _as_layout(shape, index_map) -> Layout:
    if isinstance(index_map, Layout):
        if index_map.shape != tuple(shape):
            raise ValueError(
                f"layout shape {index_map.shape} does not match the array's shape {tuple(shape)}"
            )
        return index_map
    return Layout(shape, index_map)


def layout_for_device(shape, device, backend=None) -> Layout:
    """The layout that ``device=`` means: an int (all on that device), a DeviceSet (blocks
    along axis 0 over its devices), a Layout (exactly it) or None (blocks over all)."""
    backend = default_backend_object() if backend is None else backend
    shape = tuple(shape)
    if device is None:
        return Layout.block(shape, devices=backend.device_ids)
    if isinstance(device, Layout):
        if device.shape != shape:
            raise ValueError(f"device layout has shape {device.shape}, the array has shape {shape}")
        return device
    if isinstance(device, DeviceSet):
        if device.backend != backend.name:
            raise ValueError(f"{device!r} is of the {device.backend} backend, not {backend.name}")
        return Layout.block(shape, devices=device.device_ids)
    try:
        device = operator.index(device)
    except TypeError:
        raise TypeError(
            f"device must be a device id, a DeviceSet, a Layout or None, got {device!r}"
        ) from None
    return Layout.replicated(shape, devices=[device])


def _backend_for(device):
    if isinstance(device, DeviceSet):
        return get_backend(device.backend)
    return default_backend_object()


def full(shape, fill_value, *, dtype=None, device=None) -> DistArray:
    """A new array of `shape` filled with `fill_value`, laid out as `device` says.

    >>> import mdarray
    >>> mdarray.full((2, 2), 7, device=0).get()
    array([[7, 7],
           [7, 7]])
    """
    if isinstance(fill_value, DistArray):
        fill_value = fill_value.item()
    dtype = np.asarray(fill_value).dtype if dtype is None else np.dtype(dtype)
    backend = _backend_for(device)
    layout = layout_for_device(_shape_tuple(shape), device, backend)
    data = [
        backend.full(s, fill_value, dtype, d)
        for s, d in zip(layout.chunk_shapes, layout.chunk_devices)
    ]
    return DistArray._new(layout, data, REPLICA, dtype, backend)


def zeros(shape, *, dtype=None, device=None) -> DistArray:
    """A new array of zeros (float64 by default).

    >>> import mdarray
    >>> mdarray.zeros(3).get()
    array([0., 0., 0.])
    """
    return full(shape, 0, dtype=np.float64 if dtype is None else dtype, device=device)


def ones(shape, *, dtype=None, device=None) -> DistArray:
    """A new array of ones (float64 by default).

    >>> import mdarray
    >>> mdarray.ones(2, dtype="int32").get()
    array([1, 1], dtype=int32)
    """
    return full(shape, 1, dtype=np.float64 if dtype is None else dtype, device=device)


def empty(shape, *, dtype=None, device=None) -> DistArray:
    """A new array with unspecified values (float64 by default).

    >>> import mdarray
    >>> mdarray.empty((2, 3)).shape
    (2, 3)
    """
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    backend = _backend_for(device)
    layout = layout_for_device(_shape_tuple(shape), device, backend)
    data = [backend.empty(s, dtype, d) for s, d in zip(layout.chunk_shapes, layout.chunk_devices)]
    return DistArray._new(layout, data, REPLICA, dtype, backend)


def _shape_tuple(shape) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    return tuple(operator.index(n) for n in shape)
