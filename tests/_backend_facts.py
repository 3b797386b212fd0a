"""Where the cuda backend's kernels (CuPy) differ from NumPy by design, for the tests."""

import numpy as np
import pytest

import mdarray

ON_CUDA = mdarray.default_backend() == "cuda"
#: The marks of a module of cuda backend tests: skipped unless the default backend is cuda
#: (``MDARRAY_BACKEND=cuda`` on a GPU machine).
CUDA_ONLY = [
    pytest.mark.cuda,
    pytest.mark.skipif(not ON_CUDA, reason="needs MDARRAY_BACKEND=cuda and a GPU"),
]


def raised_by_backend(error: Exception) -> bool:
    """Whether mdarray raises `error` (NumPy's, for the same call) on this backend.

    NumPy looks at the values to refuse integers to negative integer powers; CuPy's
    kernels do not check values (that would cost a host synchronization per call)."""
    return not (
        ON_CUDA and isinstance(error, ValueError) and "negative integer powers" in str(error)
    )


def ulps(dtype) -> dict:
    """Tolerances for comparing a result of `dtype` with NumPy's: exact on the cpu backend
    (it runs NumPy), a few units in the last place on CUDA (CuPy's math library rounds
    transcendental functions differently)."""
    dtype = np.dtype(dtype)
    if not ON_CUDA or dtype.kind not in "fc":
        return {"rtol": 0, "atol": 0}
    eps = float(np.finfo(dtype).eps)
    return {"rtol": 8 * eps, "atol": 8 * eps}


# Inputs where CuPy's kernels differ from NumPy's by design, per ufunc: integer 1/0 is
# undefined in C (NumPy gives INT_MIN, CuPy 0); the complex logs of 0 are -inf+0j in NumPy
# and -inf+nanj in CuPy.
_ZERO_DIFFERS = {
    np.reciprocal: "iu",
    np.log: "c",
    np.log2: "c",
    np.log10: "c",
}


def without_kernel_differences(ufunc, values: list) -> list:
    """On CUDA, `values` with 1 where an input of 0 would meet such a difference (each
    value with no such 0 kept as it is: the same object)."""
    kinds = _ZERO_DIFFERS.get(ufunc, "")
    if not ON_CUDA or not kinds:
        return values
    return [_no_zero(v) if np.asarray(v).dtype.kind in kinds else v for v in values]


def _no_zero(v):
    a = np.asarray(v)
    return np.where(a == 0, 1, a).astype(a.dtype) if np.any(a == 0) else v


#: For tests of dtypes CuPy's arrays cannot hold (objects, strings, times, structures
#: whose fields are not aligned): on the cuda backend such an array is refused when made,
#: with CuPy's "Unsupported dtype" error.
numpy_dtypes_only = pytest.mark.skipif(
    ON_CUDA, reason="CuPy holds no object, string, time or unaligned structured arrays"
)
