"""isclose, allclose, array_equal, array_equiv and isin against NumPy, native
(fallback="raise") over drawn layouts, modes, dtypes and special values."""

import numpy as np
import pytest
from _layouts import dist_pairs
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray import Layout
from mdarray.testing import assert_dist_equal, strategies as mst

DEVICES = mdarray.devices()

# Floats with the values isclose treats specially, and near neighbours.
special_floats = st.sampled_from(
    [0.0, -0.0, 1.0, 1.0 + 1e-9, 1.0 + 1e-4, -1.0, 2.0, np.inf, -np.inf, np.nan, 1e-9]
)


def elements_for(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return special_floats
    if dtype.kind == "c":
        return st.builds(complex, special_floats, special_floats)
    return None


@st.composite
def pairs(draw, broadcast=True):
    """``(x, v, y, w)``: two DistArrays (the second sometimes a NumPy array or a scalar)
    of broadcastable shapes, drawn dtypes and special values."""
    shape = draw(mst.shapes(max_dims=3, max_side=4))
    shape_b = shape
    if broadcast and draw(st.booleans()):
        lead = draw(st.integers(0, len(shape)))
        shape_b = tuple(1 if draw(st.booleans()) else n for n in shape[lead:])
    dtype_a = draw(st.sampled_from(["float64", "float32", "int32", "complex128", "bool"]))
    dtype_b = draw(st.sampled_from(["float64", "float32", "int16", "complex128", "bool"]))
    x, v = draw(dist_pairs(shape=shape, dtype=dtype_a, elements=elements_for(dtype_a)))
    y, w = draw(dist_pairs(shape=shape_b, dtype=dtype_b, elements=elements_for(dtype_b)))
    kind = draw(st.sampled_from(["distarray", "numpy", "scalar"]))
    if kind == "numpy":
        y = w
    elif kind == "scalar":
        y = w = draw(st.sampled_from([1, 1.0, np.nan, np.inf, 2.5]))
    return x, v, y, w


@settings(max_examples=80, deadline=None)
@given(pairs(), st.booleans(), st.sampled_from([(1e-5, 1e-8), (0.0, 0.0), (0.1, 1.0)]))
def test_isclose_and_allclose_match_numpy(data, equal_nan, tolerances):
    x, v, y, w = data
    rtol, atol = tolerances
    with np.errstate(all="ignore"):
        want = np.isclose(v, w, rtol=rtol, atol=atol, equal_nan=equal_nan)
        want_all = np.allclose(v, w, rtol=rtol, atol=atol, equal_nan=equal_nan)
        with mdarray.options(fallback="raise"):
            got = np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)
            got_all = np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)
            got_swapped = np.isclose(y, x, rtol=rtol, atol=atol, equal_nan=equal_nan)
    assert isinstance(got, mdarray.DistArray)
    assert_dist_equal(got, np.asarray(want))
    assert_dist_equal(got_swapped, np.asarray(np.isclose(w, v, rtol, atol, equal_nan)))
    assert type(got_all) is bool
    assert got_all == want_all


@settings(max_examples=80, deadline=None)
@given(pairs(), st.booleans(), st.booleans())
def test_array_equal_and_equiv_match_numpy(data, equal_nan, same):
    x, v, y, w = data
    if same:
        y, w = x, v
    with mdarray.options(fallback="raise"):
        equal = np.array_equal(x, y, equal_nan=equal_nan)
        equiv = np.array_equiv(x, y)
    assert type(equal) is bool
    assert type(equiv) is bool
    assert equal == np.array_equal(v, w, equal_nan=equal_nan)
    assert equiv == np.array_equiv(v, w)


def test_array_equal_shapes_that_do_not_broadcast():
    x = mdarray.asarray(np.ones((2, 3)))
    with mdarray.options(fallback="raise"):
        assert np.array_equal(x, np.ones((3, 2))) is False
        assert np.array_equiv(x, np.ones((3, 2))) is False
        assert np.array_equiv(x, np.ones(3)) is True
        assert np.allclose(x, 1) is True


@settings(max_examples=60, deadline=None)
@given(
    dist_pairs(dtype="int32"),
    st.lists(st.integers(-20, 20), max_size=6),
    st.booleans(),
    st.booleans(),
)
def test_isin_matches_numpy(pair, tests, invert, distributed):
    x, value = pair
    test_elements = np.asarray(tests, dtype=np.int64)
    if distributed:
        test_elements = mdarray.asarray(test_elements)
    want = np.isin(value, np.asarray(tests, dtype=np.int64), invert=invert)
    with mdarray.options(fallback="raise"):
        got = np.isin(x, test_elements, invert=invert)
    assert_dist_equal(got, want)


def test_isin_moves_only_the_test_elements():
    value = np.arange(40).reshape(4, 10)
    x = mdarray.distributed_array(value, Layout.block(value.shape, devices=DEVICES))
    tests = np.array([3, 17, 39])
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.isin(x, tests)
    assert moved.total <= len(set(DEVICES)) * tests.nbytes
    assert got.layout == x.layout
    assert_dist_equal(got, np.isin(value, tests))


def test_isclose_moves_nothing_and_allclose_one_bool_per_device():
    value = np.linspace(0.0, 1.0, 24).reshape(4, 6)
    layout = Layout.block(value.shape, axis=1, devices=DEVICES)
    x = mdarray.distributed_array(value, layout)
    y = mdarray.distributed_array(value + 1e-9, layout)
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        close = np.isclose(x, y)
    assert moved.total == 0
    assert close.layout == layout
    # allclose: one bool partial per extra device, combined, and the bool read.
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        every = np.allclose(x, y)
    assert moved.total == len(set(DEVICES))
    assert every is True


def test_invalid_tolerance_follows_errstate():
    x = mdarray.asarray(np.ones(3))
    with mdarray.options(fallback="raise"):
        with np.errstate(invalid="raise"), pytest.raises(FloatingPointError, match="atol"):
            np.isclose(x, x, atol=np.nan)
        with np.errstate(invalid="warn"), pytest.warns(RuntimeWarning, match="atol"):
            np.isclose(x, x, atol=np.inf)
