"""Indexing: ``x[key]`` and ``x[key] = value``.

Basic indexing (ints, slices with any step, Ellipsis, None) moves no data: every source
chunk that holds selected elements gives the selected part of itself, as a view on its
device, and those parts are the chunks of the result. The mode is kept, since every copy
of a selected element comes along. An int drops its axis; selecting single elements gives
0-d arrays.

Assignment writes every copy of the selected elements: the value in REPLICA mode; in a
partial mode the value into the copy that owns the element (the layout's first chunk
holding it) and the identity into the others. Everything that can fail (the key, the
value's shape, its cast, moving it to the devices) happens before the first write, so a
failed assignment leaves every chunk as it was.

Advanced indices run natively (`_advanced_indexing`) for a boolean mask alone (of x's
shape or of its leading axes: ``x[mask]``, ``x[mask] = value``) and for one 1-D integer
array among full slices (``x[idx]``, ``x[:, idx]``, ``x[..., idx]``, and assignment to
them by `_index_writes`); in a run of several processes only the reads (``x[mask]``,
``x[idx]``) do so far. The others go through the gathered fallback path
(`mdarray.options(fallback=...)`).
"""

from __future__ import annotations

import operator

import numpy as np

from mdarray._array.array import DistArray, wrap
from mdarray._backends.backend import Backend
from mdarray._core import regions as _regions
from mdarray._core.decided import RUNNERS, SCALAR_WRITES, VIEW, remember
from mdarray._core.modes import REPLICA
from mdarray._core.regions import hashable_key
from mdarray._core.registry import implements_method
from mdarray._exec.chunkwise import blocks, blocks_agree, commit, write_out
from mdarray._movement.collectives import several
from mdarray._movement.plans import shadowed_within
from mdarray._movement.redistribute import region_pieces, region_value
from mdarray._ops.engine.fallback import fallback, gathered
from mdarray._runtime.config import check_fallback
from mdarray._storage import local as _this_process
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import is_placeholder, local_chunks
from mdarray._storage.stored import call_key

from .advanced import (
    host_indices,
    is_int_vector,
    mask_getitem,
    mask_setitem,
    take_rows,
)
from .index_plans import (
    basic_key,
    getitem_plan,
    is_advanced,
    position_key,
    position_plan,
    position_write_plan,
    position_writes,
    selection_box,
    value_order,
)
from .points import point_arrays, put_points, take_points
from .writes import integer_setitem


def _planned_getitem(x: DistArray, plan) -> DistArray:
    """``x[key]`` by its `key_plan`: views of the chunks (copies for a scalar)."""
    basic, layout, parts, groups, copy, blocks = plan
    if not parts:
        return wrap(Chunks.empty(layout, x.dtype, x.storage.backend), x.mode)
    result = wrap(x.storage.select(layout, groups, basic, blocks), x.mode)
    if copy:
        # NumPy gives a scalar for an integer per axis, a copy: later writes to x do not
        # reach it (``x[2, ...]`` is a 0-d view, as NumPy's is).
        result = wrap(result.storage.map(lambda b: b.copy()), result.mode)
    return result


def basic_getitem(x: DistArray, key: tuple) -> DistArray:
    """`x` indexed by a normalized basic key (see `basic_key`): views, no transfers."""
    layout, parts = getitem_plan(x.layout, key)
    backend = x.storage.backend
    if not parts:
        return wrap(Chunks.empty(layout, x.dtype, backend), x.mode)
    sources = [k for k, _ in parts]
    view = x.storage.view(layout, lambda t, b: b[parts[t][1]], sources)
    return wrap(view, x.mode)


class _View:
    """The runner a view by slices leaves (`_view_plan`): its `position_plan`, from which
    DistArray's ``__getitem__`` selects and its ``__setitem__`` writes (`set`)."""

    __slots__ = ("plan",)

    def __init__(self, plan: tuple) -> None:
        self.plan = plan

    def __call__(self, x: DistArray) -> DistArray:
        return _planned_getitem(x, self.plan)

    def set(self, x: DistArray, value: DistArray) -> bool:
        """``x[key] = value`` by this plan (`_write_from`), in one process: done."""
        _write_from(x, self.plan, value)
        return True


