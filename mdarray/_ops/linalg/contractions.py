"""Contractions: `tensordot`, `dot`, `inner`, `vdot`, `outer` and `einsum`, native.

Each is written with native pieces: axes permuted (`permute_dims`, a view of each chunk),
axes merged or split (`reshape`, a view where the chunks allow, else a reshard), and one
`matmul`. What moves is what `matmul` moves: the blocks of the two operands are paired
per device, blocks that line up multiply where they are, and where the contracted axis is
split the result is a partial sum (SUM mode), combined only when a later op needs it. An
`einsum` is a chain of such products (a pair of operands at a time), with sums and
transposes; subscripts beyond them (a repeated index within an operand, an index of length one
broadcast, ``dtype=``) take the fallback policy, so they stay correct.
"""

from __future__ import annotations

import operator
import string

import numpy as np

from mdarray._array.array import DistArray
from mdarray._core.registry import implements
from mdarray._exec.chunkwise import write_out
from mdarray._ops.engine.fallback import fallback

from .linear_algebra_functions import _is_array

__all__: list[str] = []


def _operand(x):
    """`x` as an array: DistArrays, NumPy and CuPy arrays as they are, the rest NumPy's."""
    return x if isinstance(x, DistArray) or _is_array(x) else np.asarray(x)


def _any_distarray(arrays) -> bool:
    """Whether an operand is a DistArray (else only ``out=`` is, and NumPy computes)."""
    return any(isinstance(x, DistArray) for x in arrays)


def _prod(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _reshaped(x, shape: tuple):
    """`x` with `shape` (no call where it has it already: the reshape may reshard)."""
    return x if tuple(x.shape) == tuple(shape) else np.reshape(x, shape)


def _permuted(x, axes):
    axes = tuple(axes)
    return x if axes == tuple(range(x.ndim)) else np.transpose(x, axes)


# tensordot --------------------------------------------------------------------------


@implements(np.tensordot, spmd=True)
def tensordot(a, b, axes=2):
    """``np.tensordot(a, b, axes)``: the contracted axes of `a` permuted last and merged,
    those of `b` first, one `matmul` and the free axes split again. Moves what the
    `matmul` moves (nothing for blocks that line up; a SUM result where the contracted
    axes are split).

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.ones((2, 4)), mdarray.Layout.block((2, 4), axis=1))
    >>> np.tensordot(x, x, axes=([1], [1])).get()
    array([[4., 4.],
           [4., 4.]])
    """
    a, b = _operand(a), _operand(b)
    axes_a, axes_b = _tensordot_axes(axes)
    shape_a, shape_b = a.shape, b.shape
    if len(axes_a) != len(axes_b) or any(shape_a[i] != shape_b[j] for i, j in zip(axes_a, axes_b)):
        raise ValueError("shape-mismatch for sum")
    axes_a = [i + a.ndim if i < 0 else i for i in axes_a]
    axes_b = [j + b.ndim if j < 0 else j for j in axes_b]
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [j for j in range(b.ndim) if j not in axes_b]
    k = _prod([shape_a[i] for i in axes_a])
    left = _reshaped(_permuted(a, free_a + axes_a), (_prod([shape_a[i] for i in free_a]), k))
    right = _reshaped(_permuted(b, axes_b + free_b), (k, _prod([shape_b[j] for j in free_b])))
    product = np.matmul(left, right)
    return _reshaped(product, tuple(shape_a[i] for i in free_a) + tuple(shape_b[j] for j in free_b))


def _tensordot_axes(axes) -> tuple[list, list]:
    """NumPy's reading of tensordot's `axes`: an int n (the last n of `a` with the first
    n of `b`) or a pair of an axis or axes each."""
    try:
        iter(axes)
    except TypeError:
        n = operator.index(axes)
        return list(range(-n, 0)), list(range(n))
    axes_a, axes_b = axes
    return _axis_list(axes_a), _axis_list(axes_b)


def _axis_list(axes) -> list:
    try:
        return [operator.index(i) for i in axes]
    except TypeError:
        return [operator.index(axes)]


# dot, inner, vdot, outer ------------------------------------------------------------


@implements(np.dot, spmd=True)
def dot(a, b, out=None):
    """``np.dot(a, b, out=None)`` by NumPy's rules: a scalar operand multiplies; 1-D by
    1-D, 2-D by 2-D and N-D by 1-D are `matmul`; N-D by M-D contracts `a`'s last axis with
    `b`'s second-to-last (`tensordot`). Moves what the `matmul` moves.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.arange(6.0).reshape(2, 3))
    >>> np.dot(x, np.ones(3)).get()
    array([ 3., 12.])
    """
    if not isinstance(out, DistArray | None) or not _any_distarray((a, b)):
        return fallback(np.dot, (a, b), {"out": out}, "numpy.dot")
    a, b = _operand(a), _operand(b)
    if a.ndim == 0 or b.ndim == 0:
        result = np.multiply(a, b)
    else:
        k_b = -1 if b.ndim == 1 else -2
        if a.shape[-1] != b.shape[k_b]:
            raise ValueError(
                f"shapes {_shape_str(a.shape)} and {_shape_str(b.shape)} not aligned: "
                f"{a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[k_b]} (dim {b.ndim + k_b})"
            )
        if (b.ndim <= 2 and a.ndim <= 2) or b.ndim == 1:
            result = np.matmul(a, b)
        else:
            result = tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))
    if out is None:
        return result
    if out.dtype != result.dtype or out.shape != result.shape:
        raise ValueError(
            "output array is not acceptable (must have the right datatype, number of "
            "dimensions, and be a C-Array)"
        )
    return write_out(out, result, name="dot")


