"""tensordot, dot, inner, vdot, outer and einsum against NumPy, native (fallback="raise")
over drawn layouts and modes; what they move against matmul's movement."""

import numpy as np
import pytest
from _layouts import dist_pairs
from _oracle import assert_matches
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray import SUM, Layout
from mdarray.testing import assert_dist_equal, strategies as mst

DEVICES = mdarray.devices()
DTYPES = st.sampled_from(["float64", "float32", "int32", "int8", "complex128", "bool"])


def sides(max_side=3):
    return st.integers(0, max_side)


@st.composite
def operands(draw, shape_a, shape_b, same_dtype=False):
    dtype_a = draw(DTYPES)
    dtype_b = dtype_a if same_dtype else draw(DTYPES)
    x, v = draw(dist_pairs(shape=tuple(shape_a), dtype=dtype_a))
    y, w = draw(dist_pairs(shape=tuple(shape_b), dtype=dtype_b))
    return x, v, y, w


@st.composite
def dot_operands(draw):
    """Operands of every case of NumPy's dot: scalar, 1-D, 2-D, N-D by 1-D, N-D by M-D."""
    ndim_a, ndim_b = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    k = draw(sides())
    shape_a = [draw(sides()) for _ in range(ndim_a)]
    shape_b = [draw(sides()) for _ in range(ndim_b)]
    if ndim_a and ndim_b:
        shape_a[-1] = k
        shape_b[-1 if ndim_b == 1 else -2] = k
    return draw(operands(shape_a, shape_b))


@settings(max_examples=60, deadline=None)
@given(dot_operands())
def test_dot_matches_numpy(data):
    x, v, y, w = data
    want = np.dot(v, w)
    with mdarray.options(fallback="raise"):
        assert_matches(np.dot(x, y), want)
        assert_matches(mdarray.dot(x, w), want)


@st.composite
def inner_operands(draw):
    ndim_a, ndim_b = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    k = draw(sides())
    shape_a = [draw(sides()) for _ in range(ndim_a)]
    shape_b = [draw(sides()) for _ in range(ndim_b)]
    if ndim_a and ndim_b:
        shape_a[-1] = shape_b[-1] = k
    return draw(operands(shape_a, shape_b))


@settings(max_examples=40, deadline=None)
@given(inner_operands())
def test_inner_matches_numpy(data):
    x, v, y, w = data
    with mdarray.options(fallback="raise"):
        assert_matches(np.inner(x, y), np.inner(v, w))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_vdot_and_outer_match_numpy(data):
    shape_a = data.draw(mst.shapes(max_dims=2, max_side=4))
    size = int(np.prod(shape_a))
    shape_b = data.draw(st.sampled_from([(size,), shape_a[::-1], shape_a]))
    x, v, y, w = data.draw(operands(shape_a, shape_b))
    with mdarray.options(fallback="raise"):
        assert_matches(np.vdot(x, y), np.vdot(v, w))
        assert_matches(np.outer(x, y), np.outer(v, w))
        assert_matches(mdarray.linalg.outer(np.ravel(x), np.ravel(y)), np.outer(v, w))


def test_dot_errors_and_out_like_numpy():
    a = mdarray.asarray(np.ones((2, 3)))
    with mdarray.options(fallback="raise"):
        with pytest.raises(ValueError, match=r"shapes \(2, 3\) and \(2, 3\) not aligned"):
            np.dot(a, a)
        with pytest.raises(ValueError, match="not aligned"):
            np.inner(a, np.ones(2))
        with pytest.raises(ValueError, match="different lengths"):
            np.vdot(a, np.ones(5))
        out = mdarray.asarray(np.zeros((2, 2)))
        assert np.dot(a, a.T, out=out) is out
        assert_dist_equal(out, np.full((2, 2), 3.0))
        with pytest.raises(ValueError, match="output array is not acceptable"):
            np.dot(a, a.T, out=mdarray.asarray(np.zeros((2, 2), np.float32)))


# einsum ----------------------------------------------------------------------------

# subscripts -> operand shapes from sizes i, j, k, b
EINSUMS = {
    "ij,jk->ik": lambda i, j, k, b: ((i, j), (j, k)),
    "ij,ij->i": lambda i, j, k, b: ((i, j), (i, j)),
    "ij->j": lambda i, j, k, b: ((i, j),),
    "ij->ji": lambda i, j, k, b: ((i, j),),
    "ij->": lambda i, j, k, b: ((i, j),),
    "i,i->": lambda i, j, k, b: ((i,), (i,)),
    "ij,j->i": lambda i, j, k, b: ((i, j), (j,)),
    "bij,bjk->bik": lambda i, j, k, b: ((b, i, j), (b, j, k)),
    "ij,kj->ki": lambda i, j, k, b: ((i, j), (k, j)),
    "ij,jk": lambda i, j, k, b: ((i, j), (j, k)),
    "ijk,jb->bki": lambda i, j, k, b: ((i, j, k), (j, b)),
    "i,j->ij": lambda i, j, k, b: ((i,), (j,)),
    "ij,jk,kb->ib": lambda i, j, k, b: ((i, j), (j, k), (k, b)),
    "i,ij,j->": lambda i, j, k, b: ((i,), (i, j), (j,)),
    "bi,bj,bk->kjb": lambda i, j, k, b: ((b, i), (b, j), (b, k)),
    "...ij,...jk->...ik": lambda i, j, k, b: ((b, i, j), (b, j, k)),
    "...i,...i->...": lambda i, j, k, b: ((b, i), (b, i)),
    "ij...,jk->ik...": lambda i, j, k, b: ((i, j, b), (j, k)),
    "...ij,jk": lambda i, j, k, b: ((b, i, j), (j, k)),
    "i...->...": lambda i, j, k, b: ((i, j, b),),
}


