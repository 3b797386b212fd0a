"""matmul against NumPy over drawn shapes, dtypes, layouts and modes; data movement."""

import numpy as np
import pytest
from _call_counts import calls
from _layouts import dist_pairs
from hypothesis import example, given, settings, strategies as st

import mdarray
from mdarray import REPLICA, SUM, Layout
from mdarray._array.array import wrap
from mdarray._backends.backend import backend as default_backend_object
from mdarray.testing import assert_dist_allclose, assert_dist_equal, strategies as mst

DEVICES = mdarray.devices()


def device(i: int) -> int:
    """The i-th device, cycling where the backend has fewer."""
    return DEVICES[i % len(DEVICES)]


def merged(*pieces) -> dict:
    """An index map from ``(i, chunks)`` pairs for `device(i)` (devices may coincide)."""
    index_map: dict = {}
    for i, chunks in pieces:
        index_map.setdefault(device(i), []).extend(chunks)
    return index_map


def native(array):
    """`array` as an array of the backend (NumPy on cpu, CuPy on cuda)."""
    return default_backend_object().xp.asarray(array)


def assert_matches(result, expected) -> None:
    if expected.dtype.kind in "fc":
        assert_dist_allclose(result, expected, rtol=1e-5, atol=1e-6)
    else:
        assert_dist_equal(result, expected)


# Shapes: (a, b) pairs that NumPy's matmul accepts -----------------------------------

sides = st.integers(0, 5)


@st.composite
def matmul_shapes(draw):
    n, k, m = draw(sides), draw(sides), draw(sides)
    kind = draw(st.sampled_from(["vv", "vm", "mv", "mm", "batched"]))
    if kind == "vv":
        return (k,), (k,)
    if kind == "vm":
        return (k,), (*draw(batch_shapes()), k, m)
    if kind == "mv":
        return (*draw(batch_shapes()), n, k), (k,)
    if kind == "mm":
        return (n, k), (k, m)
    batch = draw(batch_shapes(min_dims=1))
    batch_a = _broadcastable(draw, batch)
    batch_b = _broadcastable(draw, batch)
    return (*batch_a, n, k), (*batch_b, k, m)


def batch_shapes(min_dims=0):
    return st.lists(st.integers(1, 3), min_size=min_dims, max_size=2).map(tuple)


def _broadcastable(draw, batch: tuple) -> tuple:
    """`batch` with some axes 1 and some leading axes left out."""
    lead = draw(st.integers(0, len(batch)))
    return tuple(1 if draw(st.booleans()) else n for n in batch[lead:])


matmul_dtypes = st.sampled_from(
    [np.bool_, np.int8, np.int32, np.int64, np.uint16, np.float32, np.float64, np.complex128]
)


@st.composite
def operand_pairs(draw, mode_a=None, mode_b=None):
    shape_a, shape_b = draw(matmul_shapes())
    a, ea = draw(dist_pairs(shape_a, draw(matmul_dtypes), mode_a, max_blocks=3))
    b, eb = draw(dist_pairs(shape_b, draw(matmul_dtypes), mode_b, max_blocks=3))
    return a, ea, b, eb


# Values -----------------------------------------------------------------------------


def _pair(shape_a, shape_b, dtype, devices_a, devices_b):
    ea, eb = np.ones(shape_a, dtype), np.ones(shape_b, dtype)
    a = mdarray.distributed_array(ea, Layout.block(shape_a, devices=devices_a))
    b = mdarray.distributed_array(eb, Layout.block(shape_b, devices=devices_b))
    return a, ea, b, eb


# An empty contraction of two vectors: the 0-d result is False, not a chunk of size 0.
@example(_pair((0,), (0,), bool, DEVICES, DEVICES[:1]))
@given(operand_pairs())
def test_matmul_matches_numpy(pairs):
    a, ea, b, eb = pairs
    with mdarray.options(fallback="raise"):
        result = a @ b
    assert_matches(result, np.matmul(ea, eb))