def _shape_str(shape: tuple) -> str:
    return str(tuple(shape))


@implements(np.inner, spmd=True)
def inner(a, b, /):
    """``np.inner(a, b)``: the last axes contracted (`tensordot`), a scalar operand
    multiplies. Moves what the `matmul` moves.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> np.inner(mdarray.asarray(np.arange(3.0)), np.ones(3)).get()
    array(3.)
    """
    a, b = _operand(a), _operand(b)
    if a.ndim == 0 or b.ndim == 0:
        return np.multiply(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"shapes {_shape_str(a.shape)} and {_shape_str(b.shape)} not aligned: "
            f"{a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[-1]} (dim {b.ndim - 1})"
        )
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


@implements(np.vdot, spmd=True)
def vdot(a, b, /):
    """``np.vdot(a, b)``: `a` conjugated, the flattened operands' dot product, a 0-d
    DistArray. Operands of one shape multiply elementwise and sum natively in the
    result's dtype (nothing moves for one layout; one partial per chunk); otherwise both
    are flattened (`reshape`, a reshard where the chunks are not runs of C order) for a
    1-D `matmul`.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([1j, 2.0]))
    >>> np.vdot(x, x).get()
    array(5.+0.j)
    """
    a, b = _operand(a), _operand(b)
    if a.size != b.size:
        raise ValueError("vectors have different lengths")
    if a.dtype.kind == "c":
        a = np.conjugate(a)
    if a.shape != b.shape:
        return np.matmul(np.reshape(a, (-1,)), np.reshape(b, (-1,)))
    dtype = np.result_type(a.dtype, b.dtype)
    products = np.multiply(a, b)
    if dtype.kind == "b":
        return np.any(products)
    return np.sum(products, dtype=dtype)


@implements(np.outer, spmd=True)
def outer(a, b, out=None):
    """``np.outer(a, b, out=None)``: both flattened, a column times a row, elementwise (the
    row travels to the column's chunks).

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> np.outer(mdarray.asarray(np.arange(2)), np.arange(3)).get()
    array([[0, 0, 0],
           [0, 1, 2]])
    """
    a, b = _operand(a), _operand(b)
    column = np.reshape(a, (-1, 1))
    row = np.reshape(b, (1, -1))
    return np.multiply(column, row) if out is None else np.multiply(column, row, out=out)


# einsum -----------------------------------------------------------------------------

_EINSUM_KWARGS = frozenset({"out", "optimize"})


@implements(np.einsum, spmd=True)
def einsum(*operands, out=None, **kwargs):
    """``np.einsum(subscripts, *operands, out=None, optimize=...)``: a transpose and sum of
    one operand, or for two a (batched) `matmul`: indices in both operands and the output
    are batch axes, in both only are contracted, in one and the output are free; more
    operands contract a pair at a time, left to right. Other
    subscripts take the fallback policy. As `matmul`: the blocks pair up per device and
    a split contracted index gives a partial sum, combined only when needed.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.arange(6.0).reshape(2, 3))
    >>> np.einsum("ij,ij->i", x, x).get(), np.einsum("ij->j", x).get()
    (array([ 5., 50.]), array([3., 5., 7.]))
    """
    subscripts, arrays = operands[0], operands[1:]
    parsed = _parse(subscripts, arrays) if not set(kwargs) - _EINSUM_KWARGS else None
    if parsed is None or not isinstance(out, DistArray | None) or not _any_distarray(arrays):
        call_kwargs = dict(kwargs, **({} if out is None else {"out": out}))
        return fallback(np.einsum, operands, call_kwargs, "numpy.einsum")
    inputs, output = parsed
    arrays = tuple(_operand(x) for x in arrays)
    result, index = arrays[0], inputs[0]
    for n in range(1, len(arrays)):
        # Left to right, a pair at a time, keeping the indices later operands or the
        # output still need.
        needed = set(output).union(*inputs[n + 1 :])
        joined = "".join(dict.fromkeys(index + inputs[n]))
        kept = "".join(c for c in joined if c in needed)
        result, index = _einsum_two((result, arrays[n]), (index, inputs[n]), kept), kept
    result = _einsum_one(result, index, output)
    if result is arrays[0]:
        result = np.transpose(result, tuple(range(result.ndim)))  # a view, as NumPy's
    return result if out is None else write_out(out, result, casting="safe", name="einsum")


