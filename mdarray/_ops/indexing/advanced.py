"""Advanced indexing without gathering: boolean masks, integer arrays along one axis, and
the functions built on them (``nonzero``, ``argwhere``, ``compress``, ``extract``).

A boolean mask selects elements in NumPy's global C order. A chunk that covers a
contiguous run of the flattened C order (a *row block*: split along axis 0 only, step 1,
no overlaps) can compact its own selected elements, and the row blocks, ordered by their
first row, give the result in NumPy's order: so arrays in row blocks are compacted where
they are, and other layouts are first resharded (in REPLICA mode) to blocks along axis 0,
a counted movement. The result's chunk sizes are the per-chunk counts of selected
elements, which the host reads (one small synchronization per chunk).

An integer array along one axis gives a result in blocks along that axis over x's devices,
full along the other axes; each result chunk fetches the distinct rows it needs (with
`region_value`, local copies first), so only the requested rows move. The indices
themselves are read on the host (a DistArray of indices is brought there).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from mdarray._array.array import DistArray, wrap
from mdarray._backends.backend import Backend
from mdarray._core import regions as _regions
from mdarray._core.modes import REPLICA
from mdarray._core.plan_cache import plan_cache
from mdarray._core.registry import implements
from mdarray._exec.chunkwise import broadcast_regions, cast, commit
from mdarray._kernels.kernels import exact_array
from mdarray._layouts.layout import Layout
from mdarray._movement.collectives import merged_everywhere
from mdarray._movement.redistribute import (
    change_mode,
    region_value,
    regions_value,
    reshard,
    to_host,
)
from mdarray._ops.engine.fallback import fallback
from mdarray._storage import local as _this_process
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import all_here, local_chunks, placed

# Layouts ------------------------------------------------------------------------------


@plan_cache
def _is_row_blocks(layout: Layout) -> bool:
    """Whether every chunk holds a contiguous run of the flattened C order, once."""
    if layout.has_overlaps or not layout.ndim:
        return False
    for box in layout.boxes:
        if not _regions.box_size(box):
            continue
        if box[0].step != 1 and len(box[0]) > 1:
            return False
        if any(r != range(n) for r, n in zip(box[1:], layout.shape[1:])):
            return False
    return True


def _in_row_blocks(x: DistArray) -> Chunks:
    """x's value in REPLICA mode, in row blocks: x's own layout where it is one (nothing
    moves), else blocks along axis 0 over x's devices (a reshard)."""
    storage = change_mode(x.storage, x.mode, REPLICA)
    if not _is_row_blocks(storage.layout):
        target = Layout.block(x.shape, devices=storage.layout.devices)
        storage = reshard(storage, REPLICA, target)
    return storage


def _compacted_layout(layout: Layout, counts: list, rest: tuple) -> tuple[Layout, list]:
    """The layout of per-chunk results of `counts` rows (and trailing shape `rest`),
    stacked in the order of the chunks' first rows; chunk k of the result is chunk k of
    `layout`. Also each chunk's first row in the result."""
    order = sorted(range(len(counts)), key=lambda k: layout.boxes[k][0].start)
    offsets = [0] * len(counts)
    total = 0
    for k in order:
        offsets[k] = total
        total += counts[k]
    index_map: dict = {}
    full = tuple(slice(0, n, 1) for n in rest)
    for k, device in enumerate(layout.chunk_devices):
        index = (slice(offsets[k], offsets[k] + counts[k], 1), *full)
        index_map.setdefault(device, []).append(index)
    return Layout((total, *rest), index_map), offsets


# Masks --------------------------------------------------------------------------------


