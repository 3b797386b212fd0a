"""Data movement figures: get() to the host, distributed_array from the host, reshard and
change_mode(SUM) of a large array.

On the cuda backend: a 16384x16384 float32 array (1 GiB), all chunks on device 0, against
CuPy and the seed (``cupyx.distributed.array``) in the same run. On the cpu backend: a
2048x2048 float32 array over the virtual devices against NumPy.

Figures (names for --only): get, from_host, reshard, change_mode.

    MDARRAY_BACKEND=cuda python -m benchmarks.movement
"""

from __future__ import annotations

import numpy as np

import mdarray

from ._harness import (
    Env,
    Report,
    median_time,
    mib,
    ms,
    once_time,
    parse_args,
    ratio,
    run_figures,
)

PARTS = 4


def blocks(n: int, axis: int, devices) -> dict:
    """Index map: `PARTS` blocks of an n x n array along `axis`, devices cycled."""
    cuts = np.linspace(0, n, PARTS + 1).astype(int)
    out: dict = {}
    for k in range(PARTS):
        part = slice(int(cuts[k]), int(cuts[k + 1]))
        index = (part, slice(None)) if axis == 0 else (slice(None), part)
        out.setdefault(devices[k % len(devices)], []).append(index)
    return out


class Case:
    """The arrays one run shares: the reference array, mdarray's and the seed's."""

    def __init__(self, env: Env) -> None:
        self.env = env
        self.n = 16384 if env.cuda else 2048
        # All on device 0 on a GPU (the figure's setting); spread over the virtual devices
        # on the CPU, where placement costs nothing.
        devices = [0] if env.cuda else list(mdarray.devices())
        self.rows = blocks(self.n, 0, devices)
        self.cols = blocks(self.n, 1, devices)
        if env.cuda:
            self.ref = env.xp.random.default_rng(0).standard_normal((self.n, self.n), np.float32)
        else:
            rng = np.random.default_rng(0)
            self.ref = rng.standard_normal((self.n, self.n), np.float32)
        self.x = mdarray.distributed_array(self.ref, self.rows)
        self.seed = env.seed.distributed_array(self.ref, self.rows) if env.seed else None
        env.sync()

    @property
    def label(self) -> str:
        return f"{self.n}x{self.n} float32 ({self.ref.nbytes / 2**20:.0f} MiB)"


