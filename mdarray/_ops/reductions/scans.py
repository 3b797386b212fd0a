"""Scans: ``cumsum``, ``cumprod``, ``cumulative_sum``, ``cumulative_prod`` and
``ufunc.accumulate``.

Each chunk is scanned locally; along an axis that chunks split, each chunk then combines
in its carry: the totals of the chunks before it (their last slices along the axis),
gathered to the host once (`_fetch.gather_host`, collective in an SPMD run) and scanned
there in one running combination over the chunks' starts (`_carry_plan`), so the work
grows linearly with the number of chunks along the axis. Scans whose ufunc cannot be
reordered gather the axis into one chunk first.
"""

from __future__ import annotations

import builtins
import operator
from typing import cast

import numpy as np
from numpy.typing import DTypeLike

from mdarray._array.array import DistArray, laid_out, wrap
from mdarray._core import regions as _regions
from mdarray._core.mode_rules import REORDERABLE
from mdarray._core.modes import REPLICA
from mdarray._core.plan_cache import plan_cache
from mdarray._core.registry import implements, implements_ufunc_method
from mdarray._exec.chunkwise import write_out
from mdarray._layouts.layout import Layout
from mdarray._movement.fetch import gather_host
from mdarray._ops.engine import reduction as _reduction
from mdarray._ops.engine.fallback import fallback
from mdarray._storage import local as _this_process
from mdarray._storage.local import placed

# Scans ------------------------------------------------------------------------------


def _flatten(x: DistArray) -> DistArray:
    """`x` as 1-D in C order: blocks of whole rows are contiguous runs of the flat array,
    so a reshard to row blocks and a local reshape per chunk suffice."""
    if x.ndim == 1:
        return x
    if x.ndim == 0:
        layout = Layout(
            (1,), {d: [slice(0, 1)] * x.layout.chunk_devices.count(d) for d in x.devices}
        )
        return wrap(x.storage.view(layout, lambda _, c: c.reshape(1)), x.mode)
    rows = laid_out(x, Layout.block(x.shape, axis=0, devices=x.devices))
    row = int(np.prod(x.shape[1:], dtype=np.int64))
    index_map: dict = {}
    for box, device in zip(rows.layout.boxes, rows.layout.chunk_devices):
        index_map.setdefault(device, []).append(slice(box[0].start * row, box[0].stop * row))
    layout = Layout((x.size,), index_map)
    return wrap(rows.storage.view(layout, lambda _, c: c.reshape(-1)), rows.mode)


@plan_cache
def _carry_plan(layout: Layout, axis: int) -> tuple:
    """The totals grid of a scan along `axis` over `layout`'s chunks (no overlaps).

    Its axis `axis` has one position per distinct start of the chunks along `axis`
    (sorted), the others are the array's: ``(shape, pieces, holes, segments)`` where
    `pieces` lists ``(k, grid_index, chunk_index)``, chunk k's last slice along `axis`
    (chunk_index) placed at its start's position (grid_index), `holes` is None or a
    boolean grid of the positions no chunk starts at, and `segments` gives each chunk's
    start position (None for an empty chunk). Chunks that share other-axis positions are
    disjoint along `axis`, so the running combination of the grid along `axis`, one
    position before a chunk's, is its carry. Sizes: the grid holds one slice per start;
    the plan costs a sort of the starts."""
    starts = sorted({box[axis][0] for box in layout.boxes if _regions.box_size(box)})
    position = {start: i for i, start in enumerate(starts)}
    shape = (*layout.shape[:axis], len(starts), *layout.shape[axis + 1 :])
    pieces = []
    segments: list = []
    covered = 0
    for k, box in enumerate(layout.boxes):
        if not _regions.box_size(box):
            segments.append(None)
            continue
        s = position[box[axis][0]]
        segments.append(s)
        grid_box = (*box[:axis], range(s, s + 1), *box[axis + 1 :])
        last = len(box[axis]) - 1
        chunk_index = tuple(
            slice(last, last + 1, 1) if a == axis else slice(0, len(r), 1)
            for a, r in enumerate(box)
        )
        pieces.append((k, tuple(map(_regions.to_slice, grid_box)), chunk_index))
        covered += _regions.box_size(grid_box)
    holes = None
    if covered != _regions.box_size(_regions.full_box(shape)):
        holes = np.ones(shape, bool)
        for _, grid_index, _ in pieces:
            holes[grid_index] = False
    return shape, tuple(pieces), holes, tuple(segments)


