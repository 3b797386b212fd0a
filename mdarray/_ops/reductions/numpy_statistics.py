"""NumPy's statistics beyond the array API: `average`, `ptp`, `cov` and `corrcoef`, native.

Each is NumPy's own formula over native ops: `average` is two sums (one partial per
chunk, combined into the small result), `ptp` the native ``max`` minus ``min``, and `cov`
mean-centres the observations (elementwise, no movement) and multiplies them by their
transpose with `matmul` (the blocks pairwise on their devices, a partial sum over the
split observations: only the small variables-by-variables result is combined).
`corrcoef` scales that result by its diagonal. Weighted `cov` (``fweights``,
``aweights``) takes the fallback policy.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from mdarray._array.array import DistArray, in_mode, wrap
from mdarray._core.constants import NO_VALUE
from mdarray._core.modes import REPLICA
from mdarray._core.registry import implements
from mdarray._exec.chunkwise import map_chunks
from mdarray._layouts.layout import Layout
from mdarray._ops.engine.fallback import as_distarrays, fallback
from mdarray._ops.linalg.contractions import _operand
from mdarray._runtime.config import warn
from mdarray._storage.chunks import Chunks

__all__: list[str] = []


def _keepdims(keepdims) -> dict:
    return {} if keepdims is NO_VALUE else {"keepdims": keepdims}


@implements(np.average, spmd=True)
def average(a, axis=None, weights=None, returned=False, *, keepdims=NO_VALUE):
    """``np.average``: ``sum(a * w) / sum(w)`` over `axis` (the mean without weights),
    NumPy's dtypes and errors; the sums are native reductions (one partial per chunk,
    combined into the small result).

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.arange(6.0).reshape(2, 3))
    >>> np.average(x, axis=1, weights=[1.0, 0.0, 1.0]).get()
    array([1., 4.])
    """
    a = _operand(a)
    if axis is not None:
        axis = normalize_axis_tuple(axis, a.ndim, argname="axis")
    kw = _keepdims(keepdims)
    if weights is None:
        avg = np.mean(a, axis=axis, **kw)
        scl = avg.dtype.type(a.size / avg.size)
    else:
        wgt = _weights(_operand(weights), a, axis)
        if issubclass(a.dtype.type, (np.integer, np.bool_)):
            result_dtype = np.result_type(a.dtype, wgt.dtype, "f8")
        else:
            result_dtype = np.result_type(a.dtype, wgt.dtype)
        scl = np.sum(wgt, axis=axis, dtype=result_dtype, **kw)
        if np.any(scl == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = np.sum(np.multiply(a, wgt, dtype=result_dtype), axis=axis, **kw) / scl
    if not returned:
        return avg
    if np.shape(scl) != avg.shape:
        scl = np.broadcast_to(scl, avg.shape).copy()
    template = avg if isinstance(avg, DistArray) else a
    return avg, scl if isinstance(scl, DistArray) else as_distarrays(np.asarray(scl), template)


def _weights(wgt, a, axis):
    """NumPy's checks of `weights`, and weights along `axis` set up to broadcast."""
    if a.shape != wgt.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if wgt.shape != tuple(a.shape[ax] for ax in axis):
            raise ValueError(
                "Shape of weights must be consistent with shape of a along specified axis."
            )
        wgt = np.transpose(wgt, tuple(int(i) for i in np.argsort(axis)))
        wgt = np.reshape(wgt, tuple((s if ax in axis else 1) for ax, s in enumerate(a.shape)))
    return wgt


@implements(np.ptp, spmd=True)
def ptp(a, axis=None, out=None, keepdims=NO_VALUE):
    """``np.ptp``: the native ``max`` minus the native ``min`` (one partial each per
    chunk, combined into the small result).

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> np.ptp(mdarray.asarray(np.array([[1, 5], [4, 2]])), axis=0).get()
    array([3, 3])
    """
    kw = _keepdims(keepdims)
    a = _operand(a)
    high, low = np.max(a, axis=axis, **kw), np.min(a, axis=axis, **kw)
    return np.subtract(high, low) if out is None else np.subtract(high, low, out=out)


