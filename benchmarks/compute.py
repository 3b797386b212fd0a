"""Compute figures: elementwise `a + b`, dispatch overhead, sum(axis=0), matmul, and a
fused chain (`mdarray.fuse`) against the same chain unfused.

On the cuda backend: 16384x16384 float32 (matmul 8192x8192), all chunks on device 0,
against CuPy and the seed (``cupyx.distributed.array``) in the same run. On the cpu
backend: 2048x2048 (matmul 1024x1024; the fused chain 4096x4096) against NumPy.

Figures (names for --only): add, dispatch, sum, matmul, fuse. (QR is in
`benchmarks.algorithms`.)

    MDARRAY_BACKEND=cuda python -m benchmarks.compute
"""

from __future__ import annotations

import numpy as np

import mdarray

from ._harness import (
    Env,
    Report,
    loop_time,
    median_time,
    ms,
    need,
    parse_args,
    ratio,
    run_figures,
    us,
)


def row_blocks(n_rows: int, n_cols: int, parts: int) -> dict:
    """Index map: `parts` row blocks, all on device 0."""
    cuts = np.linspace(0, n_rows, parts + 1).astype(int)
    return {0: [(slice(int(cuts[k]), int(cuts[k + 1])), slice(0, n_cols)) for k in range(parts)]}


def random(env: Env, shape, seed: int):
    if env.cuda:
        return env.xp.random.default_rng(seed).standard_normal(shape, np.float32)
    return np.random.default_rng(seed).standard_normal(shape, np.float32)


def bench_add(env: Env, report: Report, repeat: int) -> None:
    n = 16384 if env.cuda else 2048
    a, b = random(env, (n, n), 1), random(env, (n, n), 2)
    ref = median_time(env, lambda: a + b, repeat=repeat)
    targets = {4: 1.05, 64: 1.15}
    for parts, target in targets.items():
        index_map = row_blocks(n, n, parts)
        x = mdarray.distributed_array(a, index_map)
        y = mdarray.distributed_array(b, index_map)
        with mdarray.options(fallback="raise"):
            z = x + y
            ours = median_time(env, lambda x=x, y=y: x + y, repeat=repeat)
        if not np.array_equal(z.get(), (a + b).get() if env.cuda else a + b):
            raise AssertionError("a + b returned a wrong value")
        del z
        seed = None
        if env.seed is not None:
            sx = env.seed.distributed_array(a, index_map)
            sy = env.seed.distributed_array(b, index_map)
            seed = median_time(env, lambda sx=sx, sy=sy: sx + sy, repeat=repeat)
            del sx, sy
        report.add(
            f"`a + b`, {n}x{n} float32, {parts} chunks (target <= {target}x)",
            ms(ref),
            ms(seed),
            ms(ours),
            ratio(ours, ref),
            ratio(ours, seed),
            reference_s=ref,
            seed_s=seed,
            mdarray_s=ours,
            chunks=parts,
        )


