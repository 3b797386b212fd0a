"""The cuda backend's column sums (`mdarray._backends.cuda.sums`): ``sum(axis=0)`` of large
C-ordered chunks by mdarray's own kernels, against NumPy on the same data.

Skipped unless CuPy imports and the default backend is cuda (``MDARRAY_BACKEND=cuda`` on
a GPU machine).
"""

import numpy as np
import pytest
from _backend_facts import CUDA_ONLY

import mdarray
from mdarray._backends.cuda import backend as _cuda_backend, sums as _cuda_sums

cupy = pytest.importorskip("cupy")

pytestmark = CUDA_ONLY


@pytest.fixture
def every_size(monkeypatch):
    monkeypatch.setattr(_cuda_sums, "MIN_BYTES", 0)
    monkeypatch.setattr(_cuda_backend, "SMALL_SUM", 0)


def _sum(chunk, result_dtype, skip_nan=False):
    return _cuda_sums.column_sum(cupy, np.add, chunk, (0,), np.dtype(result_dtype), skip_nan)


#: (source, result) dtypes of the sums mdarray's kernels take.
SUMS = [
    (np.float32, np.float32),
    (np.float64, np.float64),
    (np.int32, np.int64),
    (np.int64, np.int64),
    (np.uint8, np.uint64),
    (np.float32, np.float64),
]


@pytest.mark.parametrize(("dtype", "result"), SUMS)
@pytest.mark.parametrize("shape", [(1, 8), (3, 5), (1000, 12), (4097, 33), (64, 4, 6)])
def test_column_sums_match_numpy(every_size, dtype, result, shape):
    rng = np.random.default_rng(0)
    host = (rng.standard_normal(shape) * 50).astype(dtype)
    got = _sum(cupy.asarray(host), result)
    expected = host.sum(axis=0, keepdims=True, dtype=result)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    if np.dtype(dtype).kind == "f":
        scale = np.abs(host).sum(axis=0, keepdims=True, dtype=np.float64)
        tolerance = 8 * np.finfo(result).eps * scale
        assert np.all(np.abs(cupy.asnumpy(got) - expected) <= tolerance)
    else:
        np.testing.assert_array_equal(cupy.asnumpy(got), expected)


def test_cases_it_leaves_to_cupy(every_size):
    a = cupy.ones((64, 32), np.float32)
    assert _sum(a.T, np.float32) is None  # not C-ordered
    assert _sum(a[0], np.float32) is None  # one axis
    assert _sum(a, np.float16) is None  # float16 sums
    assert _sum(a.astype(np.complex64), np.complex64) is None
    assert _sum(a, np.float32, skip_nan=True) is None
    assert _cuda_sums.column_sum(cupy, np.add, a, (1,), np.dtype(np.float32), False) is None
    assert _cuda_sums.column_sum(cupy, np.maximum, a, (0,), np.dtype(np.float32), False) is None


def test_small_arrays_stay_cupys():
    assert _sum(cupy.ones((64, 32), np.float32), np.float32) is None


def test_distarray_column_sums_take_it(every_size, monkeypatch):
    calls = []
    original = _cuda_sums._kernel
    monkeypatch.setattr(_cuda_sums, "_kernel", lambda *a: calls.append(a) or original(*a))
    host = np.arange(96 * 40, dtype=np.float64).reshape(96, 40) % 7
    layout = mdarray.Layout.block(host.shape, devices=mdarray.devices())
    x = mdarray.distributed_array(host, layout)
    np.testing.assert_allclose(x.sum(axis=0).get(), host.sum(axis=0))
    np.testing.assert_allclose(mdarray.mean(x, axis=0).get(), host.mean(axis=0))
    assert calls


# Whole sums ----------------------------------------------------------------------------


@pytest.mark.parametrize(("dtype", "result"), SUMS)
@pytest.mark.parametrize(
    "shape", [(1,), (7,), (1023,), (3, 5), (4097, 33), (64, 4, 6), (1 << 20) + 3]
)
@pytest.mark.parametrize("order", ["C", "F"])
def test_whole_sums_match_numpy(dtype, result, shape, order):
    rng = np.random.default_rng(1)
    host = np.asarray((rng.standard_normal(shape) * 50).astype(dtype), order=order)
    chunk = cupy.asarray(host, order=order)
    got = _cuda_sums.whole_sum(cupy, chunk, np.dtype(result))
    expected = host.sum(keepdims=True, dtype=result)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    if np.dtype(dtype).kind == "f":
        tolerance = 8 * np.finfo(result).eps * np.abs(host).sum(dtype=np.float64)
        assert abs(float(got.ravel()[0]) - float(expected.ravel()[0])) <= tolerance
    else:
        np.testing.assert_array_equal(cupy.asnumpy(got), expected)
    # The ticket the last block resets: every later call sums again, to the same bits.
    for _ in range(3):
        again = _cuda_sums.whole_sum(cupy, chunk, np.dtype(result))
        np.testing.assert_array_equal(cupy.asnumpy(again), cupy.asnumpy(got))


def test_whole_sums_on_two_streams_keep_apart():
    """Each stream has its own partial sums and ticket: sums queued on two streams at
    once (a long one on each) give each its own value."""
    host = np.arange(1 << 22, dtype=np.float64) % 11
    a, b = cupy.asarray(host), cupy.asarray(host * 2)
    cupy.cuda.Device().synchronize()  # (copied on the default stream, which these skip)
    results = []
    streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(2)]
    for _ in range(4):
        for s, x in zip(streams, (a, b)):
            with s:
                results.append(_cuda_sums.whole_sum(cupy, x, np.dtype(np.float64)))
    cupy.cuda.Device().synchronize()
    for k, got in enumerate(results):
        assert float(got[0]) == host.sum() * (1 if k % 2 == 0 else 2)


def test_whole_sums_it_leaves_to_cupy():
    a = cupy.ones((64, 32), np.float32)
    assert _cuda_sums.whole_sum(cupy, a[:, ::2], np.dtype(np.float32)) is None  # strided
    assert _cuda_sums.whole_sum(cupy, a, np.dtype(np.float16)) is None
    assert _cuda_sums.whole_sum(cupy, a.astype(np.complex64), np.dtype(np.complex64)) is None
    assert _cuda_sums.whole_sum(cupy, a.astype(bool), np.dtype(np.int64)) is None
    assert _cuda_sums.whole_sum(cupy, a.astype(np.float16), np.dtype(np.float32)) is None
    assert _cuda_sums.whole_sum(cupy, a[:0], np.dtype(np.float32)) is None


def test_distarray_whole_sums_take_it(monkeypatch):
    calls = []
    original = _cuda_sums.whole_sum
    monkeypatch.setattr(_cuda_backend, "whole_sum", lambda *a: calls.append(a) or original(*a))
    host = np.arange(96 * 40, dtype=np.float32).reshape(96, 40) % 7
    layout = mdarray.Layout.block(host.shape, devices=mdarray.devices())
    x = mdarray.distributed_array(host, layout)
    assert float(mdarray.sum(x * x)) == float((host * host).sum())
    assert float(np.mean(x)) == pytest.approx(float(host.mean()))
    assert len(calls) >= 2
