"""Many chunks along one axis (a time series, one chunk per file): layouts, plans and
`get` cost about n log n in the number of chunks, not n squared.

The guard is deterministic, not a timing: the Python lines run (`sys.settrace`'s line
events, which count the steps of comprehensions as well as calls) by an operation
planned from nothing (plan cache cleared, a fresh layout) at n and at 4n chunks. Linear
work grows 4x, n log n a little more, a per-chunk search of all chunks 16x (the code
before these plans grew 6.5x to 15.7x on these cases, this code 2.3x to 3.4x); the bound
is 5x. Values are compared against NumPy on the same data.
"""

import sys

import numpy as np
import pytest
from _layouts import D
from hypothesis import example, given, strategies as st

import mdarray
from mdarray import Layout
from mdarray._core import plan_cache as _plan_cache, regions as _regions

N = 150  # chunks of the smaller case; the larger has 4N
GROWTH = 5.0


def split(n: int, width: int, shift: int = 0, turn: int = 0) -> Layout:
    """n chunks of about `width` elements along a 1-D array of n * width, the inner edges
    moved by `shift`, chunk i on device ``(i + turn) % devices``."""
    edges = [0, *(i * width + shift for i in range(1, n)), n * width]
    index_map: dict = {}
    for i in range(n):
        index_map.setdefault(D[(i + turn) % len(D)], []).append(slice(edges[i], edges[i + 1]))
    return Layout((n * width,), index_map)


def overlapping(n: int, width: int) -> Layout:
    """n chunks of `width` + 1 elements along a 1-D array of n * width + 1, each sharing
    its last element with the next chunk's first, chunk i on device ``i % devices``."""
    index_map: dict = {}
    for i in range(n):
        index_map.setdefault(D[i % len(D)], []).append(slice(i * width, (i + 1) * width + 1))
    return Layout((n * width + 1,), index_map)


def rows(n: int) -> Layout:
    """An (n, 4) array in one-row chunks, dealt over the devices."""
    index_map: dict = {}
    for i in range(n):
        index_map.setdefault(D[i % len(D)], []).append((slice(i, i + 1), slice(0, 4)))
    return Layout((n, 4), index_map)


def _lines(fn) -> int:
    """Python lines run by ``fn()``: calls, and the loop steps of comprehensions too."""
    count = 0

    def trace(frame, event, arg):
        nonlocal count
        count += event == "line"
        return trace

    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count


def _cold(make, operation) -> int:
    """`_lines` of `operation(made)` planned from nothing, `made` fresh from `make()`."""
    made = make()
    _plan_cache.clear()
    return _lines(lambda: operation(made))


def _growth(make, operation) -> float:
    return _cold(lambda: make(4 * N), operation) / _cold(lambda: make(N), operation)


def _array(layout: Layout):
    data = np.arange(np.prod(layout.shape), dtype=np.float64).reshape(layout.shape)
    return mdarray.distributed_array(data, layout.index_map), data


