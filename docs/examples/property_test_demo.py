"""Property tests of an array-agnostic function over random layouts and modes: the
example of docs/testing.md (tests/test_testing.py runs these tests too).

    python -m pytest docs/examples/property_test_demo.py
"""

import numpy as np
from hypothesis import given, settings, strategies as st
from hypothesis.extra.array_api import make_strategies_namespace

import mdarray
from mdarray.testing import assert_allclose, assert_array_equal, strategies as mst


def softmax(x, axis=-1):
    """The softmax of `x` along `axis`, for an array of any array API library."""
    xp = x.__array_namespace__()
    e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
    return e / xp.sum(e, axis=axis, keepdims=True)


# DistArrays of float64, 1-d to 3-d with no empty axis, on any layout in any mode.
arrays = mst.dist_arrays(np.float64, mst.shapes(min_dims=1, min_side=1))


@settings(max_examples=30, deadline=None)
@given(arrays)
def test_softmax_matches_numpy(x):
    # np.asarray(x) is the drawn value; NumPy arrays are array API arrays too.
    expected = softmax(np.asarray(x))
    with mdarray.options(fallback="raise"):  # every step stays distributed
        result = softmax(x)
    assert isinstance(result, mdarray.DistArray)
    assert_allclose(result, expected, rtol=1e-12)


# Only some layouts: no overlapping chunks, at most two chunks on each device.
no_overlaps = mst.dist_arrays(
    np.float64,
    (6, 4),
    layouts=lambda shape: mst.layouts(shape, overlapping=False, max_chunks_per_device=2),
    modes=mdarray.REPLICA,
)


@settings(max_examples=20, deadline=None)
@given(no_overlaps, st.integers(0, 1))
def test_softmax_sums_to_one(x, axis):
    xp = x.__array_namespace__()
    assert_allclose(xp.sum(softmax(x, axis=axis), axis=axis), 1.0, rtol=1e-12)


# Arrays drawn by hypothesis's array API strategies, spread over drawn layouts.
xps = make_strategies_namespace(mdarray)
finite = {"min_value": -100, "max_value": 100, "allow_nan": False, "allow_infinity": False}


@settings(max_examples=20, deadline=None)
@given(mst.spread(xps.arrays(xps.floating_dtypes(), (3, 5), elements=finite)))
def test_softmax_of_array_api_arrays(x):
    xp = x.__array_namespace__()
    assert_allclose(xp.sum(softmax(x), axis=-1), 1.0, rtol=1e-5)


# One value over many layouts and modes: the test re-runs on each.
ROWS = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0]])


@settings(max_examples=20, deadline=None)
@given(mst.spread(st.just(ROWS)))
def test_softmax_of_known_rows(x):
    assert_array_equal(softmax(x)[0], np.full(4, 0.25))
    assert_allclose(softmax(x)[1], np.exp(ROWS[1]) / np.exp(ROWS[1]).sum(), rtol=1e-12)
