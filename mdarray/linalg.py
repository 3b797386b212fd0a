"""The array API's ``linalg`` extension: ``mdarray.linalg.inv(x)``, ``.vector_norm(x)``, ...

Each function takes DistArrays and returns DistArrays (named tuples of them for ``eigh``,
``qr``, ``slogdet`` and ``svd``). Products and norms run on the chunks; ``qr``, ``svd``,
``svdvals``, ``pinv`` and ``matrix_rank`` of a tall matrix split by rows run by TSQR
(`mdarray._ops.linalg.tsqr`); solves, inverses, determinants and eigenvalues gather whole matrices
onto one device, as fallbacks under the policy of `mdarray.options` (see
`mdarray._ops.linalg.linalg`).
"""

from types import FunctionType

import numpy as np

from ._namespace.groups import keeping_groups
from ._ops.linalg.linalg import (
    EighResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    cholesky,
    cross,
    det,
    diagonal,
    eigh,
    eigvalsh,
    inv,
    matmul,
    matrix_norm,
    matrix_power,
    matrix_rank,
    matrix_transpose,
    outer,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
    tensordot,
    trace,
    vecdot,
    vector_norm,
)

__all__ = [
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]

# Every function keeps its operands' device group (DESIGN: ``x[:5].device == x.device``).
globals().update(
    {
        name: keeping_groups(value, np.linalg)
        for name, value in globals().items()
        if name in __all__ and isinstance(value, FunctionType)
    }
)