def bench_get(case: Case, report: Report, repeat: int) -> None:
    """get() to the host: first call (cold pinned pool) and warm median, before anything
    else in this run gathers a large array."""
    env, x = case.env, case.x
    first = once_time(env, x.get)
    warm = median_time(env, x.get, repeat=max(repeat // 2, 5), warmup=2)
    got = x.get()
    if env.cuda:
        ref = median_time(env, case.ref.get, repeat=max(repeat // 4, 3), warmup=1)
        expected = case.ref.get()
    else:
        ref = median_time(env, case.ref.copy, repeat=repeat)
        expected = case.ref
    if not np.array_equal(got, expected):
        raise AssertionError("get() returned a wrong value")
    seed = None
    if case.seed is not None:
        seed = median_time(env, case.seed.get, repeat=max(repeat // 4, 3), warmup=1)
    work = f"get() to host, {case.label}, {PARTS} row chunks"
    report.add(
        work + ", first call",
        ms(ref),
        ms(seed),
        ms(first),
        ratio(first, ref),
        ratio(first, seed),
        reference_s=ref,
        seed_s=seed,
        mdarray_s=first,
    )
    report.add(
        work + ", warm median",
        ms(ref),
        ms(seed),
        ms(warm),
        ratio(warm, ref),
        ratio(warm, seed),
        reference_s=ref,
        seed_s=seed,
        mdarray_s=warm,
    )
    cols = case.x.reshard(case.cols)
    warm_cols = median_time(env, cols.get, repeat=max(repeat // 2, 5), warmup=2)
    if not np.array_equal(cols.get(), expected):
        raise AssertionError("get() of column blocks returned a wrong value")
    report.add(
        f"get() to host, {case.label}, {PARTS} column chunks, warm median",
        ms(ref),
        "—",
        ms(warm_cols),
        ratio(warm_cols, ref),
        mdarray_s=warm_cols,
        reference_s=ref,
    )


def bench_from_host(case: Case, report: Report, repeat: int) -> None:
    """distributed_array from a NumPy array on the host (pageable memory)."""
    env = case.env
    host = case.ref.get() if env.cuda else case.ref
    runs = max(repeat // 4, 3)
    first = once_time(env, lambda: mdarray.distributed_array(host, case.rows))
    ours = median_time(env, lambda: mdarray.distributed_array(host, case.rows), repeat=runs)
    x = mdarray.distributed_array(host, case.rows)
    if not np.array_equal(x.get(), host):
        raise AssertionError("distributed_array from the host holds a wrong value")
    del x
    ref = median_time(env, lambda: env.xp.array(host), repeat=runs, warmup=1)
    seed = None
    if env.seed is not None:
        seed = median_time(
            env, lambda: env.seed.distributed_array(host, case.rows), repeat=runs, warmup=1
        )
    report.add(
        f"distributed_array(NumPy array), {case.label}, {PARTS} row chunks",
        ms(ref) + (" (cupy.array)" if env.cuda else " (np.array)"),
        ms(seed),
        ms(ours) + f" (first call {ms(first)})",
        ratio(ours, ref),
        ratio(ours, seed),
        reference_s=ref,
        seed_s=seed,
        mdarray_s=ours,
        mdarray_first_s=first,
    )


def bench_reshard(case: Case, report: Report, repeat: int) -> None:
    env, xp = case.env, case.env.xp
    col_slices = [index[1] for indices in case.cols.values() for index in indices]

    def reference():
        return [xp.ascontiguousarray(case.ref[:, s]) for s in col_slices]

    ours = median_time(env, lambda: case.x.reshard(case.cols), repeat=repeat)
    y = case.x.reshard(case.cols)
    for chunk, s in zip([c for cs in y.all_chunks().values() for c in cs], col_slices):
        if not bool(xp.array_equal(chunk, case.ref[:, s])):
            raise AssertionError("reshard returned a wrong chunk")
    ref = median_time(env, reference, repeat=repeat)
    seed = None
    if case.seed is not None:

        def seed_reshard():
            out = case.seed.reshard(case.cols)
            out.all_chunks()  # the seed applies buffered transfers lazily: flush them
            return out

        seed = median_time(env, seed_reshard, repeat=repeat)
    with mdarray.count_transfers() as moved:
        case.x.reshard(case.cols)
    report.add(
        f"reshard {PARTS} row blocks -> {PARTS} column blocks, {case.label}",
        ms(ref) + " (column copies)",
        ms(seed),
        ms(ours) + f" ({mib(moved.total)} between devices)",
        ratio(ours, ref),
        ratio(ours, seed),
        reference_s=ref,
        seed_s=seed,
        mdarray_s=ours,
        moved_bytes=moved.total,
    )


def bench_change_mode(case: Case, report: Report, repeat: int) -> None:
    env = case.env

    def allocated(fn):
        before = env.pool_used()
        result = fn()
        used = env.pool_used() - before
        del result
        return used

    with mdarray.count_transfers() as moved:
        summed = case.x.change_mode("sum")
    if not np.array_equal(summed.get(), case.ref.get() if env.cuda else case.ref):
        raise AssertionError("change_mode(SUM) changed the value")
    del summed
    ours = median_time(env, lambda: case.x.change_mode("sum"), repeat=repeat)
    ours_bytes = allocated(lambda: case.x.change_mode("sum"))
    seed = seed_bytes = None
    if case.seed is not None:
        mode = case.env.seed.SUM
        seed = median_time(env, lambda: case.seed.change_mode(mode), repeat=repeat)
        seed_bytes = allocated(lambda: case.seed.change_mode(mode))
    report.add(
        f"change_mode(SUM) of a {PARTS}-chunk REPLICA array, no overlaps, {case.label}",
        "—",
        ms(seed) + (f", {mib(seed_bytes)} new" if seed is not None else ""),
        ms(ours) + f", {mib(ours_bytes if env.cuda else None)} new, {moved.total} B moved",
        "—",
        ratio(ours, seed),
        seed_s=seed,
        seed_new_bytes=seed_bytes,
        mdarray_s=ours,
        mdarray_new_bytes=ours_bytes,
        mdarray_moved_bytes=moved.total,
    )


def main() -> None:
    args = parse_args(__doc__)
    env = Env()
    report = Report(env, "Data movement: get, distributed_array, reshard, change_mode")
    case = Case(env)
    figures = [
        ("get", bench_get),
        ("from_host", bench_from_host),
        ("reshard", bench_reshard),
        ("change_mode", bench_change_mode),
    ]
    run_figures(report, args, figures, case)


if __name__ == "__main__":
    main()
