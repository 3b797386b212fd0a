"""Manipulation, selection and scans across processes, on the native path: transposes,
reshapes, flips, rolls, joins, splits, repeats, broadcasting, ``where``, ``clip``,
``diff``, ``cumsum``, ``gradient``, ``convolve``, ``cross``, ``partition``, ``take``,
``take_along_axis``, ``x[mask]``, ``x[integers]``, ``nonzero``, ``pad``, diagonals and
triangles. Each case is one function that NumPy and a DistArray both take (the DistArray
through its protocols), run with ``fallback="raise"`` (a function without a
multi-process implementation raises instead of gathering), and compared with NumPy on
the same data."""

import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import mdarray
from mdarray.testing import strategies as mst

from ._spmd import check_value, everywhere, raises_everywhere, run
from .test_spmd_operations import LAYOUTS, SHAPE, layouts, value


def _fix(x):
    with warnings.catch_warnings():  # np.fix is deprecated from NumPy 2.5
        warnings.simplefilter("ignore", DeprecationWarning)
        return np.fix(x)


# name -> function of one array (of SHAPE), the same code for NumPy and for a DistArray.
CASES = {
    "transpose": np.transpose,
    "T": lambda x: x.T,
    "permute_dims": lambda x: np.transpose(np.expand_dims(x, 1), (2, 0, 1)),
    "matrix_transpose": np.matrix_transpose,
    "swapaxes": lambda x: np.swapaxes(x, 0, 1),
    "moveaxis": lambda x: np.moveaxis(np.expand_dims(x, 0), 0, -1),
    "expand_dims": lambda x: np.expand_dims(x, (0, 2)),
    "squeeze": lambda x: np.squeeze(np.expand_dims(x, 1), axis=1),
    "flip": np.flip,
    "flip axis": lambda x: np.flip(x, 1),
    "reshape rows": lambda x: np.reshape(x, (3, 2, 5)),
    "reshape across chunks": lambda x: np.reshape(x, (5, 6)),
    "reshape -1": lambda x: x.reshape(-1, 3),
    "reshape F": lambda x: np.reshape(x, (10, 3), order="F"),
    "ravel": np.ravel,
    "flatten": lambda x: x.flatten(),
    "roll flat": lambda x: np.roll(x, 7),
    "roll axes": lambda x: np.roll(x, (1, -3), axis=(0, 1)),
    "roll one axis": lambda x: np.roll(x, 4, axis=1),
    "roll repeated axis": lambda x: np.roll(x, (2, 5), axis=(0, 0)),
    "broadcast_to": lambda x: np.broadcast_to(x, (2, *SHAPE)),
    "broadcast_arrays": lambda x: np.broadcast_arrays(x[:, :1], x[:1]),
    "concatenate": lambda x: np.concatenate([x, np.flip(x, 0)], axis=1),
    "concatenate flat": lambda x: np.concatenate([x, x[1:3]], axis=None),
    "stack": lambda x: np.stack([x, 2 * x], axis=1),
    "vstack": lambda x: np.vstack([x, x[0]]),
    "hstack": lambda x: np.hstack([x, x[:, :2]]),
    "column_stack": lambda x: np.column_stack([x[:, 0], x]),
    "split": lambda x: np.split(x, [2, 5]),
    "array_split": lambda x: np.array_split(x, 3, axis=1),
    "unstack": lambda x: np.unstack(x, axis=1),
    "tile": lambda x: np.tile(x, (2, 1, 2)),
    "repeat": lambda x: np.repeat(x, 2, axis=0),
    "repeat flat": lambda x: np.repeat(x, 3),
    "repeat each": lambda x: np.repeat(x, [1, 0, 2, 1, 3], axis=1),
    "where": lambda x: np.where(x > 0, x, -2 * x),
    "where scalars": lambda x: np.where(x < 2, 1.5, x),
    "clip": lambda x: np.clip(x, -2, 3),
    "clip one bound": lambda x: np.clip(x, None, 1),
    "count_nonzero": lambda x: np.count_nonzero(x > 1, axis=0),
    "diff": np.diff,
    "diff axis 0, n 2": lambda x: np.diff(x, n=2, axis=0),
    "diff prepend": lambda x: np.diff(x, axis=0, prepend=0.0, append=x[:1]),
    "cumsum": lambda x: np.cumsum(x, axis=0),
    "cumsum cols": lambda x: np.cumsum(x, axis=1),
    "cumsum flat": np.cumsum,
    "cumprod": lambda x: np.cumprod(x, axis=0),
    "cumulative_sum": lambda x: np.cumulative_sum(x, axis=0, include_initial=True),
    "diagonal": lambda x: np.diagonal(x, 1),
    "trace": lambda x: np.trace(x, -1),
    "linalg.diagonal": lambda x: np.linalg.diagonal(np.stack([x, -x])),
    "linalg.trace": lambda x: np.linalg.trace(x, offset=2),
    "diag": np.diag,
    "diag of a vector": lambda x: np.diag(x[:, 1], 2),
    "take": lambda x: np.take(x, [4, 0, 4, 2, 5], axis=0),
    "take cols": lambda x: np.take(x, np.array([3, -1, 0]), axis=1),
    "take flat": lambda x: np.take(np.ravel(x), [7, 29, 0, 8, 9]),
    "take by a distarray": lambda x: np.take(x, np.argmax(x, axis=0), axis=0),
    "mask": lambda x: x[x > 0],
    "row mask": lambda x: x[np.sum(x, axis=1) > 0],
    "host mask": lambda x: x[np.arange(30).reshape(SHAPE) % 3 == 1],
    "mask of another layout": lambda x: x[np.reshape(np.ravel(x), (5, 6)).T > 1],
    "empty mask": lambda x: x[x > 10],
    "nonzero": lambda x: np.nonzero(x > 1),
    "nonzero none": lambda x: np.nonzero(x > 10),
    "argwhere": lambda x: np.argwhere(x < 0),
    "extract": lambda x: np.extract(x > 0, -x),
    "compress": lambda x: np.compress(np.array([1, 0, 1, 1, 0], bool), x, axis=1),
    "take_along_axis": lambda x: np.take_along_axis(x, np.argsort(x, axis=1), axis=1),
    "take_along_axis 0": lambda x: np.take_along_axis(
        x, np.argmax(x, axis=0, keepdims=True), axis=0
    ),
    "gradient": np.gradient,
    "gradient edge order 2": lambda x: np.gradient(x, 0.5, axis=0, edge_order=2),
    "convolve": lambda x: np.convolve(np.ravel(x), np.array([1.0, -2.0, 0.5])),
    "convolve same": lambda x: np.convolve(np.ravel(x), np.ravel(x)[:4], mode="same"),
    "convolve valid": lambda x: np.convolve(np.ravel(x), [2.0, 1.0], mode="valid"),
    "cross": lambda x: np.cross(x[:, :3], x[:, 2:]),
    "partition": lambda x: np.take(np.partition(x, 2, axis=1), [2], axis=1),
    "partition of a column": lambda x: np.take(np.partition(x[:, 1], 3), [3]),
    "argpartition": lambda x: np.take_along_axis(
        x, np.take(np.argpartition(x, 1, axis=0), [1], axis=0), axis=0
    ),
    "index by integers": lambda x: x[np.array([4, 0, 4, 2])],
    "index columns by integers": lambda x: x[:, [3, 1, -1]],
    "index after an ellipsis": lambda x: x[..., np.array([0, 0])],
    "pad constant": lambda x: np.pad(x, ((1, 2), (0, 3)), constant_values=7),
    "pad edge": lambda x: np.pad(x, 2, mode="edge"),
    "pad reflect": lambda x: np.pad(x, ((3, 1), (2, 2)), mode="reflect"),
    "pad symmetric": lambda x: np.pad(x, 1, mode="symmetric"),
    "pad wrap": lambda x: np.pad(x, ((2, 4), (1, 0)), mode="wrap"),
    "tril": lambda x: np.tril(x, 1),
    "triu": lambda x: np.triu(x, -1),
    # NumPy functions made of distributed operations (mdarray._ops.arranging.numpy_compositions)
    "fliplr": np.fliplr,
    "flipud": np.flipud,
    "rot90": lambda x: np.rot90(x, 3),
    "rollaxis": lambda x: np.rollaxis(np.expand_dims(x, 0), 2),
    "hsplit": lambda x: np.hsplit(x, [1, 3]),
    "vsplit": lambda x: np.vsplit(x, [2]),
    "dstack": lambda x: np.dstack([x, x]),
    "append": lambda x: np.append(x, x[:2], axis=0),
    "diagflat": lambda x: np.diagflat(x[:, 1], 1),
    "flatnonzero": lambda x: np.flatnonzero(x > 0),
    "ediff1d": lambda x: np.ediff1d(x, to_begin=[0.5]),
    "angle fix sinc": lambda x: np.angle(x) + _fix(x) + np.sinc(x),
    "isposinf isneginf": lambda x: np.isposinf(np.where(x > 0, np.inf, x)) & ~np.isneginf(x),
    "iscomplex isreal": lambda x: np.iscomplex(x) | np.isreal(x),
    "nan_to_num": lambda x: np.nan_to_num(np.where(x > 0, np.nan, np.where(x < -1, -np.inf, x))),
    "union1d": lambda x: np.union1d(x[0], x[1]),
    "setxor1d": lambda x: np.setxor1d(np.round(x[0]), np.round(x[1])),
    "intersect1d": lambda x: np.intersect1d(np.round(x), np.round(x[2])),
    "setdiff1d": lambda x: np.setdiff1d(np.round(x), np.round(x[1])),
    "sort_complex": lambda x: np.sort_complex(x[:, 0]),
    "triu_indices_from": lambda x: np.triu_indices_from(x[:, :4], 1),
}


