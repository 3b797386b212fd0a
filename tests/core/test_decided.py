"""Decided calls (`mdarray._core.decided`): a repeated ufunc call runs what its first call
decided. Every case compares with NumPy on the same data after the runner exists, and
changes one thing the runner's key or its run-time checks must catch: the layout (another
object, equal or not), the mode, the dtype, a Python scalar's kind, writes, an operand
that stopped being packed, ``out``, the options. A stale runner would give a wrong value,
dtype or layout here."""

import numpy as np
import pytest
from _call_counts import calls
from _layouts import row_blocks

import mdarray
from mdarray import Layout
from mdarray._core import decided as _decided

SHAPE = (24, 6)


def rows(parts=4, on=(0, 0, 1, 1)) -> dict:
    return row_blocks(SHAPE, parts, on)


@pytest.fixture
def data():
    rng = np.random.default_rng(5)
    return rng.standard_normal(SHAPE).astype(np.float32), rng.standard_normal(SHAPE).astype(
        np.float32
    )


def twice(fn):
    """The first call (decided the whole way, its runner left) and the second (the runner)."""
    return fn(), fn()


def check(got, want):
    assert isinstance(got, mdarray.DistArray)
    assert got.dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got.get(), want, rtol=1e-6)


def test_a_repeated_call_runs_its_runner_and_costs_less(data):
    hx, hy = data
    x, y = mdarray.distributed_array(hx, rows()), mdarray.distributed_array(hy, rows())
    _decided.clear()
    first = calls(lambda: x + y, warmup=0)
    assert _decided.RUNNERS  # the first call left its runner
    again = calls(lambda: x + y, warmup=0)
    assert again < first
    check(x + y, hx + hy)


def test_layouts_modes_and_dtypes_each_get_their_own_decision(data):
    hx, hy = data
    x, y = mdarray.distributed_array(hx, rows()), mdarray.distributed_array(hy, rows())
    for got in twice(lambda: x * y):
        check(got, hx * hy)
    # An equal layout that is another object, and another chunking of the same shape.
    x2 = mdarray.distributed_array(hx, rows())
    y2 = mdarray.distributed_array(hy, rows(parts=3, on=(1, 0, 1)))
    for got in twice(lambda: x2 * y2):
        check(got, hx * hy)
        assert got.layout == x2.layout
    cols = Layout.block(SHAPE, axis=1, devices=x.devices)
    for got in twice(lambda: x.reshard(cols) * y.reshard(cols)):
        check(got, hx * hy)
        assert got.layout == cols
    # Another dtype of the same layout.
    x64 = x.astype(np.float64)
    for got in twice(lambda: x64 * y):
        check(got, hx.astype(np.float64) * hy)
    # Another mode of the same layout: SUM partials.
    s = mdarray.sum(x, axis=1)
    sr = s.change_mode(mdarray.REPLICA)
    for got in twice(lambda: s + s):
        check(got, 2 * hx.sum(axis=1))
    for got in twice(lambda: sr * sr):
        check(got, hx.sum(axis=1) ** 2)
    for got in twice(lambda: s * s):  # a SUM times a SUM is combined first
        check(got, hx.sum(axis=1) ** 2)


def test_python_scalars_keep_numpys_promotion_and_errors():
    host = np.arange(8, dtype=np.int8).reshape(4, 2)
    x = mdarray.distributed_array(
        host, {0: [(slice(0, 2), slice(0, 2)), (slice(2, 4), slice(0, 2))]}
    )
    for value in (3, 100, 127, -128, True, 2.5, 1j):
        for got in twice(lambda value=value: x + value):
            check(got, host + value)
    for value in (128, 300, -129):  # past int8: NumPy raises, a runner for 3 must not
        with pytest.raises(OverflowError):
            x + value
    for got in twice(lambda: x * False):
        check(got, host * False)


def test_writes_and_unpacked_operands_are_read_as_they_are_now(data):
    hx, hy = data
    x, y = mdarray.distributed_array(hx, rows()), mdarray.distributed_array(hy, rows())
    twice(lambda: x - y)
    x[3, 2] = 100.0  # a write into an operand the runner reads
    hx = hx.copy()
    hx[3, 2] = 100.0
    check(x - y, hx - hy)
    view = x[:, :]  # the same layout, its chunks views (not packed): the whole way
    assert view.layout == x.layout
    check(view - y, hx - hy)
    shared = x.change_mode("replica")  # x's memory shared: a write through x copies first
    x += 1.0
    x += 1.0  # the runner of the in-place add, after the copy
    check(x, hx + 2.0)
    check(shared, hx)


