"""NumPy's ``numpy.linalg`` factorizations and solves on DistArrays, with NumPy's own
signatures and result types: ``qr``, ``svd``, ``svdvals``, ``pinv``, ``matrix_rank`` and
``lstsq`` natively by TSQR where the matrix is tall and split by rows (`_tsqr`: only the
small R factors and combining pieces move), the rest of them and ``cholesky``, ``eigh``,
``eigvalsh``, ``eig``, ``eigvals``, ``solve``, ``inv``, ``det``, ``slogdet`` and
``matrix_power`` computed on one device (`_one_device`: one that holds the operands whole,
else a gathering fallback under the policy).
Options the array API functions lack (``hermitian=True``, ``qr(mode="raw")``, an absolute
``tol``) gather to the host (`_fallback`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mdarray._array.array import DistArray
from mdarray._core.registry import implements
from mdarray._ops.creation.creation_functions import asarray
from mdarray._ops.engine import one_device as _one_device
from mdarray._ops.engine.fallback import fallback

from . import linalg as _linalg, tsqr as _tsqr

__all__: list[str] = []

# NumPy's result types, so ``type(np.linalg.qr(x))`` is what NumPy gives.
_QR: Any = type(np.linalg.qr(np.eye(1)))
_SVD: Any = type(np.linalg.svd(np.eye(1)))
_EIGH: Any = type(np.linalg.eigh(np.eye(1)))
_EIG: Any = type(np.linalg.eig(np.eye(1)))
_SLOGDET: Any = type(np.linalg.slogdet(np.eye(1)))

_UNSET = object()


def _host(func, args: tuple, kwargs: dict):
    return fallback(func, args, kwargs, f"numpy.linalg.{func.__name__}")


def _dist(x) -> DistArray:
    return x if isinstance(x, DistArray) else asarray(x)


@implements(np.linalg.qr, spmd=True)
def _qr(a, mode="reduced"):
    """``np.linalg.qr``: ``"reduced"`` (and ``"complete"`` of a square matrix) by TSQR
    where it applies, ``"r"`` by TSQR without Q; see `mdarray.linalg.qr`.

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     np.linalg.qr(mdarray.asarray(np.eye(3)), mode="r").get()
    array([[1., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.]])
    """
    if mode not in ("reduced", "complete", "r"):
        return _host(np.linalg.qr, (a,), {"mode": mode})
    a = _dist(a)
    if mode != "r":
        return _QR(*_linalg.qr(a, mode=mode))
    rows = _tsqr.row_blocks(a)
    if rows is not None:
        return _tsqr.qr(rows, mode="r")
    return _linalg._each("qr", lambda xp, x: xp.linalg.qr(x, mode="r"), a)


@implements(np.linalg.svd, spmd=True)
def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``np.linalg.svd``: see `mdarray.linalg.svd` (``compute_uv=False``: `svdvals`);
    ``hermitian=True`` gathers to the host.

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     np.linalg.svd(mdarray.asarray(np.diag([1.0, 2.0])), compute_uv=False).get()
    array([2., 1.])
    """
    if hermitian:
        kwargs = {"full_matrices": full_matrices, "compute_uv": compute_uv, "hermitian": True}
        return _host(np.linalg.svd, (a,), kwargs)
    if not compute_uv:
        return _linalg.svdvals(a)
    return _SVD(*_linalg.svd(a, full_matrices=full_matrices))


@implements(np.linalg.svdvals, spmd=True)
def _svdvals(x, /):
    return _linalg.svdvals(x)