@example(shapes=((2, 3), (3, 2)), use_native=False)
@given(shapes=matmul_shapes(), use_native=st.booleans())
def test_matmul_with_plain_arrays(shapes, use_native):
    shape_a, shape_b = shapes
    rng = np.random.default_rng(0)
    ea = rng.integers(-5, 5, shape_a).astype(np.float64)
    eb = rng.integers(-5, 5, shape_b).astype(np.float32)
    a = mdarray.distributed_array(ea, Layout.block(shape_a, axis=-1, devices=DEVICES))
    b = mdarray.distributed_array(eb, Layout.block(shape_b, devices=DEVICES))
    # A CuPy array first would ask CuPy's own matmul first; a DistArray first is ours.
    plain_b = native(eb) if use_native else eb
    with mdarray.options(fallback="raise"):
        assert_matches(a @ plain_b, np.matmul(ea, eb))
        assert_matches(mdarray.matmul(a, plain_b), np.matmul(ea, eb))
        assert_matches(np.matmul(ea, b), np.matmul(ea, eb))
        assert_matches(ea @ b, np.matmul(ea, eb))


def test_matmul_entry_points_agree():
    ea = np.arange(12.0).reshape(3, 4)
    eb = np.arange(8.0).reshape(4, 2)
    a = mdarray.distributed_array(ea, Layout.grid(ea.shape, (2, 2), devices=DEVICES))
    b = mdarray.distributed_array(eb, Layout.block(eb.shape, devices=DEVICES))
    with mdarray.options(fallback="raise"):
        for result in (a @ b, np.matmul(a, b), mdarray.matmul(a, b)):
            assert_dist_equal(result, ea @ eb)


def test_matmul_dtype_and_out():
    ea = np.arange(6).reshape(2, 3)
    eb = np.arange(6).reshape(3, 2)
    a = mdarray.distributed_array(ea, Layout.block(ea.shape, axis=1, devices=DEVICES))
    b = mdarray.distributed_array(eb, Layout.block(eb.shape, devices=DEVICES))
    with mdarray.options(fallback="raise"):
        assert_dist_equal(np.matmul(a, b, dtype=np.float64), np.matmul(ea, eb, dtype=np.float64))
        out = mdarray.distributed_array(np.zeros((2, 2)), Layout.replicated((2, 2), DEVICES))
        shared = wrap(out.storage.derive(), out.mode)  # another array on the same buffers
        assert np.matmul(a, b, out=out) is out
        assert out.mode is mdarray.REPLICA
        assert_dist_equal(out, (ea @ eb).astype(np.float64))
        assert_dist_equal(shared, np.zeros((2, 2)))
        lined_up = a @ b
        np.matmul(a, b, out=lined_up)  # the result's own layout: its mode comes along
        assert lined_up.mode is (SUM if len(DEVICES) > 1 else mdarray.REPLICA)
        assert_dist_equal(lined_up, ea @ eb)
        wrong = mdarray.distributed_array(np.zeros((2, 2), bool), {device(0): ()})
        with pytest.raises(TypeError, match="Cannot cast ufunc 'matmul' output"):
            np.matmul(a, b, out=wrong)
        with pytest.raises(TypeError, match="fallback='raise'"):
            np.matmul(a, b, axes=[(0, 1), (0, 1), (0, 1)])


# Vector products: NumPy's gufuncs through the same plan --------------------------------


@st.composite
def vector_product_operands(draw):
    name = draw(st.sampled_from(["vecdot", "matvec", "vecmat"]))
    n, m = draw(sides), draw(sides)
    batch = draw(batch_shapes())
    core_a = {"vecdot": (n,), "matvec": (m, n), "vecmat": (n,)}[name]
    core_b = {"vecdot": (n,), "matvec": (n,), "vecmat": (n, m)}[name]
    shape_a = (*_broadcastable(draw, batch), *core_a)
    shape_b = (*_broadcastable(draw, batch), *core_b)
    a, ea = draw(dist_pairs(shape_a, draw(matmul_dtypes), max_blocks=3))
    b, eb = draw(dist_pairs(shape_b, draw(matmul_dtypes), max_blocks=3))
    return getattr(np, name), a, ea, b, eb


@given(vector_product_operands())
def test_vector_products_match_numpy(operands):
    ufunc, a, ea, b, eb = operands
    with mdarray.options(fallback="raise"):
        result = ufunc(a, b)
    assert_matches(result, ufunc(ea, eb))


