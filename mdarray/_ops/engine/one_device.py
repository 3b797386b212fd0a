"""Linear algebra on one device: operations that need whole matrices (a general solve,
an inverse, eigenvalues, determinants, factorizations of wide matrices or of stacks).

`on_one_device` runs on one device, not the host: the first device of the first
DistArray operand that holds every DistArray operand whole, each in one chunk (a REPLICA
copy, or a partial copy of a reduction such as ``x.T @ x``'s, combined there as
`change_mode` combines it, `_redistribute.region_value`); such a call gathers nothing.
Where no device does, the operands are gathered onto the first operand's first device,
every chunk not already there moving once; where pieces move from other devices that is
a fallback under the policy of `mdarray.options`, as gathering to the host is:
``"raise"`` raises TypeError, ``"warn"`` warns with `PerformanceWarning` naming the
function, and operands above ``fallback_limit`` bytes are not gathered. There the
backend's own ``linalg`` runs (NumPy on the cpu backend's virtual devices, CuPy on a
GPU), and the results stay there as DistArrays held by that one device. The docs' table
marks these functions "one device" (`_registry.ONE_DEVICE`). In an SPMD run the device's
process computes (a failure there raises on every process) and sends the others the
results' shapes and dtypes: they hold them as another process's chunks.

The device functions here keep NumPy's semantics on either array module where the two
differ (``solve``'s vector rule and broadcasting, ``cholesky(upper=True)``, ``pinv``,
``matrix_rank`` and ``lstsq`` written on the module's SVD). Errors are NumPy's where
NumPy computes (the cpu backend), and checked shapes raise NumPy's errors before anything
moves; a singular or indefinite matrix raises `numpy.linalg.LinAlgError` on either
backend (`Backend.linalg_errors`: CuPy's solvers are asked to check their status).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from mdarray._array.array import DistArray, wrap
from mdarray._backends.backend import Backend
from mdarray._core import regions as _regions
from mdarray._core.modes import REPLICA
from mdarray._exec.chunkwise import aligned
from mdarray._exec.operands import as_operand
from mdarray._layouts.layout import Layout
from mdarray._movement import redistribute as _redistribute
from mdarray._movement.collectives import agreeing, from_owner, several
from mdarray._runtime.config import check_fallback
from mdarray._storage import local as _this_process
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import placed

LinAlgError = np.linalg.LinAlgError


def on_one_device(name: str, compute: Callable[..., Any], *operands: Any) -> Any:
    """``compute(xp, *arrays)`` run on one device, with every operand there (DistArrays
    taken whole where the device holds them so, else gathered under the fallback policy;
    NumPy and CuPy arrays copied, anything else as it is); array results come back
    DistArrays on that device (tuples keep their type)."""
    arrays = [x for x in operands if isinstance(x, DistArray)]
    first = arrays[0]
    backend = first.storage.backend
    device = _holding_whole(arrays)
    if device is None:
        device = first.layout.devices[0]
        if any(x.layout.devices != (device,) for x in arrays):  # pieces move onto it
            check_fallback(
                name,
                sum(x.nbytes for x in arrays),
                f"gathered onto device {device} and computed there (the result stays there)",
            )
    values = [_onto(x, device, backend) for x in operands]
    result = None
    computed = False
    # In an SPMD run the device's process computes: a failure there (a singular matrix)
    # raises on every process, and the others learn the results' shapes and dtypes.
    with agreeing(True):
        for _, held in _this_process.mine((device,)):
            with backend.on(held), backend.linalg_errors():
                result = compute(backend.xp, *values)
            computed = True
    if several():
        outline = from_owner(device, _outline(result, backend) if computed else None)
        result = result if computed else outline
    return _results(result, device, backend)


def on_each_matrix(name: str, compute: Callable[..., Any], x: DistArray, *others: Any) -> Any:
    """``compute(xp, x, *others)`` for a `compute` that maps each matrix of a stack on its
    own (``det``, ``inv``, ``eigh``, ``solve`` ...). Where `x` is a REPLICA stack whose
    chunks keep its matrices whole (split along the stack's axes only) each device
    computes its own chunks' matrices, with the pieces of `others` (stacks whose last two
    axes, or a vector, go whole with each matrix; their stack axes broadcast against
    x's, no wider) brought beside them, and each result lies as x's stack does (its
    trailing axes whole); else `on_one_device`."""
    layout = x.layout
    matrix = x.shape[-2:]
    batch = x.shape[:-2]
    if x.ndim < 3 or x.mode is not REPLICA or any(s[-2:] != matrix for s in layout.chunk_shapes):
        return on_one_device(name, compute, x, *others)
    backend = x.storage.backend
    columns = []
    for other in others:
        shape = tuple(np.shape(other))
        core = shape[-2:] if len(shape) >= 2 else shape
        beside = (*batch, *core)
        if np.broadcast_shapes(shape, beside) != beside:  # its stack is the wider
            return on_one_device(name, compute, x, *others)
        columns.append(aligned(other, _beside(layout, core), backend))
    results: list = [None] * len(layout.chunks)
    empty = []  # chunks of no matrix (CuPy's solvers may refuse an empty stack)
    with agreeing(True):
        for k, device, chunk in _this_process.local_chunks(x.storage):
            if 0 in chunk.shape[:-2]:  # (matrices of size 0 are matrices: det gives 1)
                empty.append((k, device))
                continue
            with backend.on(device), backend.linalg_errors():
                result = compute(backend.xp, chunk, *(column[k] for column in columns))
                results[k] = _in_c_order(result, backend.xp)
    # The results' trailing shapes and dtypes, where this process computed no chunk:
    # those of an empty stack of such matrices.
    sample = next((r for r in results if r is not None), None)
    if sample is None:
        none = (0,) * len(batch)  # x's stack axes, of no matrix
        stand_ins = [
            np.empty((*none, *np.shape(o)[-2:]) if np.ndim(o) >= 2 else np.shape(o), _dtype(o))
            for o in others
        ]
        sample = compute(np, np.empty((*none, *matrix), x.dtype), *stand_ins)
    outputs = list(sample) if isinstance(sample, tuple) else [sample]
    laid = []
    for j, first in enumerate(outputs):
        out_layout = _beside(layout, tuple(first.shape[x.ndim - 2 :]))
        arrays = [r if r is None or not isinstance(r, tuple) else r[j] for r in results]
        for k, device in empty:
            arrays[k] = backend.empty(out_layout.chunk_shapes[k], first.dtype, device)
        held = placed(arrays, out_layout.chunk_shapes, layout.chunk_devices, first.dtype)
        laid.append(wrap(Chunks.of(out_layout, held, backend, np.dtype(first.dtype))))
    return _like(sample, laid) if isinstance(sample, tuple) else laid[0]


def _beside(layout: Layout, core: tuple) -> Layout:
    """The layout of a stack of `core`-shaped items with `layout`'s stack axes: each
    chunk's stack ranges, its items whole."""
    index_map: dict = {}
    for device, index in layout.chunks:
        index_map.setdefault(device, []).append((*index[:-2], *(slice(0, n) for n in core)))
    return Layout((*layout.shape[:-2], *core), index_map)


def _dtype(x) -> np.dtype:
    return x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype


def _like(result: tuple, items: list) -> tuple:
    """`items` as a tuple of `result`'s type (a named tuple's fields kept)."""
    return type(result)(*items) if hasattr(result, "_fields") else tuple(items)


def _in_c_order(result, xp):
    """`result` (an array or a tuple of arrays) with each array in C order."""
    if isinstance(result, tuple):
        return _like(result, [_in_c_order(r, xp) for r in result])
    return result if result.flags.c_contiguous else xp.ascontiguousarray(result)


def _holding_whole(arrays: list[DistArray]) -> int | None:
    """The first device that holds each of `arrays` whole, in one chunk (a REPLICA copy,
    or a partial copy of a reduction, which is combined there as `change_mode` combines
    it), or None. There the computation gathers nothing."""
    holders = [_whole_devices(x.layout) for x in arrays]
    return next((d for d in arrays[0].layout.devices if all(d in h for h in holders)), None)


def _whole_devices(layout: Layout) -> set[int]:
    shape = layout.shape
    return {d for d, s in zip(layout.chunk_devices, layout.chunk_shapes) if s == shape}


class _Held(NamedTuple):
    """An array result held by another process's device: its shape and dtype."""

    shape: tuple
    dtype: np.dtype


def _outline(result, backend: Backend):
    """`result` with its arrays as `_Held` (sent to the other processes)."""
    if isinstance(result, tuple):
        return _like(result, [_outline(r, backend) for r in result])
    if isinstance(result, (np.ndarray, np.generic)) or backend.is_native(result):
        return _Held(tuple(result.shape), np.dtype(result.dtype))
    return result


def _onto(x, device: int, backend: Backend):
    if isinstance(x, DistArray):
        box = _regions.full_box(x.shape)
        return _redistribute.region_value(x.storage, x.mode, box, device)
    if isinstance(x, np.ndarray):
        return backend.from_host(x, device)
    if backend.is_native(x):
        return backend.adopt(x, device)
    operand = as_operand(x)  # a nested list: the NumPy array NumPy makes of it
    return x if operand is x else _onto(operand, device, backend)


def _results(result, device: int, backend: Backend):
    if isinstance(result, _Held):  # before tuples: it is a named tuple
        layout = Layout.replicated(result.shape, devices=[device])
        held = placed([None], (result.shape,), (device,), result.dtype)
        return wrap(Chunks.of(layout, held, backend, result.dtype))
    if isinstance(result, tuple):
        return _like(result, [_results(r, device, backend) for r in result])
    if isinstance(result, np.generic):
        result = np.asarray(result)
    if isinstance(result, np.ndarray) or backend.is_native(result):
        if not result.flags.c_contiguous:  # 0-d arrays are
            with backend.on(device):
                result = backend.xp.ascontiguousarray(result)
        layout = Layout.replicated(result.shape, devices=[device])
        return wrap(Chunks.of(layout, [result], backend, result.dtype))
    return result


# NumPy's checks, on shapes alone (before anything moves) --------------------------------


def check_square(x, name: str = "") -> None:
    """NumPy's errors for an operand that is not a stack of square matrices."""
    shape = np.shape(x)
    if len(shape) < 2:
        raise LinAlgError(
            f"{len(shape)}-dimensional array given. Array must be at least two-dimensional"
        )
    if shape[-1] != shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")


def check_solve(a, b) -> None:
    """NumPy's errors for ``solve(a, b)``: `a` square, `b` a vector (1-D) or a stack of
    matrices with as many rows, batch axes broadcasting."""
    check_square(a)
    a_shape, b_shape = np.shape(a), np.shape(b)
    n = a_shape[-1]
    rows = b_shape[0] if len(b_shape) == 1 else b_shape[-2] if len(b_shape) >= 2 else None
    if rows != n:
        raise ValueError(
            "solve: Input operand 1 has a mismatch in its core dimension 0 "
            f"(size {rows} is different from {n})"
        )
    if len(b_shape) >= 2:
        np.broadcast_shapes(a_shape[:-2], b_shape[:-2])


def exponent(n) -> int:
    """``matrix_power``'s exponent, as NumPy checks it."""
    try:
        return operator.index(n)
    except TypeError as error:
        raise TypeError("exponent must be an integer") from error


# Device functions: NumPy's semantics with either array module ---------------------------


def cholesky(xp, a, upper: bool = False):
    """The lower factor from a's lower triangle; the upper one from its upper triangle
    (the lower factor of ``a^H``, conjugate-transposed), as NumPy reads them."""
    if not upper:
        return xp.linalg.cholesky(a)
    lower = xp.linalg.cholesky(xp.conj(xp.swapaxes(a, -1, -2)))
    return xp.conj(xp.swapaxes(lower, -1, -2))


def solve(xp, a, b):
    """NumPy 2's rule: `b` is a vector only where it is 1-D, else a stack of matrices;
    batch axes broadcast (given to the module as equal stacks, which both read alike)."""
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    b = xp.broadcast_to(b, batch + b.shape[-2:])
    out = xp.linalg.solve(a, b)
    return out[..., 0] if vector else out


def svdvals(xp, a):
    return xp.linalg.svd(a, compute_uv=False)


def _reciprocals(xp, s, cutoff):
    large = s > cutoff
    return xp.where(large, 1 / xp.where(large, s, 1), 0), large


def pinv(xp, a, rcond):
    """NumPy's pseudo-inverse: the SVD of ``conj(a)``, singular values at most ``rcond *
    largest`` cut off (`rcond` a float or an array over the stack)."""
    m, n = a.shape[-2:]
    dtype = a.dtype if a.dtype.kind in "fc" else np.dtype(np.float64)
    if not a.size:
        return xp.zeros((*a.shape[:-2], n, m), dtype)
    u, s, vh = xp.linalg.svd(xp.conj(a).astype(_double(dtype)), full_matrices=False)
    rcond = xp.asarray(rcond, dtype=s.dtype)[..., None]
    inverse, _ = _reciprocals(xp, s, rcond * xp.max(s, axis=-1, keepdims=True))
    result = xp.matmul(xp.swapaxes(vh, -1, -2), inverse[..., None] * xp.swapaxes(u, -1, -2))
    return result.astype(dtype)


def _double(dtype: np.dtype) -> np.dtype:
    """The precision NumPy's linalg computes in (rank decisions cut where its do)."""
    return np.dtype(np.complex128 if dtype.kind == "c" else np.float64)


def matrix_rank(xp, a, rtol=None):
    """Singular values above ``rtol * largest`` (default ``max(m, n) * eps``), counted."""
    s = xp.linalg.svd(a.astype(_double(a.dtype)), compute_uv=False)
    if rtol is None:  # NumPy's: eps of its singular values' dtype, a's precision
        rtol = max(a.shape[-2:]) * np.finfo(a.dtype if a.dtype.kind in "fc" else s.dtype).eps
    rtol = xp.asarray(rtol, dtype=s.dtype)[..., None]
    count = xp.count_nonzero(s > xp.max(s, axis=-1, keepdims=True) * rtol, axis=-1)
    return xp.asarray(count).astype(np.intp)


def lstsq(xp, a, b, rcond: float, dtype, result_dtype):
    """NumPy's ``lstsq`` of 2-D `a` by the module's SVD: the minimum-norm solution
    (singular values at most ``rcond * largest`` cut off), residuals where a has full
    column rank and more rows than columns, the rank and the singular values; computed in
    `dtype` (NumPy's double precision), returned in `result_dtype`."""
    vector = b.ndim == 1
    a = a.astype(dtype)
    b = (b[:, None] if vector else b).astype(dtype)
    m, n = a.shape
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    largest = s[0] if s.size else 0
    inverse, large = _reciprocals(xp, s, rcond * largest)
    solution = xp.conj(vh).T @ (inverse[:, None] * (xp.conj(u).T @ b))
    rank = int(xp.count_nonzero(large))
    real = np.finfo(result_dtype).dtype
    residuals = xp.zeros((0,), real)
    if rank == n and m > n:
        residuals = xp.sum(xp.abs(b - a @ solution) ** 2, axis=0).astype(real)
    solution = (solution[:, 0] if vector else solution).astype(result_dtype)
    return solution, residuals, xp.asarray(rank, dtype=np.int32), s.astype(real)
