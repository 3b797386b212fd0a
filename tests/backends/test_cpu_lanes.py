"""The cpu backend's lanes (`mdarray._backends.cpu.lanes`): where there are more cores than
devices in a call, a large elementwise ufunc or a 2-D reduction of one axis runs in pieces,
one per lane, and gives what the whole kernel gives, bit for bit."""

import numpy as np
import pytest
from _backend_facts import ON_CUDA

import mdarray
from mdarray._backends import backend as _backend
from mdarray._backends.cpu import lanes as _lanes, threads as _threads
from mdarray._backends.cpu.threads import DeviceThreads

pytestmark = pytest.mark.skipif(ON_CUDA, reason="the cpu backend's lanes")

BACKEND = _backend.backend()


@pytest.fixture
def four_lanes(monkeypatch):
    """Four threads, pieces of any size, every call large; returns a reader of the rows
    handed to the threads."""
    threads = DeviceThreads(4, cores=4)
    monkeypatch.setattr(BACKEND, "threads", threads)
    monkeypatch.setattr(BACKEND, "parallel_bytes", 0)
    monkeypatch.setattr(_lanes, "MIN_PIECE_BYTES", 256)
    return lambda: threads.submits


def _values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 1e3).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
def test_an_elementwise_ufunc_in_lanes_is_the_whole_ufunc(four_lanes, dtype):
    a, b = _values((333, 77), dtype), _values((333, 77), dtype, 1)
    got = BACKEND.each(np.add, [(0, (a, b))], np.result_type(a, b))
    assert four_lanes() == 4  # one device's row in four pieces
    np.testing.assert_array_equal(got[0], a + b, strict=True)
    two = BACKEND.each(np.multiply, [(0, (a, 2)), (1, (b, 3))], np.result_type(a, 2))
    assert four_lanes() == 4 + 4  # two devices' rows, two pieces each
    np.testing.assert_array_equal(two[0], a * 2, strict=True)
    np.testing.assert_array_equal(two[1], b * 3, strict=True)


def test_broadcast_or_strided_operands_run_whole(four_lanes):
    a = _values((64, 48), np.float64)
    row = _values((48,), np.float64, 1)
    got = BACKEND.each(np.subtract, [(0, (a, row)), (1, (a[:, ::2], a[:, 1::2]))], np.float64)
    assert four_lanes() == 2  # each row whole, on its own thread
    np.testing.assert_array_equal(got[0], a - row)
    np.testing.assert_array_equal(got[1], a[:, ::2] - a[:, 1::2])


@pytest.mark.parametrize(
    ("ufunc", "skip_nan"),
    [(np.add, False), (np.add, True), (np.maximum, False), (np.multiply, False)],
)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_reduction_in_lanes_is_the_whole_reduction(four_lanes, ufunc, skip_nan, axis, dtype):
    chunk = _values((257, 190), dtype) / (1e3 if ufunc is np.multiply else 1)
    chunk[::7, ::5] = np.nan if skip_nan else chunk[::7, ::5]
    args = (ufunc, chunk, (axis,), None, np.dtype(dtype), skip_nan)
    whole = BACKEND.reduce(*args)
    got = BACKEND.each(BACKEND.reduce, [(0, args)])
    assert four_lanes() == 4
    np.testing.assert_array_equal(got[0], whole, strict=True)


def test_other_reductions_run_whole(four_lanes):
    cube = _values((20, 30, 40), np.float64)
    args = (np.add, cube, (0, 2), None, np.dtype(np.float64), False)
    got = BACKEND.each(BACKEND.reduce, [(0, args)])
    assert four_lanes() == 0  # one row, whole: the caller runs it
    np.testing.assert_array_equal(got[0], BACKEND.reduce(*args))


def test_an_error_in_a_lane_raises(four_lanes):
    a = np.full((100, 100), 1e308)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        BACKEND.each(np.multiply, [(0, (a, a))], np.float64)


def test_arrays_in_lanes_match_numpy(four_lanes):
    value, other = _values((512, 96), np.float32), _values((512, 96), np.float32, 1)
    layout = mdarray.Layout.block(value.shape, devices=mdarray.devices()[:1])
    x, y = mdarray.distributed_array(value, layout), mdarray.distributed_array(other, layout)
    np.testing.assert_array_equal((x * y + x).get(), value * other + value, strict=True)
    np.testing.assert_array_equal(np.sum(x, axis=0).get(), value.sum(axis=0), strict=True)
    np.testing.assert_array_equal(np.max(x, axis=1).get(), value.max(axis=1), strict=True)
    assert four_lanes() > 3


def test_a_fused_chain_in_lanes_is_the_unfused_chain(four_lanes):
    value, other = _values((512, 96), np.float64), _values((512, 96), np.float64, 1)
    layout = mdarray.Layout.block(value.shape, devices=mdarray.devices()[:1])
    x, y = mdarray.distributed_array(value, layout), mdarray.distributed_array(other, layout)
    chain = mdarray.fuse(lambda a, b: np.sin(a) * 2 + b)
    np.testing.assert_array_equal(chain(x, y).get(), np.sin(value) * 2 + other, strict=True)
    assert four_lanes() == 4
    # A broadcast operand: the chunk runs whole, in the caller.
    row = mdarray.asarray(other[0], device=x.device)
    np.testing.assert_array_equal(chain(x, row).get(), np.sin(value) * 2 + other[0])
    assert four_lanes() == 4
    with pytest.raises(TypeError, match="elementwise"):
        mdarray.fuse(lambda a: a.sum(axis=0, keepdims=True))(x)


def test_processes_of_one_host_share_its_cores(monkeypatch):
    """An MPI launcher's processes on one host, bound to no cores, take a share each (so
    their device threads and lanes do not oversubscribe the host); bound ones keep theirs."""
    monkeypatch.setattr(_threads.os, "cpu_count", lambda: 16)
    monkeypatch.setattr(_threads.os, "sched_getaffinity", lambda _: set(range(16)), raising=False)
    monkeypatch.delenv("OMPI_COMM_WORLD_LOCAL_SIZE", raising=False)
    monkeypatch.setenv("MPI_LOCALNRANKS", "4")
    assert _threads.core_count() == 4
    monkeypatch.delenv("MPI_LOCALNRANKS")
    assert _threads.core_count() == 16
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "32")
    assert _threads.core_count() == 1
    monkeypatch.setattr(_threads.os, "sched_getaffinity", lambda _: {2, 3}, raising=False)
    assert _threads.core_count() == 2  # bound: its own cores
