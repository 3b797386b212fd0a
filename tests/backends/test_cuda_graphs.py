"""The cuda backend's recordings (`mdarray._backends.cuda.graphs`): the matrix product a
recording can hold against NumPy, work recorded and launched, and the recording's memory
kept for arrays that outlive it.

Skipped unless CuPy imports and the default backend is cuda (``MDARRAY_BACKEND=cuda`` on
a GPU machine).
"""

import numpy as np
import pytest
from _backend_facts import CUDA_ONLY

import mdarray
from mdarray._backends.backend import get_backend
from mdarray._backends.cuda import graphs
from mdarray._core.recording import RecordingRefused

cupy = pytest.importorskip("cupy")

pytestmark = CUDA_ONLY

SHAPES = [
    ((8, 2500), (2500, 16)),  # few outputs, long sums: split over threads
    ((3000, 16), (16, 8)),  # many outputs, short sums
    ((64,), (64, 5)),
    ((40, 64), (64,)),
    ((300,), (300,)),
    ((5, 0), (0, 3)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize(("left", "right"), SHAPES)
def test_recorded_matmul_matches_numpy(left, right, dtype):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(left).astype(dtype)
    b = rng.standard_normal(right).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(left).astype(dtype)
        b = b - 1j * rng.standard_normal(right).astype(dtype)
    got = graphs.recorded_matmul(cupy, cupy.asarray(a), cupy.asarray(b))
    want = a @ b
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    tolerance = 1e-4 if np.dtype(dtype).char in "fF" else 1e-12
    np.testing.assert_allclose(cupy.asnumpy(got), want, rtol=tolerance, atol=tolerance * 50)


def test_recorded_matmul_reads_strided_operands_and_writes_out():
    """A transposed view (k-means' ``onehot.T``) and ``out=``."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((900, 8))
    b = rng.standard_normal((900, 16))
    out = cupy.empty((8, 16))
    got = graphs.recorded_matmul(cupy, cupy.asarray(a).T, cupy.asarray(b), out=out)
    assert got is out
    np.testing.assert_allclose(cupy.asnumpy(out), a.T @ b, rtol=1e-12)


def test_recorded_matmul_refuses_what_cublas_should_do():
    big = cupy.ones((1024, 1024), np.float32)
    with pytest.raises(RecordingRefused, match="1024x1024 by 1024x1024"):
        graphs.recorded_matmul(cupy, big, big)
    with pytest.raises(RecordingRefused, match="float16"):
        graphs.recorded_matmul(cupy, big[:2].astype(np.float16), big[:, :2].astype(np.float16))
    with pytest.raises(RecordingRefused):
        graphs.recorded_matmul(cupy, cupy.ones((2, 3, 4)), cupy.ones((4, 2)))


def test_a_recording_runs_only_when_launched_and_keeps_its_memory():
    """Recorded work does not run until `launch`, runs at each launch, and an array made
    while recording keeps its memory after the recording is closed."""
    backend = get_backend("cuda")
    device = mdarray.devices()[0]
    recording = backend.recording((device,))
    with backend.on(device):
        x = cupy.zeros(4)

    def body():
        with backend.on(device):
            x[...] += 1.0
            return x * 2.0

    graph, made = recording.record(body)
    assert recording.made_here(made)
    assert not recording.made_here(x)
    backend.synchronize()
    assert cupy.asnumpy(x).tolist() == [0.0] * 4  # recorded, not run
    for _ in range(3):
        recording.launch(graph)
    backend.synchronize()
    assert cupy.asnumpy(x).tolist() == [3.0] * 4
    assert cupy.asnumpy(made).tolist() == [6.0] * 4
    recording.close()
    assert recording.pool in graphs._LINGERING  # `made` still uses its memory
    with backend.on(device):
        cupy.ones(1 << 20)  # memory from CuPy's pool, never `made`'s
    assert cupy.asnumpy(made).tolist() == [6.0] * 4
    del made, graph
    backend.recording((device,))  # a new recording lets go of free pools
    assert recording.pool not in graphs._LINGERING
