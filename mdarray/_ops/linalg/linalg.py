"""The array API's ``linalg`` extension (`mdarray.linalg`) and NumPy's `numpy.linalg` on
DistArrays.

Native, on the chunks: ``matmul``, ``vecdot`` and ``matrix_transpose`` (the namespace's
own), ``outer`` (an elementwise product of a column and a row), ``vector_norm`` (a
reduction: partial where the axes are split), and ``matrix_norm`` for ``'fro'``, ``1``,
``-1``, ``inf`` and ``-inf`` (reductions too). ``tensordot`` is the namespace's too.

Native by TSQR (`_tsqr`), for a tall matrix (m >= n) whose chunks hold whole rows:
``qr`` (reduced), ``svd`` (reduced), ``svdvals``, ``pinv`` and ``matrix_rank`` (the last
four also for a wide matrix, through its conjugate transpose), and NumPy's ``lstsq``
(`_numpy_linalg`). Only the small R factors and combining pieces move; chunks that split
columns are resharded into row blocks first.

The rest needs whole matrices on one device (``solve``, ``inv``, ``det``, ``slogdet``,
``eigh``, ``eigvalsh``, ``cholesky``, ``matrix_power``, and factorizations of stacks or
of what TSQR does not take): those gather their operands onto one device (`_one_device`:
the first device of the operand, not the host) and run the backend's own ``linalg``
there, as fallbacks under the policy of `mdarray.options`; results are DistArrays on that
device (a named tuple of them where the standard names the results). ``cross`` and a few
cases beyond these gather to the host (`_fallback`). NumPy's own ``np.linalg`` functions
given a DistArray take the same paths, so ``np.linalg.norm(x)`` is a DistArray.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, cast

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from mdarray._array.array import DistArray
from mdarray._core.registry import implements
from mdarray._movement.collectives import several
from mdarray._ops.creation.creation_functions import asarray
from mdarray._ops.creation.data_type_functions import astype
from mdarray._ops.engine import one_device as _one_device
from mdarray._ops.engine.fallback import fallback
from mdarray._ops.engine.one_device import (
    check_solve,
    check_square,
    exponent,
    on_each_matrix,
    on_one_device,
)
from mdarray._ops.shape.transposes import matrix_transpose

from . import tsqr as _tsqr
from .linear_algebra_functions import matmul, tensordot, vecdot
from .tsqr import RowBlocks

inf = float("inf")


class EighResult(NamedTuple):
    """`eigh`'s result: eigenvalues in ascending order, and eigenvectors as columns."""

    eigenvalues: DistArray
    eigenvectors: DistArray


class QRResult(NamedTuple):
    """`qr`'s result: the orthonormal ``Q`` and the upper-triangular ``R``."""

    Q: DistArray
    R: DistArray


class SlogdetResult(NamedTuple):
    """`slogdet`'s result: the determinant is ``sign * exp(logabsdet)``."""

    sign: DistArray
    logabsdet: DistArray


class SVDResult(NamedTuple):
    """`svd`'s result: ``x == U @ (S[..., None] * Vh)``."""

    U: DistArray
    S: DistArray
    Vh: DistArray


# Gathered computation ---------------------------------------------------------------


def _dist(x) -> DistArray:
    return x if isinstance(x, DistArray) else asarray(x)


def _gathered(func, *args, **kwargs):
    """`func` of the array API extension, on DistArray operands, under the policy."""
    args = tuple(_dist(a) for a in args)
    return fallback(func, args, kwargs, f"numpy.linalg.{func.__name__}")


# NumPy's linalg functions that need whole matrices (or are not yet distributed) need no
# registration: on DistArrays they take the fallback policy (`_fallback.fallback_function`).


# Native: products and norms ---------------------------------------------------------


@implements(np.linalg.matmul, spmd=True)
def _numpy_matmul(x1, x2, /):
    return matmul(x1, x2)


@implements(np.linalg.matrix_transpose, spmd=True)
def _numpy_matrix_transpose(x, /):
    return matrix_transpose(x)


@implements(np.linalg.tensordot, spmd=True)
def _numpy_tensordot(x1, x2, /, *, axes=2):
    return tensordot(x1, x2, axes=axes)


