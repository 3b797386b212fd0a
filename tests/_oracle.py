"""The NumPy oracle for functions that may gather: same value, or same error, on the same data."""

import numpy as np
import pytest

import mdarray
from mdarray.testing import assert_dist_equal


def check_against_numpy(func, numpy_func, args, numpy_args, kwargs=None):
    """`func` on DistArrays gives `numpy_func`'s value (or error) on the same data."""
    kwargs = kwargs or {}
    try:
        want = numpy_func(*numpy_args, **kwargs)
    except Exception as error:
        with pytest.raises(type(error)), mdarray.options(fallback="allow"):
            func(*args, **kwargs)
        return
    with mdarray.options(fallback="allow"):
        got = func(*args, **kwargs)
    assert_dist_equal(got, np.asarray(want))
