"""TSQR: the QR of a tall matrix split by rows, and what follows from it (the SVD, the
singular values, the pseudo-inverse, least squares, the rank), without gathering it.

A matrix `x` of m x n, m >= n, whose chunks each hold whole rows, factors in one round:

1. Each chunk takes the QR of the rows it owns (where chunks overlap, every row belongs to
   one of them) below x's first n rows (the top rows, left as they are), on its device:
   ``Q1_k`` (r_k x k_k) and ``R_k`` (k_k x n), with ``k_k = min(r_k, n)``. Nothing
   moves. (A block larger than the backend's ``factor_block_elements`` is itself
   factored so, in cached row blocks.)
2. A device's ``R_k`` are stacked and factored there (a QR of their stack, ``Q_d``), and
   its one R (at most n x n) moves to the root, the first device of `x`: one piece from
   each other device (the one small gather), and the top rows from where they lie.
3. The root stacks the top rows, in order, over those R factors and takes one QR,
   ``[x[:n]; R_1; R_2; ...] == Q2 @ R``: in exact arithmetic Householder's QR of x
   itself, so R and Q carry LAPACK's signs (NumPy's), whatever the layout (below: why,
   and where rounding errors choose instead).
4. The root's pieces ``B_d`` of Q2 (rows of device d, times a small n x p matrix where
   the caller wants ``Q @ M``) move back to the devices (the one small broadcast), and
   each chunk's rows of the result are ``Q1_k @ (Q_d @ B_d)[rows of k]``, on its device,
   under its top rows' own rows of ``Q2 @ M``.

So a QR moves about ``2 * devices * n * n * itemsize`` bytes, whatever m is (and the top
rows up and their rows of Q back where the root does not hold them), plus the small
results (R, S, Vh) replicated on x's devices; Q keeps x's row layout (where chunks overlap
it is built as a SUM partial, zero where a chunk does not own a row, and combined: the
rows held twice move once more). Singular values alone (`svdvals`, the rank) skip Q and
step 4. Least squares moves ``Q^H b``'s part of each device (n x nrhs) and b's top rows
to the root instead of the Q pieces back, and the solution out for the residuals.

Why the top rows go up as they are: Householder's QR of ``[x[:n]; S]``, for any S with
``S^H S == x[n:]^H x[n:]`` (the stacked R factors), reflects as that of x does in exact
arithmetic: each reflection's pivot, the k-th entry of column k, lies in x's own first
rows, and the rest of the column has the same norm. So LAPACK's rule (``R[k, k] ==
-sign(Re pivot) * norm``, or the pivot itself where the column is exactly zero below it:
tau = 0, no reflection) gives NumPy's signs, exact zeros included where x's structure
makes them (identity, diagonal, triangular, zero columns, rows or blocks), as long as the
QRs below keep those zeros. A QR whose pivot row is zero where rows under it are not
mixes that row's other entries into them, and leaves rounding errors (1e-17) where x's
own elimination finds exact zeros (a block-diagonal x with rows of its blocks in one
chunk, in turn): so the QRs below the top rows, whose order is free, take their rows by
their first nonzero column where a pivot of their own order is zero (`_echelon_qr`).
Left to rounding: a sign that LAPACK takes from a pivot its own arithmetic makes exactly
zero by cancellation (some sparse matrices), or from a negative zero (-0.0, in x or made
by LAPACK), and, as between any two QR codes, Q's columns past the rank of dependent
columns.

Chunks that split columns are resharded into row blocks first (the matrix moves once).
Wide matrices, stacks of matrices and empty ones are not taken here: `_linalg` hands over
a wide matrix's conjugate transpose for the SVD, the singular values, the rank and the
pseudo-inverse, and gathers the rest onto one device (`_one_device`, a fallback).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from mdarray._array.array import DistArray, in_mode, wrap
from mdarray._backends.backend import Backend
from mdarray._core import regions as _regions
from mdarray._core.modes import REPLICA, SUM
from mdarray._exec.chunkwise import aligned
from mdarray._layouts.layout import Layout
from mdarray._movement.collectives import several
from mdarray._ops.shape.transposes import matrix_transpose
from mdarray._storage.chunks import Chunks

# The dtypes LAPACK (and cuSOLVER) factor; integers and bools become float64 as NumPy's.
_INEXACT = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


class RowBlocks(NamedTuple):
    """A tall matrix as TSQR reads it: `x` (REPLICA, every chunk whole rows), per chunk the
    row indices into it of the rows it owns (None where it owns all of them), per chunk
    those rows in x's order (an array on the chunk's device), and per chunk which of x's
    first n rows, the top rows, they begin with (an index into those n: a slice, or an int
    array)."""

    x: DistArray
    owned: tuple
    blocks: tuple
    top: tuple


def linalg_dtype(dtype: np.dtype) -> np.dtype | None:
    """The dtype a factorization of `dtype` computes in (integers and bools as float64),
    or None for one linear algebra does not take (float16, long double)."""
    if dtype.kind in "biu":
        return np.dtype(np.float64)
    return dtype if dtype in _INEXACT else None


def double(dtype: np.dtype) -> np.dtype:
    """The double-precision dtype NumPy's linalg computes `dtype` in (its results are cast
    back): what rank decisions need to cut where NumPy's do."""
    return np.dtype(np.complex128 if dtype.kind == "c" else np.float64)