@implements(np.linalg.vecdot, spmd=True)
def _numpy_vecdot(x1, x2, /, *, axis=-1):
    return vecdot(x1, x2, axis=axis)


@implements(np.linalg.outer, spmd=True)
def outer(x1: Any, x2: Any, /) -> DistArray:
    """Outer product of two 1-D arrays: ``out[i, j] == x1[i] * x2[j]``.

    Native: the product of a column and a row, elementwise, with NumPy's promotion.

    >>> import mdarray, numpy as np
    >>> mdarray.linalg.outer(mdarray.asarray(np.arange(2)), mdarray.asarray(np.arange(3))).get()
    array([[0, 0, 0],
           [0, 1, 2]])
    """
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError(
            "Input arrays must be one-dimensional, but they are "
            f"x1.ndim={np.ndim(x1)} and x2.ndim={np.ndim(x2)}."
        )
    if not isinstance(x1, DistArray) and not isinstance(x2, DistArray):
        x1 = asarray(x1)
    return np.multiply(np.expand_dims(x1, 1), x2)


def _inexact(x: DistArray) -> DistArray:
    """`x`, with integers and bools as float64 (the norms' dtypes, as NumPy's)."""
    return x if x.dtype.kind in "fc" else astype(x, np.float64)


@implements(np.linalg.vector_norm, spmd=True)
def vector_norm(
    x: Any,
    /,
    *,
    axis: int | tuple[int, ...] | None = None,
    keepdims: bool = False,
    ord: float | str = 2,
) -> DistArray:
    """Vector norm over `axis` (all axes when None) of order `ord`.

    Native, as reductions: over split axes the sums and maxima are partial results (SUM
    or MAX mode) until the root or power that finishes the norm. Orders as the standard:
    ``inf``, ``-inf``, ``0`` (count of nonzeros), ``1``, ``2`` and any other ``p``
    (``sum(abs(x)**p)**(1/p)``).

    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.arange(6.0).reshape(2, 3))
    >>> mdarray.linalg.vector_norm(x, axis=1, ord=1).get()
    array([ 3., 12.])
    """
    x = _inexact(_dist(x))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    axes = tuple(range(x.ndim)) if axis is None else normalize_axis_tuple(axis, x.ndim)
    reduce: dict[str, Any] = {"axis": axes, "keepdims": keepdims}
    if ord == 2:
        squares = np.real(np.conjugate(x) * x) if x.dtype.kind == "c" else x * x
        return np.sqrt(np.sum(squares, **reduce))
    magnitude = np.abs(x)
    if ord == inf:
        return np.max(magnitude, **reduce, initial=0)
    if ord == -inf:
        return np.min(magnitude, **reduce)
    if ord == 0:
        return np.sum(astype(magnitude != 0, magnitude.dtype), **reduce)
    if ord == 1:
        return np.sum(magnitude, **reduce)
    total = np.sum(magnitude**ord, **reduce)
    return total ** np.reciprocal(ord, dtype=total.dtype)


@implements(np.linalg.matrix_norm, spmd=True)
def matrix_norm(
    x: Any, /, *, keepdims: bool = False, ord: float | Literal["fro", "nuc"] | None = "fro"
) -> DistArray:
    """Matrix norm of each matrix in the last two axes of `x`.

    Native for ``'fro'`` (a vector norm of the matrix), ``1``, ``-1``, ``inf`` and
    ``-inf`` (largest or smallest column or row sum); ``2``, ``-2`` and ``'nuc'`` need
    singular values: native for a matrix TSQR takes (`svdvals`), else the matrices are
    gathered (a fallback under the policy).

    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.arange(4.0).reshape(2, 2))
    >>> mdarray.linalg.matrix_norm(x, ord=1).get()
    array(4.)
    """
    x = _dist(x)
    if x.ndim >= 2 and isinstance(ord, str) and ord == "fro":
        return vector_norm(x, axis=(-2, -1), keepdims=keepdims)
    # TSQR has no multi-process implementation yet: in a run of several processes these
    # orders gather (below).
    spectral = ord in (2, -2) or (isinstance(ord, str) and ord == "nuc")
    if x.ndim == 2 and spectral and not several():
        rows, _ = _tall(x)
        if rows is not None:
            s = _tsqr.svdvals(rows)
            norm = np.sum(s) if ord == "nuc" else np.max(s) if ord == 2 else np.min(s)
            return cast(DistArray, np.reshape(norm, (1, 1)) if keepdims else norm)
    if x.ndim < 2 or isinstance(ord, str) or ord not in (1, -1, inf, -inf):
        return fallback(
            np.linalg.matrix_norm,
            (x,),
            {"keepdims": keepdims, "ord": ord},
            "numpy.linalg.matrix_norm",
        )
    summed, across = (-2, -1) if ord in (1, -1) else (-1, -2)
    sums = np.sum(np.abs(_inexact(x)), axis=summed, keepdims=True)
    if ord > 0:
        result = np.max(sums, axis=across, keepdims=True, initial=0)
    else:
        result = np.min(sums, axis=across, keepdims=True)
    return result if keepdims else np.squeeze(result, axis=(-2, -1))


