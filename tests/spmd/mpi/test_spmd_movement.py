"""Data movement across processes: reshard between drawn layouts, every mode change,
``get`` (also to one root), repr and str, ``distributed.print``, and bad input raising on
every process. Each result equals NumPy's on the same data, which every process builds."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import mdarray
from mdarray import MAX, MIN, PROD, REPLICA, SUM, distributed
from mdarray._movement import fetch as _fetch
from mdarray._spmd import transport as _transport
from mdarray.testing import strategies as mst

from ._spmd import (
    check_local_chunks,
    check_value,
    everywhere,
    raises_everywhere,
    rng,
    run,
    same_everywhere,
)

MODES = [REPLICA, SUM, PROD, MAX, MIN]
DTYPES = [np.float64, np.int32, np.bool_, np.complex128]


def devices():
    return mdarray.devices()


def overlapping_layout(shape):
    """Row blocks over every device of the run, one on the first device and one on the
    last device overlapping them (the last device is another process's for rank 0)."""
    rows = mdarray.Layout.block(shape, axis=0).index_map
    index_map = {d: list(indices) for d, indices in rows.items()}
    index_map[devices()[0]].append((slice(1, None, 2),))
    index_map[devices()[-1]].append((slice(None), slice(0, 2)))
    return mdarray.Layout(shape, index_map)


@st.composite
def arrays_and_layouts(draw, count=2, max_dims=3):
    """A NumPy array of small exact values, a mode it can hold, and `count` layouts of its
    shape over the run's devices (uneven, strided, overlapping, several chunks a device)."""
    shape = draw(mst.shapes(max_dims=max_dims, max_side=6))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    value = draw(hnp.arrays(dtype, shape, elements=mst.small_elements(dtype)))
    mode = draw(mst.modes(dtype))
    layouts = [draw(mst.layouts(shape)) for _ in range(count)]
    return value, mode, layouts


@given(arrays_and_layouts())
def test_reshard_between_drawn_layouts(case):
    value, mode, (source, target) = case
    x = mdarray.distributed_array(value, source, mode)
    y = run(lambda: x.reshard(target))
    everywhere(y.layout == target and y.mode == mode, f"{y.layout!r} {y.mode}")
    check_value(y, value, exact=True)
    if mode == REPLICA:
        check_local_chunks(y, value)


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_reshard_rows_to_columns(mode):
    value = rng().integers(-5, 6, size=(7, 6)).astype(np.float64)
    x = mdarray.distributed_array(value, mdarray.Layout.block(value.shape, axis=0), mode)
    cols = mdarray.Layout.block(value.shape, axis=1)
    y = run(lambda: x.reshard(cols))
    check_value(y, value, exact=True)
    back = run(lambda: y.reshard(overlapping_layout(value.shape)))
    check_value(back, value, exact=True)
    everywhere(back.mode == mode)


def one_part_per_process(shape, kind):
    """A layout giving each process one part, on its first device: blocks of rows in rank
    order or reversed, blocks of columns, or every n-th row."""
    firsts = first_devices()
    if kind == "columns":
        return mdarray.Layout.block(shape, axis=1, devices=firsts)
    if kind == "reversed rows":
        return mdarray.Layout.block(shape, axis=0, devices=firsts[::-1])
    if kind == "strided rows":
        n = len(firsts)
        return mdarray.Layout(shape, {d: [(slice(k, None, n),)] for k, d in enumerate(firsts)})
    return mdarray.Layout.block(shape, axis=0, devices=firsts)


def first_devices():
    """Each process's first device, in rank order."""
    per_process = len(distributed.local_devices())
    return list(devices()[::per_process])


@pytest.mark.parametrize("kind", ["rows", "reversed rows", "columns", "strided rows"])
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.complex128])
@pytest.mark.parametrize("mode", [SUM, PROD, MAX, MIN], ids=str)
def test_whole_partials_to_one_part_per_process(mode, dtype, kind):
    """Partial copies that each hold the whole array, resharded to one part per process:
    one MPI reduce-scatter (MPI's max and min only for integers; the parts packed in rank
    order), the general plan otherwise; the value either way."""
    if mode in (MAX, MIN) and dtype == np.complex128:
        pytest.skip("MAX and MIN are not defined for complex")
    value = rng().integers(-5, 6, size=(9, 7)).astype(dtype)
    x = mdarray.distributed_array(value, mdarray.Layout.replicated(value.shape), mode)
    target = one_part_per_process(value.shape, kind)
    combine = x.mode.ufunc(np, x.dtype)
    if distributed.size() > 1 and _transport.allreduce_op(combine, dtype) is not None:
        everywhere(_fetch.reduce_scattered(x.storage, combine, target) is not None)
    y = run(lambda: x.reshard(target))
    check_value(y, value, exact=True)
    everywhere(y.mode == mode and y.layout == target)
    total = run(lambda: mdarray.sum(y.change_mode(REPLICA), axis=0))
    check_value(run(lambda: total.reshard(mdarray.Layout.block(total.shape))), value.sum(0))


