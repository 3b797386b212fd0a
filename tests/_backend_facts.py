"""Where the cuda backend's kernels (CuPy) differ from NumPy by design, for the tests."""

import numpy as np

import mdarray

ON_CUDA = mdarray.default_backend() == "cuda"


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
