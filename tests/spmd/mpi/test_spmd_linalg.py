"""Linear algebra that needs whole matrices, across processes: the operands are gathered
onto one device (a fallback under the policy, warned of), the device's process computes,
and the results stay on that device; every process learns their shapes and dtypes, and a
failure there (a singular matrix) raises on every process. TSQR (tall matrices) is not
multi-process yet: in a run of several processes those take the one-device path too."""

import numpy as np
import pytest

import mdarray

from ._spmd import check_value, everywhere, raises_everywhere, run
from .test_spmd_operations import LAYOUTS, layouts


def square(seed: int = 80) -> np.ndarray:
    """A well-conditioned symmetric positive definite 6 x 6 matrix (exact small ints)."""
    m = np.random.default_rng(seed).integers(-2, 3, (6, 6)).astype(np.float64)
    return m @ m.T + 6 * np.eye(6)


def tall(seed: int = 81) -> np.ndarray:
    return np.random.default_rng(seed).integers(-3, 4, (6, 5)).astype(np.float64)


CASES = {
    "solve": lambda a, t: np.linalg.solve(a, t[:, 0]),
    "inv": lambda a, t: np.linalg.inv(a),
    "det": lambda a, t: np.linalg.det(a),
    "slogdet": lambda a, t: tuple(np.linalg.slogdet(a)),
    "cholesky": lambda a, t: np.linalg.cholesky(a),
    "eigvalsh": lambda a, t: np.linalg.eigvalsh(a),
    "eigh values": lambda a, t: np.linalg.eigh(a).eigenvalues,
    "matrix_power": lambda a, t: np.linalg.matrix_power(a, 3),
    "svdvals": lambda a, t: np.linalg.svdvals(t),
    "svd values": lambda a, t: np.linalg.svd(t, compute_uv=False),
    "pinv": lambda a, t: np.linalg.pinv(t),
    "matrix_rank": lambda a, t: np.linalg.matrix_rank(t),
    "qr r": lambda a, t: np.abs(np.linalg.qr(t, mode="r")),
    "lstsq": lambda a, t: np.linalg.lstsq(t, a[:, 0])[0],
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_against_numpy(layout, case):
    a, t = square(), tall()
    x = mdarray.distributed_array(a, layouts(a.shape)[layout])
    y = mdarray.distributed_array(t, layouts(t.shape)[layout])
    function = CASES[case]
    with mdarray.options(fallback="allow"):
        got = run(lambda: function(x, y))
    want = function(a, t)
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        check_value(g, w)


def test_the_result_is_held_by_one_device():
    a = square()
    x = mdarray.distributed_array(a, layouts(a.shape)["grid"])
    with mdarray.options(fallback="allow"):
        inverse = run(lambda: np.linalg.inv(x))
    everywhere(inverse.devices == (x.layout.devices[0],), repr(inverse.devices))
    check_value(lambda: inverse @ x, np.eye(6))


def test_a_singular_matrix_raises_everywhere():
    a = np.ones((6, 6))
    x = mdarray.distributed_array(a, layouts(a.shape)["rows"])
    with mdarray.options(fallback="allow"):
        raises_everywhere(Exception, np.linalg.inv, x)
        raises_everywhere(np.linalg.LinAlgError, np.linalg.inv, np.ones((5, 6)) + x[:5])


def _stack(seed: int = 82) -> np.ndarray:
    """Nine symmetric positive definite 3 x 3 matrices (exact small ints)."""
    m = np.random.default_rng(seed).integers(-2, 3, (9, 3, 3)).astype(np.float64)
    return m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3)


STACK_CASES = {
    "det": np.linalg.det,
    "inv": np.linalg.inv,
    "eigh values": lambda s: np.linalg.eigh(s).eigenvalues,
    "slogdet": lambda s: tuple(np.linalg.slogdet(s)),
    "cholesky": np.linalg.cholesky,
}


@pytest.mark.parametrize("case", list(STACK_CASES))
def test_a_stack_split_along_its_stack_axis_computes_on_every_process(case):
    """Each process computes the matrices its devices hold: native, nothing gathered."""
    s = _stack()
    x = mdarray.distributed_array(s, mdarray.Layout.block(s.shape, axis=0))
    function = STACK_CASES[case]
    got = run(lambda: function(x), native=True)
    want = function(s)
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        check_value(g, w)
    first = got[0] if isinstance(got, tuple) else got
    everywhere(first.devices == x.devices, repr(first.devices))


def test_a_singular_matrix_of_a_split_stack_raises_everywhere():
    s = _stack()
    s[-1] = 0.0  # held by the last process's device
    x = mdarray.distributed_array(s, mdarray.Layout.block(s.shape, axis=0))
    raises_everywhere(np.linalg.LinAlgError, np.linalg.inv, x)


def test_solve_of_a_split_stack_brings_each_right_hand_side_beside_its_matrix():
    s = _stack()
    rhs = np.random.default_rng(83).integers(-3, 4, (9, 3, 2)).astype(np.float64)
    x = mdarray.distributed_array(s, mdarray.Layout.block(s.shape, axis=0))
    y = mdarray.distributed_array(rhs, mdarray.Layout.block(rhs.shape, axis=1))
    check_value(lambda: np.linalg.solve(x, y), np.linalg.solve(s, rhs), native=True)
