"""NumPy's neighbourhood functions without gathering: gradient, partition, argpartition.

gradient runs per chunk along each axis: a chunk fetches one element past each of its
ends along the axis (a halo, through `_redistribute.regions_value`, every chunk's in one
step; at the array's ends the few elements its one-sided differences need), so only
those edge elements move.

convolve (1-D) gives its result in blocks over the signal's devices: each block fetches
the signal's elements its outputs need (its own range plus ``len(v) - 1`` more, a halo)
and the small kernel `v`, and convolves them there.

cross (of 3-vectors) runs per chunk where no chunk splits the vector axis: `b` is brought
to `a`'s chunks (nothing moves where they match); a split vector axis is made whole first.

partition and argpartition run per chunk along an axis that no chunk splits: nothing
moves. Along a split axis the array is first resharded so that the axis is whole in
every chunk (one movement, as sort does), then each chunk partitions its own lanes.
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from mdarray._array.array import DistArray, wrap
from mdarray._core import regions as _regions
from mdarray._core.debug import HOST
from mdarray._core.modes import REPLICA
from mdarray._core.registry import implements
from mdarray._exec import chunkwise as _chunkwise
from mdarray._layouts.layout import Layout
from mdarray._movement import redistribute as _redistribute
from mdarray._ops.engine.fallback import fallback
from mdarray._ops.shape.manipulation_functions import broadcast_to, reshape
from mdarray._ops.shape.transposes import moveaxis
from mdarray._storage.chunks import Chunks


def _kth_positions(kth, length: int) -> int | list[int] | None:
    """`kth` as non-negative integer positions checked as NumPy checks them (an int, or a
    list: CuPy takes no 0-d array and no negative position); None when it is not an
    integer array (left to the fallback)."""
    given = np.asarray(kth)
    if given.dtype.kind not in "iu" or given.ndim > 1:
        return None
    positions = []
    for k in given.reshape(-1).tolist():
        normal = k + length if k < 0 else k
        if not 0 <= normal < length:
            raise ValueError(f"kth(={normal}) out of bounds ({length})")
        positions.append(normal)
    return positions[0] if given.ndim == 0 else positions


def _partitioned(name: str, a, kth, axis, kind, order, arg: bool):
    func = np.argpartition if arg else np.partition
    args = {"kth": kth, "axis": axis, "kind": kind, "order": order}
    if not isinstance(a, DistArray) or order is not None or kind != "introselect" or a.ndim == 0:
        return fallback(func, (a,), args, name)
    x = a.change_mode(REPLICA) if a.mode.is_partial else a
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = normalize_axis_index(operator.index(axis), x.ndim)
    # NumPy checks kth only against a non-empty array.
    positions = _kth_positions(kth, x.shape[axis] if x.size else 1 << 62)
    if positions is None:
        return fallback(func, (a,), args, name)
    if x.size == 0:
        if arg:
            return wrap(x.storage.map(lambda c: c.astype(np.intp), dtype=np.intp))
        return wrap(x.storage.map(lambda c: c.copy()))
    if x.layout.splits(axis):
        x = x.reshard(x.layout.whole_along(axis))
    backend = x.storage.backend
    xp, keys = backend.xp, backend.sort_keys  # NaNs last, as NumPy's partition puts them
    if arg:
        return wrap(
            x.storage.map(lambda c: xp.argpartition(keys(c), positions, axis=axis), dtype=np.intp)
        )
    return wrap(x.storage.map(lambda c: xp.partition(keys(c), positions, axis=axis)))


@implements(np.partition, spmd=True)
def _partition(a, kth, axis=-1, kind="introselect", order=None):
    """``numpy.partition``, per chunk along an axis no chunk splits (nothing moves); a
    split axis is made whole first (one reshard).

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([[3, 1, 2], [9, 7, 8]]))
    >>> with mdarray.options(fallback="raise"):
    ...     np.partition(x, 0, axis=1).get()[:, 0]
    array([1, 7])
    """
    return _partitioned("numpy.partition", a, kth, axis, kind, order, arg=False)


@implements(np.argpartition, spmd=True)
def _argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """``numpy.argpartition``, moving as `numpy.partition` does.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([3, 1, 2]))
    >>> with mdarray.options(fallback="raise"):
    ...     int(np.argpartition(x, 0).get()[0])
    1
    """
    return _partitioned("numpy.argpartition", a, kth, axis, kind, order, arg=True)


def _gradient_chunks(x: DistArray, axis: int, spacing, edge_order: int, dtype) -> Chunks:
    """The chunks of ``numpy.gradient(x, spacing, axis=axis)`` in `x`'s layout, each from
    its chunk's box widened by one along `axis` (and to the ``edge_order + 1`` elements an
    end of the array needs): the differences that NumPy takes there, bit for bit."""
    storage = x.storage
    backend, layout = storage.backend, x.layout
    xp = backend.xp
    n = x.shape[axis]
    spans: list = []  # per chunk: (first position read along axis, region to fetch or None)
    for box in layout.boxes:
        if any(len(r) == 0 for r in box):
            spans.append((0, None))
            continue
        kept = box[axis]
        low, high = max(kept.start - 1, 0), min(kept[-1] + 2, n)
        if kept.start == 0:
            high = max(high, edge_order + 1)
        if kept[-1] == n - 1:
            low = min(low, n - edge_order - 1)
        region = (*box[:axis], range(low, high), *box[axis + 1 :])
        spans.append((low, None if region == box else region))
    # Every chunk's halo in one step (one exchange between the processes of a run).
    halos = _redistribute.regions_value(
        storage, [region for _, region in spans], layout.chunk_devices
    )

    def make(k: int):
        box = layout.boxes[k]
        if any(len(r) == 0 for r in box):
            return xp.empty(layout.chunk_shapes[k], dtype)
        kept, low = box[axis], spans[k][0]
        piece = storage.buffers[k] if halos[k] is None else halos[k]
        out = xp.gradient(piece, spacing, axis=axis, edge_order=edge_order)
        step = (slice(None),) * axis + (slice(kept.start - low, kept[-1] - low + 1, kept.step),)
        return out[step]

    return Chunks.generate(layout, backend, make, dtype)


@implements(np.gradient, spmd=True)
def _gradient(f, *varargs, axis=None, edge_order=1):
    """``numpy.gradient`` with uniform spacings (none, one scalar, or one per axis), per
    chunk from a halo of one element each side along each axis: only those move.
    Coordinate arrays go to the fallback.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([1.0, 4.0, 9.0, 16.0]))
    >>> with mdarray.options(fallback="raise"):
    ...     np.gradient(x).get()
    array([3., 4., 6., 7.])
    """
    args = {"axis": axis, "edge_order": edge_order}
    uniform = all(np.ndim(h) == 0 and not isinstance(h, DistArray) for h in varargs)
    if not isinstance(f, DistArray) or f.ndim == 0 or not uniform or edge_order not in (1, 2):
        return fallback(np.gradient, (f, *varargs), args, "numpy.gradient")
    axes = normalize_axis_tuple(range(f.ndim) if axis is None else axis, f.ndim)
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    # NumPy's output dtype (integers give float64) and its errors for this dtype.
    dtype = np.gradient(np.zeros(3, f.dtype), edge_order=edge_order).dtype
    x = f.change_mode(REPLICA) if f.mode.is_partial else f
    outs = []
    for ax, h in zip(axes, spacings):
        if x.shape[ax] < edge_order + 1:
            raise ValueError(
                "Shape of array too small to calculate a numerical gradient, "
                "at least (edge_order + 1) elements are required."
            )
        outs.append(wrap(_gradient_chunks(x, ax, h, edge_order, dtype), REPLICA))
    return outs[0] if len(axes) == 1 else tuple(outs)


def _convolve_chunks(a: DistArray, kernel: np.ndarray, start: int, length: int) -> Chunks:
    """Outputs ``start .. start + length`` of the full convolution of 1-D REPLICA `a` with
    `kernel` (no longer than `a`), in blocks over `a`'s devices."""
    storage = a.storage
    backend = storage.backend
    xp = backend.xp
    n, m = a.shape[0], kernel.shape[0]
    layout = Layout.block((length,), devices=a.layout.devices)
    dtype = np.convolve(np.zeros(1, a.dtype), np.zeros(1, kernel.dtype)).dtype
    spans: list = []  # per chunk: its first full-mode output and the input range it reads
    for box in layout.boxes:
        kept = box[0]
        if not len(kept):
            spans.append((0, 0, None))
            continue
        first, stop = kept.start + start, kept.stop + start  # in full-mode positions
        # Full output i needs a[i - m + 1 .. i]; at least m inputs, so no swap inside.
        low, high = max(first - m + 1, 0), min(stop, n)
        high = min(max(high, low + m), n)
        low = max(min(low, high - m), 0)
        spans.append((first, low, (range(low, high),)))
    # Every chunk's range of `a` in one step (one exchange between the processes of a run).
    pieces = _redistribute.regions_value(storage, [s[2] for s in spans], layout.chunk_devices)

    def make(k: int):
        kept = layout.boxes[k][0]
        if not len(kept):
            return xp.empty((0,), dtype)
        first, low, _ = spans[k]
        taps = backend.from_host(kernel, layout.chunk_devices[k])
        out = backend.convolve(pieces[k], taps)
        return out[first - low : first - low + len(kept)]

    return Chunks.generate(layout, backend, make, dtype)


