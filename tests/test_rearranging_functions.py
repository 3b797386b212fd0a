"""repeat/tile/roll against NumPy over drawn layouts and modes, 0-d and empty arrays and
NumPy's errors included."""

import numpy as np
import pytest
from _oracle import check_against_numpy
from hypothesis import given, settings
from hypothesis import strategies as st

import mdarray
from mdarray.testing import assert_dist_equal
from mdarray.testing import strategies as mst


@settings(max_examples=30)
@given(mst.dist_arrays(), st.data())
def test_repeat_matches_numpy(pair, data):
    x, value = pair
    axis = data.draw(st.none() | st.integers(-x.ndim - 1, x.ndim))
    if data.draw(st.booleans()):
        repeats = numpy_repeats = data.draw(st.integers(-1, 3))
    else:
        n = value.size if axis is None else (value.shape[axis] if -x.ndim <= axis < x.ndim else 1)
        numpy_repeats = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
        repeats = mdarray.asarray(numpy_repeats, device=x.device)
    check_against_numpy(
        mdarray.repeat, np.repeat, (x, repeats), (value, numpy_repeats), {"axis": axis}
    )


@settings(max_examples=30)
@given(mst.dist_arrays(), st.lists(st.integers(0, 2), max_size=4).map(tuple))
def test_tile_matches_numpy(pair, repetitions):
    x, value = pair
    check_against_numpy(mdarray.tile, np.tile, (x, repetitions), (value, repetitions))


@settings(max_examples=30)
@given(mst.dist_arrays(), st.data())
def test_roll_matches_numpy(pair, data):
    x, value = pair
    bound = max(x.ndim, 1)
    if data.draw(st.booleans()):
        shift, axis = (
            data.draw(st.integers(-9, 9)),
            data.draw(st.none() | st.integers(-bound, bound)),
        )
    else:
        axis = tuple(data.draw(st.lists(st.integers(-bound, bound - 1), min_size=1, max_size=3)))
        shift = tuple(
            data.draw(st.lists(st.integers(-9, 9), min_size=len(axis), max_size=len(axis)))
        )
    check_against_numpy(mdarray.roll, np.roll, (x, shift), (value, shift), {"axis": axis})


def test_the_warning_and_numpy_entry_points():
    x = mdarray.asarray(np.arange(3))
    with pytest.warns(mdarray.PerformanceWarning, match="numpy.roll"):
        assert_dist_equal(np.roll(x, 1), np.roll(np.arange(3), 1))
    with pytest.warns(mdarray.PerformanceWarning, match="numpy.tile"):
        assert_dist_equal(np.tile(x, 2), np.tile(np.arange(3), 2))
    with pytest.warns(mdarray.PerformanceWarning, match="numpy.repeat"):
        assert_dist_equal(np.repeat(x, 2), np.repeat(np.arange(3), 2))