def check_result(got, want) -> None:
    """A DistArray result, or a tuple or list of them, equals NumPy's `want`."""
    if isinstance(want, (tuple, list)):
        everywhere(
            isinstance(got, (tuple, list)) and len(got) == len(want),
            f"expected {len(want)} arrays, got {type(got).__name__}",
        )
        for g, w in zip(got, want):
            check_value(g, w, exact=True)
    else:
        check_value(got, want, exact=True)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_native_against_numpy(layout, case):
    a = value(20)
    function = CASES[case]
    x = mdarray.distributed_array(a, layouts()[layout])
    check_result(run(lambda: function(x), native=True), function(a))


@pytest.mark.parametrize(
    "case",
    [
        "transpose",
        "reshape across chunks",
        "roll axes",
        "stack",
        "diag of a vector",
        "triu",
        "take",
    ],
)
@pytest.mark.parametrize("mode", ["sum", "max"])
def test_partial_modes_stay_native(mode, case):
    a = value(21)
    function = CASES[case]
    x = mdarray.distributed_array(a, layouts()["overlapping"], mode)
    check_result(run(lambda: function(x), native=True), function(a))


def test_namespace_functions_run_natively():
    a, b = value(22), value(23)
    x = mdarray.distributed_array(a, layouts()["grid"])
    y = mdarray.distributed_array(b, layouts()["cols"], "sum")
    check_value(lambda: mdarray.permute_dims(x, (1, 0)), a.T, native=True)
    check_value(lambda: mdarray.reshape(x, (15, 2)), a.reshape(15, 2), native=True)
    check_value(lambda: mdarray.roll(x, 3, axis=0), np.roll(a, 3, axis=0), native=True)
    check_value(lambda: mdarray.concat([x, y], axis=0), np.concatenate([a, b]), native=True)
    check_value(lambda: mdarray.stack([x, y], axis=2), np.stack([a, b], axis=2), native=True)
    check_value(lambda: mdarray.where(x > y, x, y), np.where(a > b, a, b), native=True)
    check_value(lambda: mdarray.clip(x, -1.0, 2.0), np.clip(a, -1.0, 2.0), native=True)
    check_value(lambda: mdarray.flip(y, axis=0), np.flip(b, axis=0), native=True)
    check_value(lambda: mdarray.tile(y, (1, 2)), np.tile(b, (1, 2)), native=True)
    check_value(lambda: mdarray.diff(y, axis=0), np.diff(b, axis=0), native=True)
    check_value(
        lambda: mdarray.cumulative_sum(y, axis=1), np.cumulative_sum(b, axis=1), native=True
    )


