"""NumPy functions made of other distributed operations: flips and rotations, splits and
stacks along fixed axes, the elementwise predicates and repairs that are not ufuncs,
index helpers that need only a shape, and the 1-D set operations.

Each is NumPy's definition written with operations mdarray runs natively (slicing,
``flip``, ``transpose``, ``split``, ``concatenate``, ufuncs, ``unique``, ``isin``...), so it
moves only what those move, and its values, dtypes and errors are NumPy's. Functions whose
NumPy definition is a per-element formula with no ufunc (``sinc``, ``i0``, ``nan_to_num``)
run the backend's own namesake on each chunk.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from mdarray._array.array import DistArray, in_mode, wrap
from mdarray._core.modes import REPLICA
from mdarray._core.registry import implements
from mdarray._exec.chunkwise import write_out
from mdarray._ops.creation.creation_functions import asarray
from mdarray._ops.engine.fallback import fallback
from mdarray._runtime.config import warn

# Flips, rotations, axes -----------------------------------------------------------------


@implements(np.fliplr, spmd=True)
def _fliplr(m):
    """``numpy.fliplr``: a view with axis 1 reversed."""
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return m[:, ::-1]


@implements(np.flipud, spmd=True)
def _flipud(m):
    """``numpy.flipud``: a view with axis 0 reversed."""
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return m[::-1, ...]


@implements(np.rot90, spmd=True)
def _rot90(m, k=1, axes=(0, 1)):
    """``numpy.rot90``: a quarter turn is a flip of the second axis, then the two axes
    swapped; two turns flip both; three swap, then flip."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    first, second = axes
    if first == second or abs(first - second) == m.ndim:
        raise ValueError("Axes must be different.")
    if not (-m.ndim <= first < m.ndim and -m.ndim <= second < m.ndim):
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    turns = operator.index(k) % 4
    if turns == 0:
        return m[...]
    if turns == 2:
        return np.flip(np.flip(m, first), second)
    order = list(range(m.ndim))
    order[first], order[second] = order[second], order[first]
    if turns == 1:
        return np.transpose(np.flip(m, second), order)
    return np.flip(np.transpose(m, order), second)


@implements(np.rollaxis, spmd=True)
def _rollaxis(a, axis, start=0):
    """``numpy.rollaxis``: `axis` moved to just before position `start`."""
    n = a.ndim
    axis = np.lib.array_utils.normalize_axis_index(axis, n)
    if not -n <= start <= n:
        raise np.exceptions.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, got {start}")
    start = start + n if start < 0 else start
    start = start - 1 if axis < start else start
    if axis == start:
        return a[...]
    order = [k for k in range(n) if k != axis]
    order.insert(start, axis)
    return np.transpose(a, order)


# Splits and stacks along a fixed axis --------------------------------------------------------


@implements(np.hsplit, spmd=True)
def _hsplit(ary, indices_or_sections):
    """``numpy.hsplit``: `split` along axis 1 (axis 0 of a 1-D array)."""
    if np.ndim(ary) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return np.split(ary, indices_or_sections, 1 if np.ndim(ary) > 1 else 0)


@implements(np.vsplit, spmd=True)
def _vsplit(ary, indices_or_sections):
    """``numpy.vsplit``: `split` along axis 0 of an array of 2 or more dimensions."""
    if np.ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return np.split(ary, indices_or_sections, 0)


@implements(np.dsplit, spmd=True)
def _dsplit(ary, indices_or_sections):
    """``numpy.dsplit``: `split` along axis 2 of an array of 3 or more dimensions."""
    if np.ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return np.split(ary, indices_or_sections, 2)


@implements(np.dstack, spmd=True)
def _dstack(tup):
    """``numpy.dstack``: the arrays made 3-D, joined along axis 2."""
    arrays = np.atleast_3d(*tup)
    return np.concatenate(arrays if isinstance(arrays, (list, tuple)) else [arrays], axis=2)