def test_vecdot_axis_and_split_vectors():
    ea = np.arange(24.0).reshape(4, 6) * (1 + 1j)
    eb = np.arange(24.0).reshape(4, 6)
    layout = Layout.block(ea.shape, axis=1, devices=DEVICES)
    a = mdarray.distributed_array(ea, layout)
    b = mdarray.distributed_array(eb, layout)
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        result = mdarray.vecdot(a, b)
    assert moved.total == 0
    assert result.mode is (SUM if len(DEVICES) > 1 else mdarray.REPLICA)
    assert_dist_allclose(result, np.vecdot(ea, eb))
    assert_dist_allclose(mdarray.vecdot(a, b, axis=0), np.vecdot(ea, eb, axis=0))


@pytest.mark.parametrize(
    ("name", "shape_a", "shape_b"),
    [
        ("vecdot", (3,), (2,)),
        ("vecdot", (), (2,)),
        ("matvec", (3,), (3,)),
        ("vecmat", (2,), (3, 2)),
    ],
)
def test_vector_product_errors_like_numpy(name, shape_a, shape_b):
    ufunc = getattr(np, name)
    ea, eb = np.ones(shape_a), np.ones(shape_b)
    with pytest.raises(ValueError) as expected:  # noqa: PT011  (compared with NumPy's below)
        ufunc(ea, eb)
    a = mdarray.distributed_array(ea, Layout.block(shape_a, devices=DEVICES))
    with pytest.raises(ValueError) as got:  # noqa: PT011  (compared with NumPy's below)
        ufunc(a, eb)
    assert str(got.value) == str(expected.value)


# Errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape_a", "shape_b"),
    [
        ((2, 3), (2, 2)),
        ((3,), (2,)),
        ((4, 3), (2,)),
        ((2, 2, 3), (3, 3, 2)),
        ((), (2,)),
        ((2,), ()),
    ],
)
def test_matmul_errors_like_numpy(shape_a, shape_b):
    ea, eb = np.ones(shape_a), np.ones(shape_b)
    with pytest.raises(ValueError) as expected:  # noqa: PT011  (compared with NumPy's below)
        np.matmul(ea, eb)
    a = mdarray.distributed_array(ea, Layout.block(shape_a, devices=DEVICES))
    b = mdarray.distributed_array(eb, Layout.block(shape_b, devices=DEVICES))
    with pytest.raises(ValueError) as got:  # noqa: PT011  (compared with NumPy's below)
        np.matmul(a, b)
    if "matmul:" in str(expected.value):
        assert str(got.value) == str(expected.value)


# Modes ------------------------------------------------------------------------------


@given(
    st.sampled_from([(SUM, mdarray.REPLICA), (mdarray.REPLICA, SUM)]).flatmap(
        lambda modes: operand_pairs(*modes)
    )
)
def test_sum_times_replica_stays_sum_in_ring_arithmetic(pairs):
    # (sum_p A_p) @ B == sum_p (A_p @ B) and A @ (sum_q B_q) == sum_q (A @ B_q): each
    # partial multiplies where it lies, and the products are the result's partials. For
    # every value only in integers of the result's dtype: float copies meet 0 * inf and
    # overflow where the value does not, and casting int8 copies to int16 breaks their
    # wrapping, so those are combined first.
    a, ea, b, eb = pairs
    with mdarray.options(fallback="raise"):
        result = a @ b
    partial = a if a.mode is SUM else b
    ring = partial.dtype == result.dtype and result.dtype.kind in "iu"
    if ea.size and eb.size and result.size and ring:
        assert result.mode is SUM
    assert_matches(result, np.matmul(ea, eb))


