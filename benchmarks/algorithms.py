"""Distributed algorithm figures (issue 10): sort, median and percentile, boolean-mask
getitem, where, nansum(axis=0), matmul and einsum with a replicated result, and QR of a
tall matrix, each against the same work on one array.

On the cuda backend: 2^28 float32 for sort, median and percentile, 16384x16384 float32
for the mask, where and nansum, matmul and einsum 8192x8192 float32, QR of 2^22 x 64
float32; all chunks on device 0, against CuPy in the same run. On the cpu backend: 2^22,
2048x2048, 1024x1024 and 2^16 x 64 against NumPy. Four chunks everywhere: row blocks, and
2x2 blocks (`make_2d_index_map`) for matmul and einsum. The data come from NumPy's
generator with a fixed seed on both backends.

mdarray runs under ``mdarray.options(fallback="raise")``: an operation that would gather
to the host shows its error in its row (next to the reference's time) instead of a time.
The reference's and mdarray's runs alternate (after warm-up, medians of --repeat runs
each), so that both see the same machine; where a warm call takes over a quarter second,
5 runs each.

Figures (names for --only): sort, median, percentile, mask, where, nansum, matmul, einsum,
qr.

    MDARRAY_BACKEND=cuda python -m benchmarks.algorithms
"""

from __future__ import annotations

import statistics
import sys
import traceback

import numpy as np

import mdarray

from ._harness import (
    Env,
    Report,
    median_time,
    ms,
    need,
    once_time,
    parse_args,
    ratio,
    run_figures,
)

PARTS = 4
SLOW_S = 0.25
# Lengths: the 1-D arrays, the square arrays, the matmul operands, the tall matrix's rows.
SIZES = {
    "cuda": {"vector": 2**28, "square": 16384, "product": 8192, "tall": 2**22},
    "cpu": {"vector": 2**22, "square": 2048, "product": 1024, "tall": 2**16},
}


def row_blocks(shape: tuple[int, ...], parts: int = PARTS) -> dict:
    """Index map: `parts` blocks along the first axis, whole along the others, on device 0."""
    cuts = np.linspace(0, shape[0], parts + 1).astype(int)
    rest = tuple(slice(0, n) for n in shape[1:])
    return {0: [(slice(int(cuts[k]), int(cuts[k + 1])), *rest) for k in range(parts)]}


def square_blocks(n: int):
    """Index map: 2x2 blocks of an n x n array, all on device 0."""
    h = n // 2
    return need("make_2d_index_map")([0, h, n], [0, h, n], [[{0}, {0}], [{0}, {0}]])


def host_random(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape, np.float32)


def to_host(env: Env, value) -> np.ndarray:
    """A reference result or a DistArray as a NumPy array."""
    if isinstance(value, mdarray.DistArray):
        return value.get()
    if env.cuda:
        return env.xp.asnumpy(value)
    return np.asarray(value)


def _reason(error: Exception) -> str:
    return f"{type(error).__name__}: {error}".replace("|", "/").splitlines()[0][:120]


def plan(repeat: int, *first: float) -> tuple[int, int]:
    """Timed and warm-up runs for calls whose warm times were `first`: fewer where one is
    slow (it has run twice already)."""
    if max(first) <= SLOW_S:
        return repeat, 3
    return min(repeat, 5), 0


def interleaved(env: Env, fns, repeat: int, warmup: int) -> list[float]:
    """Median seconds of each of `fns`, their runs alternating so that all of them see the
    same machine (a shared host's load, a GPU's clocks); each run fenced by device syncs."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, seconds in zip(fns, times, strict=True):
            seconds.append(once_time(env, fn))
    return [statistics.median(seconds) for seconds in times]


def measure(env: Env, report: Report, work: str, ref, ours, check, repeat: int, fmt=ms):
    """One row: the reference's time and mdarray's, their runs interleaved, mdarray's first
    result checked by `check(result)` (which may return a note for the cell). An mdarray
    error or a wrong result goes into the row, with the reference's time still shown."""
    ref()
    ref_first = once_time(env, ref)
    ref_s = ours_s = error_text = None
    try:
        with mdarray.options(fallback="raise"):
            result = ours()
        note = check(result) or ""
        del result
        with mdarray.options(fallback="raise"):
            ours_first = once_time(env, ours)
            count, warmup = plan(repeat, ref_first, ours_first)
            ref_s, ours_s = interleaved(env, [ref, ours], count, warmup)
        cell = fmt(ours_s) + note
    except Exception as error:  # a missing or gathering op must not stop the other figures
        traceback.print_exc(file=sys.stderr)
        error_text = _reason(error)
        cell = f"failed ({error_text})"
    if ref_s is None:
        count, warmup = plan(repeat, ref_first)
        ref_s = median_time(env, ref, repeat=count, warmup=warmup)
    report.add(
        work,
        fmt(ref_s),
        "—",
        cell,
        ratio(ours_s, ref_s),
        reference_s=ref_s,
        mdarray_s=ours_s,
        error=error_text,
    )