CASES = {
    "Layout of 1-D chunks": (lambda n: n, lambda n: split(n, 2)),
    "Layout of one-row chunks": (lambda n: n, rows),
    "get, 1-D": (lambda n: _array(split(n, 2))[0], lambda x: x.get()),
    "get, one-row chunks": (lambda n: _array(rows(n))[0], lambda x: x.get()),
    "reshard 1-D -> 4 blocks": (
        lambda n: _array(split(n, 2))[0],
        lambda x: x.reshard(Layout.block(x.shape, devices=[D[i % len(D)] for i in range(4)])),
    ),
    "reshard 1-D -> another split": (
        lambda n: _array(split(n, 4))[0],
        lambda x: x.reshard(split(len(x.layout.chunks), 4, shift=2, turn=1)),
    ),
    "reshard one-row chunks -> column blocks": (
        lambda n: _array(rows(n))[0],
        lambda x: x.reshard(
            Layout.block(x.shape, axis=1, devices=[D[i % len(D)] for i in range(4)])
        ),
    ),
    "reshard SUM 1-D -> another split": (
        lambda n: _array(split(n, 4))[0].change_mode("sum"),
        lambda x: x.reshard(split(len(x.layout.chunks), 4, shift=2, turn=1)),
    ),
    "cumsum, 1-D": (lambda n: _array(split(n, 2))[0], np.cumsum),
    "cumsum, one-row chunks": (lambda n: _array(rows(n))[0], lambda x: np.cumsum(x, axis=0)),
    "x[a:b] = v, overlapping chunks": (
        lambda n: _array(overlapping(n, 4))[0],
        lambda x: x.__setitem__(slice(3, -5), -np.arange(x.shape[0] - 8.0)),
    ),
    "x[a:b] = scalar, overlapping SUM chunks": (
        lambda n: _array(overlapping(n, 4))[0].change_mode("sum"),
        lambda x: x.__setitem__(slice(3, -5), -1.0),
    ),
    "x[a:b] = DistArray, overlapping chunks": (
        lambda n: (_array(overlapping(n, 4))[0], _array(split(n, 4, shift=1))[0]),
        lambda xy: xy[0].__setitem__(slice(1, None), xy[1]),
    ),
    "x[mask] = v, overlapping chunks": (
        lambda n: _array(overlapping(n, 4))[0],
        lambda x: x.__setitem__(x > 7, -1.0),
    ),
    "x[mask] = v, overlapping SUM chunks": (
        lambda n: _array(overlapping(n, 4))[0].change_mode("sum"),
        lambda x: x.__setitem__(np.arange(x.shape[0]) % 3 == 0, -1.0),
    ),
    "x[idx] = v, overlapping SUM chunks": (
        lambda n: _array(overlapping(n, 4))[0].change_mode("sum"),
        lambda x: x.__setitem__(np.arange(0, x.shape[0], 5), -1.0),
    ),
    "x + y on different splits": (
        lambda n: (_array(split(n, 4))[0], _array(split(n, 4, shift=1, turn=1))[0]),
        lambda xy: xy[0] + xy[1],
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_planning_grows_near_linearly_with_chunks(name):
    make, operation = CASES[name]
    growth = _growth(make, operation)
    assert growth < GROWTH, f"{name}: {growth:.2f}x the Python lines run for 4x the chunks"


def test_many_chunks_match_numpy():
    n = 2 * N
    x, data = _array(split(n, 3))
    np.testing.assert_array_equal(x.get(), data)
    targets = [
        Layout.block(x.shape, devices=[D[i % len(D)] for i in range(4)]),
        split(n, 3, shift=1, turn=1),
        split(n // 2, 6, shift=-2, turn=3),
    ]
    for target in targets:
        y = x.reshard(target)
        assert y.layout == target
        np.testing.assert_array_equal(y.get(), data)
        np.testing.assert_array_equal((x + y).get(), data + data)
        s = x.change_mode("sum").reshard(target)
        np.testing.assert_array_equal(s.get(), data)
    np.testing.assert_array_equal(np.cumsum(x).get(), np.cumsum(data))
    o, odata = _array(overlapping(n, 3))
    for mode in ("replica", "sum"):
        w, want = o.change_mode(mode), odata.copy()
        w[2:-4] = -1.0
        want[2:-4] = -1.0
        w[np.arange(w.shape[0]) % 5 == 0] = -2.0
        want[np.arange(w.shape[0]) % 5 == 0] = -2.0
        np.testing.assert_array_equal(w.get(), want)
    r, rdata = _array(rows(n))
    np.testing.assert_array_equal(np.cumsum(r, axis=0).get(), np.cumsum(rdata, axis=0))
    np.testing.assert_array_equal(r.get(), rdata)
    columns = r.reshard(Layout.block(r.shape, axis=1, devices=D))
    np.testing.assert_array_equal(columns.get(), rdata)
    np.testing.assert_array_equal(columns.reshard(rows(n)).get(), rdata)


def _extents(n: int):
    return st.tuples(st.integers(0, n), st.integers(0, n), st.integers(1, 3)).map(
        lambda t: range(min(t[:2]), max(t[:2]), t[2])
    )


def _boxes(shape):
    return st.tuples(*[_extents(n) for n in shape])


@given(
    st.lists(st.integers(0, 12), min_size=0, max_size=3)
    .map(tuple)
    .flatmap(lambda shape: st.tuples(_boxes(shape), st.lists(_boxes(shape), max_size=12)))
)
@example(((range(2, 3),), [(range(10),), (range(3, 4),), (range(0),), (range(2, 3),)]))
def test_box_index_finds_every_box_meeting_a_region(case):
    region, boxes = case
    if not boxes:
        return
    found = _regions.BoxIndex(tuple(boxes)).meeting(region)
    assert found == sorted(found)
    meeting = [k for k, box in enumerate(boxes) if _regions.intersect(region, box) is not None]
    assert set(meeting) <= set(found)
    for k in found:  # a superset only where strides keep apart what extents join
        assert all(len(r) and len(b) for r, b in zip(region, boxes[k]))
        assert all(b[0] <= r[-1] and r[0] <= b[-1] for r, b in zip(region, boxes[k]))


def test_box_index_with_wide_windows_matches_a_scan():
    """Windows of many boxes (long boxes among short ones) take the NumPy filter."""
    rng = np.random.default_rng(5)
    boxes = []
    for _ in range(400):
        box = []
        for n in (300, 40):
            a, b = sorted(rng.integers(0, n, 2).tolist())
            box.append(range(a, b + 1, int(rng.integers(1, 3))))
        boxes.append(tuple(box))
    boxes.append((range(300), range(40)))  # one box as long as the array
    index = _regions.BoxIndex(tuple(boxes))
    for _ in range(50):
        region = tuple(range(*sorted(rng.integers(0, n, 2).tolist())) for n in (300, 40))
        found = index.meeting(region)
        meeting = {k for k, box in enumerate(boxes) if _regions.intersect(region, box) is not None}
        assert meeting <= set(found)
        assert found == sorted(found)
        for k in found:
            assert all(b[0] < r.stop and r.start <= b[-1] for r, b in zip(region, boxes[k]))
