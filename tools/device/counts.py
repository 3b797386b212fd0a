"""Python calls per iteration of each workload on this backend, as
`tests/test_iteration_costs.py` counts them (its ``CUDA`` table is set from a GPU run):
``python tools/device/counts.py`` from the repository root; ``... counts.py percall``:
each op of the per-call table (`tests/test_percall_costs.py`)."""

import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from _call_counts import calls  # noqa: E402

import mdarray  # noqa: E402

workloads = importlib.import_module("benchmarks.workloads")
costs = importlib.import_module("test_iteration_costs")


def per_iteration(name: str) -> float:
    """Python calls of one more iteration of workload `name` on small data."""
    host = costs._small(workloads.host_data(name, "moderate"))
    data = workloads.on_mdarray(host)
    algorithm, _ = workloads.ALGORITHMS[name]
    with mdarray.options(fallback="raise"):
        one = calls(lambda: algorithm(mdarray, data, 1))
        three = calls(lambda: algorithm(mdarray, data, 3))
    return (three - one) / 2


if __name__ == "__main__":
    if sys.argv[1:] == ["percall"]:  # `tests/test_percall_costs.py`'s counts
        for name, count in importlib.import_module("test_percall_costs").percall_counts().items():
            print(f"{name!r}: {count},")
    else:
        for name in costs.NAMES:
            print(name, per_iteration(name))
