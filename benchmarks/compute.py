"""Compute figures: elementwise `a + b`, dispatch overhead, sum(axis=0), matmul, and a
fused chain (`mdarray.fuse`) against the same chain unfused.

On the cuda backend: 16384x16384 float32 (matmul 8192x8192), all chunks on device 0,
against CuPy and the seed (``cupyx.distributed.array``) in the same run. On the cpu
backend: 2048x2048 (matmul 1024x1024; the fused chain 4096x4096) against NumPy.

Figures (names for --only): add, dispatch, sum, matmul, fuse; on the cpu backend also
threads (the virtual devices run at once, issue 25: its own table, against NumPy and JAX
with 4 CPU devices where JAX is installed; ``--json F`` writes it to ``F.threads.json``).
(QR is in `benchmarks.algorithms`.)

    MDARRAY_BACKEND=cuda python -m benchmarks.compute
    MDARRAY_BACKEND=cpu MDARRAY_CPU_DEVICES=4 python -m benchmarks.compute --only threads
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np

import mdarray
import mdarray._backends.backend

from ._harness import (
    Env,
    Report,
    finish,
    loop_time,
    median_time,
    ms,
    need,
    parse_args,
    ratio,
    run_figures,
    us,
    wanted,
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


# The cpu backend's device threads (issue 25) ---------------------------------------------

THREAD_COLUMNS = (
    "work",
    "NumPy",
    "JAX (4 CPU devices)",
    "mdarray inline",
    "mdarray threaded",
    "threaded vs NumPy",
    "threaded bandwidth",
)


def _jax():
    """JAX on 4 CPU devices with float64, or None where it is not installed. The flags
    must be set before JAX's first import: run the script in a fresh process."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    flag = "--xla_force_host_platform_device_count=4"
    if flag not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flag}".strip()
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return jax


def _jax_works(jax, hosts: dict, repeat: int) -> dict:
    """Seconds of each work of `bench_threads` in JAX: operands split by rows over its
    devices (as mdarray's), results as mdarray's (a + b split by rows, sum replicated)."""
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:4]), ("x",))
    rows, whole = NamedSharding(mesh, P("x", None)), NamedSharding(mesh, P())
    put = {k: jax.device_put(v, rows) for k, v in hosts.items()}
    jitted = {
        "add": (jax.jit(lambda a, b: a + b, out_shardings=rows), ("a", "b")),
        "fuse": (jax.jit(lambda a, b: jnp.sin(a) * 2 + b, out_shardings=rows), ("a", "b")),
        "sum": (jax.jit(lambda a: a.sum(axis=0), out_shardings=whole), ("a",)),
        "sort": (jax.jit(lambda a: jnp.sort(a, axis=0), out_shardings=rows), ("a",)),
        "matmul": (jax.jit(lambda a, b: a @ b, out_shardings=rows), ("m", "n")),
    }
    out = {}
    for name, (fn, operands) in jitted.items():
        args = [put[k] for k in operands]
        for _ in range(3):
            fn(*args).block_until_ready()
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            fn(*args).block_until_ready()
            times.append(time.perf_counter() - start)
        out[name] = statistics.median(times)
    return out


