"""The array API's ``linalg`` extension: ``mdarray.linalg.inv(x)``, ``.vector_norm(x)``, ...

Each function takes DistArrays and returns DistArrays (named tuples of them for ``eigh``,
``qr``, ``slogdet`` and ``svd``). Products and norms run on the chunks; ``qr``, ``svd``,
``svdvals``, ``pinv`` and ``matrix_rank`` of a tall matrix split by rows run by TSQR
(`mdarray._ops.linalg.tsqr`); solves, inverses, determinants and eigenvalues gather whole matrices
onto one device, as fallbacks under the policy of `mdarray.options` (see
`mdarray._ops.linalg.linalg`).
"""

import numpy as np

from ._namespace.groups import keeping_groups as _keeping_groups
from ._ops.linalg import linalg as _linalg, linear_algebra_functions as _products
from ._ops.linalg.linalg import EighResult, QRResult, SlogdetResult, SVDResult
from ._ops.shape import transposes as _transposes

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

# Each function wrapped once: its results keep its operands' device group (DESIGN:
# ``x[:5].device == x.device``), and in an SPMD run one without a multi-process
# implementation takes the fallback with its ``numpy.linalg`` twin (`_namespace.groups`).
# matmul, matrix_transpose, tensordot and vecdot are the main namespace's too, which
# imports them from here: one object each.
cholesky = _keeping_groups(_linalg.cholesky, np.linalg)
cross = _keeping_groups(_linalg.cross, np.linalg)
det = _keeping_groups(_linalg.det, np.linalg)
diagonal = _keeping_groups(_linalg.diagonal, np.linalg)
eigh = _keeping_groups(_linalg.eigh, np.linalg)
eigvalsh = _keeping_groups(_linalg.eigvalsh, np.linalg)
inv = _keeping_groups(_linalg.inv, np.linalg)
matmul = _keeping_groups(_products.matmul, np.linalg)
matrix_norm = _keeping_groups(_linalg.matrix_norm, np.linalg)
matrix_power = _keeping_groups(_linalg.matrix_power, np.linalg)
matrix_rank = _keeping_groups(_linalg.matrix_rank, np.linalg)
matrix_transpose = _keeping_groups(_transposes.matrix_transpose, np.linalg)
outer = _keeping_groups(_linalg.outer, np.linalg)
pinv = _keeping_groups(_linalg.pinv, np.linalg)
qr = _keeping_groups(_linalg.qr, np.linalg)
slogdet = _keeping_groups(_linalg.slogdet, np.linalg)
solve = _keeping_groups(_linalg.solve, np.linalg)
svd = _keeping_groups(_linalg.svd, np.linalg)
svdvals = _keeping_groups(_linalg.svdvals, np.linalg)
tensordot = _keeping_groups(_products.tensordot, np.linalg)
trace = _keeping_groups(_linalg.trace, np.linalg)
vecdot = _keeping_groups(_products.vecdot, np.linalg)
vector_norm = _keeping_groups(_linalg.vector_norm, np.linalg)
