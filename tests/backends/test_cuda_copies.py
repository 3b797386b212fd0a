"""The cuda backend's 2-D copies (`mdarray._backends.cuda.kernels.copy_rows`): row and column
blocks copied by mdarray's own kernel or ``cudaMemcpy2DAsync``, against NumPy on the same
data; the cases it must leave to CuPy's assignment change nothing.

Skipped unless CuPy imports and the default backend is cuda (``MDARRAY_BACKEND=cuda`` on
a GPU machine).
"""

import numpy as np
import pytest
from _backend_facts import CUDA_ONLY

import mdarray
from mdarray._backends.cuda.kernels import copy_rows

cupy = pytest.importorskip("cupy")

pytestmark = CUDA_ONLY


@pytest.mark.parametrize(
    ("index", "source"),
    [
        ((slice(0, 40), slice(3, 10)), lambda h: h[10:50, 20:27]),  # column block
        ((slice(5, 6), slice(0, 64)), lambda h: h[7:8, :]),  # one row
        ((slice(2, 30), slice(None)), lambda h: h[30:58, :]),  # row block
        ((slice(1, 2), slice(0, 1)), lambda h: h[3:4, 5:6]),  # one element
    ],
)
def test_blocks_copy_as_numpy_assigns(index, source):
    host = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    other = -np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    out = cupy.asarray(host)
    assert copy_rows(cupy, out, index, source(cupy.asarray(other)))
    expected = host.copy()
    expected[index] = source(other)
    np.testing.assert_array_equal(cupy.asnumpy(out), expected)


@pytest.mark.parametrize(
    ("shape", "index", "source"),
    [
        # 16-byte aligned pieces: the kernel, not the driver's 2-D copy
        ((64, 64), (slice(0, 40), slice(16, 32)), lambda h: h[10:50, 32:48]),
        ((8, 8192), (slice(1, 7), slice(None)), lambda h: h[2:8, :]),  # rows of 2 blocks
        ((70000, 8), (slice(None), slice(4, 8)), lambda h: h[:, 0:4]),  # rows past 65535
    ],
)
def test_aligned_blocks_copy_as_numpy_assigns(shape, index, source):
    host = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    other = -host
    out = cupy.asarray(host)
    assert copy_rows(cupy, out, index, source(cupy.asarray(other)))
    expected = host.copy()
    expected[index] = source(other)
    np.testing.assert_array_equal(cupy.asnumpy(out), expected)


def test_one_dimensional_pieces():
    out = cupy.zeros(100, np.int64)
    assert copy_rows(cupy, out, (slice(10, 30),), cupy.arange(20))
    expected = np.zeros(100, np.int64)
    expected[10:30] = np.arange(20)
    np.testing.assert_array_equal(cupy.asnumpy(out), expected)


def test_cases_left_to_cupy_change_nothing():
    host = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    out = cupy.asarray(host)
    cases = [
        ((slice(0, 10), slice(0, 10)), out[5:15, 5:15]),  # overlapping its target
        ((slice(0, 10), slice(0, 10)), cupy.ones((10, 10), np.float64)),  # another dtype
        ((slice(0, 10), slice(0, 10)), cupy.ones((10, 10), np.float32).T[::1, ::2]),
        ((slice(0, 10), slice(0, 10)), cupy.ones((1, 10), np.float32)),  # a broadcast
        ((slice(0, 10), slice(0, 10)), np.ones((10, 10), np.float32)),  # a host array
        ((np.arange(3), slice(0, 3)), cupy.ones((3, 3), np.float32)),  # not basic
        ((slice(0, 2), slice(0, 2), slice(0, 2)), cupy.ones((2, 2, 2), np.float32)),
    ]
    for index, source in cases:
        try:
            done = copy_rows(cupy, out, index, source)
        except IndexError:
            done = False
        assert not done
    np.testing.assert_array_equal(cupy.asnumpy(out), host)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.int16])
def test_reshard_rows_to_columns_matches_numpy(dtype):
    host = (np.arange(96 * 80) % 251).astype(dtype).reshape(96, 80)
    devices = mdarray.devices()
    rows = {d: [] for d in devices}
    columns = {d: [] for d in devices}
    for k in range(4):
        rows[devices[k % len(devices)]].append((slice(24 * k, 24 * (k + 1)), slice(None)))
        columns[devices[k % len(devices)]].append((slice(None), slice(20 * k, 20 * (k + 1))))
    x = mdarray.distributed_array(host, mdarray.Layout(host.shape, rows))
    y = x.reshard(mdarray.Layout(host.shape, columns))
    np.testing.assert_array_equal(y.get(), host)
    np.testing.assert_array_equal(y.reshard(x.layout).get(), host)
