"""``take_along_axis`` chunk by chunk, without gathering.

Picking elements along an axis is linear and elementwise off that axis (``pick(sum(p))
== sum(pick(p))``, likewise for max and min), so each chunk that holds the whole axis
picks from its own elements and the result keeps arr's layout (the axis length replaced)
and mode. Where a chunk splits the axis, arr is first resharded so that no chunk does (a
counted movement); the indices are aligned to arr's layout (nothing moves where they are
laid out as arr already). The host reads each chunk's smallest and largest index, for
NumPy's bounds check before anything is picked.
"""

from __future__ import annotations

import numpy as np

from mdarray._array.array import DistArray, wrap
from mdarray._backends.backend import Backend
from mdarray._core import regions as _regions
from mdarray._core.modes import REPLICA
from mdarray._core.plan_cache import plan_cache
from mdarray._layouts.layout import Layout
from mdarray._movement.collectives import agree_any
from mdarray._movement.redistribute import change_mode, reshard, to_host
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import local_chunks


@plan_cache
def _whole_along(layout: Layout, axis: int) -> Layout:
    """`layout` where no chunk with elements splits `axis`, else blocks along another
    axis (the longest), or the whole array on every device for one axis."""
    if not layout.splits(axis, empty_chunks=False):
        return layout
    return layout.whole_along(axis, everywhere=True)


@plan_cache
def _with_length(layout: Layout, axis: int, length: int) -> Layout:
    """`layout` with `axis` (whole in every chunk with elements) of `length`; chunks
    without elements stay without."""
    shape = (*layout.shape[:axis], length, *layout.shape[axis + 1 :])
    full, empty = slice(0, length, 1), slice(0, 0, 1)
    index_map: dict = {}
    for (device, index), box in zip(layout.chunks, layout.boxes):
        along = full if _regions.box_size(box) else empty
        index_map.setdefault(device, []).append((*index[:axis], along, *index[axis + 1 :]))
    for device in layout.index_map:
        index_map.setdefault(device, [])
    return Layout(shape, index_map)


def _aligned_indices(indices, layout: Layout, backend: Backend) -> Chunks:
    """`indices` (a DistArray or NumPy array) in REPLICA mode laid out as `layout`."""
    if isinstance(indices, DistArray):
        storage = change_mode(indices.storage, indices.mode, REPLICA)
        return reshard(storage, REPLICA, layout)
    return Chunks.from_host(np.ascontiguousarray(indices), layout, backend)


def _check_bounds(picks: Chunks, indices, n: int, axis: int) -> None:
    """Raise NumPy's IndexError where an index is outside ``[-n, n)``."""
    backend, xp = picks.backend, picks.backend.xp
    bad = False
    for k, device, buffer in local_chunks(picks):
        if _regions.box_size(picks.layout.boxes[k]):
            with backend.on(device):
                bad = bad or int(xp.min(buffer)) < -n or int(xp.max(buffer)) >= n
    if not agree_any(bad):  # every process raises, or none
        return
    host = to_host(indices.storage, indices.mode) if isinstance(indices, DistArray) else indices
    first = host[(host < -n) | (host >= n)][0]
    raise IndexError(f"index {first} is out of bounds for axis {axis} with size {n}")


def take_along_axis_chunkwise(arr: DistArray, indices, axis: int) -> DistArray:
    """``numpy.take_along_axis(arr, indices, axis)`` for `indices` (integers) of arr's
    shape off `axis`, run per chunk with the array module's ``take_along_axis``.

    arr moves only where a chunk splits `axis` (one reshard that makes it whole); the
    indices move only where they are not laid out as arr (off `axis`). The result has
    arr's layout with `axis` of the indices' length, and arr's mode.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([[3, 1, 2], [0, 5, 4]]))
    >>> with mdarray.options(fallback="raise"):
    ...     np.take_along_axis(x, mdarray.asarray(np.array([[2], [0]])), axis=1).get()
    array([[2],
           [0]])
    """
    storage = reshard(arr.storage, arr.mode, _whole_along(arr.layout, axis))
    layout, backend = storage.layout, storage.backend
    target = _with_length(layout, axis, indices.shape[axis])
    picks = _aligned_indices(indices, target, backend)
    _check_bounds(picks, indices, arr.shape[axis], axis)
    buffers, positions = storage.buffers, picks.buffers

    def pick(k):
        if not _regions.box_size(target.boxes[k]):
            return backend.empty(target.chunk_shapes[k], arr.dtype, target.chunk_devices[k])
        return backend.xp.take_along_axis(buffers[k], positions[k], axis=axis)

    return wrap(Chunks.generate(target, backend, pick, arr.dtype), arr.mode)
