"""Linear algebra: matmul planned block by block, contractions, TSQR, ``linalg`` and ``numpy.linalg``, polynomials."""
