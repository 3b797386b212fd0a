"""The host cost of one call (issue 20's per-call table, `benchmarks.workloads.percall_ops`):
the Python calls of each op family, repeated on 64x64 float32 in 4 row chunks of one
device, as `tests/_call_counts.py` counts them. A repeated call runs what its first call
decided, so these counts are deterministic: a change that puts planning or bookkeeping
back on the repeated path fails here, not only in the benchmarks' timings. Budgets are
the counts reached plus about 20% (at least 2); ``python tools/device/counts.py
percall`` prints them on any backend.
"""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from _call_counts import calls

import mdarray

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
workloads = importlib.import_module("benchmarks.workloads")
sys.path.pop(0)

#: Python calls reached, cpu backend (CPython 3.11, whose list comprehensions are calls
#: of their own), 2026-12-07. Before the cuts of 2026-12-06, in the same order: 13, 13, 12,
#: 13, 17, 25, 18, 19, 19, 17, 20, 29, 12, 12, 61, 23, 13, 24, 13, 18. Views join their
#: family late (`Chunks._join`): one call more (`_late`) and no registration, whose weak
#: reference and the callback at its death cost more than a frame.
REACHED = {
    "a + a": 4,
    "a * 2.0 (Python scalar)": 7,
    "s * a (0-d sum times 2-D)": 5,
    "s / s (0-d by 0-d)": 4,
    "xp.sum(x) (partial on mdarray)": 12,
    "float(xp.sum(x))": 17,
    "xp.mean(x)": 14,
    "xp.sum(x, axis=0)": 13,
    "xp.sum(x, axis=1)": 13,
    "xp.max(x)": 12,
    "xp.argmin(x, axis=1)": 15,
    "xp.where(x > 0, x, 0)": 18,
    "x[1:3] (a view)": 6,
    "x[:-1, :] (shifted view)": 6,
    "z[1:, :] -= y[:-1, :] (halo update)": 42,
    "z[0] = 1.0 (setitem)": 12,
    "x @ w": 11,
    "xp.astype(x, float64)": 20,
    "xp.exp(x)": 7,
    "xp.zeros_like(x)": 16,
}
#: The cuda backend's, where they differ (its own copies, fills, kernel lookups and bound
#: launches are Python: a call's bound launch, its kernel's and the driver's launch, where
#: CuPy's ufunc is C): an H100, 2026-12-07 (CPython 3.12).
CUDA = {
    "a + a": 7,
    "a * 2.0 (Python scalar)": 12,  # the scalar in its loop's type, too
    "s * a (0-d sum times 2-D)": 8,
    "s / s (0-d by 0-d)": 7,
    "xp.sum(x) (partial on mdarray)": 14,  # mdarray's own whole sum called from Python
    "float(xp.sum(x))": 25,
    "xp.mean(x)": 16,
    "xp.argmin(x, axis=1)": 16,
    "xp.where(x > 0, x, 0)": 23,
    "z[1:, :] -= y[:-1, :] (halo update)": 29,  # blocks launched by pointer
    "z[0] = 1.0 (setitem)": 10,
    "x @ w": 15,  # cuBLAS called from Python (`_backends.cuda.blas`), not CuPy's C
    "xp.astype(x, float64)": 13,
    "xp.exp(x)": 10,
    "xp.zeros_like(x)": 18,
}


def percall_counts() -> dict[str, int]:
    """Python calls of one repeated call of each op of the per-call table."""
    rng = np.random.default_rng(1)
    hx, hy = (rng.standard_normal((64, 64), np.float32) for _ in range(2))
    device = mdarray.devices()[0]
    layout = workloads.row_map((64, 64), (device,))
    x, y = mdarray.distributed_array(hx, layout), mdarray.distributed_array(hy, layout)
    w = mdarray.asarray(rng.standard_normal((64, 8), np.float32), device=x.device)
    with mdarray.options(fallback="raise"):
        ops = workloads.percall_ops(mdarray, x, y, mdarray.sum(x), w)
        return {name: calls(fn) for name, fn in ops}


@pytest.fixture(scope="module")
def counts():
    return percall_counts()


@pytest.mark.parametrize("name", sorted(REACHED))
def test_a_repeated_call_stays_within_its_budget(counts, name):
    reached = REACHED[name]
    if mdarray.default_backend() == "cuda":
        reached = CUDA.get(name, reached)
    budget = reached + max(2, reached // 5)
    assert counts[name] <= budget, f"{name}: {counts[name]} Python calls, budget {budget}"
