"""`mdarray.iterate` against the same loop on NumPy: values, the arrays it is given left
alone, bodies that write, read from outside or change layouts, and on CUDA how often the
body's Python runs (once as written, once per recording)."""

import importlib
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from _backend_facts import ON_CUDA
from _layouts import row_blocks, spread

import mdarray
from mdarray import Layout
from mdarray._core.recording import Recording, RecordingRefused
from mdarray._ops.engine import iteration
from mdarray.testing import assert_dist_allclose

# The benchmarks package beside tests/ (CI runs the tests from another directory).
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
workloads = importlib.import_module("benchmarks.workloads")
sys.path.pop(0)

RNG = np.random.default_rng(7)
GRID = RNG.standard_normal((32, 32))
ROWS = row_blocks(GRID.shape)


def counted(body):
    """`body` and a list that grows by one at each of its Python calls."""
    seen: list = []

    def counting(*args):
        seen.append(1)
        return body(*args)

    return counting, seen


@pytest.mark.parametrize("turns", [False, True])
@pytest.mark.parametrize("name", ["cg", "kmeans", "jacobi", "power", "logreg", "standardize"])
def test_the_workloads_give_numpys_values(name, turns, monkeypatch):
    """Each algorithm of benchmarks/workloads.py, its loop run by `iterate`, against NumPy
    on the same data, in 4 row chunks (recorded on CUDA: one slot, or two by turns)."""
    if turns:
        monkeypatch.setattr(iteration, "TURNS_BYTES", 0)
    times = 12
    host = workloads.host_data(name, "moderate")
    host = tuple(h[:256].copy() for h in host) if isinstance(host, tuple) else host[:64, :64].copy()
    algorithm, rtol = workloads.ALGORITHMS[name]
    expected = algorithm(np, host, times)
    with mdarray.options(fallback="raise"):
        got = algorithm(mdarray, workloads.on_mdarray(host), times, mdarray.iterate)
    scale = float(np.max(np.abs(expected))) or 1.0
    np.testing.assert_allclose(got.get(), expected, rtol=0, atol=rtol * scale)


def test_the_given_state_is_never_written_and_the_result_is_its_own():
    """CG's state starts as ``(zeros, b, b, sum(b * b))``: b itself twice. After the loop b
    holds what it held, and writing the result reaches nothing given."""
    b = mdarray.distributed_array(GRID, ROWS)
    before = b.get()
    x, r, p, rs = mdarray.iterate(
        lambda x, r, p, rs: (x + p, r * 0.5, p - r, rs + 1.0),
        (mdarray.zeros_like(b), b, b, mdarray.sum(b * b)),
        8,
    )
    np.testing.assert_array_equal(b.get(), before)
    want_r = before * 0.5**8
    np.testing.assert_allclose(r.get(), want_r)
    np.testing.assert_allclose(rs.get(), float(np.sum(before * before)) + 8)
    r[...] = 0.0
    p[...] = 0.0
    np.testing.assert_array_equal(b.get(), before)
    np.testing.assert_allclose(x.get(), _python_x(before))


def _python_x(b):
    x, r, p = np.zeros_like(b), b, b
    for _ in range(8):
        x, r, p = x + p, r * 0.5, p - r
    return x


@pytest.mark.parametrize("times", [0, 1, 3, 4, 9])
def test_any_number_of_iterations(times):
    """Fewer than four run as written; zero gives the state itself."""
    x = mdarray.distributed_array(GRID, ROWS)
    got = mdarray.iterate(lambda v: v * 2 - 1, x, times)
    want = GRID.copy()
    for _ in range(times):
        want = want * 2 - 1
    if times == 0:
        assert got is x
    np.testing.assert_allclose(got.get(), want)


def test_a_body_returning_its_argument_or_an_outside_array():
    """A state item returned as it came, and an array from outside the body: the next
    iterations see them as the loop as written does."""
    x = mdarray.distributed_array(GRID, ROWS)
    c = mdarray.distributed_array(GRID * 3, ROWS)
    a, b, d = mdarray.iterate(lambda a, b, d: (a, b + a, c), (x, x, x), 7)
    np.testing.assert_allclose(a.get(), GRID)
    np.testing.assert_allclose(b.get(), GRID * 8)
    np.testing.assert_allclose(d.get(), GRID * 3)


def test_a_body_that_writes_in_place():
    """Writes into the state's arrays and into an array from outside (a counter): each
    iteration writes again, as the loop as written does."""
    counter = mdarray.zeros((4,))

    def body(v):
        v[1:, :] -= v[:-1, :]
        counter[0] += 1.0
        return v

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mdarray.PerformanceWarning)
        got = mdarray.iterate(body, mdarray.distributed_array(GRID, ROWS), 6)
    want = GRID.copy()
    for _ in range(6):
        want[1:, :] -= want[:-1, :].copy()
    np.testing.assert_allclose(got.get(), want)
    np.testing.assert_array_equal(counter.get(), [6.0, 0, 0, 0])