@implements(np.linalg.norm, spmd=True)
def _numpy_norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm``: natively for the default order (the 2-norm of the elements),
    the rest gathered."""
    if ord is None and (axis is None or np.ndim(axis) == 0 or len(axis) <= 2):
        return vector_norm(x, axis=axis, keepdims=keepdims)
    if axis is None and np.ndim(x) == 2 and (ord in (2, -2) or ord == "nuc"):
        return matrix_norm(x, ord=ord, keepdims=keepdims)
    kwargs = {"ord": ord, "axis": axis, "keepdims": keepdims}
    return fallback(np.linalg.norm, (x,), kwargs, "numpy.linalg.norm")


# Factorizations, solves and the rest --------------------------------------------------
#
# A tall matrix split by rows factors natively (`_tsqr`); the rest gathers onto one
# device (`_one_device`), as a fallback under the policy.


def _one(name: str, compute, *operands):
    return on_one_device(f"numpy.linalg.{name}", compute, *operands)


def _each(name: str, compute, x: DistArray):
    """`compute` of each matrix of `x` on its own: per chunk where x's chunks keep its
    matrices whole (`on_each_matrix`), else on one device."""
    return on_each_matrix(f"numpy.linalg.{name}", compute, x)


def _tall(x: DistArray, *, double: bool = False) -> tuple[RowBlocks | None, bool]:
    """TSQR's row blocks of `x`, or of ``x^H`` where `x` is wide (then True): the
    singular values, the SVD, the rank and the pseudo-inverse follow from either. In
    double precision where `double` (NumPy computes so: rank decisions cut as its do)."""
    dtype = _tsqr.linalg_dtype(x.dtype)
    if dtype is None:
        return None, False
    dtype = _tsqr.double(dtype) if double else dtype
    blocks = _tsqr.row_blocks(x, dtype)
    if blocks is None and x.ndim == 2 and x.shape[0] < x.shape[1]:
        adjoint = matrix_transpose(cast(DistArray, np.conj(x)) if x.dtype.kind == "c" else x)
        return _tsqr.row_blocks(adjoint, dtype), True
    return blocks, False


def _conjugate_transpose(x: DistArray) -> DistArray:
    x = matrix_transpose(x)
    return cast(DistArray, np.conj(x)) if x.dtype.kind == "c" else x


def cholesky(x: Any, /, *, upper: bool = False) -> DistArray:
    """Cholesky factor of each Hermitian positive-definite matrix: ``L`` with
    ``x == L @ L^H`` (or ``U`` with ``x == U^H @ U`` where `upper`). Per chunk where a
    stack's chunks keep its matrices whole, else on one device
    (`mdarray._ops.engine.one_device`).

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="allow"):
    ...     mdarray.linalg.cholesky(mdarray.asarray(4.0 * np.eye(2))).get()
    array([[2., 0.],
           [0., 2.]])
    """
    x = _dist(x)
    check_square(x)
    return _each("cholesky", lambda xp, a: _one_device.cholesky(xp, a, upper), x)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> DistArray:
    """Cross product of 3-element vectors along `axis`, broadcast: per chunk, the vector
    axis made whole first where a chunk splits it (``numpy.linalg.cross``'s native
    implementation).

    >>> import mdarray, numpy as np
    >>> mdarray.linalg.cross(mdarray.asarray(np.eye(3)[0]), mdarray.asarray(np.eye(3)[1])).get()
    array([0., 0., 1.])
    """
    if not isinstance(x1, DistArray) and not isinstance(x2, DistArray):
        x1 = asarray(x1)
    return cast(DistArray, np.linalg.cross(x1, x2, axis=axis))


def det(x: Any, /) -> DistArray:
    """Determinant of each square matrix in the last two axes: per chunk where a stack's
    chunks keep its matrices whole, else on one device.

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="allow"):
    ...     float(mdarray.linalg.det(mdarray.asarray(np.diag([2.0, 3.0]))))
    6.0
    """
    x = _dist(x)
    check_square(x)
    return _each("det", lambda xp, a: xp.linalg.det(a), x)


def diagonal(x: Any, /, *, offset: int = 0) -> DistArray:
    """The diagonal (above it for `offset` > 0, below for < 0) of each matrix (the last
    two axes): each chunk gives the diagonal elements it holds, nothing moves.

    >>> import mdarray, numpy as np
    >>> mdarray.linalg.diagonal(mdarray.asarray(np.arange(9).reshape(3, 3)), offset=1).get()
    array([1, 5])
    """
    return cast(DistArray, np.linalg.diagonal(_dist(x), offset=offset))


def eigh(x: Any, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of each Hermitian matrix (read from its
    lower triangle): per chunk where a stack's chunks keep its matrices whole, else on
    one device.

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="allow"):
    ...     mdarray.linalg.eigh(mdarray.asarray(np.diag([3.0, 1.0]))).eigenvalues.get()
    array([1., 3.])
    """
    x = _dist(x)
    check_square(x)
    return EighResult(*_each("eigh", lambda xp, a: tuple(xp.linalg.eigh(a)), x))


