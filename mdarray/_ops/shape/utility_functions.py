"""Utility functions of the array API not among the reductions: diff.

``all`` and ``any`` are reductions and live with the other statistical functions.
`diff` runs per chunk: each chunk fetches the `n` elements past its end along the axis
from the chunks that hold them (a halo, through `_redistribute.regions_value`: one
step for every chunk), so only those edge elements move between devices.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from mdarray._array.array import DistArray, wrap
from mdarray._backends.backend import Backend
from mdarray._core import regions as _regions
from mdarray._core.constants import NO_VALUE
from mdarray._core.modes import REPLICA
from mdarray._core.plan_cache import plan_cache
from mdarray._core.registry import implements
from mdarray._layouts.layout import Layout, _normalize_axis
from mdarray._movement import redistribute as _redistribute
from mdarray._storage.chunks import Chunks

from .manipulation_functions import broadcast_to, concat


@plan_cache
def diff_layout(layout: Layout, axis: int, n: int) -> Layout:
    """The layout of ``diff(x, n=n, axis=axis)`` for x of `layout`: each chunk keeps its
    device and its positions along `axis` that are below the new length (``length - n``,
    at least 0), since result element ``i`` is computed from x's ``i .. i + n``."""
    length = max(layout.shape[axis] - n, 0)
    shape = (*layout.shape[:axis], length, *layout.shape[axis + 1 :])
    index_map: dict = {}
    for device, index in layout.chunks:
        s = index[axis]
        kept = range(min(s.start, length), min(s.stop, length), s.step)
        shifted = (*index[:axis], _regions.to_slice(kept), *index[axis + 1 :])
        index_map.setdefault(device, []).append(shifted)
    return Layout(shape, index_map)


def _diff_chunks(x: DistArray, n: int, axis: int) -> Chunks:
    """The chunks of ``numpy.diff(x, n, axis)`` in `diff_layout`, each from a halo of x:
    the halos every chunk needs are fetched in one step (one exchange between the
    processes of an SPMD run, each walking the same plan)."""
    storage = _redistribute.change_mode(x.storage, x.mode, REPLICA)
    backend = storage.backend
    xp = backend.xp
    layout = diff_layout(x.layout, axis, n)
    dtype = np.diff(np.zeros(n + 1, x.dtype), n=n).dtype
    halos = _halo_regions(x.layout, layout, axis, n)
    fetched = [k for k, region in enumerate(halos) if region is not None]
    pieces = dict(
        zip(
            fetched,
            _redistribute.regions_value(
                storage, [halos[k] for k in fetched], [layout.chunk_devices[k] for k in fetched]
            ),
        )
    )

    def make(k: int):
        kept = layout.boxes[k][axis]
        if not len(kept):
            return xp.empty(layout.chunk_shapes[k], dtype)
        piece = pieces[k] if k in pieces else storage.buffers[k]
        out = xp.diff(piece, n=n, axis=axis)
        step = (slice(None),) * axis + (slice(None, None, kept.step),)
        return out[step]

    return Chunks.generate(layout, backend, make, dtype)


@plan_cache
def _halo_regions(source: Layout, layout: Layout, axis: int, n: int) -> tuple:
    """Per chunk of the diff's `layout`, the region of x it is computed from (its
    positions from its first to `n` past its last along `axis`), or None where that is
    x's chunk itself (or the chunk is empty)."""
    regions: list[tuple | None] = []
    for box, held in zip(layout.boxes, source.boxes):
        kept = box[axis]
        if not len(kept):
            regions.append(None)
            continue
        region = (*box[:axis], range(kept.start, kept[-1] + n + 1), *box[axis + 1 :])
        regions.append(None if region == held else region)
    return tuple(regions)


