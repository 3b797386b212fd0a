"""The array API standard's special values, where a backend's kernel departs from them.

The standard fixes the result of each elementwise function at NaN, infinities and signed
zeros. NumPy departs from it in a few places (``inf // 2`` is NaN where the standard says
``inf``: NumPy pairs ``//`` with ``%``; complex ``expm1`` and ``tanh`` at infinities), and
CuPy in others (``%`` by an infinity, complex ``log``, ``log1p`` and ``acosh`` at
infinities and NaN). A DistArray gives one answer on every backend, the standard's:
`standard` wraps a backend's kernel so that, after it runs, the elements where the standard
speaks are overwritten with its value. Elsewhere the kernel's result stands untouched.

Each fix-up reads the operands (and the kernel's result) and returns ``(mask, value)``:
the elements to overwrite and what they get. It runs only for the dtype kinds it names
("f" real floating, "c" complex), so integer and real loops cost nothing extra, and it
costs a few elementwise passes where it runs (these are not hot functions).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .kernels import exact_array


def standard(xp, ufunc, kernel):
    """`kernel` (the backend's loop for the NumPy `ufunc`, called like a ufunc, ``out=`` and
    ``where=`` included) with the standard's special values written over its results, or
    `kernel` itself where no fix-up applies."""
    entry = _FIXES.get(ufunc)
    if entry is None or kernel is None:
        return kernel
    kinds, fix = entry

    def run(*args, out=None, where=True, **options):
        kwargs = dict(options)
        if out is not None:
            kwargs["out"] = out
            # The fix-up reads the operands after the kernel ran: x //= y overwrote x.
            args = tuple(a.copy() if hasattr(a, "shape") else a for a in args)
        if where is not True:
            kwargs["where"] = where
        result = kernel(*args, **kwargs)
        target = result[0] if isinstance(result, tuple) else result
        if target.dtype.kind in kinds:
            operands = [exact_array(xp, a) for a in args]
            with np.errstate(all="ignore"):  # NaN and infinities are the point here
                mask, value = fix(xp, target, *operands)
            if where is not True:
                mask = mask & where
            if isinstance(target, np.generic):  # NumPy's scalar result of 0-d operands
                return np.where(mask, value, target).astype(target.dtype)[()]
            xp.copyto(target, value, casting="unsafe", where=mask)
        return result

    run.__name__ = getattr(kernel, "__name__", ufunc.__name__)
    return run


def _complex(xp, real, imag, dtype):
    """The complex array of parts `real` and `imag` (arrays or scalars, broadcast),
    exactly: ``real + 1j * imag`` would turn an infinite `imag` into NaN."""
    part = np.dtype(dtype).char.lower()
    real, imag = (exact_array(xp, p).astype(part, copy=False) for p in (real, imag))
    parts = xp.stack(xp.broadcast_arrays(real, imag), axis=-1)
    return xp.ascontiguousarray(parts).view(dtype)[..., 0]


def _floor_divide(xp, result, x1, x2):
    # floor(x1 / x2) where exactly one operand is infinite: the quotient is then an
    # infinity or a signed zero, its own floor (NumPy gives NaN for inf // 2, -1.0 for
    # -1 // inf, from its pairing with %).
    return xp.isinf(x1) != xp.isinf(x2), xp.divide(x1, x2)


def _remainder(xp, result, x1, x2):
    # Python's %: a finite x1 by an infinite x2 is x1 where the signs agree, else x2; a
    # zero result (a zero x1 included) by a nonzero x2 is a zero of x2's sign.
    by_infinity = xp.isfinite(x1) & xp.isinf(x2)
    of_zero = ((x1 == 0) | (result == 0)) & (x2 != 0) & ~xp.isnan(x2)
    value = xp.where(xp.signbit(x1) == xp.signbit(x2), x1, x2)
    value = xp.where(of_zero, xp.copysign(xp.zeros_like(value), x2), value)
    return by_infinity | of_zero, value


def _expm1(xp, result, z):
    # exp(a) * cis(b) - 1 part by part, where a part is not finite; +0 + bj at a zero.
    a, b = z.real, z.imag
    zero = (a == 0) & (b == 0)
    grown = xp.exp(a)
    real = grown * xp.cos(b) - 1
    imag = xp.where(b == 0, b, grown * xp.sin(b))
    low = xp.isneginf(a) & ~xp.isfinite(b)  # -1 + 0j
    high = xp.isposinf(a) & ~xp.isfinite(b)  # inf + NaN j
    real = xp.where(low | zero, xp.where(zero, 0.0, -1.0), xp.where(high, math.inf, real))
    imag = xp.where(low, 0.0, xp.where(high, math.nan, imag))
    return ~xp.isfinite(z) | zero, _complex(xp, real, imag, z.dtype)


def _tanh(xp, result, z):
    # A zero real part with an infinite or NaN imaginary one keeps the zero (C99 says
    # so; older C libraries give NaN); an infinite real part gives +-1 with a zero of b's
    # sign (the standard's 1 + 0j for b > 0, odd and conjugate-symmetric); NaN with a
    # zero imaginary part keeps the zero.
    a, b = z.real, z.imag
    zero = (a == 0) & ~xp.isfinite(b)
    infinite = xp.isinf(a)
    flat = xp.isnan(a) & (b == 0)
    real = xp.where(zero | flat, a, xp.copysign(xp.ones_like(a), a))
    imag = xp.where(zero, math.nan, xp.where(flat, b, xp.copysign(xp.zeros_like(b), b)))
    return zero | infinite | flat, _complex(xp, real, imag, z.dtype)


def _log(xp, result, z):
    # |z| is infinite where either part is: the real part of the log is +inf whatever
    # the other part (NaN included); the kernel's imaginary part stands.
    return xp.isinf(z.real) | xp.isinf(z.imag), _complex(xp, math.inf, result.imag, z.dtype)


def _acosh(xp, result, z):
    # acosh(+-0 + NaN j) is NaN + pi/2 j.
    return (z.real == 0) & xp.isnan(z.imag), _complex(xp, math.nan, math.pi / 2, z.dtype)


_Fix = Callable[..., tuple[Any, Any]]

_FIXES: dict[np.ufunc, tuple[str, _Fix]] = {
    np.floor_divide: ("f", _floor_divide),
    np.remainder: ("f", _remainder),
    np.expm1: ("c", _expm1),
    np.tanh: ("c", _tanh),
    np.log: ("c", _log),
    np.log1p: ("c", _log),
    np.arccosh: ("c", _acosh),
}
FIXED = tuple(_FIXES)


# Fused functions (`mdarray.fuse`) ------------------------------------------------------


class _Tracing(np.ndarray):
    """An empty stand-in that stops a function at its first ufunc in `FIXED`."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc in _FIXES:
            raise _CallsFixed
        plain = [x.view(np.ndarray) if isinstance(x, _Tracing) else x for x in inputs]
        got = getattr(ufunc, method)(*plain, **kwargs)
        if isinstance(got, tuple):
            return tuple(_tracing(g) for g in got)
        return _tracing(got)


