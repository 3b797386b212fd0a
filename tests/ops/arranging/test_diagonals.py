"""diagonal, trace and diag (NumPy's and numpy.linalg's) against NumPy over drawn layouts
and modes, natively (``fallback="raise"``); diagonal moves nothing."""

import numpy as np
import pytest
from _layouts import devices, dist_pairs
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray.testing import assert_dist_equal, strategies as mst


def _check(func, args, numpy_args, kwargs=None):
    kwargs = kwargs or {}
    try:
        want = func(*numpy_args, **kwargs)
    except Exception as error:
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            func(*args, **kwargs)
        return
    with mdarray.options(fallback="raise"):
        got = func(*args, **kwargs)
    assert_dist_equal(got, np.asarray(want))


@settings(max_examples=80)
@given(
    mst.shapes(min_dims=1, max_dims=4).flatmap(
        lambda shape: dist_pairs(shape=shape, dtype="int32")
    ),
    st.data(),
)
def test_diagonal_and_trace_match_numpy(pair, data):
    x, value = pair
    offset = data.draw(st.integers(-4, 4))
    axis1 = data.draw(st.integers(-x.ndim - 1, x.ndim))
    axis2 = data.draw(st.integers(-x.ndim - 1, x.ndim))
    _check(np.diagonal, (x, offset, axis1, axis2), (value, offset, axis1, axis2))
    _check(np.trace, (x, offset, axis1, axis2), (value, offset, axis1, axis2))
    _check(np.linalg.diagonal, (x,), (value,), {"offset": offset})
    _check(np.linalg.trace, (x,), (value,), {"offset": offset})
    _check(mdarray.linalg.diagonal, (x,), (value,), {"offset": offset})
    if x.ndim == 2:
        _check(np.diag, (x, offset), (value, offset))
        with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
            np.diagonal(x, offset)
        assert moved.total == 0


@settings(max_examples=40)
@given(mst.shapes(min_dims=1, max_dims=1).flatmap(dist_pairs), st.integers(-3, 3))
def test_diag_of_a_vector_matches_numpy(pair, k):
    x, value = pair
    _check(np.diag, (x, k), (value, k))


def test_diag_of_a_vector_moves_each_element_once_at_most():
    value = np.arange(12.0)
    x = mdarray.distributed_array(value, mdarray.Layout.block((12,), devices=devices(0, 1, 2)))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.diag(x, 2)
    assert moved.total <= value.nbytes
    assert_dist_equal(got, np.diag(value, 2))