def test_out_and_in_place_calls(data):
    hx, hy = data
    x, y = mdarray.distributed_array(hx, rows()), mdarray.distributed_array(hy, rows())
    out = mdarray.asarray(x, copy=True)
    for _ in range(3):
        got = np.multiply(x, y, out=out)
        assert got is out
        check(out, hx * hy)
    # The same call with another out: its own key (dtype and layout).
    out64 = mdarray.asarray(x.astype(np.float64), copy=True)
    for _ in range(2):
        np.multiply(x, y, out=out64)
        check(out64, (hx * hy).astype(np.float64))
    ints = mdarray.asarray(x.astype(np.int32), copy=True)
    with pytest.raises(TypeError):  # NumPy's same_kind rule, each time
        np.multiply(x, y, out=ints)
    z = mdarray.asarray(x, copy=True)
    hz = hx.copy()
    for _ in range(3):  # shifted in-place updates: the device-block runner
        z[1:, :] -= y[:-1, :]
        hz[1:, :] -= hy[:-1, :]
        check(z, hz)


def test_options_do_not_change_a_decided_call(data):
    hx, hy = data
    x, y = mdarray.distributed_array(hx, rows()), mdarray.distributed_array(hy, rows())
    twice(lambda: x / y)
    with mdarray.options(fallback="raise"):
        check(x / y, hx / hy)
    with mdarray.options(fallback="allow"):
        check(x / y, hx / hy)


def test_the_table_stays_bounded(data, monkeypatch):
    hx, _ = data
    monkeypatch.setattr(_decided, "MAX_ENTRIES", 3)
    _decided.clear()
    for k in range(6):
        x = mdarray.distributed_array(hx, rows(parts=2 + k % 3))
        check(x + float(k), hx + float(k))
        assert len(_decided.RUNNERS) <= 3


def test_the_namespace_elementwise_functions_take_runners_first(data):
    """``mdarray.add(x, y)`` runs the runner its key names before NumPy's dispatch (as
    ``__array_ufunc__`` would): the same values, dtypes and device groups as NumPy's
    calls, the runner's checks kept (an unpacked operand goes the whole way), ``out=`` and
    profiled calls the whole way."""
    hx, hy = data
    x, y = mdarray.distributed_array(hx, rows()), mdarray.distributed_array(hy, rows())
    part = x[:12]  # on fewer devices than its group: results keep x's group
    _decided.clear()
    for _ in range(3):
        check(mdarray.add(x, y), hx + hy)
        check(mdarray.pow(x, 2), hx**2)
        check(mdarray.multiply(2.5, x), 2.5 * hx)
        check(mdarray.less(x, False), hx < False)
        check(mdarray.sqrt(mdarray.abs(x)), np.sqrt(np.abs(hx)))
        assert mdarray.negative(part).device == x.device
        check(mdarray.subtract(x[:, :], y), hx - hy)  # views: not packed, the whole way
    _decided.clear()
    first = calls(lambda: mdarray.add(x, y), warmup=0)
    assert calls(lambda: mdarray.add(x, y), warmup=0) < first
    out = mdarray.zeros_like(x)
    for _ in range(2):
        assert mdarray.multiply(x, y, out=out) is out
        check(out, hx * hy)
    with mdarray.profile() as profile:
        z = mdarray.add(x, y)
    assert [call.name for call in profile.calls] == ["add"]
    check(z, hx + hy)


def test_a_failed_recording_forgets_only_the_runners_it_left():
    """`forget_new(drop=True)` removes the runners left since `track_new` and keeps the
    older ones; `drop=False` keeps them and stops noting."""
    decided = _decided

    def runner(args, kwargs):
        return None

    decided.remember(("old key",), runner, ())
    decided.track_new()
    decided.remember(("new key",), runner, ())
    decided.forget_new(drop=True)
    assert ("new key",) not in decided.RUNNERS
    assert ("old key",) in decided.RUNNERS
    decided.track_new()
    decided.remember(("kept key",), runner, ())
    decided.forget_new(drop=False)
    decided.forget_new(drop=True)  # tracking nothing: drops nothing
    assert ("kept key",) in decided.RUNNERS
