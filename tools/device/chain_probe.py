"""Two probes of where a workload iteration's host time goes on the cuda backend:
``python tools/device/chain_probe.py`` from the repository root.

- **Waits**: each workload's iteration (mdarray's and CuPy's), timed until it returns
  right after a kernel of about 20 ms was queued: an iteration that waits for the device
  anywhere takes the rest of that kernel's time, one that does not returns in its host
  time alone.
- **Alone and in a chain**: each operation of a power iteration timed as a loop of that
  one operation, then the same operations one after another as the iteration runs them
  (microseconds per call, host time, the device queue left to run behind).
"""

import importlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

import cupy  # noqa: E402
import numpy as np  # noqa: E402

import mdarray  # noqa: E402

workloads = importlib.import_module("benchmarks.workloads")
harness = importlib.import_module("benchmarks._harness")

_SPIN = cupy.RawKernel(
    'extern "C" __global__ void spin(long long n) {'
    " long long t = clock64(); while (clock64() - t < n); }",
    "spin",
)


def _sync() -> None:
    cupy.cuda.Device().synchronize()


def waits(env) -> None:
    """Host microseconds of one iteration queued behind a ~20 ms kernel."""
    for name in ("power", "logreg", "cg", "kmeans", "jacobi", "standardize"):
        algorithm, _ = workloads.ALGORITHMS[name]
        host = workloads.host_data(name, "moderate")
        for xp, data in ((cupy, workloads.on_reference(env, host)), (mdarray, workloads.on_mdarray(host))):  # fmt: skip
            algorithm(xp, data, 1)
            _sync()
            spent = []
            for _ in range(3):
                _SPIN((1,), (1,), (np.int64(40_000_000),))
                start = time.perf_counter()
                algorithm(xp, data, 1)
                spent.append((time.perf_counter() - start) * 1e6)
                _sync()
            flag = "  (waited for the device)" if min(spent) > 3000 else ""
            print(f"{name:12s} {xp.__name__:8s} one iteration {min(spent):9.1f} us{flag}")


def _loop_us(fn, count: int = 1000) -> float:
    spent = []
    for _ in range(7):
        _sync()
        start = time.perf_counter()
        for _ in range(count):
            fn()
        spent.append((time.perf_counter() - start) / count * 1e6)
        _sync()
    return statistics.median(spent)


def chain(env) -> None:
    """A power iteration's operations alone and in their chain, per library."""
    host = workloads.host_data("power", "moderate")
    for xp, a in ((cupy, workloads.on_reference(env, host)), (mdarray, workloads.on_mdarray(host))):
        v = workloads.power(xp, a, 3)
        w = a @ v
        ww = w * w
        s = xp.sum(ww)
        r = xp.sqrt(s)
        ops = [
            ("a @ v", lambda a=a, v=v: a @ v),
            ("w * w", lambda w=w: w * w),
            ("sum(w * w)", lambda xp=xp, ww=ww: xp.sum(ww)),
            ("sqrt(s)", lambda xp=xp, s=s: xp.sqrt(s)),
            ("w / r", lambda w=w, r=r: w / r),
        ]
        alone = 0.0
        for label, fn in ops:
            spent = _loop_us(fn)
            alone += spent
            print(f"{xp.__name__:8s} {label:12s} alone {spent:8.2f} us")

        def step(xp=xp, a=a, v=v):
            w = a @ v
            return w / xp.sqrt(xp.sum(w * w))

        print(
            f"{xp.__name__:8s} the five alone {alone:8.2f} us, in the iteration {_loop_us(step):8.2f} us"
        )


def main() -> None:
    env = harness.Env()
    waits(env)
    chain(env)


if __name__ == "__main__":
    main()
