"""Run the lockstep state machine (tests/test_lockstep.py) long, without shrinking, and
count its steps: the long fuzz of the reliability checks, sized for a time budget (on the
GPU machine, pytest's shrinking of a failure could spend the session's device time).

    python tests/run_lockstep.py SEQUENCES [MAX_STEPS] [--derandomize]

Warnings are errors, as in the suite. Prints ``CLEAN`` or ``FAIL`` with the time, the
number of sequences and of steps, then (on failure) the failing sequence.
"""

import argparse
import sys
import time
import traceback
import warnings
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings

sys.path.insert(0, str(Path(__file__).parent))
import test_lockstep


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sequences", type=int)
    parser.add_argument("max_steps", type=int, nargs="?", default=50)
    parser.add_argument("--derandomize", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("error")
    counts = {"sequences": 0, "checks": 0}

    class Counted(test_lockstep.Lockstep):
        def __init__(self):
            super().__init__()
            counts["sequences"] += 1

        def check_invariants(self, *a, **k):
            counts["checks"] += 1  # once at the start of a sequence, then after each step
            return super().check_invariants(*a, **k)

    Counted.TestCase.settings = settings(
        max_examples=args.sequences,
        stateful_step_count=args.max_steps,
        deadline=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        derandomize=args.derandomize,
        suppress_health_check=list(HealthCheck),
    )
    start = time.perf_counter()
    try:
        Counted.TestCase("runTest").runTest()
        verdict = "CLEAN"
    except Exception:
        verdict = "FAIL"
        traceback.print_exc()
    steps = counts["checks"] - counts["sequences"]
    print(
        f"{verdict} {time.perf_counter() - start:.0f} s, "
        f"{counts['sequences']} sequences, {steps} steps"
    )
    return verdict != "CLEAN"


if __name__ == "__main__":
    sys.exit(main())