def row_blocks(x: DistArray, dtype: np.dtype | None = None) -> RowBlocks | None:
    """`x` cut into its chunks' owned rows, in `dtype` (default: `linalg_dtype`); None
    where TSQR does not take `x`: not a 2-D matrix, wider than tall, empty, or of a dtype
    linear algebra does not take, or in a run of several processes. Rows move only where a chunk splits the columns (the
    whole matrix is then resharded into row blocks over its devices)."""
    if x.ndim != 2 or x.shape[0] < x.shape[1] or not x.size or several():
        return None  # TSQR has no multi-process implementation yet: one device computes
    dtype = linalg_dtype(x.dtype) if dtype is None else dtype
    if dtype is None:
        return None
    x = in_mode(x, REPLICA)
    if x.dtype != dtype:
        x = x.astype(dtype)
    m = x.shape[0]
    if x.layout.splits(1):  # row blocks, the one other axis
        x = x.reshard(x.layout.whole_along(1))
    layout = x.layout
    owned: list = [None] * len(layout.chunks)
    if layout.has_overlaps:
        found: list[list] = [[] for _ in layout.chunks]
        rows = tuple((box[0],) for box in layout.boxes)
        for piece in _regions.cover((range(m),), rows).pieces():
            found[piece.source].append(piece.source_index[0])
        # One index of the rows in order, so that the top rows come first.
        owned = [
            (np.sort(np.concatenate([_regions.positions(i, len(box[0])) for i in found[k]])),)
            if found[k]
            else ()
            for k, box in enumerate(layout.boxes)
        ]
    backend = x.storage.backend
    blocks = []
    top = []
    for chunk, device, indices, box in zip(
        x.storage.buffers, layout.chunk_devices, owned, layout.boxes
    ):
        with backend.on(device):
            blocks.append(chunk if indices is None else _rows(backend.xp, chunk, indices))
        top.append(_top_rows(box[0], indices, x.shape[1]))
    return RowBlocks(x, tuple(owned), tuple(blocks), tuple(top))


def _top_rows(rows: range, indices: tuple | None, n: int):
    """Which of x's first `n` rows a chunk of x's `rows` owns (at `indices`, None for all
    of them): those its block begins with, as a slice, or an int array where it owns
    some of its rows only."""
    if indices is None:
        count = len(range(rows.start, min(rows.stop, n), rows.step))
        return slice(rows.start, rows.start + count * rows.step, rows.step)
    owned = np.asarray(rows)[indices[0]] if indices else np.zeros(0, np.intp)
    return owned[owned < n]


def _rows(xp, chunk, indices: tuple):
    """The rows of `chunk` at `indices` (slices or int arrays), one after another."""
    parts = [_regions.apply_index(chunk, (i, slice(None)), xp) for i in indices]
    if not parts:
        return chunk[:0]
    return parts[0] if len(parts) == 1 else xp.concatenate(parts, axis=0)


