"""The cpu backend's device threads (`mdarray._backends.cpu.threads`): a large call's kernels run at
once on the devices' threads and give what the loop in the caller's thread gives, bit for
bit; a worker's error (NumPy's error state included) is raised in the caller and leaves
``out`` as it was where the loop does; a small call never hands a row over."""

import threading
import warnings

import numpy as np
import pytest
from _backend_facts import ON_CUDA
from _test_modules import load

import mdarray
from mdarray._backends import backend as _backend
from mdarray._backends.cpu import backend as _cpu_backend, threads as _cpu_threads
from mdarray._backends.cpu.threads import DeviceThreads

pytestmark = pytest.mark.skipif(ON_CUDA, reason="the cpu backend's threads")

BACKEND = _backend.backend()
# The writers' interrupt test (tests/exec), run here with the kernels on the threads.
interrupt_test = load(
    "exec/test_whole_writes.py"
).test_an_interrupt_at_any_line_leaves_old_or_new_whole
# Devices' rows run at once (else none is handed over; one device's lanes are
# tests/backends/test_cpu_lanes.py's).
SEVERAL = not ON_CUDA and BACKEND.threads.count > 1 and len(mdarray.devices()) > 1


@pytest.fixture
def threaded(monkeypatch):
    """Every call large (rows on the threads); returns a reader of the rows handed over."""
    monkeypatch.setattr(BACKEND, "parallel_bytes", 0)
    start = BACKEND.threads.submits
    return lambda: BACKEND.threads.submits - start


def _inline(fn):
    saved = BACKEND.parallel_bytes
    BACKEND.parallel_bytes = 1 << 62
    try:
        return fn()
    finally:
        BACKEND.parallel_bytes = saved