def _tracing(x):
    return x.view(_Tracing) if type(x) is np.ndarray else x


class _CallsFixed(Exception):
    pass


# Per fused function (weakly: lambdas come and go), per operand types: `calls_fixed`.
_FIXED_CALLS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def calls_fixed(fn, args) -> bool:
    """Whether `fn` calls a ufunc of `FIXED` on (values derived from) its array `args`
    (NumPy's or CuPy's), found once per function and operand dtypes and ranks by running
    it on empty NumPy arrays; True where that run fails (the real call then raises the
    real error). A backend runs such a function with its fixed kernels, not fused."""
    key = tuple((a.dtype, a.ndim) if hasattr(a, "ndim") else (type(a), None) for a in args)
    known = _FIXED_CALLS.get(fn)
    if known is None:
        _FIXED_CALLS[fn] = known = {}
    calls = known.get(key)
    if calls is None:
        # 1-d at least: NumPy's 0-d results are scalars, which the trace would lose.
        stand_ins = [
            np.empty((0,) * max(a.ndim, 1), a.dtype).view(_Tracing) if hasattr(a, "ndim") else a
            for a in args
        ]
        try:
            with np.errstate(all="ignore"):
                fn(*stand_ins)
            calls = False
        except Exception:  # _CallsFixed, or fn fails: take the safe path
            calls = True
        known[key] = calls
    return calls
