# ruff: noqa: PLW0108 (every row is a lambda, so each pays the same call)
"""Host cost of the pieces a small mdarray call is made of, on this machine: CuPy's own
calls (a ufunc, a view, a stream entered, a device made current) beside an empty Python
call, and mdarray's calls on the same data, each the best of 7 rounds of 5000 calls:
``python tools/device/primitives.py`` from the repository root (cuda backend)."""

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

import cupy  # noqa: E402
import numpy as np  # noqa: E402

import mdarray  # noqa: E402
from benchmarks.workloads import row_map  # noqa: E402


def best(fn, count: int = 5000, rounds: int = 7) -> float:
    """Fewest microseconds per call of `fn()` over `rounds` loops of `count` calls."""
    for _ in range(200):
        fn()
    cupy.cuda.Device().synchronize()
    spent = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(count):
            fn()
        cupy.cuda.Device().synchronize()
        spent.append((time.perf_counter() - start) / count * 1e6)
    return min(spent)


def main() -> None:
    host = np.random.default_rng(1).standard_normal((64, 64), np.float32)
    x = cupy.asarray(host)
    slab = x.reshape(-1)
    out = cupy.empty_like(slab)
    stream = cupy.cuda.Stream(non_blocking=False)
    device = cupy.cuda.Device(0)
    null = cupy.cuda.Stream.null
    d = mdarray.distributed_array(host, row_map((64, 64), mdarray.devices()))

    def nothing():
        return None

    def stream_entered():
        with stream:
            pass

    def add_in_stream():
        with stream:
            return slab + slab

    def add_device_stream():
        with device, stream:
            return slab + slab

    def device_entered():
        with device:
            pass

    def use_and_back():
        stream.use()
        got = slab + slab
        null.use()
        return got

    rows = [
        ("an empty Python call", nothing),
        ("cupy x + x (64x64)", lambda: x + x),
        ("cupy slab + slab (4096)", lambda: slab + slab),
        ("cupy.add(slab, slab, out=)", lambda: cupy.add(slab, slab, out=out)),
        ("with stream: (nothing)", stream_entered),
        ("with stream: slab + slab", add_in_stream),
        ("with device, stream: slab + slab", add_device_stream),
        ("stream.use(); slab + slab; null.use()", use_and_back),
        ("cupy.cuda.get_current_stream()", cupy.cuda.get_current_stream),
        ("with device: (nothing)", device_entered),
        ("cupy x[1:3]", lambda: x[1:3]),
        ("cupy slab[64:192]", lambda: slab[64:192]),
        ("cupy slab[64:192].reshape(2, 64)", lambda: slab[64:192].reshape(2, 64)),
        ("cupy.empty(4096, float32)", lambda: cupy.empty(4096, np.float32)),
        ("cupy x.dtype", lambda: x.dtype),
        ("cupy x.sum()", lambda: x.sum()),
        ("cupy x.sum(axis=0)", lambda: x.sum(axis=0)),
        ("cupy x[0] = 1.0", lambda: x.__setitem__(0, 1.0)),
        ("cupy slab.fill(1.0)", lambda: slab[:64].fill(1.0)),
        ("mdarray a + a", lambda: d + d),
        ("mdarray x[1:3]", lambda: d[1:3]),
        ("mdarray x[:-1, :]", lambda: d[:-1, :]),
        ("mdarray z[0] = 1.0", lambda: d.__setitem__(0, 1.0)),
        ("mdarray sum(x, axis=0)", lambda: mdarray.sum(d, axis=0)),
    ]
    f32 = np.dtype(np.float32)
    block = slab.reshape(64, 64)
    rows += [
        ("cupy x.sum(dtype=float32)", lambda: x.sum(dtype=f32)),
        ("cupy x.sum(axis=(0, 1))", lambda: x.sum(axis=(0, 1))),
        ("cupy x.sum(keepdims=True)", lambda: x.sum(keepdims=True)),
        ("cupy.sum(x, axis=(0,1), keepdims, dtype)", lambda: cupy.sum(x, (0, 1), f32, None, True)),
        ("cupy slab.sum()", lambda: slab.sum()),
        ("cupy slab.sum().reshape(1)", lambda: slab.sum().reshape(1)),
        ("cupy x.max()", lambda: x.max()),
        ("cupy.max(x, axis=(0,1), keepdims=True)", lambda: cupy.max(x, axis=(0, 1), keepdims=True)),
        ("cupy slab.max()", lambda: slab.max()),
        ("cupy x.sum(axis=0, dtype=float32)", lambda: x.sum(axis=0, dtype=f32)),
        ("cupy x.sum(axis=0, keepdims=True)", lambda: x.sum(axis=0, keepdims=True)),
        ("cupy x.sum(axis=(0,), keepdims, dtype)", lambda: cupy.sum(x, (0,), f32, None, True)),
        ("cupy.zeros_like(x)", lambda: cupy.zeros_like(x)),
        ("cupy.zeros(4096, float32)", lambda: cupy.zeros(4096, f32)),
        ("cupy.empty(4096); .fill(0)", lambda: cupy.empty(4096, f32).fill(0)),
        ("cupy x[0].fill(1.0)", lambda: x[0].fill(1.0)),
        ("cupy slab[0:64].fill(1.0)", lambda: slab[0:64].fill(1.0)),
        ("cupy x.astype(float64)", lambda: x.astype(np.float64)),
        ("cupy block[1:3] (2-D view of slab)", lambda: block[1:3]),
        ("cupy.ndarray(shape, dtype, memptr)", lambda: cupy.ndarray((2, 64), f32, slab.data)),
        ("cupy.cuda.runtime.getDevice", cupy.cuda.runtime.getDevice),
        ("cupy x[1:, :] -= x[:-1, :]", lambda: x[1:, :].__isub__(x[:-1, :])),
    ]
    for name, fn in rows:
        print(f"{name:42s} {best(fn):8.2f} us")


if __name__ == "__main__":
    main()
