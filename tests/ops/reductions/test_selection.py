"""median, percentile, quantile and their nan* forms against NumPy over drawn shapes,
dtypes, layouts and modes (NaNs, q arrays, keepdims, methods); data movement."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from test_nan_reductions import check, nan_arrays
from test_statistical_functions import axes

import mdarray
from mdarray import Layout
from mdarray._ops.reductions import selection as _selection

DEVICES = mdarray.devices()
REAL = [np.float64, np.float32, np.int64, np.int32, np.uint8]
METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "weibull"]
QUANTILES = st.sampled_from([0.0, 0.5, 1.0, 0.3, 0.25, 0.99]) | st.floats(0, 1)
# (An empty q array of an all-NaN input takes NumPy's dtype of an all-NaN lane, which
# an empty result cannot show: not drawn.)
Q = QUANTILES | st.lists(QUANTILES, min_size=1, max_size=3).map(np.array)


@pytest.mark.parametrize("func", [np.nanpercentile, np.nanquantile])
def test_nan_forms_compute_in_the_arrays_dtype_whatever_a_chunks_first_lane(func):
    """float32 lanes by a float64 q: NumPy's nan forms compute in float64 unless the
    array's first lane is all NaN. A chunk whose own first lane is all NaN must not
    compute its lanes in float32 (0.30000001 where NumPy gives 0.3)."""
    host = np.zeros((4, 8, 3), np.float32)
    host[:, :, 1] = np.array([0, 1, np.nan, np.nan])[:, None]
    host[:, 2::2, 0] = np.nan  # the first lane of every later chunk of two rows: all NaN
    x = mdarray.distributed_array(host, Layout.block(host.shape, axis=1, devices=DEVICES))
    q = np.array([30.0]) / (100 if func is np.nanquantile else 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = func(host, q, axis=0)
        got = func(x, q, axis=0).get()
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_array_equal(got, want)


@settings(deadline=None)
@given(st.data(), st.sampled_from([np.median, np.nanmedian]))
def test_median_matches_numpy(data, func):
    # NumPy's median also takes complex (ordered lexicographically) and bool.
    x, expected = data.draw(nan_arrays([*REAL, np.complex128, np.bool_]))
    axis = data.draw(axes(x.ndim))
    keepdims = data.draw(st.booleans())
    check(func, x, expected, axis=axis, keepdims=keepdims)


@settings(deadline=None)
@given(st.data(), st.sampled_from([np.quantile, np.nanquantile, np.percentile, np.nanpercentile]))
def test_quantiles_match_numpy(data, func):
    x, expected = data.draw(nan_arrays(REAL))
    axis = data.draw(axes(x.ndim))
    q = data.draw(Q)
    if func in (np.percentile, np.nanpercentile):
        q = np.asarray(q) * 100 if isinstance(q, np.ndarray) else q * 100
    method = data.draw(st.sampled_from(METHODS))
    keepdims = data.draw(st.booleans())
    check(func, x, expected, q=q, axis=axis, method=method, keepdims=keepdims)


@settings(deadline=None)
@given(st.data())
def test_selection_over_many_elements_is_exact(data):
    """Enough elements (with ties) that the selection takes rounds of pivots."""
    n = data.draw(st.integers(3000, 6000))
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    value = np.round(rng.standard_normal(n), data.draw(st.integers(0, 3)))
    if data.draw(st.booleans()):
        value[rng.integers(0, n, 5)] = np.nan
    cuts = sorted(data.draw(st.lists(st.integers(0, n), min_size=1, max_size=5)))
    edges = [0, *cuts, n]
    index_map = {DEVICES[k % len(DEVICES)]: [] for k in range(len(edges) - 1)}
    for k in range(len(edges) - 1):
        index_map[DEVICES[k % len(DEVICES)]].append((slice(edges[k], edges[k + 1]),))
    if data.draw(st.booleans()):  # an overlapping copy: its elements count once
        start = data.draw(st.integers(0, n))
        index_map.setdefault(DEVICES[-1], []).append(
            (slice(start, data.draw(st.integers(start, n))),)
        )
    x = mdarray.distributed_array(value, Layout((n,), index_map))
    q = data.draw(Q)
    for func in (np.quantile, np.nanquantile):
        method = data.draw(st.sampled_from(METHODS[:5]))
        with mdarray.options(fallback="raise"):
            got = func(x, q, method=method).get()
        np.testing.assert_array_equal(got, func(value, q, method=method))
    with mdarray.options(fallback="raise"):
        np.testing.assert_array_equal(np.nanmedian(x).get(), np.nanmedian(value))


def test_median_along_an_unsplit_axis_moves_nothing():
    value = np.arange(60.0).reshape(12, 5) % 7
    x = mdarray.distributed_array(value, Layout.block(value.shape, axis=0, devices=DEVICES))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        median = np.median(x, axis=1)
        quantiles = np.quantile(x, [0.2, 0.9], axis=1, keepdims=True)
    assert moved.total == 0
    np.testing.assert_array_equal(median.get(), np.median(value, axis=1))
    np.testing.assert_array_equal(
        quantiles.get(), np.quantile(value, [0.2, 0.9], axis=1, keepdims=True)
    )


def test_selection_moves_a_small_part_of_the_array():
    value = np.random.default_rng(1).standard_normal(10**5)
    x = mdarray.distributed_array(value, Layout.block(value.shape, devices=DEVICES[:4]))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        median = np.median(x)
    assert moved.total < value.nbytes / 10
    assert float(median) == np.median(value)


def test_an_all_nan_array_warns_as_numpy():
    x = mdarray.distributed_array(np.full(6, np.nan), Layout.block((6,), devices=DEVICES))
    with mdarray.options(fallback="raise"), pytest.warns(RuntimeWarning, match="All-NaN"):
        assert np.isnan(float(np.nanmedian(x)))


def test_out_is_written():
    value = np.arange(12.0).reshape(3, 4)
    x = mdarray.distributed_array(value, Layout.block(value.shape, devices=DEVICES))
    out = mdarray.distributed_array(np.zeros(2), Layout.block((2,), devices=DEVICES))
    with mdarray.options(fallback="raise"):
        assert np.quantile(x, [0.1, 0.6], out=out) is out
    np.testing.assert_allclose(out.get(), np.quantile(value, [0.1, 0.6]))


@pytest.mark.parametrize("skip_nan", [False, True])
@pytest.mark.parametrize(
    "method",
    [
        *METHODS,
        *("averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf"),
        *("hazen", "median_unbiased", "normal_unbiased"),
    ],
)
def test_sorted_lanes_follow_numpys_formulas(method, skip_nan):
    # What the cuda backend runs where CuPy's quantile does not serve the call (its nan
    # forms, the methods beyond SELECTED), checked here with NumPy as the chunk library.
    rng = np.random.default_rng(7)
    func = np.nanquantile if skip_nan else np.quantile
    for n in range(1, 9):
        lanes = rng.integers(-5, 5, size=(4, n)).astype(np.float64)
        lanes[1:3][rng.random((2, n)) < 0.4] = np.nan
        q = np.array([0.0, 0.1, 0.25, 1 / 3, 0.5, 0.9, 1.0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = func(lanes, q, axis=1, method=method)
            got = _selection._lanes_quantile(np, lanes, q, (1,), False, method, False, skip_nan)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("skip_nan", [False, True])
def test_sorted_lanes_give_numpys_complex_median(skip_nan):
    # The cuda backend's median of complex lanes with NaN (CuPy's nanmedian does not warn):
    # the mean of the middle two, complex.
    rng = np.random.default_rng(3)
    func = np.nanmedian if skip_nan else np.median
    for n in range(1, 7):
        lanes = rng.integers(-3, 3, size=(3, n)) + 1j * rng.integers(-3, 3, size=(3, n))
        lanes[1][rng.random(n) < 0.4] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = func(lanes, axis=1)
            got = _selection._lanes_quantile(np, lanes, None, (1,), False, "linear", True, skip_nan)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
