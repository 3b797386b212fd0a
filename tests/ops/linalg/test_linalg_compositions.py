"""``numpy.linalg``'s ``cross``, ``multi_dot``, ``cond``, ``tensorinv`` and
``tensorsolve`` (`mdarray._ops.linalg.linalg_compositions`) against NumPy on the same data, under
``fallback="raise"``."""

import numpy as np
import pytest
from _layouts import LAYOUT_NAMES, on_layout
from _oracle import native_like_numpy

import mdarray

RNG = np.random.default_rng(7)


def small_ints(*shape):
    return RNG.integers(-3, 4, size=shape).astype(float)


A, B, C, D = small_ints(4, 6), small_ints(6, 2), small_ints(2, 5), small_ints(5, 3)
U, W = small_ints(5, 3), small_ints(5, 3)
M = RNG.normal(size=(6, 4))

# Products of small integers are exact however they are summed: equal, not close.
CASES = {
    "cross": (np.linalg.cross, [U, W]),
    "cross axis 0": (lambda x, y: np.linalg.cross(x, y, axis=0), [U.T.copy(), W.T.copy()]),
    "cross lengths": (np.linalg.cross, [U[:, :2], W]),
    "multi_dot 2": (lambda *m: np.linalg.multi_dot(m), [A, B]),
    "multi_dot 3": (lambda *m: np.linalg.multi_dot(m), [A, B, C]),
    "multi_dot 3 right first": (
        lambda *m: np.linalg.multi_dot(m),
        [small_ints(9, 2), small_ints(2, 8), small_ints(8, 1)],
    ),
    "multi_dot 4": (lambda *m: np.linalg.multi_dot(m), [A, B, C, D]),
    "multi_dot vectors": (lambda *m: np.linalg.multi_dot(m), [A[0], B, C, D[:, 0]]),
    "multi_dot first vector": (lambda *m: np.linalg.multi_dot(m), [A[:, 0], A, B, C]),
    "multi_dot out": (
        lambda a, b, c, o: np.linalg.multi_dot([a, b, c], out=o),
        [A, B, C, np.zeros((4, 5))],
    ),
    "multi_dot 3-d": (lambda *m: np.linalg.multi_dot(m), [A, B, np.ones((2, 2, 2))]),
    "multi_dot one": (lambda *m: np.linalg.multi_dot(m), [A]),
    "cond": (np.linalg.cond, [M]),
    "cond -2": (lambda m: np.linalg.cond(m, -2), [M]),
    "cond empty": (np.linalg.cond, [np.zeros((0, 3))]),
}


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("case", list(CASES))
def test_linalg_compositions_match_numpy(case, layout):
    call, arguments = CASES[case]
    rtol = 1e-10 if case.startswith("cond") else None
    native_like_numpy(call, *(on_layout(a, layout) for a in arguments), rtol=rtol)


def _on_one_device(value):
    if not isinstance(value, np.ndarray):
        return value
    return mdarray.distributed_array(
        value, mdarray.Layout.replicated(value.shape, devices=[mdarray.devices()[0]])
    )


SQUARE = RNG.normal(size=(4, 4))
T = RNG.normal(size=(4, 6, 8, 3))
T2 = RNG.normal(size=(6, 4, 2, 3, 4))
ONE_DEVICE = {
    **{
        f"cond {p}": (lambda m, p=p: np.linalg.cond(m, p), [SQUARE])
        for p in ("fro", 1, -1, np.inf, -np.inf, 2)
    },
    "cond float32": (lambda m: np.linalg.cond(m, 1), [SQUARE.astype(np.float32)]),
    "cond ints": (lambda m: np.linalg.cond(m, 1), [(SQUARE * 3).astype(int)]),
    "cond complex": (lambda m: np.linalg.cond(m, 1), [SQUARE + 1j * SQUARE.T]),
    "cond singular": (lambda m: np.linalg.cond(m, np.inf), [np.ones((3, 3))]),
    "cond singular 2": (np.linalg.cond, [np.diag([1.0, 2.0, 0.0])]),  # exact zero singular value
    "cond not square": (lambda m: np.linalg.cond(m, 1), [M]),
    "tensorinv": (lambda t: np.linalg.tensorinv(t, ind=2), [T]),
    "tensorinv ind": (lambda t: np.linalg.tensorinv(t, ind=0), [T]),
    "tensorsolve": (np.linalg.tensorsolve, [T2, RNG.normal(size=(6, 4))]),
    "tensorsolve axes": (
        lambda t, b: np.linalg.tensorsolve(t, b, axes=(0,)),
        [np.moveaxis(T2, 0, -1).copy(), RNG.normal(size=(4, 2, 3))],
    ),
    "tensorsolve shapes": (np.linalg.tensorsolve, [T2, RNG.normal(size=(3, 4))]),
}


@pytest.mark.parametrize("case", list(ONE_DEVICE))
def test_on_one_device_match_numpy(case):
    """The inverse and the solve run on one device: native where one device holds the
    matrix (elsewhere a fallback under the policy, as ``inv`` and ``solve`` are)."""
    call, arguments = ONE_DEVICE[case]
    native_like_numpy(call, *(_on_one_device(a) for a in arguments), rtol=1e-9)


def test_tensorinv_of_a_split_matrix_is_a_one_device_fallback():
    x = on_layout(T, "rows")
    if len(x.devices) > 1:  # gathered onto one device: a fallback (with one, nothing moves)
        with mdarray.options(fallback="raise"), pytest.raises(TypeError, match="inv"):
            np.linalg.tensorinv(x)
    with mdarray.options(fallback="allow"):
        got = np.linalg.tensorinv(x)
    np.testing.assert_allclose(got.get(), np.linalg.tensorinv(T), rtol=1e-9)