@pytest.mark.parametrize(
    ("partial_dtype", "other"),
    [
        (np.int8, np.ones((1, 1), np.int16)),  # copies 100 and 100 hold -56 in int8
        (np.float64, np.array([[np.inf]])),  # an identity copy times inf is NaN
        (np.float64, np.array([[4.0]])),  # copies big and -big hold 0; times 4, inf - inf
    ],
)
def test_partial_operands_that_cannot_stay_partial_are_combined(partial_dtype, other):
    if partial_dtype == np.int8:
        copies = np.array([100, 100], np.int8)
    elif np.isinf(other).any():
        copies = np.array([3.0, 0.0])
    else:
        copies = np.array([1e308, -1e308])
    x = mdarray.distributed_array(
        copies.reshape(2, 1), Layout.block((2, 1), devices=DEVICES), "replica"
    )
    s = np.sum(x, axis=0, keepdims=True, dtype=partial_dtype)  # SUM mode, value copies.sum()
    want = copies.sum(dtype=partial_dtype).reshape(1, 1) @ other
    with mdarray.options(fallback="raise"), np.errstate(all="ignore"):
        np.testing.assert_array_equal((s @ other).get(), want)
        np.testing.assert_array_equal((other.T @ s.T).get(), want.T)


def test_sum_times_replicated_moves_nothing():
    ea = np.arange(24).reshape(4, 6)
    eb = np.arange(12).reshape(6, 2)
    a = mdarray.distributed_array(ea, Layout.grid(ea.shape, (2, 2), devices=DEVICES), SUM)
    b = mdarray.distributed_array(eb, Layout.replicated(eb.shape, DEVICES))
    with mdarray.count_transfers() as moved:
        result = a @ b
    assert moved.total == 0
    assert result.mode is SUM
    assert_dist_equal(result, ea @ eb)


# Lined-up blocks: no transfers ------------------------------------------------------


def test_seed_example_runs_locally():
    a = mdarray.distributed_array(
        np.arange(6).reshape(2, 3),
        mdarray.make_2d_index_map([0, 2], [0, 1, 3], [[{device(0)}, {device(1), device(2)}]]),
    )
    b = mdarray.distributed_array(
        np.arange(12).reshape(3, 4),
        mdarray.make_2d_index_map(
            [0, 1, 3], [0, 2, 4], [[{device(0)}, {device(0)}], [{device(1)}, {device(2)}]]
        ),
    )
    with mdarray.count_transfers() as moved:
        c = a @ b
    assert moved.total == 0
    assert c.mode is SUM
    assert_dist_equal(c, np.arange(6).reshape(2, 3) @ np.arange(12).reshape(3, 4))


@pytest.mark.parametrize("on_one_device", [True, False])
def test_2x2_blocks_multiply_locally(on_one_device):
    n = 16
    ea = np.arange(n * n, dtype=np.float32).reshape(n, n) % 7
    eb = np.arange(n * n, dtype=np.float32).reshape(n, n) % 5
    parts = [0, 6, n]
    if on_one_device:
        devices_a = devices_b = [[device(0)] * 2] * 2
    else:
        # a's block (i, k) on device 2i + k; b's block row k on the devices holding a's
        # column k, so every pair of blocks meets on a device.
        devices_a = [[{device(0)}, {device(1)}], [{device(2)}, {device(3)}]]
        devices_b = [[{device(0), device(2)}] * 2, [{device(1), device(3)}] * 2]
    a = mdarray.distributed_array(ea, mdarray.make_2d_index_map(parts, parts, devices_a))
    b = mdarray.distributed_array(eb, mdarray.make_2d_index_map(parts, parts, devices_b))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        c = a @ b
    assert moved.total == 0
    assert c.mode is SUM
    if on_one_device or len(DEVICES) >= 4:
        assert len(c.layout.chunks) == 8  # a product per pair of blocks, where it ran
    else:  # fewer devices than blocks: a device's products of one column block may join
        assert len(c.layout.chunks) <= 8
    assert_dist_allclose(c, ea @ eb)


def test_whole_contraction_gives_replica():
    ea = np.arange(20.0).reshape(4, 5)
    eb = np.arange(15.0).reshape(5, 3)
    a = mdarray.distributed_array(ea, Layout.block(ea.shape, devices=DEVICES))
    b = mdarray.distributed_array(eb, Layout.replicated(eb.shape, DEVICES))
    with mdarray.count_transfers() as moved:
        c = a @ b
    assert moved.total == 0
    assert c.mode is mdarray.REPLICA
    rows = {d: [(i[0], slice(None)) for i in idx] for d, idx in a.layout.index_map.items()}
    assert c.layout == Layout((4, 3), rows)
    assert_dist_equal(c, ea @ eb)


