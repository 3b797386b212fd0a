"""Reshard and change_mode between any layouts and modes, and the data they move."""

import itertools
import warnings
from collections import Counter

import numpy as np
import pytest
from _layouts import dist_pairs, two_chunks
from _partials import per_chunk
from hypothesis import example, given, strategies as st
from hypothesis.extra import numpy as hnp

import mdarray
from mdarray import MAX, MIN, PROD, REPLICA, SUM, Layout
from mdarray._array.array import wrap
from mdarray._movement.dense_partials import dense_plan
from mdarray._storage.chunks import Chunks
from mdarray.testing import assert_chunks_hold, assert_dist_equal, strategies as mst

MODES = [REPLICA, SUM, PROD, MAX, MIN]
D = mdarray.devices()


@st.composite
def arrays_and_layouts(draw, mode=None):
    x, expected = draw(dist_pairs(mode=mode))
    return x, expected, draw(mst.layouts(x.shape))


def _elements(box):
    return set(itertools.product(*box))


def _expected_replica_moves(source: Layout, target: Layout, itemsize: int) -> Counter:
    """Each element of a target chunk that is not kept and that no source chunk on its
    device holds comes once from the first other-device source chunk holding it."""
    moved = Counter()
    kept = set(zip(source.boxes, source.chunk_devices))
    for box, device in zip(target.boxes, target.chunk_devices):
        if (box, device) in kept:
            continue
        local = set().union(
            *[_elements(b) for b, d in zip(source.boxes, source.chunk_devices) if d == device]
        )
        for element in _elements(box) - local:
            src = next(
                d for b, d in zip(source.boxes, source.chunk_devices) if element in _elements(b)
            )
            moved[(src, device)] += itemsize
    return moved


def _expected_partial_moves(source: Layout, target: Layout, itemsize: int) -> Counter:
    """Each source element goes once to a target chunk, on its own device if one holds it."""
    moved = Counter()
    for box, device in zip(source.boxes, source.chunk_devices):
        local = set().union(
            *[_elements(b) for b, d in zip(target.boxes, target.chunk_devices) if d == device]
        )
        for element in _elements(box) - local:
            dst = next(
                d for b, d in zip(target.boxes, target.chunk_devices) if element in _elements(b)
            )
            moved[(device, dst)] += itemsize
    return moved


# Reshard ----------------------------------------------------------------------------


@given(arrays_and_layouts())
@example(
    (
        mdarray.distributed_array(np.arange(1, 9), {0: slice(None)}, "sum"),
        np.arange(1, 9),
        Layout((8,), {D[1 % len(D)]: [slice(0, 8, 2), slice(0, 8, 3)], D[-1]: slice(None)}),
    )
)
def test_reshard_keeps_value_and_mode(case):
    x, expected, layout = case
    chunks_before = [c.copy() for c in x.storage.buffers]
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        y = x.reshard(layout)
    assert y.layout == layout
    assert y.mode is x.mode
    assert y.dtype == x.dtype
    assert_chunks_hold(y, expected)
    assert_dist_equal(y, expected)
    # The source is unchanged, even where y reuses its buffers.
    for before, after in zip(chunks_before, x.storage.buffers):
        np.testing.assert_array_equal(mdarray.testing._host(after), mdarray.testing._host(before))
    expect = (_expected_partial_moves if x.mode.is_partial else _expected_replica_moves)(
        x.layout, layout, x.itemsize
    )
    assert moved.bytes == expect
    cost = x.reshard_cost(layout)
    assert cost.bytes == moved.bytes
    assert cost.copies == moved.copies


@given(arrays_and_layouts())
def test_reshard_accepts_an_index_map(case):
    x, expected, layout = case
    y = x.reshard(layout.index_map)
    assert y.layout == layout
    assert_dist_equal(y, expected)


@given(dist_pairs())
def test_reshard_to_the_same_layout_moves_nothing(pair):
    x, expected = pair
    with mdarray.count_transfers() as moved:
        y = x.reshard(Layout(x.shape, x.index_map))
    assert moved.total == 0
    assert x.reshard_cost(x.layout).total == 0
    assert all(a is b for a, b in zip(x.storage.buffers, y.storage.buffers))
    assert_dist_equal(y, expected)


