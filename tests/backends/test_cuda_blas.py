"""The cuda backend's products by one cuBLAS call (`mdarray._backends.cuda.blas`): each
order of each operand, matrix by vector, vector by matrix and matrix by matrix, against
NumPy on the same data; the operands it leaves to CuPy; the stream it runs on.

Skipped unless CuPy imports and the default backend is cuda (``MDARRAY_BACKEND=cuda`` on
a GPU machine).
"""

import numpy as np
import pytest
from _backend_facts import CUDA_ONLY

import mdarray
from mdarray._backends.backend import backend as default_backend

cupy = pytest.importorskip("cupy")

pytestmark = CUDA_ONLY

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _blas():
    return default_backend()._blas


def _host(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _on_device(host, order):
    """`host` on the device in `order`: "C", "F", or "T" (the C-order transpose's view)."""
    if order == "T":
        return cupy.asarray(np.ascontiguousarray(host.T)).T
    return cupy.asarray(np.asarray(host, order=order))


def _check(got, expected, dtype):
    assert got is not None
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    assert got.flags.c_contiguous
    # Sums in another order: an error relative to the operands' scale, not each result's.
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    scale = max(1.0, float(np.max(np.abs(expected), initial=0)))
    np.testing.assert_allclose(cupy.asnumpy(got), expected, rtol=tol, atol=tol * scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F", "T"])
@pytest.mark.parametrize("shape", [(1, 1), (7, 5), (5, 7), (300, 129), (1, 64), (64, 1)])
def test_matrix_times_vector_and_vector_times_matrix(dtype, order, shape):
    hm = _host(shape, dtype, 0)
    hx, hy = _host(shape[1], dtype, 1), _host(shape[0], dtype, 2)
    m = _on_device(hm, order)
    _check(_blas().matmul(m, cupy.asarray(hx)), hm @ hx, dtype)
    _check(_blas().matmul(cupy.asarray(hy), m), hy @ hm, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("orders", [("C", "C"), ("C", "F"), ("F", "C"), ("T", "T"), ("T", "C")])
@pytest.mark.parametrize(("m", "k", "n"), [(1, 1, 1), (7, 5, 3), (100, 16, 8), (16, 100, 1)])
def test_matrix_times_matrix(dtype, orders, m, k, n):
    ha, hb = _host((m, k), dtype, 3), _host((k, n), dtype, 4)
    a, b = _on_device(ha, orders[0]), _on_device(hb, orders[1])
    _check(_blas().matmul(a, b), ha @ hb, dtype)


def test_operands_it_leaves_to_cupy():
    blas = _blas()
    a = cupy.ones((4, 6), np.float32)
    cases = [
        (a, cupy.ones(6, np.float64)),  # mixed dtypes
        (cupy.ones((4, 6), np.int64), cupy.ones(6, np.int64)),  # no BLAS for integers
        (a[:, ::2], cupy.ones(3, np.float32)),  # a gap between columns
        (a, cupy.ones(12, np.float32)[::2]),  # a strided vector
        (cupy.ones((2, 4, 6), np.float32), cupy.ones(6, np.float32)),  # a stack
        (cupy.ones((2, 4, 6), np.float32), cupy.ones((6, 2), np.float32)),
        (a, cupy.ones((2, 6, 3), np.float32)),
        (cupy.ones(6, np.float32), cupy.ones(6, np.float32)),  # two vectors
        (cupy.ones((0, 6), np.float32), cupy.ones(6, np.float32)),  # no rows
        (cupy.ones((4, 0), np.float32), cupy.ones((0, 3), np.float32)),  # nothing summed
        (a, np.ones(6, np.float32)),  # a host array
    ]
    for x, y in cases:
        assert blas.matmul(x, y) is None
    # A shape mismatch is left to CuPy, which raises its error.
    assert blas.matmul(a, cupy.ones(5, np.float32)) is None
    assert blas.matmul(a, cupy.ones((5, 2), np.float32)) is None


def test_operands_off_the_current_device_are_left_to_cupy(monkeypatch):
    """cuBLAS runs on the current device: operands elsewhere go to CuPy's handling."""
    blas = _blas()
    a, v = cupy.ones((4, 6), np.float32), cupy.ones(6, np.float32)
    assert blas.matmul(a, v) is not None
    monkeypatch.setattr(blas, "_device", lambda: a.data.device_id + 1)
    assert blas.matmul(a, v) is None


def test_it_runs_on_the_current_stream():
    """The product is ordered after work queued on the current stream before it."""
    h = _host((512, 512), np.float32, 5)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        a = cupy.zeros((512, 512), np.float32)
        a += cupy.asarray(h)  # queued on this stream, not yet done maybe
        got = _blas().matmul(a, a)
    stream.synchronize()
    _check(got, h @ h, np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_products_of_distributed_arrays_take_it(dtype):
    """The band products of an iteration (``A @ x``, ``x.T @ r``) give NumPy's values."""
    ha, hx, hr = _host((64, 32), dtype, 6), _host(32, dtype, 7), _host(64, dtype, 8)
    layout = {mdarray.devices()[0]: [(slice(0, 32), slice(0, 32)), (slice(32, 64), slice(0, 32))]}
    a = mdarray.distributed_array(ha, layout)
    x = mdarray.asarray(hx, device=a.device)
    r = mdarray.distributed_array(hr, {mdarray.devices()[0]: [(slice(0, 32),), (slice(32, 64),)]})
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for got, expected in (((a @ x).get(), ha @ hx), ((a.T @ r).get(), ha.T @ hr)):
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * np.max(np.abs(expected)))
