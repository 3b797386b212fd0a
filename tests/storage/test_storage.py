"""The storage layer: chunks are writable arrays (0-d included), and sharing memory is safe
under threads."""

import threading
import warnings

import numpy as np
import pytest
from _threads import in_threads

import mdarray
from mdarray import Layout
from mdarray._exec.chunkwise import map_elements
from mdarray.testing import _host

D = mdarray.devices()
X0 = np.array(3.0)

# Functions whose results are 0-d for a 0-d (or fully reduced) input: (ours, NumPy's).
ZERO_D = {
    "sum": (np.sum, np.sum),
    "max": (np.max, np.max),
    "mean": (np.mean, np.mean),
    "sum of sum": (lambda x: x.sum().sum(), lambda a: a.sum().sum()),
    "sin of transpose": (lambda x: np.sin(x.T), lambda a: np.sin(a.T)),
    "sum-mode + 1": (lambda x: x.change_mode("sum") + 1, lambda a: a + 1),
    "real": (np.real, np.real),
    "imag": (np.imag, np.imag),
    "conj": (np.conj, np.conj),
}


@pytest.mark.parametrize("name", sorted(ZERO_D))
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_zero_d_results_are_writable_arrays(name, dtype):
    ours, numpys = ZERO_D[name]
    value = X0.astype(dtype)
    x = mdarray.distributed_array(value, {D[0]: [(), ()], D[-1]: ()})
    with mdarray.options(fallback="raise"):
        r = ours(x)
        np.testing.assert_array_equal(r.get(), numpys(value.copy()))
        assert all(isinstance(b, type(x.storage.buffers[0])) for b in r.storage.buffers)
        r[()] = 5
        r += 1
    np.testing.assert_array_equal(r.get(), np.array(6, r.dtype))


def test_threads_sharing_one_array_do_not_lose_counts():
    """Many threads make arrays that share x's memory; afterwards a write to any of them
    reaches neither x nor the others (the share bookkeeping lost no update)."""
    host = np.arange(64.0)
    x = mdarray.distributed_array(host, Layout.block((64,), devices=D))
    results: list = []

    def work():
        results.extend(x.change_mode("max") for _ in range(20))

    in_threads(work)
    for k, y in enumerate(results[:16]):
        y[...] = k
    np.testing.assert_array_equal(x.get(), host)
    for k, y in enumerate(results[:16]):
        np.testing.assert_array_equal(y.get(), np.full(64, float(k)))
    np.testing.assert_array_equal(results[-1].get(), host)


def test_threads_joining_late_views_keep_one_family():
    """Views made late (`Chunks._late`) and read by many threads at once join their
    family once each: a write through x afterwards reaches every view, and an array
    sharing x's memory by copy on write keeps its own values."""
    host = np.arange(64.0)
    x = mdarray.distributed_array(host, Layout.block((64,), devices=D[:1]))
    shared = x.change_mode("max")  # x's memory until x is written
    views = [x[k : k + 8] for k in range(0, 56, 4)] + [x[::-1]]

    def work():
        for v in views:
            v.storage.buffers  # (made: the view joins its family)

    in_threads(work)
    x[...] = -host
    for k, v in enumerate(views[:-1]):
        np.testing.assert_array_equal(v.get(), -host[4 * k : 4 * k + 8])
    np.testing.assert_array_equal(views[-1].get(), -host[::-1])
    np.testing.assert_array_equal(shared.get(), host)


def test_threads_count_their_own_transfers():
    """count_transfers in one thread does not count another thread's moves."""
    x = mdarray.distributed_array(np.arange(64.0), Layout.block((64,), devices=D))
    target = Layout.replicated((64,), devices=D)
    counted: dict = {}
    barrier = threading.Barrier(2)

    def counting():
        with mdarray.count_transfers() as moved:
            barrier.wait()
            barrier.wait()
        counted["other"] = moved.total

    thread = threading.Thread(target=counting)
    thread.start()
    barrier.wait()
    x.reshard(target)  # moves data while the other thread counts
    barrier.wait()
    thread.join()
    assert counted["other"] == 0


def test_a_failed_in_place_op_leaves_every_replica_as_it_was():
    """Under warnings as errors (as test suites run) ``x /= 0`` raises; no replica of x
    may have been written."""
    host = np.arange(4.0)
    for op in (
        lambda x: x.__itruediv__(0),
        lambda x: np.log(x, out=x),
        lambda x: x.__ifloordiv__(0),
    ):
        x = mdarray.distributed_array(host, Layout.replicated((4,), devices=D))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                op(x)
            except RuntimeWarning:
                want = host  # NumPy's kernels warn: nothing may have been written
            else:
                assert mdarray.default_backend() == "cuda"  # CuPy's kernels do not warn
                with np.errstate(all="ignore"):
                    want = op(host.copy())
        for buffer in x.storage.buffers:
            np.testing.assert_array_equal(_host(buffer), want)


@pytest.mark.parametrize("packed", [True, False])
def test_map_elements_runs_once_per_device_over_slabs(packed):
    """A cast of packed chunks is one call per device over its slab; unpacked chunks are
    cast one by one. Both give NumPy's values in the same layout, sharing nothing."""
    host = np.arange(24, dtype=np.float32).reshape(6, 4) - 7.5
    devices = mdarray.devices()
    index_map = {
        devices[k % len(devices)]: [
            (slice(2 * j, 2 * j + 2),) for j in range(3) if j % len(devices) == k
        ]
        for k in range(min(3, len(devices)))
    }
    x = mdarray.distributed_array(host, index_map)
    storage = (
        x.storage if packed else x.storage.derive(buffers=[b.copy() for b in x.storage.buffers])
    )
    assert (storage.slabs is not None) == packed
    seen = []

    def cast(b):
        seen.append(b.shape)
        return b.astype(np.int16)

    out = map_elements(storage, cast, dtype=np.dtype(np.int16))
    assert len(seen) == (len(x.layout.devices) if packed else len(x.layout.chunks))
    assert out.layout == x.layout
    assert out.dtype == np.int16
    result = mdarray.DistArray._new(out, x.mode)
    np.testing.assert_array_equal(result.get(), host.astype(np.int16))
    for a, b in zip(out.buffers, storage.buffers):
        assert not np.may_share_memory(_host(a), _host(b))