def test_batched_lined_up_blocks_multiply_locally():
    ea = np.arange(2 * 4 * 6, dtype=np.int64).reshape(2, 4, 6)
    eb = np.arange(6 * 3, dtype=np.int64).reshape(6, 3)
    # batch 0 on one device, batch 1 on another; b's row blocks match a's column blocks.
    a_map = merged(
        (0, [(0, slice(None), slice(0, 3)), (0, slice(None), slice(3, 6))]),
        (1, [(1, slice(None), slice(0, 3))]),
        (2, [(1, slice(None), slice(3, 6))]),
    )
    b_map = merged(
        (0, [(slice(0, 3),), (slice(3, 6),)]), (1, [(slice(0, 3),)]), (2, [(slice(3, 6),)])
    )
    a = mdarray.distributed_array(ea, a_map)
    b = mdarray.distributed_array(eb, b_map)
    with mdarray.count_transfers() as moved:
        c = a @ b
    assert moved.total == 0
    assert c.mode is SUM
    assert_dist_equal(c, ea @ eb)


# Planning: what travels ----------------------------------------------------------------


def test_small_operand_travels():
    ea = np.ones((64, 64), np.float32)
    eb = np.ones((64, 2), np.float32)
    a = mdarray.distributed_array(ea, Layout.block(ea.shape, devices=DEVICES))
    b = mdarray.distributed_array(eb, {device(0): ()})
    with mdarray.count_transfers() as moved:
        c = a @ b
    assert moved.total == (len(a.devices) - 1) * b.nbytes
    assert c.mode is mdarray.REPLICA
    assert_dist_equal(c, ea @ eb)


def test_mismatched_blocks_move_less_than_resharding():
    ea = np.ones((16, 16))
    eb = np.ones((16, 16))
    a = mdarray.distributed_array(ea, Layout.block(ea.shape, devices=DEVICES))
    b = mdarray.distributed_array(eb, Layout.block(eb.shape, devices=DEVICES))
    with mdarray.count_transfers() as moved:
        c = a @ b
    # Every device's block of rows meets every device's block of b's rows: b comes whole
    # beside each block of a (each device fetches the others' blocks of b), for a
    # REPLICA product in a's row blocks. Partial sums instead would have moved a quarter
    # of each of a's blocks, then 3/4 of the product to make it whole: more bytes.
    assert moved.total == (len(DEVICES) - 1) * b.nbytes
    assert c.mode is REPLICA
    assert c.layout == a.layout
    assert moved.total < 0.75 * a.nbytes + 3 * c.nbytes or len(DEVICES) == 1
    assert_dist_equal(c, ea @ eb)


@pytest.mark.parametrize("left", [False, True], ids=["A @ v", "v @ A.T"])
def test_a_small_operand_split_along_k_is_gathered_whole(left):
    """A matrix in row blocks (each holding k whole) times a vector split along k: the
    vector comes to each block whole (no strided sub-blocks, no partial sums), so the
    product is REPLICA, one chunk per block, and no more than the vector moves to each."""
    rng = np.random.default_rng(3)
    ea, ev = rng.standard_normal((8, 12)), rng.standard_normal(12)
    a = mdarray.distributed_array(ea, Layout.block(ea.shape, devices=DEVICES))
    v = mdarray.distributed_array(ev, Layout.block(ev.shape, devices=DEVICES[::-1]))
    if left:
        a = a.T
    with mdarray.count_transfers() as moved:
        c = v @ a if left else a @ v
    assert c.mode is mdarray.REPLICA
    assert len(c.layout.boxes) == len(a.layout.boxes)
    assert moved.total <= v.nbytes * len(DEVICES)
    assert_dist_allclose(c, ev @ ea.T if left else ea @ ev)


@given(st.data())
def test_products_with_an_operand_gathered_along_k_match_numpy(data):
    """Drawn layouts of a matrix and a small operand: where the matrix's blocks hold k
    whole and the other side splits it, the other side is gathered; NumPy's values."""
    rows, k = data.draw(st.integers(1, 9)), data.draw(st.integers(1, 7))
    small = data.draw(st.sampled_from([(k,), (k, 1), (k, 2)]))
    a = data.draw(mst.dist_arrays(np.float64, (rows, k), modes=mdarray.REPLICA))
    b = data.draw(mst.dist_arrays(np.float64, small, modes=mdarray.REPLICA))
    np.testing.assert_allclose((a @ b).get(), a.get() @ b.get())
    np.testing.assert_allclose((b.T @ a.T).get(), b.get().T @ a.get().T)