def close(got, expected, *, rtol: float, atol: float, what: str) -> None:
    if got.shape != expected.shape:
        raise AssertionError(f"{what}: shape {got.shape}, expected {expected.shape}")
    if not np.allclose(got, expected, rtol=rtol, atol=atol):
        error = float(np.max(np.abs(got.astype(np.float64) - expected)))
        raise AssertionError(f"{what} returned a wrong value (max abs error {error:.3g})")


def equal(got, expected, *, what: str) -> None:
    if got.shape != expected.shape or not np.array_equal(got, expected):
        raise AssertionError(f"{what} returned a wrong value")


def bench_sort(env: Env, report: Report, repeat: int) -> None:
    n = SIZES[env.backend]["vector"]
    host = host_random(n, 11)
    a = env.asref(host)
    x = mdarray.distributed_array(a, row_blocks(a.shape))
    expected = to_host(env, env.xp.sort(a))
    del host
    measure(
        env,
        report,
        f"`sort`, 2^{n.bit_length() - 1} float32, 4 chunks (target <= 1.5x)",
        lambda: env.xp.sort(a),
        lambda: mdarray.sort(x),
        lambda got: equal(to_host(env, got), expected, what="sort"),
        repeat,
    )


def bench_median(env: Env, report: Report, repeat: int) -> None:
    n = SIZES[env.backend]["vector"]
    a = env.asref(host_random(n, 12))
    x = mdarray.distributed_array(a, row_blocks(a.shape))
    expected = to_host(env, env.xp.median(a))
    median = need("median")
    measure(
        env,
        report,
        f"`median`, 2^{n.bit_length() - 1} float32, 4 chunks (target <= 1.5x)",
        lambda: env.xp.median(a),
        lambda: median(x),
        lambda got: close(to_host(env, got), expected, rtol=1e-5, atol=1e-6, what="median"),
        repeat,
    )


def bench_percentile(env: Env, report: Report, repeat: int) -> None:
    n = SIZES[env.backend]["vector"]
    a = env.asref(host_random(n, 13))
    x = mdarray.distributed_array(a, row_blocks(a.shape))
    expected = to_host(env, env.xp.percentile(a, 90))
    percentile = need("percentile")
    measure(
        env,
        report,
        f"`percentile(x, 90)`, 2^{n.bit_length() - 1} float32, 4 chunks (target <= 1.5x)",
        lambda: env.xp.percentile(a, 90),
        lambda: percentile(x, 90),
        lambda got: close(to_host(env, got), expected, rtol=1e-5, atol=1e-6, what="percentile"),
        repeat,
    )


def bench_mask(env: Env, report: Report, repeat: int) -> None:
    n = SIZES[env.backend]["square"]
    a = env.asref(host_random((n, n), 14))
    x = mdarray.distributed_array(a, row_blocks(a.shape))
    expected = to_host(env, a[a > 0])
    measure(
        env,
        report,
        f"`x[x > 0]`, {n}x{n} float32, 4 row chunks, {expected.size / a.size:.0%} kept"
        " (target <= 1.3x)",
        lambda: a[a > 0],
        lambda: x[x > 0],
        lambda got: equal(to_host(env, got), expected, what="x[x > 0]"),
        repeat,
    )


def bench_where(env: Env, report: Report, repeat: int) -> None:
    n = SIZES[env.backend]["square"]
    a = env.asref(host_random((n, n), 15))
    x = mdarray.distributed_array(a, row_blocks(a.shape))
    expected = to_host(env, env.xp.where(a > 0, a, 0))
    where = need("where")
    measure(
        env,
        report,
        f"`where(x > 0, x, 0)`, {n}x{n} float32, 4 row chunks (target <= 1.05x)",
        lambda: env.xp.where(a > 0, a, 0),
        lambda: where(x > 0, x, 0),
        lambda got: equal(to_host(env, got), expected, what="where(x > 0, x, 0)"),
        repeat,
    )


