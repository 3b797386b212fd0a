"""NumPy's order statistics (``median``, ``percentile``, ``quantile`` and their nan*
forms), native.

NumPy checks the arguments and picks the result dtype on a probe (`_reduction`'s). Then:

- **Along axes no chunk splits**, each chunk runs the array module's own function
  (``xp.quantile`` ...): nothing moves, the result is laid out as the input with the
  reduced axes removed (and ``q``'s axes first, whole in every chunk).
- **Over the whole array** (``axis=None`` or every axis) the order statistics are found
  by a distributed selection, for the methods "linear", "lower", "higher", "nearest" and
  "midpoint": each chunk sorts the elements it owns (where chunks overlap, an element
  counts once), then rounds of pivots (evenly spaced elements of each chunk's part of
  the current value interval, gathered: small) and counts below and at each pivot
  (searchsorted per chunk: small) narrow the interval of each wanted rank until few
  candidates remain; only those reach the host.
- **Along split axes otherwise** (several lanes, or another method) the input is
  resharded, device to device, so that the reduced axes are whole in every chunk; then
  as above.

Data with a NaN gives NaN (the nan* forms ignore NaNs; an all-NaN lane gives NaN with
NumPy's RuntimeWarning).
"""

from __future__ import annotations

import warnings

import numpy as np

from mdarray._array.array import DistArray, in_mode, wrap
from mdarray._backends.backend import Backend
from mdarray._core.constants import NO_VALUE
from mdarray._core.modes import REPLICA
from mdarray._core.registry import implements
from mdarray._exec.chunkwise import write_out
from mdarray._layouts.layout import Layout
from mdarray._movement import redistribute as _redistribute
from mdarray._ops.engine import reduction as _reduction
from mdarray._ops.engine.fallback import fallback
from mdarray._storage.chunks import Chunks

from .histograms import owned_elements
from .nan_reductions import _warn

SELECTED = ("linear", "lower", "higher", "nearest", "midpoint")
# A lane's candidates are gathered once this few remain between the bounds.
FEW = 1024
# Pivots each chunk offers per round.
PIVOTS = 8


# Per-chunk path ---------------------------------------------------------------------


def _with_q_axes(plan: Layout, q_shape: tuple) -> Layout:
    """`plan` with `q_shape`'s axes, whole, before its own (chunk k stays chunk k)."""
    whole = tuple(slice(0, n, 1) for n in q_shape)
    index_map: dict = {}
    for device, index in plan.chunks:
        index_map.setdefault(device, []).append(whole + tuple(index))
    return Layout(q_shape + plan.shape, index_map)


def _per_chunk(x: DistArray, stat, axes: tuple, keepdims: bool, q_shape: tuple, dtype):
    """``stat(chunk, axis, keepdims)`` per chunk of `x` whose chunks hold `axes` whole:
    nothing moves. An all-NaN warning of the chunks is given once."""
    plan, _ = _reduction.reduce_plan(x.layout, axes, keepdims)
    layout = _with_q_axes(plan, q_shape)
    buffers = x.storage.buffers
    backend = x.storage.backend
    shapes = layout.chunk_shapes
    all_nan = False

    def run(k):
        nonlocal all_nan
        if not buffers[k].size:
            return backend.xp.empty(shapes[k], dtype)
        with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
            warnings.simplefilter("always")
            result = stat(buffers[k], axes, keepdims)
        all_nan |= any("All-NaN slice" in str(w.message) for w in caught)
        return backend.xp.asarray(result).astype(dtype, copy=False).reshape(shapes[k])

    result = Chunks.generate(layout, backend, run, dtype)
    if all_nan:
        _warn("All-NaN slice encountered")
    return wrap(result)


# Distributed selection --------------------------------------------------------------


def _owned_sorted(x: DistArray, skip_nan: bool) -> tuple[list, bool]:
    """Per chunk, the sorted elements it owns (each element once; NaNs dropped); and
    whether some element is NaN. Nothing moves."""
    backend = x.storage.backend
    xp = backend.xp
    lanes, has_nan = [], False
    for device, owned in zip(x.layout.chunk_devices, owned_elements(x)[0]):
        with backend.on(device):
            values = owned
            if values.dtype.kind in "fc":
                nan = xp.isnan(values)
                if values.size and bool(nan.any()):
                    has_nan = True
                    values = values[~nan]
            lanes.append(xp.sort(values))
    return lanes, has_nan


