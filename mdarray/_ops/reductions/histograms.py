"""NumPy's ``histogram`` and ``bincount``, native: per-chunk counts, partial (SUM).

Each chunk counts the elements it owns (where chunks overlap, an element counts once)
with the array module's own ``histogram`` / ``bincount`` against the same bins; a
device's chunks add their counts where they are, and the result is a SUM partial with
one full-length copy per device, which nothing moves until it is combined (one
result-sized partial per extra device). The bins need the global extremes when NumPy
would take them from the data: two native reductions (MIN, MAX), one scalar per device.
``histogram2d`` and ``histogramdd`` find each coordinate's bin by the backend's
``searchsorted`` on each chunk against the (host) edges, then count the flat bins so.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from mdarray._array.array import DistArray, in_mode, wrap
from mdarray._core.modes import REPLICA, SUM
from mdarray._core.registry import implements
from mdarray._exec.chunkwise import aligned
from mdarray._layouts.layout import Layout
from mdarray._movement import redistribute as _redistribute
from mdarray._ops.creation.index_arithmetic import with_tables
from mdarray._ops.engine.fallback import fallback
from mdarray._storage import local as _this_process
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import local_chunks, placed


def owned_elements(x: DistArray, weights=None) -> tuple[list, list | None]:
    """Per chunk of REPLICA `x`, the elements it owns, flat (where chunks overlap, each
    element belongs to one), and their `weights` (an operand of x's shape) where given.
    Nothing moves; a chunk that shadows nothing gives a flat view of itself; None for
    another process's chunk."""
    storage = x.storage
    backend = storage.backend
    layout = x.layout
    shadowed = layout.shadowed
    masks: tuple = (None,) * len(layout.chunks)
    if any(shadowed):
        owned = Chunks.full(layout, True, np.dtype(bool), backend)
        masks = _redistribute.fill_shadowed(owned, False, in_place=True).buffers
    pieces = None if weights is None else aligned(weights, layout, backend)
    values: list = [None] * len(layout.chunks)  # another process reads its own
    weighed: list | None = None if weights is None else [None] * len(layout.chunks)
    for k, device, chunk in local_chunks(storage):
        with backend.on(device):
            mask = masks[k] if shadowed[k] else None
            values[k] = chunk.reshape(-1) if mask is None else chunk[mask]
            if weighed is not None and pieces is not None:
                piece = backend.xp.broadcast_to(backend.xp.asarray(pieces[k]), chunk.shape)
                weighed[k] = piece.reshape(-1) if mask is None else piece[mask]
    return values, weighed


def _summed(x: DistArray, count, length: int, dtype) -> DistArray:
    """``count(k)`` (a device array of `length`) per chunk of `x`, added per device: a
    SUM partial with one copy per device of x (zeros where a device has no chunk)."""
    backend = x.storage.backend
    devices = x.layout.devices
    layout = Layout((length,), {d: [(slice(0, length, 1),)] for d in devices})
    totals = {d: backend.full((length,), 0, dtype, d) for _, d in _this_process.mine(devices)}
    for k, device in _this_process.mine(x.layout.chunk_devices):
        with backend.on(device):
            part = count(k)
            if part is not None:
                totals[device] = totals[device] + part.astype(dtype, copy=False)
    sums = placed([totals.get(d) for d in devices], layout.chunk_shapes, devices, dtype)
    return wrap(Chunks.of(layout, sums, backend, dtype), SUM)


def _host_edges(x: DistArray, edges: np.ndarray) -> DistArray:
    layout = Layout.block(edges.shape, devices=x.devices)
    return wrap(Chunks.from_host(edges, layout, x.storage.backend))


@implements(np.bincount, spmd=True)
def _np_bincount(x, /, weights=None, minlength=0):
    """``numpy.bincount``: how often each non-negative integer occurs (summing
    `weights` where given); partial (SUM), one full-length copy per device.

    The length needs the global maximum (and the check for negatives the minimum): one
    scalar per device each; nothing else moves until the counts are combined.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([0, 1, 1, 3, 1]), mdarray.Layout.block((5,), devices=[0, 1]))
    >>> counts = np.bincount(x)
    >>> counts.mode, counts.get()
    (mdarray.SUM, array([1, 3, 0, 1]))
    """
    if not isinstance(x, DistArray):
        kwargs = {"weights": weights, "minlength": minlength}
        return fallback(np.bincount, (x,), kwargs, "numpy.bincount")
    if isinstance(weights, (list, tuple)):
        weights = np.asarray(weights)
    host_weights = None if weights is None else np.ones(np.shape(weights), np.float64)
    if weights is not None and isinstance(weights, DistArray):
        host_weights = np.ones(weights.shape, weights.dtype)
    # NumPy's own errors (dimensions, dtypes, minlength, weights' length) on a probe.
    probe = np.zeros(x.shape, x.dtype)
    checked = np.bincount(probe, weights=host_weights, minlength=minlength)
    x = in_mode(x, REPLICA)
    length = int(minlength)
    if x.size:
        if int(np.min(x)) < 0:
            raise ValueError("'list' argument must have no negative elements")
        length = max(length, int(np.max(x)) + 1)
    values, weighed = owned_elements(x, weights)
    xp = x.storage.backend.xp

    def count(k):
        if not values[k].size:
            return None
        chunk_weights = None if weighed is None else weighed[k].astype(np.float64)
        return xp.bincount(values[k].astype(np.intp), weights=chunk_weights, minlength=length)

    return _summed(x, count, length, checked.dtype)


@implements(np.histogram, spmd=True)
def _np_histogram(a, bins=10, range=None, density=None, weights=None):
    """``numpy.histogram``: counts in bins, and the bin edges (DistArrays both); the
    counts partial (SUM), one copy per device, unless `density`.

    Bins from an int without `range` take the global minimum and maximum (one scalar
    per device each); each chunk counts against the same edges. `density` combines the
    counts (result-sized, one partial per extra device). String bins ("auto" ...) use the
    fallback: their estimators read all the data.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([0.0, 1.0, 1.0, 2.0, 4.0]), mdarray.Layout.block((5,), devices=[0, 1]))
    >>> hist, edges = np.histogram(x, bins=4)
    >>> hist.get(), edges.get()
    (array([1, 2, 1, 1]), array([0., 1., 2., 3., 4.]))
    """
    if not isinstance(a, DistArray) or isinstance(bins, str):
        kwargs = {"bins": bins, "range": range, "density": density, "weights": weights}
        return fallback(np.histogram, (a,), kwargs, "numpy.histogram")
    if isinstance(bins, DistArray):
        bins = bins.get()
    if isinstance(weights, (list, tuple)):
        weights = np.asarray(weights)
    if weights is not None and np.shape(weights) != a.shape:
        raise ValueError("weights should have the same shape as a.")
    x = in_mode(a, REPLICA)
    edges = _edges(x, bins, range)
    host_weights = None if weights is None else np.ones(1, _dtype_of(weights))
    dtype = np.histogram(np.zeros(1, x.dtype), bins=edges, weights=host_weights)[0].dtype
    values, weighed = owned_elements(x, weights)
    backend = x.storage.backend
    n_bins = edges.size - 1

    def count(k):
        if not values[k].size or not n_bins:  # CuPy's weighted kernel faults on no bins
            return None
        device = x.layout.chunk_devices[k]
        chunk_values = values[k]
        chunk_weights = None if weighed is None else weighed[k]
        if chunk_values.dtype.kind == "f":  # NumPy drops NaN (past the last edge); CuPy's
            keep = ~backend.xp.isnan(chunk_values)  # kernels count it in the first bin
            chunk_values = chunk_values[keep]
            chunk_weights = None if chunk_weights is None else chunk_weights[keep]
        common = np.result_type(chunk_values.dtype, edges.dtype)
        if chunk_values.dtype != common:  # NumPy compares in the common type (on CuPy
            chunk_values = chunk_values.astype(common)  # an int 1 fell in [-0.5, 0.5])
        return backend.xp.histogram(
            chunk_values, bins=backend.from_host(edges, device), weights=chunk_weights
        )[0]

    hist = _summed(x, count, n_bins, dtype)
    if density:
        counts = hist.get()
        with np.errstate(divide="ignore", invalid="ignore"):
            value = counts / np.diff(edges) / counts.sum()
        hist = _host_edges(x, value)
    return hist, _host_edges(x, edges)


def _edges(x: DistArray, bins, range) -> np.ndarray:
    """The bin edges on the host: NumPy picks them (and raises its errors) from the
    extremes alone (one scalar per device each), read only where `bins` is a count and no
    `range` is given."""
    proxy = np.empty(0, x.dtype)
    if x.size and range is None and np.ndim(bins) == 0:
        proxy = np.array([np.min(x).get(), np.max(x).get()], x.dtype)
    return np.histogram_bin_edges(proxy, bins=bins, range=range)


@implements(np.histogram_bin_edges, spmd=True)
def _np_histogram_bin_edges(a, bins=10, range=None, weights=None):
    """``numpy.histogram_bin_edges`` from the extremes (string estimators gather: they
    read all the data)."""
    if not isinstance(a, DistArray) or isinstance(bins, str):
        kwargs = {"bins": bins, "range": range, "weights": weights}
        return fallback(np.histogram_bin_edges, (a,), kwargs, "numpy.histogram_bin_edges")
    if isinstance(bins, DistArray):
        bins = bins.get()
    return _host_edges(a, _edges(in_mode(a, REPLICA), bins, range))


def _dtype_of(weights) -> np.dtype:
    return weights.dtype if hasattr(weights, "dtype") else np.asarray(weights).dtype


# Histograms of several dimensions ------------------------------------------------------


_axes = builtins.range  # `range` is NumPy's argument name in these functions


def _columns(sample) -> list[DistArray] | None:
    """The D coordinate vectors of `sample` (an (N, D) DistArray, or a sequence of D
    vectors, cast to their common dtype as NumPy stacks them); None where that is no
    DistArray."""
    if isinstance(sample, DistArray):
        if sample.ndim != 2:
            return None
        return [sample[:, k] for k in range(sample.shape[1])]
    if not isinstance(sample, (list, tuple)) or not all(isinstance(s, DistArray) for s in sample):
        return None
    if not sample or any(s.ndim != 1 or s.shape != sample[0].shape for s in sample):
        return None
    dtype = np.result_type(*(s.dtype for s in sample))
    return [s.astype(dtype, copy=False) for s in sample]


def _bins_on_host(bins):
    if isinstance(bins, DistArray):
        return bins.get()
    if isinstance(bins, (list, tuple)):
        return type(bins)(b.get() if isinstance(b, DistArray) else b for b in bins)
    return bins


@implements(np.histogramdd, spmd=True)
def _np_histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """``numpy.histogramdd``: each coordinate's bin by ``searchsorted`` in its edges on
    each chunk, the flat bin by ``ravel_multi_index``, the counts by the native ``bincount``
    (partial, SUM); the edges from the extremes alone (one scalar per device each),
    by NumPy on a two-point stand-in."""
    columns = _columns(sample)
    if columns is None:
        kwargs = {"bins": bins, "range": range, "density": density, "weights": weights}
        return fallback(np.histogramdd, (sample,), kwargs, "numpy.histogramdd")
    bins = _bins_on_host(bins)
    dtype = columns[0].dtype
    if columns[0].size:
        ends = [[np.min(c).get(), np.max(c).get()] for c in columns]
        proxy = np.array(ends, dtype).T
    else:
        proxy = np.empty((0, len(columns)), dtype)
    host_weights = None if weights is None else np.ones(len(proxy))
    # NumPy's edges and its checks of bins and range, from the extremes.
    edges = np.histogramdd(proxy, bins=bins, range=range, weights=host_weights)[1]
    like = columns[0]
    where = [_host_edges(like, e) for e in edges]
    # Each coordinate's bin: the backend's searchsorted on each chunk against the edges,
    # one less on the last edge (it closes the last bin).
    counts = tuple(
        with_tables(c, (e,), lambda xp, chunk, e: xp.searchsorted(e, chunk, side="right"), np.intp)
        - (c == e[-1])
        for e, c in zip(edges, columns)
    )
    shape = tuple(len(e) + 1 for e in edges)
    flat = np.ravel_multi_index(counts, shape)
    if weights is not None and not isinstance(weights, DistArray):
        weights = _host_edges(like, np.asarray(weights))
    hist: Any = np.bincount(flat, weights, minlength=int(np.prod(shape)))
    hist = np.reshape(hist, shape).astype(float)  # counts or float64 sums: a safe cast
    hist = hist[(slice(1, -1),) * len(edges)]
    if density:
        total = np.sum(hist)
        for k, e in enumerate(edges):
            widths = np.diff(e).reshape([-1 if j == k else 1 for j in _axes(len(edges))])
            hist = hist / widths
        hist = hist / total
    return hist, where


@implements(np.histogram2d, spmd=True)
def _np_histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """``numpy.histogram2d``: `histogramdd` of the two coordinate vectors."""
    if not isinstance(x, DistArray) or not isinstance(y, DistArray):
        kwargs = {"bins": bins, "range": range, "density": density, "weights": weights}
        return fallback(np.histogram2d, (x, y), kwargs, "numpy.histogram2d")
    bins = _bins_on_host(bins)
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):
        bins = [np.asarray(bins), np.asarray(bins)]
    hist, edges = _np_histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]
