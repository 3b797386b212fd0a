"""The cuda backend's column sums (`mdarray._backends.cuda.columns`): ``sum(axis=0)`` of large
C-ordered chunks by mdarray's own kernels, against NumPy on the same data.

Skipped unless CuPy imports and the default backend is cuda (``MDARRAY_BACKEND=cuda`` on
a GPU machine).
"""

import numpy as np
import pytest
from _backend_facts import CUDA_ONLY

import mdarray
from mdarray._backends.cuda import columns as _cuda_columns

cupy = pytest.importorskip("cupy")

pytestmark = CUDA_ONLY


@pytest.fixture
def every_size(monkeypatch):
    monkeypatch.setattr(_cuda_columns, "MIN_BYTES", 0)


def _sum(chunk, result_dtype, skip_nan=False):
    return _cuda_columns.column_sum(cupy, np.add, chunk, (0,), np.dtype(result_dtype), skip_nan)


@pytest.mark.parametrize(
    ("dtype", "result"),
    [
        (np.float32, np.float32),
        (np.float64, np.float64),
        (np.int32, np.int64),
        (np.int64, np.int64),
        (np.uint8, np.uint64),
        (np.float32, np.float64),
    ],
)
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
    assert _cuda_columns.column_sum(cupy, np.add, a, (1,), np.dtype(np.float32), False) is None
    assert _cuda_columns.column_sum(cupy, np.maximum, a, (0,), np.dtype(np.float32), False) is None


def test_small_arrays_stay_cupys():
    assert _sum(cupy.ones((64, 32), np.float32), np.float32) is None


def test_distarray_column_sums_take_it(every_size, monkeypatch):
    calls = []
    original = _cuda_columns._kernel
    monkeypatch.setattr(_cuda_columns, "_kernel", lambda *a: calls.append(a) or original(*a))
    host = np.arange(96 * 40, dtype=np.float64).reshape(96, 40) % 7
    layout = mdarray.Layout.block(host.shape, devices=mdarray.devices())
    x = mdarray.distributed_array(host, layout)
    np.testing.assert_allclose(x.sum(axis=0).get(), host.sum(axis=0))
    np.testing.assert_allclose(mdarray.mean(x, axis=0).get(), host.mean(axis=0))
    assert calls
