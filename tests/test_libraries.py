"""Real users' code: scikit-learn (array API dispatch), xarray, scipy, array-api-extra,
matplotlib and dask run on DistArrays as on NumPy arrays. Each case runs the same code on
NumPy input and on a DistArray of the same data: the values agree, and where NumPy gives
an array we give a DistArray. Functions without a distributed algorithm gather under the
fallback policy ("allow" here: these tests are about correctness, not data movement)."""

import warnings

import numpy as np
import pytest
from _layouts import distinct

import mdarray

# Each test imports its library (pytest.importorskip), so a machine without one still runs
# the others; the test extra installs them all, so CI skips none.
RNG = np.random.default_rng(0)
A = RNG.normal(size=(40, 5))
LABELS = (A[:, 0] > 0).astype(np.int64) + (A[:, 1] > 0)


def _dist(value):
    """`value` in row blocks over (up to) four devices."""
    layout = mdarray.Layout.block(value.shape, devices=distinct(0, 1, 2, 3))
    return mdarray.distributed_array(value, layout)


def _same(got, want):
    """`got` (from DistArrays) is `want` (from NumPy): a DistArray where `want` is an
    array, with the same values; scalars and containers compared item by item."""
    if isinstance(want, np.ndarray):
        assert isinstance(got, mdarray.DistArray), type(got)
        np.testing.assert_allclose(got.get(), want, rtol=1e-9, atol=1e-12)
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    else:
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9, atol=1e-12)


def _both(run, *values):
    """``run`` on NumPy arrays and on DistArrays of `values`: (ours, NumPy's)."""
    want = run(*values)
    with mdarray.options(fallback="allow"), warnings.catch_warnings():
        warnings.simplefilter("ignore", mdarray.PerformanceWarning)
        got = run(*(_dist(v) for v in values))
    return got, want


SKLEARN = {
    "PCA": ("decomposition", lambda m, X, y: m.PCA(2, svd_solver="full").fit_transform(X)),
    "Ridge(svd)": (
        "linear_model",
        lambda m, X, y: m.Ridge(solver="svd").fit(X, X[:, 0]).predict(X),
    ),
    "LinearDiscriminantAnalysis": (
        "discriminant_analysis",
        lambda m, X, y: m.LinearDiscriminantAnalysis().fit(X, y).predict(X),
    ),
    "MinMaxScaler": ("preprocessing", lambda m, X, y: m.MinMaxScaler().fit_transform(X)),
    "StandardScaler": ("preprocessing", lambda m, X, y: m.StandardScaler().fit_transform(X)),
    "LabelEncoder": ("preprocessing", lambda m, X, y: m.LabelEncoder().fit_transform(y)),
    "accuracy_score": ("metrics", lambda m, X, y: m.accuracy_score(y, y[::-1])),
    "euclidean_distances of a slice": (
        "metrics.pairwise",
        lambda m, X, y: m.euclidean_distances(X, X[:5]),
    ),
}


@pytest.mark.parametrize(("module", "case"), SKLEARN.values(), ids=SKLEARN.keys())
def test_scikit_learn_with_array_api_dispatch(module, case):
    sklearn = pytest.importorskip("sklearn")
    module = pytest.importorskip(f"sklearn.{module}")
    # scikit-learn silences NumPy's floating-point warnings for NumPy input only (other
    # namespaces, CuPy's and torch's, do not warn); the cpu backend's kernels are NumPy's.
    with sklearn.config_context(array_api_dispatch=True), np.errstate(all="ignore"):
        got, want = _both(lambda X, y: case(module, X, y), A, LABELS)
    _same(got, want)


XARRAY = {
    "sum over a dim": lambda d: d.sum("t"),
    "mean (skipna)": lambda d: d.mean("t"),
    "std": lambda d: d.std(),
    "max": lambda d: d.max("f"),
    "where": lambda d: d.where(d > 0),
    "fillna": lambda d: d.where(d > 0).fillna(0.5),
    "rolling mean": lambda d: d.rolling(t=3).mean(),
    "weighted mean": lambda d: d.weighted(abs(d.isel(f=0))).mean("t"),
    "round": lambda d: d.round(2),
}


@pytest.mark.parametrize("case", XARRAY.values(), ids=XARRAY.keys())
def test_xarray(case):
    xr = pytest.importorskip("xarray")
    got, want = _both(lambda a: case(xr.DataArray(a, dims=("t", "f"))).data, A)
    _same(got, want)


SCIPY = {
    "stats.zscore": ("stats", lambda m, a: m.zscore(a)),
    "stats.moment": ("stats", lambda m, a: m.moment(a, order=3)),
    "special.logsumexp": ("special", lambda m, a: m.logsumexp(a, axis=0)),
    "special.xlogy": ("special", lambda m, a: m.xlogy(abs(a), abs(a))),
}


@pytest.mark.parametrize(("module", "case"), SCIPY.values(), ids=SCIPY.keys())
def test_scipy(module, case):
    """With ``SCIPY_ARRAY_API=1`` (tests/conftest.py), as scipy's array API support asks."""
    module = pytest.importorskip(f"scipy.{module}")
    got, want = _both(lambda a: case(module, a), A)
    _same(got, want)


EXTRA = {
    "sinc": lambda xpx, a, y: xpx.sinc(a),
    "one_hot": lambda xpx, a, y: xpx.one_hot(y, 3),
    "nunique": lambda xpx, a, y: xpx.nunique(y),
    "setdiff1d": lambda xpx, a, y: xpx.setdiff1d(y, y[:3]),
    "atleast_nd": lambda xpx, a, y: xpx.atleast_nd(y, ndim=3),
    "cov": lambda xpx, a, y: xpx.cov(a.T),
}


@pytest.mark.parametrize("case", EXTRA.values(), ids=EXTRA.keys())
def test_array_api_extra(case):
    xpx = pytest.importorskip("array_api_extra")
    got, want = _both(lambda a, y: case(xpx, a, y), A, LABELS)
    _same(got, want)


def test_matplotlib_draws_one_dataset_as_numpy_does():
    """A 1-D DistArray is one dataset (its 0-d elements are not iterable): one histogram,
    one box, the same bars and line."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    plt = pytest.importorskip("matplotlib.pyplot")

    def draw(x, heights):
        fig, ax = plt.subplots()
        try:
            _, _, patches = ax.hist(x[:, 0], bins=5)
            boxes = ax.boxplot(x[:, 0])["boxes"]
            bars = ax.bar(np.arange(5), heights)
            (line,) = ax.plot(x[:, 0], x[:, 1])
            return (
                len(patches),
                len(boxes),
                [b.get_height() for b in bars],
                np.asarray(line.get_xydata()),
            )
        finally:
            plt.close(fig)

    got, want = _both(draw, A, A[0])
    assert got[:2] == want[:2] == (5, 1)
    np.testing.assert_allclose(got[2], want[2])
    np.testing.assert_allclose(got[3], want[3])


def test_dask_arrays_of_distarrays():
    dask_array = pytest.importorskip("dask.array")

    def run(x):
        d = dask_array.from_array(x, chunks=(20, 5))
        return (d @ d.T).sum(axis=0).compute()

    got, want = _both(run, A)
    _same(got, want)
