"""``numpy.linalg`` functions made of other linear algebra: ``cross``, ``multi_dot``,
``cond``, ``tensorinv``, ``tensorsolve``.

``cross`` checks the vectors' length and runs the native ``numpy.cross``;
``multi_dot`` picks NumPy's order of products (the cheapest chain, found from the
shapes alone) and runs the native ``dot`` in it; ``cond`` is the ratio of the extreme
singular values (the native ``svd``) or, for the other norms, the norm of the matrix
times that of its inverse; ``tensorinv`` and ``tensorsolve`` reshape to one matrix and
run ``inv`` and ``solve``, which work on one device (a fallback under the policy where
the matrix must move there). ``cond`` takes the fallback in an SPMD run (TSQR has no
multi-process implementation yet).
"""

from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

from mdarray._array.array import DistArray
from mdarray._core.registry import implements
from mdarray._exec.chunkwise import write_out
from mdarray._ops.creation.creation_functions import asarray
from mdarray._ops.engine.fallback import distarrays_in, fallback

from .linalg import matrix_norm


def _dist(value, like: DistArray) -> DistArray:
    if isinstance(value, DistArray):
        return value
    return asarray(np.asarray(value), device=like.device)


@implements(np.linalg.cross, spmd=True)
def _cross(x1, x2, /, *, axis=-1):
    """``numpy.linalg.cross``: the native ``numpy.cross`` of two arrays of 3-vectors."""
    like = distarrays_in([x1, x2])[0]
    x1, x2 = _dist(x1, like), _dist(x2, like)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, "
            f"but they are {x1.shape[axis]} and {x2.shape[axis]} dimensional instead."
        )
    return np.cross(x1, x2, axis=axis)


def _chain_order(shapes: list[tuple[int, int]]) -> np.ndarray:
    """Where the cheapest product of the chain splits each sub-chain (``split[i, j]``),
    ties to the first split, as NumPy's ``multi_dot`` chooses."""
    n = len(shapes)
    dims = [s[0] for s in shapes] + [shapes[-1][1]]
    cost = np.zeros((n, n))
    split = np.zeros((n, n), dtype=np.intp)
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i, j] = np.inf
            for k in range(i, j):
                q = cost[i, k] + cost[k + 1, j] + dims[i] * dims[k + 1] * dims[j + 1]
                if q < cost[i, j]:
                    cost[i, j] = q
                    split[i, j] = k
    return split


def _product(arrays: list, split: np.ndarray, i: int, j: int):
    if i == j:
        return arrays[i]
    k = split[i, j]
    return np.dot(_product(arrays, split, i, k), _product(arrays, split, k + 1, j))


@implements(np.linalg.multi_dot, spmd=True)
def _multi_dot(arrays, *, out=None):
    """``numpy.linalg.multi_dot``: the native ``dot`` in NumPy's cheapest order."""
    arrays = list(arrays)
    n = len(arrays)
    if n < 2:
        raise ValueError("Expecting at least two arrays.")
    like = distarrays_in(arrays)[0]
    arrays = [_dist(a, like) for a in arrays]
    if n == 2:
        result = np.dot(arrays[0], arrays[1])
        return result if out is None else write_out(out, result)
    first, last = arrays[0].ndim, arrays[-1].ndim
    if first == 1:
        arrays[0] = np.reshape(arrays[0], (1, -1))
    if last == 1:
        arrays[-1] = np.reshape(arrays[-1], (-1, 1))
    for a in arrays:
        if a.ndim != 2:
            raise np.linalg.LinAlgError(
                f"{a.ndim}-dimensional array given. Array must be two-dimensional"
            )
    if n == 3:
        (a0, a1), (c0, c1) = arrays[0].shape, arrays[2].shape
        left_first = a0 * c0 * (a1 + c1) < a1 * c1 * (a0 + c0)
        # (AB)C splits the chain after B, A(BC) after A; each pair splits in its middle.
        split = np.array([[0, 0, 1 if left_first else 0], [0, 0, 1], [0, 0, 0]])
    else:
        split = _chain_order([a.shape for a in arrays])
    result = _product(arrays, split, 0, n - 1)
    if first == 1 and last == 1:
        result = result[0, 0]
    elif first == 1 or last == 1:
        result = np.ravel(result)
    return result if out is None else write_out(out, result)


