"""Where the time of a tiny elementwise op goes: cProfile of `x + y`, 64 chunks.

MDARRAY_BACKEND=cuda python -m benchmarks.dispatch_profile
"""

from __future__ import annotations

import cProfile
import pstats

import mdarray

from ._harness import Env, loop_time
from .compute import random, row_blocks


def main() -> None:
    env = Env()
    shape, parts, count = (256, 4), 64, 300
    x = mdarray.distributed_array(random(env, shape, 1), row_blocks(*shape, parts))
    y = mdarray.distributed_array(random(env, shape, 2), row_blocks(*shape, parts))
    for _ in range(20):
        x + y
    env.sync()
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(count):
        x + y
    env.sync()
    profile.disable()
    print(f"{count} ops of x + y on {shape}, {parts} chunks; per chunk per op:")
    stats = pstats.Stats(profile)
    stats.sort_stats("tottime").print_stats(25)
    if env.cuda:
        floors(env, shape)


def floors(env: Env, shape) -> None:
    """What one CuPy call costs on this machine: the floor under a per-chunk launch."""
    cupy = env.xp
    a, b = random(env, shape, 3), random(env, shape, 4)
    c = cupy.empty_like(a)
    kernel = cupy.RawKernel(
        'extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {'
        " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }",
        "add",
    )
    n = a.size
    args = (a, b, c, cupy.int32(n))
    rows = [
        ("cupy a + b (new output)", lambda: a + b),
        ("cupy.add(a, b, out=c)", lambda: cupy.add(a, b, out=c)),
        ("RawKernel launch", lambda: kernel(((n + 255) // 256,), (256,), args)),
        ("cupy.empty(shape)", lambda: cupy.empty(shape, cupy.float32)),
        ("with backend.on(0): pass", _enter_on),
    ]
    print("| call | us per call |\n|---|---|")
    for name, fn in rows:
        print(f"| {name} | {loop_time(env, fn, count=5000) * 1e6:.2f} |")


def _enter_on() -> None:
    from mdarray._backends import backend as _backend

    with _backend.backend().on(0):
        pass


if __name__ == "__main__":
    main()