def _scan_ready(layout: Layout, axis: int) -> bool:
    return not layout.has_overlaps and builtins.all(
        box[axis].step == 1 or len(box[axis]) <= 1 for box in layout.boxes
    )


def scan(x: DistArray, ufunc, axis: int, dtype, result_dtype, include_initial: bool = False):
    """`ufunc` accumulated along `axis`: local scans plus the carry of earlier chunks."""
    result_dtype = np.dtype(result_dtype)
    if x.mode.is_partial:
        x = x.change_mode(REPLICA)
    value = _reduction.identity(ufunc, result_dtype)
    reorderable = ufunc in REORDERABLE and value is not None
    if not reorderable:
        x = x.reshard(x.layout.whole_along(axis))
    elif not _scan_ready(x.layout, axis):
        x = x.reshard(Layout.block(x.shape, axis=axis, devices=x.devices))
    backend = x.storage.backend
    scans = x.storage.map(
        lambda chunk: backend.accumulate(ufunc, chunk, axis, dtype), dtype=result_dtype
    )
    if reorderable:
        scans = _add_carries(scans, ufunc, axis, value)
    result = wrap(scans)
    if include_initial:
        result = _with_initial_slice(result, axis, value)
    return result


def _add_carries(chunks, ufunc, axis, value):
    """Per chunk, its local scan combined with its carry: the totals of the chunks
    before it (their last slices along `axis`), gathered to the host once and combined
    there in one running scan over the chunks' starts (`_carry_plan`), so the work grows
    linearly with the number of chunks along the axis."""
    layout, backend = chunks.layout, chunks.backend
    shape, pieces, holes, segments = _carry_plan(layout, axis)
    if shape[axis] < 2:
        return chunks
    grid = gather_host(chunks, pieces, shape, None)  # collective in an SPMD run
    if holes is not None:
        grid[holes] = value
    running = ufunc.accumulate(grid, axis=axis)  # the grid has the result's dtype
    combine = getattr(backend.xp, ufunc.__name__)
    scans = chunks.buffers
    out = list(scans)
    for k, device in _this_process.mine(layout.chunk_devices):
        box, s = layout.boxes[k], segments[k]
        if not s:
            continue
        index = tuple(
            slice(s - 1, s, 1) if a == axis else _regions.to_slice(r) for a, r in enumerate(box)
        )
        carry = backend.from_host(np.ascontiguousarray(running[index]), device)
        with backend.on(device):
            out[k] = combine(scans[k], carry)
    return chunks.derive(buffers=out)


def _with_initial_slice(x: DistArray, axis: int, value) -> DistArray:
    """`x` with one leading slice of `value` along `axis` (``include_initial``): the
    chunks move up by one and a new chunk holds the slice, so nothing is copied."""
    shape = (*x.shape[:axis], x.shape[axis] + 1, *x.shape[axis + 1 :])
    backend = x.storage.backend
    first = x.layout.chunk_devices[0]
    pieces = [
        (first, tuple(slice(0, 1) if a == axis else slice(None) for a in range(x.ndim)), None)
    ]
    for (device, index), chunk in zip(x.layout.chunks, x.storage.buffers):
        moved = index[axis]
        shifted = slice(moved.start + 1, moved.stop + 1, moved.step)
        pieces.append((device, (*index[:axis], shifted, *index[axis + 1 :]), chunk))
    index_map: dict = {}
    for device, index, _ in pieces:
        index_map.setdefault(device, []).append(index)
    layout = Layout(shape, index_map)
    slab = tuple(1 if a == axis else n for a, n in enumerate(shape))
    fill: list = [None]  # another process fills its own
    for _, device in _this_process.mine((first,)):
        fill[0] = backend.full(slab, value, x.dtype, device)
    pieces[0] = (first, pieces[0][1], placed(fill, (slab,), (first,), x.dtype)[0])
    data = [chunk for device in index_map for d, _, chunk in pieces if d == device]
    return wrap(x.storage.derive(layout, data), x.mode)