@given(st.data())
def test_drawn_layouts_and_modes(data):
    shape = data.draw(mst.shapes(min_dims=1, max_dims=3, max_side=5))
    a = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(-9, 9)))
    x = mdarray.distributed_array(a, data.draw(mst.layouts(shape)), data.draw(mst.modes()))
    axis = data.draw(st.integers(0, len(shape) - 1))
    shift = data.draw(st.integers(-7, 7))
    check_value(lambda: np.roll(x, shift, axis=axis), np.roll(a, shift, axis=axis), native=True)
    check_value(lambda: np.roll(x, shift), np.roll(a, shift), native=True)
    order = data.draw(st.permutations(range(len(shape))))
    check_value(lambda: np.transpose(x, order), np.transpose(a, order), native=True)
    check_value(lambda: np.flip(x, axis), np.flip(a, axis), native=True)
    new_shape = data.draw(st.sampled_from([(-1,), (a.size, 1), (1, *shape[::-1])]))
    check_value(lambda: np.reshape(x, new_shape), a.reshape(new_shape), native=True)
    check_value(
        lambda: np.concatenate([x, -x], axis=axis), np.concatenate([a, -a], axis=axis), native=True
    )
    check_value(lambda: np.cumsum(x, axis=axis), np.cumsum(a, axis=axis), native=True)
    check_value(lambda: np.diff(x, axis=axis), np.diff(a, axis=axis), native=True)


def test_bad_input_raises_everywhere():
    x = mdarray.distributed_array(value(24), layouts()["overlapping"])
    raises_everywhere(ValueError, np.reshape, x, (7, 4))
    raises_everywhere(ValueError, np.concatenate, [x, x[:, :2]], axis=0)
    raises_everywhere(ValueError, np.roll, x, (1, 2, 3), axis=(0, 1))
    raises_everywhere(ValueError, np.broadcast_to, x, (6, 6))
    raises_everywhere(ValueError, np.diff, x, n=-1)
    raises_everywhere(IndexError, np.take, x, [6], axis=0)
    beyond = np.zeros((6, 1), np.intp)
    beyond[0, 0] = 9  # read by the chunks holding row 0 only
    raises_everywhere(IndexError, np.take_along_axis, x, beyond, axis=1)
