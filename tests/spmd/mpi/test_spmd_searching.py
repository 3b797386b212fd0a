"""argmax, argmin, the nan* reductions, bincount and histogram across processes, on the
native path. Their data-dependent decisions (an all-NaN slice found on one process's
chunks: a warning and NaN, or nanargmax's ValueError) are agreed, so every process takes
the same branch."""

import numpy as np
import pytest

import mdarray

from ._spmd import check_value, raises_everywhere, run
from .test_spmd_operations import LAYOUTS, layouts, value


def with_nans(seed: int) -> np.ndarray:
    """Small integers with a few NaNs, no slice NaN everywhere."""
    a = value(seed)
    a[1, 2] = a[4, 0] = a[5, 4] = np.nan
    return a


FUNCTIONS = [
    np.argmax,
    np.argmin,
    np.nansum,
    np.nanprod,
    np.nanmax,
    np.nanmin,
    np.nanmean,
    np.nanvar,
    np.nanstd,
    np.nanargmax,
    np.nanargmin,
]


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("func", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_against_numpy(layout, func, axis):
    a = with_nans(40)
    x = mdarray.distributed_array(a, layouts()[layout])
    check_value(lambda: func(x, axis=axis), func(a, axis=axis), native=True)
    check_value(
        lambda: func(x, axis=axis, keepdims=True), func(a, axis=axis, keepdims=True), native=True
    )


@pytest.mark.parametrize("func", [np.argmax, np.argmin, np.nanmax], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["sum", "max"])
def test_of_partial_arrays(func, mode):
    a = value(41)  # ties: the first index wins, on every process alike
    x = mdarray.distributed_array(a, layouts()["overlapping"], mode)
    check_value(lambda: func(x, axis=0), func(a, axis=0), native=True)
    check_value(lambda: func(x), func(a), native=True)


@pytest.mark.parametrize("func", [np.nancumsum, np.nancumprod], ids=lambda f: f.__name__)
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_nan_scans(layout, axis, func):
    a = with_nans(42)
    x = mdarray.distributed_array(a, layouts()[layout])
    check_value(lambda: func(x, axis=axis), func(a, axis=axis), native=True)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_an_all_nan_slice_on_one_process_warns_on_every_one(layout):
    a = with_nans(43)
    a[0] = np.nan  # row 0: on the first device's process only, in row blocks

    def warned():
        with pytest.warns(RuntimeWarning, match="All-NaN slice"):
            return np.nanmax(x, axis=1)

    x = mdarray.distributed_array(a, layouts()[layout])
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        want = np.nanmax(a, axis=1)
    check_value(run(warned, native=True), want)
    raises_everywhere(ValueError, np.nanargmin, x, axis=1)


HISTOGRAMS = {
    "bincount": lambda x: np.bincount(np.ravel(np.abs(x).astype(np.int64))),
    "bincount weighted": lambda x: np.bincount(
        np.ravel(np.abs(x).astype(np.int64)), weights=np.ravel(x), minlength=7
    ),
    "histogram": lambda x: np.histogram(x, bins=4),
    "histogram edges": lambda x: np.histogram(x, bins=[-4, -1, 0, 2, 5], weights=x * x),
    "histogram density": lambda x: np.histogram(x, bins=3, range=(-2, 4), density=True),
}


@pytest.mark.parametrize("case", list(HISTOGRAMS))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_histograms(layout, case):
    a = value(44)
    x = mdarray.distributed_array(a, layouts()[layout])
    got = run(lambda: HISTOGRAMS[case](x), native=True)
    want = HISTOGRAMS[case](a)
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        check_value(g, w)
