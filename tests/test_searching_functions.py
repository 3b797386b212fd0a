"""argmax/argmin against NumPy over drawn layouts and modes: ties, NaNs, flat indices."""

import warnings

import numpy as np
import pytest
from _layouts import spread
from hypothesis import example, given
from hypothesis import strategies as st

import mdarray
from mdarray import Layout
from mdarray.testing import assert_dist_equal
from mdarray.testing import strategies as mst

DEVICES = mdarray.devices()


def arrays_of(dtypes, shapes=None, **kwargs):
    """`mst.dist_arrays` pairs of one of `dtypes`, shapes drawn from `shapes`."""
    return st.tuples(st.sampled_from(dtypes), mst.shapes() if shapes is None else shapes).flatmap(
        lambda pair: mst.dist_arrays(shape=pair[1], dtype=pair[0], **kwargs)
    )


# Few distinct values, so ties across chunks are common; NaNs sometimes.
tied = st.sampled_from([0.0, 1.0, 2.0, np.nan])


@example(
    (
        mdarray.distributed_array(
            np.array([1.0, 2.0, 2.0, 1.0]), spread({0: slice(0, 2), 1: slice(1, 4)})
        ),
        np.array([1.0, 2.0, 2.0, 1.0]),
    ),
    np.argmax,
    None,
    False,
)
@given(
    arrays_of(["float64", "int16", "bool"], elements=None) | arrays_of(["float64"], elements=tied),
    st.sampled_from([np.argmax, np.argmin]),
    st.data(),
    st.booleans(),
)
def test_argmax_argmin_match_numpy(pair, func, data, keepdims):
    x, expected = pair
    if isinstance(data, st.DataObject):
        axis = data.draw(st.none() | st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1))
    else:
        axis = data
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = func(expected, axis=axis, keepdims=keepdims)
    except Exception as error:
        with pytest.raises(type(error)):
            func(x, axis=axis, keepdims=keepdims)
        return
    with mdarray.options(fallback="raise"):
        got = func(x, axis=axis, keepdims=keepdims)
    assert_dist_equal(got, np.asarray(want))


def test_split_axis_moves_only_pairs():
    values = np.arange(24.0).reshape(4, 6)[::-1].copy()
    x = mdarray.distributed_array(values, Layout.block((4, 6), devices=DEVICES))
    with mdarray.count_transfers() as moved:
        result = np.argmax(x, axis=0)
    # Each chunk receives at most the (value, index) pairs of the others: result-sized.
    n = len(DEVICES)
    assert moved.total <= n * (n - 1) * 6 * (8 + 8)
    assert_dist_equal(result, values.argmax(0))


def test_array_api_and_methods():
    values = np.array([[3, 9, 9], [9, 1, 0]])
    x = mdarray.distributed_array(values, Layout.block((2, 3), axis=1, devices=DEVICES))
    assert int(mdarray.argmax(x)) == values.argmax()
    assert_dist_equal(mdarray.argmin(x, axis=1, keepdims=True), values.argmin(1, keepdims=True))
    assert_dist_equal(x.argmax(axis=0), values.argmax(0))
    with pytest.raises(ValueError, match="empty sequence"):
        np.argmax(mdarray.distributed_array(np.zeros((0, 3)), {DEVICES[0]: ()}), axis=0)
