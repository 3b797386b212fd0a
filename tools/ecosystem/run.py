"""Run scikit-learn's, SciPy's and array-api-extra's own array API tests with mdarray
added beside array_api_strict (the plugins here add it to each suite's namespace
enumeration; nothing of the suites is edited), and print each side's counts.

    python tools/ecosystem/run.py [--suites sklearn scipy array-api-extra] [--jobs N]
        [--scipy-modules special stats ...] [--devices 4]

The suites and array_api_strict must be installed (``nox -s ecosystem`` installs them).
A test that passes on array_api_strict and fails on mdarray is mdarray's bug until shown
otherwise; the failures are listed per namespace. Runs on the cpu backend
(``MDARRAY_CPU_DEVICES`` virtual devices) unless ``MDARRAY_BACKEND`` says otherwise.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NAMESPACES = ("mdarray", "array_api_strict")

# Per suite: the plugin, the pytest target and the selection of array API tests.
SUITES = {
    "array-api-extra": (
        "mdarray_in_array_api_extra",
        ["--pyargs", "array_api_extra.tests.main"],
        "",
        ["-W", "error"],
    ),
    "sklearn": ("mdarray_in_sklearn", ["--pyargs", "sklearn"], "array_api and ", []),
    "scipy": ("mdarray_in_scipy", None, "", []),
}
COUNTS = re.compile(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?)")


def run(suite: str, namespace: str, args: argparse.Namespace) -> tuple[dict, list[str]]:
    plugin, target, selection, extra = SUITES[suite]
    if target is None:
        target = ["--pyargs", *(f"scipy.{m}" for m in args.scipy_modules)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), str(ROOT), env.get("PYTHONPATH")]))
    env.setdefault("MDARRAY_CPU_DEVICES", str(args.devices))
    env["SCIPY_ARRAY_API"] = "1"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        plugin,
        *target,
        "-q",
        "-rf",
        "-p",
        "no:cacheprovider",
        "-k",
        f"{selection}{namespace}",
        "-n",
        str(args.jobs),
        f"--timeout={args.timeout}",
        *extra,
    ]
    done = subprocess.run(
        command, check=False, env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True
    )
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]
    counts = {
        kind.rstrip("s") if kind.startswith("error") else kind: int(n)
        for n, kind in COUNTS.findall(tail)
    }
    failures = [line for line in done.stdout.splitlines() if line.startswith("FAILED")]
    return counts, failures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--suites", nargs="*", default=list(SUITES))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--timeout", type=int, default=300, help="seconds per test")
    parser.add_argument(
        "--scipy-modules",
        nargs="*",
        default=[
            "special",
            "stats",
            "signal",
            "linalg",
            "optimize",
            "integrate",
            "interpolate",
            "ndimage",
            "fft",
            "cluster",
            "spatial",
        ],
    )
    args = parser.parse_args()
    print("| suite | namespace | passed | failed | error | skipped |")
    print("|---|---|---|---|---|---|")
    listed = []
    for suite in args.suites:
        for namespace in NAMESPACES:
            counts, failures = run(suite, namespace, args)
            print(
                f"| {suite} | {namespace} | {counts.get('passed', 0)} | {counts.get('failed', 0)} "
                f"| {counts.get('error', 0)} | {counts.get('skipped', 0)} |",
                flush=True,
            )
            listed += [f"{suite} {namespace}: {line}" for line in failures]
    for line in listed:
        print(line)


if __name__ == "__main__":
    main()