def _small(backend: Backend, array, device) -> np.ndarray:
    return _redistribute.host_copy(backend, array, device)


class _Lane:
    """The sorted chunks of one lane and the order statistics found so far."""

    def __init__(self, backend: Backend, devices, chunks) -> None:
        self.backend = backend
        self.devices = devices
        self.chunks = chunks
        self.known: dict[int, object] = {}

    def positions(self, values: np.ndarray, side: str) -> list:
        """Per chunk, where `values` would be inserted (``left`` or ``right``)."""
        found = []
        for device, chunk in zip(self.devices, self.chunks):
            if not chunk.size:
                found.append(np.zeros(values.shape, np.int64))
                continue
            with self.backend.on(device):
                where = self.backend.xp.searchsorted(
                    chunk, self.backend.from_host(values, device), side=side
                )
            found.append(_small(self.backend, where, device).astype(np.int64))
        return found

    def counts(self, pivots: np.ndarray, side: str) -> np.ndarray:
        """How many elements lie below (``left``) or at most at (``right``) each pivot."""
        return np.sum(self.positions(pivots, side), axis=0)

    def _ranges(self, low, high) -> list:
        """Per chunk, the index range of its elements in the open interval (low, high)
        (None: unbounded)."""
        sizes = [int(chunk.shape[0]) for chunk in self.chunks]
        starts = [0] * len(sizes)
        stops = list(sizes)
        if low is not None:
            starts = [int(p[0]) for p in self.positions(np.asarray([low]), "right")]
        if high is not None:
            stops = [int(p[0]) for p in self.positions(np.asarray([high]), "left")]
        return [(start, max(start, stop)) for start, stop in zip(starts, stops)]

    def select(self, rank: int):
        """The `rank`-th smallest element (0-based)."""
        low = high = None
        below = 0  # elements at most `low`
        while rank not in self.known:
            ranges = self._ranges(low, high)
            remaining = sum(stop - start for start, stop in ranges)
            if remaining <= FEW:
                self._gather(ranges, below)
                break
            pivots = self._pivots(ranges)
            less = self.counts(pivots, "left")
            at_most = self.counts(pivots, "right")
            hit = np.nonzero((less <= rank) & (rank < at_most))[0]
            if hit.size:
                self.known[rank] = pivots[hit[0]]
                break
            lower = np.nonzero(at_most <= rank)[0]
            if lower.size:
                low, below = pivots[lower[-1]], int(at_most[lower[-1]])
            upper = np.nonzero(less > rank)[0]
            if upper.size:
                high = pivots[upper[0]]
        return self.known[rank]

    def _pivots(self, ranges) -> np.ndarray:
        """Evenly spaced elements of each chunk's part of the interval, sorted, unique."""
        found = []
        for device, chunk, (start, stop) in zip(self.devices, self.chunks, ranges):
            if stop > start:
                picks = np.unique(np.linspace(start, stop - 1, PIVOTS).astype(np.intp))
                with self.backend.on(device):
                    taken = chunk[self.backend.from_host(picks, device)]
                found.append(_small(self.backend, taken, device))
        return np.unique(np.concatenate(found))

    def _gather(self, ranges, below: int) -> None:
        """The elements in `ranges` to the host, sorted: ranks ``below`` onwards."""
        pieces = [
            _small(self.backend, chunk[start:stop], device)
            for device, chunk, (start, stop) in zip(self.devices, self.chunks, ranges)
            if stop > start
        ]
        values = np.sort(np.concatenate(pieces)) if pieces else np.empty(0)
        for offset, value in enumerate(values):
            self.known[below + offset] = value


def _lerp(a, b, t):
    """NumPy's ``_lerp``: exact at both ends."""
    diff = b - a
    return np.where(t >= 0.5, b - diff * (1 - t), a + diff * t)