def check_mask(shape: tuple, mask) -> None:
    """Raise NumPy's IndexError where `mask` (boolean) cannot index an array of `shape`."""
    mshape = tuple(mask.shape)
    if len(mshape) > len(shape):
        raise IndexError(
            f"too many indices for array: array is {len(shape)}-dimensional, "
            f"but {len(mshape)} were indexed"
        )
    for axis, (n, m) in enumerate(zip(shape, mshape)):
        if n != m:
            raise IndexError(
                f"boolean index did not match indexed array along axis {axis}; size of axis "
                f"is {n} but size of corresponding boolean axis is {m}"
            )


def _mask_pieces(mask, layout: Layout, backend: Backend) -> list:
    """Per chunk of `layout`, the part of `mask` (over the leading axes) its box reads,
    on the chunk's device (a `Remote` on another process's: a DistArray mask's parts
    move in one step)."""
    ndim = len(mask.shape)
    if isinstance(mask, DistArray):
        if mask.layout == layout and mask.mode is REPLICA:
            return list(mask.storage.buffers)
        storage = change_mode(mask.storage, mask.mode, REPLICA)
        return regions_value(storage, [box[:ndim] for box in layout.boxes], layout.chunk_devices)
    copy_in = backend.from_host if isinstance(mask, np.ndarray) else backend.adopt
    boxes, devices = layout.boxes, layout.chunk_devices
    pieces: list = [None] * len(devices)  # another process copies its own
    for k, device in _this_process.mine(devices):
        pieces[k] = copy_in(mask[tuple(_regions.to_slice(r) for r in boxes[k][:ndim])], device)
    shapes = [_regions.box_shape(box[:ndim]) for box in boxes] if not all_here() else ()
    return placed(pieces, shapes, devices, np.bool_)


def _counts(pieces: list, layout: Layout, backend: Backend) -> list:
    """The number of true (non-zero) elements of each chunk's mask piece, read on the host
    (and shared between the processes of an SPMD run); 0 for a chunk without elements
    (its mask piece may hold rows that other chunks own)."""
    own = {}
    for k, device in _this_process.mine(layout.chunk_devices):
        if _regions.box_size(layout.boxes[k]):
            with backend.on(device):
                own[k] = int(backend.xp.count_nonzero(pieces[k]))
    counts = merged_everywhere(own)
    return [counts.get(k, 0) for k in range(len(pieces))]


def mask_getitem(x: DistArray, mask) -> DistArray:
    """``x[mask]`` for a boolean `mask` of x's shape or of its leading axes.

    Each row block compacts its own selected elements (see the module docstring); x moves
    only where it is not in row blocks (a reshard to blocks along axis 0), the mask where
    it is not laid out as x. The host reads one count per chunk.

    Parameters
    ----------
    x : DistArray
        The indexed array.
    mask : DistArray or array_like of bool
        Of x's shape, or of its leading axes.

    Returns
    -------
    DistArray
        The selected elements (rows), in NumPy's order, REPLICA mode.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.arange(6).reshape(3, 2))
    >>> with mdarray.options(fallback="raise"):
    ...     y = x[x % 3 == 0]
    >>> y.get()
    array([0, 3])
    """
    check_mask(x.shape, mask)
    rest = x.shape[len(mask.shape) :]
    if not x.size:  # no chunk holds a row: the count is the mask's
        shape = (int(np.count_nonzero(mask)), *rest)
        layout = Layout.block(shape, devices=x.layout.devices)
        return wrap(Chunks.empty(layout, x.dtype, x.storage.backend), REPLICA)
    storage = _in_row_blocks(x)
    layout, backend = storage.layout, storage.backend
    masks = _mask_pieces(mask, layout, backend)
    counts = _counts(masks, layout, backend)
    result, _ = _compacted_layout(layout, counts, rest)
    buffers = storage.buffers

    def pick(k):
        if not counts[k]:  # an empty chunk's box need not span the other axes
            return backend.empty(result.chunk_shapes[k], x.dtype, result.chunk_devices[k])
        return buffers[k][masks[k]]

    return wrap(Chunks.generate(result, backend, pick, x.dtype), REPLICA)


