"""Where a workload iteration's host time goes on this backend: per workload, the time
per iteration with and without a device synchronize each iteration (mdarray and the
reference library), then cProfile's top functions by own time over mdarray's loop
(CuPy's Cython methods appear as builtins); ``percall``: the same for each op of the
per-call table (`benchmarks.workloads.percall_ops`) on 64x64, ``percall2048`` on 2048x2048:
``python tools/device/hostprof.py NAME...`` from the repository root."""

import cProfile
import importlib
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

import numpy as np  # noqa: E402

import mdarray  # noqa: E402

workloads = importlib.import_module("benchmarks.workloads")
harness = importlib.import_module("benchmarks._harness")


def timed(env, fn, iters: int, rounds: int = 7) -> float:
    """Median microseconds per iteration of ``fn(iters)`` (synchronized at the ends)."""
    spent = []
    for _ in range(rounds):
        env.sync()
        start = time.perf_counter()
        fn(iters)
        env.sync()
        spent.append((time.perf_counter() - start) / iters * 1e6)
    return sorted(spent)[len(spent) // 2]


def percall(env, n: int = 64) -> None:
    """Each per-call op's time (mdarray, the reference) and mdarray's profile, on n x n."""
    rng = np.random.default_rng(1)
    hx, hy = rng.standard_normal((n, n), np.float32), rng.standard_normal((n, n), np.float32)
    hw = rng.standard_normal((n, 8), np.float32)
    layout = workloads.row_map((n, n), mdarray.devices())
    x, y = mdarray.distributed_array(hx, layout), mdarray.distributed_array(hy, layout)
    w = mdarray.asarray(hw, device=x.device)
    rx, ry, rw = env.asref(hx), env.asref(hy), env.asref(hw)
    theirs = workloads.percall_ops(env.xp, rx, ry, env.xp.sum(rx), rw)
    ours = workloads.percall_ops(mdarray, x, y, mdarray.sum(x), w)
    count = 2000 if n <= 256 else 200
    for (name, ref_call), (_, our_call) in zip(theirs, ours):
        t_ref = harness.loop_time(env, ref_call, count=count) * 1e6
        t_ours = harness.loop_time(env, our_call, count=count) * 1e6
        print(f"== {name}: {env.ref_name} {t_ref:.2f} us, mdarray {t_ours:.2f} us")
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(count):
            our_call()
        env.sync()
        profile.disable()
        print(f"   cProfile over {count} calls (totals):")
        top(profile, count, 14)


def main(names) -> None:
    env = harness.Env()
    for name in [n for n in names if n.startswith("percall")]:  # percall, percall2048
        percall(env, int(name[len("percall") :] or 64))
    names = [n for n in names if not n.startswith("percall")]
    for name in names:
        workload(env, name)


def workload(env, name: str) -> None:
    algorithm, _ = workloads.ALGORITHMS[name]
    host = workloads.host_data(name, "moderate")
    ref, ours = workloads.on_reference(env, host), workloads.on_mdarray(host)

    def theirs(n):
        return algorithm(env.xp, ref, n)

    def mine(n):
        return algorithm(mdarray, ours, n)

    iters = 50
    theirs(3)
    mine(3)
    t_ref, t_ours = timed(env, theirs, iters), timed(env, mine, iters)
    # Host only: the loop without waiting for the device at its end (the queue runs
    # behind); a long loop, so that the device work of the first iterations overlaps.
    host_ref, host_ours = host_time(env, theirs, iters), host_time(env, mine, iters)
    print(
        f"== {name}: per iteration {env.ref_name} {t_ref:.1f} us (host {host_ref:.1f}), "
        f"mdarray {t_ours:.1f} us (host {host_ours:.1f})"
    )
    profile = cProfile.Profile()
    profile.enable()
    mine(iters)
    env.sync()
    profile.disable()
    print(f"   cProfile over {iters} iterations (totals; divide by {iters}):")
    top(profile, iters, 28)
    profile = cProfile.Profile()
    profile.enable()
    theirs(iters)
    env.sync()
    profile.disable()
    print(f"   {env.ref_name}'s cProfile over {iters} iterations:")
    top(profile, iters, 16)


def top(profile: cProfile.Profile, per: int, rows: int) -> None:
    """The `rows` functions of most own time: microseconds of own and total time and
    calls, each per call of the loop (`per` calls profiled)."""
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    ranked = sorted(stats.items(), key=lambda item: -item[1][2])[:rows]
    print(f"   {'own us':>8} {'total us':>9} {'calls':>6}  function")
    for (path, line, name), (_, ncalls, own, total, _) in ranked:
        where = f"{Path(path).name}:{line}({name})" if line else name
        print(f"   {own / per * 1e6:8.2f} {total / per * 1e6:9.2f} {ncalls / per:6.2f}  {where}")


def host_time(env, fn, iters: int) -> float:
    """Microseconds per iteration of ``fn(iters)`` until it returns (no wait at its end)."""
    env.sync()
    start = time.perf_counter()
    fn(iters)
    spent = (time.perf_counter() - start) / iters * 1e6
    env.sync()
    return spent


if __name__ == "__main__":
    main(sys.argv[1:] or ["power", "logreg", "cg"])