def test_reshard_reads_overlaps_once():
    # Device D[0] holds the array twice and D[-1] once more: other devices still fetch
    # each element of their block once.
    x = mdarray.distributed_array(
        np.arange(16.0), {D[0]: [slice(None), slice(0, 8)], D[-1]: slice(None)}
    )
    target = Layout.block((16,), devices=D)
    with mdarray.count_transfers() as moved:
        y = x.reshard(target)
    assert_dist_equal(y, np.arange(16.0))
    fetched = [
        n for (n,), d in zip(target.chunk_shapes, target.chunk_devices) if d not in (D[0], D[-1])
    ]
    assert moved.total == 8 * sum(fetched)
    assert moved.copies == len(fetched)


def test_partial_reshard_reuses_kept_chunks():
    layout = Layout((6,), two_chunks(slice(0, 4), slice(2, 6)))
    x = mdarray.distributed_array(np.arange(6), layout, "sum")
    index_map = layout.index_map
    index_map[D[-1]].append((slice(0, 1),))
    y = x.reshard(index_map)
    assert y.storage.buffers[0] is x.storage.buffers[0]
    assert y.storage.buffers[1] is x.storage.buffers[1]
    assert_dist_equal(y, np.arange(6))


# Bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "error", "words"),
    [
        (Layout.block((5,), devices=D[:1]), ValueError, ["(5,)", "(4,)"]),
        ({max(D) + 1: slice(None)}, ValueError, [f"device {max(D) + 1}", "not a device"]),
        ({D[0]: slice(0, 2)}, ValueError, ["uncovered"]),
        ({D[0]: slice(None, None, -1)}, ValueError, ["step"]),
        ({D[0]: (slice(None), 0)}, IndexError, ["too many"]),
        ({D[0]: slice(0, 9)}, IndexError, ["out of bounds"]),
        ({D[0]: 1.5}, TypeError, ["1.5"]),
    ],
)
@pytest.mark.parametrize("method", ["reshard", "reshard_cost"])
def test_bad_reshard(target, error, words, method):
    x = mdarray.distributed_array(np.arange(4), two_chunks(slice(0, 2), slice(1, 4)), "sum")
    before = [mdarray.testing._host(c).copy() for c in x.storage.buffers]
    layout = x.layout
    with pytest.raises(error) as info:
        getattr(x, method)(target)
    for word in words:
        assert word in str(info.value)
    assert x.layout == layout
    assert x.mode is SUM
    for a, b in zip(before, x.storage.buffers):
        np.testing.assert_array_equal(mdarray.testing._host(b), a)


# change_mode ------------------------------------------------------------------------


@given(dist_pairs(), st.data())
def test_change_mode_any_to_any(pair, data):
    x, expected = pair
    mode = data.draw(mst.modes(x.dtype))
    spelled = data.draw(st.sampled_from([mode, str(mode), str(mode).upper()]))
    before = [mdarray.testing._host(c).copy() for c in x.storage.buffers]
    with mdarray.options(fallback="raise"):
        y = x.change_mode(spelled)
    assert y.mode is mode
    assert y.layout == x.layout
    assert_chunks_hold(y, expected)
    assert_dist_equal(y, expected)
    for a, b in zip(before, x.storage.buffers):
        np.testing.assert_array_equal(mdarray.testing._host(b), a)


@given(dist_pairs(mode=REPLICA), st.sampled_from([SUM, PROD, MAX, MIN]))
def test_replica_to_partial_moves_nothing(pair, mode):
    x, _expected = pair
    if x.dtype.kind == "c" and mode in (MAX, MIN):
        mode = SUM
    with mdarray.count_transfers() as moved:
        y = x.change_mode(mode)
    assert moved.total == 0
    shadowed = x.layout.shadowed
    for k, (a, b) in enumerate(zip(x.storage.buffers, y.storage.buffers)):
        # Only chunks that hold copies of another chunk's elements change (SUM, PROD).
        assert (a is b) == (mode.idempotent or not shadowed[k])


