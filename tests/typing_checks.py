"""What a type checker sees of DistArray code (tests/test_api_docstrings.py runs mypy on
this file; it is not collected as tests, and never run)."""

from typing import assert_type

import numpy as np

import mdarray
import mdarray.fft
import mdarray.linalg
from mdarray import DistArray

x = mdarray.asarray(np.arange(6.0).reshape(2, 3))

assert_type(x + 1, DistArray)
assert_type(1 + x, DistArray)
assert_type(-x, DistArray)
assert_type(x < 2, DistArray)
assert_type(x @ x.T, DistArray)
assert_type(x[0], DistArray)
assert_type(x.T, DistArray)
assert_type(x.mT, DistArray)
assert_type(x.sum(), DistArray)
assert_type(x.mean(axis=0), DistArray)
assert_type(x.reshape(3, 2), DistArray)
assert_type(x.astype(np.float32), DistArray)
assert_type(x.change_mode("sum"), DistArray)
assert_type(x.reshard(x.layout), DistArray)
assert_type(x.nonzero(), tuple[DistArray, ...])
assert_type(x.get(), np.ndarray)
assert_type(x.shape, tuple[int, ...])
assert_type(x.mode, mdarray.Mode)
# The namespaces' names, each typed where it is defined: the elementwise functions...
assert_type(mdarray.sin(x), DistArray)
assert_type(mdarray.add(x, 1), DistArray)
assert_type(mdarray.pow(x, x), DistArray)
assert_type(mdarray.clip(x, 0, 1), DistArray)
assert_type(mdarray.round(x, 2), DistArray)
# ... NumPy's names, with NumPy's parameters ...
assert_type(mdarray.nanmean(x), DistArray)
assert_type(mdarray.cumsum(x, axis=0), DistArray)
assert_type(mdarray.allclose(x, x), bool)  # as NumPy: a Python bool
assert_type(mdarray.split(x, 2), list[DistArray])
# ... and the op modules' functions, through the wrapper that keeps device groups.
assert_type(mdarray.sum(x), DistArray)
assert_type(mdarray.asarray([1.0, 2.0]), DistArray)
assert_type(mdarray.zeros((2, 3)), DistArray)
assert_type(mdarray.reshape(x, (3, 2)), DistArray)
assert_type(mdarray.concat([x, x]), DistArray)
assert_type(mdarray.matmul(x, x.T), DistArray)
assert_type(mdarray.linalg.inv(x), DistArray)
assert_type(mdarray.linalg.qr(x).R, DistArray)
assert_type(mdarray.linalg.vector_norm(x), DistArray)
assert_type(mdarray.fft.fft(x), DistArray)
assert_type(mdarray.fft.fftfreq(4), DistArray)
assert_type(len(x), int)
assert_type(float(x[0]), float)
