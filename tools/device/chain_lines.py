"""The host time of each line of a CG iteration in its chain, CuPy's and mdarray's on
the same data (2048x2048 float32, 4 row chunks on device 0), two rounds: which operation
of a whole algorithm costs more than CuPy's, as the algorithm runs it (an operation
repeated alone runs warmer code). ``python tools/device/chain_lines.py`` from the
repository root, on the cuda backend."""

import importlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

import cupy  # noqa: E402
import numpy as np  # noqa: E402

import mdarray  # noqa: E402

wl = importlib.import_module("benchmarks.workloads")
n = 2048
rng = np.random.default_rng(0)
hb = rng.standard_normal((n, n)).astype(np.float32)
dev = mdarray.devices()[0]


def run(xp, b, R=300):
    pc = time.perf_counter
    x, r, p = xp.zeros_like(b), b, b
    rs = xp.sum(b * b)
    names = [
        "4*u",
        "h1",
        "h2",
        "h3",
        "h4",
        "p*ap",
        "sum",
        "rs/",
        "al*p",
        "x+",
        "al*ap",
        "r-",
        "r*r",
        "sum2",
        "rn/rs",
        "()*p",
        "r+",
    ]
    T = np.zeros(len(names))
    for it in range(R + 30):
        t = [pc()]
        u = p
        y = 4 * u
        t.append(pc())
        y[1:, :] -= u[:-1, :]
        t.append(pc())
        y[:-1, :] -= u[1:, :]
        t.append(pc())
        y[:, 1:] -= u[:, :-1]
        t.append(pc())
        y[:, :-1] -= u[:, 1:]
        t.append(pc())
        ap = y
        q = p * ap
        t.append(pc())
        s = xp.sum(q)
        t.append(pc())
        alpha = rs / s
        t.append(pc())
        a1 = alpha * p
        t.append(pc())
        x = x + a1
        t.append(pc())
        a2 = alpha * ap
        t.append(pc())
        r = r - a2
        t.append(pc())
        rr = r * r
        t.append(pc())
        rs_new = xp.sum(rr)
        t.append(pc())
        f = rs_new / rs
        t.append(pc())
        fp = f * p
        t.append(pc())
        p = r + fp
        t.append(pc())
        rs = rs_new
        if it >= 30:
            T += np.diff(t)
        if it % 50 == 0:
            cupy.cuda.Device().synchronize()
    return names, T / R * 1e6


ref = cupy.asarray(hb)
ours = mdarray.distributed_array(hb, wl.row_map(hb.shape, (dev,)))
for rnd in range(2):
    names, tc = run(cupy, ref)
    _, tm = run(mdarray, ours)
    print(f"round {rnd}: total cupy {tc.sum():.1f} us, mdarray {tm.sum():.1f} us")
    for nme, a, b in zip(names, tc, tm):
        print(f"  {nme:8s} {a:7.2f} {b:7.2f} {b - a:+7.2f}")