def _qr(xp, a, want_q: bool) -> tuple:
    """``(Q, R)`` of `a` (reduced; Q None unless `want_q`); empty ones made, not factored."""
    k = min(a.shape)
    if not a.size:
        q = xp.zeros((a.shape[0], k), a.dtype) if want_q else None
        return q, xp.zeros((k, a.shape[1]), a.dtype)
    if want_q:
        q, r = xp.linalg.qr(a, mode="reduced")
        return q, r
    return None, xp.linalg.qr(a, mode="r")


def _echelon_qr(xp, a, want_q: bool) -> tuple:
    """`_qr` of rows below x's top rows (their order is free), taken by their first
    nonzero column (stably; Q's rows given back in a's order) where a pivot of a's own
    order is zero: see the module docstring."""
    k = min(a.shape)
    if not k or bool(xp.all(xp.diagonal(a) != 0)):
        return _qr(xp, a, want_q)
    nonzero = a != 0
    first = xp.where(xp.any(nonzero, axis=1), xp.argmax(nonzero, axis=1), a.shape[1])
    order = xp.argsort(first, kind="stable")
    q, r = _qr(xp, a[order], want_q)
    if q is None:
        return None, r
    back = xp.empty_like(q)
    back[order] = q
    return back, r


def _local_qr(xp, block, want_q: bool, limit: int) -> tuple:
    """`_qr` of a chunk's block, cut into row blocks of about `limit` elements where that
    shrinks the work (TSQR on one device: cached blocks factor faster); the R factors'
    stack is at most a quarter of the block."""
    rows, n = block.shape
    step = limit // max(n, 1)
    if step < 4 * n or rows <= step:
        return _echelon_qr(xp, block, want_q)
    local = [_echelon_qr(xp, block[i : i + step], want_q) for i in range(0, rows, step)]
    q2, r = _echelon_qr(xp, xp.concatenate([r for _, r in local], axis=0), want_q)
    if not want_q:
        return None, r
    q = xp.empty((rows, q2.shape[1]), q2.dtype)
    start = 0
    for i, (q1, r1) in enumerate(local):
        q[i * step : i * step + q1.shape[0]] = q1 @ q2[start : start + r1.shape[0]]
        start += r1.shape[0]
    return q, r


class Factors(NamedTuple):
    """One TSQR, in three levels: per chunk its local Q1 (None for R alone) of the rows
    below the top ones and its rows ``(start, stop)`` in its device's stack of R factors;
    per device of x (in ``x.layout.devices`` order) the Q of that stack and its rows in the
    root's stack (under the top rows); on the `root` device Q2 and R."""

    rows: RowBlocks
    q1: tuple
    chunk_rows: tuple
    q_device: tuple
    device_rows: tuple
    q2: Any
    r: Any
    root: int


def _stacked(factors: list, start: int = 0) -> list:
    """The ``(start, stop)`` rows of each factor's R in their stack, from `start`."""
    rows = []
    for _, r in factors:
        rows.append((start, start + r.shape[0]))
        start += r.shape[0]
    return rows


def _count(index, n: int) -> int:
    """How many of `n` rows `index` (a slice or an int array) takes."""
    return len(_regions.positions(index, n))


def _top_block(rows: RowBlocks, blocks, root: int):
    """x's first n rows on the root, in order, from the first rows of the chunks' `blocks`
    (x's own, or another matrix's rows that go with them): one piece from each chunk that
    holds some, one copy where several do."""
    x = rows.x
    n = x.shape[1]
    backend = x.storage.backend
    pieces = []
    for block, device, index in zip(blocks, x.layout.chunk_devices, rows.top):
        count = _count(index, n)
        if count:
            pieces.append((index, backend.move(block[:count], device, root)))
    if len(pieces) == 1:  # one chunk holds them all (the first, as a rule): in order
        return pieces[0][1]
    out = backend.empty((n, *blocks[0].shape[1:]), blocks[0].dtype, root)
    with backend.on(root):
        for index, piece in pieces:
            backend.assign(out, (index, *(slice(0, k, 1) for k in piece.shape[1:])), piece)
    return out