@implements(np.linalg.cond)
def _cond(x, p=None):
    """``numpy.linalg.cond``: the extreme singular values' ratio (native ``svd``) for
    ``p`` of None, 2 or -2; else ``norm(x, p) * norm(inv(x), p)`` (``inv`` on one
    device). NaN where x holds none becomes inf, as in NumPy."""
    if x.ndim < 2 or (x.ndim > 2 and p not in (None, 2, -2)):
        return fallback(np.linalg.cond, (x,), {"p": p}, "numpy.linalg.cond")
    if x.size == 0 or x.shape[-2] * x.shape[-1] == 0:
        raise np.linalg.LinAlgError("cond is not defined on empty arrays")
    r: Any  # a DistArray (NumPy's types say ndarray for NumPy's functions)
    with np.errstate(all="ignore"):
        if p is None or p in (2, -2):
            s = np.linalg.svd(x, compute_uv=False)
            r = s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
        else:
            if x.shape[-1] != x.shape[-2]:
                raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
            # NumPy computes in double precision and returns x's own precision.
            double = np.complex128 if np.iscomplexobj(x) else np.float64
            inexact = x.dtype if np.issubdtype(x.dtype, np.inexact) else np.dtype(double)
            real = _cond_dtype(inexact, p)
            wide = x.astype(double)
            try:
                inverse = np.linalg.inv(wide)
            except np.linalg.LinAlgError:  # NumPy's unchecked inverse is all NaN here
                return asarray(np.array(np.inf, real), device=x.device)
            r = matrix_norm(wide, ord=p) * matrix_norm(inverse, ord=p)
            r = r.astype(real, copy=False)
        lost = np.isnan(r) & ~np.any(np.isnan(x), axis=(-2, -1))
        return np.where(lost, np.inf, r).astype(r.dtype, copy=False)


@functools.cache
def _cond_dtype(dtype: np.dtype, p) -> np.dtype:
    """The dtype of NumPy's own ``cond`` of a `dtype` matrix for norm `p`, from a 2x2
    probe: the real dtype of its precision (NumPy 2.4), or complex for a complex matrix
    and a norm other than 2 (NumPy 2.3)."""
    with np.errstate(all="ignore"):
        return np.asarray(np.linalg.cond(np.eye(2, dtype=dtype), p)).dtype


@implements(np.linalg.tensorinv, spmd=True, one_device=True)
def _tensorinv(a, ind=2):
    """``numpy.linalg.tensorinv``: `a` as one square matrix, inverted (on one device),
    reshaped back."""
    shape = a.shape
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    inverse_shape = shape[ind:] + shape[:ind]
    rows = int(np.prod(shape[ind:], dtype=np.int64))
    inverse = np.linalg.inv(np.reshape(a, (rows, -1)))
    return np.reshape(inverse, inverse_shape)


@implements(np.linalg.tensorsolve, spmd=True, one_device=True)
def _tensorsolve(a, b, axes=None):
    """``numpy.linalg.tensorsolve``: `a` (its `axes` moved last) as one square matrix,
    solved against the flattened `b` (on one device), reshaped."""
    like = distarrays_in([a, b])[0]
    a, b = _dist(a, like), _dist(b, like)
    n = a.ndim
    if axes is not None:
        order = list(range(n))
        for k in axes:
            order.remove(k)
            order.insert(n, k)
        a = np.transpose(a, order)
    shape = a.shape[-(n - b.ndim) :]
    size = 1
    for k in shape:
        size *= operator.index(k)
    if a.size != size**2:
        raise np.linalg.LinAlgError(
            "Input arrays must satisfy the requirement "
            "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])"
        )
    solution = np.linalg.solve(np.reshape(a, (size, size)), np.ravel(b))
    return np.reshape(solution, shape)