def in_dtype_of(x: DistArray, value):
    """`value` (a DistArray, a NumPy or backend array, or anything NumPy makes an array
    of) cast to x's dtype, as a write into x casts it."""
    if isinstance(value, DistArray):
        if value.dtype != x.dtype:
            storage, mode = cast(value.storage, value.mode, x.dtype)
            value = wrap(storage, mode)
    elif isinstance(value, np.ndarray) or x.storage.backend.is_native(value):
        value = value.astype(x.dtype, copy=False)
    else:
        value = np.array(value, dtype=x.dtype)
    return value


def _mask_value(x: DistArray, value, selected: tuple):
    """`value` checked against the `selected` shape of ``x[mask]`` (its first axis None
    while the count is unknown) as NumPy checks it, cast to x's dtype, leading axes of
    length 1 dropped: ``(value, varies)``, `varies` when it differs along the selected
    elements (then `selected` needs its count)."""
    value = in_dtype_of(x, value)
    vshape = tuple(value.shape)
    if len(selected) == 1 and len(vshape) > 1:
        raise TypeError(
            "NumPy boolean array indexing assignment requires a 0 or 1-dimensional input, "
            f"input has {len(vshape)} dimensions"
        )
    while len(vshape) > len(selected) and vshape[0] == 1:
        vshape = vshape[1:]
        value = value[0]
    varies = len(vshape) == len(selected) and vshape[0] != 1
    return value, varies


def _check_value_shape(value, selected: tuple) -> None:
    vshape = tuple(value.shape)
    if len(selected) == 1 and vshape and vshape[0] not in (1, selected[0]):
        raise ValueError(
            f"NumPy boolean array indexing assignment cannot assign {vshape[0]} input values "
            f"to the {selected[0]} output values where the mask is true"
        )
    fits = len(vshape) <= len(selected) and all(
        v in (1, n) for v, n in zip(vshape[::-1], selected[::-1])
    )
    if not fits:
        raise ValueError(
            f"shape mismatch: value array of shape {vshape} could not be broadcast to "
            f"indexing result of shape {selected}"
        )


def _value_on(value, region: tuple, device, backend: Backend):
    """The part `region` (a box) of `value` (a DistArray, NumPy or native array) on
    `device`."""
    if isinstance(value, DistArray):
        return region_value(value.storage, value.mode, region, device)
    piece = value[tuple(_regions.to_slice(r) for r in region)]
    if isinstance(piece, np.ndarray):
        return backend.from_host(np.ascontiguousarray(piece), device)
    return backend.adopt(piece, device)


def mask_setitem(x: DistArray, mask, value) -> None:
    """``x[mask] = value``: every copy of each selected element written, or none on error.

    A value that does not vary along the selected elements (a scalar, or length 1 there)
    is written by each chunk into its selected positions; nothing but the value and the
    mask (where not laid out as x) moves. Otherwise the value's rows are cut by the
    running counts of the selected elements over row blocks of x (x's own layout where it
    is one, else blocks along axis 0; the host reads one count per block) and each chunk
    of x receives the selected values that fall in its box. In a partial mode the owner
    of each element gets the value and the other copies the identity. Everything that can
    fail happens before the first write.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.arange(4.0))
    >>> with mdarray.options(fallback="raise"):
    ...     x[x > 1] = np.array([20.0, 30.0])
    >>> x.get()
    array([ 0.,  1., 20., 30.])
    """
    check_mask(x.shape, mask)
    layout, backend = x.layout, x.storage.backend
    rest = x.shape[len(mask.shape) :]
    value, varies = _mask_value(x, value, (None, *rest))
    writes: list = []  # (chunk, index into the chunk, mask piece, values)
    if not varies:
        _check_value_shape(value, (1, *rest))
        masks = _mask_pieces(mask, layout, backend)
        regions = broadcast_regions(layout, tuple(value.shape))
        for k, (box, device) in enumerate(zip(layout.boxes, layout.chunk_devices)):
            if _regions.box_size(box):
                piece = value[()] if isinstance(value, np.ndarray) and not value.ndim else None
                piece = _value_on(value, regions[k], device, backend) if piece is None else piece
                writes.append((k, (Ellipsis,), masks[k], piece))
    else:
        if not x.size:  # nothing to write, but NumPy checks the value against the count
            _check_value_shape(value, (int(np.count_nonzero(mask)), *rest))
            return
        rows = layout if _is_row_blocks(layout) else Layout.block(x.shape, devices=layout.devices)
        masks = _mask_pieces(mask, rows, backend)
        counts = _counts(masks, rows, backend)
        _check_value_shape(value, (sum(counts), *rest))
        _, offsets = _compacted_layout(rows, counts, rest)
        writes = _varying_writes(x, rows, masks, counts, offsets, value)
    _write_masked(x, mask, writes)