@implements(np.diff, spmd=True)
def _diff(a, n=1, axis=-1, prepend=NO_VALUE, append=NO_VALUE):
    """``numpy.diff`` over DistArrays: per chunk, from the chunk's data and the `n`
    elements past its end along `axis` (fetched from the next chunk: only those move).
    The result is laid out as `a` shrunk by `n` along `axis` (`diff_layout`), in REPLICA
    mode (differences do not commute with combining partial copies)."""
    n = operator.index(n)
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    if not isinstance(a, DistArray):
        template = next(s for s in (prepend, append) if isinstance(s, DistArray))
        a = _as_dist(np.asanyarray(a), template)
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = _normalize_axis(axis, a.ndim)
    parts: list[DistArray] = []
    for given in (prepend, a, append):
        if given is NO_VALUE:
            continue
        side = _as_dist(given if isinstance(given, DistArray) else np.asanyarray(given), a)
        if side.ndim == 0:
            side = broadcast_to(side, (*a.shape[:axis], 1, *a.shape[axis + 1 :]))
        parts.append(side)
    if len(parts) > 1:
        a = concat(parts, axis=axis)
    return wrap(_diff_chunks(a, n, axis), REPLICA)


def _as_dist(value, template: DistArray) -> DistArray:
    if isinstance(value, DistArray):
        return value
    layout = Layout.block(value.shape, devices=template.devices)
    return wrap(Chunks.from_host(np.asarray(value), layout, template.storage.backend))


def diff(
    x: DistArray,
    /,
    *,
    axis: int = -1,
    n: int = 1,
    prepend: DistArray | None = None,
    append: DistArray | None = None,
) -> DistArray:
    """The `n`-th forward differences of `x` along `axis`, ``out[i] = x[i+1] - x[i]``
    applied `n` times (array API), after joining `prepend` and `append` to `x` along it.

    Parameters
    ----------
    x : DistArray
        The input array, of at least one axis.
    axis : int
        The axis to take differences along (the last by default).
    n : int
        How many times to take differences (non-negative).
    prepend, append : DistArray, optional
        Values joined before and after `x` along `axis` first; `x`'s shape off `axis`.

    Returns
    -------
    DistArray
        The differences: `x`'s shape with `axis` ``n`` shorter (plus the joined lengths).

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([1, 4, 9, 16]))
    >>> mdarray.diff(x).get(), mdarray.diff(x, n=2).get()
    (array([3, 5, 7]), array([2, 2]))
    """
    kwargs: dict[str, Any] = {"n": n, "axis": axis}
    if prepend is not None:
        kwargs["prepend"] = prepend
    if append is not None:
        kwargs["append"] = append
    return np.diff(x, **kwargs)


@implements(np.may_share_memory)
def _may_share_memory(a, b, /, max_work=None) -> bool:
    """``numpy.may_share_memory`` of DistArrays (or a DistArray and an array): whether a
    chunk buffer of one may share memory with one of the other on the same device, each
    pair tested by the backend's own function; nothing is gathered."""
    return _share(a, b, "may_share_memory", max_work)


@implements(np.shares_memory)
def _shares_memory(a, b, /, max_work=None) -> bool:
    """``numpy.shares_memory`` of DistArrays (or a DistArray and an array), pair by pair
    of chunk buffers on the same device, exactly (`max_work` as NumPy takes it)."""
    return _share(a, b, "shares_memory", max_work)


def _share(a, b, name: str, max_work) -> bool:
    backend = next(x.storage.backend for x in (a, b) if isinstance(x, DistArray))
    test = getattr(backend.xp, name)
    kwargs = {} if max_work is None else {"max_work": max_work}
    others = _pieces(b, backend)
    for device, buffer in _pieces(a, backend):
        for where, other in others:  # (None: a host array, on any device)
            if (device is None or where is None or where == device) and test(
                buffer, other, **kwargs
            ):
                return True
    return False


def _pieces(x, backend: Backend) -> list:
    """``(device, buffer)`` per chunk of a DistArray `x` held here; an array of the
    backend as one piece on its device (None: any device, a host array on the cpu
    backend); nothing for anything else (a scalar, another backend's array)."""
    if isinstance(x, DistArray):
        devices = x.layout.chunk_devices
        return [(d, b) for d, b in zip(devices, x.storage.buffers) if backend.is_native(b)]
    if backend.is_native(x):
        return [(backend.device_of(x), x)]
    return []