def factor(rows: RowBlocks, want_q: bool = True) -> Factors:
    """Steps 1 to 3 of the module docstring: local QRs of the rows below the top ones, a
    device's R factors stacked and factored on it (one R per device leaves it), those
    gathered onto the root under the top rows, one QR of their stack there."""
    x = rows.x
    n = x.shape[1]
    backend = x.storage.backend
    xp = backend.xp
    devices = x.layout.chunk_devices
    root = x.layout.devices[0]
    local = []
    for block, device, top in zip(rows.blocks, devices, rows.top):
        with backend.on(device):
            below = block[_count(top, n) :]
            local.append(_local_qr(xp, below, want_q, backend.factor_block_elements))
    chunk_rows: list = [None] * len(local)
    per_device = []
    for device in x.layout.devices:
        mine = [k for k, d in enumerate(devices) if d == device]
        for k, span in zip(mine, _stacked([local[k] for k in mine])):
            chunk_rows[k] = span
        with backend.on(device):
            stack = xp.concatenate([local[k][1] for k in mine], axis=0)
            per_device.append(_echelon_qr(xp, stack, want_q))
    device_rows = _stacked(per_device, n)
    top = _top_block(rows, rows.blocks, root)
    with backend.on(root):
        stack = xp.concatenate(
            [top, *(backend.move(r, d, root) for (_, r), d in zip(per_device, x.layout.devices))],
            axis=0,
        )
        q2, r = _qr(xp, stack, want_q)
    return Factors(
        rows,
        tuple(q for q, _ in local),
        tuple(chunk_rows),
        tuple(q for q, _ in per_device),
        tuple(device_rows),
        q2,
        r,
        root,
    )


def q_times(factors: Factors, right=None, *, conjugate: bool = False, dtype=None) -> DistArray:
    """``Q @ right`` (Q where `right` is None; its conjugate where `conjugate`), with
    `right` a small n x p array on the root: step 4, a DistArray in x's row layout (its
    chunks cast to `dtype` where given)."""
    x, owned = factors.rows.x, factors.rows.owned
    backend = x.storage.backend
    xp = backend.xp
    root = factors.root
    with backend.on(root):
        pieces = factors.q2 if right is None else factors.q2 @ right
    p = pieces.shape[1]
    layout = Layout(
        (x.shape[0], p),
        {d: [(index[0], slice(0, p, 1)) for index in ix] for d, ix in x.layout.index_map.items()},
    )
    on_device = {}
    for device, q_device, (start, stop) in zip(
        x.layout.devices, factors.q_device, factors.device_rows
    ):
        piece = backend.move(pieces[start:stop], root, device)
        with backend.on(device):
            on_device[device] = q_device @ piece
    buffers = []
    n = x.shape[1]
    for k, device in enumerate(layout.chunk_devices):
        start, stop = factors.chunk_rows[k]
        top = factors.rows.top[k]
        head = None
        if _count(top, n):  # the top rows' own rows of ``Q2 @ right``, over the rest
            with backend.on(root):
                head = _regions.apply_index(pieces, (top, slice(0, p, 1)), xp)
                head = backend.move(head, root, device)
        with backend.on(device):
            q_rows = factors.q1[k] @ on_device[device][start:stop]
            if head is not None:
                q_rows = xp.concatenate([head, q_rows], axis=0)
            if conjugate:
                q_rows = xp.conj(q_rows)
            if dtype is not None:
                q_rows = q_rows.astype(dtype, copy=False)
            if owned[k] is not None:
                q_rows = _placed(backend, q_rows, owned[k], layout.chunk_shapes[k], device)
            buffers.append(q_rows)
    storage = Chunks.of(layout, buffers, backend, pieces.dtype if dtype is None else dtype)
    if not x.layout.has_overlaps:
        return wrap(storage)
    # Overlapping chunks hold zeros where they do not own a row: their sum is the value.
    return in_mode(wrap(storage, SUM), REPLICA)


def _placed(backend: Backend, rows, indices: tuple, shape: tuple, device: int):
    """A chunk of `shape`, zero but for `rows` placed at the row `indices` it owns."""
    out = backend.full(shape, 0, rows.dtype, device)
    start = 0
    for i in indices:
        count = len(_regions.positions(i, shape[0]))
        backend.assign(out, (i, slice(0, shape[1], 1)), rows[start : start + count])
        start += count
    return out


