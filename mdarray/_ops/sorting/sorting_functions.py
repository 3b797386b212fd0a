"""Sorting functions: sort and argsort, without gathering.

Along an axis that no chunk splits each chunk sorts its own lanes: nothing moves. A 1-D
array split in chunks is sorted by a *sample sort*: each piece of it (each element once,
local chunks first) sorts itself; regular samples of the sorted pieces go to the host
(a few per piece) and give one splitter per boundary of the result; each piece cuts
itself at the splitters (``searchsorted``) and sends each part to the result chunk of
its value range, once; each result chunk merges what it received. The result is in
blocks along the axis, on the array's devices, their sizes following the splitters. An
N-D array split along the sort axis is first resharded into blocks along another axis
(one movement), then sorted per chunk.

argsort carries each element's global index along; ties are broken by that index, so
the order is stable. A descending sort is an ascending stable sort of the reversed axis,
reversed back (reversing is a relabeling of the chunks, no data moves): equal elements
then keep their original order, as the array API asks. NaNs sort last, as in NumPy.
"""

from __future__ import annotations

import operator
from typing import cast

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from mdarray._array.array import DistArray, wrap
from mdarray._backends.backend import Backend
from mdarray._core import regions as _regions
from mdarray._core.modes import REPLICA
from mdarray._core.registry import implements
from mdarray._exec.chunkwise import map_kernel
from mdarray._layouts.layout import Layout
from mdarray._movement import redistribute as _redistribute
from mdarray._movement.collectives import merged_everywhere
from mdarray._movement.fetch import fetch_pieces
from mdarray._ops.creation.creation_functions import asarray
from mdarray._ops.engine.fallback import fallback
from mdarray._ops.shape.manipulation_functions import flip, reshape
from mdarray._storage import local as _this_process
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import is_placeholder, placed, placeholder


def _per_chunk(x: DistArray, axis: int, arg: bool) -> DistArray:
    """Each chunk sorts its own lanes along `axis` (a whole axis in every chunk)."""
    backend = x.storage.backend
    xp, keys = backend.xp, backend.sort_keys
    if arg:
        return wrap(
            map_kernel(x.storage, lambda c: xp.argsort(keys(c), axis=axis, kind="stable"), np.intp)
        )
    return wrap(map_kernel(x.storage, lambda c: stable_sort(xp, keys(c), axis)))


def sorted_along(x: DistArray, axis: int | None, arg: bool) -> DistArray:
    """`x` sorted (stably) along `axis` (None: flattened), or with `arg` the indices that
    sort it, as NumPy's ``sort`` and ``argsort`` with ``stable=True``."""
    if x.mode.is_partial:
        x = x.change_mode(REPLICA)
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    if x.ndim == 0:
        if arg:  # NumPy's argsort takes a 0-d array as 1-D
            return sorted_along(reshape(x, (1,)), axis, True)
        raise np.exceptions.AxisError(axis, 0)
    axis = normalize_axis_index(operator.index(axis), x.ndim)
    if x.size == 0 or not x.layout.splits(axis):
        return _per_chunk(x, axis, arg)
    if x.ndim > 1:
        return _per_chunk(x.reshard(x.layout.whole_along(axis)), axis, arg)
    values, indices = sample_sort(x, arg)
    return cast(DistArray, indices) if arg else values


def _positions(backend: Backend, index, n: int, device):
    """The global positions (intp, on `device`) that `index` (a slice or integers) of a
    1-D array of length `n` picks."""
    if isinstance(index, slice):
        r = range(n)[index]
        with backend.on(device):
            return backend.xp.arange(r.start, r.stop, r.step, dtype=np.intp)
    return backend.from_host(np.asarray(index, np.intp), device)


def _first(index, n: int) -> int:
    """The first position `index` (a slice or integers) picks; n when none."""
    if isinstance(index, slice):
        r = range(n)[index]
        return r[0] if len(r) else n
    return int(np.min(index, initial=n))


