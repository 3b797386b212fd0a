"""The array API standard's special values, on every backend, where NumPy's or CuPy's
kernels depart from them (mdarray/_kernels/special_values.py); NumPy's values everywhere else."""

import math
import warnings

import numpy as np
import pytest
from _layouts import devices
from _oracle import on_backend
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import mdarray
from mdarray.testing import assert_dist_equal

INF, NAN = math.inf, math.nan


def _spread(values, dtype):
    """`values` as a DistArray in three blocks (over three devices where there are)."""
    value = np.array(values, dtype)
    return mdarray.distributed_array(
        value, mdarray.Layout.block(value.shape, devices=devices(0, 1, 2))
    )


def _same(got, want):
    """Equal as IEEE values: NaN where NaN, infinities and signed zeros exactly, part by
    part; finite values to an ulp or two (CuPy's kernels round differently from NumPy's)."""
    got, want = np.asarray(got), np.asarray(want, got.dtype)
    for part in (np.real, np.imag) if got.dtype.kind == "c" else (np.real,):
        g, w = part(got), part(want)
        np.testing.assert_allclose(g, w, rtol=1e-15, atol=0)
        np.testing.assert_array_equal(np.signbit(g) | np.isnan(g), np.signbit(w) | np.isnan(w))


# (x1, x2, the standard's floor_divide, the standard's remainder)
BINARY = [
    (INF, 2.0, INF, NAN),
    (INF, -2.0, -INF, NAN),
    (-INF, 2.0, -INF, NAN),
    (-INF, -2.0, INF, NAN),
    (3.0, INF, 0.0, 3.0),
    (3.0, -INF, -0.0, -INF),
    (-3.0, INF, -0.0, INF),
    (-3.0, -INF, 0.0, -3.0),
    (0.0, -2.0, -0.0, -0.0),
    (-0.0, -2.0, 0.0, -0.0),
    (-0.0, 2.0, -0.0, 0.0),
    (0.0, -INF, -0.0, -0.0),
    (5.0, 0.0, INF, NAN),
    (-5.0, 0.0, -INF, NAN),
    (INF, INF, NAN, NAN),
    (NAN, INF, NAN, NAN),
    (7.0, -2.0, -4.0, -1.0),
    (4.0, -2.0, -2.0, -0.0),
    (-4.0, 2.0, -2.0, 0.0),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_floor_divide_and_remainder_take_the_standards_values(dtype):
    x1, x2, quotient, remainder = (list(column) for column in zip(*BINARY))
    a, b = _spread(x1, dtype), _spread(x2, dtype)
    with np.errstate(all="ignore"), mdarray.options(fallback="raise"):
        for got in (a // b, mdarray.floor_divide(a, b), np.floor_divide(a, b)):
            _same(got.get(), quotient)
        for got in (a % b, mdarray.remainder(a, b), np.remainder(a, b)):
            _same(got.get(), remainder)
        for op in ("__ifloordiv__", "__imod__"):  # the kernel overwrites its operand
            c = a.copy()
            getattr(c, op)(b)
            _same(c.get(), quotient if op == "__ifloordiv__" else remainder)
            c = a.copy()
            getattr(c, op)(-0.0)
            _same(c.get(), np.floor_divide(x1, -0.0) if op == "__ifloordiv__" else NAN)
        # A scalar operand and 0-d arrays (NumPy's kernels give scalars there).
        _same((a // INF).get(), np.array(x1, dtype) / INF)
        _same((mdarray.asarray(np.array(INF, dtype)) // 2).get(), INF)
    # In place on 0-d arrays of one chunk, warnings shown (the array API suite's way): the
    # kernel writes its out in one call.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for op, want in (("__ifloordiv__", quotient), ("__imod__", remainder)):
            for v1, v2, w in zip(x1, x2, want):
                c = mdarray.asarray(v1, dtype=dtype)
                getattr(c, op)(mdarray.asarray(v2, dtype=dtype))
                _same(c.get(), w)


# (z, the standard's expm1, tanh, log, acosh at z; None where unspecified or not checked)
COMPLEX = [
    (complex(-0.0, 0.0), complex(0, 0), complex(-0.0, 0), complex(-INF, math.pi), None),
    (complex(INF, 0.0), complex(INF, 0.0), complex(1, 0), complex(INF, 0), None),
    (complex(-INF, 2.0), complex(-1 + 0 * math.cos(2), 0.0), complex(-1, 0), None, None),
    (complex(0.0, INF), complex(NAN, NAN), complex(0, NAN), complex(INF, math.pi / 2), None),
    (complex(0.0, NAN), complex(NAN, NAN), complex(0, NAN), complex(NAN, NAN), None),
    (complex(INF, 2.0), None, complex(1, 0), complex(INF, 0), complex(INF, 0)),
    (complex(INF, -2.0), None, complex(1, -0.0), None, None),
    (complex(-INF, NAN), complex(-1, 0), None, complex(INF, NAN), complex(INF, NAN)),
    (complex(NAN, INF), None, None, complex(INF, NAN), complex(INF, NAN)),
    (complex(INF, NAN), complex(INF, NAN), complex(1, 0), complex(INF, NAN), complex(INF, NAN)),
    (complex(NAN, 0.0), complex(NAN, 0.0), complex(NAN, 0.0), None, None),
    (complex(1.0, 2.0), np.expm1(1 + 2j), np.tanh(1 + 2j), np.log(1 + 2j), np.arccosh(1 + 2j)),
]


@pytest.mark.parametrize(
    ("column", "ufunc"), [(1, np.expm1), (2, np.tanh), (3, np.log), (3, np.log1p), (4, np.arccosh)]
)
def test_complex_functions_take_the_standards_values(column, ufunc):
    cases = [(row[0], row[column]) for row in COMPLEX if row[column] is not None]
    if ufunc is np.log1p:  # log1p(z) is log(z) at infinities; 1 + 2j is not one
        cases = [(z, w) for z, w in cases if not np.isfinite(z)]
    z, want = (list(column) for column in zip(*cases))
    x = _spread(z, "complex128")
    with np.errstate(all="ignore"), mdarray.options(fallback="raise"):
        got = ufunc(x).get()
    _same(got, want)


FINITE = hnp.arrays(np.float64, 6, elements=st.floats(-50, 50, allow_subnormal=False))


@given(FINITE, FINITE)
def test_finite_operands_keep_the_kernels_values(a, b):
    """Away from the special values the backend's kernel stands (NumPy's ``1 // 0.1`` is
    9.0 from its pairing with %, CuPy's is floor(1 / 0.1) = 10.0)."""
    x, y = _spread(a, "float64"), _spread(b, "float64")
    with np.errstate(all="ignore"), mdarray.options(fallback="raise"):
        for ufunc in (np.floor_divide, np.remainder):
            np.testing.assert_array_equal(ufunc(x, y).get(), on_backend(ufunc, a, b))
        z = _spread(a + 1j * b, "complex128")
        for ufunc in (np.expm1, np.tanh, np.log, np.log1p, np.arccosh):
            np.testing.assert_array_equal(ufunc(z).get(), on_backend(ufunc, a + 1j * b))


def test_integer_division_is_numpys():
    a, b = np.array([7, -7, 7, -7, 0]), np.array([2, 2, -2, -2, 3])
    x, y = _spread(a, "int64"), _spread(b, "int64")
    with mdarray.options(fallback="raise"):
        assert_dist_equal(x // y, a // b)
        assert_dist_equal(x % y, a % b)
