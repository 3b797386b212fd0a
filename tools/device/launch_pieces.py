# ruff: noqa: PLW0108 (every row is a lambda, so each pays the same call)
"""Host microseconds of the pieces of mdarray's and CuPy's small calls at 64x64 and
2048x2048 float32 (a stream entered, CuPy's ufunc against mdarray's launcher, reductions,
views, mdarray's calls): loops of calls timed until they return, the device queue left to
run behind, median of 7: ``python tools/device/launch_pieces.py`` from the repository
root (cuda backend)."""

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

import cupy  # noqa: E402
import numpy as np  # noqa: E402

import mdarray  # noqa: E402
from benchmarks.workloads import row_map  # noqa: E402
from mdarray._backends.backend import backend as default_backend  # noqa: E402


def host(fn, count: int) -> float:
    """Median microseconds per call of `count` calls of `fn` until the last returns."""
    spent = []
    for _ in range(7):
        cupy.cuda.Device().synchronize()
        start = time.perf_counter()
        for _ in range(count):
            fn()
        spent.append((time.perf_counter() - start) / count * 1e6)
        cupy.cuda.Device().synchronize()
    return statistics.median(spent)


class _Nothing:
    __slots__ = ()
    __enter__ = staticmethod("".format)
    __exit__ = staticmethod("".format)


def rows(n: int) -> list:
    """``(name, call)`` per piece, on n x n float32."""
    backend = default_backend()
    h = np.random.default_rng(0).standard_normal((n, n), np.float32)
    a, b = cupy.asarray(h), cupy.asarray(h)
    slab, slab2 = a.reshape(-1), b.reshape(-1)
    s1 = cupy.asarray(np.float32(2.0)).reshape(1)
    out = cupy.empty_like(slab)
    stream = backend.stream(backend.device_ids[0])
    add = backend.ufunc_kernel_for(backend.ufunc_kernel(np.add), slab.nbytes)
    mul = backend.ufunc_kernel_for(backend.ufunc_kernel(np.multiply), slab.nbytes)
    d = mdarray.distributed_array(h, row_map((n, n), mdarray.devices()))
    e = mdarray.distributed_array(h, row_map((n, n), mdarray.devices()))
    s = mdarray.sum(d)
    v, dv = cupy.asarray(h[0]), mdarray.asarray(h[0], device=d.device)
    s0 = a.sum()
    nothing = _Nothing()

    def with_stream():
        with stream:
            pass

    def with_nothing():
        with nothing:
            pass

    def halo():
        d[1:, :] -= e[:-1, :]

    return [
        ("an empty Python call", lambda: None),
        ("with a context doing nothing", with_nothing),
        ("with stream: (nothing)", with_stream),
        ("cupy a + b (2-D)", lambda: a + b),
        ("cupy.add(slab, slab2)", lambda: cupy.add(slab, slab2)),
        ("cupy.add(slab, slab2, out=out)", lambda: cupy.add(slab, slab2, out=out)),
        ("mdarray's kernel for add (slabs)", lambda: add(slab, slab2)),
        ("mdarray's kernel for add, out=", lambda: add(slab, slab2, out=(out,))),
        ("cupy.empty(n*n, float32)", lambda: cupy.empty(n * n, np.float32)),
        ("cupy s1 * slab", lambda: s1 * slab),
        ("mdarray's kernel for multiply (s1, slab)", lambda: mul(s1, slab)),
        ("cupy a.sum()", lambda: a.sum()),
        (
            "cupy.sum(a, axis=(0, 1), keepdims, dtype)",
            lambda: cupy.sum(a, (0, 1), np.float32, None, True),
        ),
        ("cupy a.sum(axis=0)", lambda: a.sum(axis=0)),
        ("cupy a[1:, :] (a view)", lambda: a[1:, :]),
        ("cupy slab.reshape(n, n)", lambda: slab.reshape(n, n)),
        ("cupy a[1:, :] -= b[:-1, :]", lambda: a[1:, :].__isub__(b[:-1, :])),
        ("cupy a @ v", lambda: a @ v),
        ("cupy.matmul(a, v)", lambda: cupy.matmul(a, v)),
        ("cupy.sqrt(a.sum())", lambda: cupy.sqrt(s0)),
        ("mdarray d + e", lambda: d + e),
        ("mdarray d @ dv", lambda: d @ dv),
        ("mdarray sqrt(sum(d))", lambda: mdarray.sqrt(s)),
        ("mdarray s * d", lambda: s * d),
        ("mdarray sum(d)", lambda: mdarray.sum(d)),
        ("mdarray sum(d, axis=0)", lambda: mdarray.sum(d, axis=0)),
        ("mdarray d[1:, :] -= e[:-1, :]", halo),
    ]


def main() -> None:
    for n in (64, 2048):
        print(f"--- {n}x{n} float32")
        for name, fn in rows(n):
            fn()
            print(f"{name:45s} {host(fn, 2000 if n == 64 else 150):8.2f} us")


if __name__ == "__main__":
    main()