def _is_run(index, n: int) -> bool:
    """Whether `index` picks consecutive positions in increasing order."""
    if isinstance(index, slice):
        return len(range(n)[index]) < 2 or range(n)[index].step == 1
    return bool(np.all(np.diff(index) == 1))


def runs(x: DistArray) -> list:
    """The pieces ``(device, array)`` of 1-D REPLICA `x`, runs of consecutive elements
    in order, each element once (local views where `x`'s layout allows; else `x` is
    resharded into blocks first), empty ones left out; a `Remote` for another process's
    piece."""
    layout, (n,) = x.layout, x.shape
    plan = _redistribute.replica_plan(layout, _regions.full_box(x.shape), layout.chunk_devices[0])
    if not all(_is_run(piece[1][0], n) for piece in plan):
        return runs(x.reshard(Layout.block(x.shape, devices=layout.devices)))
    buffers, xp = x.storage.buffers, x.storage.backend.xp

    def piece(k: int, chunk_index):
        if is_placeholder(buffers[k]):  # another process's: its shape only
            shape = _regions.index_shape(chunk_index, layout.chunk_shapes[k])
            return placeholder(shape, x.dtype, layout.chunk_devices[k])
        return _regions.apply_index(buffers[k], chunk_index, xp)

    return [
        (layout.chunk_devices[k], piece(k, chunk_index))
        for k, region_index, chunk_index in sorted(plan, key=lambda piece: _first(piece[1][0], n))
        if _first(region_index[0], n) < n
    ]


def to_host(backend: Backend, arrays: list, devices: list) -> list:
    """Small arrays read to the host (samples, cut points)."""
    out = []
    for array, device in zip(arrays, devices):
        host = backend.host_empty(array.shape, array.dtype)
        backend.to_host_into(host, array, device)
        out.append(host)
    backend.synchronize(sorted(set(devices)))
    return out


# Regular samples each piece sends the host per result chunk. Where the pieces are alike
# (random values) their samples fall in groups by quantile, and a splitter lands up to half
# a group's spacing from its quantile: with one sample per chunk the first of four blocks
# came out 3/8 of the array.
_SAMPLES_PER_PART = 4


