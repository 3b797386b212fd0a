"""TSQR (mdarray._ops.linalg.tsqr): QR, SVD, singular values, pseudo-inverse, rank and least squares
of tall matrices split by rows, natively (under ``fallback="raise"``), against NumPy
over drawn row layouts (uneven, empty, strided, several chunks per device, overlapping,
replicated) and modes, QR's signs included (also of structured matrices, whose LAPACK QR
meets exact zeros); what moves (only the small R factors and combining pieces); and
the one-device path of the square-matrix functions (mdarray._ops.engine.one_device)."""

import numpy as np
import pytest
from _backend_facts import ON_CUDA
from _layouts import D, devices, distinct, spread
from hypothesis import example, given, settings, strategies as st

import mdarray
from mdarray import linalg as la
from mdarray._backends.backend import backend as default_backend_object
from mdarray.testing import strategies as mst

DTYPES = [np.float64, np.float32, np.complex128, np.complex64]


def tolerance(dtype) -> dict:
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return {"rtol": 2e-3, "atol": 2e-3} if single else {"rtol": 1e-8, "atol": 1e-9}


def random_matrix(seed: int, shape: tuple, dtype, rank: int | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    value = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        value = value + 1j * rng.standard_normal(shape)
    if rank is not None:  # a product of rank-`rank` factors, rounded so it is exactly so
        left = rng.integers(-3, 4, (shape[0], rank))
        value = (left @ rng.integers(-3, 4, (rank, shape[1]))).astype(float)
    return value.astype(dtype)


@st.composite
def row_layouts(draw, shape: tuple, *, overlapping: bool = True) -> mdarray.Layout:
    """Layouts of a matrix whose every chunk holds whole rows: the row index maps of
    `mst.index_maps` (uneven, empty, strided, extra overlapping chunks, several chunks
    per device), or a replicated one."""
    if overlapping and draw(st.integers(0, 5)) == 0:
        return mdarray.Layout.replicated(shape, devices=draw(st.sampled_from([D, D[:2]])))
    rows = mdarray.Layout(
        shape[:1], draw(mst.index_maps(shape[:1], overlapping=overlapping, max_blocks=4))
    )
    index_map: dict = {}
    for device, (row_slice,) in rows.chunks:
        index_map.setdefault(device, []).append((row_slice, slice(None)))
    return mdarray.Layout(shape, index_map)


@st.composite
def tall_matrices(draw, *, dtype=None, min_rows: int = 1, rank_deficient: bool = True):
    """``(DistArray, value)``: a matrix with at least as many rows as columns, split by
    rows, in a drawn mode (a rank-deficient one now and then)."""
    dtype = np.dtype(draw(st.sampled_from(DTYPES)) if dtype is None else dtype)
    n = draw(st.integers(1, 5))
    m = draw(st.integers(max(n, min_rows), 24))
    rank = draw(st.sampled_from([None, None, None, 1, n - 1])) if rank_deficient else None
    value = random_matrix(draw(st.integers(0, 2**16)), (m, n), dtype, rank or None)
    layout = draw(row_layouts((m, n)))
    mode = draw(st.sampled_from([mdarray.REPLICA, mdarray.REPLICA, mdarray.SUM]))
    return mdarray.distributed_array(value, layout, mode), value


def check_qr(q, r, value, *, full_rank: bool):
    tol = tolerance(value.dtype)
    n = value.shape[1]
    q_value, r_value = q.get(), r.get()
    assert q.shape == value.shape
    assert r.shape == (n, n)
    assert q.dtype == r.dtype == np.linalg.qr(value).Q.dtype
    np.testing.assert_allclose(q_value @ r_value, value, **tol)
    np.testing.assert_allclose(q_value.conj().T @ q_value, np.eye(n), **tol)
    assert np.all(np.tril(r_value, -1) == 0)
    np.testing.assert_allclose(np.diagonal(r_value).imag, 0, atol=tol["atol"])
    if full_rank:
        # NumPy's factors, signs included (LAPACK's: R's diagonal real, of either sign).
        q_numpy, r_numpy = np.linalg.qr(value)
        np.testing.assert_allclose(r_value, r_numpy, **tol)
        np.testing.assert_allclose(q_value, q_numpy, **tol)


@settings(max_examples=40, deadline=None)
@given(tall_matrices())
@example(
    (
        mdarray.distributed_array(
            np.arange(12.0).reshape(6, 2) ** 2,
            mdarray.Layout((6, 2), spread({0: [slice(0, 1)], 1: [slice(1, 6)]})),
        ),
        np.arange(12.0).reshape(6, 2) ** 2,
    )
).via("a block with fewer rows than columns")
def test_qr(pair):
    x, value = pair
    with mdarray.options(fallback="raise"):
        q, r = la.qr(x)
        q2, r2 = np.linalg.qr(x)
        r_only = np.linalg.qr(x, mode="r")
    assert type(np.linalg.qr(value)) is type(np.linalg.qr(x))
    full_rank = np.linalg.matrix_rank(value) == value.shape[1]
    check_qr(q, r, value, full_rank=full_rank)
    check_qr(q2, r2, value, full_rank=full_rank)
    assert q.layout.chunks == tuple(
        (d, (rows, slice(0, value.shape[1], 1))) for d, (rows, _) in x.layout.chunks
    )
    assert r.layout == mdarray.Layout.replicated(r.shape, devices=x.devices)
    np.testing.assert_allclose(r_only.get(), r.get(), **tolerance(value.dtype))


def structured(name: str, m: int, n: int, dtype) -> np.ndarray:
    """An m x n matrix whose QR by LAPACK meets exact zeros: reflections left out where a
    column is already zero below its pivot (tau = 0: R's diagonal keeps the pivot's sign)
    and pivots that are exactly zero (R's diagonal negative). Zeros are +0.0 (a -0.0 sets
    LAPACK's sign by its own rounding, see `mdarray.linalg.qr`)."""
    rng = np.random.default_rng(m * n)
    complex_ = np.dtype(dtype).kind == "c"

    def draw(*shape):
        value = rng.standard_normal(shape)
        return value + 1j * rng.standard_normal(shape) if complex_ else value

    value = np.zeros((m, n), complex if complex_ else float)
    if name == "random":
        value[:] = draw(m, n)
    elif name == "eye":
        value[:n] = np.eye(n)
    elif name == "diagonal, mixed signs":
        value[range(n), range(n)] = np.resize([2.0, -1.0, 0.5, -3.0], n)
    elif name == "phases":  # complex: no reflection has tau = 0 (the pivots' imaginary parts)
        value[range(n), range(n)] = np.exp(1j * np.arange(1, n + 1)) if complex_ else -1
    elif name == "upper triangular":
        value[:n] = np.triu(draw(n, n)) + np.diag(np.resize([3.0, -3.0, -3.0], n))
    elif name == "upper triangular, negative diagonal":
        value[:n] = np.triu(draw(n, n), 1) - np.diag(np.arange(1.0, n + 1))
    elif name == "triangular in the last rows":
        value[m - n :] = np.triu(draw(n, n)) + np.diag(np.resize([3.0, -3.0], n))
    elif name == "zero first rows":  # nonzeros only in the lower chunks
        value[m // 2 :] = draw(m - m // 2, n)
    elif name == "zero column":
        value[:] = draw(m, n)
        value[:, n // 2] = 0
    elif name == "zero last column":
        value[:] = draw(m, n)
        value[:, -1] = 0
    elif name == "signed permutation":
        rows = rng.permutation(m)[:n]
        value[rows, range(n)] = np.resize([1.0, -1.0, -1.0], n)
    elif name.startswith("block diagonal"):
        value[: m // 2, : n // 2] = draw(m // 2, n // 2)
        value[m // 2 :, n // 2 :] = draw(m - m // 2, n - n // 2)
        if name.endswith("rows shuffled"):
            value = value[rng.permutation(m)]
    return value.astype(dtype)


STRUCTURED = [
    "random",
    "eye",
    "diagonal, mixed signs",
    "phases",
    "upper triangular",
    "upper triangular, negative diagonal",
    "triangular in the last rows",
    "zero first rows",
    "zero column",
    "zero last column",
    "signed permutation",
    "block diagonal",
    "block diagonal, rows shuffled",
]


def sign_layouts(m: int, n: int) -> dict:
    """Row layouts of an m x n matrix (m >= 5): even, uneven with a first chunk shorter
    than n, the top rows away from the root, strided, several chunks per device,
    overlapping, replicated."""

    def rows(index_map: dict) -> mdarray.Layout:
        return mdarray.Layout(
            (m, n),
            spread({d: [(r, slice(0, n)) for r in ranges] for d, ranges in index_map.items()}),
        )

    cut = max(1, min(n + 1, m - 1))
    return {
        "even": mdarray.Layout.block((m, n), devices=devices(0, 1, 2, 3)),
        "short first": rows(
            {0: [slice(0, 1)], 1: [slice(1, 3)], 2: [slice(3, m - 1)], 3: [slice(m - 1, m)]}
        ),
        "top off the root": rows({0: [slice(cut, m)], 1: [slice(0, cut)]}),
        "strided": rows({0: [slice(0, m, 3)], 1: [slice(1, m, 3)], 2: [slice(2, m, 3)]}),
        "several per device": rows(
            {0: [slice(0, 2), slice(m - 2, m)], 1: [slice(2, m // 2)], 2: [slice(m // 2, m - 2)]}
        ),
        "overlapping": rows(
            {0: [slice(0, m // 2 + 2)], 1: [slice(m // 2 - 1, m)], 2: [slice(1, 3)]}
        ),
        "replicated": mdarray.Layout.replicated((m, n), devices=distinct(0, 1)),
    }


@pytest.mark.parametrize("name", STRUCTURED)
def test_qr_signs_are_numpys(name):
    """Q and R are NumPy's, signs included (LAPACK's Householder rule, tau = 0 steps
    too), in every layout and dtype, square matrices too."""
    for m, n in [(13, 4), (6, 6), (40, 9)]:
        for dtype in DTYPES:
            value = structured(name, m, n, dtype)
            q_numpy, r_numpy = np.linalg.qr(value)
            tol = tolerance(dtype)
            for layout_name, layout in sign_layouts(m, n).items():
                x = mdarray.distributed_array(value, layout)
                with mdarray.options(fallback="raise"):
                    q, r = la.qr(x)
                    r_only = np.linalg.qr(x, mode="r")
                where = f"{name}, {m} x {n} {np.dtype(dtype)}, {layout_name}"
                kept = _determined(r_numpy, value)
                np.testing.assert_allclose(r.get()[kept], r_numpy[kept], **tol, err_msg=where)
                np.testing.assert_allclose(r_only.get()[kept], r_numpy[kept], **tol, err_msg=where)
                np.testing.assert_allclose(q.get()[:, kept], q_numpy[:, kept], **tol, err_msg=where)
                np.testing.assert_allclose(q.get() @ r.get(), value, **tol, err_msg=where)


def _determined(r, value) -> np.ndarray:
    """The columns of Q (rows of R) that NumPy's QR fixes on this backend: all of them on
    the cpu backend (the same LAPACK on the same values); on CUDA those before the first
    pivot at rounding level, past which rounding noise (cuSOLVER's, not LAPACK's) picks
    the directions."""
    if not ON_CUDA:
        return np.ones(r.shape[0], bool)
    pivots = np.abs(np.diagonal(r)) > 100 * np.finfo(value.dtype).eps * np.abs(value).max()
    return np.cumprod(pivots).astype(bool)


@settings(max_examples=30, deadline=None)
@given(tall_matrices())
def test_svd_svdvals_rank(pair):
    x, value = pair
    tol = tolerance(value.dtype)
    with mdarray.options(fallback="raise"):
        u, s, vh = la.svd(x, full_matrices=False)
        values = la.svdvals(x)
        via_numpy = np.linalg.svd(x, full_matrices=False)
        rank = la.matrix_rank(x)
        numpy_rank = np.linalg.matrix_rank(x)
    expected = np.linalg.svd(value, full_matrices=False)
    assert type(via_numpy) is type(expected)
    for result in (u, s, vh, values):
        assert isinstance(result, mdarray.DistArray)
    assert u.dtype == expected.U.dtype
    assert s.dtype == expected.S.dtype
    np.testing.assert_allclose(s.get(), expected.S, **tol)
    np.testing.assert_allclose(values.get(), expected.S, **tol)
    np.testing.assert_allclose(via_numpy.S.get(), expected.S, **tol)
    np.testing.assert_allclose((u.get() * s.get()) @ vh.get(), value, **tol)
    n = value.shape[1]
    np.testing.assert_allclose(u.get().conj().T @ u.get(), np.eye(n), **tol)
    np.testing.assert_allclose(vh.get() @ vh.get().conj().T, np.eye(n), **tol)
    assert u.layout.devices == x.layout.devices
    assert rank.dtype == np.intp
    assert rank.shape == ()
    assert int(rank) == int(numpy_rank) == np.linalg.matrix_rank(value)


@settings(max_examples=30, deadline=None)
@given(dtype=st.sampled_from(DTYPES), wide=st.booleans(), data=st.data())
def test_svd_vectors_are_numpys_where_lapack_takes_the_qr_first(dtype, wide, data):
    """A matrix at least 11/6 times as tall as wide: LAPACK's SVD takes its QR, then the
    SVD of R, as TSQR does; one as wide as that takes its LQ, then the SVD of L (R^H of
    the transpose's QR): U and Vh are NumPy's, signs and phases included, whatever the
    layout of the rows (SciPy's k-means seeding draws from them, sample by sample). On
    CUDA the SVD of the small factor is cuSOLVER's, its phases its own (as CuPy's are)."""
    n = data.draw(st.integers(1, 5))
    m = data.draw(st.integers(-(-11 * n // 6), 30))
    value = random_matrix(data.draw(st.integers(0, 999)), (m, n), dtype)
    x = mdarray.distributed_array(value, data.draw(row_layouts(value.shape)))
    if wide:
        value, x = value.T.copy(), mdarray.asarray(x.T, copy=True)
    with mdarray.options(fallback="raise"):
        u, s, vh = la.svd(x, full_matrices=False)
    expected = np.linalg.svd(value, full_matrices=False)
    tol = tolerance(dtype)
    where = f"{value.shape} {np.dtype(dtype)}, {x.layout}"
    u, vh = u.get(), vh.get()
    if ON_CUDA:  # the small SVD is cuSOLVER's: each singular vector pair up to a phase
        phase = np.sum(np.conj(expected.U) * u, axis=0)
        phase = phase / np.abs(phase)
        u, vh = u * np.conj(phase), vh * phase[:, None]
    np.testing.assert_allclose(u, expected.U, **tol, err_msg=where)
    np.testing.assert_allclose(s.get(), expected.S, **tol, err_msg=where)
    np.testing.assert_allclose(vh, expected.Vh, **tol, err_msg=where)


@settings(max_examples=30, deadline=None)
@given(tall_matrices(), st.sampled_from([None, 0.1]))
def test_pinv(pair, rtol):
    x, value = pair
    with mdarray.options(fallback="raise"):
        result = la.pinv(x, rtol=rtol)
        via_numpy = np.linalg.pinv(x)
    assert result.dtype == value.dtype
    assert result.shape == value.shape[::-1]
    tol = tolerance(value.dtype)
    np.testing.assert_allclose(result.get(), np.linalg.pinv(value, rtol=rtol), **tol)
    np.testing.assert_allclose(via_numpy.get(), np.linalg.pinv(value), **tol)


@settings(max_examples=40, deadline=None)
@given(tall_matrices(min_rows=1), st.data())
def test_lstsq(pair, data):
    x, value = pair
    m = value.shape[0]
    b_shape = data.draw(st.sampled_from([(m,), (m, 1), (m, 3)]))
    b_dtype = data.draw(st.sampled_from([np.float64, np.float32, np.int16]))
    b_value = random_matrix(data.draw(st.integers(0, 99)), (*b_shape, 1), np.float64)
    b_value = b_value.reshape(b_shape).astype(b_dtype)
    b = data.draw(st.sampled_from(["numpy", "dist"]))
    if b == "dist":
        b = mdarray.distributed_array(b_value, data.draw(mst.layouts(b_shape)))
    else:
        b = b_value
    expected = np.linalg.lstsq(value, b_value)
    with mdarray.options(fallback="raise"):
        result = np.linalg.lstsq(x, b)
    assert len(result) == 4
    tol = tolerance(expected[0].dtype)
    for got, want in zip(result, map(np.asarray, expected)):
        assert isinstance(got, mdarray.DistArray)
        assert got.shape == want.shape
        assert got.dtype == want.dtype
    solution, residuals, rank, s = (r.get() for r in result)
    assert int(rank) == int(expected[2])
    np.testing.assert_allclose(s, expected[3], **tol)
    np.testing.assert_allclose(solution, expected[0], rtol=tol["rtol"], atol=1e-6)
    scale = max(1.0, float(np.max(np.abs(expected[1]), initial=0)))
    np.testing.assert_allclose(residuals, expected[1], rtol=tol["rtol"], atol=1e-6 * scale)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 4), st.integers(0, 3), st.data())
def test_columns_split_and_wide(n, extra, data):
    """Chunks that split columns are resharded into row blocks (still native); a wide
    matrix's singular values, SVD, rank and pseudo-inverse come from its conjugate
    transpose; a wide QR is gathered onto one device."""
    dtype = data.draw(st.sampled_from(DTYPES))
    value = random_matrix(data.draw(st.integers(0, 99)), (n + extra, n), dtype)
    tol = tolerance(dtype)
    for matrix in (value, value.T):
        x = mdarray.distributed_array(matrix, data.draw(mst.layouts(matrix.shape)))
        with mdarray.options(fallback="raise"):
            np.testing.assert_allclose(la.svdvals(x).get(), np.linalg.svdvals(matrix), **tol)
            np.testing.assert_allclose(la.pinv(x).get(), np.linalg.pinv(matrix, rtol=None), **tol)
            u, s, vh = la.svd(x, full_matrices=False)
            assert int(la.matrix_rank(x)) == np.linalg.matrix_rank(matrix)
        np.testing.assert_allclose((u.get() * s.get()) @ vh.get(), matrix, **tol)
        wide = matrix.shape[0] < matrix.shape[1]
        with mdarray.options(fallback="allow" if wide else "raise"):
            q, r = la.qr(x)
        np.testing.assert_allclose(q.get() @ r.get(), matrix, **tol)


def test_qr_moves_only_small_pieces():
    """Q keeps the row layout; what moves is one R factor up from each device off the
    root and one combining piece back (n x n each, however many chunks a device holds)
    and R out to the devices: nothing that grows with the number of rows."""
    n = 8
    for m in (64, 4096):
        value = random_matrix(0, (m, n), np.float64)
        layout = mdarray.Layout.block((m, n), devices=devices(0, 1, 2, 3, 0, 1))
        x = mdarray.distributed_array(value, layout)
        others = len(layout.devices) - 1
        square = n * n * 8
        with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
            q, r = la.qr(x)
        assert all("host" not in pair for pair in moved.bytes)
        assert moved.total == 3 * others * square  # R up, a piece down, R out
        assert q.layout == layout
        check_qr(q, r, value, full_rank=True)
        with mdarray.count_transfers() as moved:
            la.svdvals(x)
        assert moved.total == others * (square + n * 8)  # R up, S out
        b = mdarray.distributed_array(np.ones(m), mdarray.Layout.block((m,), devices=devices(1)))
        with mdarray.count_transfers() as moved:
            np.linalg.lstsq(x, b)
        # b's rows to x's chunks; R up; Q^H b up; the solution out and residuals back;
        # the four small results out.
        rows_moved = 8 * sum(
            len(range(*index[0].indices(m)))
            for device, index in layout.chunks
            if device != devices(1)[0]
        )
        small = others * (square + n * 8) + (len(layout.chunks) * 2 * n * 8)
        assert rows_moved <= moved.total <= rows_moved + small + 4 * others * (square + 8)


def test_replicated_rows_each_factor_once():
    value = random_matrix(3, (12, 3), np.float64)
    layout = mdarray.Layout.replicated((12, 3), devices=distinct(0, 1))
    x = mdarray.distributed_array(value, layout)
    with mdarray.options(fallback="raise"):
        q, r = la.qr(x)
    assert q.layout == layout
    assert q.mode is mdarray.REPLICA
    for chunk in q.all_chunks().values():
        np.testing.assert_allclose(mdarray.testing._host(chunk[0]) @ r.get(), value, atol=1e-12)


def test_lstsq_rank_deficient_and_errors():
    value = random_matrix(1, (10, 4), np.float64, rank=2)
    b = np.arange(10.0)
    x = mdarray.distributed_array(value, mdarray.Layout.block((10, 4), devices=devices(0, 1, 2)))
    expected = np.linalg.lstsq(value, b)
    with mdarray.options(fallback="raise"):
        solution, residuals, rank, s = np.linalg.lstsq(x, b)
    assert int(rank) == 2
    assert residuals.shape == (0,)
    np.testing.assert_allclose(solution.get(), expected[0], atol=1e-10)
    np.testing.assert_allclose(s.get(), expected[3], atol=1e-10)
    with pytest.raises(np.linalg.LinAlgError), mdarray.options(fallback="allow"):
        np.linalg.lstsq(x, np.ones(9))


# Gathered onto one device ------------------------------------------------------------


SQUARE = {
    "inv": la.inv,
    "det": la.det,
    "slogdet": la.slogdet,
    "eigh": la.eigh,
    "eigvalsh": la.eigvalsh,
    "cholesky": lambda a: la.cholesky(a, upper=True),
    "matrix_power": lambda a: la.matrix_power(a, -2),
    "solve": lambda a: la.solve(a, a[:, :2]),
    "eigvals": np.linalg.eigvals,
}


@pytest.mark.parametrize("name", sorted(SQUARE))
def test_square_functions_gather_onto_one_device(name):
    value = random_matrix(5, (4, 4), np.float64)
    value = value @ value.T + 4 * np.eye(4)
    x = mdarray.distributed_array(value, mdarray.Layout.block((4, 4), devices=devices(1, 2)))
    if len(x.layout.devices) == 1:
        # Held by that device alone: nothing moves, so no fallback (one test device).
        with mdarray.options(fallback="raise"):
            result = SQUARE[name](x)
        for item in result if isinstance(result, tuple) else (result,):
            assert item.layout.devices == x.layout.devices
        return
    with (
        mdarray.options(fallback="warn"),
        pytest.warns(mdarray.PerformanceWarning, match=rf"numpy\.linalg\.{name}.*device"),
        mdarray.count_transfers() as moved,
    ):
        result = SQUARE[name](x)
    assert all("host" not in pair for pair in moved.bytes)
    first = x.layout.devices[0]
    for item in result if isinstance(result, tuple) else (result,):
        assert item.layout.devices == (first,)
    with mdarray.options(fallback="raise"), pytest.raises(TypeError, match=name):
        SQUARE[name](x)
    with mdarray.options(fallback="allow", fallback_limit=8), pytest.raises(TypeError):
        SQUARE[name](x)


@settings(max_examples=15, deadline=None)
@given(tall_matrices(rank_deficient=False), st.sampled_from([2, -2, "nuc"]), st.booleans())
def test_singular_value_norms(pair, ord, keepdims):
    x, value = pair
    with mdarray.options(fallback="raise"):
        result = la.matrix_norm(x, ord=ord, keepdims=keepdims)
        via_norm = np.linalg.norm(x, ord=ord, keepdims=keepdims)
    expected = np.linalg.matrix_norm(value, ord=ord, keepdims=keepdims)
    for got in (result, via_norm):
        assert got.shape == expected.shape
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got.get(), expected, **tolerance(value.dtype))


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 4), st.integers(0, 2**16), st.data())
def test_blocks_cut_for_the_cache(n, seed, data):
    """A chunk larger than the backend's ``factor_block_elements`` factors in row blocks
    on its device: the same factors (here with a tiny limit, so the cut happens)."""
    value = random_matrix(seed, (40 + n, n), data.draw(st.sampled_from(DTYPES)))
    x = mdarray.distributed_array(value, data.draw(row_layouts(value.shape)))
    chunks = default_backend_object()
    saved = chunks.factor_block_elements
    chunks.factor_block_elements = 4 * n * n  # row blocks of 4 n rows
    try:
        with mdarray.options(fallback="raise"):
            q, r = la.qr(x)
            values = la.svdvals(x)
    finally:
        chunks.factor_block_elements = saved
    check_qr(q, r, value, full_rank=True)
    np.testing.assert_allclose(values.get(), np.linalg.svdvals(value), **tolerance(value.dtype))