def _from_ranks(lane: _Lane, n: int, q: np.ndarray, method: str, median: bool, dtype):
    """NumPy's quantile formulas on the order statistics of a lane of `n` elements."""
    last = n - 1
    if median:
        k = last // 2
        low, high = lane.select(k), lane.select(k + (n % 2 == 0))
        return np.asarray(np.add(low, high, dtype=dtype) / 2, dtype)
    virtual = (n - 1) * q
    if method in ("lower", "higher", "nearest"):
        if method == "lower":
            rounded = np.floor(virtual)
        else:
            rounded = np.ceil(virtual) if method == "higher" else np.around(virtual)
        index = np.clip(rounded.astype(np.intp), 0, last)
        return np.asarray([lane.select(int(i)) for i in index.ravel()]).reshape(q.shape)
    if method == "midpoint":
        virtual = 0.5 * (np.floor(virtual) + np.ceil(virtual))
    previous = np.floor(virtual)
    gamma = virtual - previous
    if method == "midpoint":
        gamma = np.where(virtual % 1 == 0, 0.0, 0.5)
    previous = np.clip(previous, 0, last).astype(np.intp)
    following = np.clip(previous + 1, 0, last)
    following = np.where(virtual >= last, last, following)
    previous = np.where(virtual >= last, last, previous)
    a = np.asarray([lane.select(int(i)) for i in previous.ravel()], dtype).reshape(q.shape)
    b = np.asarray([lane.select(int(i)) for i in following.ravel()], dtype).reshape(q.shape)
    return _lerp(a, b, gamma.astype(dtype))


# NumPy's continuous methods by their (alpha, beta): the virtual index of quantile q in a
# lane of n sorted values is ``n*q + alpha + q*(1 - alpha - beta) - 1`` (Hyndman and Fan).
_CONTINUOUS = {
    "interpolated_inverted_cdf": (0.0, 1.0),
    "hazen": (0.5, 0.5),
    "weibull": (0.0, 0.0),
    "median_unbiased": (1 / 3.0, 1 / 3.0),
    "normal_unbiased": (3 / 8.0, 3 / 8.0),
}


