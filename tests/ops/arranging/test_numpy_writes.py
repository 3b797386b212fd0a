"""NumPy's writers (`mdarray._ops.arranging.numpy_writes`) against NumPy on the same data, under
``fallback="raise"``: the same writes into the array (several layouts and modes), the
same errors, and nothing written where a call fails."""

import numpy as np
import pytest
from _layouts import LAYOUT_NAMES, dist_pairs, on_layout
from _oracle import native_like_numpy
from hypothesis import given, settings, strategies as st

import mdarray

H = np.arange(24.0).reshape(6, 4) - 7.5

# name -> (call, arguments): the call writes into its first argument.
CASES = {
    "put": (lambda a: np.put(a, [0, 5, -1, 5], [7.0, 8.0]), [H]),
    "put clip": (lambda a: np.put(a, [0, 50, -10], [7.0, 8.0], mode="clip"), [H]),
    "put wrap": (lambda a: np.put(a, np.array([0, 50, -10]), 3.5, mode="wrap"), [H]),
    "put out of range": (lambda a: np.put(a, [0, 50], [7.0, 8.0]), [H]),
    "put empty values": (lambda a: np.put(a, [0], []), [H]),
    "put into ints": (lambda a: np.put(a, [1, 2], [2.7, -1.5]), [H.astype(np.int32)]),
    "put overflow": (lambda a: np.put(a, [1], 1000), [np.arange(4, dtype=np.int8)]),
    "put distarray values": (lambda a, v: np.put(a, [3, 1, 3], v), [H, np.array([1.0, 2.0])]),
    "putmask": (lambda a: np.putmask(a, a > 3, [1.0, 2.0, 3.0]), [H]),
    "putmask distarray": (lambda a, v: np.putmask(a, v > 0, v), [H, H[::-1].copy()]),
    "putmask size": (lambda a: np.putmask(a, [True, False], 1.0), [H]),
    "putmask empty": (lambda a: np.putmask(a, a > 3, []), [H]),
    "place": (lambda a: np.place(a, a > 3, [1.0, 2.0, 3.0]), [H]),
    "place ints mask": (lambda a, m: np.place(a, m, [9.5]), [H, (H > 0).astype(int)]),
    "place empty": (lambda a: np.place(a, a > 3, []), [H]),
    "place size": (lambda a: np.place(a, [True], [1.0]), [H]),
    "copyto": (lambda a: np.copyto(a, np.arange(4)), [H]),
    "copyto distarray": (np.copyto, [H, H[::-1].copy()]),
    "copyto where": (lambda a: np.copyto(a, 3.5, where=a > 5), [H]),
    "copyto where distarray": (lambda a, b: np.copyto(a, b, where=b < 0), [H, H[::-1].copy()]),
    "copyto cast": (lambda a: np.copyto(a, np.arange(4) + 1j), [H]),
    "copyto unsafe": (
        lambda a: np.copyto(a, np.arange(4) + 0.7, casting="unsafe"),
        [H.astype(int)],
    ),
    "copyto shape": (lambda a: np.copyto(a, np.arange(3.0)), [H]),
    "copyto where ints": (lambda a: np.copyto(a, 1.0, where=np.ones(4, int)), [H]),
    "copyto overflow": (lambda a: np.copyto(a, 300, casting="unsafe"), [H.astype(np.uint8)]),
    "fill_diagonal": (lambda a: np.fill_diagonal(a, 9.0), [H]),
    "fill_diagonal wrap": (lambda a: np.fill_diagonal(a, [1.0, 2.0], wrap=True), [H]),
    "fill_diagonal wide": (lambda a: np.fill_diagonal(a, -1.0), [np.ascontiguousarray(H.T)]),
    "fill_diagonal cube": (lambda a: np.fill_diagonal(a, 9.0), [np.zeros((3, 3, 3))]),
    "fill_diagonal 1-d": (lambda a: np.fill_diagonal(a, 9.0), [H[0]]),
    "fill_diagonal unequal": (lambda a: np.fill_diagonal(a, 9.0), [np.zeros((3, 2, 3))]),
    "put_along_axis": (
        lambda a: np.put_along_axis(a, np.argsort(a, axis=1)[:, :2], -1.0, axis=1),
        [H],
    ),
    "put_along_axis 0": (
        lambda a: np.put_along_axis(a, np.array([[1, 0, 2, 5]]), np.array([[1.0, 2, 3, 4]]), 0),
        [H],
    ),
    "put_along_axis None": (lambda a: np.put_along_axis(a, np.array([0, 7]), 5.0, None), [H]),
    "put_along_axis None values": (
        lambda a: np.put_along_axis(a, np.array([0, 7, -1]), np.array([1.0, 2.0]), None),
        [H],
    ),
    "put_along_axis None bounds": (lambda a: np.put_along_axis(a, np.array([30]), 5.0, None), [H]),
    "put_along_axis values": (
        lambda a: np.put_along_axis(a, np.zeros((6, 1), int), np.array([1.0, 2.0, 3.0]), 1),
        [H],
    ),
    "put_along_axis negative": (lambda a: np.put_along_axis(a, np.array([[-1]]), 5.0, 1), [H]),
    "put_along_axis bounds": (lambda a: np.put_along_axis(a, np.array([[4]]), 5.0, 1), [H]),
    "put_along_axis ndim": (lambda a: np.put_along_axis(a, np.array([1]), 5.0, 1), [H]),
    "put_along_axis floats": (lambda a: np.put_along_axis(a, np.array([[1.0]]), 5.0, 1), [H]),
}


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("case", list(CASES))
def test_writes_match_numpy(case, layout):
    call, arguments = CASES[case]
    native_like_numpy(call, *(on_layout(a.copy(), layout) for a in arguments))


@settings(max_examples=25)
@given(data=st.data())
@pytest.mark.parametrize(
    "call",
    [
        lambda a, b: np.put(a, [0, -1, 2], b[:2].ravel()),
        lambda a, b: np.putmask(a, b > 0, b),
        lambda a, b: np.place(a, b > 0, [-1.0, -2.0]),
        lambda a, b: np.copyto(a, b, where=b > 1),
        lambda a, b: np.fill_diagonal(a, b[:1].ravel()),
        lambda a, b: np.put_along_axis(a, np.zeros((1, *a.shape[1:]), int), 9.0, axis=0),
    ],
    ids=["put", "putmask", "place", "copyto", "fill_diagonal", "put_along_axis"],
)
def test_writes_on_drawn_layouts_and_modes(call, data):
    shape = data.draw(st.sampled_from([(3, 3), (4, 2), (2, 5)]))
    x, _ = data.draw(dist_pairs(shape=shape, dtype=np.float64))
    y, _ = data.draw(dist_pairs(shape=shape, dtype=np.float64))
    view = x[1:]
    before = x.get()
    native_like_numpy(call, x, y)
    want = before.copy()
    call(want, y.get())
    np.testing.assert_array_equal(view.get(), want[1:])  # views see the write


def test_a_failed_write_moves_nothing_and_changes_nothing():
    x = on_layout(H.copy(), "rows")
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        with pytest.raises(IndexError):
            np.put(x, [0, 100], [1.0, 2.0])
        with pytest.raises(TypeError):
            np.copyto(x, np.ones(4, complex))
    assert not moved.bytes
    np.testing.assert_array_equal(x.get(), H)