def eigvalsh(x: Any, /) -> DistArray:
    """Eigenvalues (ascending) of each Hermitian matrix: per chunk where a stack's chunks
    keep its matrices whole, else on one device.

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="allow"):
    ...     mdarray.linalg.eigvalsh(mdarray.asarray(np.diag([3.0, 1.0]))).get()
    array([1., 3.])
    """
    x = _dist(x)
    check_square(x)
    return _each("eigvalsh", lambda xp, a: xp.linalg.eigvalsh(a), x)


def inv(x: Any, /) -> DistArray:
    """Inverse of each square matrix; `numpy.linalg.LinAlgError` where one is singular
    (NaNs on CuPy). Per chunk where a stack's chunks keep its matrices whole, else on one
    device.

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="allow"):
    ...     mdarray.linalg.inv(mdarray.asarray(np.diag([2.0, 4.0]))).get()
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    x = _dist(x)
    check_square(x)
    return _each("inv", lambda xp, a: xp.linalg.inv(a), x)


def matrix_power(x: Any, n: int, /) -> DistArray:
    """Each square matrix raised to the integer power `n` (inverted for `n` < 0).
    Per chunk where a stack's chunks keep its matrices whole, else on one device.

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="allow"):
    ...     mdarray.linalg.matrix_power(mdarray.asarray(np.diag([1, 2])), 3).get()
    array([[1, 0],
           [0, 8]])
    """
    x = _dist(x)
    power = exponent(n)
    check_square(x)
    return _each("matrix_power", lambda xp, a: xp.linalg.matrix_power(a, power), x)


def _scalar(value) -> float | None:
    """`value` (an rtol) as a float where it is one number, else None."""
    if isinstance(value, DistArray):
        value = value.get() if value.ndim == 0 else None
    return None if value is None or np.ndim(value) else float(value)


def matrix_rank(x: Any, /, *, rtol: float | DistArray | None = None) -> DistArray:
    """Rank of each matrix: singular values above ``rtol * largest`` (default ``rtol``:
    ``max(m, n) * eps``). Native for a matrix that TSQR takes (`mdarray._ops.linalg.tsqr`: the
    singular values of R, only R factors move), else computed on one device.

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     int(mdarray.linalg.matrix_rank(mdarray.asarray(np.diag([1.0, 0.0]))))
    1
    """
    x = _dist(x)
    if x.ndim < 2:
        return _gathered(np.linalg.matrix_rank, x, rtol=rtol)
    rows, _ = _tall(x, double=True)
    if rtol is None:  # NumPy's: eps of the singular values' dtype, x's precision
        single = _tsqr.linalg_dtype(x.dtype) or np.dtype(np.float64)
        cut = _scalar(max(x.shape[-2:]) * np.finfo(single).eps)
    else:
        cut = _scalar(rtol)
    if rows is not None and cut is not None:
        return _tsqr.matrix_rank(rows, cut)
    tol = rtol.get() if isinstance(rtol, DistArray) else rtol
    each = _each if tol is None or np.ndim(tol) == 0 else _one  # cut-offs per matrix: one device
    return each("matrix_rank", lambda xp, a: _one_device.matrix_rank(xp, a, tol), x)


def pinv(x: Any, /, *, rtol: float | DistArray | None = None) -> DistArray:
    """Moore-Penrose pseudo-inverse of each matrix, singular values at most ``rtol *
    largest`` cut off (default ``rtol``: ``max(m, n) * eps``). Native for a matrix
    TSQR takes (`mdarray._ops.linalg.tsqr`, or its conjugate transpose where it is wide): the
    result is n x m in the transposed row layout. Else gathered onto one device.

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     mdarray.linalg.pinv(mdarray.asarray(np.diag([2.0, 0.0]))).get()
    array([[0.5, 0. ],
           [0. , 0. ]])
    """
    x = _dist(x)
    if rtol is None:
        rtol = max(x.shape[-2:], default=0) * np.finfo(x.dtype).eps
    return pseudo_inverse(x, rtol)


def pseudo_inverse(x: DistArray, rcond) -> DistArray:
    """`pinv` with NumPy's cut-off `rcond` (a float, or an array over the stack)."""
    if x.ndim < 2:
        return _gathered(np.linalg.pinv, x, rtol=rcond)
    rows, adjoint = _tall(x, double=True)
    cut = _scalar(rcond)
    if rows is not None and cut is not None:
        result = _tsqr.pinv(rows, cut, _tsqr.linalg_dtype(x.dtype))
        return _conjugate_transpose(result) if adjoint else result
    rcond = rcond.get() if isinstance(rcond, DistArray) else rcond
    each = _each if np.ndim(rcond) == 0 else _one  # cut-offs per matrix: one device
    return each("pinv", lambda xp, a: _one_device.pinv(xp, a, rcond), x)


