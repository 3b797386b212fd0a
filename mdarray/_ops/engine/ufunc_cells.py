"""Elementwise calls whose operands' chunks do not line up, run cell by cell.

``u[:-2] + u[2:]`` of row chunks: each result chunk's rows come from two chunks of each
operand. Gathering every operand's piece into one array per result chunk copies every
element of every misaligned operand each call. Instead, each result chunk is cut into
*cells*, boxes that every operand holds in one chunk (the common refinement of where each
operand's pieces begin and end: for a stencil on row chunks, the chunk's body and a halo
row or two); the kernel runs per cell on views of the operands' chunks (moving only a
cell's piece that lies on another device) and writes into the result chunk. A chunk that
is one cell gives the kernel's result as it is.

`split_cells` decides the cells from the layouts alone (cached); `run_cells` runs them.
"""

from __future__ import annotations

from itertools import pairwise, product
from math import prod

import numpy as np

from mdarray._backends.backend import Backend
from mdarray._core import regions as _regions
from mdarray._core.plan_cache import plan_cache
from mdarray._exec.chunkwise import broadcast_regions
from mdarray._layouts.layout import Layout
from mdarray._movement.collectives import several
from mdarray._movement.redistribute import replica_plan
from mdarray._storage.chunks import Chunks

OWN = "own"  # the operand has the result's layout: its own chunk, cut to the cell
VALUE = "value"  # a scalar (or a 0-d host array's value), the same for every cell


# Cells per result chunk at most: a body and a halo on each side. Past that (a small
# operand broadcast from many chunks, rows against columns) a kernel launch per cell costs
# more than gathering the pieces.
MAX_CELLS = 3


@plan_cache
def split_cells(specs: tuple, layout: Layout) -> tuple | None:
    """Per chunk of `layout`, its cells: ``(cell index, args)``, the cell index a tuple of
    slices into the result chunk (None: the whole chunk) and per operand its argument:
    `OWN`, `VALUE`, or ``(chunk, index, from device)`` for an operand laid out as the
    Layout given in `specs` (REPLICA). None where a chunk or a piece is strided or empty,
    or a chunk would have more than `MAX_CELLS` cells."""
    regions = [
        broadcast_regions(layout, spec.shape) if isinstance(spec, Layout) else None
        for spec in specs
    ]
    out = []
    for k, (box, device) in enumerate(zip(layout.boxes, layout.chunk_devices)):
        if any(not len(r) or (r.step != 1 and len(r) > 1) for r in box):
            return None
        found = _pieces_in_chunk(specs, regions, k, box, device)
        if found is None:
            return None
        cuts, located = found
        if prod(len(c) - 1 for c in cuts) > MAX_CELLS:
            return None
        cells = []
        for bounds in product(*(list(pairwise(sorted(c))) for c in cuts)):
            args = []
            for spec, pieces in zip(specs, located):
                if not isinstance(spec, Layout):
                    args.append(spec)
                    continue
                arg = _argument(spec, pieces, bounds, len(box))
                if arg is None:
                    return None
                args.append(arg)
            whole = all(b == (0, len(r)) for b, r in zip(bounds, box))
            cell = None if whole else tuple(slice(a, b) for a, b in bounds)
            cells.append((cell, tuple(args)))
        out.append(tuple(cells))
    return tuple(out)


def _pieces_in_chunk(specs, regions, k: int, box: tuple, device):
    """The cut points per axis of result chunk k (local coordinates) and, per operand, its
    pieces ``(chunk, local ranges or None for broadcast axes, chunk index)``; None where a
    piece's index is not basic or strided."""
    ndim = len(box)
    cuts: list = [{0, len(r)} for r in box]
    located: list = []
    for spec, region in zip(specs, regions):
        if not isinstance(spec, Layout):
            located.append(None)
            continue
        offset = ndim - len(spec.shape)
        pieces = []
        for chunk, region_index, chunk_index in replica_plan(spec, region[k], device):
            if not _regions.is_basic(chunk_index) or not _regions.is_basic(region_index):
                return None
            spans: list = []
            for j, (r, s) in enumerate(zip(region[k], region_index)):
                a = offset + j
                if len(r) == 1 and len(box[a]) != 1:
                    spans.append(None)  # broadcast along this axis
                    continue
                local = range(len(r))[s]
                if local.step != 1 and len(local) > 1:
                    return None
                cuts[a].update((local.start, local.start + len(local)))
                spans.append(local)
            pieces.append((chunk, tuple(spans), chunk_index))
        located.append(pieces)
    return cuts, located


