"""NumPy's formulas that are not ufuncs (`mdarray._ops.elementwise.numpy_formulas`) and
``apply_along_axis`` / ``apply_over_axes`` (`mdarray._ops.arranging.applying`) against NumPy on the
same data, under ``fallback="raise"``, on several layouts and drawn ones."""

import numpy as np
import pytest
from _layouts import LAYOUT_NAMES, dist_pairs, on_layout
from _oracle import native_like_numpy
from hypothesis import given, settings, strategies as st

import mdarray

RNG = np.random.default_rng(5)
N = RNG.integers(0, 3, size=(4, 5))
F = RNG.normal(size=(4, 5))
PHASE = np.cumsum(RNG.normal(size=(5, 12)) * 3, axis=1)
XP = np.sort(RNG.normal(size=8))
FP = RNG.normal(size=8)
XS = np.concatenate([RNG.normal(size=20) * 2, XP[:3], [np.nan, np.inf, -np.inf]])
A = RNG.normal(size=9)
V = RNG.normal(size=4)
CUBE = RNG.integers(0, 9, size=(3, 4, 5))

CASES = {
    "choose": (lambda a, x, y: np.choose(a, [x, y, 7]), [N, F, np.arange(5)]),
    "choose ints": (lambda a, x: np.choose(a, [x, x * 2, x - 1]), [N, np.arange(5)]),
    "choose bounds": (lambda a, x: np.choose(a + 1, [x, x * 2, x - 1]), [N, np.arange(5)]),
    "choose wrap": (lambda a, x: np.choose(a + 1, [x, 2 * x, x - 1], mode="wrap"), [N, F]),
    "choose clip": (lambda a, x: np.choose(a - 1, [x, x * 2], mode="clip"), [N, F]),
    "choose floats": (lambda a, x: np.choose(a * 1.0, [x, x * 2, x - 1]), [N, F]),
    "choose one": (lambda a, x: np.choose(a * 0, [x]), [N, F]),
    "choose array": (np.choose, [N % 2, np.stack([F, F + 1])]),
    "choose out": (lambda a, x, o: np.choose(a, [x, -x, 2 * x], out=o), [N, F, np.zeros((4, 5))]),
    "piecewise": (
        lambda x: np.piecewise(x, [x < 0, x > 1], [lambda v: -v, 5.0, lambda v: v * 2]),
        [F],
    ),
    "piecewise otherwise": (
        lambda x: np.piecewise(x, [x < 0], [lambda v: -v, lambda v: v**2]),
        [F],
    ),
    "piecewise counts": (lambda x: np.piecewise(x, [x < 0], [1, 2, 3]), [F]),
    "piecewise one condition": (lambda x: np.piecewise(x, x > 2, [1]), [np.arange(6)]),
    "piecewise arguments": (
        lambda x: np.piecewise(x, [x > 0], [lambda v, k: v * k, 0.0], 3.0),
        [F],
    ),
    "real_if_close": (np.real_if_close, [F + 1e-17j]),
    "real_if_close not": (np.real_if_close, [F + 1j]),
    "real_if_close real": (np.real_if_close, [F]),
    "real_if_close tol": (lambda z: np.real_if_close(z, tol=1e-3), [F + 1e-4j]),
    "unwrap": (np.unwrap, [PHASE]),
    "unwrap axis 0": (lambda p: np.unwrap(p, axis=0), [PHASE]),
    "unwrap period": (lambda p: np.unwrap(p, period=4), [PHASE]),
    "unwrap discont": (lambda p: np.unwrap(p, discont=5.0), [PHASE]),
    "unwrap ints": (lambda p: np.unwrap(p, period=6), [np.array([0, 1, 5, 6, 2, 11, 0, 7])]),
    "unwrap odd period": (
        lambda p: np.unwrap(p, period=7, discont=2),
        [np.array([0, 1, 5, 6, 2, 11, 0, 7])],
    ),
    "unwrap float32": (np.unwrap, [PHASE.astype(np.float32)]),
    "interp": (np.interp, [XS, XP, FP]),
    "interp left right": (lambda a, b, c: np.interp(a, b, c, left=-9, right=9), [XS, XP, FP]),
    "interp 2-d": (np.interp, [XS[:24].reshape(4, 6), XP, FP]),
    "interp period": (lambda a, b, c: np.interp(a, b, c, period=1.5), [XS[:-3], XP, FP]),
    "interp repeated points": (np.interp, [XS, np.array([0.0, 0, 1, 1, 2]), np.arange(5.0)]),
    "interp one point": (np.interp, [XS, np.array([0.0]), np.array([3.0])]),
    "interp lengths": (np.interp, [XS, XP, FP[:3]]),
    "interp infinite": (np.interp, [XS, np.array([0.0, 1, 2]), np.array([np.inf, np.inf, 1])]),
    "interp float32": (np.interp, [XS.astype(np.float32), XP, FP.astype(np.int32)]),
    "interp host points": (lambda x: np.interp(x, [0.0, 1.0], [5.0, 7.0]), [XS]),
    "interp zero period": (lambda a, b, c: np.interp(a, b, c, period=0), [XS, XP, FP]),
    "interp complex": (np.interp, [XS, XP, FP + 1j * FP[::-1]]),
    "interp complex period": (
        lambda a, b, c: np.interp(a, b, c, period=2.0),
        [XS[:-3], XP, FP - 2j],
    ),
    "interp complex x": (np.interp, [XS + 1j, XP, FP]),
    "apply_along_axis": (lambda a: np.apply_along_axis(np.sort, 1, a), [CUBE]),
    "apply_along_axis shapes": (lambda a: np.apply_along_axis(np.diag, -1, a), [CUBE]),
    "apply_along_axis scalar": (
        lambda a: np.apply_along_axis(lambda v: int(v.shape[0]), 0, a),
        [CUBE],
    ),
    "apply_along_axis args": (lambda a: np.apply_along_axis(np.percentile, 1, a, 30), [F]),
    "apply_along_axis empty": (lambda a: np.apply_along_axis(np.sum, 1, a), [np.zeros((0, 3))]),
    "apply_over_axes": (lambda a: np.apply_over_axes(np.sum, a, [0, 2]), [CUBE]),
    "apply_over_axes one": (lambda a: np.apply_over_axes(np.max, a, -1), [CUBE]),
}
for mode in ("valid", "same", "full"):
    CASES[f"correlate {mode}"] = (lambda a, v, m=mode: np.correlate(a, v, m), [A, V])
    CASES[f"correlate longer {mode}"] = (lambda a, v, m=mode: np.correlate(a, v, m), [V, A])
    CASES[f"correlate complex {mode}"] = (
        lambda a, v, m=mode: np.correlate(a, v, m),
        [A + 1j * A[::-1], V - 2j],
    )
    CASES[f"correlate bools {mode}"] = (
        lambda a, v, m=mode: np.correlate(a, v, m),
        [A > 0, V > 0],
    )
    CASES[f"correlate ints {mode}"] = (
        lambda a, v, m=mode: np.correlate(a, v, m),
        [np.arange(5), np.arange(4)],
    )


