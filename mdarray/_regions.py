"""Index arithmetic on boxes: intersections and cover plans.

A *box* is a tuple of ``range`` objects, one per axis: the global element positions a
chunk (or a requested region) holds along each axis. Ranges are immutable, hashable and
compose by slicing, which keeps the plans below cacheable on their arguments.

A *cover plan* answers "which source box provides which part of this region", giving
every element of the region to exactly one source (the first, in the caller's order of
preference, that holds it). Reshard, mode changes and gathers are all built on it, so
overlapping sources are read once.
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np
from ndindex import Slice

from ._plan_cache import plan_cache

Box = tuple  # tuple[range, ...]


def box_shape(box: Box) -> tuple[int, ...]:
    return tuple(map(len, box))


def box_size(box: Box) -> int:
    return int(np.prod(box_shape(box), dtype=np.int64))


def index_size(index: tuple, shape: tuple) -> int:
    """The number of elements of ``apply_index(array, index)`` for an array of `shape`."""
    sizes = [
        len(range(*i.indices(n))) if isinstance(i, slice) else len(i) for i, n in zip(index, shape)
    ]
    return int(np.prod(sizes, dtype=np.int64))


def index_shape(index: tuple | None, shape: tuple) -> tuple[int, ...]:
    """The shape of ``apply_index(array, index)`` for an array of `shape` (None: the whole
    array)."""
    if index is None:
        return tuple(shape)
    return tuple(
        len(range(*i.indices(n))) if isinstance(i, slice) else len(i) for i, n in zip(index, shape)
    )


def full_box(shape) -> Box:
    return tuple(range(n) for n in shape)


def to_slice(r: range) -> slice:
    """The canonical slice of a range: stop just past the last element (so it stays in
    bounds), step 1 for fewer than two elements, and ``slice(0, 0, 1)`` when empty."""
    if not len(r):
        return slice(0, 0, 1)
    return slice(r[0], r[-1] + 1, r.step if len(r) > 1 else 1)


def local_index(outer: range, inner: range) -> slice:
    """The slice `k` of positions such that ``outer[k] == inner`` (inner within outer)."""
    if not len(inner):
        return slice(0, 0, 1)
    start = (inner.start - outer.start) // outer.step
    step = inner.step // outer.step if len(inner) > 1 else 1
    return slice(start, start + len(inner) * step, step)


def local_box_index(outer: Box, inner: Box) -> tuple[slice, ...]:
    return tuple(local_index(o, i) for o, i in zip(outer, inner))


def intersect_range(a: range, b: range) -> range:
    if not len(a) or not len(b):
        return range(0)
    k = Slice(a.start, a.stop, a.step).as_subindex(Slice(b.start, b.stop, b.step))
    return b[k.start : k.stop : k.step]


def intersect(a: Box, b: Box) -> Box | None:
    """The box of elements in both `a` and `b`, or None if they share none."""
    out = tuple(intersect_range(ra, rb) for ra, rb in zip(a, b))
    if any(not len(r) for r in out):
        return None
    return out


class Piece(NamedTuple):
    """One part of a cover plan: `source` provides the elements at `region_index`.

    `region_index` and `source_index` are tuples of slices (or, on axes no slice can
    describe, 1-D int arrays) into the region and into the source box.
    """

    source: int
    region_index: tuple
    source_index: tuple


class Cover:
    """Who owns what inside one region, for a list of source boxes in order of preference.

    The region is cut on every axis into classes of positions that all sources treat alike;
    the cells of that grid are owned by the first source that holds them.
    """

    def __init__(self, region: Box, sources: tuple) -> None:
        self.region = region
        self.sources = sources
        self.classes = []  # per axis: list of position ranges or int arrays (region-local)
        self.members = []  # per axis: bool array [source, class]
        self.contiguous = []  # per axis: classes are ordered adjacent ranges
        for axis, r in enumerate(region):
            local = [_local_range(r, src[axis]) for src in sources]
            classes, members, contiguous = _axis_classes(len(r), local)
            self.classes.append(classes)
            self.members.append(members)
            self.contiguous.append(contiguous)
        grid_shape = tuple(len(c) for c in self.classes)
        self.owner = np.full(grid_shape, -1, dtype=np.int64)
        self.holds = []
        for s in range(len(sources)):
            held = _outer_and([m[s] for m in self.members], grid_shape)
            self.holds.append(held)
            self.owner[held & (self.owner == -1)] = s

    def uncovered(self) -> tuple[int, ...] | None:
        """A global element position of the region that no source holds, or None."""
        missing = np.argwhere(self.owner == -1)
        if not len(missing):
            return None
        cell = missing[0]
        return tuple(
            r[_first(self.classes[axis][c])] for axis, (r, c) in enumerate(zip(self.region, cell))
        )

    def pieces(self) -> list[Piece]:
        """Every element of the region once, as pieces of the sources that own them."""
        return [
            self._piece(s, cells)
            for s in range(len(self.sources))
            for cells in _boxes(self.owner == s, self.contiguous)
        ]

    def shadowed(self, s: int) -> list[tuple]:
        """Index tuples into source `s` of the elements it holds but another source owns."""
        mask = self.holds[s] & (self.owner != s)
        return [self._piece(s, cells).source_index for cells in _boxes(mask, self.contiguous)]

    def _piece(self, s: int, cells) -> Piece:
        region_index = []
        source_index = []
        for axis, (lo, hi) in enumerate(cells):
            positions = _union(self.classes[axis][lo:hi])
            region_index.append(positions)
            source_index.append(_to_source(positions, self.region[axis], self.sources[s][axis]))
        return Piece(s, tuple(region_index), tuple(source_index))


@plan_cache
def cover(region: Box, sources: tuple) -> Cover:
    """The (cached) cover of `region` by `sources`, boxes given in order of preference."""
    return Cover(region, sources)


def _local_range(r: range, src: range) -> range:
    """Positions (in `r`'s local coordinates) of the elements of `r` that `src` holds."""
    if not len(r) or not len(src):
        return range(0)
    k = Slice(src.start, src.stop, src.step).as_subindex(Slice(r.start, r.stop, r.step))
    return range(len(r))[k.start : k.stop : k.step]


def _axis_classes(n: int, local: list[range]):
    if all(lr.step == 1 or len(lr) <= 1 for lr in local):
        cuts = sorted(
            {0, n}
            | {lr.start for lr in local if len(lr)}
            | {lr.start + len(lr) for lr in local if len(lr)}
        )
        classes = [range(a, b) for a, b in itertools.pairwise(cuts)]
        members = np.array(
            [
                [
                    len(lr) > 0 and lr.start <= c.start and c.stop <= lr.start + len(lr)
                    for c in classes
                ]
                for lr in local
            ],
            dtype=bool,
        ).reshape(len(local), len(classes))
        return classes, members, True
    return _strided_classes(n, local)


# More arithmetic progressions than this on one axis of one region (sources whose steps
# share no small period) are grouped by signature into int arrays instead.
_MAX_PROGRESSIONS = 256


def _strided_classes(n: int, local: list[range]):
    """Classes of one axis with strided sources, costing in proportion to the sources.

    Between consecutive ends of the sources the positions a source holds repeat with the
    least common multiple of the active steps, so each residue modulo that period is an
    arithmetic progression that all sources treat alike: a class with a slice for an index.
    Progressions of one signature that continue each other are merged.
    """
    cuts = sorted(
        {0, n} | {lr.start for lr in local if len(lr)} | {lr[-1] + 1 for lr in local if len(lr)}
    )
    segments = []
    total = 0
    for a, b in itertools.pairwise(cuts):
        active = [lr for lr in local if len(lr) and lr.start <= a and b <= lr[-1] + 1]
        period = math.lcm(*(lr.step for lr in active)) if active else 1
        segments.append((a, b, period))
        total += min(period, b - a)
    if total > _MAX_PROGRESSIONS:
        return _signature_classes(n, local)
    by_signature: dict = {}
    for a, b, period in segments:
        for first in range(a, min(a + period, b)):
            signature = tuple(first in lr for lr in local)
            progression = range(first, b, period)
            runs = by_signature.setdefault(signature, [])
            if runs and _continues(runs[-1], progression):
                runs[-1] = range(runs[-1].start, progression[-1] + 1, _step(runs[-1], progression))
            else:
                runs.append(progression)
    classes = sorted(
        ((run, signature) for signature, runs in by_signature.items() for run in runs),
        key=lambda item: item[0].start,
    )
    members = np.array([signature for _, signature in classes], dtype=bool).T
    return [run for run, _ in classes], members.reshape(len(local), len(classes)), False


def _step(a: range, b: range) -> int:
    return b.start - a[-1]


def _continues(a: range, b: range) -> bool:
    """True if `b` extends the progression `a` (one-element ranges fit any step)."""
    step = _step(a, b)
    return step > 0 and (len(a) == 1 or a.step == step) and (len(b) == 1 or b.step == step)


def _signature_classes(n: int, local: list[range]):
    """Positions grouped by the set of sources holding them, as ranges or int arrays."""
    positions = np.arange(n)
    held = np.zeros((len(local), n), dtype=bool)
    for s, lr in enumerate(local):
        if len(lr):
            held[s, lr.start : lr.start + len(lr) * lr.step : lr.step] = True
    codes = np.packbits(held, axis=0)  # one column of bytes per position
    codes = np.ascontiguousarray(codes.T).view(f"V{codes.shape[0]}").reshape(-1)
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first)
    classes = [_as_range_or_array(positions[inverse == k]) for k in order]
    members = held[:, first[order]]
    return classes, members.reshape(len(local), len(classes)), False


