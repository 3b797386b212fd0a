"""Whole algorithms and the host cost of one call (issue 20).

Each algorithm is written once against an array API namespace `xp` and run on the reference
(CuPy on the cuda backend, NumPy on cpu) and on mdarray with the same data; the figure is the
time per iteration, and every mdarray result is checked against the reference's. The data
are row blocks: 4 chunks, spread over the backend's devices (all on device 0 with one GPU).

Algorithms (names for --only), at a moderate size (16 MiB per array) and a large one
(256 MiB: ``cg-large`` ...; by default on cuda only):

- ``cg``: conjugate gradients on the 2-D Poisson problem, the 5-point stencil by slicing
  (``y[1:, :] -= p[:-1, :]`` ...), dot products by ``sum``;
- ``kmeans``: k-means with k=8 on points of 16 coordinates: distances by matmul, ``argmin``,
  one-hot means by matmul;
- ``jacobi``: Jacobi sweeps on the same Poisson problem (shifted slices into a new array);
- ``power``: power iteration, ``A @ v`` normalized by its norm;
- ``logreg``: logistic regression by gradient descent;
- ``standardize``: ``(x - mean) / std`` over axis 0, then a softmax over axis 1.

``percall`` is the host cost of one call of each op family on a tiny array (64x64 float32 in
4 row chunks) against the reference's call on one array: loops of calls, one device
synchronization at the end of each, the two sides taking turns; each side's median.

    MDARRAY_BACKEND=cuda python -m benchmarks.workloads
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import mdarray

from ._harness import Env, Report, loop_time, parse_args, ratio, run_figures, us

PARTS = 4
K = 8
#: Rows of the moderate and large problems: square grids (CG, Jacobi, power iteration) and
#: tall matrices of 16 (k-means) or 64 (logistic regression, standardization) columns.
SIZES = {
    "moderate": {"grid": 2048, "points": 100_000, "tall": 65_536},
    "large": {"grid": 8192, "points": 4_000_000, "tall": 1_048_576},
}
ITERS = {"cg": 20, "kmeans": 10, "jacobi": 20, "power": 20, "logreg": 20, "standardize": 5}


# The algorithms, written once against an array API namespace ------------------------------


def beside(xp, x) -> dict:
    """``device=x.device`` for a creation function, where the namespace takes it (CuPy's
    functions have no ``device=``: they make arrays on the current device)."""
    return {} if xp.__name__ == "cupy" else {"device": x.device}


def laplacian(xp, u):
    """The 5-point Laplacian with zero boundary values, by shifted slices."""
    y = 4 * u
    y[1:, :] -= u[:-1, :]
    y[:-1, :] -= u[1:, :]
    y[:, 1:] -= u[:, :-1]
    y[:, :-1] -= u[:, 1:]
    return y


def python_loop(body, state, times: int):
    """``for _ in range(times): state = body(*state)``: the loop as written (`mdarray.
    iterate` is the same loop, recorded once on CUDA)."""
    for _ in range(times):
        state = body(*state) if isinstance(state, tuple) else body(state)
    return state


def cg(xp, b, iters: int, loop=python_loop):
    def step(x, r, p, rs):
        ap = laplacian(xp, p)
        alpha = rs / xp.sum(p * ap)
        x = x + alpha * p
        r = r - alpha * ap
        rs_new = xp.sum(r * r)
        p = r + (rs_new / rs) * p
        return x, r, p, rs_new

    return loop(step, (xp.zeros_like(b), b, b, xp.sum(b * b)), iters)[0]


def kmeans(xp, points, iters: int, loop=python_loop):
    ks = xp.arange(K, **beside(xp, points))
    sq = xp.sum(points * points, axis=1)

    def step(centers):
        d = sq[:, None] - 2 * (points @ centers.T) + xp.sum(centers * centers, axis=1)[None, :]
        labels = xp.argmin(d, axis=1)
        onehot = xp.astype(labels[:, None] == ks[None, :], points.dtype)
        counts = xp.sum(onehot, axis=0)
        return (onehot.T @ points) / xp.maximum(counts, 1)[:, None]

    return loop(step, points[:K, :], iters)


def jacobi(xp, f, iters: int, loop=python_loop):
    def step(u):
        new = xp.zeros_like(u)
        new[1:-1, 1:-1] = 0.25 * (
            u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] + f[1:-1, 1:-1]
        )
        return new

    return loop(step, xp.zeros_like(f), iters)


def power(xp, a, iters: int, loop=python_loop):
    def step(v):
        w = a @ v
        return w / xp.sqrt(xp.sum(w * w))

    return loop(step, xp.ones(a.shape[1], dtype=a.dtype, **beside(xp, a)), iters)


def logreg(xp, data, iters: int, loop=python_loop):
    x, y = data
    rate = 0.1 / x.shape[0]

    def step(w):
        p = 1 / (1 + xp.exp(-(x @ w)))
        return w - rate * (x.T @ (p - y))

    return loop(step, xp.zeros(x.shape[1], dtype=x.dtype, **beside(xp, x)), iters)


def standardize(xp, x, iters: int, loop=python_loop):
    def step(_):
        z = (x - xp.mean(x, axis=0)) / xp.std(x, axis=0)
        e = xp.exp(z - xp.max(z, axis=1, keepdims=True))
        return e / xp.sum(e, axis=1, keepdims=True)

    return loop(step, x, iters)


# Data --------------------------------------------------------------------------------------


def row_map(shape: tuple[int, ...], devices: tuple[int, ...]) -> dict:
    """`PARTS` row blocks of `shape`, dealt over `devices` in turn."""
    cuts = np.linspace(0, shape[0], PARTS + 1).astype(int)
    rest = tuple(slice(0, n) for n in shape[1:])
    out: dict = {}
    for k in range(PARTS):
        out.setdefault(devices[k % len(devices)], []).append(
            (slice(int(cuts[k]), int(cuts[k + 1])), *rest)
        )
    return out


def host_data(name: str, size: str):
    rng = np.random.default_rng(0)
    n = SIZES[size]
    if name in ("cg", "jacobi", "power"):
        return rng.standard_normal((n["grid"], n["grid"]), np.float32)
    if name == "kmeans":
        centers = rng.standard_normal((K, 16), np.float32) * 4
        labels = rng.integers(0, K, n["points"])
        return centers[labels] + rng.standard_normal((n["points"], 16), np.float32)
    if name == "logreg":
        x = rng.standard_normal((n["tall"], 64), np.float32)
        y = (x @ rng.standard_normal(64, np.float32) > 0).astype(np.float32)
        return x, y
    return rng.standard_normal((n["tall"], 64), np.float32)


def on_reference(env: Env, host):
    if isinstance(host, tuple):
        return tuple(on_reference(env, h) for h in host)
    return env.asref(host)


def on_mdarray(host):
    if isinstance(host, tuple):
        return tuple(on_mdarray(h) for h in host)
    return mdarray.distributed_array(host, row_map(host.shape, mdarray.devices()))


def as_host(env: Env, value) -> np.ndarray:
    if isinstance(value, mdarray.DistArray):
        return value.get()
    return env.xp.asnumpy(value) if env.cuda else np.asarray(value)


ALGORITHMS = {
    "cg": (cg, 2e-3),
    "kmeans": (kmeans, 2e-3),
    "jacobi": (jacobi, 1e-4),
    "power": (power, 1e-4),
    "logreg": (logreg, 1e-3),
    "standardize": (standardize, 1e-4),
}


def per_iteration(env: Env, fns: tuple, iters: int, repeat: int) -> list[float]:
    """Median seconds per iteration of each of `fns` called with `iters` (after one warm
    run each), their runs interleaved: a slower spell of the machine weighs on all alike."""
    times: list[list[float]] = [[] for _ in fns]
    for fn in fns:
        fn(iters)
    env.sync()
    for _ in range(repeat):
        for fn, spent in zip(fns, times):
            env.sync()
            start = time.perf_counter()
            fn(iters)
            env.sync()
            spent.append((time.perf_counter() - start) / iters)
    return [statistics.median(spent) for spent in times]


def bench_algorithm(name: str, size: str):
    algorithm, rtol = ALGORITHMS[name]
    iters = ITERS[name]

    def bench(env: Env, report: Report, repeat: int) -> None:
        host = host_data(name, size)
        ref_data, our_data = on_reference(env, host), on_mdarray(host)
        expected = as_host(env, algorithm(env.xp, ref_data, iters))
        scale = float(np.max(np.abs(expected))) or 1.0
        with mdarray.options(fallback="raise"):
            for loop in (python_loop, mdarray.iterate):
                got = as_host(env, algorithm(mdarray, our_data, iters, loop))
                error = float(np.max(np.abs(got - expected))) / scale
                if not error <= rtol:
                    raise AssertionError(f"{name} ({loop.__name__}): relative error {error:.2e}")
            ref, ours, looped = per_iteration(
                env,
                (
                    lambda i: algorithm(env.xp, ref_data, i),
                    lambda i: algorithm(mdarray, our_data, i),
                    lambda i: algorithm(mdarray, our_data, i, mdarray.iterate),
                ),
                iters,
                max(3, repeat // 2),
            )
        shape = "x".join(map(str, host[0].shape if isinstance(host, tuple) else host.shape))
        for how, mine in (("", ours), (", mdarray.iterate", looped)):
            report.add(
                f"{name} {shape} float32, per iteration{how}",
                f"{ref * 1e3:.3f} ms",
                "—",
                f"{mine * 1e3:.3f} ms",
                ratio(mine, ref),
                reference_s=ref,
                mdarray_s=mine,
                size=size,
            )

    return bench


# Host cost of one call ---------------------------------------------------------------------


def percall_ops(xp, x, y, s, w):
    """``(name, call)`` for each op family on `x`, `y` (64x64), a 0-d sum `s` of x and a
    64x8 matrix `w`, written once for the reference and mdarray."""
    z = xp.asarray(x, copy=True)

    def shifted_update():
        z[1:, :] -= y[:-1, :]

    return [
        ("a + a", lambda: x + x),
        ("a * 2.0 (Python scalar)", lambda: x * 2.0),
        ("s * a (0-d sum times 2-D)", lambda: s * x),
        ("s / s (0-d by 0-d)", lambda: s / s),
        ("xp.sum(x) (partial on mdarray)", lambda: xp.sum(x)),
        ("float(xp.sum(x))", lambda: float(xp.sum(x))),
        ("xp.mean(x)", lambda: xp.mean(x)),
        ("xp.sum(x, axis=0)", lambda: xp.sum(x, axis=0)),
        ("xp.sum(x, axis=1)", lambda: xp.sum(x, axis=1)),
        ("xp.max(x)", lambda: xp.max(x)),
        ("xp.argmin(x, axis=1)", lambda: xp.argmin(x, axis=1)),
        ("xp.where(x > 0, x, 0)", lambda: xp.where(x > 0, x, 0.0)),
        ("x[1:3] (a view)", lambda: x[1:3]),
        ("x[:-1, :] (shifted view)", lambda: x[:-1, :]),
        ("z[1:, :] -= y[:-1, :] (halo update)", shifted_update),
        ("z[0] = 1.0 (setitem)", lambda: z.__setitem__(0, 1.0)),
        ("x @ w", lambda: x @ w),
        ("xp.astype(x, float64)", lambda: xp.astype(x, xp.float64)),
        ("xp.exp(x)", lambda: xp.exp(x)),
        ("xp.zeros_like(x)", lambda: xp.zeros_like(x)),
    ]


#: Rounds of the per-call table, each a loop of the reference's call and one of ours.
PERCALL_ROUNDS = 7


def bench_percall(env: Env, report: Report, repeat: int) -> None:
    shape = (64, 64)
    rng = np.random.default_rng(1)
    hx, hy = rng.standard_normal(shape, np.float32), rng.standard_normal(shape, np.float32)
    hw = rng.standard_normal((64, 8), np.float32)
    layout = row_map(shape, mdarray.devices())
    x, y = mdarray.distributed_array(hx, layout), mdarray.distributed_array(hy, layout)
    w = mdarray.asarray(hw, device=x.device)
    rx, ry, rw = env.asref(hx), env.asref(hy), env.asref(hw)
    theirs = percall_ops(env.xp, rx, ry, env.xp.sum(rx), rw)
    with mdarray.options(fallback="raise"):
        ours = percall_ops(mdarray, x, y, mdarray.sum(x), w)
        count = max(200, repeat * 20)
        for (name, ref_call), (_, our_call) in zip(theirs, ours):
            # Rounds taking turns, each side's median: the host's speed drifts.
            refs, mines = [], []
            for _ in range(PERCALL_ROUNDS):
                refs.append(loop_time(env, ref_call, count=count))
                mines.append(loop_time(env, our_call, count=count))
            ref, mine = statistics.median(refs), statistics.median(mines)
            report.add(
                f"{name}",
                us(ref),
                "—",
                us(mine),
                ratio(mine, ref),
                reference_s=ref,
                mdarray_s=mine,
            )


def main() -> None:
    args = parse_args(__doc__ or "")
    env = Env()
    figures = [("percall", bench_percall)]
    figures += [(name, bench_algorithm(name, "moderate")) for name in ALGORITHMS]
    # The large sizes run by default on a GPU; on cpu only when --only names them.
    if env.cuda or any(name.endswith("-large") for name in args.only or ()):
        figures += [(f"{name}-large", bench_algorithm(name, "large")) for name in ALGORITHMS]
    report = Report(env, "Whole algorithms and the host cost of one call")
    run_figures(report, args, figures, env, env)


if __name__ == "__main__":
    main()
