"""Operations across processes: elementwise ufuncs and operators between arrays of
different layouts, reductions, matmul, and indexing get and set. Each result equals NumPy's
on the same data (every process builds it)."""

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import mdarray
from mdarray import REPLICA, distributed
from mdarray.testing import strategies as mst

from ._spmd import check_value, everywhere, raises_everywhere, rng, run

SHAPE = (6, 5)


def value(seed=0, shape=SHAPE, dtype=np.float64):
    """Small integers (exact in any order of summation), none zero (prod, division)."""
    draw = rng(seed).integers(1, 5, size=shape) * rng(seed + 100).choice([-1, 1], size=shape)
    return draw.astype(dtype)


def layouts(shape=SHAPE):
    """Layouts over the run's devices: row and column blocks, a 2 x 2 grid, and one with
    several chunks per device and overlaps spanning processes."""
    devices = mdarray.devices()
    overlapping = {d: list(i) for d, i in mdarray.Layout.block(shape, axis=1).index_map.items()}
    overlapping[devices[0]].append((slice(1, None, 2),))
    overlapping[devices[-1]].append((slice(0, 3), slice(1, 4)))
    return {
        "rows": mdarray.Layout.block(shape, axis=0),
        "cols": mdarray.Layout.block(shape, axis=1),
        "grid": mdarray.Layout(shape, grid_map(shape)),
        "overlapping": mdarray.Layout(shape, overlapping),
    }


