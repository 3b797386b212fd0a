"""Many chunks along one axis: the planning cost of layouts, `get` and reshards.

A time series kept one chunk per file has 10^4-10^5 chunks along one axis. Each figure is
an operation planned from nothing, the way a program meets it the first time: the plan
cache is cleared and the layouts and arrays are made fresh before each run (their making
is not timed, except in the ``layout`` figures, which time it). The figure is the median
of ``--repeat`` such runs (3 by default; cold runs of 10^5 chunks take seconds each), as
the process's CPU time and, in parentheses, the wall time (they part where other work
shares the machine's cores), and each result is checked against NumPy once.

Figures (names for --only), each at every ``--chunks`` count n:

- ``layout``: ``Layout`` of n chunks along a 1-D array of 4n float64 (chunks dealt over
  the devices in turn), its coverage check included;
- ``get``: the first ``get()`` of such an array;
- ``reshard-blocks``: ``reshard`` to 4 blocks;
- ``reshard-split``: ``reshard`` to another n-chunk splitting (every inner edge moved by
  2, the chunks dealt from the next device);
- ``rows-layout``, ``rows-get``, ``rows-reshard``: an (n, 4) array in one-row chunks, its
  layout, its first ``get()`` and its reshard to 4 column blocks;
- ``add-splits``: ``x + y`` of two arrays on different n-chunk splittings;
- ``cumsum``: ``np.cumsum`` of the 1-D array;
- ``write-sum``: ``x[3:-3] = -1.0`` into the 1-D array in SUM mode (each chunk's part
  of the selection covered by the chunks meeting it).

``--limit S`` stops a figure whose run passes S seconds (it prints "> S s"), so the
code before the n log n plans can be measured at 10^4 chunks too.

    MDARRAY_BACKEND=cpu python -m benchmarks.many_chunks --chunks 1000 10000 100000
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import statistics
import sys
import time

import numpy as np

import mdarray
from mdarray import Layout
from mdarray._core import plan_cache as _plan_cache

from ._harness import Env, Report, finish, wanted

WIDTH = 4  # elements per chunk of the 1-D array


def _devices() -> list[int]:
    return list(mdarray.devices())


def split(n: int, shift: int = 0, turn: int = 0) -> Layout:
    """n chunks of `WIDTH` elements (inner edges moved by `shift`), chunk i on device
    ``(i + turn) % devices``."""
    devices = _devices()
    edges = [0, *(i * WIDTH + shift for i in range(1, n)), n * WIDTH]
    index_map: dict = {}
    for i in range(n):
        index_map.setdefault(devices[(i + turn) % len(devices)], []).append(
            slice(edges[i], edges[i + 1])
        )
    return Layout((n * WIDTH,), index_map)


def rows(n: int) -> Layout:
    devices = _devices()
    index_map: dict = {}
    for i in range(n):
        index_map.setdefault(devices[i % len(devices)], []).append((slice(i, i + 1), slice(0, 4)))
    return Layout((n, 4), index_map)


def four_blocks(shape: tuple, axis: int = 0) -> Layout:
    devices = _devices()
    return Layout.block(shape, axis=axis, devices=[devices[k % len(devices)] for k in range(4)])


def _array(layout: Layout):
    data = np.arange(int(np.prod(layout.shape)), dtype=np.float64).reshape(layout.shape)
    return mdarray.distributed_array(data, layout.index_map), data


def _check(got, want) -> None:
    if not np.array_equal(got, want):
        raise AssertionError("the result differs from NumPy's")


# Each figure: n -> (setup, run, check): setup makes what `run` takes (untimed), `check`
# compares run's result with NumPy's.
def _layout(n):
    return (lambda: None), (lambda _: split(n)), (lambda layout: _check(layout.shape, (n * WIDTH,)))


def _get(n):
    data = np.arange(n * WIDTH, dtype=np.float64)
    return (lambda: _array(split(n))[0]), (lambda x: x.get()), (lambda got: _check(got, data))


def _reshard_blocks(n):
    data = np.arange(n * WIDTH, dtype=np.float64)
    return (
        (lambda: (_array(split(n))[0], four_blocks((n * WIDTH,)))),
        (lambda xl: xl[0].reshard(xl[1])),
        (lambda y: _check(y.get(), data)),
    )


def _reshard_split(n):
    data = np.arange(n * WIDTH, dtype=np.float64)
    return (
        (lambda: (_array(split(n))[0], split(n, shift=2, turn=1))),
        (lambda xl: xl[0].reshard(xl[1])),
        (lambda y: _check(y.get(), data)),
    )


def _rows_layout(n):
    return (lambda: None), (lambda _: rows(n)), (lambda layout: _check(layout.shape, (n, 4)))


def _rows_get(n):
    data = np.arange(n * 4, dtype=np.float64).reshape(n, 4)
    return (lambda: _array(rows(n))[0]), (lambda x: x.get()), (lambda got: _check(got, data))


def _rows_reshard(n):
    data = np.arange(n * 4, dtype=np.float64).reshape(n, 4)
    return (
        (lambda: (_array(rows(n))[0], four_blocks((n, 4), axis=1))),
        (lambda xl: xl[0].reshard(xl[1])),
        (lambda y: _check(y.get(), data)),
    )


def _add_splits(n):
    data = np.arange(n * WIDTH, dtype=np.float64)
    return (
        (lambda: (_array(split(n))[0], _array(split(n, shift=1, turn=1))[0])),
        (lambda xy: xy[0] + xy[1]),
        (lambda z: _check(z.get(), 2 * data)),
    )


def _cumsum(n):
    data = np.arange(n * WIDTH, dtype=np.float64)
    return (
        (lambda: _array(split(n))[0]),
        np.cumsum,
        (lambda y: _check(y.get(), np.cumsum(data))),
    )


def _write(n):
    data = np.arange(n * WIDTH, dtype=np.float64)
    data[3:-3] = -1.0
    return (
        (lambda: _array(split(n))[0].change_mode("sum")),
        (lambda x: x.__setitem__(slice(3, -3), -1.0) or x),
        (lambda x: _check(x.get(), data)),
    )


FIGURES = {
    "layout": ("Layout of n chunks, 1-D", _layout),
    "get": ("first get(), 1-D", _get),
    "reshard-blocks": ("reshard 1-D -> 4 blocks", _reshard_blocks),
    "reshard-split": ("reshard 1-D -> another n-chunk split", _reshard_split),
    "rows-layout": ("Layout of (n, 4) in one-row chunks", _rows_layout),
    "rows-get": ("first get(), one-row chunks", _rows_get),
    "rows-reshard": ("reshard one-row chunks -> 4 column blocks", _rows_reshard),
    "add-splits": ("x + y on two different n-chunk splits", _add_splits),
    "cumsum": ("np.cumsum, 1-D", _cumsum),
    "write-sum": ("x[3:-3] = -1.0, 1-D in SUM mode", _write),
}


class _Late(Exception):
    pass


@contextlib.contextmanager
def _deadline(seconds: float | None):
    """Raise `_Late` in the block once it has run `seconds` (None: no limit)."""
    if not seconds:
        yield
        return

    def late(signum, frame):
        raise _Late

    previous = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def cold_time(figure, n: int, repeat: int, limit: float | None) -> str:
    """The median seconds of `repeat` cold runs of `figure` at n chunks, as text: the
    process's CPU time (steady on a machine others load too), then the wall time."""
    setup, run, check = figure(n)
    times, walls = [], []
    for k in range(repeat):
        made = setup()
        _plan_cache.clear()
        start, wall = time.process_time(), time.perf_counter()
        try:
            with _deadline(limit):
                result = run(made)
        except _Late:
            return f"> {limit:g} s"
        times.append(time.process_time() - start)
        walls.append(time.perf_counter() - wall)
        if k == 0:
            check(result)
    return f"{statistics.median(times):.3f} s ({statistics.median(walls):.3f} s)"


class ChunkReport(Report):
    def __init__(self, env: Env, title: str, counts: list[int]) -> None:
        super().__init__(env, title)
        self.columns = ("work", *(f"{n:,} chunks" for n in counts))

    def row(self, work: str, cells: list[str]) -> None:
        self.rows.append((work, *cells))
        self.records.append({"work": work, "cells": cells})
        print(f"  {work}: {' | '.join(cells)}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="cold runs per figure")
    parser.add_argument("--chunks", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--limit", type=float, help="wall seconds after which a figure stops")
    parser.add_argument("--json", help="also write the raw figures to this file")
    parser.add_argument("--only", nargs="*", help="run only the figures with these names")
    args = parser.parse_args()
    env = Env()
    report = ChunkReport(env, "Many chunks along one axis, planned from nothing", args.chunks)
    for name, (work, figure) in FIGURES.items():
        if wanted(args, name):
            cells = [cold_time(figure, n, args.repeat, args.limit) for n in args.chunks]
            report.row(f"{work} (`{name}`)", cells)
    finish(report, args)


if __name__ == "__main__":
    main()