def test_overlapping_replica_layout_is_resharded():
    ea = np.arange(30.0).reshape(5, 6)
    eb = np.arange(12.0).reshape(6, 2)
    # Chunks [0:3] and [1:5] overlap; no subset of the chunks partitions the rows.
    layout = Layout((5, 6), merged((0, [(slice(0, 3),), (slice(1, 5),)]), (1, [(slice(1, 4),)])))
    a = mdarray.distributed_array(ea, layout)
    b = mdarray.distributed_array(eb, Layout.block(eb.shape, devices=DEVICES))
    assert_dist_equal(a @ b, ea @ eb)


@st.composite
def tensordot_operands(draw):
    """``(x1, v1, x2, v2, axes)``: operands of drawn layouts and modes whose contracted
    axes agree (an int `axes`, or two sequences in any order)."""
    shape_a = draw(mst.shapes(max_dims=3, max_side=3))
    k = draw(st.integers(0, len(shape_a)))
    free_b = draw(mst.shapes(max_dims=3 - k, max_side=3))
    dtype = draw(st.sampled_from(["float64", "int32", "complex128"]))
    if draw(st.booleans()):
        axes = k
        shape_b = shape_a[len(shape_a) - k :] + free_b
    else:
        axes_a = draw(st.permutations(range(len(shape_a))))[:k]
        axes_b = draw(st.permutations(range(k + len(free_b))))[:k]
        shape_b = [0] * (k + len(free_b))
        rest = iter(free_b)
        for a, b in zip(axes_a, axes_b):
            shape_b[b] = shape_a[a]
        shape_b = [n if b in axes_b else next(rest) for b, n in enumerate(shape_b)]
        negative = draw(st.booleans())
        axes = ([a - len(shape_a) if negative else a for a in axes_a], list(axes_b))
    x1, v1 = draw(dist_pairs(shape=shape_a, dtype=dtype))
    x2, v2 = draw(dist_pairs(shape=tuple(shape_b), dtype=dtype))
    return x1, v1, x2, v2, axes


@settings(max_examples=30)
@given(tensordot_operands())
def test_tensordot_matches_numpy(operands):
    x1, v1, x2, v2, axes = operands
    want = np.tensordot(v1, v2, axes=axes)
    with mdarray.options(fallback="raise"):
        assert_dist_equal(mdarray.tensordot(x1, x2, axes=axes), np.asarray(want))
        assert_dist_equal(np.tensordot(x1, v2, axes=axes), np.asarray(want))


def test_tensordot_errors_like_numpy():
    x = mdarray.asarray(np.ones((2, 3)))
    with mdarray.options(fallback="raise"):
        with pytest.raises(ValueError, match="shape-mismatch"):
            mdarray.tensordot(x, x, axes=([1], [1, 0]))
        with pytest.raises(ValueError, match="shape-mismatch"):
            mdarray.tensordot(x, x, axes=1)
        # Native: no gather, so no PerformanceWarning (warnings are errors in the run).
        assert_dist_equal(mdarray.tensordot(x, x.T, axes=1), np.full((2, 2), 3.0))


def test_repeated_products_stay_within_their_budget():
    """The Python calls of a repeated ``x @ w`` and ``x @ v`` (x in 4 row chunks), one
    device and spread over 4 (`tests/_call_counts.py`; budgets ~20% above the counts
    reached): on one device both are row bands (`_product_bands`: one kernel on the
    device's block; 186 and 149 calls before), over 4 a repeated product replays its plan
    (`_product_runs.runner`, v and w gathered onto each device: 316 and 285 calls before)."""
    host = np.random.default_rng(0).standard_normal((64, 16)).astype(np.float32)
    spread_over = len(DEVICES) > 1
    four = [DEVICES[k % len(DEVICES)] for k in range(4)]
    x = mdarray.distributed_array(host, Layout.block(host.shape, devices=four))
    v = mdarray.asarray(np.arange(16, dtype=np.float32), device=x.device)
    w = mdarray.asarray(np.ones((16, 8), np.float32), device=x.device)
    with mdarray.options(fallback="raise"):
        np.testing.assert_allclose((x @ v).get(), host @ np.arange(16), rtol=1e-5)
        assert calls(lambda: x @ v) <= (124 if spread_over else 24)
        assert calls(lambda: x @ w) <= (112 if spread_over else 24)


