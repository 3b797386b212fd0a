"""The oracles: NumPy for functions that may gather (same value, or same error, on the same
data), and the backend's own kernel on the whole array for elementwise values."""

import numpy as np
import pytest
from _backend_facts import ON_CUDA, ulps

import mdarray
from mdarray._backends.backend import backend as default_backend_object
from mdarray.testing import assert_dist_allclose, assert_dist_equal


def on_backend(func, *args, **kwargs):
    """`func` (a NumPy ufunc or function) run by the backend's array module on whole arrays,
    back as a NumPy array. A DistArray promises the backend's kernel chunk by chunk, and
    CuPy's kernels depart from NumPy's where the standard leaves room (complex arithmetic at
    infinities, signs of zeros in complex division); on the cpu backend this is NumPy.
    Arrays go over as the library's own chunks do (a copy of the bytes: signed zeros kept)."""
    chunks = default_backend_object()
    device = mdarray.devices()[0]
    args = [chunks.from_host(a, device) if isinstance(a, np.ndarray) else a for a in args]
    with chunks.on(device):
        out = getattr(chunks.xp, func.__name__)(*args, **kwargs)
    return out if isinstance(out, np.ndarray | np.generic) else out.get()


def check_against_numpy(func, numpy_func, args, numpy_args, kwargs=None):
    """`func` on DistArrays gives `numpy_func`'s value (or error) on the same data."""
    kwargs = kwargs or {}
    try:
        want = numpy_func(*numpy_args, **kwargs)
    except Exception as error:
        with pytest.raises(type(error)), mdarray.options(fallback="allow"):
            func(*args, **kwargs)
        return
    with mdarray.options(fallback="allow"):
        got = func(*args, **kwargs)
    assert_dist_equal(got, np.asarray(want))


def assert_matches(result, expected) -> None:
    """`result` is a DistArray of `expected`'s shape and dtype with its value (floats
    within a sum's rounding)."""
    expected = np.asarray(expected)
    assert isinstance(result, mdarray.DistArray)
    assert result.shape == expected.shape
    assert result.dtype == expected.dtype
    if expected.dtype.kind in "fc":
        assert_dist_allclose(result, expected, rtol=1e-5, atol=1e-6)
    else:
        assert_dist_equal(result, expected)


def _host(value):
    if isinstance(value, mdarray.DistArray):
        return value.get()
    if isinstance(value, (list, tuple)):
        return type(value)(_host(v) for v in value)
    return value


def _same_result(got, want, rtol) -> None:
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)), type(got)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same_result(g, w, rtol)
        return
    if isinstance(want, np.ndarray) or (
        isinstance(want, np.generic) and isinstance(got, mdarray.DistArray)
    ):
        assert isinstance(got, mdarray.DistArray), type(got)
        value, want = got.get(), np.asarray(want)
        assert (value.shape, value.dtype) == (want.shape, want.dtype), (value, want)
        if want.dtype.kind in "fc" and (rtol or ON_CUDA):
            tol = {"rtol": rtol, "atol": rtol} if rtol else ulps(want.dtype)
            np.testing.assert_allclose(value, want, **tol, equal_nan=True)
        else:
            np.testing.assert_array_equal(value, want)
        return
    assert type(got) is type(want), (got, want)
    if isinstance(want, float) and (rtol or ON_CUDA):
        tol = {"rtol": rtol, "atol": rtol} if rtol else ulps(np.float64)
        assert np.isclose(got, want, **tol, equal_nan=True), (got, want)
    else:
        assert got == want or (np.isnan(got) and np.isnan(want)), (got, want)


def native_like_numpy(call, *arguments, rtol=None) -> None:
    """`call` on `arguments` (DistArrays among them) under ``fallback="raise"`` does what
    it does on their NumPy values: the same result (values, dtype, shape; floats within
    `rtol` where given, within a few units in the last place on CUDA, whose math library
    rounds differently) or the same exception type, and the same writes into the
    arguments (none where it fails, NumPy's own calls being no promise there)."""
    values = [_host(a) for a in arguments]
    before = [_host(a) for a in arguments]
    try:
        with np.errstate(all="ignore"):
            want = call(*values)
    except Exception as error:
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            call(*arguments)
        failed = True
    else:
        failed = False
        with mdarray.options(fallback="raise"), np.errstate(all="ignore"):
            got = call(*arguments)
        _same_result(got, want, rtol)
    # A failed call writes nothing (where NumPy's may have written part of its work).
    for argument, value in zip(arguments, before if failed else values):
        if isinstance(argument, mdarray.DistArray):
            np.testing.assert_array_equal(argument.get(), value, err_msg=f"failed={failed}")
