"""Testing helpers for code that uses mdarray: assertions and hypothesis strategies.

`assert_array_equal` and `assert_allclose` take DistArrays, NumPy or CuPy arrays, scalars
or nested lists on either side: they bring each to the host (a DistArray or CuPy array
by ``.get()``) and hand over to ``numpy.testing``, so a failure reads as NumPy's.
`assert_chunks_hold` checks what each chunk holds, for authors of their own per-chunk
kernels. `assert_dist_equal` and `assert_dist_allclose` are the strict forms: the actual
value must be a DistArray with the desired shape and dtype. `mdarray.testing.strategies`
draws DistArrays, layouts, index maps and modes for hypothesis.

>>> import mdarray, numpy as np
>>> from mdarray.testing import assert_array_equal
>>> x = mdarray.distributed_array(np.arange(3), {0: (slice(0, 2),), 1: (slice(2, 3),)})
>>> assert_array_equal(x, [0, 1, 2])
>>> assert_array_equal(np.arange(3), x + 0)
"""

from __future__ import annotations

from types import EllipsisType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._array.array import DistArray
from .._runtime.config import mark_explicit

__all__ = [
    "assert_allclose",
    "assert_array_equal",
    "assert_chunks_hold",
    "assert_dist_allclose",
    "assert_dist_equal",
]


def _on_host(x: Any) -> Any:
    """`x` with a DistArray or CuPy array brought to the host; anything else as it is
    (NumPy reads scalars and lists itself)."""
    if isinstance(x, DistArray):
        return x.get()
    if type(x).__module__.partition(".")[0] == "cupy" and hasattr(x, "get"):
        return x.get()
    return x


def assert_array_equal(
    actual: Any,
    desired: Any,
    err_msg: str = "",
    verbose: bool = True,
    *,
    strict: bool = False,
) -> None:
    """``numpy.testing.assert_array_equal`` for DistArrays, NumPy and CuPy arrays.

    Either side may be a DistArray, a NumPy or CuPy array, a scalar or a nested list;
    each is brought to the host and compared by NumPy, whose message a failure carries.
    With ``strict=True`` shapes and dtypes must match too (no broadcasting a scalar).

    >>> import mdarray, numpy as np
    >>> from mdarray.testing import assert_array_equal
    >>> x = mdarray.distributed_array([1, 2, 3], {0: (), 1: ()}, "sum")
    >>> assert_array_equal(x, np.array([1, 2, 3]), strict=True)
    >>> assert_array_equal(x, [1, 2, 4])
    Traceback (most recent call last):
    ...
    AssertionError: ...
    Arrays are not equal
    <BLANKLINE>
    Mismatched elements: 1 / 3 (33.3%)
    ...
    """
    __tracebackhide__ = True
    np.testing.assert_array_equal(
        _on_host(actual), _on_host(desired), err_msg=err_msg, verbose=verbose, strict=strict
    )


def assert_allclose(
    actual: Any,
    desired: Any,
    rtol: float = 1e-7,
    atol: float = 0,
    equal_nan: bool = True,
    err_msg: str = "",
    verbose: bool = True,
    *,
    strict: bool = False,
) -> None:
    """``numpy.testing.assert_allclose`` for DistArrays, NumPy and CuPy arrays.

    Arguments and message as NumPy's; either side may be a DistArray, a NumPy or CuPy
    array, a scalar or a nested list.

    >>> import mdarray, numpy as np
    >>> from mdarray.testing import assert_allclose
    >>> x = mdarray.distributed_array([0.1, 0.2], {0: (), 1: ()}, "sum")
    >>> assert_allclose(x.sum(), 0.3)
    >>> assert_allclose(np.array([0.1, 0.25]), x, rtol=0.1)
    Traceback (most recent call last):
    ...
    AssertionError: ...
    Not equal to tolerance rtol=0.1, atol=0
    <BLANKLINE>
    Mismatched elements: 1 / 2 (50%)
    ...
    """
    __tracebackhide__ = True
    np.testing.assert_allclose(
        _on_host(actual),
        _on_host(desired),
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        err_msg=err_msg,
        verbose=verbose,
        strict=strict,
    )


def assert_dist_equal(actual: object, expected: ArrayLike, *, check_dtype: bool = True) -> None:
    """Assert `actual` is a DistArray with `expected`'s value and shape (and dtype unless
    ``check_dtype=False``): the strict form of `assert_array_equal`.

    >>> import mdarray, numpy as np
    >>> from mdarray.testing import assert_dist_equal
    >>> assert_dist_equal(mdarray.distributed_array([1, 2], {0: slice(None)}), np.array([1, 2]))
    """
    __tracebackhide__ = True
    got, want = _strict_pair(actual, expected, check_dtype)
    np.testing.assert_array_equal(got, want, strict=check_dtype)


def assert_dist_allclose(
    actual: object,
    expected: ArrayLike,
    *,
    rtol: float = 1e-7,
    atol: float = 0,
    check_dtype: bool = True,
) -> None:
    """Like `assert_dist_equal` with a tolerance: the strict form of `assert_allclose`.

    >>> import mdarray, numpy as np
    >>> from mdarray.testing import assert_dist_allclose
    >>> assert_dist_allclose(mdarray.distributed_array([0.1 + 0.2], {0: ()}), np.array([0.3]))
    """
    __tracebackhide__ = True
    got, want = _strict_pair(actual, expected, check_dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, strict=check_dtype)


def _strict_pair(actual: object, expected: ArrayLike, check_dtype: bool) -> tuple:
    if not isinstance(actual, DistArray):
        raise AssertionError(f"expected a DistArray, got {type(actual).__name__}")
    got, want = actual.get(), np.asarray(_on_host(expected))
    if got.shape != want.shape:
        raise AssertionError(f"shape {got.shape} != expected {want.shape}")
    if check_dtype and got.dtype != want.dtype:
        raise AssertionError(f"dtype {got.dtype} != expected {want.dtype}")
    return got, want


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
    expected = np.asarray(_on_host(expected))
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


# The assertions read values as `get` does: moves the user asks for (`_config.mark_explicit`).
mark_explicit(
    assert_array_equal, assert_allclose, assert_dist_equal, assert_dist_allclose, assert_chunks_hold
)