def _write_from(x: DistArray, plan: tuple, value: DistArray) -> None:
    """``x[key] = value`` for a DistArray value, by the key's `position_plan`: nothing
    where it copies each element onto itself, else one copy per device where the blocks
    agree (`_block_setitem`), else by the write plan (`_distarray_setitem`)."""
    basic = plan[0]
    if onto_itself(x, basic, value):
        if x.storage.backend.read_only_arrays:
            _check_writable(x)
    elif not _block_setitem(x, plan, value):
        _distarray_setitem(x, basic, value)


def onto_itself(x: DistArray, key: tuple, value: DistArray) -> bool:
    """Whether ``x[key] = value`` (`key` normalized) copies each element onto itself, as
    ``x[key] op= y`` ends: t = ``x[key]`` written in place, then ``x[key] = t``."""
    return (
        value.mode is x.mode
        and value.storage.is_view_of(x.storage, key)
        and not x.storage.layout.has_overlaps
    )


class _ScalarWrite:
    """The runner `setitem` leaves for ``x[key] = scalar`` (`_core.decided.SCALAR_WRITES`):
    the key's writes into x's layout (`position_writes`), which DistArray's
    ``__setitem__`` runs at once on the next call."""

    __slots__ = ("chunks", "layout", "plain", "writes")

    def __init__(self, layout, writes: list) -> None:
        self.layout, self.writes = layout, writes  # (the layout kept: the key names its id)
        self.chunks = [write[0] for write in writes]
        devices = layout.chunk_devices
        # ``(device, chunk, index)`` per write where none writes an identity (a partial
        # mode's shadowed copies): one process's writes, as `_write` makes them.
        plain = [(devices[k], k, index) for k, _, index, _, shadowed in writes if not shadowed]
        self.plain = plain if len(plain) == len(writes) else None

    def set(self, x: DistArray, value) -> bool:
        """Write `value` where it is a scalar (cast to x's dtype first, which may raise
        before any write): whether it did."""
        if not (type(value) in _SCALARS or isinstance(value, np.generic)):
            return False
        scalar = np.array(value, dtype=x.dtype)[()]
        storage = x.storage
        if storage.backend.read_only_arrays:
            _check_writable(x)
        if self.plain is None or not _this_process.ALL_HERE:
            _write(x, self.writes, [scalar] * len(self.writes))
            return True
        buffers = storage.writable(self.chunks)
        commit(storage.backend, [(d, buffers[k], index, scalar) for d, k, index in self.plain])
        return True


_SCALARS = frozenset({int, float, complex, bool})


def _view_plan(x: DistArray, hashable: tuple) -> tuple:
    """The `position_plan` of ``x[key]`` (`hashable`: the key's `hashable_key`): a view by
    slices leaves its runner (`_View`, read at once by DistArray's ``__getitem__`` and
    ``__setitem__`` on the next call; a key of a position takes its segment's plan,
    shifted, so it leaves none)."""
    view = RUNNERS.get((VIEW, call_key(x), hashable))
    if view is not None:
        return view[0].plan  # type: ignore[attr-defined]
    plan = position_plan(x.layout, hashable)
    if plan[2] and not plan[4] and not (hashable and type(hashable[0]) is int):
        remember((VIEW, call_key(x), hashable), _View(plan), (x.layout,))
    return plan


