"""average, ptp, cov and corrcoef against NumPy, native (fallback="raise") over drawn
layouts, modes and dtypes; what cov moves."""

import warnings

import numpy as np
import pytest
from _layouts import dist_pairs
from _oracle import assert_matches
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray import Layout
from mdarray._core.constants import NO_VALUE
from mdarray.testing import assert_dist_allclose, assert_dist_equal, strategies as mst

DEVICES = mdarray.devices()


@st.composite
def axes(draw, ndim):
    if draw(st.booleans()) or not ndim:
        return None
    picked = draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim))
    if len({a % ndim for a in picked}) != len(picked):
        return picked[0]
    return tuple(picked) if draw(st.booleans()) else picked[0]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_average_matches_numpy(data):
    dtype = data.draw(st.sampled_from(["float64", "float32", "int32", "bool", "complex128"]))
    x, value = data.draw(
        dist_pairs(dtype=dtype, shape=data.draw(mst.shapes(min_side=1, max_dims=3, max_side=4)))
    )
    axis = data.draw(axes(value.ndim))
    keepdims = data.draw(st.sampled_from([np._NoValue, False, True]))
    kwargs = {} if keepdims is np._NoValue else {"keepdims": keepdims}
    weights = None
    if data.draw(st.booleans()):
        picked = () if axis is None else np.atleast_1d(axis) % value.ndim
        shape = value.shape if axis is None else tuple(value.shape[a] for a in picked)
        positive = st.integers(1, 5).map(float)
        weights = data.draw(dist_pairs(shape=shape, dtype="float64", elements=positive))
    returned = data.draw(st.booleans())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.average(value, axis, None if weights is None else weights[1], returned, **kwargs)
        with mdarray.options(fallback="raise"):
            got = np.average(x, axis, None if weights is None else weights[0], returned, **kwargs)
    if returned:
        assert_matches(got[0], want[0])
        assert_matches(got[1], want[1])
    else:
        assert_matches(got, want)


def test_average_errors_like_numpy():
    x = mdarray.asarray(np.ones((2, 3)))
    with mdarray.options(fallback="raise"):
        with pytest.raises(TypeError, match="Axis must be specified"):
            np.average(x, weights=np.ones(3))
        with pytest.raises(ValueError, match="Shape of weights"):
            np.average(x, axis=1, weights=np.ones(2))
        with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
            np.average(x, axis=1, weights=np.zeros(3))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_ptp_matches_numpy(data):
    dtype = data.draw(st.sampled_from(["float64", "int32", "uint16", "int8"]))
    x, value = data.draw(
        dist_pairs(dtype=dtype, shape=data.draw(mst.shapes(min_side=1, max_dims=3, max_side=4)))
    )
    axis = data.draw(axes(value.ndim))
    keepdims = data.draw(st.booleans())
    with mdarray.options(fallback="raise"):
        assert_matches(
            np.ptp(x, axis=axis, keepdims=keepdims), np.ptp(value, axis, keepdims=keepdims)
        )
    with mdarray.options(fallback="raise"), pytest.raises(TypeError):
        np.ptp(mdarray.asarray(np.ones(3, bool)))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_cov_and_corrcoef_match_numpy(data):
    dtype = data.draw(st.sampled_from(["float64", "float32", "int32", "complex128"]))
    shape = data.draw(st.sampled_from([(4,), (2, 5), (3, 4), (1, 6), (5, 2)]))
    x, value = data.draw(dist_pairs(shape=shape, dtype=dtype))
    y = w = None
    if data.draw(st.booleans()):
        y, w = data.draw(dist_pairs(shape=shape, dtype="float64"))
    rowvar, bias = data.draw(st.booleans()), data.draw(st.booleans())
    ddof = data.draw(st.sampled_from([None, 0, 1, 2]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            want = np.cov(value, w, rowvar, bias, ddof)
        except ValueError:  # x and y of observations that do not match
            with mdarray.options(fallback="raise"), pytest.raises(ValueError, match="concat"):
                np.cov(x, y, rowvar, bias, ddof)
            return
        want_corr = np.corrcoef(value, w, rowvar)
        with mdarray.options(fallback="raise"):
            got = np.cov(x, y, rowvar, bias, ddof)
            got_corr = np.corrcoef(x, y, rowvar)
    assert_matches(got, want)
    expected = np.asarray(want_corr)
    assert got_corr.shape == expected.shape
    assert got_corr.dtype == expected.dtype
    np.testing.assert_allclose(got_corr.get(), expected, rtol=1e-5, atol=1e-6, equal_nan=True)


def test_cov_errors_and_dtype_like_numpy():
    x = mdarray.asarray(np.arange(6.0).reshape(2, 3))
    with mdarray.options(fallback="raise"):
        with pytest.raises(ValueError, match="more than 2"):
            np.cov(mdarray.asarray(np.ones((2, 2, 2))))
        with pytest.raises(ValueError, match="ddof must be integer"):
            np.cov(x, ddof=1.5)
        assert np.cov(x, dtype=np.float32).dtype == np.float32
        with np.errstate(divide="ignore"), pytest.warns(RuntimeWarning, match="Degrees of"):
            assert_dist_equal(np.cov(x, ddof=3), np.full((2, 2), np.inf))
    with pytest.warns(mdarray.PerformanceWarning, match="numpy.cov"):
        assert_dist_allclose(np.cov(x, fweights=[1, 2, 1]), np.cov(x.get(), fweights=[1, 2, 1]))


def test_cov_moves_only_the_small_result():
    """Observations split over the devices: the centring is elementwise and the product
    is a partial sum per device; only the variables-by-variables result is combined."""
    value = np.arange(48.0).reshape(3, 16) ** 1.5
    x = mdarray.distributed_array(value, Layout.block(value.shape, axis=1, devices=DEVICES))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        c = np.cov(x)
        result = c.get()
    # the row means (3 partials per extra device, then 3 per device back), the 3 x 3
    # partial results (one per device) to the host: bounded by a few small results.
    assert moved.total <= 4 * len(set(DEVICES)) * 3 * 3 * 8
    np.testing.assert_allclose(result, np.cov(value))


def test_corrcoef_clips_complex_parts_apart():
    """NumPy clips the real and imaginary parts in place: a NaN imaginary part leaves the
    real part as it is (``real + 1j * imag`` would not)."""
    value = np.array([[1 + 2j, 3 - 1j, 0.5j], [2, 1j, -1 + 1j], [1 + 1j, 1 + 1j, 1 + 1j]])
    x = mdarray.distributed_array(value, Layout.block(value.shape, axis=1, devices=DEVICES))
    with np.errstate(all="ignore"):
        want = np.corrcoef(value)
        with mdarray.options(fallback="raise"):
            got = np.corrcoef(x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.get(), want, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize(
    "func",
    [np.sum, np.max, np.mean, np.argmax, np.nansum, np.nanmedian, np.average, np.ptp],
    ids=lambda f: f.__name__,
)
def test_no_value_is_numpys_mark_of_an_argument_not_given(func):
    """`NO_VALUE` (`_core.constants`), every NumPy-mirroring signature's default, is
    NumPy's own: passed on by a wrapper as NumPy passes it, it means "not given"."""
    assert NO_VALUE is np._NoValue
    value = np.arange(12.0).reshape(3, 4)
    x = mdarray.distributed_array(value, Layout.block((3, 4), axis=1, devices=DEVICES))
    with mdarray.options(fallback="raise"):
        got = func(x, axis=0, keepdims=NO_VALUE)
    want = func(value, axis=0, keepdims=np._NoValue)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.get(), want)