@given(
    mst.layouts(overlapping=False),
    mst.dtypes(complex_=False),
    st.sampled_from(MODES),
    st.sampled_from(MODES),
)
def test_mode_changes_without_overlaps_share_buffers(layout, dtype, start, mode):
    x = mdarray.distributed_array(np.ones(layout.shape, dtype), layout, start)
    with mdarray.count_transfers() as moved:
        y = x.change_mode(mode)
    assert moved.total == 0
    assert all(a is b for a, b in zip(x.storage.buffers, y.storage.buffers))


def test_replica_to_sum_without_overlaps_copies_nothing():
    layout = Layout.grid((8, 8), (2, 2), devices=D)
    x = mdarray.distributed_array(np.arange(64.0).reshape(8, 8), layout)
    with mdarray.count_transfers() as moved:
        y = x.change_mode(SUM)
    assert moved.total == 0
    assert moved.copies == 0
    assert all(a is b for a, b in zip(x.storage.buffers, y.storage.buffers))


def _folded_once_moves(x) -> Counter | None:
    """The moves of combining partial copies that each hold the whole array on a backend
    whose devices share memory (`Backend.combine_to`): the layout's first device reads
    every other device's copies, then each other device gets its copies of the value."""
    plan = dense_plan(x.layout)
    if plan is None or not x.storage.backend.shared_memory:
        return None
    first = x.layout.devices[0]
    moves = Counter()
    for device in x.layout.chunk_devices:
        if device != first:
            moves[(device, first)] += x.nbytes
    for device, copies in plan[1]:
        if device != first:
            moves[(first, device)] += x.nbytes * copies
    return +moves


@given(dist_pairs())
def test_partial_to_replica_combines_only_overlaps(pair):
    x, expected = pair
    count = np.zeros(x.shape, np.int64)
    for _, index in x.layout.chunks:
        count[index] += 1
    with mdarray.count_transfers() as moved:
        y = x.change_mode(REPLICA)
    assert_chunks_hold(y, expected)
    expect = Counter()
    chunks = list(zip(x.layout.boxes, x.layout.chunk_devices, x.layout.chunks))
    combined = set()
    for k, (box, device, (_, index)) in enumerate(chunks):
        shares = bool((count[index] > 1).any())
        # Chunks sharing no element keep their buffers; in REPLICA mode nothing changes.
        assert (x.storage.buffers[k] is y.storage.buffers[k]) == (
            not (shares and x.mode.is_partial)
        )
        # Chunks of one box on one device are combined once for all of them.
        if shares and x.mode.is_partial and (box, device) not in combined:
            combined.add((box, device))
            for other_box, other_device, _ in chunks:
                if other_device != device:
                    common = len(_elements(box) & _elements(other_box))
                    expect[(other_device, device)] += common * x.itemsize
    if x.mode.is_partial and _folded_once_moves(x) is not None:
        expect = _folded_once_moves(x)
    assert moved.bytes == expect


