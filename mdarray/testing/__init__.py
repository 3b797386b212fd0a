"""Testing helpers for code that uses mdarray: assertions and hypothesis strategies.

`assert_dist_equal` compares a DistArray's value with an expected array (NumPy or
DistArray), checking shape and dtype too. `mdarray.testing.strategies` holds hypothesis
strategies for layouts, index maps, modes and DistArrays.
"""

from __future__ import annotations

from types import EllipsisType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._array import DistArray

__all__ = ["assert_chunks_hold", "assert_dist_allclose", "assert_dist_equal"]


def _value(x: ArrayLike) -> np.ndarray:
    return x.get() if isinstance(x, DistArray) else np.asarray(x)


def assert_dist_equal(actual: object, expected: ArrayLike, *, check_dtype: bool = True) -> None:
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


def assert_dist_allclose(
    actual: object,
    expected: ArrayLike,
    *,
    rtol: float = 1e-7,
    atol: float = 0,
    check_dtype: bool = True,
) -> None:
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


def _host(chunk: Any) -> np.ndarray:
    return chunk.get() if hasattr(chunk, "get") else np.asarray(chunk)


def assert_chunks_hold(x: DistArray, expected: ArrayLike) -> None:
    """Assert each chunk of `x` holds what its mode says about `expected`'s elements.

    REPLICA: every chunk equals ``expected[index]``. SUM and PROD: the chunks combine to
    `expected` and each element has at most one copy other than the identity (it is held
    once). MAX and MIN: the chunks combine to `expected`. In every mode no two chunks are
    one array object (an in-place update per chunk would reach it twice).

    >>> import mdarray, numpy as np
    >>> from mdarray.testing import assert_chunks_hold
    >>> value = np.arange(4.0)
    >>> assert_chunks_hold(mdarray.distributed_array(value, {0: (), 1: ()}, "sum"), value)
    """
    expected = np.asarray(expected)
    if tuple(x.shape) != expected.shape:
        raise AssertionError(f"shape {x.shape} != expected {expected.shape}")
    if len({id(c) for c in x.storage.buffers}) != len(x.storage.buffers):
        raise AssertionError("two chunks share one array object")
    chunks = [(index, _host(c)) for (_, index), c in zip(x.layout.chunks, x.storage.buffers)]
    for k, ((device, index), (_, chunk)) in enumerate(zip(x.layout.chunks, chunks)):
        if chunk.shape != expected[index].shape or chunk.dtype != x.dtype:
            raise AssertionError(f"chunk {k} on device {device} has shape {chunk.shape}")
        if not x.mode.is_partial:
            np.testing.assert_array_equal(chunk, expected[index], err_msg=f"chunk {k}")
    if not x.mode.is_partial:
        return
    identity = x.mode.identity(x.dtype)
    combined = np.full(expected.shape, identity, x.dtype)
    held = np.zeros(expected.shape, np.int64)
    for index, chunk in chunks:
        key: tuple[slice | EllipsisType, ...] = (*index, ...)  # a view, also when 0-d
        view = combined[key]
        x.mode.ufunc(np)(view, chunk, out=view)
        held[index] += chunk != identity
    np.testing.assert_array_equal(combined, expected, err_msg=f"chunks combined by {x.mode}")
    if not x.mode.idempotent and (held > 1).any():
        where = tuple(int(i) for i in np.argwhere(held > 1)[0])
        raise AssertionError(f"element {where} is held by {held[where]} chunks in mode {x.mode}")