def qr(x: Any, /, *, mode: Literal["reduced", "complete"] = "reduced") -> QRResult:
    """QR decomposition of each matrix: ``x == Q @ R``.

    Native for a tall matrix (m >= n) whose chunks hold whole rows, by TSQR
    (`mdarray._ops.linalg.tsqr`): Q keeps x's row layout, R (n x n) is replicated on x's
    devices; only the R factors, x's first n rows and pieces of the small combining Q
    move. Q and R are NumPy's up to rounding, signs included (LAPACK's Householder
    choices, whatever the layout; on CUDA, cuSOLVER's), identity, diagonal, triangular
    and zero blocks too, but where rounding errors choose: past the rank of dependent
    columns (exact zero columns are fine), where LAPACK takes a sign from a negative
    zero (-0.0, in x or made by its arithmetic), and where its arithmetic cancels a
    pivot of a sparse matrix to exactly zero. Chunks that split columns are resharded
    into row blocks first. Wide matrices, ``mode="complete"`` of a non-square one and
    stacks are computed on one device (`mdarray._ops.engine.one_device`; a fallback
    where their pieces gather there).

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(8.0).reshape(4, 2), mdarray.Layout.block((4, 2)))
    >>> with mdarray.options(fallback="raise"):
    ...     q, r = mdarray.linalg.qr(x)
    >>> q.layout == x.layout, r.get().round(3)
    (True, array([[-7.483, -9.087],
           [ 0.   , -1.195]]))
    >>> np.allclose(q.get(), np.linalg.qr(np.arange(8.0).reshape(4, 2)).Q)
    True
    """
    x = _dist(x)
    rows = _tsqr.row_blocks(x)
    if rows is not None and (mode == "reduced" or x.shape[0] == x.shape[1]):
        return QRResult(*_tsqr.qr(rows))
    return QRResult(*_each("qr", lambda xp, a: tuple(xp.linalg.qr(a, mode=mode)), x))