def bench_threads(env: Env, report: Report, repeat: int) -> None:
    """The cpu backend's device threads: 4096x4096 float64 split by rows over the devices
    (matmul 2048x2048), each work with its devices run one after another in the caller's
    thread ("inline": `parallel_bytes` out of reach) and at once on the devices' threads
    (the default threshold), against NumPy on one array and JAX's CPU devices where JAX
    is installed. Bandwidth: the bytes the work must read and write over its time."""
    if env.cuda:
        raise NotImplementedError("the device threads are the cpu backend's")
    backend = mdarray._backends.backend.backend()
    n, m = 4096, 2048
    rng = np.random.default_rng(25)
    hosts = {
        "a": rng.standard_normal((n, n)),
        "b": rng.standard_normal((n, n)),
        "m": rng.standard_normal((m, m)),
        "n": rng.standard_normal((m, m)),
    }
    x = {k: mdarray.asarray(v) for k, v in hosts.items()}
    a, b = x["a"], x["b"]
    chain_fused = mdarray.fuse(chain)
    big = 8 * n * n
    works = [
        ("add", "`a + b`", lambda: a + b, lambda: hosts["a"] + hosts["b"], 3 * big),
        ("fuse", "`sin(a) * 2 + b` (`mdarray.fuse`)", lambda: chain_fused(a, b),
         lambda: chain(hosts["a"], hosts["b"]), 3 * big),
        ("sum", "`sum(axis=0)` to all devices", lambda: a.sum(axis=0).change_mode("replica"),
         lambda: hosts["a"].sum(axis=0), big),
        ("sort", "`sort(axis=0)`", lambda: np.sort(a, axis=0),
         lambda: np.sort(hosts["a"], axis=0), 2 * big),
        ("matmul", f"matmul {m}x{m}", lambda: x["m"] @ x["n"],
         lambda: hosts["m"] @ hosts["n"], None),
    ]  # fmt: skip
    jax = _jax()
    jax_times = {} if jax is None else _jax_works(jax, hosts, repeat)
    threshold = backend.parallel_bytes
    devices = len(mdarray.devices())
    for name, work, ours, reference, nbytes in works:
        runs = max(3, repeat // 4) if name == "sort" else repeat
        expected = reference()
        with mdarray.options(fallback="raise"):
            got = ours()
            value = got.get() if isinstance(got, mdarray.DistArray) else np.asarray(got)
            if not np.allclose(value, expected, rtol=1e-9, atol=1e-9):
                raise AssertionError(f"{work} returned a wrong value")
            del got, value
            ref = median_time(env, reference, repeat=runs)
            backend.parallel_bytes = 1 << 62
            try:
                inline = median_time(env, ours, repeat=runs)
            finally:
                backend.parallel_bytes = threshold
            threaded = median_time(env, ours, repeat=runs)

        def rate(seconds, nbytes=nbytes):
            if seconds is None:
                return "—"
            if nbytes is None:  # matmul: floating-point rate
                return f"{ms(seconds)} ({2.0 * m**3 / seconds / 1e9:.0f} GFLOP/s)"
            return ms(seconds)

        speed = "—" if nbytes is None else f"{nbytes / threaded / 1e9:.1f} GB/s"
        side = m if nbytes is None else n
        report.row(
            f"{work}, {side}x{side} float64, {devices} devices",
            rate(ref),
            rate(jax_times.get(name)),
            rate(inline),
            rate(threaded),
            f"{ref / threaded:.2f}x faster" if threaded < ref else f"{threaded / ref:.2f}x slower",
            speed,
            numpy_s=ref,
            jax_s=jax_times.get(name),
            inline_s=inline,
            threaded_s=threaded,
            bytes=nbytes,
        )
    # Where threads start to pay: a + b by size, inline and threaded (for the threshold).
    for mib_ in (1, 4, 16, 64):
        rows = (mib_ << 20) // 8 // 1024
        h = rng.standard_normal((rows, 1024))
        y = mdarray.asarray(h)
        ref = median_time(env, lambda h=h: h + h, repeat=repeat * 5)
        backend.parallel_bytes = 1 << 62
        try:
            inline = median_time(env, lambda y=y: y + y, repeat=repeat * 5)
        finally:
            backend.parallel_bytes = 0
        try:
            threaded = median_time(env, lambda y=y: y + y, repeat=repeat * 5)
        finally:
            backend.parallel_bytes = threshold
        report.row(
            f"`a + b` of {mib_} MiB (threshold {threshold >> 20} MiB: the threaded column forced)",
            ms(ref),
            "—",
            ms(inline),
            ms(threaded),
            f"threaded / inline {threaded / inline:.2f}x",
            f"{3 * (mib_ << 20) / threaded / 1e9:.1f} GB/s",
            numpy_s=ref,
            inline_s=inline,
            threaded_s=threaded,
            bytes=3 * (mib_ << 20),
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
    if any(wanted(args, name) for name, _ in figures):
        run_figures(report, args, figures, env, env)
    if not env.cuda and wanted(args, "threads"):
        threads = Report(env, "CPU: the virtual devices at once (issue 25)", THREAD_COLUMNS)
        threads.attempt("threads", lambda r: bench_threads(env, r, args.repeat))
        json_path = args.json and str(Path(args.json).with_suffix(".threads.json"))
        finish(threads, argparse.Namespace(json=json_path))


if __name__ == "__main__":
    main()