def _rows(shape, parts):
    """`parts` row blocks, two per device where there are devices enough (not packed)."""
    devices = mdarray.devices()
    cuts = np.linspace(0, shape[0], parts + 1).astype(int)
    out: dict = {}
    for k in range(parts):
        index = (slice(int(cuts[k]), int(cuts[k + 1])), *(slice(0, n) for n in shape[1:]))
        out.setdefault(devices[k * len(devices) // parts], []).append(index)
    return out


def _operands(layout: str):
    rng = np.random.default_rng(0)
    ha, hb = rng.standard_normal((64, 48)), rng.standard_normal((64, 48))
    if layout == "packed":
        return ha, hb, mdarray.asarray(ha), mdarray.asarray(hb)
    index_map = _rows(ha.shape, 2 * len(mdarray.devices()))
    return (
        ha,
        hb,
        mdarray.distributed_array(ha, index_map),
        mdarray.distributed_array(hb, index_map),
    )


CHAIN = mdarray.fuse(lambda x, y: np.sin(x) * 2 + y)

OPS = {
    "a + b": lambda a, b: a + b,
    "np.add(a, b, out=c)": lambda a, b: np.add(a, b, out=a * 0),
    "a += b": lambda a, b: a.__iadd__(b),
    "a[:, 1:] * b[:, :-1]": lambda a, b: a[:, 1:] * b[:, :-1],
    "fused chain": CHAIN,
    "sum(axis=0)": lambda a, b: np.sum(a, axis=0),
    "sum(axis=1)": lambda a, b: np.sum(a, axis=1),
    "mean(axis=0)": lambda a, b: np.mean(a, axis=0),
    "max()": lambda a, b: np.max(a),
    "sort(axis=0)": lambda a, b: np.sort(a, axis=0),
    "sort(axis=1)": lambda a, b: np.sort(a, axis=1),
    "argsort(axis=1)": lambda a, b: np.argsort(a, axis=1, stable=True),
    "astype(float32)": lambda a, b: a.astype(np.float32),
    "a @ b.T": lambda a, b: a @ b.T,
}


@pytest.mark.parametrize("layout", ["packed", "two chunks per device"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_threads_give_the_loops_values(op, layout, threaded):
    fn = OPS[op]
    ha, hb, a, b = _operands(layout)
    inline = _inline(lambda: fn(a.copy(), b)).get()
    got = fn(a.copy(), b)
    np.testing.assert_array_equal(got.get(), inline)
    np.testing.assert_allclose(inline, fn(ha.copy(), hb), rtol=1e-12, atol=1e-12)
    if op != "a @ b.T":  # matmul's pieces stay in the caller: BLAS has its own threads
        assert threaded() > 0 or not SEVERAL


def test_small_calls_hand_nothing_over():
    """At the default threshold, small arrays run in the caller's thread: no row is ever
    handed to a worker (a deterministic count, not a timing)."""
    assert BACKEND.parallel_bytes >= 1 << 20
    _, _, a, b = _operands("packed")
    start = BACKEND.threads.submits
    for op in sorted(OPS):
        OPS[op](a.copy(), b).get()
    np.add(a, 1.0, out=a)
    assert BACKEND.threads.submits == start


@pytest.mark.skipif(not SEVERAL, reason="one device or one core: never threaded")
def test_a_large_call_hands_each_device_one_row():
    n = len(mdarray.devices())
    rows = BACKEND.parallel_bytes // 8 // 64 + n
    a = mdarray.asarray(np.ones((rows, 64)))
    start = BACKEND.threads.submits
    a + a
    assert BACKEND.threads.submits - start == (n if SEVERAL else 0)


def test_integer_division_by_zero_raises_in_the_caller(threaded):
    """NumPy's error state is the caller's in the workers (a context variable)."""
    ha = np.arange(1, 65).reshape(8, 8)
    a = mdarray.asarray(ha)
    zero = mdarray.asarray(np.where(ha % 7 == 0, 0, ha))
    out = mdarray.asarray(np.full((8, 8), -1))
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError, match="divide by zero"):
        np.floor_divide(a, zero, out=out)
    np.testing.assert_array_equal(out.get(), np.full((8, 8), -1))  # staged: untouched
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        a // zero
    with np.errstate(divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal((a // zero).get(), ha // np.where(ha % 7 == 0, 0, ha))
    assert threaded() > 0 or not SEVERAL


def test_a_warning_in_a_worker_is_the_callers(threaded):
    a = mdarray.asarray(np.zeros((8, 8)))
    with pytest.warns(RuntimeWarning, match="divide by zero"), np.errstate(divide="warn"):
        1.0 / a
    with warnings.catch_warnings(), np.errstate(divide="ignore"):
        warnings.simplefilter("error")
        1.0 / a
    assert threaded() > 0 or not SEVERAL


def test_a_failing_fused_kernel_raises_in_the_caller(threaded):
    """A kernel that raises on one device's thread: its error, with fuse's note naming
    the chunk, reaches the caller after every other device finished."""
    n = len(mdarray.devices())
    a = mdarray.asarray(np.arange(16.0 * n).reshape(4 * n, 4))  # 4 rows per device
    finished = []

    def kernel(x):
        if x.shape == (4, 4):  # a chunk, not a stand-in
            if x.max() >= 16 * (n - 1):  # the last device's
                raise ValueError("no large values")
            finished.append(threading.current_thread().name)
        return x + 1

    with pytest.raises(ValueError, match="no large values") as caught:
        mdarray.fuse(kernel)(a)
    assert any(f"on chunk {n - 1}" in note for note in getattr(caught.value, "__notes__", []))
    assert len(finished) == n - 1
    assert all(name.startswith("mdarray-cpu-device-") for name in finished) or not SEVERAL


def test_one_devices_rows_run_in_the_caller():
    threads = DeviceThreads(2, cores=2)
    names = threads.run(lambda: threading.current_thread().name, [(1, ()), (3, ())])
    assert names == [threading.current_thread().name] * 2
    assert threads.submits == 0


def test_rows_run_on_their_devices_threads_in_order():
    threads = DeviceThreads(3, cores=3)
    seen = []
    got = threads.run(
        lambda k: seen.append((k, threading.current_thread().name)) or k * k,
        [(k % 3, (k,)) for k in range(9)],
    )
    assert got == [k * k for k in range(9)]
    for device in range(3):
        mine = [k for k, name in seen if name == f"mdarray-cpu-device-{device}"]
        assert mine == [k for k in range(9) if k % 3 == device]
    assert threads.submits == 9


def test_the_first_failed_row_raises_after_every_row_ran():
    threads = DeviceThreads(2, cores=2)
    ran = []

    def row(k):
        if k in (1, 2):
            raise KeyError(k)
        ran.append(k)

    with pytest.raises(KeyError) as caught:
        threads.run(row, [(k % 2, (k,)) for k in range(6)])
    assert caught.value.args == (1,)
    # Device 0 ran 0, failed at 2, skipped 4; device 1 failed at 1 and skipped 3, 5.
    assert ran == [0]
    results, errors = threads.run_all(row, [(k % 2, (k,)) for k in (0, 3, 5)])
    assert (results, errors) == ([None, None, None], {})


def test_a_workers_own_call_runs_inline():
    threads = DeviceThreads(2, cores=2)
    inner = threads.run(
        lambda: threads.run(lambda k: k + 1, [(0, (1,)), (1, (2,))]), [(0, ()), (1, ())]
    )
    assert inner == [[2, 3], [2, 3]]
    assert threads.submits == 2


@pytest.mark.skipif(not SEVERAL, reason="one device or one core: never threaded")
def test_write_each_at_once_runs_a_failed_call_again(threaded):
    """`write_each` on the threads: a call that failed before writing (an allocation)
    runs once more, the others once, then the error propagates (as in its loop)."""
    devices = BACKEND.device_ids
    outs = [np.zeros(4) for _ in devices]
    runs: dict = {}

    def kernel(x, out):
        device = int(x[0])
        runs[device] = runs.get(device, 0) + 1
        if device == devices[-1] and runs[device] == 1:
            raise MemoryError("no memory this time")
        return np.add(x, 1.0, out=out[0])

    calls = [(d, [np.full(4, float(d))], [outs[k]]) for k, d in enumerate(devices)]
    with pytest.raises(MemoryError):
        BACKEND.write_each(kernel, calls)
    for k, d in enumerate(devices):
        np.testing.assert_array_equal(outs[k], np.full(4, d + 1.0))
        assert runs[d] == (2 if d == devices[-1] else 1)


@pytest.mark.parametrize("writer", ["x *= 3, warnings shown", "x += x[::-1], warnings shown"])
@pytest.mark.parametrize("layout", ["replicas", "blocks", "overlapping"])
def test_an_interrupt_leaves_a_threaded_write_old_or_new(writer, layout, threaded):
    """Kernels writing in place on the threads (warnings shown, not raised): an interrupt
    at any line of the caller leaves every copy old or new, whole."""
    interrupt_test(writer, layout)


@pytest.mark.parametrize(("cores", "threshold"), [(16, 16 << 20), (4, 16 << 20), (2, 64 << 20)])
def test_the_threshold_is_higher_where_devices_share_cores(monkeypatch, cores, threshold):
    # With a core per device's thread a call of 16 MiB gains; with fewer cores than devices
    # the hand-over costs more than it saves up to about 64 MiB (CG on 16 MiB arrays: 1.15x).
    monkeypatch.delenv("MDARRAY_CPU_PARALLEL_BYTES", raising=False)
    monkeypatch.setattr(_cpu_threads, "core_count", lambda: cores)
    assert _cpu_backend.CpuBackend(4).parallel_bytes == threshold