@pytest.mark.parametrize("target", MODES, ids=str)
@pytest.mark.parametrize("source", MODES, ids=str)
def test_every_mode_change(source, target):
    value = rng(1).integers(1, 4, size=(6, 5)).astype(np.int64)
    x = mdarray.distributed_array(value, overlapping_layout(value.shape), source)
    y = run(lambda: x.change_mode(target))
    everywhere(y.mode == target and y.layout == x.layout, f"{y.mode} {y.layout!r}")
    check_value(y, value, exact=True)
    if target == REPLICA:
        check_local_chunks(y, value)


@given(arrays_and_layouts(count=1), st.data())
def test_change_mode_drawn(case, data):
    value, mode, (layout,) = case
    target = data.draw(mst.modes(value.dtype))
    y = run(lambda: mdarray.distributed_array(value, layout, mode).change_mode(target))
    everywhere(y.mode == target, str(y.mode))
    check_value(y, value, exact=True)


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_get_to_each_root(mode):
    value = rng(2).integers(-3, 4, size=(5, 4)).astype(np.float32)
    x = mdarray.distributed_array(value, overlapping_layout(value.shape), mode)
    for root in range(distributed.size()):
        got = run(lambda root=root: x.get(root=root))
        if distributed.rank() == root:
            ok = isinstance(got, np.ndarray) and got.dtype == value.dtype
            ok = ok and np.array_equal(got, value)
        else:
            ok = got is None
        everywhere(ok, f"root {root}: this process got {got!r}")


def test_get_of_zero_d_and_empty():
    scalar = mdarray.distributed_array(np.float64(2.5), {devices()[-1]: ()})
    check_value(scalar, np.float64(2.5), exact=True)
    empty = np.zeros((0, 3))
    check_value(mdarray.distributed_array(empty, mdarray.Layout.block((0, 3), axis=1)), empty)


@pytest.mark.parametrize("mode", [REPLICA, SUM], ids=str)
def test_repr_and_str(mode):
    value = np.arange(12.0).reshape(3, 4)
    x = mdarray.distributed_array(value, overlapping_layout(value.shape), mode)
    text = np.array2string(value, separator=", ", prefix="DistArray(")
    shown = repr(x)
    same_everywhere(shown)
    everywhere(shown.startswith(f"DistArray({text}, dtype=float64, mode={mode}, "), shown)
    shown = str(x)  # the values as NumPy prints them, on every process
    same_everywhere(shown)
    everywhere(shown == str(value), shown)


def test_distributed_print(capsys):
    value = np.arange(6).reshape(2, 3)
    x = mdarray.distributed_array(value, mdarray.Layout.block(value.shape, axis=1))
    text = str(x)  # collective: every process gathers the values
    for root in {0, distributed.size() - 1}:
        distributed.print(x, "end", root=root)
        out = capsys.readouterr().out
        want = f"{text} end\n" if distributed.rank() == root else ""
        everywhere(out == want, f"root {root} printed {out!r}")


def test_a_device_that_is_not_in_the_run_raises_everywhere():
    value = np.arange(4.0)
    missing = len(devices())
    raises_everywhere(ValueError, mdarray.distributed_array, value, {missing: ()})
    raises_everywhere(ValueError, mdarray.Layout, value.shape, {-1: ()})
    x = mdarray.distributed_array(value, {devices()[-1]: ()})
    raises_everywhere(ValueError, x.reshard, {missing: ()})
    check_value(x, value)  # every process is still in step


def test_reshard_to_another_shape_raises_everywhere():
    x = mdarray.distributed_array(np.arange(6.0), mdarray.Layout.block((6,), axis=0))
    raises_everywhere(ValueError, x.reshard, mdarray.Layout.block((3,), axis=0))
    raises_everywhere(IndexError, x.reshard, {devices()[0]: (slice(0, 3), slice(0, 1))})
    check_value(x, np.arange(6.0))


@pytest.mark.parametrize("root", [-1, "size", 1.0, True, "0"])
def test_bad_root_raises_everywhere(root):
    x = mdarray.distributed_array(np.arange(3), {devices()[-1]: ()})
    root = distributed.size() if root == "size" else root
    raises_everywhere(ValueError, x.get, root=root)
    check_value(x, np.arange(3))


def test_bad_mode_raises_everywhere():
    x = mdarray.distributed_array(np.ones(4, complex), mdarray.Layout.block((4,), axis=0))
    raises_everywhere(ValueError, x.change_mode, "bogus")
    raises_everywhere(TypeError, x.change_mode, MAX)
    raises_everywhere(TypeError, mdarray.distributed_array, np.ones(4, complex), {0: ()}, MIN)
    check_value(x, np.ones(4, complex))
