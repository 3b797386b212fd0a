"""Where the time of a tiny elementwise op goes: cProfile of `x + y`, 64 chunks.

MDARRAY_BACKEND=cuda python -m benchmarks.dispatch_profile
"""

from __future__ import annotations

import cProfile
import pstats

import mdarray

from ._harness import Env
from .issue3 import random, row_blocks


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


if __name__ == "__main__":
    main()