def slogdet(x: Any, /) -> SlogdetResult:
    """Sign and log of the absolute value of each determinant: per chunk where a stack's
    chunks keep its matrices whole, else on one device.

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="allow"):
    ...     sign, logabsdet = mdarray.linalg.slogdet(mdarray.asarray(np.diag([-1.0, 1.0])))
    >>> float(sign), float(logabsdet)
    (-1.0, 0.0)
    """
    x = _dist(x)
    check_square(x)
    return SlogdetResult(*_each("slogdet", lambda xp, a: tuple(xp.linalg.slogdet(a)), x))


def solve(x1: Any, x2: Any, /) -> DistArray:
    """Solution of ``x1 @ out == x2`` for square `x1` (`x2` a vector only where it is
    1-D; batch axes broadcast); `numpy.linalg.LinAlgError` where `x1` is singular (NaNs
    on CuPy). Computed on one device (one holding both whole, else the first of `x1`'s);
    a stack `x1` split along its stack axes only is solved where it lies, each matrix
    with its right-hand side brought beside it.

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="allow"):
    ...     mdarray.linalg.solve(mdarray.asarray(np.diag([2.0, 4.0])), mdarray.asarray(np.ones(2))).get()
    array([0.5 , 0.25])
    """
    if not isinstance(x1, DistArray) and not isinstance(x2, DistArray):
        x1 = _dist(x1)
    check_solve(_array_like(x1), _array_like(x2))
    if isinstance(x1, DistArray):  # a stack of matrices: each with its right-hand side
        return on_each_matrix("numpy.linalg.solve", _one_device.solve, x1, x2)
    return _one("solve", _one_device.solve, x1, x2)


def _array_like(x):
    return x if hasattr(x, "shape") else np.asarray(x)


def svd(x: Any, /, *, full_matrices: bool = True) -> SVDResult:
    """Singular value decomposition of each matrix: ``x == U @ diag(S) @ Vh``.

    Native where only the reduced factors are asked for (``full_matrices=False``, or a
    square matrix) of a matrix TSQR takes (`mdarray._ops.linalg.tsqr`; a wide one through its
    conjugate transpose): the SVD of R on one device, U as ``Q @ U_R`` in x's row
    layout, S and Vh replicated. Singular vectors are NumPy's where LAPACK also takes
    the QR (or LQ) first, a matrix at least 11/6 times as tall as wide (or wide as
    tall); nearer square they may differ by a phase per pair. The rest is gathered onto
    one device.

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     u, s, vh = mdarray.linalg.svd(mdarray.asarray(np.diag([1.0, 3.0])))
    >>> s.get()
    array([3., 1.])
    """
    x = _dist(x)
    reduced = not full_matrices or (x.ndim == 2 and x.shape[0] == x.shape[1])
    rows, adjoint = _tall(x) if reduced else (None, False)
    if rows is None:
        compute = lambda xp, a: tuple(xp.linalg.svd(a, full_matrices=full_matrices))  # noqa: E731
        return SVDResult(*_each("svd", compute, x))
    u, s, vh = _tsqr.svd(rows, adjoint)
    if adjoint:
        return SVDResult(_conjugate_transpose(vh), s, _conjugate_transpose(u))
    return SVDResult(u, s, vh)


def svdvals(x: Any, /) -> DistArray:
    """Singular values of each matrix, in descending order. Native for a matrix TSQR
    takes (those of R: only the R factors move), else computed on one device.

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     mdarray.linalg.svdvals(mdarray.asarray(np.diag([1.0, 3.0]))).get()
    array([3., 1.])
    """
    x = _dist(x)
    rows, _ = _tall(x)
    if rows is not None:
        return _tsqr.svdvals(rows)
    return _each("svdvals", _one_device.svdvals, x)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> DistArray:
    """Sum of the diagonal (at `offset`) of each matrix, in `dtype` (by default the
    standard's: small integers widen): the diagonal is taken per chunk (nothing moves),
    then summed by the reduction engine.

    >>> import mdarray, numpy as np
    >>> int(mdarray.linalg.trace(mdarray.asarray(np.arange(9).reshape(3, 3))))
    12
    """
    return np.linalg.trace(_dist(x), offset=offset, dtype=dtype)
