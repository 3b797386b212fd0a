"""The cpu backend's pool of large results (`mdarray._backends.cpu.pool`): a block is handed out
again only once no array references it, the pool stays within its limit, results from it
are NumPy's values, and `memory_report` shows it."""

import numpy as np
import pytest
from _backend_facts import ON_CUDA

import mdarray
from mdarray._backends import backend as _backend
from mdarray._backends.cpu import pool as _cpu_pool
from mdarray._backends.cpu.pool import ResultPool

pytestmark = pytest.mark.skipif(ON_CUDA, reason="the cpu backend's pool")

BACKEND = _backend.backend()
SEVERAL = not ON_CUDA and BACKEND.threads.count > 1 and len(mdarray.devices()) > 1


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks from 1 KiB, so small arrays exercise the pool."""
    monkeypatch.setattr(_cpu_pool, "MIN_BYTES", 1024)


def test_a_block_is_reused_only_when_no_array_holds_it(small_blocks):
    pool = ResultPool(limit=1 << 20)
    first = pool.take(0, (256,), np.float64)
    second = pool.take(0, (16, 16), np.float64)
    assert not np.shares_memory(first, second)
    view = first[::2]
    del first
    third = pool.take(0, (256,), np.float64)  # `view` still holds the first block
    assert not np.shares_memory(third, view)
    assert not np.shares_memory(third, second)
    del view
    again = pool.take(0, (32, 8), np.float64)
    assert again.base is not None
    assert again.shape == (32, 8)
    assert pool.figures(0) == (3 * 2048, 3 * 2048)
    del again
    assert pool.figures(0) == (2 * 2048, 3 * 2048)
    assert pool.figures(1) == (0, 0)  # devices apart


def test_the_pool_stays_within_its_limit(small_blocks):
    pool = ResultPool(limit=5000)
    held = [pool.take(0, (256,), np.float64) for _ in range(3)]  # 2048 B each
    assert pool.figures(0) == (4096, 4096)
    assert held[2].base is None  # past the limit: a plain array
    del held
    other = pool.take(0, (300,), np.float64)  # free blocks of another size make room
    used, total = pool.figures(0)
    assert used == 2400
    assert total <= 5000
    assert not pool.wants(6000)
    assert pool.wants(4000)
    del other


@pytest.mark.skipif(not SEVERAL, reason="the pool serves the device threads' results")
def test_results_from_the_pool_are_kept_apart(small_blocks, monkeypatch):
    monkeypatch.setattr(BACKEND, "parallel_bytes", 0)
    monkeypatch.setattr(BACKEND, "pool", ResultPool(limit=1 << 20))
    ha = np.arange(4096.0).reshape(64, 64)
    a = mdarray.asarray(ha)
    kept = a + 1.0
    for _ in range(3):
        a * 2.0  # each result dropped: its blocks come back
    other = a * 3.0
    # Written by keyword (NumPy deprecates a positional out of maximum and minimum).
    np.testing.assert_array_equal(np.maximum(a, 2000.0).get(), np.maximum(ha, 2000.0))
    np.testing.assert_array_equal(kept.get(), ha + 1.0)
    np.testing.assert_array_equal(other.get(), ha * 3.0)
    report = mdarray.memory_report()
    used = sum(report.pool[d][0] for d in mdarray.devices())
    assert used == kept.nbytes + other.nbytes
    assert all(total <= 1 << 20 for _, total in report.pool.values())
    del kept, other
    assert sum(mdarray.memory_report().pool[d][0] for d in mdarray.devices()) == 0


def test_the_pool_is_off_at_zero():
    pool = ResultPool(limit=0)
    assert not pool.wants(64 << 20)
