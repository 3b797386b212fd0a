"""Where the time of ``mdarray.iterate`` goes, per workload (moderate size): the loop
timed at several lengths, so the slope is one launched iteration and the intercept the
fixed cost of a call (the iteration run as written, the recordings, the copies); the
reference library's iteration and the loop as written beside. From the repository root:
``python tools/device/iterate_costs.py [names...]``."""

import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

import mdarray  # noqa: E402
from mdarray._ops.engine import iteration  # noqa: E402

workloads = importlib.import_module("benchmarks.workloads")
harness = importlib.import_module("benchmarks._harness")

LENGTHS = (4, 24, 104)


def measure(env, name: str) -> str:
    algorithm, _ = workloads.ALGORITHMS[name]
    host = workloads.host_data(name, "moderate")
    ref, ours = workloads.on_reference(env, host), workloads.on_mdarray(host)
    with mdarray.options(fallback="raise"):
        loops = [
            harness.median_time(
                env, lambda n=n: algorithm(mdarray, ours, n, mdarray.iterate), repeat=5, warmup=1
            )
            for n in LENGTHS
        ]
        written = (
            harness.median_time(env, lambda: algorithm(mdarray, ours, 24), repeat=5, warmup=1) / 24
        )
        iteration.RECENT.clear()
        algorithm(mdarray, ours, 24, mdarray.iterate)
        recent = list(iteration.RECENT)
    reference = (
        harness.median_time(env, lambda: algorithm(env.xp, ref, 24), repeat=5, warmup=1) / 24
    )
    slope = (loops[-1] - loops[1]) / (LENGTHS[-1] - LENGTHS[1])
    fixed = loops[1] - slope * LENGTHS[1]
    return (
        f"{name}: reference {reference * 1e3:.3f} ms/it, as written {written * 1e3:.3f}, "
        f"iterate launched {slope * 1e3:.3f} ms/it + {fixed * 1e3:.2f} ms a call; "
        + ", ".join(f"{n} its {t * 1e3 / n:.3f} ms/it" for n, t in zip(LENGTHS, loops))
        + "; recordings of one call: "
        + ", ".join(
            f"{t * 1e3:.2f} ms" + (f" failed ({why[:160]})" if why else "") for t, why in recent
        )
    )


def main(names: list[str]) -> None:
    env = harness.Env()
    for name in names or list(workloads.ALGORITHMS):
        print(measure(env, name), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