@implements_method("getitem")
def getitem(x: DistArray, key) -> DistArray:
    """``x[key]``: basic keys run per chunk, one integer array along one axis by
    `take_rows`, a boolean mask by `mask_getitem`; other advanced keys through the
    fallback policy.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(8), mdarray.Layout.block((8,), devices=[0, 1]))
    >>> y = x[::-3]  # views of the chunks: device 1 holds 7 and 4, device 0 holds 1
    >>> y.get(), y.index_map
    (array([7, 4, 1]), {0: [(slice(2, 3, 1),)], 1: [(slice(0, 2, 1),)]})
    """
    if type(key) is str or (type(key) is list and key and type(key[0]) is str):
        return _fields(x, key)
    hashable = hashable_key(key)
    if hashable is not None:
        return _planned_getitem(x, _view_plan(x, hashable))
    basic = basic_key(key, x.shape)
    if basic is None:
        mask = _mask_of(x, key)
        if mask is not None:
            return (
                mask_getitem(x[None], mask.reshape(1)) if not mask.ndim else mask_getitem(x, mask)
            )
        axis = _integer_axis(x, key)
        if axis is not None:
            items = key if isinstance(key, tuple) else (key,)
            index = next(i for i in items if is_advanced(i))
            if np.ndim(index) > 1 and _kind(index) == "b":
                return _masked_axes(x, index, axis)
            indices = host_indices(index, x.shape[axis], axis)
            if indices.ndim == 1:
                return take_rows(x, indices, axis)
            # An integer array of more axes: its shape in place of the axis (NumPy's take),
            # in blocks along axis 0, as a new array: the taken axes whole in each chunk,
            # so a reduction over them runs in NumPy's order (SciPy's bootstrap compares
            # batches bit for bit).
            taken = take_rows(x, indices.reshape(-1), axis, along=0)
            return taken.reshape(x.shape[:axis] + indices.shape + x.shape[axis + 1 :])
        points = point_arrays(x, key)
        if points is not None and (got := take_points(x, points)) is not None:
            return got
        return fallback(operator.getitem, (x, key), {}, "DistArray.__getitem__ (advanced index)")
    result = basic_getitem(x, basic)
    if all(isinstance(item, int) for item in basic) and not _has_ellipsis(key):
        # NumPy gives a scalar for an integer per axis, a copy: later writes to x do not
        # reach it (``x[2, ...]`` is a 0-d view, as NumPy's is).
        result = wrap(result.storage.map(lambda b: b.copy()), result.mode)
    return result


def _fields(x: DistArray, names) -> DistArray:
    """``x["a"]`` or ``x[["a", "b"]]`` of a structured array: a view of those fields of
    every chunk, as NumPy's (writes through either reach the other); NumPy's errors for
    an unknown field or an array without fields."""
    dtype = np.empty(0, x.dtype)[names].dtype
    return wrap(x.storage.view(x.layout, lambda t, b: b[names], dtype=dtype), x.mode)


def _has_ellipsis(key) -> bool:
    return any(item is Ellipsis for item in (key if isinstance(key, tuple) else (key,)))


# Assignment -------------------------------------------------------------------------


@implements_method("setitem")
def setitem(x: DistArray, key, value) -> None:
    """``x[key] = value``: writes every copy of the selected elements, or none on error.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.zeros(4), mdarray.Layout.replicated((4,), devices=[0, 1]))
    >>> x[1:3] = [5, 6]
    >>> [c.tolist() for c in x.all_chunks()[1]]
    [[0.0, 5.0, 6.0, 0.0]]
    """
    if type(key) is str or (type(key) is list and key and type(key[0]) is str):
        setitem(_fields(x, key), Ellipsis, value)
        return
    hashable = hashable_key(key)
    if hashable is not None:
        if isinstance(value, DistArray):
            _write_from(x, _view_plan(x, hashable), value)
            return
        runner = SCALAR_WRITES.get((call_key(x), hashable))
        if runner is None and (type(value) in _SCALARS or isinstance(value, np.generic)):
            runner = _ScalarWrite(x.layout, position_writes(x.layout, x.mode, hashable, ())[0])
            if len(SCALAR_WRITES) >= 1024:
                SCALAR_WRITES.clear()
            SCALAR_WRITES[call_key(x), hashable] = runner
        if runner is not None and runner.set(x, value):
            return
        _write_all(x, _planned_writes(x, position_key(x.layout, hashable), value))
        return
    basic = basic_key(key, x.shape)
    if basic is None and several():  # no multi-process implementation yet
        _gathered_setitem(x, key, value)
        return
    if basic is None:
        mask = _mask_of(x, key)
        if mask is not None:
            _check_writable(x)
            if mask.ndim:
                mask_setitem(x, mask, value)
                return
            # x[True] = v writes v (broadcast to (1, *x.shape)) over x; x[False] nothing.
            chosen = bool(mask)
            shape = np.broadcast_shapes(np.shape(value), (int(chosen), *x.shape))
            if chosen:
                setitem(x, Ellipsis, value[0] if np.ndim(value) == len(shape) else value)
            return
        axis = _integer_axis(x, key)
        items = key if isinstance(key, tuple) else (key,)
        indices = next((item for item in items if is_advanced(item)), ())
        if axis is not None and np.ndim(indices) == 1:  # (an index of more axes: below)
            _check_writable(x)
            integer_setitem(x, indices, axis, value)
            return
        points = point_arrays(x, key)
        if points is not None:
            _check_writable(x)
            if put_points(x, points, value):
                return
        _gathered_setitem(x, key, value)
        return
    _write_all(x, _planned_writes(x, basic, value))


