"""Where the general elementwise path finds each operand's piece of a result chunk, and
the kernels run once per device block where every piece is one array.

`pieces` plans, per chunk of a result layout, the one chunk of an operand that holds its
broadcast piece (a view of it, moved where it lies on another device) or a view of the
operand's device block (`Layout.device_blocks`); `pieces_of` cuts them on every call.

Where the result's chunks make one block per device (rows that follow on, or one chunk
per device) and every operand's piece of that block is one array (`blocked`), a call runs
the kernel once per device over those pieces (`run_blocks`): ``sq[:, None] - t`` of row
chunks on one device is one kernel, not one per chunk. Each block's result, in C order, is
its device's packed slab of the result layout.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mdarray._array.array import DistArray, wrap
from mdarray._backends.backend import Backend
from mdarray._core import regions as _regions
from mdarray._core.plan_cache import plan_cache
from mdarray._exec.chunkwise import aligned, block_layout, blocks, broadcast_regions
from mdarray._layouts.layout import Layout
from mdarray._movement.redistribute import replica_plan
from mdarray._storage.chunks import Chunks

VALUE = "value"  # a scalar, given to every chunk as it is
HOST0 = "host0"  # a 0-d NumPy array, given as its scalar (as `aligned` does)


@plan_cache
def pieces(source: Layout, layout: Layout) -> tuple | None:
    """Per chunk of `layout`, ``(chunk, view key, from device, to device)``: the one chunk
    of a REPLICA operand laid out as `source` that holds its broadcast piece whole (a view
    key of None: the whole chunk); None where some piece needs several chunks."""
    out: list = []
    for region, device in zip(broadcast_regions(layout, source.shape), layout.chunk_devices):
        plan = replica_plan(source, region, device)
        if len(plan) != 1:
            block = _block_piece(source, region, device)
            if block is None:
                return None
            out.append(block)
            continue
        k, _, chunk_index = plan[0]
        shape = source.chunk_shapes[k]
        if chunk_index is None or _regions.index_shape(chunk_index, shape) == shape:
            view = None
        elif _regions.is_basic(chunk_index):
            view = (*chunk_index, Ellipsis)  # a view, 0-d ones too
        else:
            return None
        out.append((k, view, source.chunk_devices[k], device))
    return tuple(out)


def _block_piece(source: Layout, region: tuple, device) -> tuple | None:
    """``(device position, index)``: where a piece spans several chunks of `source` that
    make one device block on the chunk's own device (`Layout.device_blocks`), the piece
    as a view of that block (``sq[:, None] - t`` with `t` one block, `sq` row chunks);
    None otherwise."""
    boxes = source.device_blocks
    if boxes is None or device not in source.devices:
        return None
    position = source.devices.index(device)
    index = []
    for r, b in zip(region, boxes[position]):
        if not len(r):
            index.append(slice(0, 0))
            continue
        if (r.step != 1 and len(r) > 1) or (b.step != 1 and len(b) > 1):
            return None
        if r[0] not in b or r[-1] not in b:
            return None
        index.append(slice(r[0] - b.start, r[0] - b.start + len(r)))
    return (position, tuple(index))


def pieces_of(x: DistArray, source: tuple, layout: Layout, backend: Backend, copies: bool) -> list:
    """The pieces of `x` that `pieces` planned for the chunks of `layout`: views of a
    chunk or of a device block (`blocks`), moved, or copied where `copies`; the whole
    column by `aligned` where the blocks' memory does not line up now."""
    storage = x.storage
    column = []
    buffers = spans = None
    for entry, device in zip(source, layout.chunk_devices):
        if len(entry) == 2:  # (device position, index into its block)
            spans = blocks(storage) if spans is None else spans
            if spans is None:
                return aligned(x, layout, backend)
            piece = spans[entry[0]][entry[1]]
            column.append(backend.copy(piece, device) if copies else piece)
            continue
        k, view, src, dst = entry
        buffers = storage.buffers if buffers is None else buffers
        piece = buffers[k] if view is None else buffers[k][view]
        if src != dst:
            piece = backend.move(piece, src, dst)
        elif copies:
            piece = backend.copy(piece, dst)
        column.append(piece)
    return column


@plan_cache
def coarse(layout: Layout) -> Layout | None:
    """The layout of `layout`'s device blocks, one chunk per device (itself where each
    device holds one chunk), or None where some device's chunks make no block."""
    if len(layout.chunks) == len(layout.devices):
        return layout
    return block_layout(layout)


def blocked(inputs, layout: Layout) -> tuple | None:
    """``(block layout, per input its pieces of the blocks)`` where the kernel of a call
    of `inputs` (DistArrays, 0-d NumPy arrays, scalars) with a result of `layout` can run
    once per device block (`run_blocks`); else None."""
    blocks_layout = coarse(layout)
    if blocks_layout is None:
        return None
    sources: list[Any] = []
    for x in inputs:
        if isinstance(x, DistArray):
            got = pieces(x.layout, blocks_layout)
            if got is None:
                return None
            sources.append(got)
        elif isinstance(x, np.ndarray):
            if x.ndim:
                return None
            sources.append(HOST0)
        else:
            sources.append(VALUE)
    return blocks_layout, tuple(sources)


def run_blocks(plan, inputs, nout: int):
    """`plan`'s kernel once per device over its inputs' block pieces (`Plan.block_sources`,
    from `blocked`): a DistArray per output, packed, or None where a piece's memory does
    not line up now (the caller's path runs)."""
    layout, sources = plan.block_sources
    backend = plan.backend
    count = len(layout.devices)
    columns: list = []
    for x, source in zip(inputs, sources):
        if source is VALUE:
            columns.append((x,) * count)
        elif source is HOST0:
            columns.append((x[()],) * count)
        else:
            columns.append(pieces_of(x, source, layout, backend, False))
    kernel, options, dtypes = plan.kernel, plan.options, plan.dtypes
    shapes = layout.chunk_shapes
    results: list = [[] for _ in dtypes]  # per output, per device
    on = backend.on
    for d, (device, row) in enumerate(zip(layout.devices, zip(*columns))):
        with on(device):
            got = kernel(*row, **options)
            for i, g in enumerate((got,) if nout == 1 else got):
                if g.shape != shapes[d]:
                    return None
                results[i].append(g if g.dtype == dtypes[i] else g.astype(dtypes[i]))
    values = []
    for made, dtype in zip(results, dtypes):
        slabs = []
        keep = True  # blocks in C order of an axis or more are the slabs' views
        for b in made:
            if b.ndim != 1:
                keep = keep and b.ndim > 1 and b.flags.c_contiguous
            slabs.append(b if b.ndim == 1 else b.reshape(-1))
        storage = Chunks.packed(
            plan.layout, slabs, backend, dtype, check=False, blocks=made if keep else None
        )
        values.append(wrap(storage, plan.mode))
    return values[0] if nout == 1 else tuple(values)