def _cuts(backend: Backend, pieces: list, parts: int, dtype, in_order: bool) -> list:
    """Per piece (sorted), where it is cut for the `parts` result chunks: host arrays
    of ``parts + 1`` positions, the same on every process of an SPMD run.

    Regular samples of each piece, read by the host (and shared between processes),
    give the splitters. Where the pieces are runs in order, an element's key is (value,
    piece, position in the piece): the order of (value, global index), so ties are cut
    too and a value held by many elements spreads over several result chunks. Otherwise
    the key is the value (equal elements land in one chunk; the merge orders them by
    index).
    """
    xp = backend.xp
    count = _SAMPLES_PER_PART * parts
    steps = [max(1, values.shape[0] // count) for _, values, _ in pieces]
    own = [p for p, _ in _this_process.mine([device for device, _, _ in pieces])]
    read = to_host(
        backend,
        [pieces[p][1][steps[p] // 2 :: steps[p]][:count] for p in own],
        [pieces[p][0] for p in own],
    )
    shared = merged_everywhere(dict(zip(own, read)))
    samples = [shared[p] for p in range(len(pieces))]
    # Samples listed by (piece, position): a stable sort by value orders them by key.
    values = np.concatenate([np.empty(0, dtype), *samples])
    piece_of = np.concatenate(
        [np.empty(0, np.intp), *(np.full(len(h), p, np.intp) for p, h in enumerate(samples))]
    )
    position = np.concatenate(
        [np.empty(0, np.intp), *(s // 2 + s * np.arange(len(h)) for s, h in zip(steps, samples))]
    )
    order = np.argsort(values, kind="stable")
    chosen = order[(np.arange(1, parts) * len(order)) // parts]
    splitters = values[chosen]
    bounds = []
    for p in own:
        device, values_p, _ = pieces[p]
        with backend.on(device):
            on_device = backend.from_host(splitters, device)
            bounds.append(xp.searchsorted(values_p, on_device, side="left"))
            bounds.append(xp.searchsorted(values_p, on_device, side="right"))
    read = to_host(backend, bounds, [pieces[p][0] for p in own for _ in range(2)])
    shared = merged_everywhere({p: (read[2 * i], read[2 * i + 1]) for i, p in enumerate(own)})
    out = []
    for p, (_, values_p, _) in enumerate(pieces):
        left, right = shared[p]
        cut = left.astype(np.intp)
        if in_order:
            before = piece_of[chosen] > p  # the splitter's piece comes later: ties go left
            cut = np.where(before, right, cut)
            here = piece_of[chosen] == p
            cut = np.where(here, position[chosen], cut)
        out.append(np.concatenate([[0], cut, [values_p.shape[0]]]).astype(np.intp))
    return out


def stable_sort(xp, values, axis: int):
    """`values` sorted along `axis`, bit for bit as a stable sort leaves them. NumPy's
    stable sort of floats (a merge sort) is some ten times slower than its default one
    (SIMD), and the two differ only in the order of elements that compare equal but
    differ in bits: signed zeros and NaNs. So on NumPy chunks of real floats the default
    sort runs, and the zeros and NaNs of each lane are then written back in their order
    of appearance (the zeros' run starts at the count of negatives, the NaNs end the
    lane). Of several lanes, those holding a zero or a NaN are sorted again, stably.
    Other dtypes and CuPy (whose sort is stable) take the stable sort."""
    if xp is not np or values.dtype.kind != "f":
        return xp.sort(values, axis=axis, kind="stable")
    if values.ndim != 1:
        result = np.sort(values, axis=axis)
        lanes = np.moveaxis(values, axis, -1)
        special = (lanes == 0).any(axis=-1) | np.isnan(lanes).any(axis=-1)
        if special.any():
            np.moveaxis(result, axis, -1)[special] = np.sort(lanes[special], kind="stable")
        return result
    result = np.sort(values)
    # The runs of zeros and of NaNs, found by bisection of the sorted lane; only a lane
    # that holds some reads its input again.
    zero, nan = result.dtype.type(0), result.dtype.type(np.nan)  # no cast of the lane
    low, high = np.searchsorted(result, zero, "left"), np.searchsorted(result, zero, "right")
    if high > low:
        result[low:high] = values[values == 0]
    first_nan = np.searchsorted(result, nan, "left")
    if first_nan < result.size:
        result[first_nan:] = values[np.isnan(values)]
    return result


def sample_sort(x: DistArray, with_indices: bool) -> tuple[DistArray, DistArray | None]:
    """1-D REPLICA `x` sorted by a sample sort (see the module docstring), and with
    `with_indices` the stable order of its elements (global indices, intp).

    Each element moves once between devices (with its index for `with_indices`), the
    parts bound for each result chunk in one step; the host reads a few samples and the
    cut points of each piece (shared between the processes of an SPMD run), and sends
    the splitters back.
    """
    chunks = x.storage
    backend, layout, dtype, (n,) = chunks.backend, chunks.layout, chunks.dtype, x.shape
    xp = backend.xp
    targets = layout.devices
    buffers = chunks.buffers
    plan = _redistribute.replica_plan(layout, _regions.full_box(x.shape), layout.chunk_devices[0])
    # Without indices, a stable merge needs the pieces to be runs of consecutive elements,
    # taken in order (signed zeros tell their order apart); other layouts carry indices.
    runs = sorted(plan, key=lambda piece: _first(piece[1][0], n))
    if not with_indices and not all(_is_run(piece[1][0], n) for piece in runs):
        return sample_sort(x, True)
    # With one target device there is nothing to split: the pieces go to the merge as
    # they are, which sorts them once (a local sort first would sort everything twice).
    split = len(targets) > 1
    pieces: list = []  # (device, values (sorted where split), their global indices or None)
    held = dict(_this_process.mine(layout.chunk_devices))
    for k, region_index, chunk_index in runs:
        device = layout.chunk_devices[k]
        (length,) = _regions.index_shape(chunk_index, layout.chunk_shapes[k])
        if not length:
            continue
        if k not in held:  # its process sorts it
            remote = placeholder((length,), np.intp, device) if with_indices else None
            pieces.append((device, placeholder((length,), dtype, device), remote))
            continue
        with backend.on(device):
            values = _regions.apply_index(buffers[k], chunk_index, xp)
            index = None
            if with_indices:
                index = _positions(backend, region_index[0], n, device)
                if split:
                    values = backend.sort_keys(values)
                    order = xp.argsort(values, kind="stable")
                    values, index = values[order], index[order]
            elif split:
                values = stable_sort(xp, backend.sort_keys(values), 0)
            pieces.append((device, values, index))
    in_order = all(_is_run(piece[1][0], n) for piece in runs)
    if split:
        cuts = _cuts(backend, pieces, len(targets), dtype, in_order)
    else:
        cuts = [np.array([0, values.shape[0]]) for _, values, _ in pieces]
    sizes = [sum(int(c[t + 1] - c[t]) for c in cuts) for t in range(len(targets))]
    starts = np.cumsum([0, *sizes])
    result_layout = Layout(
        (n,), {d: [slice(int(starts[t]), int(starts[t + 1]), 1)] for t, d in enumerate(targets)}
    )
    received = _sent(backend, pieces, cuts, targets, dtype, with_indices)
    merged_values: list = [None] * len(targets)  # another process merges its own
    merged_indices: list = [None] * len(targets)
    for t, target in _this_process.mine(targets):
        parts, index_parts = received[t]
        with backend.on(target):
            if not parts:
                merged_values[t] = backend.empty((0,), dtype, target)
                merged_indices[t] = backend.empty((0,), np.intp, target)
                continue
            values = backend.sort_keys(xp.concatenate(parts))
            if not with_indices:
                merged_values[t] = stable_sort(xp, values, 0)
                continue
            # Ties broken by the global index: order by index, then stably by value.
            index = xp.concatenate(index_parts)
            by_index = xp.argsort(index)
            values, index = values[by_index], index[by_index]
            order = xp.argsort(values, kind="stable")
            merged_values[t] = values[order]
            merged_indices[t] = index[order]
    sorted_values = _result(result_layout, merged_values, backend, dtype)
    if not with_indices:
        return sorted_values, None
    return sorted_values, _result(result_layout, merged_indices, backend, np.intp)


def _result(layout: Layout, buffers: list, backend: Backend, dtype) -> DistArray:
    filled = placed(buffers, layout.chunk_shapes, layout.chunk_devices, dtype)
    return wrap(Chunks.of(layout, filled, backend, dtype))


def _sent(backend: Backend, pieces: list, cuts: list, targets, dtype, with_indices: bool) -> list:
    """Per target device, the parts of the pieces cut for it (values, and indices with
    `with_indices`), moved in one step: the pieces are the chunks of a layout of their
    own (each in its place in the order of `pieces`), read through `fetch_pieces`."""
    values_chunks, chunk_of = as_chunks([(d, v) for d, v, _ in pieces], backend, dtype)
    wanted = [
        (chunk_of[p], (slice(int(c[t]), int(c[t + 1])),), target)
        for t, target in enumerate(targets)
        for p, c in enumerate(cuts)
        if c[t + 1] > c[t]
    ]
    got_values = fetch_pieces(values_chunks, wanted)
    got_indices = (
        fetch_pieces(as_chunks([(d, i) for d, _, i in pieces], backend, np.intp)[0], wanted)
        if with_indices
        else [None] * len(wanted)
    )
    out: list = [([], []) for _ in targets]
    for (_, _, target), value, index in zip(wanted, got_values, got_indices):
        t = targets.index(target)
        out[t][0].append(value)
        out[t][1].append(index)
    return out


def as_chunks(pieces: list, backend: Backend, dtype) -> tuple[Chunks, list]:
    """The non-empty arrays `pieces` ``(device, array)`` (a `Remote` for another
    process's) as the chunks of a 1-D layout of their own, one after another, so that
    `fetch_pieces` moves parts of them; and per piece its chunk number there."""
    index_map: dict = {}
    offset = 0
    for device, array in pieces:
        index_map.setdefault(device, []).append(slice(offset, offset + array.shape[0]))
        offset += array.shape[0]
    layout = Layout((offset,), index_map)
    order = [p for device in index_map for p, piece in enumerate(pieces) if piece[0] == device]
    chunk_of = [0] * len(pieces)
    for c, p in enumerate(order):
        chunk_of[p] = c
    return Chunks.of(layout, [pieces[p][1] for p in order], backend, dtype), chunk_of


_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


@implements(np.sort, spmd=True)
def _sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``numpy.sort``: every kind sorts stably here (the values are the same)."""
    if not isinstance(a, DistArray) or order is not None or kind not in _KINDS:
        args = {"axis": axis, "kind": kind, "order": order, "stable": stable}
        return fallback(np.sort, (a,), args, "numpy.sort")
    return sorted_along(a, axis, arg=False)


@implements(np.argsort, spmd=True)
def _argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``numpy.argsort``: stable whatever the kind (a stable order is a valid one)."""
    if not isinstance(a, DistArray) or order is not None or kind not in _KINDS:
        args = {"axis": axis, "kind": kind, "order": order, "stable": stable}
        return fallback(np.argsort, (a,), args, "numpy.argsort")
    return sorted_along(a, axis, arg=True)


def sort(
    x: DistArray, /, *, axis: int = -1, descending: bool = False, stable: bool = True
) -> DistArray:
    """A sorted copy of `x` along `axis` (array API); NaNs sort last, as in NumPy
    (first when `descending`).

    Along an axis no chunk splits nothing moves; a split 1-D array is sample sorted
    (each element moves once) and an N-D one resharded so the axis is whole (see the
    module docstring).

    Parameters
    ----------
    x : DistArray
        The array to sort.
    axis : int
        The axis to sort along (the last by default).
    descending : bool
        Sort from largest to smallest.
    stable : bool
        Keep equal elements in their original order (always so when `descending`).

    Returns
    -------
    DistArray
        The sorted array, of `x`'s shape and dtype.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([3, 1, 2]))
    >>> with mdarray.options(fallback="raise"):
    ...     mdarray.sort(x, descending=True).get()
    array([3, 2, 1])
    """
    x = asarray(x)
    if descending:
        backward = cast(DistArray, np.sort(flip(x, axis=axis), axis=axis, stable=True))
        return flip(backward, axis=axis)
    return cast(DistArray, np.sort(x, axis=axis, stable=stable))


def argsort(
    x: DistArray, /, *, axis: int = -1, descending: bool = False, stable: bool = True
) -> DistArray:
    """The indices that sort `x` along `axis` (array API); equal elements keep their
    order when `stable`, descending included.

    Moves as `sort` does, each element with its global index where the sample sort runs.

    Parameters
    ----------
    x : DistArray
        The array to sort.
    axis : int
        The axis to sort along (the last by default).
    descending : bool
        Sort from largest to smallest.
    stable : bool
        Keep equal elements in their original order (always so when `descending`).

    Returns
    -------
    DistArray
        Indices along `axis` (default index dtype), of `x`'s shape.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([3, 1, 3, 2]))
    >>> with mdarray.options(fallback="raise"):
    ...     mdarray.argsort(x, descending=True).get()
    array([0, 2, 3, 1])
    """
    x = asarray(x)
    if descending:
        if x.ndim == 0:  # NumPy's argsort takes a 0-d array as 1-D
            x = reshape(x, (1,))
        # Positions in the reversed axis, counted back from its end.
        backward = cast(DistArray, np.argsort(flip(x, axis=axis), axis=axis, stable=True))
        reversed_order = flip(backward, axis=axis)
        return (x.shape[axis] - 1) - reversed_order
    return cast(DistArray, np.argsort(x, axis=axis, stable=stable))