def _as_range_or_array(positions: np.ndarray):
    if len(positions) == 1:
        return range(int(positions[0]), int(positions[0]) + 1)
    steps = np.diff(positions)
    if np.all(steps == steps[0]):
        return range(int(positions[0]), int(positions[-1]) + 1, int(steps[0]))
    return positions


def _first(positions) -> int:
    return int(positions[0])


def _outer_and(vectors, grid_shape) -> np.ndarray:
    out = np.ones(grid_shape, dtype=bool)
    for axis, v in enumerate(vectors):
        shape = [1] * len(grid_shape)
        shape[axis] = len(v)
        out &= v.reshape(shape)
    return out


def _boxes(mask: np.ndarray, contiguous: list[bool]) -> list[tuple[tuple[int, int], ...]]:
    """Split the True cells of `mask` into boxes of cells, as per-axis (lo, hi) pairs.

    Greedy: grow each box along every axis whose classes are adjacent ranges, so a
    source's share of a region is few large copies rather than one per cell.
    """
    todo = mask.copy()
    ndim = mask.ndim
    if ndim == 0:
        return [()] if mask else []
    out: list[tuple[tuple[int, int], ...]] = []
    while True:
        found = np.argwhere(todo)
        if not len(found):
            return out
        lo = [int(i) for i in found[0]]
        hi = [i + 1 for i in lo]
        for axis in range(ndim):
            if not contiguous[axis]:
                continue
            while hi[axis] < mask.shape[axis]:
                slab = tuple(
                    slice(hi[a], hi[a] + 1) if a == axis else slice(lo[a], hi[a])
                    for a in range(ndim)
                )
                if not todo[slab].all():
                    break
                hi[axis] += 1
        todo[tuple(slice(a, b) for a, b in zip(lo, hi))] = False
        out.append(tuple(zip(lo, hi)))


