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

workloads = importlib.import_module("benchmarks.workloads")

#: One CG iteration (`benchmarks.workloads.cg` with its Laplacian written out), a line
#: per operation, run in a namespace holding ``xp`` and the state.
LINES = [
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
]
CODE = [compile(line, line, "exec") for line in LINES]


def per_line(xp, b, rounds: int = 300, warm: int = 30) -> np.ndarray:
    """Microseconds of host time per line, averaged over `rounds` iterations."""
    state = {"xp": xp, "x": xp.zeros_like(b), "r": b, "p": b, "rs": xp.sum(b * b)}
    spent = np.zeros(len(CODE))
    clock = time.perf_counter
    for it in range(rounds + warm):
        for k, code in enumerate(CODE):
            start = clock()
            exec(code, state)  # (the lines above, timed one by one)
            if it >= warm:
                spent[k] += clock() - start
        if it % 50 == 0:  # (the queue kept short: launches never wait for room)
            cupy.cuda.Device().synchronize()
    return spent / rounds * 1e6


def main() -> None:
    host = np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)
    device = mdarray.devices()[0]
    ours = mdarray.distributed_array(host, workloads.row_map(host.shape, (device,)))
    theirs = cupy.asarray(host)
    for round_ in range(2):
        ref, mine = per_line(cupy, theirs), per_line(mdarray, ours)
        print(f"round {round_}: CuPy {ref.sum():.1f} us, mdarray {mine.sum():.1f} us")
        for line, a, b in zip(LINES, ref, mine):
            print(f"  {line:24s} {a:7.2f} {b:7.2f} {b - a:+7.2f}")


if __name__ == "__main__":
    main()
