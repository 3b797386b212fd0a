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

import bisect
import itertools
import math
from typing import NamedTuple

import numpy as np
from ndindex import Slice

from .plan_cache import plan_cache

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
    if a.step != 1 and len(a) > 1 and (b.step == 1 or len(b) == 1):
        a, b = b, a  # the same elements, found from the unstrided side
    k = _local_range(b, a)
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
    the cells of that grid are owned by the first source that holds them. Each source
    reaches a box of cells, its *span* (a range of classes per axis, every class of it
    held on axes where the sources are unstrided), and the work below stays inside the
    spans: a cover costs in proportion to the cells its sources reach (about the number of
    sources where they tile the region), not to sources times cells.
    """

    def __init__(self, region: Box, sources: tuple) -> None:
        self.region = region
        self.sources = sources
        self.classes = []  # per axis: list of position ranges or int arrays (region-local)
        self.contiguous = []  # per axis: classes are ordered adjacent ranges
        # Per axis: None where each source holds every class of its span (unstrided),
        # else a bool array [source, class].
        self._members: list = []
        axis_spans = []  # per axis: one (lo, hi) range of classes per source
        for axis, r in enumerate(region):
            local = [_local_range(r, src[axis]) for src in sources]
            classes, spans, members = _axis_classes(len(r), local)
            self.classes.append(classes)
            self.contiguous.append(members is None)
            self._members.append(members)
            axis_spans.append(spans)
        # Per source: its span as slices of the grid, or None where it holds nothing here.
        self.spans: list = [
            None if any(lo >= hi for lo, hi in span) else tuple(slice(lo, hi) for lo, hi in span)
            for span in (zip(*axis_spans) if region else [()] * len(sources))
        ]
        self.owner = np.full(tuple(len(c) for c in self.classes), -1, dtype=np.int64)
        # Painted last source first, so each cell ends up with the first that holds it.
        for s in range(len(sources) - 1, -1, -1):
            span = self.spans[s]
            if span is not None:
                held = self._held(s)
                if held is None:
                    self.owner[_cells(span)] = s
                else:
                    self.owner[_cells(span)][held] = s
        # Per source: how many cells it owns (all of its span, in the usual case).
        self._owned = np.bincount(self.owner.reshape(-1) + 1, minlength=len(sources) + 1)[1:]

    def _held(self, s: int) -> np.ndarray | None:
        """Which cells of source `s`'s span it holds (None: all of them)."""
        span = self.spans[s]
        if all(members is None for members in self._members):
            return None
        vectors = [
            np.ones(cells.stop - cells.start, dtype=bool) if members is None else members[s, cells]
            for members, cells in zip(self._members, span)
        ]
        return _outer_and(vectors, tuple(map(len, vectors)))

    def counts(self) -> np.ndarray:
        """How many sources hold each cell of the grid."""
        count = np.zeros(self.owner.shape, dtype=np.int64)
        for s, span in enumerate(self.spans):
            if span is not None:
                held = self._held(s)
                count[_cells(span)] += 1 if held is None else held
        return count

    def overlapping(self) -> list[int]:
        """The sources that share an element with another source."""
        count = self.counts()
        out = []
        for s, span in enumerate(self.spans):
            if span is not None:
                held = self._held(s)
                shared = count[_cells(span)] > 1
                if (shared if held is None else shared & held).any():
                    out.append(s)
        return out

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
            for s, span in enumerate(self.spans)
            if span is not None and self._owned[s]
            for cells in (
                [tuple((c.start, c.stop) for c in span)]
                if self._owns_span(s)
                else _boxes(self.owner[_cells(span)] == s, self.contiguous, span)
            )
        ]

    def _owns_span(self, s: int) -> bool:
        """Whether source `s` owns every cell of its span, on axes whose classes merge:
        its share is then the one box of its span."""
        span = self.spans[s]
        size = math.prod(cells.stop - cells.start for cells in span)
        return self._owned[s] == size and all(self.contiguous)

    def shadowed(self, s: int) -> list[tuple]:
        """Index tuples into source `s` of the elements it holds but another source owns."""
        span = self.spans[s]
        if span is None or self._owns_span(s):
            return []
        held = self._held(s)
        mask = self.owner[_cells(span)] != s
        if held is not None:
            mask &= held
        return [self._piece(s, cells).source_index for cells in _boxes(mask, self.contiguous, span)]

    def _piece(self, s: int, cells) -> Piece:
        region_index = []
        source_index = []
        for axis, (lo, hi) in enumerate(cells):
            positions = _union(self.classes[axis][lo:hi])
            region_index.append(positions)
            source_index.append(_to_source(positions, self.region[axis], self.sources[s][axis]))
        return Piece(s, tuple(region_index), tuple(source_index))