def grid_map(shape):
    """2 x 2 blocks, one on each of the first and last devices of each process pair."""
    devices = mdarray.devices()
    corners = [[devices[0], devices[len(devices) // 2]], [devices[-1], devices[len(devices) // 3]]]
    m, n = shape
    return mdarray.make_2d_index_map([0, m // 2, m], [0, n // 2, n], corners)


LAYOUTS = ["rows", "cols", "grid", "overlapping"]
BINARY = [np.add, np.subtract, np.multiply, np.maximum, np.less, np.equal, np.true_divide]


@pytest.mark.parametrize("ufunc", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize(("first", "second"), [("rows", "cols"), ("grid", "overlapping")])
def test_binary_ufunc_between_layouts(ufunc, first, second):
    a, b = value(0), value(1)
    x = mdarray.distributed_array(a, layouts()[first])
    y = mdarray.distributed_array(b, layouts()[second])
    check_value(lambda: ufunc(x, y), ufunc(a, b))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_operators_and_unary_ufuncs(layout):
    a, b = value(2), value(3)
    x = mdarray.distributed_array(a, layouts()[layout], "sum")
    y = mdarray.distributed_array(b, layouts()["rows"])
    check_value(lambda: x * 2 + 1, a * 2 + 1)
    check_value(lambda: -x, -a)
    check_value(lambda: x @ y.T, a @ b.T)
    check_value(lambda: abs(x) ** 2 - y, abs(a) ** 2 - b)
    check_value(lambda: np.sin(x), np.sin(a))
    check_value(lambda: x > y, a > b)


@given(st.data())
def test_elementwise_on_drawn_layouts(data):
    shape = data.draw(mst.shapes(max_dims=3, max_side=5))
    a = data.draw(hnp.arrays(np.float64, shape, elements=st.integers(-9, 9).map(float)))
    b = data.draw(hnp.arrays(np.float64, shape, elements=st.integers(-9, 9).map(float)))
    x = mdarray.distributed_array(a, data.draw(mst.layouts(shape)), data.draw(mst.modes()))
    y = mdarray.distributed_array(b, data.draw(mst.layouts(shape)), data.draw(mst.modes()))
    check_value(lambda: x * y - x, a * b - a, exact=True)
    check_value(lambda: np.maximum(x, y), np.maximum(a, b), exact=True)


def test_broadcasting_between_layouts():
    a, row = value(4), value(5, shape=(SHAPE[1],))
    x = mdarray.distributed_array(a, layouts()["grid"])
    r = mdarray.distributed_array(row, {mdarray.devices()[-1]: ()})
    check_value(lambda: x + r, a + row)
    check_value(lambda: r * x, row * a)


REDUCTIONS = [np.sum, np.prod, np.max, np.min, np.mean]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("func", REDUCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_reduction(layout, func, axis, keepdims):
    a = value(6)
    x = mdarray.distributed_array(a, layouts()[layout])
    result = run(lambda: func(x, axis=axis, keepdims=keepdims))
    want = func(a, axis=axis, keepdims=keepdims)
    check_value(result, want)
    # The result's mode (partial where the reduced axis was split) holds the same value.
    check_value(lambda: result.change_mode(REPLICA), want)


@pytest.mark.parametrize("func", REDUCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["sum", "prod", "max", "min"])
def test_reduction_of_a_partial_array(func, mode):
    a = value(7)
    x = mdarray.distributed_array(a, layouts()["overlapping"], mode)
    check_value(lambda: func(x, axis=0), func(a, axis=0))
    check_value(lambda: func(x), func(a))


@given(st.data())
def test_sum_on_drawn_layouts(data):
    shape = data.draw(mst.shapes(min_dims=1, max_dims=3, max_side=5))
    a = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(-9, 9)))
    x = mdarray.distributed_array(a, data.draw(mst.layouts(shape)), data.draw(mst.modes()))
    axis = data.draw(st.none() | st.integers(0, len(shape) - 1))
    check_value(lambda: np.sum(x, axis=axis), np.sum(a, axis=axis), exact=True)
    if a.size:
        check_value(lambda: mdarray.max(x, axis=axis), np.max(a, axis=axis), exact=True)


def test_matmul_of_2x2_blocks():
    devices = mdarray.devices()
    a, b = value(8, shape=(4, 6)), value(9, shape=(6, 5))
    other = devices[len(devices) // 2]  # on another process than device 0 when there is one
    x = mdarray.distributed_array(
        a,
        mdarray.make_2d_index_map(
            [0, 2, 4], [0, 3, 6], [[devices[0], other], [other, devices[-1]]]
        ),
    )
    y = mdarray.distributed_array(
        b,
        mdarray.make_2d_index_map(
            [0, 3, 6], [0, 2, 5], [[other, devices[0]], [devices[-1], other]]
        ),
    )
    check_value(lambda: x @ y, a @ b, exact=True)
    check_value(lambda: np.matmul(x, y), a @ b, exact=True)


@pytest.mark.parametrize(("first", "second"), [("rows", "cols"), ("grid", "overlapping")])
def test_matmul_between_layouts(first, second):
    a, b = value(10), value(11)
    x = mdarray.distributed_array(a, layouts()[first])
    y = mdarray.distributed_array(b.T.copy(), mdarray.Layout.block(b.T.shape, axis=0))
    check_value(lambda: x @ y, a @ b.T, exact=True)
    z = mdarray.distributed_array(b, layouts()[second])
    check_value(lambda: x.T @ z, a.T @ b, exact=True)


def indices():
    mask = value(12) > 0
    return {
        "slices": (slice(1, 5), slice(None, None, 2)),
        "negative step": (slice(None, None, -2), slice(4, 0, -1)),
        "int": (3,),
        "ints": (-1, 2),
        "int and slice": (slice(2, None), 1),
        "ellipsis": (Ellipsis, 0),
        "mask": (mask,),
        "row mask": (mask[:, 0],),
        "int array": (np.array([4, 0, 4, 2]),),
        "int arrays": (np.array([0, 5, 3]), np.array([4, 0, 1])),
        "array and slice": (slice(None), np.array([[3, 1], [0, 0]])),
    }


INDICES = list(indices())


@pytest.mark.parametrize("key", INDICES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_getitem(layout, key):
    a = value(13)
    index = indices()[key]
    x = mdarray.distributed_array(a, layouts()[layout])
    got = run(lambda: x[index])
    want = a[index]
    if isinstance(got, mdarray.DistArray):
        check_value(got, want, exact=True)
    else:
        everywhere(np.array_equal(got, want) and np.ndim(got) == np.ndim(want), repr(got))


@pytest.mark.parametrize("key", INDICES)
@pytest.mark.parametrize("layout", ["grid", "overlapping"])
def test_setitem_scalar_and_array(layout, key):
    a = value(14)
    index = indices()[key]
    x = mdarray.distributed_array(a, layouts()[layout])
    run(lambda: x.__setitem__(index, 7.0))
    a[index] = 7.0
    check_value(x, a, exact=True)
    new = value(15, shape=a[index].shape)
    run(lambda: x.__setitem__(index, new))
    a[index] = new
    check_value(x, a, exact=True)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_setitem_from_a_distarray_of_another_layout(layout):
    a, b = value(16), value(17, shape=(3, SHAPE[1]))
    x = mdarray.distributed_array(a, layouts()[layout])
    y = mdarray.distributed_array(b, mdarray.Layout.block(b.shape, axis=1), "sum")
    run(lambda: x.__setitem__(slice(1, 4), y))
    a[1:4] = b
    check_value(x, a, exact=True)


@given(st.data())
def test_getitem_of_drawn_slices(data):
    shape = data.draw(mst.shapes(min_dims=1, max_dims=3, max_side=6))
    a = np.arange(np.prod(shape), dtype=np.int64).reshape(shape)
    x = mdarray.distributed_array(a, data.draw(mst.layouts(shape)), data.draw(mst.modes()))
    index = data.draw(hnp.basic_indices(shape, allow_newaxis=False, allow_ellipsis=True))
    check_value(lambda: x[index], a[index], exact=True)


def test_indexing_errors_raise_everywhere():
    x = mdarray.distributed_array(value(18), layouts()["overlapping"])
    raises_everywhere(IndexError, x.__getitem__, (SHAPE[0], 0))
    raises_everywhere(IndexError, x.__getitem__, (0, 0, 0))
    raises_everywhere(ValueError, x.__setitem__, (slice(None),), np.ones(3))
    check_value(x, value(18))


def test_reductions_agree_with_one_process_for_every_layout_of_the_run():
    """Every process holds the same reduction value, and it equals NumPy's: nothing is
    counted once per process."""
    a = value(19)
    for layout in layouts().values():
        x = mdarray.distributed_array(a, layout)
        total = run(lambda x=x: mdarray.sum(x).get())
        everywhere(float(total) == float(a.sum()), f"{total} on {distributed.rank()}")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_in_place_writes_and_copies_across_processes(layout):
    """``x += y`` over several devices computes new slabs and commits them on every
    process; ``copy.copy``/``copy.deepcopy`` copy each process's own chunks; pickling is
    refused on every process (each holds only its part)."""
    a, b = value(20), value(21)
    x = mdarray.distributed_array(a, layouts()[layout])
    view = x[1:]
    deep, shallow = copy.deepcopy(x), copy.copy(x)
    run(lambda: x.__iadd__(mdarray.distributed_array(b, layouts()["rows"])))
    check_value(x, a + b, exact=True)
    check_value(view, (a + b)[1:], exact=True)
    check_value(deep, a, exact=True)
    check_value(shallow, a, exact=True)
    raises_everywhere(TypeError, pickle.dumps, x)


def test_iterate_runs_its_loop_on_every_process():
    """`mdarray.iterate` in an SPMD run: the loop as written on every process (a
    reduction that combines across processes in each iteration), NumPy's values."""
    a = value(0)
    x = mdarray.distributed_array(a, layouts()["rows"])

    def body(v, s):
        return v * 0.5 + 1.0, s + mdarray.sum(v)

    got, total = mdarray.iterate(body, (x, mdarray.sum(x)), 6)
    want, want_total = a, a.sum()
    for _ in range(6):
        want, want_total = want * 0.5 + 1.0, want_total + want.sum()
    check_value(got, want)
    check_value(total, want_total)
