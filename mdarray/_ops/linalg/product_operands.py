"""matmul's operands in the shapes its plan takes: a vector as a one-row or one-column
matrix and the product back to a vector, by reshaping chunks against cached layouts (no
view tracking); and the rule that multiplies a matrix by a vector through the matrix's
transpose where only the transpose's chunks make device blocks.
"""

from __future__ import annotations

import numpy as np

from mdarray._array.array import DistArray, wrap
from mdarray._core.plan_cache import plan_cache
from mdarray._layouts.layout import Layout
from mdarray._movement.collectives import several
from mdarray._ops.shape.manipulation_functions import squeeze
from mdarray._ops.shape.transposes import permuted_layout
from mdarray._storage.chunks import Chunks

from .product_runs import as_matrix


def via_transpose(a, b) -> bool:
    """Whether to multiply a matrix by a vector `b` through the matrix's transpose: one
    whose chunks make no device blocks while its transpose's do (``x.T`` of row chunks on
    one device), so that ``b @ a.T`` runs one product per device block where ``a @ b``
    would run one per chunk and leave a partial sum per chunk."""
    return (
        isinstance(a, DistArray)
        and a.ndim == 2
        and b.ndim == 1
        and not several()
        and a.layout.device_blocks is None
        and permuted_layout(a.layout, (1, 0)).device_blocks is not None
    )


def with_axis(x, axis: int):
    """A vector operand as a matrix (a new axis of length one at `axis`), for reading
    within the product: its chunks reshaped, no view tracking (`np.expand_dims` for host
    arrays and across processes)."""
    if not isinstance(x, DistArray) or several():
        return np.expand_dims(x, axis)
    return wrap(as_matrix(x.storage, axis_inserted(x.layout, axis)), x.mode)


def without_axis(result: DistArray, axis: int) -> DistArray:
    """The product `result` (fresh: nothing else holds its buffers) without its length-one
    `axis`: the same slabs or buffers, reshaped (`squeeze` across processes, and where a
    chunk is empty: dropping the axis may leave it no place)."""
    storage = result.storage
    if several() or any(0 in shape for shape in storage.layout.chunk_shapes):
        return squeeze(result, axis)
    layout = _axis_removed(storage.layout, axis)
    if storage.slabs is not None:
        chunks = Chunks.packed(layout, storage.slabs, storage.backend, storage.dtype, check=False)
    else:
        buffers = [b.reshape(shape) for b, shape in zip(storage.buffers, layout.chunk_shapes)]
        chunks = Chunks.of(layout, buffers, storage.backend, storage.dtype, check=False)
    return wrap(chunks, result.mode)


@plan_cache
def axis_inserted(layout: Layout, axis: int) -> Layout:
    index_map: dict = {}
    for device, index in layout.chunks:
        index_map.setdefault(device, []).append((*index[:axis], slice(0, 1, 1), *index[axis:]))
    return Layout((*layout.shape[:axis], 1, *layout.shape[axis:]), index_map)


@plan_cache
def _axis_removed(layout: Layout, axis: int) -> Layout:
    index_map: dict = {}
    for device, index in layout.chunks:
        index_map.setdefault(device, []).append((*index[:axis], *index[axis + 1 :]))
    return Layout((*layout.shape[:axis], *layout.shape[axis + 1 :]), index_map)