@implements(np.cov, spmd=True)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """``np.cov`` of 1-D or 2-D variables: mean-centred, then ``X @ X.conj().T`` by the
    native `matmul` and scaled by ``1 / (N - ddof)``. Where the observations are split
    over the devices, each multiplies its own columns: only the small
    variables-by-variables partial results are combined.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> np.cov(mdarray.asarray(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))).get()
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    if fweights is not None or aweights is not None:
        kwargs = {"y": y, "rowvar": rowvar, "bias": bias, "ddof": ddof, "dtype": dtype}
        kwargs |= {"fweights": fweights, "aweights": aweights}
        return fallback(np.cov, (m,), kwargs, "numpy.cov")
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    m = _operand(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if y is not None:
        y = _operand(y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(m.dtype, np.float64)
        if y is not None:
            dtype = np.result_type(m.dtype, y.dtype, np.float64)
    x = _at_least_2d(m, dtype)
    if not rowvar and m.ndim != 1:
        x = np.transpose(x)
    if x.shape[0] == 0:
        template = m if isinstance(m, DistArray) else y
        return _empty((0, 0), np.float64, template)
    if y is not None:
        y2 = _at_least_2d(y, dtype)
        if not rowvar and y2.shape[0] != 1:
            y2 = np.transpose(y2)
        x = np.concatenate((x, y2), axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    fact = x.shape[1] - ddof
    if fact <= 0:
        warn("Degrees of freedom <= 0 for slice", RuntimeWarning)
        fact = 0.0
    # The mean as NumPy's: the total divided once (partial sums divided chunk by chunk
    # round otherwise, and a constant row must centre to exact zeros: corrcoef's NaN).
    total = np.sum(x, axis=1)
    if isinstance(total, DistArray):
        total = in_mode(total, REPLICA)
    x = np.subtract(x, np.expand_dims(total / x.shape[1], 1))
    c = np.matmul(x, np.conjugate(np.transpose(x)) if x.dtype.kind == "c" else np.transpose(x))
    scaled = np.multiply(c, np.true_divide(1, fact))
    if scaled.dtype != c.dtype:
        scaled = scaled.astype(c.dtype)
    return np.squeeze(scaled)


def _at_least_2d(x, dtype):
    """`x` as 2-D variables (a 1-D or 0-d `x` is one row) in `dtype`."""
    if x.dtype != dtype:
        x = x.astype(dtype)
    return x if x.ndim == 2 else np.reshape(x, (1,) * (2 - x.ndim) + x.shape)


def _empty(shape, dtype, template: DistArray) -> DistArray:
    layout = Layout.block(shape, devices=template.devices)
    return wrap(Chunks.full(layout, 0, dtype, template.storage.backend))


@implements(np.corrcoef, spmd=True)
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """``np.corrcoef``: `cov`, scaled by the square roots of its diagonal on both sides
    and clipped to [-1, 1] (the small result only).

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> np.corrcoef(mdarray.asarray(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))).get()
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim != 2:
        return c / c
    # The diagonal, as a masked sum (the identity's zeros add nothing).
    diagonal = np.sum(np.where(np.eye(c.shape[0], dtype=bool), c, 0), axis=1)
    stddev = np.sqrt(np.real(diagonal))
    c = c / np.expand_dims(stddev, 1)
    c = c / np.expand_dims(stddev, 0)
    if c.dtype.kind != "c":
        return np.clip(c, -1, 1)
    return _complex(np.clip(np.real(c), -1, 1), np.clip(np.imag(c), -1, 1), c.dtype)


def _complex(real: DistArray, imag: DistArray, dtype) -> DistArray:
    """The complex array of these parts, each written as it is (``real + 1j * imag``
    would turn a NaN imaginary part into a NaN real part)."""
    real, imag = (x.change_mode(REPLICA) if x.mode.is_partial else x for x in (real, imag))

    def assemble(r, i):
        out = real.storage.backend.xp.empty(r.shape, dtype)
        out.real[...] = r
        out.imag[...] = i
        return out

    return wrap(map_chunks(real, assemble, imag, dtype=np.dtype(dtype)))