def _union(classes: list):
    """One index for the union of adjacent classes: a slice, or an int array."""
    if len(classes) == 1:
        c = classes[0]
        return to_slice(c) if isinstance(c, range) else c
    # Only contiguous classes are merged: adjacent ranges with step 1.
    return slice(classes[0].start, classes[-1].stop, 1)


def _to_source(positions, region_range: range, source_range: range):
    """Map region-local positions (a slice or int array) to source-local positions."""
    if isinstance(positions, slice):
        inner = region_range[positions]
        return local_index(source_range, inner)
    global_positions = region_range.start + positions * region_range.step
    return (global_positions - source_range.start) // source_range.step


def apply_index(array, index: tuple, xp=np):
    """`array[index]` where index items are slices or 1-D int arrays (outer indexing); a
    view for slices, 0-d ones too (an array, never a scalar)."""
    if is_basic(index):
        view = (*index, Ellipsis)
        return array[view]
    return array[xp.ix_(*[positions(i, n) for i, n in zip(index, array.shape)])]


def positions(i, n):
    return np.arange(n)[i] if isinstance(i, slice) else i


def is_basic(index: tuple) -> bool:
    # No generator (a Python frame resumed per item): this runs on every piece moved.
    return all(map(isinstance, index, itertools.repeat(slice)))