def _varying_writes(x: DistArray, rows: Layout, masks, counts, offsets, value) -> list:
    layout, backend = x.layout, x.storage.backend
    vrest = _regions.full_box(value.shape[1:])
    values = [
        _value_on(value, (range(o, o + c), *vrest), device, backend) if c else None
        for o, c, device in zip(offsets, counts, rows.chunk_devices)
    ]
    if rows is layout:
        return [(k, (Ellipsis,), masks[k], values[k]) for k in range(len(counts)) if counts[k]]
    ndim = len(masks[0].shape)
    dense: dict = {}
    writes = []
    for k, (box, device) in enumerate(zip(layout.boxes, layout.chunk_devices)):
        for r, (row_box, row_device) in enumerate(zip(rows.boxes, rows.chunk_devices)):
            common = _regions.intersect(box, row_box) if counts[r] else None
            if common is None or not _regions.box_size(common):
                continue
            with backend.on(row_device):
                if r not in dense:
                    filled = backend.empty(rows.chunk_shapes[r], x.dtype, row_device)
                    filled[masks[r]] = values[r]
                    dense[r] = filled
                within = _regions.local_box_index(row_box, common)
                sub_mask = masks[r][within[:ndim]]
                selected = dense[r][within][sub_mask]
            writes.append(
                (
                    k,
                    _regions.local_box_index(box, common),
                    backend.move(sub_mask, row_device, device),
                    backend.move(selected, row_device, device),
                )
            )
    return writes


def _write_masked(x: DistArray, mask, writes: list) -> None:
    """The `writes` (chunk, index into it, mask piece, values) made, in one `commit`: in a
    partial mode, the copies an element's owner does not hold get the identity, each
    shadowed region's new content computed first (its unselected elements keep theirs)."""
    layout, backend = x.layout, x.storage.backend
    shadow_masks = None
    if x.mode.is_partial and layout.has_overlaps:
        shadow_masks = _mask_pieces(mask, layout, backend)
    buffers = x.storage.writable(
        None if shadow_masks is not None else sorted({k for k, *_ in writes})
    )
    assigns = [
        (layout.chunk_devices[k], buffers[k][index], (piece_mask,), piece)
        for k, index, piece_mask, piece in writes
    ]
    if shadow_masks is not None:
        identity = exact_array(backend.xp, x.mode.identity(x.dtype))
        for k, device in enumerate(layout.chunk_devices):
            with backend.on(device):
                for index in layout.shadowed[k]:
                    shadow = _regions.apply_index(buffers[k], index, backend.xp).copy()
                    sub_mask = _regions.apply_index(shadow_masks[k], index[: mask.ndim], backend.xp)
                    shadow[sub_mask] = identity
                    assigns.append((device, buffers[k], index, shadow))
    commit(backend, assigns)


# Integer arrays along one axis ----------------------------------------------------------