class BoxIndex:
    """Which of many boxes meet a region, found by binary search instead of a scan.

    Per axis, the boxes' extents (first position, last + 1) sorted by start: the boxes
    that can meet ``[lo, hi)`` on an axis start in ``(lo - longest, hi)``, one `bisect`
    window; the boxes of the axis with the narrowest window are checked on every axis. A
    query costs a logarithm plus the boxes in that window, so planning a region per chunk
    costs about n log n for n chunks of similar extents, not n squared.
    """

    # Windows of more boxes than this are checked by NumPy, smaller ones in Python.
    _SMALL = 32

    def __init__(self, boxes: tuple) -> None:
        self.count = len(boxes)
        ndim = len(boxes[0]) if boxes else 0
        extents = np.array(
            [[(r.start, r[-1] + 1) if len(r) else (0, 0) for r in box] for box in boxes],
            dtype=np.int64,
        ).reshape(len(boxes), ndim, 2)
        self.starts = np.ascontiguousarray(extents[:, :, 0].T)  # [axis, box]
        self.ends = np.ascontiguousarray(extents[:, :, 1].T)
        order = np.argsort(self.starts, axis=1, kind="stable")
        self.order = order.tolist()
        self.sorted_starts = np.take_along_axis(self.starts, order, axis=1).tolist()
        self.longest = (self.ends - self.starts).max(axis=1, initial=0).tolist()
        self.extents = extents.tolist()  # [box][axis] = [start, end]

    def meeting(self, region: Box) -> list[int]:
        """The numbers (ascending) of the boxes whose extents meet `region`'s on every
        axis: a superset of those sharing an element with it where boxes are strided."""
        if not region:
            return list(range(self.count))
        if not all(region):
            return []
        lo = [r.start for r in region]
        hi = [r[-1] + 1 for r in region]
        best = None
        for axis, starts in enumerate(self.sorted_starts):
            first = bisect.bisect_right(starts, lo[axis] - self.longest[axis])
            last = bisect.bisect_left(starts, hi[axis])
            if best is None or last - first < best[2] - best[1]:
                best = (axis, first, last)
        axis, first, last = best  # type: ignore[misc]
        candidates = self.order[axis][first:last]
        if len(candidates) <= self._SMALL:
            bounds = list(zip(lo, hi))
            return sorted(
                k
                for k in candidates
                if all(s < h and e > low for (s, e), (low, h) in zip(self.extents[k], bounds))
            )
        found = np.array(candidates, dtype=np.int64)
        low = np.array(lo, dtype=np.int64)[:, None]
        high = np.array(hi, dtype=np.int64)[:, None]
        keep = (self.starts[:, found] < high) & (self.ends[:, found] > low)
        return np.sort(found[keep.all(axis=0)]).tolist()


@plan_cache
def cover(region: Box, sources: tuple) -> Cover:
    """The (cached) cover of `region` by `sources`, boxes given in order of preference."""
    return Cover(region, sources)