@implements(np.linalg.pinv, spmd=True)
def _pinv(a, rcond=None, hermitian=False, *, rtol=_UNSET):
    """``np.linalg.pinv`` with NumPy's cut-off rules (``rcond`` default ``1e-15``, or
    ``rtol``); see `mdarray.linalg.pinv`. ``hermitian=True`` gathers to the host.

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     np.linalg.pinv(mdarray.asarray(np.diag([2.0, 4.0]))).get()
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    if hermitian:
        kwargs = {"rcond": rcond, "hermitian": True}
        return _host(np.linalg.pinv, (a,), kwargs if rtol is _UNSET else {**kwargs, "rtol": rtol})
    a = _dist(a)
    if rcond is None:
        if rtol is _UNSET:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(a.shape[-2:], default=0) * np.finfo(a.dtype).eps
        else:
            rcond = rtol
    elif rtol is not _UNSET:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    return _linalg.pseudo_inverse(a, rcond)


@implements(np.linalg.matrix_rank, spmd=True)
def _matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """``np.linalg.matrix_rank``: see `mdarray.linalg.matrix_rank`; an absolute `tol`,
    ``hermitian=True`` or fewer than two axes gather to the host."""
    if tol is not None or hermitian or np.ndim(A) < 2:
        kwargs = {"tol": tol, "hermitian": hermitian, "rtol": rtol}
        return _host(np.linalg.matrix_rank, (A,), kwargs)
    return _linalg.matrix_rank(A, rtol=rtol)


def _lstsq_dtypes(*dtypes) -> tuple[np.dtype, np.dtype] | None:
    """NumPy's ``(computation dtype, result dtype)`` for lstsq: double precision, results
    single where every operand is; None for dtypes linear algebra does not take."""
    single = True
    complex_ = False
    for dtype in dtypes:
        if dtype.kind in "fc":
            if _tsqr.linalg_dtype(dtype) is None:
                return None
            single = single and dtype.itemsize == (4 if dtype.kind == "f" else 8)
            complex_ = complex_ or dtype.kind == "c"
        else:
            single = False
    compute = np.dtype(np.complex128 if complex_ else np.float64)
    result = np.dtype(("F" if complex_ else "f") if single else compute)
    return compute, result


@implements(np.linalg.lstsq, spmd=True)
def _lstsq(a, b, rcond=None):
    """``np.linalg.lstsq(a, b, rcond)``: ``(x, residuals, rank, s)`` as NumPy's (in double
    precision, results single where the operands are), all DistArrays.

    A tall `a` split by rows is native (`mdarray._ops.linalg.tsqr.lstsq`: TSQR of a, ``Q^H b``
    summed from one small piece per chunk, the SVD of R on one device, the minimum-norm
    solution, residuals summed per chunk); a wide or stacked `a` is gathered onto one
    device.

    >>> import mdarray, numpy as np
    >>> a = mdarray.asarray(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    >>> with mdarray.options(fallback="raise"):
    ...     x, residuals, rank, s = np.linalg.lstsq(a, np.array([1.0, 1.0, 0.0]))
    >>> x.get().round(4), residuals.get().round(4), int(rank)
    (array([0.3333, 0.3333]), array([1.3333]), 2)
    """
    a = _dist(a)
    b_array = b if hasattr(b, "shape") else np.asarray(b)
    dtypes = _lstsq_dtypes(a.dtype, b_array.dtype)
    shapes_fit = (
        a.ndim == 2
        and b_array.ndim in (1, 2)
        and b_array.shape[0] == a.shape[0]
        and b_array.shape[-1] > 0
    )
    if dtypes is None or not shapes_fit:
        return _host(np.linalg.lstsq, (a, b), {"rcond": rcond})
    compute, result = dtypes
    if rcond is None:
        rcond = np.finfo(compute).eps * max(a.shape)
    rows = _tsqr.row_blocks(a, compute)
    if rows is not None:
        return _tsqr.lstsq(rows, b_array, float(rcond), result)

    def solve(xp, x, y):
        return _one_device.lstsq(xp, x, y, float(rcond), compute, result)

    return _linalg._one("lstsq", solve, a, b_array)


# Square matrices: per matrix, or on one device ----------------------------------------


def _square(name: str, compute, a, *, each: bool = True):
    """`compute` of square `a`: per matrix (`_linalg._each`), or on one device where the
    result's type depends on the whole stack (`each` False)."""
    a = _dist(a)
    _one_device.check_square(a)
    return (_linalg._each if each else _linalg._one)(name, compute, a)


@implements(np.linalg.cholesky, spmd=True, one_device=True)
def _cholesky(a, /, *, upper=False):
    return _square("cholesky", lambda xp, x: _one_device.cholesky(xp, x, upper), a)


@implements(np.linalg.eigh, spmd=True, one_device=True)
def _eigh(a, UPLO="L"):
    return _EIGH(*_square("eigh", lambda xp, x: tuple(xp.linalg.eigh(x, UPLO=UPLO)), a))


@implements(np.linalg.eigvalsh, spmd=True, one_device=True)
def _eigvalsh(a, UPLO="L"):
    return _square("eigvalsh", lambda xp, x: xp.linalg.eigvalsh(x, UPLO=UPLO), a)


# NumPy before 2.5 gives real arrays for ``eig`` of a real matrix whose eigenvalues are
# all real; from 2.5 complex ones always, as CuPy's does.
_EIG_REAL_WHERE_IT_CAN = np.linalg.eigvals(np.eye(1)).dtype.kind != "c"


def _real_where_all_are(xp, x, values, *vectors) -> tuple:
    """`values` (and `vectors`) as their real parts where `x` is real and the imaginary
    parts of `values` are all zero (a look at the values: one host synchronization, as
    NumPy's own rule needs), else unchanged."""
    if x.dtype.kind != "c" and values.dtype.kind == "c" and not bool(xp.any(values.imag)):
        return (values.real.copy(), *(v.real.copy() for v in vectors))
    return (values, *vectors)


def _numpy_eig(xp, x, values, *vectors) -> tuple:
    if _EIG_REAL_WHERE_IT_CAN:
        return _real_where_all_are(xp, x, values, *vectors)
    return (values, *vectors)


@implements(np.linalg.eig, spmd=True, one_device=True)
def _eig(a):
    """``np.linalg.eig``: on one device where the backend's linalg has ``eig`` (NumPy's
    does; CuPy's from version 14), else gathered to the host."""
    a = _dist(a)
    if not hasattr(a.storage.backend.xp.linalg, "eig"):
        return _host(np.linalg.eig, (a,), {})
    # Before NumPy 2.5 the eigenvalues are real where every one of the stack is.
    eig = lambda xp, x: _numpy_eig(xp, x, *xp.linalg.eig(x))  # noqa: E731
    return _EIG(*_square("eig", eig, a, each=False))


@implements(np.linalg.eigvals, spmd=True, one_device=True)
def _eigvals(a):
    a = _dist(a)
    if not hasattr(a.storage.backend.xp.linalg, "eigvals"):
        return _host(np.linalg.eigvals, (a,), {})
    eigvals = lambda xp, x: _numpy_eig(xp, x, xp.linalg.eigvals(x))[0]  # noqa: E731
    return _square("eigvals", eigvals, a, each=False)


@implements(np.linalg.solve, spmd=True, one_device=True)
def _solve(a, b):
    return _linalg.solve(a, b)


@implements(np.linalg.inv, spmd=True, one_device=True)
def _inv(a):
    return _linalg.inv(a)


@implements(np.linalg.det, spmd=True, one_device=True)
def _det(a):
    return _linalg.det(a)


@implements(np.linalg.slogdet, spmd=True, one_device=True)
def _slogdet(a):
    return _SLOGDET(*_linalg.slogdet(a))


@implements(np.linalg.matrix_power, spmd=True, one_device=True)
def _matrix_power(a, n):
    return _linalg.matrix_power(a, n)