def bench_dispatch(env: Env, report: Report, repeat: int) -> None:
    """Time per chunk per op of `x + y` on a tiny array (the cost of dispatch)."""
    shape = (256, 4)
    a, b = random(env, shape, 3), random(env, shape, 4)
    ref = loop_time(env, lambda: a + b, count=2000)
    for parts in (4, 64):
        index_map = row_blocks(shape[0], shape[1], parts)
        x = mdarray.distributed_array(a, index_map)
        y = mdarray.distributed_array(b, index_map)
        with mdarray.options(fallback="raise"):
            ours = loop_time(env, lambda x=x, y=y: x + y, count=max(20000 // parts, 100)) / parts
        seed = None
        if env.seed is not None:
            sx = env.seed.distributed_array(a, index_map)
            sy = env.seed.distributed_array(b, index_map)
            seed = loop_time(env, lambda sx=sx, sy=sy: sx + sy, count=max(20000 // parts, 100))
            seed /= parts
        report.add(
            f"dispatch: `a + b` on {shape} float32, {parts} chunks, per chunk per op (target <= 8 us)",
            us(ref) + " per op",
            us(seed),
            us(ours),
            ratio(ours, ref),
            ratio(ours, seed),
            reference_s=ref,
            seed_s=seed,
            mdarray_s=ours,
            chunks=parts,
        )


def bench_sum(env: Env, report: Report, repeat: int) -> None:
    n = 16384 if env.cuda else 2048
    a = random(env, (n, n), 5)
    index_map = row_blocks(n, n, 4)
    x = mdarray.distributed_array(a, index_map)
    ref = median_time(env, lambda: a.sum(axis=0), repeat=repeat)
    with mdarray.options(fallback="raise"):
        partial = x.sum(axis=0)
        ours = median_time(env, lambda: x.sum(axis=0), repeat=repeat)
        combined = median_time(env, lambda: x.sum(axis=0).change_mode("replica"), repeat=repeat)
        # The combine alone: four partial copies of one row, one kernel (cuda backend).
        combine_only = median_time(env, lambda: partial.change_mode("replica"), repeat=repeat)
    expected = a.sum(axis=0)
    expected = expected.get() if env.cuda else expected
    if not np.allclose(partial.get(), expected, rtol=1e-4, atol=1e-2):
        raise AssertionError("sum(axis=0) returned a wrong value")
    seed = None
    if env.seed is not None:
        sx = env.seed.distributed_array(a, index_map)
        seed = median_time(env, lambda: sx.sum(axis=0), repeat=repeat)
    report.add(
        f"`sum(axis=0)`, {n}x{n} float32, 4 row chunks, partial result (target <= 1.3x)",
        ms(ref),
        ms(seed),
        ms(ours) + f" (mode {partial.mode})",
        ratio(ours, ref),
        ratio(ours, seed),
        reference_s=ref,
        seed_s=seed,
        mdarray_s=ours,
    )
    report.add(
        f"`sum(axis=0)` then `change_mode('replica')`, {n}x{n} float32, 4 row chunks",
        ms(ref),
        "—",
        ms(combined),
        ratio(combined, ref),
        reference_s=ref,
        mdarray_s=combined,
    )
    report.add(
        f"`change_mode('replica')` of that partial alone: 4 copies of {n} float32",
        "—",
        "—",
        ms(combine_only),
        "—",
        mdarray_s=combine_only,
    )


def bench_matmul(env: Env, report: Report, repeat: int) -> None:
    matmul = need("matmul")
    make_2d_index_map = need("make_2d_index_map")
    n = 8192 if env.cuda else 1024
    h = n // 2
    a, b = random(env, (n, n), 6), random(env, (n, n), 7)
    flops = 2.0 * n**3
    ref = median_time(env, lambda: a @ b, repeat=repeat)
    index_map = make_2d_index_map([0, h, n], [0, h, n], [[{0}, {0}], [{0}, {0}]])
    x = mdarray.distributed_array(a, index_map)
    y = mdarray.distributed_array(b, index_map)
    with mdarray.options(fallback="raise"):
        z = matmul(x, y)
        ours = median_time(env, lambda: matmul(x, y), repeat=repeat)
    expected = a @ b
    expected = expected.get() if env.cuda else expected
    got = z.get()
    error = np.linalg.norm(got - expected) / np.linalg.norm(expected)
    if not error < 1e-4:
        raise AssertionError(f"matmul relative error {error:.2e}")
    seed = None
    if env.seed is not None:
        sx = env.seed.distributed_array(a, index_map)
        sy = env.seed.distributed_array(b, index_map)
        seed = median_time(env, lambda: env.seed.matmul(sx, sy), repeat=repeat)

    def rate(seconds):
        if seconds is None:
            return "—"
        return f"{ms(seconds)} ({flops / seconds / 1e9:.0f} GFLOP/s)"

    report.add(
        f"matmul {n}x{n} float32, 2x2 blocks, result mode {z.mode} (target >= 0.95x throughput)",
        rate(ref),
        rate(seed),
        rate(ours),
        f"{ref / ours:.2f}x throughput",
        "—" if seed is None else f"{seed / ours:.2f}x throughput",
        reference_s=ref,
        seed_s=seed,
        mdarray_s=ours,
        relative_error=float(error),
    )


def chain(x, y):
    return np.sin(x) * 2 + y


def bench_fuse(env: Env, report: Report, repeat: int) -> None:
    """``sin(x) * 2 + y`` fused (one call per chunk) against the three ops unfused."""
    fuse = need("fuse")
    n = 16384 if env.cuda else 4096
    a, b = random(env, (n, n), 7), random(env, (n, n), 8)
    ref = median_time(env, lambda: chain(a, b), repeat=repeat)
    index_map = row_blocks(n, n, 4)
    x = mdarray.distributed_array(a, index_map)
    y = mdarray.distributed_array(b, index_map)
    fused = fuse(chain)
    with mdarray.options(fallback="raise"):
        if not np.array_equal(fused(x, y).get(), chain(x, y).get()):
            raise AssertionError("fuse(chain) differs from the unfused chain")
        unfused = median_time(env, lambda: chain(x, y), repeat=repeat)
        ours = median_time(env, lambda: fused(x, y), repeat=repeat)
    for work, seconds in [("unfused", unfused), ("fused", ours)]:
        report.add(
            f"`sin(x) * 2 + y` {work}, {n}x{n} float32, 4 row chunks",
            ms(ref),
            "—",
            ms(seconds),
            ratio(seconds, ref),
            reference_s=ref,
            mdarray_s=seconds,
        )


def main() -> None:
    args = parse_args(__doc__)
    env = Env()
    report = Report(env, "Compute: ufuncs, dispatch, reductions, matmul")
    figures = [
        ("add", bench_add),
        ("dispatch", bench_dispatch),
        ("sum", bench_sum),
        ("matmul", bench_matmul),
        ("fuse", bench_fuse),
    ]
    run_figures(report, args, figures, env, env)


if __name__ == "__main__":
    main()
