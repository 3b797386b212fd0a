"""Box arithmetic and cover plans, checked element by element against brute force."""

import itertools

import numpy as np
from hypothesis import example, given, strategies as st

from mdarray._core import regions as _regions


@st.composite
def ranges(draw, n):
    start = draw(st.integers(0, n))
    stop = draw(st.integers(start, n))
    return range(start, stop, draw(st.integers(1, 4)))


@st.composite
def boxes(draw, shape):
    return tuple(draw(ranges(n)) for n in shape)


@st.composite
def covers(draw):
    shape = draw(st.lists(st.integers(0, 9), max_size=3).map(tuple))
    region = draw(boxes(shape))
    sources = tuple(draw(st.lists(boxes(shape), max_size=5)))
    return region, sources


def _elements(box):
    return set(itertools.product(*box))


def _global(box, index):
    """Global positions of ``box``'s elements selected by a plan index."""
    axes = []
    for r, i in zip(box, index):
        positions = np.asarray(r)[i] if len(r) else np.zeros(0, dtype=np.int64)
        axes.append([int(p) for p in np.atleast_1d(positions)])
    return list(itertools.product(*axes))


@given(covers())
@example(((), ((),)))
@example(((), ()))
@example(((range(8),), ((range(0, 8, 2),), (range(0, 8, 3),), (range(8),))))
@example(((range(1, 9, 2),), ((range(0, 9, 3),), (range(9),))))
@example(((range(0),), ((range(0),),)))
def test_cover_gives_each_element_once_to_its_first_holder(case):
    region, sources = case
    plan = _regions.cover(region, sources)
    wanted = _elements(region)
    seen = []
    for piece in plan.pieces():
        at_region = _global(region, piece.region_index)
        at_source = _global(sources[piece.source], piece.source_index)
        assert at_region == at_source
        for element in at_region:
            holders = [s for s, box in enumerate(sources) if element in _elements(box)]
            assert holders[0] == piece.source
        seen.extend(at_region)
    covered = {e for e in wanted if any(e in _elements(b) for b in sources)}
    assert sorted(seen) == sorted(covered)
    missing = plan.uncovered()
    if covered == wanted:
        assert missing is None
    else:
        assert missing in wanted - covered


@given(covers())
def test_shadowed_is_held_but_owned_elsewhere(case):
    region, sources = case
    plan = _regions.cover(region, sources)
    wanted = _elements(region)
    for s, box in enumerate(sources):
        shadowed = [e for index in plan.shadowed(s) for e in _global(box, index)]
        assert len(shadowed) == len(set(shadowed))
        earlier = set().union(*[_elements(b) for b in sources[:s]])
        assert set(shadowed) == _elements(box) & wanted & earlier


@given(
    st.lists(st.integers(0, 9), max_size=3)
    .map(tuple)
    .flatmap(lambda s: st.tuples(boxes(s), boxes(s)))
)
def test_intersect_and_local_index(pair):
    a, b = pair
    common = _regions.intersect(a, b)
    both = _elements(a) & _elements(b)
    if common is None:
        assert not both
        assert a  # a 0-d box always meets another
        return
    assert _elements(common) == both
    assert _global(a, _regions.local_box_index(a, common)) == sorted(both)
    assert _global(b, _regions.local_box_index(b, common)) == sorted(both)


@given(st.integers(0, 9).flatmap(ranges))
def test_to_slice_is_canonical_and_in_bounds(r):
    s = _regions.to_slice(r)
    assert range(*s.indices(10)) == r
    assert all(type(v) is int for v in (s.start, s.stop, s.step))
    assert s.stop <= max(r.stop, 0)
    assert s.step == 1 or len(r) > 1


@given(covers())
def test_index_size_counts_apply_index(case):
    region, sources = case
    array = np.zeros(_regions.box_shape(region))
    for piece in _regions.cover(region, sources).pieces():
        selected = _regions.apply_index(array, piece.region_index)
        assert _regions.index_size(piece.region_index, array.shape) == selected.size


def test_box_helpers():
    assert _regions.box_shape((range(2, 8, 3), range(0))) == (2, 0)
    assert _regions.box_size(()) == 1
    assert _regions.full_box((2, 3)) == (range(2), range(3))
    assert _regions.intersect((), ()) == ()


@given(
    st.integers(0, 40).flatmap(
        lambda n: st.tuples(st.just(n), st.lists(ranges(n), min_size=1, max_size=5))
    )
)
@example((12, [range(0, 12, 2), range(1, 12, 2), range(3, 9)]))
@example((0, [range(0)]))
def test_strided_axis_classes_partition_by_holders(case):
    """Both ways of classing one strided axis (by progressions, and the fallback by
    signature) split the positions into classes whose members hold what they say."""
    n, local = case
    for classes_of in (_regions._strided_classes, _regions._signature_classes):
        classes, members, _ = classes_of(n, local)
        owner = {}
        for c, positions in enumerate(classes):
            for p in np.atleast_1d(np.asarray(positions)).tolist():
                assert p not in owner
                owner[p] = c
        assert sorted(owner) == list(range(n))
        for p, c in owner.items():
            assert [bool(members[s, c]) for s in range(len(local))] == [p in r for r in local]


def test_strided_plans_cost_in_proportion_to_chunks_not_elements():
    """A cover of strided sources is the same handful of slices for 10**3 or 10**7
    elements (the period of the steps, not the length, sets the work)."""
    sizes = []
    for n in (1_000, 10_000_000):
        sources = ((range(0, n, 2),), (range(1, n, 2),), (range(0, n, 3),), (range(n // 2),))
        pieces = _regions.cover((range(n),), sources).pieces()
        assert all(isinstance(i, slice) for p in pieces for i in p.region_index + p.source_index)
        sizes.append(len(pieces))
    assert sizes[0] == sizes[1]