@implements(np.convolve, spmd=True)
def _convolve(a, v, mode="full"):
    """``numpy.convolve`` of a 1-D DistArray `a` with a small kernel `v` (gathered): the
    result in blocks over `a`'s devices, each block from its range of `a` plus a halo of
    ``len(v) - 1`` elements and `v`. Where `v` is the longer, `a` is the small one: it is
    gathered, convolved on the host, and the result distributed.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([1.0, 2.0, 3.0]))
    >>> with mdarray.options(fallback="raise"):
    ...     np.convolve(x, np.array([0.0, 1.0, 0.5]), mode="same").get()
    array([1. , 2.5, 4. ])
    """
    if (
        not isinstance(a, DistArray)
        or a.ndim != 1
        or np.ndim(v) != 1
        or mode not in ("full", "same", "valid")
    ):
        return fallback(np.convolve, (a, v), {"mode": mode}, "numpy.convolve")
    signal = a.change_mode(REPLICA) if a.mode.is_partial else a
    if isinstance(v, DistArray):
        kernel = _redistribute.region_value(v.storage, v.mode, _regions.full_box(v.shape), HOST)
    else:
        kernel = np.asarray(v)
    n, m = signal.shape[0], kernel.shape[0]
    if n == 0:
        raise ValueError("a cannot be empty")
    if m == 0:
        raise ValueError("v cannot be empty")
    if m > n:
        whole = _redistribute.region_value(signal.storage, REPLICA, _regions.full_box((n,)), HOST)
        result = np.convolve(whole, kernel, mode=mode)
        layout = Layout.block(result.shape, devices=signal.layout.devices)
        return wrap(Chunks.from_host(result, layout, signal.storage.backend))
    start, length = {
        "full": (0, n + m - 1),
        "same": ((m - 1) // 2, n),
        "valid": (m - 1, n - m + 1),
    }[mode]
    return wrap(_convolve_chunks(signal, kernel, start, length), REPLICA)


@implements(np.cross, spmd=True)
def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``numpy.cross`` of 3-vectors, per chunk of `a` (broadcast to the result's shape)
    with `b` brought to its chunks; a vector axis split over chunks is made whole first
    (one reshard). Other vector lengths go to the fallback.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
    >>> with mdarray.options(fallback="raise"):
    ...     np.cross(x, np.array([0.0, 0.0, 1.0])).get()
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.]])
    """
    args = {"axisa": axisa, "axisb": axisb, "axisc": axisc, "axis": axis}
    native_b = isinstance(b, (DistArray, np.ndarray))
    if not isinstance(a, DistArray) or not native_b or a.ndim == 0 or np.ndim(b) == 0:
        return fallback(np.cross, (a, b), args, "numpy.cross")
    if axis is not None:
        axisa = axisb = axisc = axis
    axisa = normalize_axis_index(operator.index(axisa), a.ndim, msg_prefix="axisa")
    axisb = normalize_axis_index(operator.index(axisb), b.ndim, msg_prefix="axisb")
    if a.shape[axisa] not in (2, 3) or b.shape[axisb] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    if a.shape[axisa] != 3 or b.shape[axisb] != 3:
        return fallback(np.cross, (a, b), args, "numpy.cross")
    dtype = np.cross(np.zeros(3, a.dtype), np.zeros(3, b.dtype)).dtype
    x = moveaxis(a, axisa, -1)
    y = moveaxis(b, axisb, -1) if isinstance(b, DistArray) else np.moveaxis(b, axisb, -1)
    shape = np.broadcast_shapes(x.shape, y.shape)
    axisc = normalize_axis_index(operator.index(axisc), len(shape), msg_prefix="axisc")
    if x.mode.is_partial:
        x = x.change_mode(REPLICA)
    if x.shape != shape:
        x = broadcast_to(x, shape)
    if x.layout.splits(x.ndim - 1):
        x = x.reshard(x.layout.whole_along(x.ndim - 1))
    backend = x.storage.backend
    xp = backend.xp
    left = x.storage.buffers
    right = _chunkwise.aligned(y, x.layout, backend)
    chunks = Chunks.generate(x.layout, backend, lambda k: xp.cross(left[k], right[k]), dtype)
    return moveaxis(wrap(chunks, REPLICA), -1, axisc)
