"""Shared timing and reporting for the benchmark scripts.

GPU work is timed end to end: the device is synchronized before the clock starts and
again before it stops, after warm-up runs, and the median of many runs is reported. That
counts the host's dispatch time too, the same way for CuPy, the seed and mdarray.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np

import mdarray


class Env:
    """What the run measures on: the backend, its array module, and the seed if any."""

    def __init__(self) -> None:
        self.backend = mdarray.default_backend()
        self.cuda = self.backend == "cuda"
        if self.cuda:
            import cupy

            self.xp = cupy
            self.ref_name = "CuPy"
            try:
                import cupyx.distributed.array as seed
            except ImportError:
                seed = None
            self.seed = seed
            props = cupy.cuda.runtime.getDeviceProperties(0)
            self.device = props["name"].decode()
            self.versions = f"CuPy {cupy.__version__}, NumPy {np.__version__}"
        else:
            self.xp = np
            self.ref_name = "NumPy"
            self.seed = None
            self.device = f"{len(mdarray.devices())} virtual CPU devices"
            self.versions = f"NumPy {np.__version__}"

    def sync(self) -> None:
        mdarray.synchronize()  # mdarray's queued work, its staged host copies included
        if self.cuda:  # the reference library's work, on CuPy's own streams
            self.xp.cuda.runtime.deviceSynchronize()

    def asref(self, host: np.ndarray):
        """`host` as an array of the reference library (CuPy or NumPy)."""
        return self.xp.asarray(host)

    def pool_used(self) -> int:
        """Device bytes in use by CuPy's pool (0 on the cpu backend)."""
        if not self.cuda:
            return 0
        self.sync()
        return self.xp.get_default_memory_pool().used_bytes()


def median_time(env: Env, fn, *, repeat: int = 20, warmup: int = 3) -> float:
    """Median seconds of `fn()` over `repeat` runs, each fenced by device syncs."""
    for _ in range(warmup):
        fn()
    env.sync()
    times = []
    for _ in range(repeat):
        env.sync()
        start = time.perf_counter()
        fn()
        env.sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def once_time(env: Env, fn) -> float:
    """Seconds of a single, cold `fn()`."""
    env.sync()
    start = time.perf_counter()
    fn()
    env.sync()
    return time.perf_counter() - start


def loop_time(env: Env, fn, *, count: int, warmup: int = 50) -> float:
    """Seconds per call of `fn()` issued `count` times in a row (dispatch throughput)."""
    for _ in range(warmup):
        fn()
    env.sync()
    start = time.perf_counter()
    for _ in range(count):
        fn()
    env.sync()
    return (time.perf_counter() - start) / count


def ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1e3:.3f} ms"


def us(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1e6:.2f} us"


def mib(nbytes: int | None) -> str:
    return "—" if nbytes is None else f"{nbytes / 2**20:.0f} MiB"


def ratio(ours: float | None, theirs: float | None) -> str:
    if ours is None or theirs is None or theirs == 0:
        return "—"
    return f"{ours / theirs:.2f}x"


class Report:
    """Rows of one benchmark table; a failing row records its error and the run goes on."""

    columns = ("work", "reference", "seed", "mdarray", "mdarray / reference", "mdarray / seed")

    def __init__(self, env: Env, title: str, columns: tuple | None = None) -> None:
        self.env = env
        self.title = title
        if columns is not None:
            self.columns = columns
        self.rows: list[tuple] = []
        self.records: list[dict] = []

    def add(self, work: str, reference="—", seed="—", ours="—", vs_ref="—", vs_seed="—", **raw):
        self.rows.append((work, reference, seed, ours, vs_ref, vs_seed))
        self.records.append({"work": work, **raw})
        print(f"  {work}: {reference} | {seed} | {ours} | {vs_ref} | {vs_seed}", file=sys.stderr)

    def row(self, *cells, **raw) -> None:
        """A row of this table's own `columns` (a table whose columns are not the
        reference / seed / mdarray ones)."""
        cells = tuple(map(str, cells)) + ("—",) * (len(self.columns) - len(cells))
        self.rows.append(cells)
        self.records.append({"work": cells[0], **raw})
        print("  " + " | ".join(cells), file=sys.stderr)

    def attempt(self, work: str, fn) -> None:
        """Run `fn(report)`; on an error, record a row saying what failed."""
        try:
            fn(self)
        except Exception as error:  # a missing op must not stop the other figures
            traceback.print_exc()
            reason = f"{type(error).__name__}: {error}".replace("|", "/").splitlines()[0][:120]
            self.add(work, ours=f"failed ({reason})")

    def markdown(self) -> str:
        env = self.env
        head = [
            f"### {self.title}",
            "",
            f"{dt.date.today().isoformat()}, {env.device}, backend `{env.backend}`, "
            f"{env.versions}. Reference: {env.ref_name}"
            + ("; seed: `cupyx.distributed.array`, all chunks on device 0." if env.cuda else "."),
            "",
            "| " + " | ".join(self.columns) + " |",
            "|" + "---|" * len(self.columns),
        ]
        return "\n".join(head + ["| " + " | ".join(map(str, r)) + " |" for r in self.rows])


def parse_args(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=20, help="timed runs per figure")
    parser.add_argument("--json", help="also write the raw figures to this file")
    parser.add_argument("--only", nargs="*", help="run only the figures with these names")
    return parser.parse_args()


def finish(report: Report, args: argparse.Namespace) -> None:
    print(report.markdown())
    if args.json:
        with Path(args.json).open("w") as f:
            json.dump(
                {"title": report.title, "device": report.env.device, "rows": report.records},
                f,
                indent=1,
            )


def wanted(args: argparse.Namespace, name: str) -> bool:
    return not args.only or name in args.only


def run_figures(report: Report, args: argparse.Namespace, figures, subject, env=None) -> None:
    """Each ``(name, bench)`` of `figures` that ``--only`` asks for, as
    ``bench(subject, report, args.repeat)`` (a failing figure prints its error in its row),
    CuPy's pool emptied after each where `env` is on cuda; then the table."""
    for name, bench in figures:
        if wanted(args, name):
            report.attempt(name, lambda r, bench=bench: bench(subject, r, args.repeat))
            if env is not None and env.cuda:
                env.xp.get_default_memory_pool().free_all_blocks()
    finish(report, args)


def need(name: str):
    """``mdarray.<name>``, or an error saying it is not written yet."""
    value = getattr(mdarray, name, None)
    if value is None:
        raise NotImplementedError(f"mdarray.{name} does not exist yet")
    return value
