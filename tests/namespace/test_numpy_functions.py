"""NumPy's names on the namespace (``xp.cumsum``, ``xp.nanmean`` ...) against NumPy."""

import doctest
import inspect

import numpy as np
import pytest
from _layouts import dist_pairs
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray._core import registry as _registry
from mdarray._namespace import numpy_functions

# NumPy's names as their module defines them (``mdarray.<name>``).
FUNCTIONS = {
    name: f
    for name, f in vars(numpy_functions).items()
    if inspect.isfunction(f) and f.__module__ == "mdarray" and not name.startswith("_")
}
NAMES = sorted(FUNCTIONS)

# name -> call on (a, b): two arrays of shape (3, 4), `a` with a NaN where nan* care.
CALLS = {
    "allclose": lambda f, a, b: f(a, b),
    "array_equal": lambda f, a, b: f(a, a),
    "array_split": lambda f, a, b: f(a, 2, axis=1),
    "atleast_1d": lambda f, a, b: f(a),
    "atleast_2d": lambda f, a, b: f(a),
    "atleast_3d": lambda f, a, b: f(a),
    "average": lambda f, a, b: f(b, axis=0, weights=[1.0, 2.0, 3.0]),
    "column_stack": lambda f, a, b: f((a, b)),
    "corrcoef": lambda f, a, b: f(b + np.arange(12.0).reshape(3, 4)),
    "cov": lambda f, a, b: f(b, ddof=1),
    "cumprod": lambda f, a, b: f(b, axis=1),
    "cumsum": lambda f, a, b: f(b),
    "diag": lambda f, a, b: f(b, k=1),
    "diagonal": lambda f, a, b: f(b, offset=-1),
    "dot": lambda f, a, b: f(b, b.T),
    "einsum": lambda f, a, b: f("ij,ij->j", b, b),
    "hstack": lambda f, a, b: f((a, b)),
    "isclose": lambda f, a, b: f(a, b, equal_nan=True),
    "median": lambda f, a, b: f(b, axis=0),
    "nanargmax": lambda f, a, b: f(a, axis=1),
    "nanargmin": lambda f, a, b: f(a),
    "nancumprod": lambda f, a, b: f(a, axis=0),
    "nancumsum": lambda f, a, b: f(a),
    "nanmax": lambda f, a, b: f(a, axis=0),
    "nanmean": lambda f, a, b: f(a),
    "nanmedian": lambda f, a, b: f(a, axis=1),
    "nanmin": lambda f, a, b: f(a, keepdims=True),
    "nanpercentile": lambda f, a, b: f(a, 30),
    "nanprod": lambda f, a, b: f(a, axis=1),
    "nanquantile": lambda f, a, b: f(a, [0.25, 0.5], axis=0),
    "nanstd": lambda f, a, b: f(a, ddof=1),
    "nansum": lambda f, a, b: f(a, axis=0),
    "nanvar": lambda f, a, b: f(a, axis=1),
    "outer": lambda f, a, b: f(b[0], b[:, 1]),
    "pad": lambda f, a, b: f(b, ((1, 0), (2, 1)), mode="reflect"),
    "percentile": lambda f, a, b: f(b, [10, 90], axis=1),
    "ptp": lambda f, a, b: f(b, axis=0),
    "quantile": lambda f, a, b: f(b, 0.5),
    "ravel": lambda f, a, b: f(b),
    "split": lambda f, a, b: f(b, [1], axis=0),
    "trace": lambda f, a, b: f(b, offset=1),
    "transpose": lambda f, a, b: f(b, (1, 0)),
    "vstack": lambda f, a, b: f((a, b)),
}


def test_every_name_has_a_call():
    assert set(CALLS) == set(NAMES)


def _same(got, want, atol=0.0):
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, atol)
        return
    if isinstance(want, (bool, np.bool_)) and not isinstance(want, np.ndarray):
        assert type(got) is type(want)
        assert got == want
        return
    assert isinstance(got, mdarray.DistArray), type(got)
    want = np.asarray(want)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.get(), want, rtol=1e-12, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=10)
@given(data=st.data())
def test_numpy_names_match_numpy(name, data):
    a, a_value = data.draw(dist_pairs(shape=(3, 4), dtype=np.dtype("float64")))
    b, b_value = data.draw(dist_pairs(shape=(3, 4), dtype=np.dtype("float64")))
    if name.startswith("nan") or name == "isclose":
        a[1, 2] = np.nan
        a_value = a_value.copy()
        a_value[1, 2] = np.nan
    # Those with a distributed implementation must not gather.
    policy = "raise" if getattr(np, name) in _registry.FUNCTIONS else "allow"
    with np.errstate(all="ignore"):
        want = CALLS[name](getattr(np, name), a_value, b_value)
        with mdarray.options(fallback=policy):
            got = CALLS[name](getattr(mdarray, name), a, b)
    # Sums grouped by chunks round differently: a result near zero is off by a few ulps of
    # the terms (nanmean gives 1.1e-16 where NumPy gives 0.0).
    terms = np.abs(np.concatenate([a_value.ravel(), b_value.ravel()]))
    _same(got, want, atol=1e-13 * (1 + np.max(terms[np.isfinite(terms)], initial=0)))


@pytest.mark.parametrize("name", NAMES)
def test_numpy_names_have_numpys_signature_and_a_running_example(name):
    func = FUNCTIONS[name]
    try:
        assert inspect.signature(func) == inspect.signature(getattr(np, name))
    except ValueError:  # NumPy < 2.4: some C functions (np.dot) carry no signature to copy
        assert np.lib.NumpyVersion(np.__version__) < "2.4.0"
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner()
    with mdarray.options(fallback="allow"):
        for test in finder.find(func, name, globs={}):
            runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


# Names with a distributed implementation: they run with no gather.
NATIVE = (
    "allclose",
    "array_equal",
    "average",
    "corrcoef",
    "cov",
    "dot",
    "einsum",
    "isclose",
    "ptp",
)


@pytest.mark.parametrize("name", NATIVE)
@settings(max_examples=10)
@given(data=st.data())
def test_native_names_do_not_gather(name, data):
    a, a_value = data.draw(dist_pairs(shape=(3, 4), dtype=np.dtype("float64")))
    b, b_value = data.draw(dist_pairs(shape=(3, 4), dtype=np.dtype("float64")))
    with np.errstate(all="ignore"):
        want = CALLS[name](getattr(np, name), a_value, b_value)
        with mdarray.options(fallback="raise"):
            got = CALLS[name](getattr(mdarray, name), a, b)
    # Sums grouped by chunks round differently: a result near zero is off by a few ulps of
    # the terms (nanmean gives 1.1e-16 where NumPy gives 0.0).
    terms = np.abs(np.concatenate([a_value.ravel(), b_value.ravel()]))
    _same(got, want, atol=1e-13 * (1 + np.max(terms[np.isfinite(terms)], initial=0)))