def _block_setitem(x: DistArray, plan, value: DistArray) -> bool:
    """``x[key] = value`` as one copy per device where the selection's device blocks
    agree with the value's (`Layout.device_blocks`: ``new[1:-1, 1:-1] = u[:-2, 1:-1] + ...``
    on row chunks of one device); both REPLICA, one process, their memory apart. False
    where this does not apply (`_distarray_setitem` writes then)."""
    basic, layout, parts, groups, copy, block_keys = plan
    if (
        copy
        or not parts
        or x.mode is not REPLICA
        or value.mode is not REPLICA
        or several()
        or not blocks_agree(layout, value.layout)
    ):
        return False
    source = blocks(value.storage)
    if source is None:
        return False
    backend = x.storage.backend
    if value.dtype != x.dtype:
        # Every block cast before any write (a cast may raise); a view's blocks span its
        # chunks, so it casts as one array per device too.
        dtype = x.dtype
        cast = []
        for device, piece in zip(layout.devices, source):
            with backend.on(device):
                cast.append(piece.astype(dtype))
        source = tuple(cast)
    _check_writable(x)
    x.storage.make_writable()
    target = blocks(x.storage.select(layout, groups, basic, block_keys))
    if target is None or any(map(backend.xp.may_share_memory, source, target)):
        return False
    commit(
        backend, [(d, block, (), piece) for d, block, piece in zip(layout.devices, target, source)]
    )
    return True


def _distarray_setitem(x: DistArray, key: tuple, value: DistArray) -> None:
    """``x[key] = value`` for a DistArray value, by a plan cached on the layouts."""
    plan, (lead, reorder) = position_write_plan(x.layout, x.mode, key, tuple(value.shape))
    if value.dtype != x.dtype:
        value = value.astype(x.dtype, copy=False)
    _check_writable(x)
    if lead is None and _write_pieces(x, key, plan, value):
        return
    pieces = []
    for _, device, _, region, _ in plan:
        piece = region_value(value.storage, value.mode, region, device)
        if lead is not None and not is_placeholder(piece):
            piece = piece[lead][reorder]
        pieces.append(piece)
    _write(x, plan, pieces)


def _write_pieces(x: DistArray, key: tuple, plan, value: DistArray) -> bool:
    """``x[key] = value`` with each piece of the value copied straight into x's chunks
    (`region_pieces`), not first gathered into a copy of each chunk's region: both
    REPLICA, one process, the value of the selection's shape (nothing broadcast) and
    of x's dtype, its memory apart from x's. Pieces from other devices move before the
    first write (`commit`). False where this does not apply."""
    if x.mode is not REPLICA or value.mode is not REPLICA or several():
        return False
    if tuple(value.shape) != _regions.box_shape(selection_box(key)):
        return False
    buffers = x.storage.writable([write[0] for write in plan])
    if not value.storage.apart_from(x.storage) and _may_meet(x, value):
        return False
    writes: list = []
    for k, device, chunk_index, region, _ in plan:
        pieces = region_pieces(value.storage, region, device)
        if pieces is None:
            return False
        target = buffers[k][(*chunk_index, Ellipsis)]
        writes.extend((device, target, index, piece) for index, piece in pieces)
    commit(x.storage.backend, writes)
    return True


def _may_meet(x: DistArray, value: DistArray) -> bool:
    """Whether value's memory may meet x's on some device (memory that copy on write
    does not track, such as fresh results): slab against slab where chunks are packed, so
    the test does not grow with the chunks per device as `numpy.may_share_memory`'s
    chunk-by-chunk one does."""
    share = x.storage.backend.xp.may_share_memory
    sources: dict = {}
    for device, array in _memory(value.storage):
        sources.setdefault(device, []).append(array)
    return any(share(a, b) for device, a in _memory(x.storage) for b in sources.get(device, ()))


def _memory(storage: Chunks):
    """``(device, array)`` for each slab of packed chunks, else for each chunk."""
    slabs = storage.slabs
    if slabs is not None:
        return zip(storage.layout.devices, slabs)
    return zip(storage.layout.chunk_devices, storage.buffers)


