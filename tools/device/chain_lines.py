"""The host time of each line of a workload's iteration in its chain, CuPy's and
mdarray's on the same data (the moderate size, 4 row chunks on device 0), two rounds:
which operation of a whole algorithm costs more than CuPy's, as the algorithm runs it
(an operation repeated alone runs warmer code). ``python tools/device/chain_lines.py
[WORKLOAD ...]`` from the repository root (CG by default; against NumPy on the cpu
backend)."""

import importlib
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

import numpy as np  # noqa: E402

import mdarray  # noqa: E402

workloads = importlib.import_module("benchmarks.workloads")
harness = importlib.import_module("benchmarks._harness")
#: Iterations timed per round (``CHAIN_ROUNDS``).
ROUNDS = int(os.environ.get("CHAIN_ROUNDS", "300"))

#: Per workload (`benchmarks.workloads`), one iteration a line per operation, run in a
#: namespace holding ``xp``, the data (``data``; ``x, y`` for logreg's pair) and the
#: state its first iteration starts from (`START`). CG's Laplacian is written out.
LINES = {
    "cg": [
        "y = 4 * p",
        "y[1:, :] -= p[:-1, :]",
        "y[:-1, :] -= p[1:, :]",
        "y[:, 1:] -= p[:, :-1]",
        "y[:, :-1] -= p[:, 1:]",
        "q = p * y",
        "s = xp.sum(q)",
        "alpha = rs / s",
        "a1 = alpha * p",
        "x = x + a1",
        "a2 = alpha * y",
        "r = r - a2",
        "rr = r * r",
        "rs_new = xp.sum(rr)",
        "f = rs_new / rs",
        "fp = f * p",
        "p = r + fp",
        "rs = rs_new",
    ],
    "kmeans": [
        "ct = centers.T",
        "pc = data @ ct",
        "pc2 = 2 * pc",
        "sqc = sq[:, None]",
        "d1 = sqc - pc2",
        "cc = centers * centers",
        "ccs = xp.sum(cc, axis=1)",
        "d = d1 + ccs[None, :]",
        "labels = xp.argmin(d, axis=1)",
        "eq = labels[:, None] == ks[None, :]",
        "onehot = xp.astype(eq, data.dtype)",
        "counts = xp.sum(onehot, axis=0)",
        "sums = onehot.T @ data",
        "cm = xp.maximum(counts, 1)",
        "centers = sums / cm[:, None]",
    ],
    "jacobi": [
        "new = xp.zeros_like(u)",
        "t = u[:-2, 1:-1] + u[2:, 1:-1]",
        "t = t + u[1:-1, :-2]",
        "t = t + u[1:-1, 2:]",
        "t = t + data[1:-1, 1:-1]",
        "t = 0.25 * t",
        "new[1:-1, 1:-1] = t",
        "u = new",
    ],
    "power": [
        "w = data @ v",
        "ww = w * w",
        "s = xp.sum(ww)",
        "n = xp.sqrt(s)",
        "v = w / n",
    ],
    "logreg": [
        "xw = x @ w",
        "e = xp.exp(-xw)",
        "p = 1 / (1 + e)",
        "g = x.T @ (p - y)",
        "w = w - rate * g",
    ],
}
#: Per workload, its first iteration's state from ``xp``, ``data`` and ``on`` (a creation
#: function's ``device=``, where the namespace takes it).
START = {
    "cg": "x = xp.zeros_like(data); r = p = data; rs = xp.sum(data * data)",
    "kmeans": "ks = xp.arange(8, **on); sq = xp.sum(data * data, axis=1); centers = data[:8, :]",
    "jacobi": "u = xp.zeros_like(data)",
    "power": "v = xp.ones(data.shape[1], dtype=data.dtype, **on)",
    "logreg": "x, y = data; rate = 0.1 / x.shape[0]; w = xp.zeros(x.shape[1], dtype=x.dtype, **on)",
}


def state_of(name: str, xp, data) -> dict:
    """The namespace `name`'s lines start from."""
    first = data[0] if isinstance(data, tuple) else data
    state = {"xp": xp, "data": data, "on": workloads.beside(xp, first)}
    exec(START[name], state)  # (the workload's start)
    return state


def per_line(name: str, xp, data, sync, rounds: int = ROUNDS, warm: int = 30) -> np.ndarray:
    """Microseconds of host time per line of `name`, averaged over `rounds` iterations."""
    codes = [compile(line, line, "exec") for line in LINES[name]]
    state = state_of(name, xp, data)
    spent = np.zeros(len(codes))
    clock = time.perf_counter
    for it in range(rounds + warm):
        for k, code in enumerate(codes):
            start = clock()
            exec(code, state)  # (the lines above, timed one by one)
            if it >= warm:
                spent[k] += clock() - start
        if it % 50 == 0:  # (the queue kept short: launches never wait for room)
            sync()
    return spent / rounds * 1e6


def datasets(name: str):
    """`name`'s data at the moderate size: the reference's and mdarray's (4 row chunks
    on the first device)."""
    host = workloads.host_data(name, "moderate")
    device = mdarray.devices()[0]
    parts = host if isinstance(host, tuple) else (host,)
    ours = [mdarray.distributed_array(h, workloads.row_map(h.shape, (device,))) for h in parts]
    return host, tuple(ours) if isinstance(host, tuple) else ours[0]


def main() -> None:
    env = harness.Env()
    for name in sys.argv[1:] or ["cg"]:
        host, ours = datasets(name)
        theirs = workloads.on_reference(env, host)
        for round_ in range(2):
            ref = per_line(name, env.xp, theirs, env.sync)
            mine = per_line(name, mdarray, ours, env.sync)
            print(
                f"{name} round {round_}: {env.ref_name} {ref.sum():.1f} us, mdarray {mine.sum():.1f} us"
            )
            for line, a, b in zip(LINES[name], ref, mine):
                print(f"  {line:28s} {a:7.2f} {b:7.2f} {b - a:+7.2f}")


if __name__ == "__main__":
    main()
