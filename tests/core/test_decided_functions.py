"""Decided function calls (`mdarray._core.decided`'s deciders): a repeated ``np.sum``,
``mdarray.mean``, ``np.argmin``, ``np.where`` ... runs what its first call decided. Each
case makes the runner first, then changes one thing its key must catch (an axis, a dtype,
keepdims, positional against keyword arguments, a float's sign, the layout, the mode,
``out``, an error) and compares with NumPy on the same data: a stale runner would give a
wrong value, shape or dtype here, or skip an error."""

import numpy as np
import pytest
from _call_counts import calls
from _layouts import row_blocks, spread

import mdarray
from mdarray._core import decided as _decided
from mdarray._spmd import processes as _processes

SHAPE = (12, 6)


def rows(parts=4, on=(0, 0, 1, 1)) -> dict:
    return row_blocks(SHAPE, parts, on)


@pytest.fixture
def host():
    return np.random.default_rng(7).standard_normal(SHAPE).astype(np.float32)


@pytest.fixture
def x(host):
    return mdarray.distributed_array(host, rows())


def check(got, want, rtol=1e-5):
    assert isinstance(got, mdarray.DistArray)
    want = np.asarray(want)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    if want.dtype == np.float16:  # summed in another order
        rtol = 3e-3
    np.testing.assert_allclose(got.get(), want, rtol=rtol, atol=1e-6)


CALLS = [
    ("np.sum", lambda xp, a: xp.sum(a)),
    ("np.sum axis 0", lambda xp, a: xp.sum(a, axis=0)),
    ("np.sum axis 1", lambda xp, a: xp.sum(a, axis=1)),
    ("np.sum axis -1", lambda xp, a: xp.sum(a, axis=-1)),
    ("np.sum axis 1 no keepdims", lambda xp, a: xp.sum(a, axis=1, keepdims=False)),
    ("np.sum axis 1 keepdims", lambda xp, a: xp.sum(a, axis=1, keepdims=True)),
    ("np.sum positional axis", lambda xp, a: xp.sum(a, 1)),
    ("np.sum float64", lambda xp, a: xp.sum(a, axis=0, dtype=np.float64)),
    ("np.sum float32", lambda xp, a: xp.sum(a, axis=0, dtype=np.float32)),
    ("np.sum float16 by name", lambda xp, a: xp.sum(a, axis=0, dtype="float16")),
    ("np.prod axis 1", lambda xp, a: xp.prod(a, axis=1)),
    ("np.max", lambda xp, a: xp.max(a)),
    ("np.min axis (0, 1)", lambda xp, a: xp.min(a, axis=(0, 1))),
    ("np.any axis 0", lambda xp, a: xp.any(a > 1, axis=0)),
    ("np.mean axis 0", lambda xp, a: xp.mean(a, axis=0)),
    ("np.mean float64", lambda xp, a: xp.mean(a, dtype=np.float64)),
    ("np.argmin axis 1", lambda xp, a: xp.argmin(a, axis=1)),
    ("np.argmin axis 0", lambda xp, a: xp.argmin(a, axis=0)),
    ("np.argmax axis 1 keepdims", lambda xp, a: xp.argmax(a, axis=1, keepdims=True)),
    ("np.where", lambda xp, a: xp.where(a > 0, a, 0.0)),
    ("np.where -0.0", lambda xp, a: xp.where(a > 0, a, -0.0)),
    ("np.where int", lambda xp, a: xp.where(a > 0, 1, a)),
    ("np.where int8", lambda xp, a: xp.where(a > 0, 2, a.astype(np.int8))),
]


def test_each_static_argument_is_its_own_decision(x, host):
    _decided.clear()
    for _ in range(2):  # the second round runs every call's runner
        for _name, call in CALLS:
            check(call(np, x), call(np, host))
    functions = [k for k in _decided.RUNNERS if k[0] in (np.sum, np.where, np.argmax, np.mean)]
    assert len(functions) >= 8


def test_the_namespace_functions_run_runners_too(x, host):
    _decided.clear()
    for _ in range(2):
        check(mdarray.sum(x, axis=0), np.sum(host, axis=0))
        check(mdarray.mean(x, axis=1, keepdims=True), np.mean(host, axis=1, keepdims=True))
        check(mdarray.max(x), np.max(host))
        check(mdarray.argmin(x, axis=1), np.argmin(host, axis=1))
        check(mdarray.where(x > 0, x, -1.0), np.where(host > 0, host, -1.0))
    first = calls(lambda: mdarray.sum(x, axis=0), warmup=0)
    _decided.clear()
    whole_way = calls(lambda: np.sum(x, axis=0), warmup=0)
    assert first < whole_way
    # A call the array API function refuses stays refused once a runner exists.
    for _ in range(2):
        with pytest.raises(TypeError):
            mdarray.sum(x, 0)


def test_a_where_scalar_keeps_its_sign(x, host):
    for value in (0.0, -0.0, 0.0, -0.0):
        got = np.where(x > 100, x, value).get()
        assert np.array_equal(np.signbit(got), np.signbit(np.where(host > 100, host, value)))


