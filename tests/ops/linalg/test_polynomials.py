"""NumPy's polynomial functions (`mdarray._ops.linalg.polynomials`) against NumPy on the same
coefficients, under ``fallback="raise"``, on several layouts."""

import numpy as np
import pytest
from _layouts import LAYOUT_NAMES, dist_pairs, on_layout
from _oracle import native_like_numpy
from hypothesis import given, settings, strategies as st

import mdarray

RNG = np.random.default_rng(3)
A = RNG.normal(size=7)
B = RNG.normal(size=3)
N = np.arange(1, 6)
X = np.linspace(0, 1, 20)
Y = 3 * X**2 - X + RNG.normal(size=20) * 0.01

# name -> (call, arguments, rtol): exact unless rtol (a least-squares or eigenvalue result).
CASES = {
    "polyadd": (np.polyadd, [A, B], None),
    "polyadd ints": (np.polyadd, [B, N], None),
    "polyadd list": (lambda a: np.polyadd(a, [1, 2]), [A], None),
    "polysub": (np.polysub, [N, A], None),
    "polymul": (np.polymul, [A, B], None),
    "polymul ints": (np.polymul, [N, N.astype(np.int32)], None),
    "polymul shorter first": (np.polymul, [B, A], None),
    "polyder": (np.polyder, [A], None),
    "polyder 3": (lambda p: np.polyder(p, 3), [N.astype(np.float32)], None),
    "polyder 0": (lambda p: np.polyder(p, 0), [A], None),
    "polyder negative": (lambda p: np.polyder(p, -1), [A], None),
    "polyint": (np.polyint, [A], None),
    "polyint k": (lambda p: np.polyint(p, 2, [1, 2]), [N], None),
    "polyint scalar k": (lambda p: np.polyint(p, 3, 0.5), [A], None),
    "polyint short k": (lambda p: np.polyint(p, 3, [1, 2]), [A], None),
    "poly": (np.poly, [A], None),
    "poly ints": (np.poly, [N], None),
    "poly float32": (np.poly, [A.astype(np.float32)], None),
    "poly complex": (np.poly, [np.array([1 + 2j, 1 - 2j, 3])], None),
    "poly complex unpaired": (np.poly, [np.array([1 + 2j, 3])], None),
    "poly 3-d": (np.poly, [np.zeros((2, 2, 2))], None),
    "roots": (np.roots, [np.array([0, 1.0, -3, 2, 0, 0])], 1e-10),
    "roots ints": (np.roots, [np.array([1, -3, 2])], 1e-10),
    "roots constant": (np.roots, [np.array([0, 2, 0])], 1e-10),
    "roots zeros": (np.roots, [np.array([0, 0])], 1e-10),
    "roots 2-d": (np.roots, [np.ones((2, 2))], 1e-10),
    "polydiv": (np.polydiv, [A, B], None),
    "polydiv ints": (np.polydiv, [N, np.array([1, 2])], None),
    "polydiv shorter": (np.polydiv, [B, A], None),
    "polyfit": (lambda x, y: np.polyfit(x, y, 2), [X, Y], 1e-8),
    "polyfit full": (lambda x, y: np.polyfit(x, y, 2, full=True), [X, Y], 1e-8),
    "polyfit weights": (
        lambda x, y, w: np.polyfit(x, y, 3, w=w),
        [X, np.stack([Y, 2 * Y], 1), X + 1],
        1e-8,
    ),
    "polyfit deg": (lambda x, y: np.polyfit(x, y, -1), [X, Y], None),
    "polyfit lengths": (lambda x, y: np.polyfit(x, y, 1), [X, Y[:5]], None),
    "polyfit 2-d x": (lambda x, y: np.polyfit(x, y, 1), [np.ones((2, 2)), Y[:2]], None),
}


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("case", list(CASES))
def test_polynomials_match_numpy(case, layout):
    call, arguments, rtol = CASES[case]
    native_like_numpy(call, *(on_layout(a, layout) for a in arguments), rtol=rtol)


def test_poly_of_a_matrix_on_one_device():
    """``poly`` of a square matrix takes its eigenvalues on one device: native where one
    device holds it."""
    a = RNG.normal(size=(3, 3))
    x = mdarray.distributed_array(
        a, mdarray.Layout.replicated((3, 3), devices=[mdarray.devices()[0]])
    )
    with mdarray.options(fallback="raise"):
        got = np.poly(x)
    np.testing.assert_allclose(got.get(), np.poly(a), rtol=1e-10)


def test_polyfit_with_cov_takes_the_fallback():
    x = on_layout(X, "rows")
    y = on_layout(Y, "rows")
    with mdarray.options(fallback="raise"), pytest.raises(TypeError, match="polyfit"):
        np.polyfit(x, y, 2, cov=True)
    with mdarray.options(fallback="allow"):
        c, v = np.polyfit(x, y, 2, cov=True)
    want_c, want_v = np.polyfit(X, Y, 2, cov=True)
    np.testing.assert_allclose(c.get(), want_c)
    np.testing.assert_allclose(v.get(), want_v)


@settings(max_examples=25)
@given(data=st.data())
def test_polynomials_of_drawn_coefficients(data):
    dtype = data.draw(st.sampled_from([np.float64, np.int64, np.float32]))
    n, m = data.draw(st.integers(1, 7)), data.draw(st.integers(1, 5))
    small = st.integers(-4, 4)
    p, _ = data.draw(dist_pairs(shape=(n,), dtype=dtype, elements=small))
    q, _ = data.draw(dist_pairs(shape=(m,), dtype=dtype, elements=small))
    native_like_numpy(np.polyadd, p, q)
    native_like_numpy(np.polysub, p, q)
    native_like_numpy(np.polymul, p, q)
    native_like_numpy(np.polyder, p)
    native_like_numpy(np.polyint, p)
    native_like_numpy(np.poly, p)
    if q.get()[0] != 0:
        native_like_numpy(np.polydiv, p, q)


def test_polyfit_warns_of_a_poor_fit_at_the_callers_line():
    x = on_layout(np.repeat([0.0, 1.0], 10), "rows")
    y = on_layout(np.arange(20.0), "rows")
    with mdarray.options(fallback="raise"), pytest.warns(np.exceptions.RankWarning) as warned:
        np.polyfit(x, y, 3)
    assert warned[0].filename == __file__