@implements(np.append, spmd=True)
def _append(arr, values, axis=None):
    """``numpy.append``: `values` joined after `arr` (both flattened without `axis`)."""
    if axis is None:
        arr = np.ravel(arr)
        values = np.ravel(values)
        axis = arr.ndim - 1
    return np.concatenate((arr, values), axis=axis)


@implements(np.diagflat, spmd=True)
def _diagflat(v, k=0):
    """``numpy.diagflat``: the flattened input on diagonal `k` of a square array."""
    return np.diag(np.ravel(v), k)


# Elementwise predicates and repairs -------------------------------------------------------------


@implements(np.angle, spmd=True)
def _angle(z, deg=False):
    """``numpy.angle``: ``arctan2(imag, real)``, in degrees with `deg`."""
    out = np.arctan2(np.imag(z), np.real(z)) if np.iscomplexobj(z) else np.arctan2(0, z)
    return out * (180 / np.pi) if deg else out


def _deprecation_of(call) -> str:
    """The message of the DeprecationWarning that NumPy's ``call()`` gives, or ''."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return next((str(w.message) for w in caught if w.category is DeprecationWarning), "")


_FIX_DEPRECATED = _deprecation_of(lambda: np.fix(np.zeros(1)))


@implements(np.fix, spmd=True)
def _fix(x, out=None):
    """``numpy.fix``: rounded toward zero (floor of the non-negative, ceil of the rest).
    Deprecated where NumPy's is (2.5), with NumPy's warning."""
    if _FIX_DEPRECATED:
        warn(_FIX_DEPRECATED, DeprecationWarning)
    result = np.where(x >= 0, np.floor(x), np.ceil(x))
    return result if out is None else write_out(out, result)


def _complex_refused(x) -> None:
    if np.iscomplexobj(x):
        raise TypeError(
            "This operation is not supported for complex values because it would be ambiguous."
        )


@implements(np.isposinf, spmd=True)
def _isposinf(x, out=None):
    """``numpy.isposinf``: infinite with the sign bit clear."""
    _complex_refused(x)
    result = np.logical_and(np.isinf(x), np.logical_not(np.signbit(x)))
    return result if out is None else write_out(out, result)


@implements(np.isneginf, spmd=True)
def _isneginf(x, out=None):
    """``numpy.isneginf``: infinite with the sign bit set."""
    _complex_refused(x)
    result = np.logical_and(np.isinf(x), np.signbit(x))
    return result if out is None else write_out(out, result)


@implements(np.iscomplex, spmd=True)
def _iscomplex(x):
    """``numpy.iscomplex``: a nonzero imaginary part (all False for real dtypes)."""
    if np.iscomplexobj(x):
        return np.imag(x) != 0
    return np.zeros_like(x, dtype=bool)


@implements(np.isreal, spmd=True)
def _isreal(x):
    """``numpy.isreal``: a zero imaginary part."""
    return np.imag(x) == 0


def _namesake(name: str, x: DistArray, dtype, **kwargs) -> DistArray:
    """The backend's `name` (NumPy's or CuPy's) on each chunk of REPLICA `x`, each chunk
    first cast to the result's `dtype` (CuPy computes ``i0`` of uint8 in float16, NumPy in
    float64)."""
    x = in_mode(x, REPLICA)
    dtype = np.dtype(dtype)
    function = getattr(x.storage.backend.xp, name)
    return wrap(
        x.storage.map(lambda c: function(c.astype(dtype, copy=False), **kwargs), dtype=dtype)
    )


def _dtype_of(name: str, dtype, **kwargs) -> np.dtype:
    return getattr(np, name)(np.zeros(1, dtype), **kwargs).dtype


@implements(np.sinc, spmd=True)
def _sinc(x):
    """``numpy.sinc`` (``sin(pi x) / (pi x)``), by the backend's kernel on each chunk;
    NaN where `x` is (CuPy's kernel gives 1 there)."""
    if x.dtype.kind != "f":
        return _namesake("sinc", x, _dtype_of("sinc", x.dtype))
    x = in_mode(x, REPLICA)
    xp = x.storage.backend.xp
    return wrap(x.storage.map(lambda c: xp.where(xp.isnan(c), c, xp.sinc(c)), dtype=x.dtype))


@implements(np.i0, spmd=True)
def _i0(x):
    """``numpy.i0``, the modified Bessel function of order 0, on each chunk."""
    if np.iscomplexobj(x):
        raise TypeError("i0 not supported for complex values")
    result = _namesake("i0", x, _dtype_of("i0", x.dtype))
    # NumPy's series gives NaN at +-inf (inf / inf); CuPy's kernel gives inf.
    return np.where(np.isinf(x), np.nan, result) if x.dtype.kind == "f" else result


@implements(np.nan_to_num, spmd=True)
def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``numpy.nan_to_num`` on each chunk; with ``copy=False`` written back into `x`."""
    if not isinstance(x, DistArray):
        return np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    values = {"nan": nan, "posinf": posinf, "neginf": neginf}
    result = _namesake("nan_to_num", x, x.dtype, copy=True, **values)
    if copy:
        return result
    x[...] = result
    return x


# Index helpers that need only a shape -------------------------------------------------------


def _indices_from(arr, name: str, *args):
    """NumPy's ``{name}(n, *args, m)`` for `arr`'s shape, as DistArrays beside `arr`."""
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    rows, cols = getattr(np, name)(arr.shape[-2], *args, arr.shape[-1])
    return tuple(_beside(arr, index) for index in (rows, cols))


def _beside(arr, host: np.ndarray) -> DistArray:
    """`host` as a DistArray over `arr`'s device group."""
    return asarray(host, device=arr.device)


@implements(np.tril_indices_from, spmd=True)
def _tril_indices_from(arr, k=0):
    """``numpy.tril_indices_from``: computed from the shape alone; nothing moves."""
    return _indices_from(arr, "tril_indices", k)


@implements(np.triu_indices_from, spmd=True)
def _triu_indices_from(arr, k=0):
    """``numpy.triu_indices_from``: computed from the shape alone; nothing moves."""
    return _indices_from(arr, "triu_indices", k)


@implements(np.diag_indices_from, spmd=True)
def _diag_indices_from(arr):
    """``numpy.diag_indices_from``: computed from the shape alone; nothing moves."""
    if arr.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(arr.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    index = _beside(arr, np.arange(arr.shape[0]))
    return (index,) * arr.ndim


@implements(np.common_type, spmd=True)
def _common_type(*arrays):
    """``numpy.common_type``: from the dtypes alone."""
    return np.common_type(*(np.empty(0, a.dtype) for a in arrays))


@implements(np.min_scalar_type, spmd=True)
def _min_scalar_type(a, /):
    """``numpy.min_scalar_type``: an array of one or more axes keeps its dtype (NumPy
    reads no values of it); a 0-d array's one value is read."""
    if a.ndim:
        return a.dtype
    return np.min_scalar_type(a.get())


@implements(np.flatnonzero, spmd=True)
def _flatnonzero(a):
    """``numpy.flatnonzero``: the positions of the nonzero elements of the flattened array."""
    return np.nonzero(np.ravel(a))[0]


@implements(np.ediff1d, spmd=True)
def _ediff1d(ary, to_end=None, to_begin=None):
    """``numpy.ediff1d``: differences of the flattened array, with `to_begin` before and
    `to_end` after (cast to its dtype under the same_kind rule, as NumPy requires)."""
    ary = np.ravel(ary)
    differences = ary[1:] - ary[:-1]
    parts: list[np.ndarray | None] = []
    for name, extra in (("to_begin", to_begin), ("to_end", to_end)):
        if extra is None:
            parts.append(None)
            continue
        host = extra.get() if isinstance(extra, DistArray) else np.asanyarray(extra)
        if not np.can_cast(host, ary.dtype, casting="same_kind"):
            raise TypeError(
                f"dtype of `{name}` must be compatible with input `ary` under the `same_kind` rule."
            )
        parts.append(host.astype(ary.dtype, copy=False).ravel())
    if parts[0] is None and parts[1] is None:
        return differences
    pieces = [p for p in (parts[0], differences, parts[1]) if p is not None]
    return np.concatenate([_beside(ary, p) if isinstance(p, np.ndarray) else p for p in pieces])


# Sets of 1-D values ------------------------------------------------------------------------


@implements(np.union1d, spmd=True)
def _union1d(ar1, ar2):
    """``numpy.union1d``: the sorted unique values of both."""
    return np.unique(np.concatenate((np.ravel(ar1), np.ravel(ar2))))


@implements(np.setdiff1d, spmd=True)
def _setdiff1d(ar1, ar2, assume_unique=False):
    """``numpy.setdiff1d``: the values of `ar1` not in `ar2` (sorted and unique unless
    `assume_unique`)."""
    values = np.ravel(ar1) if assume_unique else np.unique(ar1)
    return values[np.isin(values, ar2, assume_unique=assume_unique, invert=True)]


@implements(np.intersect1d, spmd=True)
def _intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """``numpy.intersect1d``: the sorted values in both (indices of first occurrences with
    `return_indices`)."""
    if return_indices:
        args = {"assume_unique": assume_unique, "return_indices": True}
        return fallback(np.intersect1d, (ar1, ar2), args, "numpy.intersect1d")
    first = np.ravel(ar1) if assume_unique else np.unique(ar1)
    second = np.ravel(ar2) if assume_unique else np.unique(ar2)
    both = np.sort(np.concatenate((first, second)))
    if both.size == 0:
        return both
    return both[:-1][both[1:] == both[:-1]]


@implements(np.setxor1d, spmd=True)
def _setxor1d(ar1, ar2, assume_unique=False):
    """``numpy.setxor1d``: the sorted values in exactly one of the two."""
    first = np.ravel(ar1) if assume_unique else np.unique(ar1)
    second = np.ravel(ar2) if assume_unique else np.unique(ar2)
    both = np.sort(np.concatenate((first, second)))
    if both.size == 0:
        return both
    edges = np.concatenate(
        (_beside(both, np.array([True])), both[1:] != both[:-1], _beside(both, np.array([True])))
    )
    return both[edges[1:] & edges[:-1]]


@implements(np.sort_complex, spmd=True)
def _sort_complex(a):
    """``numpy.sort_complex``: sorted along the last axis, as complex (complex64 for the
    small integers, clongdouble for longdouble, else complex128)."""
    values = np.sort(a)
    if np.iscomplexobj(values):
        return values
    kind = {"b": np.complex64, "B": np.complex64, "h": np.complex64, "H": np.complex64}
    return values.astype(
        kind.get(values.dtype.char, np.clongdouble if values.dtype.char == "g" else np.complex128)
    )


# Polynomials, integration, selection, reshaping --------------------------------------------


@implements(np.vander, spmd=True)
def _vander(x, N=None, increasing=False):
    """``numpy.vander``: columns of powers of `x`, by running products (NumPy's own order
    of multiplications, so the same roundings)."""
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = x.shape[0] if N is None else operator.index(N)
    dtype = np.promote_types(x.dtype, int)
    column = x.astype(dtype)[:, None]
    if n <= 1:
        ones = np.ones_like(column, dtype=dtype)
        return ones[:, :n]
    powers = np.cumprod(np.repeat(column, n - 1, axis=1), axis=1)
    table = np.concatenate((np.ones_like(column, dtype=dtype), powers), axis=1)
    return table if increasing else table[:, ::-1]


@implements(np.polyval, spmd=True)
def _polyval(p, x):
    """``numpy.polyval``: Horner's rule, one multiply-add per coefficient."""
    coefficients = p if isinstance(p, DistArray) else np.asarray(p)
    y = np.zeros_like(x)
    for k in range(len(coefficients)):
        y = y * x + coefficients[k]
    return y if isinstance(y, DistArray) else _beside(p, np.asarray(y))


@implements(np.trapezoid, spmd=True)
def _trapezoid(y, x=None, dx=1.0, axis=-1):
    """``numpy.trapezoid``: the trapezoidal rule along `axis`."""
    axis = np.lib.array_utils.normalize_axis_index(axis, y.ndim)
    before = (slice(None),) * axis
    if x is None:
        step = dx
    else:
        step = np.diff(x, axis=-1 if np.ndim(x) == 1 else axis)
        if np.ndim(x) == 1:
            step = np.reshape(step, (-1,) + (1,) * (y.ndim - 1 - axis))
    return np.sum(
        step * (y[(*before, slice(1, None))] + y[(*before, slice(None, -1))]) / 2.0, axis=axis
    )


@implements(np.select, spmd=True)
def _select(condlist, choicelist, default=0):
    """``numpy.select``: from the last condition to the first, `where` it holds its choice;
    `default` elsewhere."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    choices = [_operand(c) for c in choicelist]
    conditions = [c if isinstance(c, DistArray) else np.asarray(c) for c in condlist]
    fill = _operand(default)
    try:  # Python scalars count as weak, as in NumPy's own
        dtype = np.result_type(*(getattr(c, "dtype", c) for c in (*choices, fill)))
    except TypeError as error:
        raise TypeError("Choicelist elements do not have a common dtype") from error
    for k, condition in enumerate(conditions):
        if condition.dtype != np.bool_:
            raise TypeError(f"invalid entry {k} in condlist: should be boolean ndarray")
    result = fill
    for condition, choice in zip(conditions[::-1], choices[::-1]):
        result = np.where(condition, choice, result)
    if not isinstance(result, DistArray):  # every operand on the host: no DistArray to follow
        return fallback(np.select, (condlist, choicelist), {"default": default}, "numpy.select")
    return result.astype(dtype, copy=False)


def _operand(value):
    """A DistArray or a Python scalar as it is; anything else as NumPy makes it."""
    if isinstance(value, (DistArray, bool, int, float, complex)):
        return value
    return np.asarray(value)


@implements(np.einsum_path, spmd=True)
def _einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    """``numpy.einsum_path``: it reads only shapes and dtypes, so zero-strided stand-ins
    of the operands' shapes (no memory, no data moved)."""
    stand_ins = [
        np.broadcast_to(np.zeros((), o.dtype), o.shape) if isinstance(o, DistArray) else o
        for o in operands
    ]
    return np.einsum_path(subscripts, *stand_ins, optimize=optimize, einsum_call=einsum_call)


@implements(np.resize, spmd=True)
def _resize(a, new_shape):
    """``numpy.resize``: the flattened array repeated to fill `new_shape`."""
    shape = (operator.index(new_shape),) if np.ndim(new_shape) == 0 else tuple(new_shape)
    if any(n < 0 for n in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    flat = np.ravel(a)
    size = int(np.prod(shape, dtype=np.int64))
    if flat.size == 0 or size == 0:
        return np.zeros_like(flat, shape=shape)
    repeats = -(-size // flat.size)
    return np.reshape(np.tile(flat, repeats)[:size], shape)


@implements(np.ix_, spmd=True)
def _ix(*args):
    """``numpy.ix_``: each 1-D sequence as an open mesh axis (booleans by their positions)."""
    out = []
    for k, arg in enumerate(args):
        values = arg if isinstance(arg, DistArray) else np.asarray(arg)
        if values.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if values.size == 0 and not isinstance(values, DistArray):
            values = values.astype(np.intp)
        if np.issubdtype(values.dtype, np.bool_):
            values = np.nonzero(values)[0]
        shape = [1] * len(args)
        shape[k] = values.shape[0]
        out.append(np.reshape(values, shape))
    return tuple(out)
