"""NumPy's nan* reductions and scans against NumPy over drawn shapes, dtypes, layouts and
modes (NaNs and all-NaN slices included, with NumPy's warnings and errors); partial
results and data movement."""

import warnings

import numpy as np
import pytest
from _layouts import dist_pairs
from hypothesis import given, strategies as st
from test_statistical_functions import axes

import mdarray
from mdarray import MAX, MIN, PROD, REPLICA, SUM, Layout
from mdarray.testing import strategies as mst

DEVICES = mdarray.devices()
NAN_WARNINGS = {
    "All-NaN slice encountered",
    "Mean of empty slice",
    "Degrees of freedom <= 0 for slice.",
}


def _elements(dtype, extremes: bool):
    """Small integers as floats, NaN often, and the infinities where `extremes`."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return None  # dist_pairs' own small values
    real = st.integers(-20, 20).map(float) | st.just(np.nan)
    if extremes:
        real = real | st.sampled_from([np.inf, -np.inf])
    if dtype.kind == "c":
        return st.builds(complex, real, st.integers(-5, 5).map(float))
    return real


def nan_arrays(dtypes, shapes=None, extremes=False):
    """`dist_pairs` of one of `dtypes` whose float elements are often NaN."""
    return st.tuples(st.sampled_from(dtypes), mst.shapes() if shapes is None else shapes).flatmap(
        lambda pair: dist_pairs(shape=pair[1], dtype=pair[0], elements=_elements(pair[0], extremes))
    )


def recorded(func, *args, **kwargs):
    """``(result, warnings)``: `func`'s result and the nan* warnings it gave (floating
    point warnings silenced on both sides)."""
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        result = func(*args, **kwargs)
        if isinstance(result, mdarray.DistArray):
            result = result, result.get()
    seen = {(w.category, str(w.message)) for w in caught if str(w.message) in NAN_WARNINGS}
    return result, seen


def check(func, x, expected, **kwargs):
    """`func` on the DistArray (no fallback) agrees with it on the NumPy array: the same
    value (NaN where NaN), dtype, shape and nan* warnings, or the same exception type."""
    host = {k: v.get() if isinstance(v, mdarray.DistArray) else v for k, v in kwargs.items()}
    try:
        want, want_warnings = recorded(func, expected, **host)
    except Exception as error:  # NumPy's own error: ours must be of the same type
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            recorded(func, x, **kwargs)
        return None
    with mdarray.options(fallback="raise"):
        (got, value), got_warnings = recorded(func, x, **kwargs)
    assert got_warnings == want_warnings
    want = np.asarray(want)
    assert isinstance(got, mdarray.DistArray)
    assert (value.shape, value.dtype) == (want.shape, want.dtype)
    if want.dtype.kind in "fc":
        tol = 1e-5 if want.dtype.itemsize <= 4 or want.dtype == np.complex64 else 1e-12
        np.testing.assert_allclose(value, want, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(value, want)
    return got


FLOATS = ["float32", "float64"]


# Reductions ------------------------------------------------------------------------------


@given(
    nan_arrays([*FLOATS, "complex128", "int16", "bool"]),
    st.sampled_from([np.nansum, np.nanmean, np.nanvar, np.nanstd]),
    st.data(),
)
def test_sums_and_moments_match_numpy(pair, func, data):
    x, expected = pair
    kwargs = {"axis": data.draw(axes(x.ndim)), "keepdims": data.draw(st.booleans())}
    if data.draw(st.booleans()):
        kwargs["dtype"] = data.draw(st.sampled_from([np.float32, np.float64, np.complex128]))
    if func in (np.nanvar, np.nanstd):
        key = data.draw(st.sampled_from(["ddof", "correction"]))
        kwargs[key] = data.draw(st.sampled_from([0, 1, 2, 0.5]))
    check(func, x, expected, **kwargs)


@given(
    nan_arrays(FLOATS, shapes=mst.shapes(max_side=4)),
    st.sampled_from([np.nanprod, np.nancumprod]),
    st.data(),
)
def test_products_match_numpy(pair, func, data):
    x, expected = pair
    axis = data.draw(axes(x.ndim)) if func is np.nanprod else None
    if func is np.nancumprod and x.ndim and data.draw(st.booleans()):
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    check(func, x, expected, axis=axis)


@given(
    nan_arrays([*FLOATS, "int32", "uint8", "bool"], extremes=True),
    st.sampled_from([np.nanmax, np.nanmin]),
    st.data(),
)
def test_max_min_match_numpy(pair, func, data):
    x, expected = pair
    kwargs = {"axis": data.draw(axes(x.ndim)), "keepdims": data.draw(st.booleans())}
    if data.draw(st.booleans()):
        kwargs["initial"] = data.draw(st.sampled_from([0, -3.0, np.nan]))
    check(func, x, expected, **kwargs)


def test_complex_max_min_match_numpy():
    values = np.array([[1 + 2j, np.nan, 3 - 1j], [np.nan, np.nan, 2j]])
    x = mdarray.distributed_array(values, Layout.block((2, 3), axis=1, devices=DEVICES))
    for func in (np.nanmax, np.nanmin):
        for axis in (None, 0, 1):
            check(func, x, values, axis=axis)


@given(nan_arrays([*FLOATS, "int64"], extremes=True), st.data())
def test_argmax_argmin_match_numpy(pair, data):
    x, expected = pair
    func = data.draw(st.sampled_from([np.nanargmax, np.nanargmin]))
    axis = None
    if x.ndim and data.draw(st.booleans()):
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    check(func, x, expected, axis=axis, keepdims=data.draw(st.booleans()))


@given(nan_arrays([*FLOATS, "int8"]), st.data())
def test_nancumsum_matches_numpy(pair, data):
    x, expected = pair
    kwargs = {"axis": data.draw(st.none() | st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1))}
    if data.draw(st.booleans()):
        kwargs["dtype"] = np.float64
    check(np.nancumsum, x, expected, **kwargs)


@given(nan_arrays(FLOATS), st.data())
def test_where_and_initial(pair, data):
    x, expected = pair
    func = data.draw(st.sampled_from([np.nansum, np.nanmax, np.nanmean, np.nanvar]))
    kwargs = {"axis": data.draw(axes(x.ndim))}
    mask = data.draw(st.lists(st.booleans(), min_size=x.size, max_size=x.size))
    where = np.array(mask, dtype=bool).reshape(x.shape)
    kwargs["where"] = (
        where
        if data.draw(st.booleans())
        else mdarray.distributed_array(where, data.draw(mst.layouts(x.shape)))
    )
    if func in (np.nansum, np.nanmax) and data.draw(st.booleans()):
        kwargs["initial"] = data.draw(st.sampled_from([1.0, np.nan]))
    check(func, x, expected, **kwargs)


# All-NaN slices ----------------------------------------------------------------------------

ALL_NAN_COLUMN = np.array([[1.0, np.nan, 4.0], [-np.inf, np.nan, 2.0], [3.0, np.nan, np.nan]])


@pytest.mark.parametrize(
    "func", [np.nanmax, np.nanmin, np.nanmean, np.nanvar, np.nanstd, np.nansum, np.nanprod]
)
def test_all_nan_slices_give_numpys_value_and_warning(func):
    x = mdarray.distributed_array(ALL_NAN_COLUMN, Layout.block((3, 3), devices=DEVICES))
    for axis in (0, 1, None):
        got = check(func, x, ALL_NAN_COLUMN, axis=axis)
        assert got is not None


def test_all_nan_warning_is_numpys_runtime_warning():
    x = mdarray.distributed_array(ALL_NAN_COLUMN, Layout.block((3, 3), devices=DEVICES))
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
        result = np.nanmax(x, axis=0)
    np.testing.assert_array_equal(result.get(), [3.0, np.nan, 4.0])
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        np.nanmean(x, axis=0)


def test_nanargmax_of_all_nan_slice_raises():
    x = mdarray.distributed_array(ALL_NAN_COLUMN, Layout.block((3, 3), devices=DEVICES))
    for func in (np.nanargmax, np.nanargmin):
        with pytest.raises(ValueError, match="All-NaN slice encountered"):
            func(x, axis=0)
        assert func(x, axis=1).get().tolist() == func(ALL_NAN_COLUMN, axis=1).tolist()


# Partial results and data movement -------------------------------------------------------


def row_split_with_nans():
    values = np.arange(1.0, 25.0).reshape(4, 6)
    values[1, 2] = values[2, 4] = np.nan
    layout = Layout.block((4, 6), devices=DEVICES)
    return mdarray.distributed_array(values, layout), values


@pytest.mark.parametrize(
    ("func", "mode"), [(np.nansum, SUM), (np.nanprod, PROD), (np.nanmax, MAX), (np.nanmin, MIN)]
)
def test_split_axis_gives_partial_without_transfers(func, mode):
    x, values = row_split_with_nans()
    if func in (np.nanmax, np.nanmin):
        # A chunk holding a slice NaN everywhere in it combines the flags: two rows each.
        x = x.reshard(Layout.block((4, 6), devices=DEVICES[:2]))
    with mdarray.count_transfers() as moved, mdarray.options(fallback="raise"):
        partial = func(x, axis=0)
    assert moved.total == 0
    assert partial.mode is (mode if len(x.devices) > 1 else REPLICA)
    np.testing.assert_allclose(partial.get(), func(values, axis=0), rtol=1e-12)
    with mdarray.count_transfers() as moved:
        whole = func(x, axis=1)
    assert moved.total == 0
    assert whole.mode is REPLICA


def test_nanmean_moves_only_the_sums_and_counts():
    x, values = row_split_with_nans()
    with mdarray.count_transfers() as moved, mdarray.options(fallback="raise"):
        mean = np.nanmean(x, axis=0)
    # Each chunk's sums (6 values of x's dtype) and counts (6 intp) reach every other
    # device holding that result element; where devices share memory (cpu) the first
    # folds them and sends the others the totals. Nothing else moves: not the input.
    n = len(x.devices)
    copies = 2 * (n - 1) if x.storage.backend.shared_memory else n * (n - 1)
    assert moved.total == copies * 6 * (np.dtype(np.intp).itemsize + x.itemsize)
    assert mean.mode is REPLICA
    np.testing.assert_allclose(mean.get(), np.nanmean(values, axis=0), rtol=1e-12)


def test_input_in_a_partial_mode_is_combined_first():
    x, values = row_split_with_nans()
    partial = mdarray.distributed_array(values, x.layout, SUM)
    with mdarray.options(fallback="raise"):
        for func in (np.nansum, np.nanmax, np.nanmean, np.nanstd, np.nanargmin):
            np.testing.assert_allclose(func(partial, axis=1).get(), func(values, axis=1))


def test_empty_inputs_give_numpys_values_and_warnings():
    # Found by hypothesis: an empty int16 input's nanmean warned nothing (np.mean of an
    # empty DistArray does not warn).
    for dtype in ("int16", "float64"):
        values = np.empty((0, 3), dtype)
        x = mdarray.distributed_array(values, Layout.block((0, 3), devices=DEVICES))
        for func in (np.nanmean, np.nanvar, np.nansum, np.nanstd):
            for axis in (None, 0, 1):
                check(func, x, values, axis=axis)


def test_out_and_namespace_names():
    x, values = row_split_with_nans()
    out = mdarray.zeros((6,))
    with mdarray.options(fallback="raise"):
        assert np.nansum(x, axis=0, out=out) is out
        np.testing.assert_allclose(out.get(), np.nansum(values, axis=0))
        host = np.empty(4)
        assert np.nanmean(x, axis=1, out=host) is host
        np.testing.assert_allclose(host, np.nanmean(values, axis=1))
        np.testing.assert_allclose(mdarray.nanstd(x, ddof=1).get(), np.nanstd(values, ddof=1))
        assert mdarray.nancumsum(x, axis=0).layout == x.layout


def test_rare_keywords_still_work():
    x, values = row_split_with_nans()
    mean = np.nanmean(values, axis=0, keepdims=True)
    with mdarray.options(fallback="allow"):
        got = np.nanvar(x, axis=0, mean=mean)
    np.testing.assert_allclose(got.get(), np.nanvar(values, axis=0, mean=mean))
    with pytest.raises(ValueError, match="ddof and correction"):
        np.nanvar(x, ddof=1, correction=1)


@pytest.mark.parametrize("method", ["sum", "mean", "max", "min", "std", "var", "prod", "argmax"])
def test_xarray_skipna_reductions_do_not_gather(method):
    xr = pytest.importorskip("xarray")
    x, values = row_split_with_nans()
    with mdarray.options(fallback="raise"):
        got = getattr(xr.DataArray(x, dims=("a", "b")), method)(dim="a").data
    want = getattr(xr.DataArray(values, dims=("a", "b")), method)(dim="a").data
    assert isinstance(got, mdarray.DistArray)
    np.testing.assert_allclose(got.get(), want, rtol=1e-12)


@pytest.mark.parametrize("func", [np.nanargmax, np.nanargmin])
@pytest.mark.parametrize("first", [slice(0, 0), slice(1, 1), slice(2, 2)])
def test_an_all_nan_slice_beside_an_empty_chunk_raises(func, first):
    # The device's chunks reduce as one block: the empty chunk's identity must not hide
    # (nor stand for) the block's flag.
    values = np.array([np.nan, np.nan], np.float32)
    x = mdarray.distributed_array(values, {DEVICES[0]: [(first,), (slice(0, 2),)]})
    with pytest.raises(ValueError, match="All-NaN"):
        func(x)
    values[1] = 1.0
    x = mdarray.distributed_array(values, {DEVICES[0]: [(first,), (slice(0, 2),)]})
    assert int(func(x)) == int(func(values))