def _write_all(x: DistArray, writes) -> None:
    plan = [(k, None, index, None, shadowed) for k, index, _, shadowed in writes]
    _write(x, plan, [piece for _, _, piece, _ in writes])


def _planned_writes(x: DistArray, key: tuple, value) -> list:
    """``(chunk, chunk index, value piece, shadowed indices)`` for every chunk that holds
    selected elements, with every value piece already cast and on its device."""
    box = selection_box(key)
    operand = _operand_in_box_order(x, key, value)
    _check_writable(x)
    backend = x.storage.backend
    writes = []
    boxes, devices = x.layout.boxes, x.layout.chunk_devices
    held = dict(_this_process.mine(devices))  # another process reads its own chunks' pieces
    for k in x.layout.box_index.meeting(box):
        chunk_box, device = boxes[k], devices[k]
        common = _regions.intersect(box, chunk_box)
        if common is None:
            continue
        within = tuple(
            range(i.start, i.stop, i.step) for i in _regions.local_box_index(box, common)
        )
        piece = _operand_piece(operand, within, device, backend, k in held)
        shadowed: tuple = ()
        if x.mode.is_partial:
            shadowed = shadowed_within(x.layout, common, k)
        writes.append((k, _regions.local_box_index(chunk_box, common), piece, shadowed))
    return writes


def _write(x: DistArray, writes, pieces) -> None:
    """Each `pieces` item written by its write (see `write_plan`) into x's chunks."""
    backend = x.storage.backend
    identity = x.mode.identity(x.dtype) if x.mode.is_partial else None
    buffers = x.storage.writable([write[0] for write in writes])
    assigns = []  # bit for bit: -0.0 stays -0.0
    held = dict(_this_process.mine(x.layout.chunk_devices))  # another process writes its own chunks
    for (k, _, chunk_index, _, shadowed), piece in zip(writes, pieces):
        device = held.get(k)
        if device is not None:
            buffer = buffers[k]
            assigns.append((device, buffer, chunk_index, piece))
            assigns.extend((device, buffer, index, identity) for index in shadowed)
    commit(backend, assigns)


def _operand_in_box_order(x: DistArray, key: tuple, value):
    """`value` checked against the selection's shape, cast to x's dtype, and indexed so
    its axes follow the selection box (ascending positions, one axis per source axis).
    Axes of length 1 broadcast; a scalar is returned as a 0-d-free scalar of x's dtype."""
    if not isinstance(value, DistArray) and not x.storage.backend.is_native(value):
        if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
            return _scalar_value(x, value)
        value = np.array(value, dtype=x.dtype) if not isinstance(value, np.ndarray) else value
    lead, _, reorder = value_order(key, tuple(value.shape))
    value = value.astype(x.dtype, copy=False) if value.dtype != x.dtype else value
    return value[(None,) * lead][reorder]


def _operand_piece(operand, within: tuple, device, backend: Backend, here: bool):
    """The part of the box-ordered operand that the selection-box region `within` reads,
    on `device` (broadcast axes of length 1 stay 1); `here`: whether this process holds
    `device`."""
    if not here and not isinstance(operand, DistArray):
        return None  # another process writes that chunk (a DistArray's value moves, below)
    if not hasattr(operand, "shape") or not operand.ndim:
        if isinstance(operand, DistArray):
            return region_value(operand.storage, operand.mode, (), device)
        if backend.is_native(operand):
            return backend.adopt(operand, device)
        # A NumPy scalar, never a 0-d NumPy array: CuPy chunks take scalars only.
        return operand[()] if isinstance(operand, np.ndarray) else operand
    region = tuple(range(1) if n == 1 else r for n, r in zip(operand.shape, within))
    if isinstance(operand, DistArray):
        return region_value(operand.storage, operand.mode, region, device)
    piece = operand[tuple(_regions.to_slice(r) for r in region)]
    if isinstance(piece, np.ndarray):
        return backend.from_host(piece, device)
    return backend.adopt(piece, device)


def _scalar_value(x: DistArray, value):
    if isinstance(value, DistArray):
        value = value.get()
    return np.array(value, dtype=x.dtype)[()]