def host_indices(indices, n: int, axis: int) -> np.ndarray:
    """`indices` (1-D ints: a list, NumPy array or DistArray) on the host, negative ones
    counted from the end, checked against an axis of length `n` as NumPy checks them; a
    1-D boolean mask of the axis as the positions it selects."""
    if isinstance(indices, DistArray):
        host = to_host(indices.storage, indices.mode)
    else:
        host = np.asarray(indices)
        if isinstance(indices, list) and not host.size:
            host = host.astype(np.intp)
    if host.dtype.kind == "b":  # a mask along the axis: its positions
        if host.shape != (n,):
            raise IndexError(
                f"boolean index did not match indexed array along axis {axis}; size of axis "
                f"is {n} but size of corresponding boolean axis is {len(host)}"
            )
        return np.flatnonzero(host)
    if host.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    bad = (host < -n) | (host >= n)
    if bad.any():
        raise IndexError(f"index {host[bad][0]} is out of bounds for axis {axis} with size {n}")
    return np.where(host < 0, host + n, host).astype(np.intp)


def take_rows(x: DistArray, indices: np.ndarray, axis: int, along: int | None = None) -> DistArray:
    """x at `indices` (normalized host ints, see `host_indices`) along `axis`.

    The result is in blocks along `axis` (or `along`) over x's devices, full along the other axes;
    each chunk fetches each distinct row it needs once, as runs of consecutive rows
    (`regions_value`, local copies first, every chunk's in one step), so only the
    requested rows move.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.arange(6).reshape(3, 2))
    >>> with mdarray.options(fallback="raise"):
    ...     y = x[[2, 0, 2]]
    >>> y.get()
    array([[4, 5],
           [0, 1],
           [4, 5]])
    """
    shape = list(x.shape)
    shape[axis] = len(indices)
    along = axis if along is None else along
    layout = Layout.block(tuple(shape), axis=along, devices=x.layout.devices)
    storage, backend = x.storage, x.storage.backend
    if not int(np.prod(shape)):
        return wrap(Chunks.empty(layout, x.dtype, backend), REPLICA)
    xp = backend.xp
    # Per result chunk, the runs of distinct rows it needs: all fetched in one step.
    runs, inverses = [], []
    for t, box_t in enumerate(layout.boxes):
        wanted = indices[_regions.to_slice(box_t[axis])]
        rows, inverse = np.unique(wanted, return_inverse=True)
        starts = np.flatnonzero(np.diff(rows, prepend=rows[0] - 2) != 1) if len(rows) else rows[:0]
        stops = [*starts[1:], len(rows)]
        box = list(_regions.full_box(x.shape))
        if along != axis:
            box[along] = box_t[along]
        for a, b in zip(starts, stops):
            box[axis] = range(int(rows[a]), int(rows[b - 1]) + 1)
            runs.append((t, tuple(box)))
        inverses.append(inverse)
    replica = change_mode(storage, x.mode, REPLICA)
    fetched = regions_value(
        replica, [r for _, r in runs], [layout.chunk_devices[t] for t, _ in runs]
    )
    pieces: dict = {}
    for (t, _), piece in zip(runs, fetched):
        pieces.setdefault(t, []).append(piece)

    def make(t):
        device = layout.chunk_devices[t]
        if t not in pieces:
            return backend.empty(layout.chunk_shapes[t], x.dtype, device)
        parts = pieces[t]
        block = parts[0] if len(parts) == 1 else xp.concatenate(parts, axis=axis)
        positions = backend.from_host(inverses[t].reshape(-1).astype(np.intp), device)
        return xp.take(block, positions, axis=axis)

    return wrap(Chunks.generate(layout, backend, make, x.dtype), REPLICA)


def is_int_vector(indices, kinds: str = "iu", ndims: range = range(1, 2)) -> bool:
    """Whether `indices` is a 1-D index (a list, NumPy array or DistArray; of a number of
    dimensions in `ndims`) of a dtype of one of `kinds` (integers; indexing passes floats
    too, for NumPy's IndexError)."""
    if isinstance(indices, (DistArray, np.ndarray)):
        return indices.ndim in ndims and indices.dtype.kind in kinds
    if isinstance(indices, list):
        host = np.asarray(indices)
        return host.ndim in ndims and (host.dtype.kind in kinds or not host.size)
    return False