def test_a_state_whose_layouts_change():
    """The body reshards to the other layout each time: the keys alternate and the
    recordings follow them."""
    rows = Layout(GRID.shape, ROWS)
    columns = Layout(
        GRID.shape, spread({0: (slice(0, 32), slice(0, 16)), 1: (slice(0, 32), slice(16, 32))})
    )

    def body(v):
        return (v + 1.0).reshard(columns if v.layout == rows else rows)

    got = mdarray.iterate(body, mdarray.distributed_array(GRID, rows), 9)
    assert got.layout == columns
    np.testing.assert_allclose(got.get(), GRID + 9)


def test_partial_sums_in_the_state():
    """A SUM-mode 0-d item (CG's dot products) in the state: the modes the loop as written
    gives, and its values."""
    x = mdarray.distributed_array(GRID, ROWS)
    s = mdarray.sum(x)
    assert s.mode is mdarray.SUM or len(mdarray.devices()) == 1

    def body(x, s):
        return x / 2, s + mdarray.sum(x)

    got_x, got_s = mdarray.iterate(body, (x, s), 6)
    written = workloads.python_loop(body, (x, s), 6)
    assert (got_x.mode, got_s.mode) == (written[0].mode, written[1].mode)
    want_x, want_s = GRID, GRID.sum()
    for _ in range(6):
        want_x, want_s = want_x / 2, want_s + want_x.sum()
    np.testing.assert_allclose(got_x.get(), want_x)
    np.testing.assert_allclose(float(got_s), want_s)


def test_results_stay_valid_after_later_loops():
    """A result lives in the loop's memory: later loops (and their recordings) leave it."""
    x = mdarray.distributed_array(GRID, ROWS)
    first = mdarray.iterate(lambda v: v + 1.0, x, 6)
    for _ in range(3):
        mdarray.iterate(lambda v: v * 0.0 - 5.0, x, 6)
    np.testing.assert_allclose(first.get(), GRID + 6)


def test_bad_input_is_named():
    x = mdarray.distributed_array(GRID, ROWS)
    with pytest.raises(TypeError, match="body must be callable"):
        mdarray.iterate(3, x, 5)
    with pytest.raises(ValueError, match="times must be >= 0"):
        mdarray.iterate(lambda v: v, x, -1)
    with pytest.raises(TypeError, match="item 1 of the initial state is an object of type int"):
        mdarray.iterate(lambda v, w: (v, w), (x, 3), 5)
    with pytest.raises(TypeError, match="a DistArray or a tuple of DistArrays"):
        mdarray.iterate(lambda v: v, GRID, 5)
    with pytest.raises(TypeError, match="returned a tuple of 2 for a state of one"):
        mdarray.iterate(lambda v: (v, v), x, 5)
    with pytest.raises(TypeError, match="returned a DistArray for a state of a tuple of 2"):
        mdarray.iterate(lambda v, w: v, (x, x), 5)
    with pytest.raises(TypeError):
        mdarray.iterate(lambda v: v, x, 2.5)


@pytest.mark.parametrize("turns", [False, True])
def test_the_body_runs_once_per_recording(turns, monkeypatch):
    """On CUDA a stable loop runs the body's Python once (its recording copies the
    results into the slot it read), or twice where the copies would be many (two slots
    take turns, a recording from each). Elsewhere once per iteration."""
    if turns:
        monkeypatch.setattr(iteration, "TURNS_BYTES", 0)
    times = 10
    body, seen = counted(lambda v, s: (v * 0.5 + 1.0, s + mdarray.sum(v)))
    x = mdarray.distributed_array(GRID, ROWS)
    # s + sum(v) is REPLICA: so is the first s, or its change of mode is one more slot.
    got, s = mdarray.iterate(body, (x, mdarray.sum(x).change_mode(mdarray.REPLICA)), times)
    recordings = 2 if turns else 1
    assert len(seen) == (recordings if ON_CUDA else times)
    want, want_s = GRID, GRID.sum()
    for _ in range(times):
        want, want_s = want * 0.5 + 1.0, want_s + want.sum()
    np.testing.assert_allclose(got.get(), want)
    np.testing.assert_allclose(float(s), want_s)


