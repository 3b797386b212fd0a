"""``linspace``, ``logspace`` and ``geomspace`` with DistArray endpoints
(`mdarray._ops.creation.ranges`) against NumPy on the same endpoints, under ``fallback="raise"``."""

import numpy as np
import pytest
from _layouts import LAYOUT_NAMES, dist_pairs, on_layout
from _oracle import native_like_numpy
from hypothesis import given, settings, strategies as st

RNG = np.random.default_rng(6)
S = RNG.normal(size=(3, 4))
E = RNG.normal(size=(3, 4)) * 5

CASES = {
    "linspace": (np.linspace, [S, E]),
    "linspace scalar stop": (lambda a: np.linspace(a, 7, 9, axis=1), [S]),
    "linspace open": (
        lambda a, b: np.linspace(a, b, 6, endpoint=False, axis=-1, retstep=True),
        [S, E],
    ),
    "linspace ints": (
        lambda a, b: np.linspace(a, b, 5, dtype=int),
        [np.arange(4), np.arange(4) * 10 - 7],
    ),
    "linspace float32": (lambda a: np.linspace(a, 1, 5), [S.astype(np.float32)]),
    "linspace one": (lambda a, b: np.linspace(a, b, 1, retstep=True), [S, E]),
    "linspace none": (lambda a, b: np.linspace(a, b, 0), [S, E]),
    "linspace flat": (lambda a: np.linspace(a, a, 4), [S]),
    "linspace negative": (lambda a: np.linspace(a, 1, -1), [S]),
    "linspace complex": (lambda a, b: np.linspace(a, b, 4), [S + 1j, E]),
    "logspace": (lambda a, b: np.logspace(a, b, 5), [S, E]),
    "logspace bases": (
        lambda a, b: np.logspace(a, b, 5, base=np.array([2.0, 3, 4, 5]), axis=-1),
        [S, E],
    ),
    "logspace dtype": (lambda a, b: np.logspace(a, b, 5, base=2, dtype=np.float32), [S, E]),
    "geomspace": (lambda a, b: np.geomspace(a, b, 5), [np.abs(S) + 1, E]),
    "geomspace complex": (lambda a, b: np.geomspace(a, b, 4, axis=1), [S + 1j, E]),
    "geomspace ints": (lambda a: np.geomspace(a, 1000, 4), [np.arange(1, 5)]),
    "geomspace zero": (lambda a: np.geomspace(a, 1000, 4), [np.arange(0, 5)]),
    "geomspace open": (
        lambda a: np.geomspace(a, 10, 4, endpoint=False),
        [np.arange(1, 5).astype(np.float32)],
    ),
}


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("case", list(CASES))
def test_ranges_match_numpy(case, layout):
    call, arguments = CASES[case]
    native_like_numpy(call, *(on_layout(a, layout) for a in arguments))


@settings(max_examples=25)
@given(data=st.data())
def test_drawn_endpoints(data):
    start, _ = data.draw(dist_pairs(shape=(4,), dtype=np.float64))
    stop, _ = data.draw(dist_pairs(shape=(4,), dtype=np.float64))
    num = data.draw(st.integers(0, 6))
    endpoint = data.draw(st.booleans())
    native_like_numpy(lambda a, b: np.linspace(a, b, num, endpoint=endpoint), start, stop)
    native_like_numpy(lambda a, b: np.logspace(a, b, num, endpoint=endpoint, axis=1), start, stop)
    native_like_numpy(lambda a, b: np.geomspace(a, b + 10.0, num, endpoint=endpoint), start, stop)