# unwrap sums its corrections along the axis (the native cumsum): where chunks split the
# axis, each chunk's sums start from the carry of those before, one rounding apart.
RTOL = {"unwrap float32": 1e-6}


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("case", list(CASES))
def test_formulas_match_numpy(case, layout):
    call, arguments = CASES[case]
    rtol = RTOL.get(case, 1e-12 if case.startswith("unwrap") else None)
    native_like_numpy(call, *(on_layout(a, layout) for a in arguments), rtol=rtol)


def test_interp_moves_only_the_data_points():
    """Each device gets the data points once; nothing else moves."""
    x = on_layout(np.tile(XS[:-3], 40), "rows")
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        np.interp(x, XP, FP + 1j)
    assert moved.total <= len(x.layout.devices) * (XP.nbytes + (FP + 1j).nbytes)


@settings(max_examples=25)
@given(data=st.data())
def test_drawn_formulas(data):
    shape = data.draw(st.sampled_from([(7,), (3, 4)]))
    x, _ = data.draw(dist_pairs(shape=shape, dtype=np.float64))
    a, _ = data.draw(dist_pairs(shape=shape, dtype=np.int64, elements=st.integers(0, 2)))
    native_like_numpy(lambda s, v: np.choose(s, [v, -v, 2.5]), a, x)
    native_like_numpy(lambda v: np.piecewise(v, [v < 0], [lambda w: w * 3, 1.0]), x)
    native_like_numpy(lambda v: np.unwrap(v * 3.0, axis=0), x, rtol=1e-12)
    native_like_numpy(lambda v: np.interp(v, [-1.0, 0.0, 2.0], [1.0, -1.0, 4.0]), x)
    native_like_numpy(lambda v: np.correlate(np.ravel(v), [1.0, 2.0]), x)