def test_a_body_that_reads_a_value_on_the_host_runs_as_written():
    """``float(x)`` in the body waits for the device: on CUDA the recording fails, once
    as written then again, the loop says so once (PerformanceWarning) and runs as
    written, with the same values."""
    body, seen = counted(lambda v: v + float(mdarray.max(v)))
    x = mdarray.distributed_array(GRID, ROWS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = mdarray.iterate(body, x, 6)
    ours = [w for w in caught if issubclass(w.category, mdarray.PerformanceWarning)]
    assert len(ours) == (1 if ON_CUDA else 0)
    assert len(seen) == (8 if ON_CUDA else 6)  # the two failed recordings ran it too
    want = GRID.copy()
    for _ in range(6):
        want = want + want.max()
    assert_dist_allclose(got, want)


def test_recordings_are_bounded():
    """A state whose layouts never settle (six in turn) stops being recorded after
    `MAX_RECORDINGS` (a PerformanceWarning says so on CUDA) and runs as written."""
    layouts = [
        Layout(
            GRID.shape, spread({0: (slice(0, c), slice(0, 32)), 1: (slice(c, 32), slice(0, 32))})
        )
        for c in (4, 8, 12, 16, 20, 24)
    ]

    def body(v):
        k = next(i for i, layout in enumerate(layouts) if layout == v.layout)
        return (v + 1.0).reshard(layouts[(k + 1) % len(layouts)])

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = mdarray.iterate(body, mdarray.distributed_array(GRID, layouts[0]), 10)
    said = [str(w.message) for w in caught if issubclass(w.category, mdarray.PerformanceWarning)]
    assert said == ([f"changed {iteration.MAX_RECORDINGS} times"] if ON_CUDA else []) or (
        ON_CUDA and len(said) == 1 and f"changed {iteration.MAX_RECORDINGS} times" in said[0]
    )
    np.testing.assert_allclose(got.get(), GRID + 10)
    assert got.layout == layouts[10 % 6]


class _StandInRecording:
    """A recording on the cpu backend for the loop's logic: `record` runs the function
    once with its copies left out (a recording runs nothing) and gives a "graph" that
    runs it again at each launch, copying its results into the arrays the recording
    returned (as a CUDA graph writes the addresses it recorded). Nothing counts as made
    by a recording, so every result is copied in the recording."""

    def __init__(self):
        self.recorded = 0

    def record(self, fn):
        self.recorded += 1
        copy_into = iteration._copy_into
        iteration._copy_into = lambda dst, src: None  # recorded, not run: no copy lands
        try:
            outs = fn()
        finally:
            iteration._copy_into = copy_into

        def graph():
            for out, new in zip(outs, fn()):
                copy_into(out, new)

        return graph, outs

    def launch(self, graph):
        graph()

    def made_here(self, buffer):
        return False

    def barrier(self):
        pass

    def close(self):
        pass


@pytest.mark.parametrize("turns", [False, True])
def test_the_loop_logic_with_a_stand_in_recording(turns, monkeypatch):
    """The slots, their turns and the launches, on any backend: a stand-in recording on
    CPU gives NumPy's values and records once (one slot) or twice (two taking turns), also
    where the body returns an argument as it came."""
    if ON_CUDA:
        pytest.skip("the cuda backend records for real (the tests above)")
    backend = mdarray.asarray(np.ones(1)).storage.backend
    made: list = []

    def recording(devices):
        made.append(_StandInRecording())
        return made[-1]

    monkeypatch.setattr(backend, "records", True, raising=False)
    monkeypatch.setattr(backend, "recording", recording, raising=False)
    if turns:
        monkeypatch.setattr(iteration, "TURNS_BYTES", 0)
    x = mdarray.distributed_array(GRID, ROWS)
    first = (x, mdarray.sum(x).change_mode(mdarray.REPLICA), x)  # a key that stays
    got, s, same = mdarray.iterate(lambda v, s, c: (v * 0.5 + 1.0, s + mdarray.sum(v), c), first, 9)
    want, want_s = GRID, GRID.sum()
    for _ in range(9):
        want, want_s = want * 0.5 + 1.0, want_s + want.sum()
    np.testing.assert_allclose(got.get(), want)
    np.testing.assert_allclose(float(s), want_s)
    np.testing.assert_allclose(same.get(), GRID)
    np.testing.assert_allclose(x.get(), GRID)  # the given state, untouched
    assert [r.recorded for r in made] == [2 if turns else 1]


@pytest.mark.parametrize("refusal", [RuntimeError, RecordingRefused])
def test_a_failed_recording_with_a_stand_in(refusal, monkeypatch):
    """A body that cannot be recorded: a failure is tried again once after an iteration
    as written, a `RecordingRefused` is not; either way the loop runs as written to
    NumPy's values and says so once."""
    if ON_CUDA:
        pytest.skip("the cuda backend records for real (the tests above)")
    backend = mdarray.asarray(np.ones(1)).storage.backend
    made: list = []
    monkeypatch.setattr(backend, "records", True, raising=False)
    monkeypatch.setattr(
        backend,
        "recording",
        lambda devices: made.append(_StandInRecording()) or made[-1],
        raising=False,
    )

    def body(v):
        if Recording.here():
            raise refusal("not this")
        return v * 0.5 + 1.0

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = mdarray.iterate(body, mdarray.distributed_array(GRID, ROWS), 7)
    said = [str(w.message) for w in caught if issubclass(w.category, mdarray.PerformanceWarning)]
    assert len(said) == 1
    assert "not this" in said[0]
    assert [r.recorded for r in made] == [1 if refusal is RecordingRefused else 2]
    want = GRID
    for _ in range(7):
        want = want * 0.5 + 1.0
    np.testing.assert_allclose(got.get(), want)
