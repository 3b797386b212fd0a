"""diff against NumPy over drawn layouts and modes: n, axis, prepend and append."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mdarray
from mdarray.testing import assert_dist_equal
from mdarray.testing import strategies as mst


@settings(max_examples=40)
@given(
    st.sampled_from(["float64", "int32", "uint8", "bool"]).flatmap(
        lambda dtype: mst.dist_arrays(dtype=dtype)
    ),
    st.data(),
)
def test_diff_matches_numpy(pair, data):
    x, value = pair
    bound = max(x.ndim, 1)
    axis = data.draw(st.integers(-bound - 1, bound))
    n = data.draw(st.integers(-1, 3))
    kwargs: dict = {"axis": axis, "n": n}
    numpy_kwargs = dict(kwargs)
    for side in ("prepend", "append"):
        if data.draw(st.booleans()) and -x.ndim <= axis < x.ndim:
            shape = list(value.shape)
            shape[axis] = data.draw(st.integers(0, 2))
            extra, extra_value = data.draw(mst.dist_arrays(shape=tuple(shape), dtype=value.dtype))
            kwargs[side], numpy_kwargs[side] = extra, extra_value
    try:
        want = np.diff(value, **numpy_kwargs)
    except Exception as error:
        with pytest.raises(type(error)), mdarray.options(fallback="allow"):
            mdarray.diff(x, **kwargs)
        return
    with mdarray.options(fallback="allow"):
        assert_dist_equal(mdarray.diff(x, **kwargs), want)
        assert_dist_equal(np.diff(x, **kwargs), want)


def test_diff_errors_and_warning():
    with pytest.warns(mdarray.PerformanceWarning, match="numpy.diff"):
        got = mdarray.diff(mdarray.asarray(np.array([1, 4, 9])))
    assert_dist_equal(got, np.array([3, 5]))
    with mdarray.options(fallback="allow"):
        with pytest.raises(ValueError, match="at least one dimensional"):
            mdarray.diff(mdarray.asarray(np.float64(1.0)))
        with pytest.raises(np.exceptions.AxisError):
            mdarray.diff(mdarray.asarray(np.zeros(3)), axis=1)