def _parse(subscripts, arrays):
    """``(input index strings, output index string)`` for subscripts the native path
    takes, else None. An ellipsis becomes indices of unused letters (right-aligned, as
    NumPy broadcasts it; in implicit mode they lead the output)."""
    if not isinstance(subscripts, str) or not arrays:
        return None
    subscripts = subscripts.replace(" ", "")
    lhs, arrow, output = subscripts.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(arrays):
        return None
    ellipsis = ""
    if "." in subscripts:
        inputs, ellipsis = _expand_ellipsis(inputs, arrays, subscripts)
        if inputs is None or output.count(".") != 3 * ("..." in output):
            return None
        if arrow and ellipsis and "..." not in output:
            return None  # NumPy's own path decides what a dropped ellipsis means
        output = output.replace("...", ellipsis)
    if not arrow:
        joined = "".join(inputs)
        singles = (c for c in set(joined) if c not in ellipsis and joined.count(c) == 1)
        output = ellipsis + "".join(sorted(singles))
    if not all(c in string.ascii_letters for c in "".join(inputs) + output):
        return None
    sizes: dict = {}
    for index, x in zip(inputs, arrays):
        if len(set(index)) != len(index) or len(index) != np.ndim(x):
            return None
        for c, n in zip(index, np.shape(x)):
            if sizes.setdefault(c, n) != n:
                return None  # NumPy broadcasts a 1 here, or raises: its path decides
    if len(set(output)) != len(output) or not set(output) <= set(sizes):
        return None
    return inputs, output


def _expand_ellipsis(inputs, arrays, subscripts):
    """The input terms with ``...`` spelled as unused letters, and the letters of the
    longest ellipsis; ``(None, "")`` where a term cannot take it."""
    unused = [c for c in string.ascii_letters if c not in subscripts]
    counts = []
    for term, x in zip(inputs, arrays):
        if term.count(".") not in (0, 3) or (term.count(".") and "..." not in term):
            return None, ""
        count = np.ndim(x) - (len(term) - 3) if "..." in term else 0
        if count < 0:
            return None, ""
        counts.append(count)
    ellipsis = "".join(unused[: max(counts)])
    terms = [
        term.replace("...", ellipsis[len(ellipsis) - n :] if n else "")
        for term, n in zip(inputs, counts)
    ]
    return terms, ellipsis


def _einsum_one(x, index: str, output: str):
    """One operand: the indices missing from the output summed (in x's dtype, as einsum
    sums), then the axes permuted."""
    summed = tuple(t for t, c in enumerate(index) if c not in output)
    if summed:
        # einsum adds in the operands' dtype: booleans by ``or``, int8 wrapping.
        boolean = x.dtype.kind == "b"
        x = np.any(x, axis=summed) if boolean else np.sum(x, axis=summed, dtype=x.dtype)
        index = "".join(c for c in index if c in output)
    return _permuted(x, [index.index(c) for c in output])


def _einsum_two(arrays, inputs, output: str):
    """Two operands as one batched `matmul` of ``(batch..., free_a, k) @ (batch..., k,
    free_b)`` (free and contracted indices merged by `reshape`)."""
    (a, b), (index_a, index_b) = arrays, inputs
    dtype = np.result_type(a.dtype, b.dtype)
    # An index in one operand only and not in the output is a plain sum over it first.
    lone_a = "".join(c for c in index_a if c not in index_b and c not in output)
    lone_b = "".join(c for c in index_b if c not in index_a and c not in output)
    if lone_a:
        a = _einsum_one(a, index_a, "".join(c for c in index_a if c not in lone_a))
        index_a = "".join(c for c in index_a if c not in lone_a)
    if lone_b:
        b = _einsum_one(b, index_b, "".join(c for c in index_b if c not in lone_b))
        index_b = "".join(c for c in index_b if c not in lone_b)
    batch = [c for c in index_a if c in index_b and c in output]
    contracted = [c for c in index_a if c in index_b and c not in output]
    free_a = [c for c in index_a if c not in index_b]
    free_b = [c for c in index_b if c not in index_a]
    size = dict(zip(index_a, a.shape)) | dict(zip(index_b, b.shape))

    def merged(x, index, first, second):
        x = _permuted(x, [index.index(c) for c in batch + first + second])
        shape = (*(size[c] for c in batch), _prod([size[c] for c in first]))
        return _reshaped(x, (*shape, _prod([size[c] for c in second])))

    left = merged(a, index_a, free_a, contracted)
    right = merged(b, index_b, contracted, free_b)
    product = np.matmul(left, right)
    if product.dtype != dtype:
        product = product.astype(dtype)
    product = _reshaped(product, tuple(size[c] for c in batch + free_a + free_b))
    order = batch + free_a + free_b
    return _permuted(product, [order.index(c) for c in output])
