"""Set functions: unique_all, unique_counts, unique_inverse and unique_values, and
NumPy's ``unique`` (without ``axis``), without gathering.

They run on the distributed sort of the flattened array (`_sorting_functions`: a sample
sort where chunks split it, each element moving once; with the indices that sort it
where the first occurrences or the inverse are asked for). Each run of the sorted array
marks where a new value starts: its elements compared with their predecessors, the
first with the last element of the run before it (one element moves per boundary). The
values, first positions and first indices are picked where marked, on each run's device;
counts are differences of first positions (the host reads one position per run). The
inverse is ``searchsorted`` of the array in the unique values, each NaN given its own
NaN by its rank among the NaNs (a stable sort keeps them in order). As in NumPy, each
NaN is a distinct value (``equal_nan=False``; NumPy's ``unique`` keeps one by default)
and the two signed zeros are one; the results are NumPy's named tuples, fields
DistArrays. In a run of several processes the values and counts run natively (the runs'
boundary elements move in one step, the positions read by the host are shared); the
first indices and the inverse take the fallback there.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from mdarray._array.array import DistArray, wrap
from mdarray._backends.backend import Backend
from mdarray._core.modes import REPLICA
from mdarray._core.registry import implements
from mdarray._layouts.layout import Layout
from mdarray._movement.collectives import merged_everywhere, several
from mdarray._movement.fetch import fetch_pieces
from mdarray._ops.creation.creation_functions import asarray
from mdarray._ops.engine.fallback import fallback
from mdarray._ops.shape.manipulation_functions import reshape
from mdarray._storage import local as _this_process
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import placed

from .searching_functions import _searchsorted
from .sorting_functions import as_chunks, runs, sample_sort, sorted_along, to_host

_RESULTS = {
    "values": np.unique_values(np.zeros(0)).__class__,
    "all": type(np.unique_all(np.zeros(0))),
    "counts": type(np.unique_counts(np.zeros(0))),
    "inverse": type(np.unique_inverse(np.zeros(0))),
}


def _from_runs(devices: list, arrays: list, backend: Backend, dtype) -> DistArray:
    """A 1-D DistArray of `arrays` (on `devices`) one after another, as they are."""
    index_map: dict = {}
    start = 0
    for device, array in zip(devices, arrays):
        index_map.setdefault(device, []).append(slice(start, start + array.shape[0], 1))
        start += array.shape[0]
    layout = Layout((start,), index_map)
    queue: dict = {}
    for device, array in zip(devices, arrays):
        queue.setdefault(device, []).append(array)
    # Layout lists a device's chunks in the order given.
    return wrap(Chunks.of(layout, [queue[d].pop(0) for d in layout.chunk_devices], backend, dtype))


def _sorted_with_order(flat: DistArray, want_order: bool) -> tuple[DistArray, DistArray | None]:
    if not want_order:
        return sorted_along(flat, 0, arg=False), None
    if flat.layout.splits(0):
        return sample_sort(flat, True)
    return sorted_along(flat, 0, arg=False), sorted_along(flat, 0, arg=True)


def unique_parts(x: DistArray, equal_nan: bool, want_order: bool) -> dict:
    """The sorted unique values of `x` (flattened), their counts, and with `want_order`
    the index of each one's first occurrence and the inverse (of `x`'s shape)."""
    flat = reshape(x, (-1,))
    if flat.mode.is_partial:
        flat = flat.change_mode(REPLICA)
    backend = flat.storage.backend
    xp = backend.xp
    ordered, order = _sorted_with_order(flat, want_order)
    pieces = runs(ordered)
    order_pieces = [] if order is None else [p for _, p in runs(order)]
    devices = [d for d, _ in pieces]
    lengths = [piece.shape[0] for _, piece in pieces]
    nan_kind = flat.dtype.kind in "fc"
    # The last element of each run before another, on that one's device: one step.
    befores: list = []
    if len(pieces) > 1:
        chunks, chunk_of = as_chunks(pieces, backend, flat.dtype)
        lasts = [(chunk_of[p], (slice(lengths[p] - 1, lengths[p]),)) for p in range(len(pieces))]
        befores = fetch_pieces(chunks, [(*lasts[p - 1], devices[p]) for p in range(1, len(pieces))])
    values: dict = {}
    firsts: dict = {}
    indices: dict = {}
    starts = np.cumsum([0, *lengths]).tolist()
    # another process marks its own
    for p, device in _this_process.mine([device for device, _ in pieces]):
        piece = pieces[p][1]
        with backend.on(device):
            new = xp.empty(piece.shape, bool)
            new[1:] = _differ(xp, piece[1:], piece[:-1], nan_kind, equal_nan)
            if p == 0:
                new[:1] = True
            else:
                new[:1] = _differ(xp, piece[:1], befores[p - 1], nan_kind, equal_nan)
            at = xp.flatnonzero(new)
            values[p] = piece[at]
            firsts[p] = at.astype(np.intp) + starts[p]
            if order is not None:
                indices[p] = order_pieces[p][at]
    n = starts[-1]
    # Counts: differences of first positions, each run's last against the next run's
    # first (the host reads one position per run; the processes share them).
    own = list(firsts)
    heads = to_host(backend, [firsts[p][:1] for p in own], [devices[p] for p in own])
    shared = merged_everywhere(
        {p: (firsts[p].shape[0], int(h[0]) if h.size else None) for p, h in zip(own, heads)}
    )
    found = [shared[p][0] for p in range(len(pieces))]
    nexts = [
        next((shared[q][1] for q in range(p + 1, len(pieces)) if shared[q][1] is not None), n)
        for p in range(len(pieces))
    ]
    counts: dict = {}
    for p in own:
        with backend.on(devices[p]):
            counts[p] = xp.diff(firsts[p], append=xp.full((1,), nexts[p], np.intp))

    def listed(arrays: dict, dtype) -> list:
        got = [arrays.get(p) for p in range(len(pieces))]
        return placed(got, [(f,) for f in found], devices, dtype)

    if not pieces:  # an empty array: empty results on its devices
        layout = Layout.block((0,), devices=flat.layout.devices)
        empty = wrap(Chunks.full(layout, 0, flat.dtype, backend))
        nothing = wrap(Chunks.full(layout, 0, np.intp, backend))
        inverse = wrap(Chunks.full(x.layout, 0, np.intp, backend)) if want_order else None
        return {"values": empty, "counts": nothing, "indices": nothing, "inverse": inverse}
    out = {
        "values": _from_runs(devices, listed(values, flat.dtype), backend, flat.dtype),
        "counts": _from_runs(devices, listed(counts, np.intp), backend, np.intp),
    }
    if want_order:
        out["indices"] = _from_runs(devices, listed(indices, np.intp), backend, np.intp)
        out["inverse"] = reshape(_inverse(flat, out["values"], nan_kind and not equal_nan), x.shape)
    return out


def _differ(xp, a, b, nan_kind: bool, equal_nan: bool):
    """Where `a` starts a new value after `b` (NaNs distinct unless `equal_nan`)."""
    if nan_kind and equal_nan:
        return (a != b) & ~(xp.isnan(a) & xp.isnan(b))
    return a != b


def _inverse(flat: DistArray, values: DistArray, nans_distinct: bool) -> DistArray:
    """Where each element of `flat` is in the sorted unique `values`."""
    found = _searchsorted(values, flat)
    if not nans_distinct:
        return found
    nan = np.isnan(flat)
    # The k-th NaN (in order) is the k-th NaN of the values: a stable sort kept them so.
    return found + np.where(nan, np.cumsum(nan) - 1, 0)


def _result(kind: str, parts: dict):
    fields = {
        "all": ("values", "indices", "inverse", "counts"),
        "counts": ("values", "counts"),
        "inverse": ("values", "inverse"),
    }[kind]
    return _RESULTS[kind](*(parts[f] for f in fields))


@implements(np.unique_all)
def _unique_all(x):
    if not isinstance(x, DistArray):
        return fallback(np.unique_all, (x,), {}, "numpy.unique_all")
    return _result("all", unique_parts(x, False, True))


@implements(np.unique_counts, spmd=True)
def _unique_counts(x):
    if not isinstance(x, DistArray):
        return fallback(np.unique_counts, (x,), {}, "numpy.unique_counts")
    return _result("counts", unique_parts(x, False, False))


@implements(np.unique_inverse)
def _unique_inverse(x):
    if not isinstance(x, DistArray):
        return fallback(np.unique_inverse, (x,), {}, "numpy.unique_inverse")
    return _result("inverse", unique_parts(x, False, True))


@implements(np.unique_values, spmd=True)
def _unique_values(x):
    # Sorted, as the other three and every array library's (NumPy's own is in hash order
    # since 2.3; scikit-learn's labels rely on the sorted order of a non-NumPy namespace).
    if not isinstance(x, DistArray):
        return fallback(_sorted_unique_values, (x,), {}, "numpy.unique_values")
    return unique_parts(x, False, False)["values"]


def _sorted_unique_values(x):
    return np.unique(x.reshape(-1), equal_nan=False)


@implements(np.unique, spmd=True)
def _unique(
    ar,
    return_index=False,
    return_inverse=False,
    return_counts=False,
    axis=None,
    *,
    equal_nan=True,
    sorted=True,
):
    """``numpy.unique`` without `axis`; the inverse has NumPy's shape for it."""
    args = {
        "return_index": return_index,
        "return_inverse": return_inverse,
        "return_counts": return_counts,
        "axis": axis,
        "equal_nan": equal_nan,
        "sorted": sorted,
    }
    want_order = bool(return_index or return_inverse)
    # The inverse (a distributed searchsorted) has no multi-process implementation yet.
    if not isinstance(ar, DistArray) or axis is not None or (want_order and several()):
        return fallback(np.unique, (ar,), args, "numpy.unique")
    parts = unique_parts(ar, bool(equal_nan), want_order)
    out = [parts["values"]]
    if return_index:
        out.append(parts["indices"])
    if return_inverse:
        probe = np.unique(np.zeros((1,) * ar.ndim), return_inverse=True)[1]
        out.append(parts["inverse"] if probe.ndim == ar.ndim else reshape(parts["inverse"], (-1,)))
    if return_counts:
        out.append(parts["counts"])
    return out[0] if len(out) == 1 else tuple(out)