def _argument(spec: Layout, pieces, bounds, ndim: int):
    """``(chunk, index, device)``: the piece holding the cell `bounds` and the cell's index
    into its chunk."""
    offset = ndim - len(spec.shape)
    for chunk, spans, chunk_index in pieces:
        shape = spec.chunk_shapes[chunk]
        index = []
        for j, (span, s) in enumerate(zip(spans, chunk_index)):
            positions = range(shape[j])[s]
            if span is None:
                index.append(s)
                continue
            start, stop = bounds[offset + j]
            if start < span.start or stop > span.start + len(span):
                break
            inner = positions[start - span.start : stop - span.start]
            index.append(_regions.to_slice(inner))
        else:
            return (chunk, tuple(index), spec.chunk_devices[chunk])
    return None


def run_cells(plan, inputs, dtype):
    """The plan's kernel cell by cell (`split_cells`): a DistArray of `dtype`. Every
    piece moves first; then a large call runs each chunk's cells on its device's thread
    (`Backend.each`), else chunk after chunk."""
    backend = plan.backend
    columns = _columns(plan, inputs)
    layout = plan.layout
    jobs = []
    for k, (device, cells) in enumerate(zip(layout.chunk_devices, plan.cells)):
        job = []
        with backend.on(device):
            for cell, args in cells:
                job.append((cell, _values(backend, columns, args, k, cell, device)))
        jobs.append((device, (plan, k, device, job, dtype)))
    if prod(layout.shape) * np.dtype(dtype).itemsize >= backend.parallel_bytes and not several():
        out = backend.each(_chunk, jobs)
    else:
        out = []
        for device, arguments in jobs:
            with backend.on(device):
                out.append(_chunk(*arguments))
    return Chunks.made(layout, out, backend, dtype)


def _chunk(plan, k: int, device: int, job, dtype):
    """Result chunk k of the plan's kernel from its cells' ``(cell, arguments)``."""
    backend = plan.backend
    kernel, options = plan.kernel, plan.options
    result = None
    for cell, values in job:
        if cell is None:
            got = kernel(*values, **options)
            return got if got.dtype == dtype else got.astype(dtype)
        if result is None:
            result = backend.empty(plan.layout.chunk_shapes[k], dtype, device)
        # Straight into the result where the backend can (`Backend.call_into`).
        backend.call_into(kernel, values, result[cell], options)
    return result


def write_cells(plan, inputs, out) -> None:
    """The plan's kernel cell by cell straight into `out`'s chunks (a DistArray of the
    plan's layout and mode that the backend may write in place with its calls run by
    `Backend.write_each`, no operand but `out` itself meeting its memory: see
    `writes_cells`, which made `out` writable). Every piece that moves between devices
    moves before the first write."""
    backend = plan.backend
    columns = _columns(plan, inputs)
    targets = out.storage.buffers
    calls = []
    for k, (device, cells) in enumerate(zip(plan.layout.chunk_devices, plan.cells)):
        target = targets[k]
        for cell, args in cells:
            values = _values(backend, columns, args, k, cell, device)
            calls.append((device, values, (target if cell is None else target[cell],)))
    backend.write_each(plan.kernel, calls)


def writes_cells(plan, inputs, out) -> bool:
    """Whether `write_cells` may write `out` for this call: every other DistArray operand
    is apart from `out`'s memory (`Chunks.apart_from`), so no cell reads what another
    wrote (an operand that is `out` reads each element before its own cell writes it)."""
    storage = out.storage
    storage.make_writable()
    for x, spec in zip(inputs, plan.specs):
        if spec is not VALUE and x is not out and not x.storage.apart_from(storage):
            return False
    return True


def _columns(plan, inputs) -> list:
    """Per operand, its chunk buffers, or its value (`VALUE`)."""
    columns = []
    for x, spec in zip(inputs, plan.specs):
        if spec is VALUE:
            columns.append(x[()] if isinstance(x, np.ndarray) else x)  # a 0-d host array
        else:
            columns.append(x.storage.buffers)
    return columns


def _values(backend: Backend, columns, args, k: int, cell, device) -> list:
    """The kernel's arguments for one cell of result chunk k on `device`: views of the
    operands' chunks, a piece from another device moved here."""
    values = []
    for column, arg in zip(columns, args):
        if arg is VALUE:
            values.append(column)
        elif arg is OWN:
            piece = column[k]
            values.append(piece if cell is None else piece[cell])
        else:
            chunk, index, source = arg
            piece = column[chunk][index]
            values.append(piece if source == device else backend.move(piece, source, device))
    return values
