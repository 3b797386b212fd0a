"""Products of row bands, decided from the operands' layouts and run with no plan: one
kernel per device on device blocks (`Layout.device_blocks`, read where they lie by
`blocks`), the kernel's result that device's slab of the product.

- **Rows**: ``a @ b`` where each device holds a band of a's rows (its chunks one after
  another, every column) and all of b: per device its band times b's block. Where the
  devices share memory (the cpu backend's), b may instead lie in row chunks over them:
  it is joined once and read by every band (under `count_transfers` the plan's runner
  counts its moves). The result has a chunk per band, REPLICA (as the plan's product of
  device blocks has). Elsewhere, where b must be gathered first, the plan's runner stays.
- **Crossed**: ``s.T @ b`` where ``s.T`` is a transposed view of s, each device holds a
  band of s's rows and the same rows of b (a gradient ``x.T @ r``, k-means'
  ``onehot.T @ points``): per device ``b_band @ s_band`` for a vector b, ``s_band.T @
  b_band`` for a matrix, the partial product of that device's rows. The result has one
  chunk per device, the whole product, SUM over the devices (REPLICA on one device).

The general path (`_linear_algebra_functions._matmul`) plans products chunk by chunk and
its runners replay the plan; these products are the ones repeated most (``A @ x`` of an
iteration), where a plan's lookups, reshapes of vectors into matrices and per-task
pieces cost four times the Python of an elementwise op. A call decided here runs here
first and on every replay, so a repeat keeps the first call's bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from mdarray._array.array import DistArray, wrap
from mdarray._backends.backend import Backend
from mdarray._core import debug as _debug
from mdarray._core.modes import REPLICA, SUM
from mdarray._core.plan_cache import plan_cache
from mdarray._exec.chunkwise import blocks
from mdarray._layouts.layout import Layout
from mdarray._movement.collectives import several
from mdarray._ops.shape.transposes import permuted_layout
from mdarray._storage.chunks import Chunks

from . import product_runs

_TRANSPOSE = ("permute", (1, 0))  # the token of ``x.T``'s remap (`permute_dims`)
_NUMBERS = "iufc"


def band_runner(a: Any, b: Any, dtype) -> Callable | None:
    """The runner of ``a @ b`` (result `dtype`) as row bands or crossed bands, for this
    call and those of its key; None where the layouts, modes or sizes make neither. A
    call the runner cannot take (blocks whose memory does not line up now) gives None:
    it goes the whole way."""
    if type(a) is not DistArray or type(b) is not DistArray or several():
        return None
    if a.mode is not REPLICA or b.mode is not REPLICA or a.ndim != 2 or b.ndim not in (1, 2):
        return None
    if a.dtype.kind not in _NUMBERS or b.dtype.kind not in _NUMBERS:
        return None  # bool's logical product, objects' own operations: the whole way
    backend = a.storage.backend
    if backend is not b.storage.backend or not (a.size and b.size):
        return None
    if a.shape[1] != b.shape[0]:
        return None  # the whole way, to NumPy's error
    columns = b.shape[1] if b.ndim == 2 else 1
    if backend.shared_memory and math.prod(a.shape) * columns >= product_runs.ONE_KERNEL_WORK:
        return None  # one kernel over all devices' bands (`product_runs._one_product`)
    rows = row_bands(a.layout, b.layout)
    if rows is not None and (rows[2] is None or backend.shared_memory):
        pairs, layout, tiles = rows
        return _rows_runner(pairs, layout, tiles, backend, dtype)
    known = a.storage.remapped()
    if known is None or known[1] != _TRANSPOSE:
        return None
    crossed = crossed_bands(permuted_layout(a.layout, (1, 0)), b.layout)
    if crossed is None:
        return None
    pairs, layout = crossed
    return _crossed_runner(pairs, layout, b.ndim == 1, backend, dtype)


def _rows_runner(
    pairs: tuple, layout: Layout, tiles: tuple | None, backend: Backend, dtype
) -> Callable:
    matmul, on, join = backend.matmul, backend.on, backend.xp.concatenate

    def runner(inputs, out):
        x, y = inputs
        bands = blocks(x.storage)
        if out is not None or bands is None:
            return None
        if tiles is None:  # b whole on every device
            whole = blocks(y.storage)
            if whole is None:
                return None
            pieces = [whole[j] for _, _, j in pairs]
        else:  # b in row chunks over devices that share memory: joined once, read by all
            if _debug.counting():
                return None
            buffers = y.storage.buffers
            pieces = [join([buffers[k] for k in tiles])] * len(pairs)
        slabs = []
        for (device, i, _), piece in zip(pairs, pieces):
            with on(device):
                got = matmul(bands[i], piece)
                if got.dtype != dtype:
                    got = got.astype(dtype)
            slabs.append(got if got.ndim == 1 else got.reshape(-1))
        return wrap(Chunks.packed(layout, slabs, backend, dtype, check=False))

    return runner


def _crossed_runner(
    pairs: tuple, layout: Layout, vector: bool, backend: Backend, dtype
) -> Callable:
    matmul, on = backend.matmul, backend.on
    mode = SUM if len(pairs) > 1 else REPLICA

    def runner(inputs, out):
        x, y = inputs
        known = x.storage.remapped()
        if out is not None or known is None or known[1] != _TRANSPOSE:
            return None
        bands, others = blocks(known[0]), blocks(y.storage)
        if bands is None or others is None:
            return None
        slabs = []
        for device, i, j in pairs:
            with on(device):
                got = matmul(others[j], bands[i]) if vector else matmul(bands[i].T, others[j])
                if got.dtype != dtype:
                    got = got.astype(dtype)
            slabs.append(got if got.ndim == 1 else got.reshape(-1))
        return wrap(Chunks.packed(layout, slabs, backend, dtype, check=False), mode)

    return runner


def _bands(layout: Layout) -> tuple | None:
    """Per device (in `layout.devices` order) the rows of its block, where each is a
    band of whole rows of a matrix; else None."""
    boxes = layout.device_blocks
    if boxes is None:
        return None
    out = []
    for rows, cols in boxes:
        if cols != range(layout.shape[1]) or (rows.step != 1 and len(rows) > 1):
            return None
        out.append(rows)
    return tuple(out)


@plan_cache
def row_bands(layout_a: Layout, layout_b: Layout) -> tuple | None:
    """``(((device, a's block, b's block or None), ...), result layout, tiles)`` where
    each device of a matrix of `layout_a` holds a band of whole rows; b's block where b
    (of `layout_b`, a matrix or a vector) is whole on that device, else None, and then
    `tiles` are b's chunks that tile it by rows in order (None where every device holds
    all of b). The result has one chunk per band. Else None."""
    bands = _bands(layout_a) if len(layout_a.shape) == 2 else None
    if bands is None:
        return None
    whole_b = tuple(range(n) for n in layout_b.shape)
    blocks_b = layout_b.device_blocks or ((),) * len(layout_b.devices)
    pairs = []
    for i, device in enumerate(layout_a.devices):
        j = layout_b.devices.index(device) if device in layout_b.devices else None
        pairs.append((device, i, None if j is None or blocks_b[j] != whole_b else j))
    tiles = None
    if any(j is None for _, _, j in pairs):
        tiles = layout_b.row_tiling
        if tiles is None:
            return None
    rest = tuple(slice(0, n, 1) for n in layout_b.shape[1:])
    rows = {
        device: [(slice(band.start, band.stop, 1), *rest)]
        for device, band in zip(layout_a.devices, bands)
    }
    return tuple(pairs), Layout((layout_a.shape[0], *layout_b.shape[1:]), rows), tiles


@plan_cache
def crossed_bands(layout_s: Layout, layout_b: Layout) -> tuple | None:
    """``(((device, s's block, b's block), ...), result layout)`` where each device of a
    matrix of `layout_s` holds a band of whole rows and b (of `layout_b`) the same rows
    on the same device, every column; the result (of ``s.T @ b``) has one whole chunk
    per device. Else None."""
    bands_s = _bands(layout_s) if len(layout_s.shape) == 2 else None
    if bands_s is None or layout_s.devices != layout_b.devices:
        return None
    blocks_b = layout_b.device_blocks
    if blocks_b is None:
        return None
    rest = tuple(range(n) for n in layout_b.shape[1:])
    for rows, box in zip(bands_s, blocks_b):
        if tuple(box) != (rows, *rest):
            return None
    shape = (layout_s.shape[1], *layout_b.shape[1:])
    whole = tuple(slice(0, n, 1) for n in shape)
    pairs = tuple((device, i, i) for i, device in enumerate(layout_s.devices))
    return pairs, Layout(shape, {device: [whole] for device in layout_s.devices})