def unique_all(x: DistArray, /) -> Any:
    """The unique elements of `x` (flattened), with the index of each one's first
    occurrence, the indices that rebuild `x` from them, and their counts (array API).

    Moves what the distributed argsort of `x` moves, one element per chunk boundary,
    and for the inverse each element to the device of the unique values it lands in
    and its index back (see the module docstring).

    Parameters
    ----------
    x : DistArray
        The input array (flattened).

    Returns
    -------
    UniqueAllResult
        A named tuple ``(values, indices, inverse_indices, counts)`` of DistArrays:
        `values` sorted, `inverse_indices` of `x`'s shape.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([2, 1, 2]))
    >>> with mdarray.options(fallback="raise"):
    ...     result = mdarray.unique_all(x)
    >>> result.values.get(), result.indices.get(), result.counts.get()
    (array([1, 2]), array([1, 0]), array([1, 2]))
    """
    return np.unique_all(asarray(x))


def unique_counts(x: DistArray, /) -> Any:
    """The unique elements of `x` (flattened) and how often each occurs (array API).

    Moves what the distributed sort of `x` moves and one element per chunk boundary.

    Parameters
    ----------
    x : DistArray
        The input array (flattened).

    Returns
    -------
    UniqueCountsResult
        A named tuple ``(values, counts)`` of DistArrays, `values` sorted.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([2, 1, 2]))
    >>> with mdarray.options(fallback="raise"):
    ...     values, counts = mdarray.unique_counts(x)
    >>> values.get(), counts.get()
    (array([1, 2]), array([1, 2]))
    """
    return np.unique_counts(asarray(x))


