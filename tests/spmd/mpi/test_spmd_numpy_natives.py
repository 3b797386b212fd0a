"""NumPy functions made native from compositions of distributed operations, across
processes: writers (``putmask``, ``copyto``), insertions (``insert``, ``delete``, ``trim_zeros``, ``block``,
``kron``), positions and bits, formulas (``choose``, ``unwrap``, ``interp``,
``correlate``), ``digitize``, ranges, polynomials, ``histogram2d`` and ``histogramdd``,
``linalg.cross`` and ``multi_dot``, and the printed text (the functions that write
points or masks, and those on TSQR, take the fallback in an SPMD run:
`test_the_rest_take_the_fallback`). Each case is one function that NumPy and a
DistArray both take, run with ``fallback="raise"`` and compared with NumPy on the same
data (small integers: exact in any order of summation)."""

import numpy as np
import pytest

import mdarray

from ._spmd import everywhere, raises_everywhere, run
from .test_spmd_manipulation import check_result
from .test_spmd_operations import LAYOUTS, layouts, value


def written(write):
    """A function of x: a copy of x after `write` wrote into it (None is returned)."""

    def function(x):
        y = x.copy()
        everywhere(write(y) is None, "a writer returned something")
        return y

    return function


# name -> function of one array of SHAPE (6, 5), the same code for NumPy and a DistArray.
CASES = {
    "putmask": written(lambda y: np.putmask(y, y > 1, [7.0, 6.0, 5.0])),
    "copyto": written(lambda y: np.copyto(y, -y[::-1], where=y > 0)),
    "insert": lambda x: np.insert(x, [1, 3, 3], 7.0, axis=1),
    "insert rows": lambda x: np.insert(x, 2, x[0], axis=0),
    "delete": lambda x: np.delete(x, [0, 2, -1], axis=0),
    "trim_zeros": lambda x: np.trim_zeros(np.where(np.abs(x) > 2, x, 0)),
    "block": lambda x: np.block([[x, x[:, :2]], [x[:1], x[:1, :2]]]),
    "kron": lambda x: np.kron(x[:2, :3], x[:3, :2]),
    "unravel_index": lambda x: np.unravel_index(np.argmax(x, axis=1), (2, 3)),
    "ravel_multi_index": lambda x: np.ravel_multi_index(
        (np.argmax(x, axis=1), np.argmin(x, axis=1)), (5, 5)
    ),
    "lexsort": lambda x: np.lexsort((x[:, 0], x[:, 1])),
    "packbits": lambda x: np.unpackbits(np.packbits(x > 0, axis=0), axis=0),
    "choose": lambda x: np.choose((x > 0).astype(int), [x, -2 * x]),
    "unwrap": lambda x: np.unwrap(2 * x, axis=0),
    "correlate": lambda x: np.correlate(np.ravel(x), np.array([1.0, -2.0, 3.0]), "full"),
    "linspace": lambda x: np.linspace(x[0], x[1], 5),
    "polymul": lambda x: np.polymul(x[0], x[1]),
    "polyder polyint": lambda x: np.polyder(np.polyint(x[2], 2), 1),
    "polyadd": lambda x: np.polyadd(x[0], x[1, :3]),
    "linalg.cross": lambda x: np.linalg.cross(x[:, :3], x[:, 2:]),
    "multi_dot": lambda x: np.linalg.multi_dot([x, x.T, x]),
    "digitize": lambda x: np.digitize(x, np.array([-2.0, 0.0, 2.0])),
    "interp": lambda x: np.interp(x, np.array([-4.0, 0.0, 4.0]), np.array([1.0, -1.0, 3.0])),
    "histogram2d": lambda x: np.histogram2d(x[:, 0], x[:, 1], bins=3),
    "histogramdd": lambda x: np.histogramdd(x[:, :3], bins=2)[0],
    "polydiv": lambda x: np.polydiv(x[0], x[1, :2]),
    "poly": lambda x: np.poly(x[0, :3]),
    "real_if_close": lambda x: np.real_if_close(x + 0j),
    "apply_along_axis": lambda x: np.apply_along_axis(np.cumsum, 0, x),
    "apply_over_axes": lambda x: np.apply_over_axes(np.sum, x, [0, 1]),
    "geomspace": lambda x: np.geomspace(-np.abs(x[0]), -2 * np.abs(x[1]), 3),
    "logspace": lambda x: np.logspace(x[0], x[1], 3, base=2.0),
    "roots": lambda x: np.round(np.roots(x[0, :3]), 8),
    "min_scalar_type": lambda x: x.astype(np.min_scalar_type(x[0, 0])),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_native_against_numpy(layout, case):
    a = value(30)
    function = CASES[case]
    x = mdarray.distributed_array(a, layouts()[layout])
    check_result(run(lambda: function(x), native=True), function(a.copy()))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_printed_text(layout):
    a = value(31)
    x = mdarray.distributed_array(a, layouts()[layout])
    with mdarray.options(fallback="raise"):
        for function in (np.array2string, np.array_repr, np.array_str):
            everywhere(function(x) == function(a), function.__name__)


@pytest.mark.parametrize(
    "function",
    [
        lambda x: np.put(x, [0], 1.0),
        lambda x: np.piecewise(x, [x > 0], [1.0, 2.0]),
        lambda x: np.round(np.polyfit(x[:, 0], x[:, 1], 1), 8),
    ],
    ids=["put", "piecewise", "polyfit"],
)
def test_the_rest_take_the_fallback(function):
    """Across processes these gather (correct, and refused under ``fallback="raise"``)."""
    a = value(32)
    x = mdarray.distributed_array(a, layouts()["rows"])
    if mdarray.distributed.size() > 1:
        raises_everywhere(TypeError, lambda: _raising(function, x))
    got = run(lambda: function(x))
    want = function(a.copy())
    if want is not None:
        check_result(got, want)


def _raising(function, x):
    with mdarray.options(fallback="raise"):
        return function(x)