def replicated(x: DistArray, array, device: int) -> DistArray:
    """`array` (small, on `device`) copied onto each device of x's layout."""
    backend = x.storage.backend
    if isinstance(array, np.generic):
        array = np.asarray(array)
    layout = Layout.replicated(array.shape, devices=x.layout.devices)
    buffers = [backend.move(array, device, d) for d in layout.devices]
    return wrap(Chunks.of(layout, buffers, backend, array.dtype))


def _svd(xp, r, compute_uv: bool):
    if compute_uv:
        return xp.linalg.svd(r, full_matrices=False)
    return xp.linalg.svd(r, compute_uv=False)


# What the library's functions take from it --------------------------------------------


def qr(rows: RowBlocks, mode: str = "reduced") -> tuple[DistArray, DistArray] | DistArray:
    """Q (x's row layout) and R (replicated on x's devices); R alone for ``mode="r"``."""
    factors = factor(rows, want_q=mode != "r")
    r = replicated(rows.x, factors.r, factors.root)
    return r if mode == "r" else (q_times(factors), r)


def svd(rows: RowBlocks, adjoint: bool = False) -> tuple[DistArray, DistArray, DistArray]:
    """``U, S, Vh`` with ``x == U @ diag(S) @ Vh``: the SVD of R on the root, U as
    ``Q @ U_R`` (x's row layout), S and Vh replicated.

    LAPACK's SVD (NumPy's ``gesdd``) of a much taller matrix (m >= 11n/6) is this one:
    its QR first, then the SVD of R, so with R's signs (`factor`) the vectors are NumPy's.
    Of a much wider matrix it takes the LQ first, ``w == L Q^H``, then the SVD of L: for
    `x` the rows of such a ``w^H`` (`adjoint`), L is R^H, so the root takes the SVD of
    R^H, ``U_L S Vt_L``, and x's factors are ``Q Vt_L^H``, S and ``U_L^H`` (whose
    conjugate transposes are NumPy's factors of w). Matrices nearer square are
    bidiagonalized whole by LAPACK: their vectors may differ from NumPy's by a phase."""
    factors = factor(rows)
    backend = rows.x.storage.backend
    xp = backend.xp
    with backend.on(factors.root):
        if adjoint:
            u_l, s, vt_l = _svd(xp, xp.conj(factors.r.T), True)
            u_r, vh = xp.conj(vt_l.T), xp.conj(u_l.T)
        else:
            u_r, s, vh = _svd(xp, factors.r, True)
    u = q_times(factors, u_r)
    return u, replicated(rows.x, s, factors.root), replicated(rows.x, vh, factors.root)


def singular_values(rows: RowBlocks) -> tuple[Any, int]:
    """The singular values (descending) of x, an array on the root device, and the root:
    those of R, so Q is never formed."""
    factors = factor(rows, want_q=False)
    backend = rows.x.storage.backend
    with backend.on(factors.root):
        return _svd(backend.xp, factors.r, False), factors.root


def svdvals(rows: RowBlocks) -> DistArray:
    """The singular values, replicated on x's devices."""
    s, root = singular_values(rows)
    return replicated(rows.x, s, root)


def matrix_rank(rows: RowBlocks, rtol: float) -> DistArray:
    """The number of singular values above ``rtol * largest``, a 0-d intp array
    replicated on x's devices (rows in double precision count as NumPy's do)."""
    s, root = singular_values(rows)
    xp = rows.x.storage.backend.xp
    with rows.x.storage.backend.on(root):
        rank = xp.asarray(xp.count_nonzero(s > xp.max(s) * rtol)).astype(np.intp)
    return replicated(rows.x, rank, root)


def _reciprocals(xp, s, rcond: float):
    """``1 / s`` where ``s > rcond * max(s)``, else 0: the pseudo-inverse's cut-off."""
    large = s > rcond * xp.max(s)
    return xp.where(large, 1 / xp.where(large, s, 1), 0), large