def bench_nansum(env: Env, report: Report, repeat: int) -> None:
    n = SIZES[env.backend]["square"]
    host = host_random((n, n), 16)
    host.reshape(-1)[::101] = np.nan  # about 1% NaN, in every column
    a = env.asref(host)
    del host
    x = mdarray.distributed_array(a, row_blocks(a.shape))
    expected = to_host(env, env.xp.nansum(a, axis=0))
    nansum = need("nansum")

    def check(got):
        close(to_host(env, got), expected, rtol=1e-3, atol=1e-2, what="nansum(axis=0)")
        return f" (mode {got.mode})"

    measure(
        env,
        report,
        f"`nansum(axis=0)`, {n}x{n} float32 with NaNs, 4 row chunks, partial result"
        " (target <= 1.3x)",
        lambda: env.xp.nansum(a, axis=0),
        lambda: nansum(x, axis=0),
        check,
        repeat,
    )


def bench_products(env: Env, report: Report, repeat: int, name: str) -> None:
    """matmul, or einsum ``ij,jk->ik``, of 2x2-block operands, the result made REPLICA,
    against the reference's matmul."""
    n = SIZES[env.backend]["product"]
    a, b = env.asref(host_random((n, n), 17)), env.asref(host_random((n, n), 18))
    x = mdarray.distributed_array(a, square_blocks(n))
    y = mdarray.distributed_array(b, square_blocks(n))
    expected = to_host(env, a @ b)
    scale = float(np.abs(expected).max())
    flops = 2.0 * n**3
    if name == "matmul":
        matmul = need("matmul")
        label = "matmul"

        def ours():
            return matmul(x, y).change_mode("replica")

    else:
        einsum = need("einsum")
        label = '`einsum("ij,jk->ik")`'

        def ours():
            return einsum("ij,jk->ik", x, y).change_mode("replica")

    def check(got):
        if got.mode != mdarray.REPLICA:
            raise AssertionError(f"{name} result mode {got.mode}, expected replica")
        close(to_host(env, got), expected, rtol=1e-3, atol=1e-4 * scale, what=name)

    def rate(seconds):
        if seconds is None:
            return "—"
        return f"{ms(seconds)} ({flops / seconds / 1e9:.0f} GFLOP/s)"

    measure(
        env,
        report,
        f"{label} {n}x{n} float32, 2x2 blocks, then REPLICA; reference: {env.ref_name}'s"
        " matmul (target <= 1.05x)",
        lambda: a @ b,
        ours,
        check,
        repeat,
        fmt=rate,
    )


def bench_qr(env: Env, report: Report, repeat: int) -> None:
    rows = SIZES[env.backend]["tall"]
    a = env.asref(host_random((rows, 64), 19))
    x = mdarray.distributed_array(a, row_blocks(a.shape))
    _, r_ref = env.xp.linalg.qr(a, mode="reduced")
    abs_r = np.abs(to_host(env, r_ref))
    scale = float(abs_r.max())
    del r_ref

    def check(got):
        q, r = got
        if q.shape != (rows, 64) or r.shape != (64, 64):
            raise AssertionError(f"qr shapes {q.shape}, {r.shape}")
        # The product on the reference library: the reduced Q is as large as x.
        product = to_host(env, env.asref(q.get()) @ env.asref(r.get()))
        close(product, to_host(env, a), rtol=1e-3, atol=1e-4, what="Q @ R")
        # Signs of R's rows are a convention (they differ between LAPACK, cuSOLVER and
        # TSQR); their absolute values are not.
        close(np.abs(r.get()), abs_r, rtol=1e-3, atol=1e-4 * scale, what="abs(R)")

    measure(
        env,
        report,
        f"`linalg.qr(mode='reduced')`, 2^{rows.bit_length() - 1} x 64 float32, 4 row chunks"
        " (target <= 1.5x)",
        lambda: env.xp.linalg.qr(a, mode="reduced"),
        lambda: mdarray.linalg.qr(x, mode="reduced"),
        check,
        repeat,
    )


def main() -> None:
    args = parse_args(__doc__)
    env = Env()
    report = Report(env, "Distributed algorithms: sort, median, mask, where, nansum, products, QR")
    figures = [
        ("sort", bench_sort),
        ("median", bench_median),
        ("percentile", bench_percentile),
        ("mask", bench_mask),
        ("where", bench_where),
        ("nansum", bench_nansum),
        ("matmul", lambda e, r, n: bench_products(e, r, n, "matmul")),
        ("einsum", lambda e, r, n: bench_products(e, r, n, "einsum")),
        ("qr", bench_qr),
    ]
    run_figures(report, args, figures, env, env)


if __name__ == "__main__":
    main()
