"""Arrays built from pieces (`mdarray._ops.arranging.insertions`) against NumPy on the same data,
under ``fallback="raise"``, on several layouts and drawn ones."""

import numpy as np
import pytest
from _layouts import LAYOUT_NAMES, dist_pairs, on_layout
from _oracle import native_like_numpy
from hypothesis import given, settings, strategies as st

H = np.arange(24.0).reshape(6, 4)
Z = np.zeros((5, 6))
Z[1:3, 2:5] = 1

CASES = {
    "delete": (lambda a: np.delete(a, [0, 2, -1]), [H]),
    "delete slice": (lambda a: np.delete(a, slice(1, 4, 2), axis=0), [H]),
    "delete mask": (lambda a: np.delete(a, np.array([True, False, True, False]), axis=1), [H]),
    "delete bounds": (lambda a: np.delete(a, 9, axis=1), [H]),
    "delete distarray index": (lambda a, i: np.delete(a, i, axis=0), [H, np.array([1, 3])]),
    "insert": (lambda a: np.insert(a, 2, 7.5), [H]),
    "insert row": (lambda a: np.insert(a, 1, [1, 2, 3, 4], axis=0), [H]),
    "insert column": (lambda a: np.insert(a, 1, [1, 2, 3, 4, 5, 6], axis=1), [H]),
    "insert one of a list": (
        lambda a: np.insert(a, [1], [[1], [2], [3], [4], [5], [6]], axis=1),
        [H],
    ),
    "insert many": (lambda a: np.insert(a, [1, 1, 3, -1], 9, axis=1), [H]),
    "insert slice": (lambda a: np.insert(a, slice(0, 3), [7, 8, 9], axis=0), [H]),
    "insert distarray": (lambda a: np.insert(a, 2, a[0], axis=0), [H]),
    "insert bounds": (lambda a: np.insert(a, 9, 1, axis=1), [H]),
    "insert overflow": (lambda a: np.insert(a, 1, 1000), [np.arange(4, dtype=np.int8)]),
    "insert cast": (lambda a: np.insert(a, 1, 2.75), [np.arange(4)]),
    "trim_zeros": (np.trim_zeros, [Z]),
    "trim_zeros front axis 1": (lambda a: np.trim_zeros(a, "f", axis=1), [Z]),
    "trim_zeros back": (lambda a: np.trim_zeros(a, "B"), [np.array([0, 0, 1, 2, 0])]),
    "trim_zeros all zero": (np.trim_zeros, [np.zeros((3, 4))]),
    "trim_zeros no axes": (lambda a: np.trim_zeros(a, axis=()), [Z]),
    "trim_zeros bad trim": (lambda a: np.trim_zeros(a, "x"), [Z]),
    "block": (lambda a, b: np.block([[a, b], [b, a]]), [H[:2, :2], H[2:4, :2]]),
    "block 1-d": (lambda a, b: np.block([a, b, 1.0]), [H[0], H[1]]),
    "block with host": (lambda a: np.block([[a], [np.ones((1, 4), np.float32)]]), [H]),
    "block deeper than leaves": (lambda a: np.block([[[a]]]), [H[0]]),
    "block of one array": (np.block, [H]),
    "block depths": (lambda a: np.block([[a], a]), [H]),
    "block empty list": (lambda a: np.block([a, []]), [H]),
    "block tuple": (lambda a: np.block([a, (a,)]), [H]),
    "block shapes": (lambda a: np.block([a, a[:2]]), [H]),
    "kron": (np.kron, [H[:2, :3], H[:3, :2]]),
    "kron 1-d 2-d": (np.kron, [H[0], H[:2, :3].astype(int)]),
    "kron 3-d": (np.kron, [H.reshape(2, 3, 4), H[:2, :2]]),
    "kron scalar": (lambda a: np.kron(a, 2), [H]),
    "kron host": (lambda a: np.kron(np.eye(2), a), [H]),
}


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("case", list(CASES))
def test_insertions_match_numpy(case, layout):
    call, arguments = CASES[case]
    native_like_numpy(call, *(on_layout(a, layout) for a in arguments))


@settings(max_examples=25)
@given(data=st.data())
def test_drawn_insertions(data):
    shape = data.draw(st.sampled_from([(5,), (3, 4), (4, 2, 3)]))
    dtype = data.draw(st.sampled_from([np.float64, np.int32, np.bool_]))
    x, _ = data.draw(dist_pairs(shape=shape, dtype=dtype))
    y, _ = data.draw(dist_pairs(shape=shape[-1:], dtype=dtype))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    where = data.draw(st.lists(st.integers(-2, 2), max_size=3))
    native_like_numpy(lambda a: np.delete(a, where, axis=axis), x)
    native_like_numpy(lambda a: np.insert(a, where, 1, axis=axis), x)
    native_like_numpy(lambda a: np.insert(a, 1, 0), x)
    native_like_numpy(np.trim_zeros, x)
    native_like_numpy(lambda a, b: np.block([a, b]) if a.ndim == 1 else np.block([[a], [a]]), x, y)
    native_like_numpy(np.kron, y, x)