def unique_inverse(x: DistArray, /) -> Any:
    """The unique elements of `x` (flattened) and the indices into them that rebuild `x`
    (array API).

    Moves as `unique_all` does.

    Parameters
    ----------
    x : DistArray
        The input array (flattened).

    Returns
    -------
    UniqueInverseResult
        A named tuple ``(values, inverse_indices)`` of DistArrays: `values` sorted,
        `inverse_indices` of `x`'s shape.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([2, 1, 2]))
    >>> with mdarray.options(fallback="raise"):
    ...     values, inverse = mdarray.unique_inverse(x)
    >>> values.get(), inverse.get()
    (array([1, 2]), array([1, 0, 1]))
    """
    return np.unique_inverse(asarray(x))


def unique_values(x: DistArray, /) -> DistArray:
    """The unique elements of `x` (flattened), sorted (array API); each NaN is its own.

    Moves what the distributed sort of `x` moves and one element per chunk boundary.

    Parameters
    ----------
    x : DistArray
        The input array (flattened).

    Returns
    -------
    DistArray
        The unique values, 1-D, of `x`'s dtype.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([2.0, np.nan, 1.0, 2.0, np.nan]))
    >>> with mdarray.options(fallback="raise"):
    ...     mdarray.unique_values(x).get()
    array([ 1.,  2., nan, nan])
    """
    return cast(DistArray, np.unique_values(asarray(x)))