def _check_writable(x: DistArray) -> None:
    """Raise NumPy's error where a chunk of x refuses writes. Packed chunks' buffers are
    views this library makes of their slabs (one per device), so there the slabs are
    asked, and no chunk view is made for it."""
    storage = x.storage
    if not storage.backend.read_only_arrays:
        return
    slabs = storage.slabs
    if slabs is not None:
        for device, slab in zip(x.layout.devices, slabs):
            if not _this_process.ALL_HERE and is_placeholder(slab):
                continue  # another process's slab: its process checks it
            if not getattr(getattr(slab, "flags", None), "writeable", True):
                raise ValueError(
                    f"assignment destination is read-only (the slab on device {device})"
                )
        return
    for k, _, chunk in local_chunks(storage):  # another process checks its own alike
        flags = getattr(chunk, "flags", None)
        if flags is not None and hasattr(flags, "writeable") and not flags.writeable:
            raise ValueError(
                f"assignment destination is read-only (chunk {k} on device "
                f"{x.layout.chunk_devices[k]} is a read-only view, e.g. from broadcast_to)"
            )


# Boolean masks and the gathered path -----------------------------------------------


def _mask_of(x: DistArray, key):
    """The boolean mask that `key` is alone (an array or list of bools, of at least one
    axis where x has one), else None. A 0-d mask stands for a new first axis of length
    one or zero (NumPy's ``x[True]``, ``x[False]``)."""
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    if isinstance(key, list):
        key = np.asarray(key)
        if key.dtype.kind != "b":
            return None
    dtype = getattr(key, "dtype", None)
    if dtype is None or dtype.kind != "b" or (key.ndim and not x.ndim):
        return None
    return key


def _integer_axis(x: DistArray, key) -> int | None:
    """The (first) axis that `key` indexes with one integer array or boolean mask
    (``x[:, mask]``, ``x[..., mask2d]``), all its other items full slices or one Ellipsis;
    else None."""
    items = key if isinstance(key, tuple) else (key,)
    advanced = [p for p, item in enumerate(items) if is_advanced(item)]
    ellipses = [p for p, item in enumerate(items) if item is Ellipsis]
    others = [item for item in items if item is not Ellipsis and not is_advanced(item)]
    if len(advanced) != 1 or len(ellipses) > 1 or len(items) - len(ellipses) > x.ndim:
        return None
    index = items[advanced[0]]
    several = is_int_vector(index, "iub", range(2, 33))  # ints, or a mask of several axes
    if not (several or is_int_vector(index, "iufb")):
        return None
    spans = np.ndim(index) if several and _kind(index) == "b" else 1  # the axes it indexes
    if any(item != slice(None) for item in others) or len(others) + spans > x.ndim:
        return None
    position = advanced[0]
    if ellipses and ellipses[0] < position:
        return x.ndim - spans - (len(items) - position - 1)
    return position


def _kind(index) -> str:
    return index.dtype.kind if hasattr(index, "dtype") else np.asarray(index).dtype.kind


def _masked_axes(x: DistArray, mask, axis: int) -> DistArray:
    """``x[..., mask]`` for a boolean `mask` of several axes from `axis`: those axes
    merged into one and the positions the mask selects taken (`take_rows`), in blocks
    along axis 0 (SciPy's ``input[..., footprint]`` of its windows)."""
    host = mask.get() if isinstance(mask, DistArray) else np.asarray(mask)
    spans = host.ndim
    for a, (n, m) in enumerate(zip(x.shape[axis : axis + spans], host.shape)):
        if n != m:
            raise IndexError(
                f"boolean index did not match indexed array along axis {axis + a}; size of "
                f"axis is {n} but size of corresponding boolean axis is {m}"
            )
    merged = x.reshape((*x.shape[:axis], host.size, *x.shape[axis + spans :]))
    return take_rows(merged, np.flatnonzero(host), axis, along=0)


def _gathered_setitem(x: DistArray, key, value) -> None:
    """Advanced assignment on the host under the fallback policy, then written back into
    every chunk in x's mode."""
    check_fallback("DistArray.__setitem__ (advanced index)", x.nbytes)
    _check_writable(x)
    host = x.get()
    host[gathered(key)] = gathered(value)
    write_out(x, wrap(Chunks.from_host(host, x.layout, x.storage.backend)))
