"""Positions and bits (`mdarray._ops.creation.index_arithmetic`) against NumPy on the same data,
under ``fallback="raise"``, on several layouts and drawn ones."""

import numpy as np
import pytest
from _layouts import LAYOUT_NAMES, dist_pairs, on_layout
from _oracle import native_like_numpy
from hypothesis import given, settings, strategies as st

RNG = np.random.default_rng(4)
N = RNG.integers(0, 24, size=(5, 3))
K = RNG.integers(0, 3, size=(3, 7))
X = np.concatenate([RNG.normal(size=10), [np.nan, np.inf, 0.0]])
BITS = RNG.integers(0, 2, size=(5, 11)).astype(bool)
BYTES = RNG.integers(0, 256, size=(3, 4)).astype(np.uint8)
EDGES = np.array([-1.0, 0, 0, 1])

CASES = {
    "unravel_index": (lambda i: np.unravel_index(i, (2, 3, 4)), [N]),
    "unravel_index F": (lambda i: np.unravel_index(i, (4, 6), order="F"), [N]),
    "unravel_index bounds": (lambda i: np.unravel_index(i, (4, 5)), [N]),
    "unravel_index negative": (lambda i: np.unravel_index(i - 3, (4, 6)), [N]),
    "unravel_index floats": (lambda i: np.unravel_index(i, (4, 6)), [N * 1.0]),
    "unravel_index int shape": (lambda i: np.unravel_index(i, 30), [N]),
    "ravel_multi_index": (lambda a, b: np.ravel_multi_index((a, b), (4, 6)), [N % 4, N % 6]),
    "ravel_multi_index F": (
        lambda a, b: np.ravel_multi_index((a, b), (4, 6), order="F"),
        [N % 4, N % 6],
    ),
    "ravel_multi_index bounds": (lambda a, b: np.ravel_multi_index((a, b), (4, 6)), [N, N]),
    "ravel_multi_index modes": (
        lambda a, b: np.ravel_multi_index((a, b), (4, 6), mode=("wrap", "clip")),
        [N - 5, N],
    ),
    "ravel_multi_index broadcast": (
        lambda a, b: np.ravel_multi_index((a, b[0]), (24, 24)),
        [N, N],
    ),
    "ravel_multi_index host": (lambda a: np.ravel_multi_index((a, [1, 2, 3]), (24, 4)), [N]),
    "ravel_multi_index count": (lambda a: np.ravel_multi_index((a,), (4, 6)), [N % 4]),
    "lexsort": (np.lexsort, [K]),
    "lexsort keys": (lambda a, b: np.lexsort((a, b)), [K[0], K[1]]),
    "lexsort axis 0": (lambda a, b: np.lexsort((a, b), axis=0), [K.T.copy(), K.T % 2]),
    "lexsort floats": (lambda a, b: np.lexsort((a, b)), [X, (X > 0).astype(int)]),
    "lexsort shapes": (lambda a, b: np.lexsort((a, b)), [K[0], K[1, :3]]),
    "digitize": (np.digitize, [X, EDGES]),
    "digitize right": (lambda x, b: np.digitize(x, b, right=True), [X, EDGES]),
    "digitize decreasing": (np.digitize, [X, EDGES[::-1].copy()]),
    "digitize host bins": (lambda x: np.digitize(x, [0.0, 1.0]), [X]),
    "digitize not monotonic": (np.digitize, [X, np.array([1.0, 0, 2])]),
    "digitize 2-d bins": (np.digitize, [X, np.ones((2, 2))]),
    "digitize empty bins": (np.digitize, [X, np.array([])]),
    "digitize complex": (np.digitize, [X + 1j, EDGES]),
    "digitize ints": (np.digitize, [N, np.array([3, 10, 20])]),
    "packbits": (np.packbits, [BITS]),
    "packbits axis 1": (lambda a: np.packbits(a, axis=1), [BITS]),
    "packbits little": (lambda a: np.packbits(a, axis=0, bitorder="little"), [BITS.astype(int)]),
    "packbits floats": (np.packbits, [BITS * 1.0]),
    "packbits order": (lambda a: np.packbits(a, bitorder="middle"), [BITS]),
    "unpackbits": (np.unpackbits, [BYTES]),
    "unpackbits axis 1": (lambda a: np.unpackbits(a, axis=1), [BYTES]),
    "unpackbits count": (
        lambda a: np.unpackbits(a, axis=0, count=-3, bitorder="little"),
        [BYTES],
    ),
    "unpackbits pad": (lambda a: np.unpackbits(a, axis=1, count=40), [BYTES]),
    "unpackbits too few": (lambda a: np.unpackbits(a, axis=1, count=-40), [BYTES]),
    "unpackbits ints": (np.unpackbits, [BYTES.astype(int)]),
}


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("case", list(CASES))
def test_index_arithmetic_matches_numpy(case, layout):
    call, arguments = CASES[case]
    native_like_numpy(call, *(on_layout(a, layout) for a in arguments))


@settings(max_examples=25)
@given(data=st.data())
def test_drawn_positions_keys_and_bits(data):
    shape = data.draw(st.sampled_from([(6,), (3, 4), (2, 3, 2)]))
    size = int(np.prod(shape))
    flat, _ = data.draw(dist_pairs(shape=(5,), dtype=np.int64, elements=st.integers(0, size - 1)))
    native_like_numpy(lambda i: np.unravel_index(i, shape), flat)
    a, _ = data.draw(dist_pairs(shape=(7,), dtype=np.int16, elements=st.integers(-2, 2)))
    b, _ = data.draw(dist_pairs(shape=(7,), dtype=np.float64, elements=st.integers(-2, 2)))
    native_like_numpy(lambda p, q: np.lexsort((p, q)), a, b)
    native_like_numpy(lambda v: np.digitize(v, [-1.0, 0.5, 1.0]), b)
    bits, _ = data.draw(dist_pairs(shape=shape, dtype=np.bool_))
    axis = data.draw(st.sampled_from([None, 0, -1]))
    native_like_numpy(lambda v: np.unpackbits(np.packbits(v, axis=axis), axis=axis), bits)
