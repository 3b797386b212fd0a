"""Host time of each op of the per-call table (`benchmarks.workloads.percall_ops`) at a
given size, CuPy's and mdarray's (4 row chunks on device 0): loops of calls timed until
they return, the device queue left to run behind (synchronized between loops), so a
large array's kernel time is not counted; each side's median of 7 turns:
``python tools/device/host_ops.py 2048`` from the repository root (cuda backend)."""

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

import cupy  # noqa: E402
import numpy as np  # noqa: E402

import mdarray  # noqa: E402
from benchmarks.workloads import percall_ops, row_map  # noqa: E402


def host_us(fn, count: int) -> float:
    """Microseconds per call of `count` calls of `fn` until the last returns."""
    cupy.cuda.Device().synchronize()
    start = time.perf_counter()
    for _ in range(count):
        fn()
    spent = time.perf_counter() - start
    cupy.cuda.Device().synchronize()
    return spent / count * 1e6


def main(n: int, count: int = 40) -> None:
    rng = np.random.default_rng(1)
    hx, hy = (rng.standard_normal((n, n), np.float32) for _ in range(2))
    hw = rng.standard_normal((n, 8), np.float32)
    layout = row_map((n, n), (0,))
    x, y = mdarray.distributed_array(hx, layout), mdarray.distributed_array(hy, layout)
    w = mdarray.asarray(hw, device=x.device)
    rx, ry, rw = cupy.asarray(hx), cupy.asarray(hy), cupy.asarray(hw)
    theirs = percall_ops(cupy, rx, ry, cupy.sum(rx), rw)
    with mdarray.options(fallback="raise"):
        ours = percall_ops(mdarray, x, y, mdarray.sum(x), w)
        print(f"| op, {n}x{n} float32 | CuPy host us | mdarray host us | ratio |")
        print("|---|---|---|---|")
        for (name, ref_call), (_, our_call) in zip(theirs, ours):
            for _ in range(3):
                ref_call(), our_call()
            refs, mines = [], []
            for _ in range(7):
                refs.append(host_us(ref_call, count))
                mines.append(host_us(our_call, count))
            ref, mine = statistics.median(refs), statistics.median(mines)
            print(f"| {name} | {ref:.1f} | {mine:.1f} | {mine / ref:.2f}x |")


if __name__ == "__main__":
    for arg in sys.argv[1:] or ["2048"]:
        main(int(arg))