def test_layouts_modes_and_writes(host):
    x = mdarray.distributed_array(host, rows())
    y = mdarray.distributed_array(host, rows(parts=3, on=(0, 1, 1)))
    # A partial (SUM) operand of the same value: host + 0, summed over a split axis.
    stacked = np.stack([host, np.zeros_like(host)])
    partial = mdarray.sum(mdarray.distributed_array(stacked, halves()), axis=0)
    for _ in range(2):
        check(np.sum(x, axis=0), host.sum(axis=0))
        check(np.sum(y, axis=0), host.sum(axis=0))
        check(np.sum(partial, axis=1), host.sum(axis=1))
        check(np.argmin(partial, axis=1), host.argmin(axis=1))
        check(np.where(partial > 0, partial, 0.0), np.where(host > 0, host, 0.0))
    x[0] = 100.0  # values never enter a decision
    host = host.copy()
    host[0] = 100.0
    check(np.sum(x, axis=0), host.sum(axis=0))
    check(np.argmax(x, axis=1), host.argmax(axis=1))


def halves() -> dict:
    """``(2, 12, 6)`` in two chunks along the first axis, on two devices where there are."""
    whole = (slice(0, SHAPE[0]), slice(0, 6))
    return spread({1: [(slice(0, 1), *whole)], 0: [(slice(1, 2), *whole)]})


def test_out_where_and_initial_go_the_whole_way(x, host):
    out = mdarray.zeros(6, dtype=np.float32, device=x.device)
    for _ in range(2):
        got = np.sum(x, axis=0, out=out)
        assert got is out
        np.testing.assert_allclose(out.get(), host.sum(axis=0), rtol=1e-5)
        check(np.sum(x, axis=0, initial=5.0), host.sum(axis=0, initial=5.0))
        check(np.max(x, axis=0, where=host > 0, initial=-9.0),
              np.max(host, axis=0, where=host > 0, initial=-9.0))  # fmt: skip


def test_errors_are_raised_every_time(x):
    for _ in range(3):
        with pytest.raises(np.exceptions.AxisError):
            np.sum(x, axis=2)
        with pytest.raises(np.exceptions.AxisError):
            np.argmin(x, axis=-3)
        with pytest.raises(TypeError):
            np.sum(x, axis=1.5)


def test_several_processes_take_no_runner(x, monkeypatch):
    np.sum(x, axis=0)
    assert any(k[0] is np.sum for k in _decided.RUNNERS)
    monkeypatch.setattr(_processes, "_GROUP", object())
    assert mdarray._storage.stored.decided_function(np.sum, (x,), {"axis": 0}) is None


@pytest.mark.parametrize("size", [1, 3])
def test_scalars_of_one_chunk_and_of_several(size):
    host = np.arange(1.0, 1.0 + size, dtype=np.float32)
    devices = mdarray.devices()
    index_map = {devices[k % len(devices)]: [] for k in range(size)}
    for k in range(size):
        index_map[devices[k % len(devices)]].append((slice(k, k + 1),))
    x = mdarray.distributed_array(host, spread(index_map))
    total = mdarray.sum(x)
    assert float(total) == float(host.sum())
    assert bool(total) is True
    assert int(total) == int(host.sum())
    assert float(mdarray.sum(x * 0)) == 0.0
    assert not bool(mdarray.sum(x * 0))


def test_products_run_runners_for_each_shape_and_layout(x, host):
    rng = np.random.default_rng(3)
    hw, hv, hu = (rng.standard_normal(s).astype(np.float32) for s in ((6, 4), (6,), (12,)))
    w = mdarray.asarray(hw, device=x.device)
    v = mdarray.asarray(hv, device=x.device)
    u = mdarray.distributed_array(hu, spread({0: [(slice(0, 6),)], 1: [(slice(6, 12),)]}))
    w64 = mdarray.asarray(hw.astype(np.float64), device=x.device)
    _decided.clear()
    for _ in range(2):
        check(x @ w, host @ hw)
        check(x @ v, host @ hv)
        check(x.T @ u, host.T @ hu)  # through the transpose: u @ x
        check(u @ x, hu @ host)
        check(x @ w64, host @ hw.astype(np.float64))
        check(np.matmul(x, w, dtype=np.float64), np.matmul(host, hw, dtype=np.float64))
    assert any(k[0] is np.matmul for k in _decided.RUNNERS)
    partial = mdarray.sum(mdarray.distributed_array(np.stack([host, 0 * host]), halves()), axis=0)
    for _ in range(2):
        check(partial @ w, host @ hw)


def test_like_functions_per_dtype_shape_and_fill(x, host):
    for _ in range(2):
        check(mdarray.zeros_like(x), np.zeros_like(host))
        check(np.zeros_like(x, dtype=np.int16), np.zeros_like(host, dtype=np.int16))
        check(mdarray.ones_like(x, dtype=np.float64), np.ones_like(host, dtype=np.float64))
        check(np.ones_like(x, shape=(3, 4)), np.ones_like(host, shape=(3, 4)))
        for fill in (1.5, 2.5, -0.0, 0.0, 7, True):
            got = mdarray.full_like(x, fill)
            check(got, np.full_like(host, fill))
            assert np.array_equal(np.signbit(got.get()), np.signbit(np.full_like(host, fill)))
        check(mdarray.full_like(x, mdarray.sum(x)), np.full_like(host, host.sum()))
        assert mdarray.empty_like(x, dtype=np.int8).dtype == np.int8
        check(mdarray.zeros_like(x, device=x.device), np.zeros_like(host))