@pytest.mark.parametrize("mode", [MAX, MIN, "max", "MIN"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_max_min_on_complex_raise(mode, dtype):
    x = mdarray.distributed_array(np.ones(4, dtype), {D[0]: slice(None)}, "sum")
    with pytest.raises(TypeError, match="complex"):
        x.change_mode(mode)
    assert x.mode is SUM


@pytest.mark.parametrize("mode", ["average", "", None, 3])
def test_unknown_mode(mode):
    x = mdarray.distributed_array(np.ones(4), {D[0]: slice(None)})
    with pytest.raises(ValueError, match="unknown mode"):
        x.change_mode(mode)


def test_moving_a_partial_result_does_not_warn():
    """A SUM whose copies are inf and -inf is NaN; NumPy warned where the sum was made, so
    reading or resharding it later raises nothing under warnings-as-errors."""
    devices = mdarray.devices()
    halves = {}  # a row per chunk, on two devices where there are two
    for device, row in zip((devices[0], devices[-1]), (slice(0, 1), slice(1, 2))):
        halves.setdefault(device, []).append((row, slice(None)))
    rows = mdarray.Layout((2, 3), halves)
    x = mdarray.distributed_array(np.array([[np.inf, 1, 2], [-np.inf, 3, 4]]), rows)
    with per_chunk():  # a partial copy per row, on one device too
        s = np.sum(x, axis=0)
    assert s.mode is mdarray.SUM
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [s.get(), s.reshard(mdarray.Layout.block((3,), devices=devices)).get()]
        got.append(s.change_mode("replica").get())
    for value in got:
        np.testing.assert_array_equal(value, [np.nan, 4, 6])


# Combining partial copies -----------------------------------------------------------

_FLOATS = [-0.0, 0.0, 1.0, -2.0, 0.5, np.inf, -np.inf, np.nan]


def _copy_values(dtype):
    """Values of one copy for which the combination does not depend on the order: small
    dyadic floats, signed zeros, infinities and NaN; every int8 (sums and products wrap)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        return st.integers(int(info.min), int(info.max))
    if dtype.kind == "u":
        return st.integers(0, int(np.iinfo(dtype).max))
    if dtype.kind == "c":
        return st.builds(complex, st.sampled_from(_FLOATS), st.sampled_from(_FLOATS))
    return st.sampled_from(_FLOATS)


@st.composite
def partial_copies(draw):
    """``(x, expected)``: a partial DistArray whose chunks hold arbitrary copies (not one
    value and identities), and its value combined by NumPy, copy by copy."""
    dtype = np.dtype(
        draw(st.sampled_from(["int8", "uint8", "int32", "float32", "float64", "bool", "complex64"]))
    )
    # Complex products of infinities depend on the order of the copies (NaN parts).
    mode = SUM if dtype.kind == "c" else draw(st.sampled_from([SUM, PROD, MAX, MIN]))
    layout = draw(mst.layouts())
    elements = _copy_values(dtype)
    copies = [draw(hnp.arrays(dtype, shape, elements=elements)) for shape in layout.chunk_shapes]
    combine = mode.ufunc(np, dtype)
    expected = np.full(layout.shape, mode.identity(dtype), dtype)
    with np.errstate(all="ignore"):
        for (_, index), copy in zip(layout.chunks, copies):
            expected[index] = combine(expected[index], copy)
    backend = mdarray._backends.backend.backend()
    buffers = [backend.from_host(c, d) for c, d in zip(copies, layout.chunk_devices)]
    return wrap(Chunks.of(layout, buffers, backend, dtype), mode), expected


def _assert_same_values(got, expected, mode):
    np.testing.assert_array_equal(got, expected, strict=True)
    # -0.0 and +0.0 are two values of a sum or a product, whatever the order of the
    # copies; maximum and minimum of the two may give either, and a NaN's sign is open
    # (IEEE leaves both to the order of the operands).
    if expected.dtype.kind in "fc" and mode in (SUM, PROD):
        for part in (np.real, np.imag):
            signed = ~np.isnan(part(expected))
            np.testing.assert_array_equal(
                np.signbit(part(got)[signed]), np.signbit(part(expected)[signed])
            )


@given(partial_copies(), st.data())
@example(  # every copy -0.0: the SUM is -0.0, not +0.0
    (
        wrap(
            Chunks.of(
                Layout((2,), {D[0]: [slice(None)] * 3}),
                [mdarray._backends.backend.backend().from_host(np.array([-0.0, -0.0]), D[0])] * 3,
                mdarray._backends.backend.backend(),
            ),
            SUM,
        ),
        np.array([-0.0, -0.0]),
    ),
    None,
)
def test_combining_copies_matches_numpy(case, data):
    x, expected = case
    with mdarray.options(fallback="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        y = x.change_mode(REPLICA)
        _assert_same_values(y.get(), expected, x.mode)
        _assert_same_values(x.get(), expected, x.mode)
        for (_, index), chunk in zip(y.layout.chunks, y.storage.buffers):
            _assert_same_values(mdarray.testing._host(chunk), expected[index], x.mode)
        if data is not None:
            layout = data.draw(mst.layouts(x.shape))
            z = x.reshard(layout)
            assert z.mode is x.mode
            _assert_same_values(z.get(), expected, x.mode)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_combining_complex_products_keeps_infinities(dtype):
    values = np.array([complex(np.inf, 0), complex(0, -np.inf), complex(1, -0.0), 2j], dtype)
    layout = Layout((4,), {d: [slice(None)] for d in D} | {D[0]: [slice(None), slice(1, 3)]})
    x = mdarray.distributed_array(values, layout, PROD)
    for y in (x.change_mode(REPLICA), x.reshard(Layout.block((4,), devices=D))):
        got = y.get()
        np.testing.assert_array_equal(got, values)
        np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(values.imag))


class _CountingBackend:
    """The backend's methods that allocate, launch or move, counted per call."""

    def __init__(self, backend, monkeypatch):
        self.calls = Counter()
        self.pieces = []
        for name in ("combine", "full", "empty", "copy", "move", "assign"):
            monkeypatch.setattr(backend, name, self._counting(name, getattr(backend, name)))

    def _counting(self, name, method):
        def call(*args, **kwargs):
            self.calls[name] += 1
            if name == "combine":
                self.pieces.append((len(args[1]), args[2]))
            return method(*args, **kwargs)

        return call


@pytest.fixture
def counting(monkeypatch):
    return lambda: _CountingBackend(mdarray._backends.backend.backend(), monkeypatch)


def test_partials_of_one_box_combine_in_one_call(counting):
    # sum(axis=0) of four row chunks on one device: four SUM copies of one box, combined
    # by one backend call for all four target chunks (one kernel on the cuda backend).
    x = mdarray.distributed_array(
        np.arange(32.0).reshape(4, 8), {D[0]: [(slice(k, k + 1), slice(None)) for k in range(4)]}
    )
    with per_chunk():
        s = x.sum(axis=0)
    assert s.mode is SUM
    calls = counting()
    y = s.change_mode(REPLICA)
    assert calls.calls == Counter(combine=1)
    assert calls.pieces == [(4, 4)]
    expected = np.arange(32.0).reshape(4, 8).sum(axis=0)
    assert_chunks_hold(y, expected)
    # The four copies are the device's packed slab: elementwise ops run once per device.
    assert y.storage.slabs is not None
    with mdarray.options(fallback="raise"):
        z = y * 2
    assert_chunks_hold(z, expected * 2)
    assert_chunks_hold(y, expected)
    y[0] = -1.0
    expected[0] = -1.0
    assert_chunks_hold(y, expected)
    assert_dist_equal(s, np.arange(32.0).reshape(4, 8).sum(axis=0))


@pytest.mark.skipif(len(D) < 2, reason="needs two devices")
def test_partials_across_devices_combine_once_per_target(counting):
    # One copy per device. Where devices keep their own memory, each target chunk brings
    # the other copies (one move each, by `Backend.combine_from`) and combines them in one
    # call; where they share it (cpu), the first device folds once for all and each other
    # gets the value (`Backend.combine_to`). Partial -> blocks the same for each block.
    n = len(D)
    x = mdarray.distributed_array(
        np.arange(8.0 * n).reshape(n, 8),
        {d: (slice(k, k + 1), slice(None)) for k, d in enumerate(D)},
    )
    s = x.sum(axis=0)
    expected = np.arange(8.0 * n).reshape(n, 8).sum(axis=0)
    calls = counting()
    with mdarray.count_transfers() as moved:
        y = s.change_mode(REPLICA)
    assert_chunks_hold(y, expected)
    folds = 1 if s.storage.backend.shared_memory else n
    assert calls.calls["combine"] == folds
    assert moved.copies == 2 * (n - 1) if folds == 1 else n * (n - 1)
    assert moved.total == moved.copies * 8 * 8
    assert calls.pieces == ([(n, n)] if folds == 1 else [(n, 1)] * n)
    assert y.storage.slabs is not None
    calls = counting()
    blocks = Layout.block((8,), devices=D)
    z = s.reshard(blocks).change_mode(REPLICA)
    assert_dist_equal(z, expected)
    assert calls.calls["combine"] == len(blocks.chunks)
    assert calls.calls["full"] == 0