# nonzero, argwhere, compress, extract ----------------------------------------------------


def _local_nonzero(x: DistArray):
    """x's row blocks (see `_in_row_blocks`), each chunk's ``argwhere`` in global
    positions, and the layout of their concatenation."""
    storage = _in_row_blocks(x)
    layout, backend = storage.layout, storage.backend
    found: list = [None] * len(layout.chunks)  # another process finds its own, and shares the count
    for k, device, buffer in local_chunks(storage):
        with backend.on(device):
            positions = backend.xp.argwhere(buffer)
            positions[:, 0] += layout.boxes[k][0].start
            found[k] = positions
    shared = merged_everywhere({k: int(f.shape[0]) for k, f in enumerate(found) if f is not None})
    result, _ = _compacted_layout(layout, [shared[k] for k in range(len(found))], (x.ndim,))
    return found, result, backend


def nonzero(x: DistArray) -> tuple[DistArray, ...]:
    """The indices of x's non-zero elements, one 1-D DistArray per axis (x of at least
    one axis).

    Each row block finds its own non-zero elements and offsets them by its first row;
    x moves only where it is not in row blocks (a reshard to blocks along axis 0). The
    results' chunk sizes are the per-chunk counts, read on the host (and shared between
    the processes of an SPMD run).

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([[0, 1], [2, 0]]))
    >>> with mdarray.options(fallback="raise"):
    ...     rows, cols = np.nonzero(x)
    >>> rows.get(), cols.get()
    (array([0, 1]), array([1, 0]))
    """
    found, layout, backend = _local_nonzero(x)
    vector = Layout(
        (layout.shape[0],), {d: [i[:1] for i in c] for d, c in layout.index_map.items()}
    )
    return tuple(
        wrap(Chunks.generate(vector, backend, _column(found, a), np.intp), REPLICA)
        for a in range(x.ndim)
    )


def _column(found: list, axis: int):
    return lambda k: found[k][:, axis].copy()


@implements(np.argwhere, spmd=True)
def _argwhere(a):
    """``numpy.argwhere`` as `nonzero` finds the positions (row blocks, no gather)."""
    if not isinstance(a, DistArray) or not a.ndim:
        return fallback(np.argwhere, (a,), {}, "numpy.argwhere")
    found, layout, backend = _local_nonzero(a)
    return wrap(Chunks.generate(layout, backend, lambda k: found[k], np.intp), REPLICA)


@implements(np.extract, spmd=True)
def _extract(condition, arr):
    """``numpy.extract``: ``arr[condition != 0]`` by `mask_getitem` where `condition` has
    arr's shape."""
    if not isinstance(arr, DistArray) or not arr.ndim or np.shape(condition) != arr.shape:
        return fallback(np.extract, (condition, arr), {}, "numpy.extract")
    if getattr(condition, "dtype", None) != np.bool_:
        condition = np.not_equal(condition, 0)
    return mask_getitem(arr, condition)


@implements(np.compress, spmd=True)
def _compress(condition, a, axis=None, out=None):
    """``numpy.compress`` along an axis: the condition read on the host, then `take_rows`
    of its true positions (only the selected rows move)."""
    if out is not None or not isinstance(a, DistArray) or (axis is None and a.ndim != 1):
        kwargs = {"axis": axis, "out": out}
        return fallback(np.compress, (condition, a), kwargs, "numpy.compress")
    if isinstance(condition, DistArray):
        condition = to_host(condition.storage, condition.mode)
    condition = np.asarray(condition)
    if condition.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    axis = normalize_axis_index(0 if axis is None else axis, a.ndim)
    return take_rows(a, host_indices(np.flatnonzero(condition), a.shape[axis], axis), axis)
