"""Where a workload iteration's host time goes on this backend: per workload, the time
per iteration with and without a device synchronize each iteration (mdarray and the
reference library), then cProfile's top functions by own time over mdarray's loop
(CuPy's Cython methods appear as builtins): ``python tools/device/hostprof.py NAME...``
from the repository root."""

import cProfile
import importlib
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

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


def main(names) -> None:
    env = harness.Env()
    for name in names:
        algorithm, _ = workloads.ALGORITHMS[name]
        host = workloads.host_data(name, "moderate")
        ref, ours = workloads.on_reference(env, host), workloads.on_mdarray(host)
        iters = 50
        for fn in (lambda n: algorithm(env.xp, ref, n), lambda n: algorithm(mdarray, ours, n)):
            fn(3)
        t_ref = timed(env, lambda n: algorithm(env.xp, ref, n), iters)
        t_ours = timed(env, lambda n: algorithm(mdarray, ours, n), iters)
        # Host only: the loop without waiting for the device at its end (the queue runs
        # behind); a long loop, so that the device work of the first iterations overlaps.
        env.sync()
        start = time.perf_counter()
        algorithm(mdarray, ours, iters)
        host_ours = (time.perf_counter() - start) / iters * 1e6
        env.sync()
        start = time.perf_counter()
        algorithm(env.xp, ref, iters)
        host_ref = (time.perf_counter() - start) / iters * 1e6
        env.sync()
        print(f"== {name}: per iteration {env.ref_name} {t_ref:.1f} us (host {host_ref:.1f}), "
              f"mdarray {t_ours:.1f} us (host {host_ours:.1f})")
        profile = cProfile.Profile()
        profile.enable()
        algorithm(mdarray, ours, iters)
        env.sync()
        profile.disable()
        stats = pstats.Stats(profile)
        print(f"   cProfile over {iters} iterations (totals; divide by {iters}):")
        stats.sort_stats("tottime").print_stats(28)


if __name__ == "__main__":
    main(sys.argv[1:] or ["power", "logreg", "cg"])