def _lanes_quantile(xp, chunk, q, axes: tuple, keepdims: bool, method: str, median: bool,
                    skip_nan: bool):  # fmt: skip
    """NumPy's quantile (or median; their nan forms where `skip_nan`) of one chunk along
    `axes` (whole in it), by sorting its lanes (NaNs sort last) and NumPy's formulas for
    every method on each lane's count of values (non-NaN ones where `skip_nan`; a lane
    holding NaN gives NaN otherwise); NaN and NumPy's warning for an all-NaN lane. For
    what the backend's own function does not serve: CuPy has no nan forms and its
    quantile knows only the `SELECTED` methods."""
    kept = [a for a in range(chunk.ndim) if a not in axes]
    lanes = xp.moveaxis(chunk, list(axes), list(range(len(kept), chunk.ndim)))
    kept_shape = lanes.shape[: len(kept)]
    lanes = xp.sort(lanes.reshape(*kept_shape, -1), axis=-1)
    nan = xp.isnan(lanes) if lanes.dtype.kind in "fc" else xp.zeros(lanes.shape, bool)
    if skip_nan:
        n = xp.sum(~nan, axis=-1)
        if bool((n == 0).any()):
            _warn("All-NaN slice encountered")
    else:
        n = xp.full(kept_shape, lanes.shape[-1])
    last = xp.maximum(n - 1, 0)
    q = np.asarray(0.5 if median else q, np.float64)
    q_dev = xp.asarray(q.reshape(q.shape + (1,) * len(kept_shape)))
    virtual = (n - 1) * q_dev

    def take(index):
        index = xp.broadcast_to(xp.clip(index, 0, last), virtual.shape).astype(xp.intp)
        moved = xp.moveaxis(index, tuple(range(q.ndim)), tuple(range(-q.ndim, 0)))
        flat = moved.reshape(*kept_shape, -1)
        found = xp.take_along_axis(lanes, flat, axis=-1).reshape(moved.shape)
        return xp.moveaxis(found, tuple(range(-q.ndim, 0)), tuple(range(q.ndim)))

    def between(previous, gamma):  # NumPy's lerp of the neighbours, clamped at the last
        following = xp.where(virtual >= last, last, previous + 1)
        previous = xp.where(virtual >= last, last, previous)
        a, b = take(previous).astype(np.float64), take(following).astype(np.float64)
        diff = b - a
        return xp.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)

    if median:  # the mean of the middle two, complex ones kept complex
        low, high = take((n - 1) // 2), take(n // 2)
        result = (low.astype(np.result_type(low.dtype, np.float64)) + high) / 2
    elif method in ("lower", "higher", "nearest"):
        rounded = {"lower": xp.floor, "higher": xp.ceil, "nearest": xp.around}[method]
        result = take(rounded(virtual))
    elif method in ("inverted_cdf", "closest_observation"):
        # Discrete: the order statistic below or above, by NumPy's condition on gamma.
        virtual = n * q_dev - (1.0 if method == "inverted_cdf" else 1.5)
        previous = xp.floor(virtual)
        below = virtual == previous
        if method == "closest_observation":
            below = below & (previous % 2 == 1)
        result = take(xp.maximum(xp.where(below, previous, previous + 1), 0))
    elif method == "averaged_inverted_cdf":
        virtual = n * q_dev - 1
        previous = xp.floor(virtual)
        result = between(previous, xp.where(virtual == previous, 0.5, 1.0))
    else:
        if method == "midpoint":
            virtual = 0.5 * (xp.floor(virtual) + xp.ceil(virtual))
        elif method in _CONTINUOUS:
            alpha, beta = _CONTINUOUS[method]
            virtual = n * q_dev + (alpha + q_dev * (1 - alpha - beta)) - 1
        previous = xp.floor(virtual)
        gamma = virtual - previous
        if method == "midpoint":
            gamma = xp.where(virtual % 1 == 0, 0.0, 0.5)
        result = between(previous, gamma)
    empty = (n == 0) if skip_nan else xp.any(nan, axis=-1)
    result = xp.where(empty, xp.nan, result)
    if keepdims:
        result = xp.expand_dims(result, tuple(q.ndim + a for a in axes))
    return result


def _selected(x: DistArray, q, method, median, skip_nan, shape, dtype) -> DistArray:
    """The order statistics of all of `x` by distributed selection, as a DistArray of
    `shape` blocked over x's devices."""
    lanes, has_nan = _owned_sorted(x, skip_nan)
    backend = x.storage.backend
    q = np.asarray(q, np.float64)
    n = sum(int(chunk.shape[0]) for chunk in lanes)
    if (has_nan and not skip_nan) or n == 0:
        if skip_nan and n == 0:
            _warn("All-NaN slice encountered")
        value = np.full(q.shape, np.nan, dtype)
    else:
        lane = _Lane(backend, x.layout.chunk_devices, lanes)
        value = _from_ranks(
            lane, n, q, method, median, np.dtype(dtype) if dtype.kind in "fc" else np.float64
        )
    host = np.asarray(value).astype(dtype).reshape(shape)
    return wrap(Chunks.from_host(host, Layout.block(shape, devices=x.devices), backend))


# Front end --------------------------------------------------------------------------


def _order_statistic(func, a, q, axis, out, method, keepdims, *, median=False,
                     skip_nan=False, scale=1):  # fmt: skip
    """NumPy's `func` of DistArray `a` at quantiles `q` (``q / scale``)."""
    out = _reduction.unwrap_out(out)
    q_host = q.get() if isinstance(q, DistArray) else q
    kwargs = (
        {"keepdims": keepdims} if median else {"q": q_host, "method": method, "keepdims": keepdims}
    )
    checked = _reduction.check_with_probe(func, a, out, dict(kwargs, axis=axis))
    axes = _reduction.normalize_axes(axis, a.ndim)
    q_shape = () if median else np.shape(q_host)
    shape = q_shape + _reduction.reduced_shape(a.shape, axes, bool(keepdims))
    if a.size == 0:
        value = np.asarray(func(np.empty(a.shape, a.dtype), axis=axis, **kwargs))
        result = _reduction.filled(a, value.shape, value, checked.dtype)
        return result if out is None else write_out(out, result)
    x = in_mode(a, REPLICA)
    _, whole = _reduction.reduce_plan(x.layout, axes, bool(keepdims))
    backend = x.storage.backend
    xp = backend.xp
    plain = func.__name__.removeprefix("nan")
    # Lanes without NaN (no float dtype) take the plain form.
    name = "nan" + plain if skip_nan and a.dtype.kind in "fc" else plain
    # Where the backend's function does not serve this call as NumPy's does (CuPy has no
    # nanquantile, its nanmedian gives no all-NaN warning, its quantile takes only the
    # SELECTED methods and gives no NaN for a lane holding one), the lanes are sorted here.
    own = xp is np or (median and name == plain)
    q_frac = None if median else np.true_divide(q_host, scale)
    wide = checked.dtype

    def stat(chunk, chunk_axes, keep):
        if not chunk_axes:  # CuPy reduces no empty axis tuple: each element is its lane
            chunk, chunk_axes, keep = chunk[None], (0,), False
        chunk = backend.sort_keys(chunk)  # NaNs last, as NumPy sorts them
        if not own:
            lanes_skip = skip_nan and chunk.dtype.kind in "fc"
            return _lanes_quantile(xp, chunk, q_frac, chunk_axes, keep, method, median, lanes_skip)
        if median:
            return getattr(xp, name)(chunk, axis=chunk_axes, keepdims=keep)
        # CuPy takes q as a float or one of its 1-D arrays (the result is reshaped).
        q_chunk = q_host if np.ndim(q_host) == 0 else xp.asarray(np.ravel(q_host))
        if name != plain and chunk.dtype != wide and wide.kind == "f":
            # NumPy's nan forms compute in the dtype of their first lane's result: the
            # input's where that lane is all NaN. A chunk's first lane is not the array's,
            # so the chunk comes in the call's dtype (float32 lanes by float64 q).
            chunk = chunk.astype(wide)
        return getattr(xp, name)(chunk, q_chunk, axis=chunk_axes, method=method, keepdims=keep)

    # Over every axis of an array on several devices, the distributed selection; on one
    # device its chunks join there (nothing moves between devices) and one sort serves.
    if not whole and len(axes) == x.ndim and method in SELECTED and len(x.devices) > 1:
        result = _selected(x, q_frac, method, median, skip_nan, shape, checked.dtype)
    else:
        if not whole:
            x = x.reshard(x.layout.whole_along(axes))
        result = _per_chunk(x, stat, axes, bool(keepdims), q_shape, checked.dtype)
    # NumPy's nan* forms take the dtype of their first lane's result, which for an
    # all-NaN lane is the input's.
    if (
        skip_nan
        and result.size
        and result.dtype != x.dtype
        and x.dtype.kind == "f"
        and np.isnan(float(result[(0,) * result.ndim]))
    ):
        result = result.astype(x.dtype)
    return result if out is None else write_out(out, result)


def _check_extras(name, a, kwargs: dict):
    """A non-DistArray input, ``weights=`` or the deprecated ``interpolation=``: NumPy
    decides (through the fallback policy)."""
    return not isinstance(a, DistArray) or any(
        kwargs.get(k) is not None for k in ("weights", "interpolation")
    )


@implements(np.median)
def _np_median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``numpy.median``: the middle value (the mean of the two middle ones), NaN where a
    lane holds a NaN.

    Along axes no chunk splits nothing moves. Over the whole array a distributed
    selection moves only pivots, counts and the last few candidates; along other split
    axes the input is resharded so that they are whole.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([3.0, 1.0, 4.0, 1.0, 5.0]), mdarray.Layout.block((5,), devices=[0, 1]))
    >>> float(np.median(x))
    3.0
    """
    if not isinstance(a, DistArray):
        kwargs = {
            "axis": axis,
            "out": out,
            "overwrite_input": overwrite_input,
            "keepdims": keepdims,
        }
        return fallback(np.median, (a,), kwargs, "numpy.median")
    return _order_statistic(np.median, a, None, axis, out, "linear", keepdims, median=True)


@implements(np.nanmedian)
def _np_nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=NO_VALUE):
    """``numpy.nanmedian``: the median of the non-NaN elements (NaN and NumPy's
    RuntimeWarning for an all-NaN lane); data movement as `numpy.median`.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([3.0, np.nan, 4.0, 1.0]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> float(np.nanmedian(x))
    3.0
    """
    keep = False if keepdims is NO_VALUE else keepdims
    if not isinstance(a, DistArray):
        kwargs = {"axis": axis, "out": out, "overwrite_input": overwrite_input}
        kwargs.update({} if keepdims is NO_VALUE else {"keepdims": keepdims})
        return fallback(np.nanmedian, (a,), kwargs, "numpy.nanmedian")
    return _order_statistic(
        np.nanmedian, a, None, axis, out, "linear", keep, median=True, skip_nan=True
    )


def _quantile_function(func, skip_nan: bool, scale):
    name = f"numpy.{func.__name__}"

    def impl(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):  # fmt: skip
        kwargs = {"axis": axis, "out": out, "overwrite_input": overwrite_input}
        kwargs.update(method=method, keepdims=keepdims, weights=weights)
        kwargs.update(interpolation=interpolation)
        if _check_extras(name, a, kwargs):
            kwargs = {k: v for k, v in kwargs.items() if v is not None or k == "axis"}
            return fallback(func, (a, q), kwargs, name)
        return _order_statistic(
            func, a, q, axis, out, method, keepdims, skip_nan=skip_nan, scale=scale
        )

    return impl


_quantile = _quantile_function(np.quantile, False, 1)
_nanquantile = _quantile_function(np.nanquantile, True, 1)
_percentile = _quantile_function(np.percentile, False, 100)
_nanpercentile = _quantile_function(np.nanpercentile, True, 100)


@implements(np.quantile)
def _np_quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                 keepdims=False, *, weights=None, interpolation=None):  # fmt: skip
    """``numpy.quantile``: the `q`-th quantiles (shape ``q.shape`` + the reduced shape).

    Data movement as `numpy.median` (the selection serves "linear", "lower", "higher",
    "nearest" and "midpoint"; the other methods reshard). ``weights=`` uses the
    fallback.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(8.0), mdarray.Layout.block((8,), devices=[0, 1]))
    >>> np.quantile(x, [0.25, 0.5]).get()
    array([1.75, 3.5 ])
    """
    return _quantile(a, q, axis, out, overwrite_input, method, keepdims, weights=weights,
                     interpolation=interpolation)  # fmt: skip


@implements(np.nanquantile)
def _np_nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                    keepdims=False, *, weights=None, interpolation=None):  # fmt: skip
    """``numpy.nanquantile``: `numpy.quantile` of the non-NaN elements.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([1.0, np.nan, 3.0, 5.0]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> float(np.nanquantile(x, 0.5))
    3.0
    """
    return _nanquantile(a, q, axis, out, overwrite_input, method, keepdims, weights=weights,
                        interpolation=interpolation)  # fmt: skip


@implements(np.percentile)
def _np_percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                   keepdims=False, *, weights=None, interpolation=None):  # fmt: skip
    """``numpy.percentile``: `numpy.quantile` at ``q / 100``.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(5.0), mdarray.Layout.block((5,), devices=[0, 1]))
    >>> float(np.percentile(x, 50))
    2.0
    """
    return _percentile(a, q, axis, out, overwrite_input, method, keepdims, weights=weights,
                       interpolation=interpolation)  # fmt: skip


@implements(np.nanpercentile)
def _np_nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                      keepdims=False, *, weights=None, interpolation=None):  # fmt: skip
    """``numpy.nanpercentile``: `numpy.percentile` of the non-NaN elements.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.array([1.0, np.nan, 3.0, 5.0]), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> float(np.nanpercentile(x, 50))
    3.0
    """
    return _nanpercentile(a, q, axis, out, overwrite_input, method, keepdims, weights=weights,
                          interpolation=interpolation)  # fmt: skip
