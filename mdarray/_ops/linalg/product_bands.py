"""A repeated product of row bands: ``a @ b`` where each device holds one band of a's rows
(its chunks one after another, every column: `Layout.device_blocks`), the product
planned as one band of the result per device.

Such a product needs no plan to replay: per device one kernel on the band and on b,
where it lies whole on that device (`blocks`) or else gathered there (once for all
devices that share memory), its result that device's slab of the result. The general runner
(`product_runs.runner`, or `_plain_product`'s) reshapes vectors into matrices, looks the
plan up and reads each task's pieces; that is four times the Python of an elementwise
op, and these products (``A @ x`` of an iteration, ``points @ centers.T``) are the ones
repeated most.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from mdarray._array.array import DistArray, wrap
from mdarray._core.modes import REPLICA
from mdarray._core.plan_cache import plan_cache
from mdarray._exec.chunkwise import blocks
from mdarray._layouts.layout import Layout
from mdarray._movement.collectives import several
from mdarray._movement.redistribute import region_value
from mdarray._storage.chunks import Chunks

from . import product_runs


def band_runner(a: Any, b: Any, result: DistArray, then: Callable | None) -> Callable | None:
    """The runner of ``a @ b`` (giving `result`, its first call's) as bands, trying `then`
    (the product's other runner) where a call is not one; None where the layouts,
    modes or sizes do not make bands. The first call and the replays compute alike (one
    kernel per device on the same blocks), so a repeat keeps the first call's bits."""
    if type(a) is not DistArray or type(b) is not DistArray or several():
        return None
    if a.mode is not REPLICA or b.mode is not REPLICA or result.mode is not REPLICA:
        return None
    if a.ndim != 2 or b.ndim not in (1, 2) or not (a.size and b.size):
        return None
    backend = a.storage.backend
    if backend is not b.storage.backend or result.storage.slabs is None:
        return None
    columns = b.shape[1] if b.ndim == 2 else 1
    if backend.shared_memory and math.prod(a.shape) * columns >= product_runs.ONE_KERNEL_WORK:
        return None  # one kernel over all devices' bands (`product_runs._one_product`)
    pairs = bands(a.layout, b.layout, result.layout)
    if pairs is None:
        return None
    matmul, on, dtype, layout = backend.xp.matmul, backend.on, result.dtype, result.layout
    somewhere = any(j is not None for _, _, j in pairs)  # b whole on some device
    box = tuple(range(n) for n in b.shape)
    shared = backend.shared_memory

    def runner(inputs, out):
        if out is None:
            x, y = inputs
            rows = blocks(x.storage)
            whole = blocks(y.storage) if somewhere else ()
            if rows is not None and whole is not None:
                slabs = []
                gathered: dict = {}
                for device, i, j in pairs:
                    if j is not None:
                        piece = whole[j]
                    else:  # b gathered onto the device (one copy where memory is shared)
                        key = None if shared else device
                        piece = gathered.get(key)
                        if piece is None:
                            piece = gathered[key] = region_value(y.storage, REPLICA, box, device)
                    with on(device):
                        got = matmul(rows[i], piece)
                        if got.dtype != dtype:
                            got = got.astype(dtype)
                    slabs.append(got if got.ndim == 1 else got.reshape(-1))
                return wrap(Chunks.packed(layout, slabs, backend, dtype, check=False))
        return None if then is None else then(inputs, out)

    return runner


@plan_cache
def bands(layout_a: Layout, layout_b: Layout, layout_r: Layout) -> tuple | None:
    """``((device, a's block, b's block or None), ...)`` in the devices' order of
    `layout_r`, where on each device of a matrix of `layout_a` its block is a band of
    whole rows and the result (of `layout_r`) holds that band of rows; b's block where b
    (of `layout_b`, a matrix or a vector) is whole on that device (None: gathered there).
    Else None."""
    blocks_a, blocks_r = layout_a.device_blocks, layout_r.device_blocks
    if blocks_a is None or blocks_r is None:
        return None
    blocks_b = layout_b.device_blocks or ((),) * len(layout_b.devices)
    if layout_r.devices != layout_a.devices:
        return None
    whole_b = tuple(range(n) for n in layout_b.shape)
    columns = tuple(range(n) for n in layout_b.shape[1:])
    out = []
    for i, (device, box, band) in enumerate(zip(layout_a.devices, blocks_a, blocks_r)):
        rows, cols = box
        if cols != range(layout_a.shape[1]) or (rows.step != 1 and len(rows) > 1):
            return None
        if tuple(band) != (rows, *columns):
            return None
        j = layout_b.devices.index(device) if device in layout_b.devices else None
        out.append((device, i, None if j is None or blocks_b[j] != whole_b else j))
    return tuple(out)
