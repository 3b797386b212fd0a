"""Manipulation: reshapes, new and removed axes, flips, broadcasting, joins (transposes:
`transposes`).

These relabel elements without combining them, so every mode survives. `expand_dims`, `squeeze`, `flip` and `broadcast_to` give views of the chunks with a
relabeled layout (no data moves); `reshape` does the same where every chunk stays a box
under the new shape, and otherwise reshards first. `concatenate` and `stack` copy each
chunk on its own device and shift it into place.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from mdarray._array.array import Axes, DistArray, in_mode, laid_out, wrap
from mdarray._core import regions as _regions
from mdarray._core.mode_rules import keeps_mode
from mdarray._core.modes import REPLICA
from mdarray._core.plan_cache import plan_cache
from mdarray._core.registry import implements
from mdarray._exec.chunkwise import Casting, backend_of
from mdarray._layouts.layout import Layout, ShapeLike, _normalize_axis, shape_tuple
from mdarray._ops.indexing.indexing import basic_getitem
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import local_chunks, placed

from .transposes import _axes_tuple, permute_dims

# Axes of length one, flips ------------------------------------------------------------


@implements(np.expand_dims, spmd=True)
def expand_dims(x: DistArray, /, axis: int | tuple[int, ...] = 0) -> DistArray:
    """`x` with new axes of length one at `axis` (an int or a tuple), no data moved.

    >>> import mdarray
    >>> mdarray.expand_dims(mdarray.zeros((2, 3)), axis=(0, -1)).shape
    (1, 2, 3, 1)
    """
    count = 1 if isinstance(axis, (int, np.integer)) else len(axis)
    new = _axes_tuple(axis, x.ndim + count)
    axes = iter(x.shape)
    key = tuple(None if a in new else range(next(axes)) for a in range(x.ndim + count))
    return basic_getitem(x, key)


@implements(np.squeeze, spmd=True)
def squeeze(x: DistArray, /, axis: Axes = None) -> DistArray:
    """`x` without the given axes of length one (all of them by default), no data moved.

    >>> import mdarray
    >>> mdarray.squeeze(mdarray.zeros((1, 3, 1)), axis=0).shape
    (3, 1)
    """
    if axis is None:
        axes = tuple(a for a, n in enumerate(x.shape) if n == 1)
    else:
        axes = _axes_tuple(axis, x.ndim)
        if any(x.shape[a] != 1 for a in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    key = tuple(0 if a in axes else range(n) for a, n in enumerate(x.shape))
    return basic_getitem(x, key)


@implements(np.flip, spmd=True)
def flip(x: DistArray, /, axis: Axes = None) -> DistArray:
    """`x` reversed along `axis` (all axes by default): views of the chunks, relabeled.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(4), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> mdarray.flip(x).index_map  # device 1's chunk now holds the first half
    {0: [(slice(2, 4, 1),)], 1: [(slice(0, 2, 1),)]}
    """
    axes = _axes_tuple(axis, x.ndim)
    key = tuple(range(n)[::-1] if a in axes else range(n) for a, n in enumerate(x.shape))
    return basic_getitem(x, key)


# Reshape ----------------------------------------------------------------------------


def _reshape_groups(old: tuple, new: tuple) -> list:
    """Runs of consecutive axes with equal products: ``[(old axes, new axes), ...]``."""
    groups = []
    i = j = 0
    while i < len(old) or j < len(new):
        old_axes, new_axes = [], []
        po = pn = 1
        if i < len(old):
            po, i = old[i], i + 1
            old_axes.append(i - 1)
        if j < len(new):
            pn, j = new[j], j + 1
            new_axes.append(j - 1)
        while po != pn:
            if po < pn:
                po, i = po * old[i], i + 1
                old_axes.append(i - 1)
            else:
                pn, j = pn * new[j], j + 1
                new_axes.append(j - 1)
        groups.append((tuple(old_axes), tuple(new_axes)))
    return groups


def _merge(ranges: tuple, sizes: tuple) -> range | None:
    """The flat C-order positions of a box over axes of `sizes`, if they form a range."""
    flat, block = range(1), 1
    for r, n in zip(ranges[::-1], sizes[::-1]):
        if len(flat) == block and flat.step == 1 and (r.step == 1 or len(r) == 1):
            flat = range(r.start * block, (r.start + len(r)) * block)
        elif len(r) == 1:
            flat = range(r.start * block + flat.start, r.start * block + flat.stop, flat.step)
        elif len(flat) == 1:
            flat = range(
                r.start * block + flat.start, r[-1] * block + flat.start + 1, r.step * block
            )
        else:
            return None
        block *= n
    return flat


def _split(flat: range, sizes: tuple) -> tuple | None:
    """The box over axes of `sizes` whose flat C-order positions are `flat`, if any."""
    if not sizes:
        return ()
    inner = math.prod(sizes[1:])
    if len(sizes) == 1:
        return (flat,)
    if not inner:
        return None
    first, last = flat[0], flat[-1]
    if flat.step == 1 and first % inner == 0 and len(flat) % inner == 0:
        rest = tuple(range(n) for n in sizes[1:])
        return (range(first // inner, last // inner + 1), *rest)
    if first // inner == last // inner:
        tail = _split(range(first % inner, last % inner + 1, flat.step), sizes[1:])
        return None if tail is None else (range(first // inner, first // inner + 1), *tail)
    offset = first % inner
    if inner % flat.step == 0 and offset < flat.step and len(flat) % (inner // flat.step) == 0:
        # Whole rows of a strided pattern: the same columns in consecutive rows.
        tail = _split(range(offset, inner, flat.step), sizes[1:])
        outer = range(first // inner, last // inner + 1)
        return None if tail is None else (outer, *tail)
    if flat.step % inner == 0:
        tail = _split(range(first % inner, first % inner + 1), sizes[1:])
        outer = range(first // inner, last // inner + 1, flat.step // inner)
        return None if tail is None else (outer, *tail)
    return None


@plan_cache
def reshaped_layout(layout: Layout, shape: tuple):
    """``(new layout, kept chunks)``: `layout` relabeled for `shape` when every chunk
    stays a box (empty chunks are dropped), else None."""
    groups = _reshape_groups(layout.shape, shape)
    index_map: dict = {}
    kept = []
    for k, (box, device) in enumerate(zip(layout.boxes, layout.chunk_devices)):
        if not _regions.box_size(box):
            continue
        kept.append(k)
        new_box: list[range] = []  # the groups' new axes are consecutive, in order
        for old_axes, new_axes in groups:
            flat = _merge(tuple(box[a] for a in old_axes), tuple(layout.shape[a] for a in old_axes))
            parts = None if flat is None else _split(flat, tuple(shape[a] for a in new_axes))
            if parts is None:
                return None
            new_box.extend(parts)
        index_map.setdefault(device, []).append(tuple(_regions.to_slice(r) for r in new_box))
    return Layout(shape, index_map), tuple(kept)


def _reshape_target(x: DistArray, shape: tuple) -> Layout:
    """A layout of x's shape that reshapes to `shape` chunk by chunk, on x's devices."""
    candidates = [Layout.block(x.shape, axis=a, devices=x.devices) for a in range(x.ndim)]
    reverse = reshaped_layout(Layout.block(shape, devices=x.devices), x.shape)
    if reverse is not None:
        candidates.insert(0, reverse[0])
    for candidate in candidates:
        if reshaped_layout(candidate, shape) is not None:
            return candidate
    return Layout.replicated(x.shape, devices=x.devices[:1])


def _resolve_shape(shape, size: int) -> tuple:
    shape = shape_tuple(shape)
    unknown = [a for a, n in enumerate(shape) if n == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if unknown:
        known = math.prod(n for n in shape if n != -1)
        if not known or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
        shape = tuple(size // known if n == -1 else n for n in shape)
    if math.prod(shape) != size or any(n < 0 for n in shape):
        raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
    return shape


@implements(np.reshape, spmd=True)
def reshape(
    x: DistArray,
    /,
    shape: ShapeLike | None = None,
    order: str = "C",
    *,
    newshape: ShapeLike | None = None,
    copy: bool | None = None,
) -> DistArray:
    """`x` with a new shape, in C order.

    Where every chunk stays a box under the new shape (splitting or merging axes inside
    chunks, whole rows of blocks), each chunk is reshaped where it lies; otherwise `x`
    is resharded first to a layout that allows it (with ``copy=False``, ValueError).

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(12), mdarray.Layout.block((12,), devices=[0, 1]))
    >>> mdarray.reshape(x, (4, 3)).index_map[1]
    [(slice(2, 4, 1), slice(0, 3, 1))]
    """
    if shape is None:
        shape = newshape
    if order == "F":
        reversed_shape = _resolve_shape(shape, x.size)[::-1]
        return permute_dims(reshape(permute_dims(x), reversed_shape, copy=copy))
    if order not in ("C", "A"):
        raise ValueError(f"reshape: order must be 'C' or 'F', got {order!r}")
    shape = _resolve_shape(shape, x.size)
    if not x.size:
        layout = Layout(shape, {x.devices[0]: ()})
        return wrap(Chunks.empty(layout, x.dtype, x.storage.backend), x.mode)
    plan = reshaped_layout(x.layout, shape)
    if plan is None:
        if copy is False:
            raise ValueError(
                f"reshape: the layout of x cannot be reshaped to {shape} without moving data "
                "(copy=False)"
            )
        x = laid_out(x, _reshape_target(x, shape))
        plan = reshaped_layout(x.layout, shape)
    layout, kept = plan
    shapes = layout.chunk_shapes
    if copy:
        buffers = x.storage.buffers
        reshaped = Chunks.generate(
            layout, x.storage.backend, lambda t: buffers[kept[t]].reshape(shapes[t]).copy(), None
        )
        return wrap(reshaped, x.mode)
    return wrap(x.storage.view(layout, lambda t, b: b.reshape(shapes[t]), kept), x.mode)


@implements(np.ravel, spmd=True)
def ravel(x: DistArray, order: str = "C") -> DistArray:
    """`x` as a 1-D array (see `reshape`)."""
    return reshape(x, (-1,), order=order)


# Broadcasting -----------------------------------------------------------------------


@implements(np.broadcast_to, spmd=True)
def broadcast_to(x: Any, /, shape: ShapeLike, subok: bool = False) -> DistArray:
    """`x` broadcast to `shape`: each chunk becomes a read-only broadcast view.

    >>> import mdarray
    >>> mdarray.broadcast_to(mdarray.ones(3), (2, 3)).shape
    (2, 3)
    """
    shape = shape_tuple(shape)
    lead = len(shape) - x.ndim
    if lead < 0 or any(n not in (m, 1) for n, m in zip(x.shape, shape[lead:])):
        raise ValueError(
            f"operands could not be broadcast together with remapped shapes "
            f"[original->remapped]: {x.shape} and requested shape {shape}"
        )
    layout = _broadcast_layout(x.layout, shape)
    xp = x.storage.backend.xp
    shapes = layout.chunk_shapes
    return wrap(x.storage.view(layout, lambda t, b: xp.broadcast_to(b, shapes[t])), x.mode)


@plan_cache
def _broadcast_layout(layout: Layout, shape: tuple) -> Layout:
    lead = len(shape) - layout.ndim
    index_map: dict = {}
    for box, device in zip(layout.boxes, layout.chunk_devices):
        index = [slice(0, n, 1) for n in shape[:lead]]
        for r, n, m in zip(box, layout.shape, shape[lead:]):
            stretched = n == 1 and m != 1 and len(r)
            index.append(slice(0, m, 1) if stretched else _regions.to_slice(r))
        index_map.setdefault(device, []).append(tuple(index))
    return Layout(shape, index_map)


# Joining ----------------------------------------------------------------------------


@implements(np.concatenate, spmd=True)
def concat(
    arrays: Sequence[Any],
    /,
    axis: int | None = 0,
    out: None = None,
    dtype: DTypeLike | None = None,
    casting: Casting = "same_kind",
) -> DistArray:
    """Arrays joined along an existing axis. Each chunk is copied on its own device and
    shifted into place, so no data moves between devices. The mode is kept where all
    inputs share it (each element comes from one input); otherwise all become REPLICA.

    >>> import mdarray
    >>> mdarray.concat([mdarray.zeros(2, device=0), mdarray.ones(1, device=1)]).index_map
    {0: [(slice(0, 2, 1),)], 1: [(slice(2, 3, 1),)]}
    """
    if out is not None:
        raise TypeError("concat: out= is not supported for DistArrays")
    arrays = _as_distarrays(arrays)
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if any(a.ndim == 0 for a in arrays):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = _normalize_axis(axis, arrays[0].ndim)
    _check_concat_shapes(arrays, axis)
    result_dtype = np.result_type(*(a.dtype for a in arrays)) if dtype is None else np.dtype(dtype)
    arrays = _common_mode(arrays, result_dtype, casting)
    runs: dict = {}  # per device, its chunks in order: (index, [buffers joined there])
    offset = 0
    for a in arrays:
        held: list = [None] * len(a.layout.chunks)  # another process copies its own
        for k, _, chunk in local_chunks(a.storage):
            held[k] = chunk
        for (device, index), chunk in zip(a.layout.chunks, held):
            shifted = list(index)
            s = index[axis]
            shifted[axis] = slice(s.start + offset, s.stop + offset, s.step)
            _append_run(runs.setdefault(device, []), tuple(shifted), chunk, axis)
        offset += a.shape[axis]
    shape = list(arrays[0].shape)
    shape[axis] = offset
    backend = arrays[0].storage.backend
    xp = backend.xp
    index_map = {device: [index for index, _ in run] for device, run in runs.items()}
    data: list = []
    for device, run in runs.items():
        for _, pieces in run:
            if pieces[0] is None:
                data.append(None)
                continue
            with backend.on(device):  # one copy per chunk, joined pieces at once
                data.append(
                    xp.array(pieces[0], dtype=result_dtype, copy=True)
                    if len(pieces) == 1
                    else xp.concatenate(pieces, axis=axis, dtype=result_dtype, casting="unsafe")
                )
    layout = Layout(tuple(shape), index_map)
    data = placed(data, layout.chunk_shapes, layout.chunk_devices, result_dtype)
    return wrap(Chunks.of(layout, data, backend, result_dtype), arrays[0].mode)


def _append_run(run: list, index: tuple, buffer, axis: int) -> None:
    """Add a chunk to a device's `run`, joined to the last one where it follows it along
    `axis` and matches it on the other axes: stacking 1000 0-d arrays on one device gives
    one chunk there, not 1000 (later operations plan per chunk)."""
    if run:
        last, pieces = run[-1]
        a, b = last[axis], index[axis]
        joinable = (
            a.stop == b.start
            and a.step == b.step == 1
            and all(p == q for d, (p, q) in enumerate(zip(last, index)) if d != axis)
            and (pieces[0] is None) == (buffer is None)
        )
        if joinable:
            joined = list(last)
            joined[axis] = slice(a.start, b.stop, 1)
            run[-1] = (tuple(joined), [*pieces, buffer])
            return
    run.append((index, [buffer]))


def _check_concat_shapes(arrays, axis: int) -> None:
    first = arrays[0]
    for i, a in enumerate(arrays[1:], start=1):
        if a.ndim != first.ndim:
            raise ValueError(
                "all the input arrays must have same number of dimensions, but the array at "
                f"index 0 has {first.ndim} dimension(s) and the array at index {i} has "
                f"{a.ndim} dimension(s)"
            )
        for d in range(first.ndim):
            if d != axis and a.shape[d] != first.shape[d]:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {d}, the array at index 0 has size "
                    f"{first.shape[d]} and the array at index {i} has size {a.shape[d]}"
                )


def _common_mode(arrays, dtype, casting) -> list:
    for a in arrays:
        if not np.can_cast(a.dtype, dtype, casting):
            raise TypeError(
                f"Cannot cast array data from dtype('{a.dtype}') to dtype('{dtype}') "
                f"according to the rule '{casting}'"
            )
    mode = arrays[0].mode
    same = all(a.mode is mode and keeps_mode(mode, a.dtype, dtype) for a in arrays)
    if same:
        return arrays
    return [in_mode(a, REPLICA) for a in arrays]


def _as_distarrays(arrays) -> list:
    arrays = list(arrays)
    template = next((a for a in arrays if isinstance(a, DistArray)), None)
    backend = backend_of(arrays)
    devices = template.devices if template is not None else None
    out = []
    for a in arrays:
        if isinstance(a, DistArray):
            out.append(a)
        else:
            host = np.asarray(a)
            layout = Layout.block(host.shape, devices=devices)
            out.append(wrap(Chunks.from_host(host, layout, backend)))
    return out


@implements(np.stack, spmd=True)
def stack(
    arrays: Sequence[Any],
    /,
    axis: int = 0,
    out: None = None,
    *,
    dtype: DTypeLike | None = None,
    casting: Casting = "same_kind",
) -> DistArray:
    """Arrays joined along a new axis (see `concat`; no data moves between devices).

    >>> import mdarray
    >>> mdarray.stack([mdarray.zeros(3), mdarray.ones(3)], axis=1).shape
    (3, 2)
    """
    arrays = _as_distarrays(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    if any(a.shape != arrays[0].shape for a in arrays):
        raise ValueError("all input arrays must have the same shape")
    axis = _normalize_axis(axis, arrays[0].ndim + 1)
    expanded = [expand_dims(a, axis=axis) for a in arrays]
    return concat(expanded, axis=axis, out=out, dtype=dtype, casting=casting)


@implements(np.broadcast_arrays, spmd=True)
def _broadcast_arrays(*arrays: Any, subok: bool = False) -> tuple[DistArray, ...]:
    """``numpy.broadcast_arrays``: a tuple of read-only views of the chunks where an
    array is broadcast; an array of the common shape comes back itself (writable), as
    NumPy returns it (SciPy's solvers write into them)."""
    distributed = _as_distarrays(arrays)
    shape = np.broadcast_shapes(*(a.shape for a in distributed))
    return tuple(a if a.shape == shape else broadcast_to(a, shape) for a in distributed)


def broadcast_arrays(*arrays: Any) -> list[DistArray]:
    """The arrays broadcast against each other (read-only views of their chunks where
    broadcast; those of the common shape as they are), as the array API's list.

    >>> import mdarray
    >>> [a.shape for a in mdarray.broadcast_arrays(mdarray.ones((2, 1)), mdarray.ones(3))]
    [(2, 3), (2, 3)]
    """
    return list(_broadcast_arrays(*arrays))


@implements(np.unstack, spmd=True)
def unstack(x: DistArray, /, *, axis: int = 0) -> tuple[DistArray, ...]:
    """The slices of `x` along `axis`, as views of its chunks.

    >>> import mdarray
    >>> [a.shape for a in mdarray.unstack(mdarray.zeros((2, 3)), axis=1)]
    [(2,), (2,), (2,)]
    """
    axis = _normalize_axis(axis, x.ndim)
    full = [range(n) for n in x.shape]
    return tuple(
        basic_getitem(x, (*full[:axis], i, *full[axis + 1 :])) for i in range(x.shape[axis])
    )