def _scanner(func, ufunc, *, accumulate: bool = False, include_initial: bool = False):
    """The DistArray implementation of NumPy's scan `func` (``np.cumsum`` ...)."""
    name = getattr(func, "__name__", "accumulate")

    def impl(a, axis, dtype, out, initial: bool = False):
        args = {"axis": axis, "dtype": dtype, "out": out}
        if include_initial:
            args["include_initial"] = initial
        if not isinstance(a, DistArray):
            return fallback(func, (a,), args, f"numpy.{name}")
        out = _reduction.unwrap_out(out)
        probe_args = {k: v for k, v in args.items() if k != "out"}
        checked = _reduction.check_with_probe(func, a, out, probe_args)
        x = a
        if (axis is None or a.ndim == 0) and not accumulate:
            x, axis = _flatten(a), 0
        axis = operator.index(axis) % builtins.max(x.ndim, 1)
        if x.size == 0:
            shape = list(x.shape)
            shape[axis] += int(bool(initial))
            result = _reduction.filled(x, tuple(shape), checked, checked.dtype)
        else:
            local_dtype = dtype if accumulate else checked.dtype
            result = scan(x, ufunc, axis, local_dtype, checked.dtype, bool(initial))
        return result if out is None else write_out(out, result)

    return impl


_cumsum = _scanner(np.cumsum, np.add)
_cumprod = _scanner(np.cumprod, np.multiply)
_cumulative_sum = _scanner(np.cumulative_sum, np.add, include_initial=True)
_cumulative_prod = _scanner(np.cumulative_prod, np.multiply, include_initial=True)


@implements(np.cumsum, spmd=True)
def _np_cumsum(a, axis=None, dtype=None, out=None):
    return _cumsum(a, axis, dtype, out)


@implements(np.cumprod, spmd=True)
def _np_cumprod(a, axis=None, dtype=None, out=None):
    return _cumprod(a, axis, dtype, out)


@implements(np.cumulative_sum, spmd=True)
def _np_cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative_sum(x, axis, dtype, out, include_initial)


@implements(np.cumulative_prod, spmd=True)
def _np_cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative_prod(x, axis, dtype, out, include_initial)


@implements_ufunc_method("accumulate", spmd=True)
def ufunc_accumulate(ufunc, inputs, kwargs):
    """``np.<ufunc>.accumulate`` of a DistArray (a scan with carries between chunks)."""
    kwargs = dict(kwargs)
    (array,) = inputs
    func = _scanner(ufunc.accumulate, ufunc, accumulate=True)
    return func(array, kwargs.pop("axis", 0), kwargs.pop("dtype", None), kwargs.pop("out", None))


# Array API functions ------------------------------------------------------------------


def cumulative_sum(
    x: DistArray,
    /,
    *,
    axis: int | None = None,
    dtype: DTypeLike | None = None,
    include_initial: bool = False,
) -> DistArray:
    """The cumulative sum along `axis` (array API): a scan with carries between chunks.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(1, 5), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> mdarray.cumulative_sum(x, include_initial=True).get()
    array([ 0,  1,  3,  6, 10])
    """
    return cast(
        DistArray,
        np.cumulative_sum(x, axis=axis, dtype=dtype, include_initial=include_initial),
    )


def cumulative_prod(
    x: DistArray,
    /,
    *,
    axis: int | None = None,
    dtype: DTypeLike | None = None,
    include_initial: bool = False,
) -> DistArray:
    """The cumulative product along `axis` (array API): a scan with carries between chunks.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(1, 5), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> mdarray.cumulative_prod(x).get()
    array([ 1,  2,  6, 24])
    """
    return cast(
        DistArray,
        np.cumulative_prod(x, axis=axis, dtype=dtype, include_initial=include_initial),
    )