@pytest.mark.parametrize("on", [[0, 0, 0, 0], [0, 0, 1, 1]])
def test_transpose_of_row_chunks_times_a_vector_runs_per_device_block(on):
    # x.T @ r (a gradient): x.T's column chunks make no device block, x's rows do, so
    # the product runs as r @ x, by device blocks: on one device the result is whole
    # (REPLICA, one chunk) where chunk by chunk it would be four partial sums.
    rng = np.random.default_rng(3)
    hx, hr = rng.standard_normal((40, 6)), rng.standard_normal(40)
    rows = [(slice(10 * k, 10 * k + 10),) for k in range(4)]
    x = mdarray.distributed_array(
        hx, merged(*((d, [(r, slice(0, 6))]) for d, r in zip(on, [r[0] for r in rows])))
    )
    r = mdarray.distributed_array(hr, merged(*((d, [row]) for d, row in zip(on, rows))))
    got = x.T @ r
    assert_dist_allclose(got, hx.T @ hr, rtol=1e-12)
    if len({device(d) for d in on}) == 1:
        assert got.mode is mdarray.REPLICA
        assert len(got.layout.chunks) == 1
    assert_dist_allclose(np.matmul(x.T, hr), hx.T @ hr, rtol=1e-12)  # a host vector


def test_repeated_products_match_numpy_and_are_never_stale():
    """A repeated product replays what its first call decided (`_product_runs.runner`):
    every call equals NumPy's, the replay bit for bit the first call, and a call whose
    operands' layouts, modes, dtypes or values changed is never answered by a stale plan."""
    rng = np.random.default_rng(5)
    ha = rng.standard_normal((40, 24)).astype(np.float32)
    hv = rng.standard_normal(24).astype(np.float32)
    hu = rng.standard_normal(40).astype(np.float32)
    rows = Layout.block(ha.shape, devices=DEVICES)
    a = mdarray.distributed_array(ha, rows)
    v = mdarray.distributed_array(hv, Layout.block(hv.shape, devices=DEVICES))
    u = mdarray.distributed_array(hu, Layout.block(hu.shape, devices=DEVICES))
    b = mdarray.distributed_array(ha.T.copy(), Layout.block((24, 40), devices=DEVICES))
    with mdarray.options(fallback="raise"):
        for fn, want in [
            (lambda: a @ v, ha @ hv),
            (lambda: u @ a, hu @ ha),
            (lambda: a.T @ u, ha.T @ hu),
            (lambda: a @ b, ha @ ha.T),
            (lambda: b @ a, ha.T @ ha),
        ]:
            first, again = fn(), fn()
            assert_dist_allclose(first, want, rtol=1e-5, atol=1e-5)
            np.testing.assert_array_equal(again.get(), first.get())
            assert again.layout == first.layout
            assert again.mode is first.mode
        v[0] = 100.0  # a write into an operand
        hv[0] = 100.0
        assert_dist_allclose(a @ v, ha @ hv, rtol=1e-5, atol=1e-4)
        whole = v.reshard(Layout.replicated(hv.shape, devices=DEVICES))  # another layout
        assert_dist_allclose(a @ whole, ha @ hv, rtol=1e-5, atol=1e-4)
        assert_dist_allclose(a @ v.astype(np.float64), ha @ hv.astype(np.float64), rtol=1e-6)
        hi = rng.integers(-3, 4, (40, 24))
        ints = mdarray.distributed_array(hi, rows)
        iv = mdarray.distributed_array(hi[0].copy(), Layout.block((24,), devices=DEVICES))
        for mode in (mdarray.REPLICA, SUM):  # another mode (a SUM of ints stays SUM)
            x = ints.change_mode(mode)
            for _ in range(2):
                assert_dist_equal(x @ iv, hi @ hi[0])
