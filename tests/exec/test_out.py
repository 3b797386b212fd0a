"""``out=`` has NumPy's semantics in every op family: the result is written through
``out``'s buffers, so views of ``out`` see it, and arrays that share buffers with ``out``
(copy on write) do not."""

import numpy as np
import pytest
from _layouts import device, devices, distinct
from hypothesis import given, strategies as st

import mdarray
from mdarray import Layout
from mdarray.testing import assert_dist_allclose, assert_dist_equal

X = np.arange(1.0, 25.0).reshape(4, 6)
ROWS = Layout.block((4, 6), axis=0, devices=devices(0, 1))
COLUMNS = Layout.block((4, 6), axis=1, devices=devices(0, 1))

# name -> (call writing into `out`, NumPy's result, the shape of out)
FAMILIES = {
    "ufunc": (lambda x, out: np.add(x, 1.0, out=out), X + 1.0, (4, 6)),
    "ufunc with where": (
        lambda x, out: np.negative(x, out=out, where=X > 10),
        np.where(X > 10, -X, 0.0),
        (4, 6),
    ),
    "ufunc.reduce": (lambda x, out: np.add.reduce(x, axis=0, out=out), X.sum(axis=0), (6,)),
    "sum": (lambda x, out: np.sum(x, axis=0, out=out), X.sum(axis=0), (6,)),
    "max": (lambda x, out: np.max(x, axis=1, out=out), X.max(axis=1), (4,)),
    "mean": (lambda x, out: np.mean(x, axis=0, out=out), X.mean(axis=0), (6,)),
    "var": (lambda x, out: np.var(x, axis=0, out=out), X.var(axis=0), (6,)),
    "std": (lambda x, out: np.std(x, axis=1, out=out), X.std(axis=1), (4,)),
    "cumsum": (lambda x, out: np.cumsum(x, axis=0, out=out), X.cumsum(axis=0), (4, 6)),
    "ufunc.accumulate": (
        lambda x, out: np.multiply.accumulate(x, axis=1, out=out),
        np.multiply.accumulate(X, axis=1),
        (4, 6),
    ),
    "argmax": (
        lambda x, out: np.argmax(x, axis=0, out=out),
        X.argmax(axis=0),
        (6,),
    ),
    "matmul": (lambda x, out: np.matmul(x, x.T, out=out), X @ X.T, (4, 4)),
    "clip": (lambda x, out: np.clip(x, 3.0, 9.0, out=out), np.clip(X, 3.0, 9.0), (4, 6)),
    "round": (lambda x, out: np.round(x / 7, 1, out=out), np.round(X / 7, 1), (4, 6)),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("x_layout", [ROWS, COLUMNS], ids=["rows", "columns"])
@pytest.mark.parametrize("out_mode", ["replica", "sum"])
def test_out_writes_through_views(family, x_layout, out_mode):
    call, want, shape = FAMILIES[family]
    x = mdarray.distributed_array(X, x_layout)
    out_layout = Layout.block(shape, axis=len(shape) - 1, devices=devices(0, 1))
    if out_mode == "sum":
        out_layout = Layout.replicated(shape, devices=distinct(0, 1))
    out = mdarray.distributed_array(np.zeros(shape, want.dtype), out_layout, out_mode)
    view = out[1:]  # a view: writes through out reach it, as with NumPy
    with mdarray.options(fallback="raise"), np.errstate(all="ignore"):
        got = call(x, out)
    assert got is out
    assert out.layout == out_layout
    assert out.mode is mdarray.as_mode(out_mode)
    assert_dist_allclose(out, want)
    assert_dist_allclose(view, want[1:])


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_out_leaves_arrays_sharing_its_buffers_alone(family):
    """An array that shares ``out``'s buffers (a mode change that copied nothing) keeps
    its value: ``out``'s shared buffers are copied before the write."""
    call, want, shape = FAMILIES[family]
    x = mdarray.distributed_array(X, ROWS)
    out = mdarray.distributed_array(
        np.zeros(shape, want.dtype), Layout.block(shape, devices=devices(0, 1))
    )
    other = out.change_mode("max")
    with mdarray.options(fallback="raise"), np.errstate(all="ignore"):
        call(x, out)
    assert_dist_allclose(out, want)
    assert_dist_equal(other, np.zeros(shape, want.dtype))


def test_out_copies_buffers_shared_with_another_array():
    """A reshard that keeps a chunk shares its buffer; writing the result into one of the
    two arrays leaves the other as it was."""
    x = mdarray.distributed_array(X, ROWS)
    index_map = {d: list(indices) for d, indices in ROWS.index_map.items()}
    index_map.setdefault(device(2), []).append((slice(0, 4), slice(0, 6)))
    y = x.reshard(Layout((4, 6), index_map))  # keeps both row chunks of x
    with mdarray.options(fallback="raise"):
        np.multiply(y, 2.0, out=y)
        np.sum(mdarray.distributed_array(X, COLUMNS), axis=0, keepdims=True, out=x[:1])
    assert_dist_equal(y, X * 2)
    expected = X.copy()
    expected[:1] = X.sum(axis=0)
    assert_dist_equal(x, expected)


def test_a_failed_out_write_changes_nothing():
    x = mdarray.distributed_array(X, ROWS)
    out = mdarray.distributed_array(np.zeros(6, np.int8), Layout.block((6,), devices=devices(0, 1)))
    with pytest.raises(TypeError, match="Cannot cast"):
        np.add(x[0], x[1], out=out)
    with pytest.raises(ValueError, match="shape"):
        np.sum(x, axis=1, out=mdarray.zeros(6))
    assert_dist_equal(out, np.zeros(6, np.int8))


@given(st.sampled_from(["sum", "prod", "max", "min"]), st.sampled_from(["rows", "columns"]))
def test_partial_results_written_into_out_of_another_mode(mode, split):
    """A partial result written into ``out`` of any mode gives ``out`` its value."""
    x = mdarray.distributed_array(X, ROWS if split == "rows" else COLUMNS)
    func = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[mode]
    out = mdarray.distributed_array(np.zeros(6), Layout.replicated((6,), distinct(0, 1)))
    with mdarray.options(fallback="raise"):
        func(x, axis=0, out=out)
    assert out.mode is mdarray.REPLICA
    assert_dist_allclose(out, func(X, axis=0))