def _local_range(r: range, src: range) -> range:
    """Positions (in `r`'s local coordinates) of the elements of `r` that `src` holds."""
    if not len(r) or not len(src):
        return range(0)
    if src.step == 1 or len(src) == 1:  # an unstrided source: two divisions, no search
        lo = max(0, -((r.start - src.start) // r.step))
        hi = min(len(r), -((r.start - src.start - len(src)) // r.step))
        return range(lo, max(lo, hi))
    k = Slice(src.start, src.stop, src.step).as_subindex(Slice(r.start, r.stop, r.step))
    return range(len(r))[k.start : k.stop : k.step]


def _axis_classes(n: int, local: list[range]):
    """One axis of `n` positions cut into classes: ``(classes, spans, members)``, with
    each source's span as a ``(lo, hi)`` range of classes and `members` None where every
    source is unstrided (each then holds all the classes of its span), else a bool array
    [source, class]."""
    if all(lr.step == 1 or len(lr) <= 1 for lr in local):
        ends = {lr.start for lr in local if len(lr)} | {
            lr.start + len(lr) for lr in local if len(lr)
        }
        cuts = sorted(ends | {0, n})
        where = {cut: c for c, cut in enumerate(cuts)}
        classes = [range(a, b) for a, b in itertools.pairwise(cuts)]
        spans = [
            (where[lr.start], where[lr.start + len(lr)]) if len(lr) else (0, 0) for lr in local
        ]
        return classes, spans, None
    classes, members, _ = _strided_classes(n, local)
    held = members.any(axis=1)
    lo = np.where(held, members.argmax(axis=1), 0)
    hi = np.where(held, members.shape[1] - members[:, ::-1].argmax(axis=1), 0)
    return classes, list(zip(lo.tolist(), hi.tolist())), members


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


def _cells(span: tuple) -> tuple:
    """The index of a span's cells in the grid (a view, also of a 0-d grid)."""
    return (*span, Ellipsis)


def _first(positions) -> int:
    return int(positions[0])


def _outer_and(vectors, grid_shape) -> np.ndarray:
    out = np.ones(grid_shape, dtype=bool)
    for axis, v in enumerate(vectors):
        shape = [1] * len(grid_shape)
        shape[axis] = len(v)
        out &= v.reshape(shape)
    return out


def _boxes(mask: np.ndarray, contiguous: list[bool], span: tuple = ()) -> list[tuple]:
    """Split the True cells of `mask` (the cells of `span`, a tuple of slices of the grid,
    or the whole grid) into boxes of cells, as per-axis (lo, hi) pairs of the grid.

    Greedy: grow each box along every axis whose classes are adjacent ranges, so a
    source's share of a region is few large copies rather than one per cell. The cells
    are visited once in order, so the work follows the cells, not cells times boxes.
    """
    ndim = mask.ndim
    if ndim == 0:
        return [()] if mask else []
    offset = [cells.start for cells in span] if span else [0] * ndim
    if mask.size and all(contiguous) and mask.all():  # the usual case: a whole span
        return [tuple((o, o + n) for o, n in zip(offset, mask.shape))]
    todo = mask.copy()
    out: list[tuple[tuple[int, int], ...]] = []
    for found in np.argwhere(mask).tolist():
        if not todo[tuple(found)]:
            continue
        lo = found
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
        out.append(tuple((a + o, b + o) for a, b, o in zip(lo, hi, offset)))
    return out


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


def hashable_key(key) -> tuple | None:
    """`key` as a hashable tuple when it holds only ints (NumPy's as Python's), slices of
    Python ints, Ellipsis and None (a slice as its ``(start, stop, step)``: Python 3.11's
    slices do not hash), else None: other keys (arrays, bad keys) take `basic_key`'s path."""
    out: list = []
    for item in key if type(key) is tuple else (key,):
        kind = type(item)
        if kind is slice:  # (the commonest item first, its parts' types by a set)
            start, stop, step = item.start, item.stop, item.step
            if type(start) in _BOUNDS and type(stop) in _BOUNDS and type(step) in _BOUNDS:
                out.append((start, stop, step))
                continue
            return None
        if kind is int or item is None or item is Ellipsis:
            out.append(item)
        elif isinstance(item, np.integer):  # ``for i in np.arange(n)``: a position too
            out.append(int(item))
        else:
            return None
    return tuple(out)


_BOUNDS = frozenset({int, type(None)})  # what a hashable key's slice holds