def pinv(rows: RowBlocks, rcond: float, dtype) -> DistArray:
    """The pseudo-inverse ``V diag(1/s) U^H`` (singular values at most ``rcond *
    largest`` cut off, as NumPy's), n x m in `dtype`: the conjugate of ``Q @ (U_R
    diag(1/s) Vh)`` in x's row layout, transposed (a view). Rows in double precision
    cut where NumPy's do."""
    factors = factor(rows)
    backend = rows.x.storage.backend
    xp = backend.xp
    with backend.on(factors.root):
        u_r, s, vh = _svd(xp, factors.r, True)
        inverse, _ = _reciprocals(xp, s, rcond)
        right = (u_r * inverse.astype(u_r.dtype)) @ vh
    conjugate = rows.x.dtype.kind == "c"
    return matrix_transpose(q_times(factors, right, conjugate=conjugate, dtype=dtype))


def lstsq(rows: RowBlocks, b, rcond: float, result_dtype: np.dtype) -> tuple:
    """NumPy's ``lstsq(x, b, rcond)`` for tall x: ``(solution, residuals, rank, s)``.

    ``Q^H b`` is summed per device (``Q_d^H`` of its chunks' ``Q1_k^H b_k``, n x nrhs)
    and over devices on the root, with the top rows' part (b's top rows move there),
    where the SVD of R gives the minimum-norm solution (singular values at most ``rcond
    * largest`` cut off). The residuals (full rank and m > n only, as
    NumPy's) are ``|b - x @ solution|^2`` per column, each chunk summing its rows: the
    solution moves to the chunks, one sum per chunk back.
    """
    x = rows.x
    backend = x.storage.backend
    xp = backend.xp
    dtype = x.dtype
    m, n = x.shape
    vector = b.ndim == 1
    layout = x.layout
    b_layout = Layout(
        b.shape,
        {
            d: [(index[0],) if vector else (index[0], slice(0, b.shape[1], 1)) for index in ix]
            for d, ix in layout.index_map.items()
        },
    )
    b_blocks = []
    for part, device, indices in zip(
        aligned(b, b_layout, backend), layout.chunk_devices, rows.owned
    ):
        with backend.on(device):
            block = xp.asarray(part).astype(dtype, copy=False)
            block = block[:, None] if vector else block
            b_blocks.append(block if indices is None else _rows(xp, block, indices))
    factors = factor(rows)
    root = factors.root
    projected = []
    for device, q_device in zip(layout.devices, factors.q_device):
        with backend.on(device):
            local = sum(
                xp.conj(q_device[start:stop]).T
                @ (xp.conj(factors.q1[k]).T @ b_blocks[k][_count(rows.top[k], n) :])
                for k, (start, stop) in enumerate(factors.chunk_rows)
                if layout.chunk_devices[k] == device
            )
        projected.append(backend.move(local, device, root))
    top = _top_block(rows, b_blocks, root)
    with backend.on(root):
        c = sum(
            (
                xp.conj(factors.q2[start:stop]).T @ part
                for (start, stop), part in zip(factors.device_rows, projected)
            ),
            xp.conj(factors.q2[:n]).T @ top,
        )
        u_r, s, vh = _svd(xp, factors.r, True)
        inverse, large = _reciprocals(xp, s, rcond)
        solution = xp.conj(vh).T @ (inverse[:, None] * (xp.conj(u_r).T @ c))
        rank = int(xp.count_nonzero(large))
    real = np.finfo(result_dtype).dtype
    with backend.on(root):
        residuals = xp.zeros((0,), real)
    if rank == n and m > n:
        sums = []
        for k, device in enumerate(layout.chunk_devices):
            at = backend.move(solution, root, device)
            with backend.on(device):
                misfit = b_blocks[k] - rows.blocks[k] @ at
                local = xp.sum(xp.abs(misfit) ** 2, axis=0)
            sums.append(backend.move(local, device, root))
        with backend.on(root):
            residuals = sum(sums[1:], sums[0]).astype(real)
    with backend.on(root):
        solution = (solution[:, 0] if vector else solution).astype(result_dtype)
        rank_value = xp.asarray(rank, dtype=np.int32)
        s = s.astype(real)
    return tuple(replicated(x, a, root) for a in (solution, residuals, rank_value, s))
