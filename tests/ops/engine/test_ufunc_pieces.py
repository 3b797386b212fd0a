"""Calls of the general elementwise path whose operands differ in shape (broadcasting) but
whose pieces of each device block of the result are one array each (`_ufunc_pieces`): one
kernel per device, a packed result, NumPy's values; and the calls that must take the
per-chunk path still give NumPy's values."""

import numpy as np
import pytest
from _call_counts import outcomes
from _layouts import device, rows

import mdarray
from mdarray._ops.engine import ufunc_plans as _ufunc_plans

#: Row edges of 64 rows and the test device of each chunk.
LAYOUTS = {
    "4 row chunks, one device": ([0, 16, 32, 48, 64], [0, 0, 0, 0]),
    "uneven, an empty chunk": ([0, 5, 5, 40, 64], [0, 0, 0, 0]),
    "2 devices, 2 chunks each": ([0, 16, 32, 48, 64], [0, 0, 1, 1]),
    "one chunk per device": ([0, 30, 64], [0, 1]),
}


@pytest.fixture
def block_runs(monkeypatch):
    """Per call of the block runner, whether it ran (it may leave a call to the rest)."""
    return outcomes(monkeypatch, _ufunc_plans, "run_blocks")


def _k_means_operands(name):
    edges, on = LAYOUTS[name]
    rng = np.random.default_rng(2)
    hx, hs = rng.standard_normal((64, 8)), rng.standard_normal(64)
    x = mdarray.distributed_array(hx, rows(edges, on))
    s = mdarray.distributed_array(hs, rows(edges, on))
    c = mdarray.asarray(rng.standard_normal(8), device=x.device)
    return (x, s, c), (hx, hs, c.get())


CALLS = {
    "column minus matrix": lambda x, s, c, xp: s[:, None] - x,
    "matrix plus row": lambda x, s, c, xp: x + c[None, :],
    "column equals row": lambda x, s, c, xp: s[:, None] == c[None, :],
    "matrix over a 0-d sum": lambda x, s, c, xp: x / xp.sum(c),
    "where of a column": lambda x, s, c, xp: xp.where(s[:, None] > 0, x, c),
    "divmod by a row": lambda x, s, c, xp: np.divmod(x, abs(c)[None, :] + 1.0),
    "transposed column": lambda x, s, c, xp: x.T - s[None, :],
}


#: The calls that run once per device block where the device holds every operand (the
#: others: a 0-d operand beside one of the result's layout runs slab by slab; columns of
#: row chunks make no block).
ONE_KERNEL = {"column minus matrix", "matrix plus row", "column equals row", "where of a column",
              "divmod by a row"}  # fmt: skip


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("name", list(LAYOUTS))
def test_broadcast_operands_run_once_per_device_block(name, call, block_runs):
    ours, host = _k_means_operands(name)
    fn = CALLS[call]
    want = fn(*host, np)
    for _ in range(2):  # the plan is made, then taken
        with mdarray.options(fallback="raise"):
            got = fn(*ours, mdarray)
        for g, w in zip(
            got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)
        ):
            np.testing.assert_allclose(g.get(), w, rtol=1e-14)  # (a sum's order differs)
            if block_runs and all(block_runs):
                assert g.storage.slabs is not None
    if name == "4 row chunks, one device" and call in ONE_KERNEL:
        assert block_runs
        assert all(block_runs)


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_a_block_result_is_its_own_memory(name):
    """A block run's result keeps its blocks as views of its slabs: writes through views of
    it and copies on write keep NumPy's values, and its operands stay as they were."""
    (x, s, _), (hx, hs, _) = _k_means_operands(name)
    d = s[:, None] - x
    kept = d.change_mode("replica")  # shares d's memory until d is written
    want = hs[:, None] - hx
    d[1:, :] -= d[:-1, :].copy()
    want[1:, :] -= want[:-1, :].copy()
    d[:, ::2] *= -1.0
    want[:, ::2] *= -1.0
    np.testing.assert_array_equal(d.get(), want)
    np.testing.assert_array_equal(kept.get(), hs[:, None] - hx)
    np.testing.assert_array_equal(x.get(), hx)
    np.testing.assert_array_equal(s.get(), hs)


def test_pieces_on_another_device_are_moved():
    """A row vector on one device, read by blocks on every device: moved where it is not."""
    host = np.arange(64 * 4.0).reshape(64, 4)
    x = mdarray.distributed_array(host, rows([0, 16, 32, 48, 64], [0, 1, 0, 1]))
    row = mdarray.asarray(np.arange(4.0), device=device(1))
    for _ in range(2):
        np.testing.assert_array_equal((x * row[None, :]).get(), host * np.arange(4.0))