@pytest.mark.parametrize("subscripts", list(EINSUMS))
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_einsum_matches_numpy(subscripts, data):
    sizes = [data.draw(st.integers(0, 4)) for _ in range(4)]
    shapes = EINSUMS[subscripts](*sizes)
    dtype = data.draw(DTYPES)
    pairs = [data.draw(dist_pairs(shape=s, dtype=dtype)) for s in shapes]
    want = np.einsum(subscripts, *(v for _, v in pairs))
    with mdarray.options(fallback="raise"):
        assert_matches(np.einsum(subscripts, *(x for x, _ in pairs)), want)
        assert_matches(mdarray.einsum(subscripts, *(x for x, _ in pairs)), want)


def test_einsum_out_and_other_subscripts():
    value = np.arange(12.0).reshape(3, 4)
    x = mdarray.distributed_array(value, Layout.block(value.shape, devices=DEVICES))
    out = mdarray.asarray(np.zeros(4))
    with mdarray.options(fallback="raise"):
        assert np.einsum("ij->j", x, out=out) is out
        assert_dist_equal(out, value.sum(axis=0))
        same = np.einsum("ij", x)  # a view of x, as NumPy's
        assert same is not x
        same[0, 0] = -1.0
        assert float(x[0, 0]) == -1.0
        x[0, 0] = value[0, 0]
        with pytest.raises(TypeError, match=r"numpy\.einsum"):
            np.einsum("ii->i", x[:, :3])  # a diagonal: explicitly the fallback
    with pytest.warns(mdarray.PerformanceWarning, match=r"numpy\.einsum"):
        assert_dist_equal(np.einsum("ii->i", x[:, :3]), np.diagonal(value[:, :3]))


def test_einsum_moves_what_matmul_moves():
    """``einsum("ij,jk->ik")`` is matmul: blocks that line up move nothing, and the
    result is the partial sum of the split contracted axis."""
    ea = np.arange(24.0).reshape(4, 6)
    eb = np.arange(18.0).reshape(6, 3)
    a = mdarray.distributed_array(ea, Layout.block(ea.shape, axis=1, devices=DEVICES))
    b = mdarray.distributed_array(eb, Layout.block(eb.shape, axis=0, devices=DEVICES))
    with mdarray.options(fallback="raise"):
        with mdarray.count_transfers() as by_matmul:
            want = a @ b
        with mdarray.count_transfers() as by_einsum:
            got = np.einsum("ij,jk->ik", a, b)
        with mdarray.count_transfers() as by_tensordot:
            via_tensordot = np.tensordot(a, b, axes=1)
        with mdarray.count_transfers() as by_dot:
            via_dot = np.dot(a, b)
    assert by_einsum.total == by_matmul.total == by_tensordot.total == by_dot.total == 0
    for result in (got, via_tensordot, via_dot):
        assert result.mode is want.mode
        assert result.mode is (SUM if len(DEVICES) > 1 else mdarray.REPLICA)
        assert_dist_equal(result, ea @ eb)


@pytest.mark.parametrize("axis", [0, 1])
def test_elementwise_then_sum_moves_nothing(axis):
    """``einsum("ij,ij->i")`` (a batched matmul of aligned blocks) and ``vdot`` (a product
    and a native sum) of operands on one layout: nothing moves."""
    value = np.arange(24.0).reshape(4, 6)
    layout = Layout.block(value.shape, axis=axis, devices=DEVICES)
    x = mdarray.distributed_array(value, layout)
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        rows = np.einsum("ij,ij->i", x, x)
        total = np.vdot(x, x)
        columns = np.einsum("ij->j", x)
    assert moved.total == 0
    assert_dist_equal(rows, np.einsum("ij,ij->i", value, value))
    assert_dist_equal(columns, value.sum(axis=0))
    assert float(total) == np.vdot(value, value)


def test_tensordot_of_higher_rank_moves_nothing_for_lined_up_blocks():
    """The merged free axes are whole in every chunk, so the reshapes are views of the
    chunks and the matmul's blocks line up: nothing moves, and the result is SUM."""
    ea = np.arange(48.0).reshape(2, 3, 8)
    eb = np.arange(40.0).reshape(8, 5)
    a = mdarray.distributed_array(ea, Layout.block(ea.shape, axis=2, devices=DEVICES))
    b = mdarray.distributed_array(eb, Layout.block(eb.shape, axis=0, devices=DEVICES))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        result = np.tensordot(a, b, axes=1)
        via_einsum = np.einsum("ijk,kl->ijl", a, b)
    assert moved.total == 0
    assert result.mode is (SUM if len(DEVICES) > 1 else mdarray.REPLICA)
    assert_dist_equal(result, np.tensordot(ea, eb, axes=1))
    assert_dist_equal(via_einsum, np.tensordot(ea, eb, axes=1))


def test_the_blocks_of_replica_chunks_nested_in_one_another():
    """REPLICA chunks where one lies inside another (the other operand laid out beside
    each chunk of a SUM operand whose chunks nest, as hypothesis found for ``dot``): the
    product's blocks take the larger chunk, whatever the chunks' order."""
    from mdarray._ops.linalg.linear_algebra_functions import _blocks  # noqa: PLC0415

    inner, outer = (slice(0, 1), slice(0, 1)), (slice(0, 2), slice(0, 1))
    for index_map in ({1: [inner], 0: [outer]}, {0: [outer], 1: [inner]}):
        layout = Layout((2, 1), index_map)
        k = layout.boxes.index((range(2), range(1)))
        assert _blocks(layout, False) == (((range(2), range(1)), (k,)),)
    crossed = Layout((3,), {0: [slice(0, 2)], 1: [slice(1, 3)]})  # no partition exists
    assert _blocks(crossed, False) is None
