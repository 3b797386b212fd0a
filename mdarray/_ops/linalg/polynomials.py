"""NumPy's polynomial functions (``numpy.poly*``, ``roots``) on DistArrays of coefficients.

Coefficient vectors are small, so each function is NumPy's definition written with
native operations on them (slices, ``concatenate``, ``convolve``, ufuncs, ``vander``
and ``lstsq`` for ``polyfit``): the same operations in the same order, so the same
values and dtypes. ``roots`` builds the companion matrix on one device and takes its
eigenvalues there (``numpy.linalg.eigvals`` runs on one device); ``poly`` of a square
matrix does the same. A ``polyfit`` asked for the covariance (``cov=``) takes the
fallback, as does ``polyfit`` in an SPMD run (TSQR has no multi-process implementation
yet).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mdarray._array.array import DistArray
from mdarray._core.registry import implements
from mdarray._ops.creation.creation_functions import asarray
from mdarray._ops.engine.fallback import distarrays_in, fallback
from mdarray._runtime.config import warn


def _template(*operands) -> DistArray:
    return distarrays_in(list(operands))[0]


def _vector(p, like: DistArray) -> Any:
    """`p` as NumPy's ``atleast_1d`` makes it, a DistArray over like's devices."""
    if isinstance(p, DistArray):
        return np.atleast_1d(p)
    return asarray(np.atleast_1d(np.asarray(p)), device=like.device)


def _beside(host: np.ndarray, like: Any) -> DistArray:
    return asarray(host, device=like.device)


def _padded(shorter: Any, longer: Any) -> Any:
    extra = len(longer) - len(shorter)
    if extra <= 0:
        return shorter
    return np.concatenate((np.zeros(extra, shorter.dtype), shorter))


@implements(np.polyadd, spmd=True)
def _polyadd(a1, a2):
    """``numpy.polyadd``: the shorter coefficient vector padded in front with zeros."""
    like = _template(a1, a2)
    a1, a2 = _vector(a1, like), _vector(a2, like)
    return _padded(a1, a2) + _padded(a2, a1)


@implements(np.polysub, spmd=True)
def _polysub(a1, a2):
    """``numpy.polysub``: as `polyadd`, subtracting."""
    like = _template(a1, a2)
    a1, a2 = _vector(a1, like), _vector(a2, like)
    return _padded(a1, a2) - _padded(a2, a1)


@implements(np.polymul, spmd=True)
def _polymul(a1, a2):
    """``numpy.polymul``: the convolution of the coefficients, each without its leading
    zeros (as ``poly1d`` holds them)."""
    like = _template(a1, a2)
    return np.convolve(_trimmed(_vector(a1, like)), _trimmed(_vector(a2, like)))


def _trimmed(p: Any) -> Any:
    """`p` as ``poly1d`` keeps it: 1-D, leading zeros dropped (a zero if none is left)."""
    if p.ndim > 1:
        raise ValueError("Polynomial must be 1d only.")
    p = np.trim_zeros(p, trim="f")
    return p if len(p) else _beside(np.zeros(1, p.dtype), p)


@implements(np.polyder, spmd=True)
def _polyder(p, m=1):
    """``numpy.polyder``: each coefficient times its power, `m` times."""
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    if not isinstance(p, DistArray):
        return fallback(np.polyder, (p,), {"m": m}, "numpy.polyder")
    for _ in range(m):
        n = len(p) - 1
        p = p[:-1] * np.arange(n, 0, -1)
    return p


@implements(np.polyint, spmd=True)
def _polyint(p, m=1, k=None):
    """``numpy.polyint``: each coefficient over its new power, the constant `k` appended,
    `m` times."""
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    constants = np.zeros(m, float) if k is None else np.atleast_1d(_host(k))
    if len(constants) == 1 and m > 1:
        constants = constants[0] * np.ones(m, float)
    if len(constants) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    if not isinstance(p, DistArray):
        return fallback(np.polyint, (p,), {"m": m, "k": k}, "numpy.polyint")
    for step in range(m):
        p = np.concatenate((p / np.arange(len(p), 0, -1), np.asarray([constants[step]])))
    return p


def _host(value) -> np.ndarray:
    return value.get() if isinstance(value, DistArray) else np.asarray(value)


def _min_type(char: str) -> str:
    """NumPy's ``mintypecode`` of one type character: itself for the inexact types,
    else float64."""
    return char if char in "GDFgdf" else "d"


@implements(np.poly, spmd=True)
def _poly(seq_of_zeros):
    """``numpy.poly``: the coefficients of the polynomial with the given roots (of a
    square matrix: its eigenvalues', computed on one device), one factor ``x - zero``
    at a time by the native ``convolve``."""
    zeros: Any = np.atleast_1d(seq_of_zeros)
    shape = zeros.shape
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        zeros = np.linalg.eigvals(zeros)
    elif len(shape) == 1:
        zeros = zeros.astype(_min_type(zeros.dtype.char))
    else:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if len(zeros) == 0:
        return 1.0
    a: Any = _beside(np.ones(1, zeros.dtype), zeros)
    # One factor ``[1, -zero]`` at a time by the native convolve (the backend's own on
    # each chunk): the roots are read on the host, a vector of the polynomial's degree.
    for zero in zeros.get():
        a = np.convolve(a, np.array([1, -zero], dtype=zeros.dtype), mode="full")
    if np.iscomplexobj(a):
        roots = zeros.astype(complex)
        if bool(np.all(np.sort(roots) == np.sort(np.conjugate(roots)))):
            a = np.real(a).copy()
    return a


@implements(np.roots, spmd=True, one_device=True)
def _roots(p):
    """``numpy.roots``: the eigenvalues of the companion matrix, built on the first
    device of `p` and solved there (leading and trailing zeros stripped first: the
    trailing ones are roots at zero)."""
    p = np.atleast_1d(p)
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    held: Any = np.flatnonzero(p)
    nonzero = held.get()
    if len(nonzero) == 0:
        return _beside(np.array([]), p)
    trailing = len(p) - int(nonzero[-1]) - 1
    p = p[int(nonzero[0]) : int(nonzero[-1]) + 1]
    if not np.issubdtype(p.dtype, np.inexact):
        p = p.astype(float)
    n = len(p)
    if n > 1:
        below = np.diag(np.ones(n - 2, p.dtype), -1)[1:]
        companion: Any = np.concatenate(((-p[1:] / p[0])[None, :], below))
        first = companion.layout.chunk_devices[0]
        roots: Any = np.linalg.eigvals(companion.to_device(first))
        if roots.dtype.kind == "c" and p.dtype.kind != "c" and not bool(np.any(roots.imag)):
            roots = np.real(roots).copy()  # real roots are real (NumPy's eigvals, from 2.5, not)
    else:
        roots = _beside(np.array([]), p)
    if trailing == 0:
        return roots
    return np.concatenate((roots, np.zeros(trailing, roots.dtype)))


@implements(np.polydiv, spmd=True)
def _polydiv(u, v):
    """``numpy.polydiv``: long division, one leading coefficient of the quotient per
    step; the remainder's leading near-zeros dropped."""
    like = _template(u, v)
    u = _vector(u, like) + 0.0
    v = _vector(v, like) + 0.0
    dtype = np.result_type(u.dtype, v.dtype)
    m, n = len(u) - 1, len(v) - 1
    scale = 1.0 / v[0]
    quotient = _beside(np.zeros(max(m - n + 1, 1), dtype), u)
    remainder = u.astype(dtype)
    for k in range(m - n + 1):
        d = scale * remainder[k]
        quotient[k] = d
        remainder[k : k + n + 1] = remainder[k : k + n + 1] - d * v
    while remainder.shape[-1] > 1 and np.allclose(remainder[0], 0, rtol=1e-14):
        remainder = remainder[1:]
    return quotient, remainder


@implements(np.polyfit)
def _polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """``numpy.polyfit``: least squares on the Vandermonde matrix of `x` with its
    columns scaled to unit norm (the native ``lstsq`` of a tall matrix);
    ``cov=`` takes the fallback."""
    if cov:
        kwargs = {"rcond": rcond, "full": full, "w": w, "cov": cov}
        return fallback(np.polyfit, (x, y, deg), kwargs, "numpy.polyfit")
    like = _template(x, y, w)
    order = int(deg) + 1
    x = (x if isinstance(x, DistArray) else _beside(np.asarray(x), like)) + 0.0
    y = (y if isinstance(y, DistArray) else _beside(np.asarray(y), like)) + 0.0
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = len(x) * np.finfo(x.dtype).eps
    lhs = np.vander(x, order)
    rhs = y
    if w is not None:
        w = (w if isinstance(w, DistArray) else _beside(np.asarray(w), like)) + 0.0
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    scale = np.sqrt(np.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, residuals, rank, singular = np.linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if rank != order and not full:
        warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning)
    if full:
        return c, residuals, rank, singular, rcond
    return c
