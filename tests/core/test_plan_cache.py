"""The plan cache: bounded in bytes, flat memory over many layouts, safe under threads."""

import gc
import threading
import tracemalloc

import numpy as np
from _threads import in_threads

import mdarray
from mdarray._core import plan_cache as _plan_cache, regions as _regions
from mdarray._movement.plans import reshard_plan


def _strided_layout(n, devices, steps, shift):
    return mdarray.Layout(
        (n, 1), {d: [(slice(k, None, s),) for k in range(s)] for d, s in zip(devices, steps)}
    ), mdarray.Layout((n, 1), {devices[-1]: [(slice(0, shift),), (slice(shift, None),)]})


def test_reshards_to_ever_new_layouts_keep_memory_flat(monkeypatch):
    monkeypatch.setattr(_plan_cache, "MAX_BYTES", 2**20)
    n = 2**16
    devices = mdarray.devices()
    x = mdarray.distributed_array(
        np.arange(n, dtype=np.float64).reshape(n, 1), {devices[0]: [(slice(None),)]}
    )
    rng = np.random.default_rng(0)

    def loop(count, offset):
        for i in range(count):
            steps = [int(s) for s in rng.integers(2, 6, size=len(devices))]
            strided, halves = _strided_layout(n, devices, steps, offset + i)
            y = x.reshard(strided).reshard(halves)
            np.testing.assert_array_equal(y.get(), x.get())

    loop(30, 1)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        loop(60, 100)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    _entries, held = _plan_cache.usage()
    assert held <= _plan_cache.MAX_BYTES
    assert grown < 2**20, f"60 reshards to new layouts kept {grown} bytes"


def _counted_plans(monkeypatch):
    """A cached plan of about 4 KB per key (its ints) in a cache of 50 KB, and the list
    of the keys it computed."""
    monkeypatch.setattr(_plan_cache, "MAX_BYTES", 50_000)
    _plan_cache.clear()
    calls = []

    @_plan_cache.plan_cache
    def plan(k):
        calls.append(k)
        return tuple(range(k, k + 100))

    return plan, calls


def test_cache_drops_least_recently_used_within_its_budget(monkeypatch):
    plan, calls = _counted_plans(monkeypatch)
    for k in range(40):
        assert plan(k) == tuple(range(k, k + 100))
    entries, held = _plan_cache.usage()
    assert held <= 50_000
    assert 1 < entries < 40
    plan(39)  # recent: still there
    assert calls.count(39) == 1
    plan(0)  # long gone: computed again
    assert calls.count(0) == 2


def test_a_plan_in_use_outlives_a_stream_of_new_ones(monkeypatch):
    """A hit marks its entry (no second hashing of the key); a marked entry that comes up
    for eviction goes to the back instead, unmarked, so a plan used between the misses
    stays while the cache turns over many times."""
    plan, calls = _counted_plans(monkeypatch)
    for k in range(1, 200):
        assert plan(0) == tuple(range(100))
        plan(k)
    assert calls.count(0) == 1
    assert calls.count(1) == 1
    plan(1)  # unused since: long gone
    assert calls.count(1) == 2
    assert _plan_cache.usage()[1] <= 50_000


def test_nbytes_counts_arrays_and_mdarray_objects():
    big = np.zeros(10_000)
    assert _plan_cache.nbytes((big, big)) >= big.nbytes  # shared: counted once
    assert _plan_cache.nbytes((big, big)) < 2 * big.nbytes
    layout = mdarray.Layout.block((1000, 4), devices=mdarray.devices())
    assert _plan_cache.nbytes(layout) > _plan_cache.nbytes(layout.shape)


def test_threads_planning_at_once_agree():
    _plan_cache.clear()
    devices = mdarray.devices()
    layouts = [mdarray.Layout.block((60, 7), axis=a % 2, devices=devices) for a in range(4)]
    strided = mdarray.Layout(
        (60, 7), {d: [(slice(k, None, len(devices)),)] for k, d in enumerate(devices)}
    )
    want = [reshard_plan(a, strided, p) for a in layouts for p in (False, True)]
    _plan_cache.clear()
    got = []
    barrier = threading.Barrier(8)

    def work():
        barrier.wait()
        got.append([reshard_plan(a, strided, p) for a in layouts for p in (False, True)])

    in_threads(work)
    assert len(got) == 8
    for plans in got:
        assert repr(plans) == repr(want)
    assert _regions.cover((range(3),), ((range(3),),)).uncovered() is None


def test_a_failed_recording_forgets_only_the_plans_it_made():
    """`forget_new(drop=True)` removes the plans remembered since `track_new` and keeps
    the older ones; `drop=False` keeps them all and stops noting."""
    _plan_cache.remember(("old plan",), 1)
    _plan_cache.track_new()
    _plan_cache.remember(("new plan",), 2)
    _plan_cache.remember(("old plan",), 3)  # known already: not new, kept as it was
    _plan_cache.forget_new(drop=True)
    assert _plan_cache.lookup(("new plan",)) is None
    assert _plan_cache.lookup(("old plan",)) == 1
    _plan_cache.track_new()
    _plan_cache.remember(("kept plan",), 4)
    _plan_cache.forget_new(drop=False)
    _plan_cache.remember(("later plan",), 5)
    _plan_cache.forget_new(drop=True)  # tracking nothing: drops nothing
    assert _plan_cache.lookup(("kept plan",)) == 4
    assert _plan_cache.lookup(("later plan",)) == 5
