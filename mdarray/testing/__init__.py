"""Testing helpers for code that uses mdarray: assertions and hypothesis strategies.

`assert_dist_equal` compares a DistArray's value with an expected array (NumPy or
DistArray), checking shape and dtype too. `mdarray.testing.strategies` holds hypothesis
strategies for layouts, index maps, modes and DistArrays.
"""

from __future__ import annotations

import numpy as np

from .._array import DistArray

__all__ = ["assert_dist_equal", "assert_dist_allclose"]


def _value(x):
    return x.get() if isinstance(x, DistArray) else np.asarray(x)


def assert_dist_equal(actual, expected, *, check_dtype: bool = True) -> None:
    """Assert `actual` (a DistArray) has `expected`'s value, shape and dtype.

    >>> import mdarray, numpy as np
    >>> from mdarray.testing import assert_dist_equal
    >>> assert_dist_equal(mdarray.distributed_array([1, 2], {0: slice(None)}), np.array([1, 2]))
    """
    if not isinstance(actual, DistArray):
        raise AssertionError(f"expected a DistArray, got {type(actual).__name__}")
    got, want = _value(actual), _value(expected)
    if check_dtype and got.dtype != want.dtype:
        raise AssertionError(f"dtype {got.dtype} != expected {want.dtype}")
    np.testing.assert_array_equal(got, want, strict=True)


def assert_dist_allclose(actual, expected, *, rtol=1e-7, atol=0, check_dtype: bool = True) -> None:
    """Like `assert_dist_equal` with a tolerance.

    >>> import mdarray, numpy as np
    >>> from mdarray.testing import assert_dist_allclose
    >>> assert_dist_allclose(mdarray.distributed_array([0.1 + 0.2], {0: ()}), np.array([0.3]))
    """
    if not isinstance(actual, DistArray):
        raise AssertionError(f"expected a DistArray, got {type(actual).__name__}")
    got, want = _value(actual), _value(expected)
    if check_dtype and got.dtype != want.dtype:
        raise AssertionError(f"dtype {got.dtype} != expected {want.dtype}")
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, strict=True)
