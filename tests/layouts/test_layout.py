"""Layouts: index-map normalization against NumPy indexing, constructors, bad input."""

import copy
import pickle
import re

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

import mdarray
from mdarray import Layout
from mdarray._layouts.layout import shape_tuple
from mdarray.testing import strategies as mst

DEVICES = mdarray.devices()


def _as_slices(index, shape):
    """A raw chunk index as NumPy would see it with ints kept as length-1 slices."""
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    for item, n in zip(index, shape):
        if isinstance(item, slice):
            out.append(item)
        else:
            i = int(item) % n
            out.append(slice(i, i + 1))
    return tuple(out)


def _raw_chunks(index_map):
    for device, indices in index_map.items():
        for index in indices if isinstance(indices, list) else [indices]:
            yield device, index


@st.composite
def shapes_and_maps(draw):
    shape = draw(mst.shapes())
    return shape, draw(mst.index_maps(shape))


@given(shapes_and_maps())
@example(((4, 6), {0: (slice(0, 2),), 1: [(slice(2, 4), 0), (slice(2, 4), slice(1, 6))]}))
@example(((5,), {0: slice(None, None, 2), 1: slice(1, None, 2)}))
@example(((3, 4), {0: -1, 1: [(slice(-3, -1),), (2, slice(None))]}))
@example(((), {0: ()}))
@example(((0, 3), {0: (slice(0, 0),)}))
def test_chunks_equal_numpy_indexing(case):
    shape, index_map = case
    layout = Layout(shape, index_map)
    array = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    raw = list(_raw_chunks(index_map))
    assert len(layout.chunks) == len(raw)
    for (device, index), (raw_device, raw_index), box, chunk_shape in zip(
        layout.chunks, raw, layout.boxes, layout.chunk_shapes
    ):
        assert device == raw_device
        assert len(index) == len(shape)
        for s in index:
            assert all(type(v) is int for v in (s.start, s.stop, s.step))
            assert s.step > 0
        expected = array[_as_slices(raw_index, shape)]
        np.testing.assert_array_equal(array[index], expected)
        assert expected.shape == chunk_shape
        np.testing.assert_array_equal(array[np.ix_(*box)] if box else array, expected)


@given(shapes_and_maps())
def test_layout_is_a_value(case):
    shape, index_map = case
    layout = Layout(shape, index_map)
    again = Layout(shape, index_map)
    assert layout == again
    assert hash(layout) == hash(again)
    assert Layout(layout.shape, layout.index_map) == layout
    assert eval(repr(layout), {"Layout": Layout}) == layout
    assert pickle.loads(pickle.dumps(layout)) == layout
    assert copy.deepcopy(layout) == layout
    assert layout.devices == tuple(dict.fromkeys(d for d, _ in _raw_chunks(index_map)))
    assert layout.ndim == len(shape)


@given(shapes_and_maps())
def test_has_overlaps_matches_counting(case):
    shape, index_map = case
    layout = Layout(shape, index_map)
    count = np.zeros(shape, dtype=np.int64)
    for _, index in layout.chunks:
        count[index] += 1
    assert (count >= 1).all()
    assert layout.has_overlaps == bool((count > 1).any())


@given(shapes_and_maps())
def test_shadowed_leaves_each_element_to_one_chunk(case):
    """`Layout.shadowed` masks, per chunk, what another chunk owns: counting every chunk's
    unmasked elements counts each element of the array once; `cover` says which chunks
    overlap."""
    shape, index_map = case
    layout = Layout(shape, index_map)
    owners = np.zeros(shape, dtype=np.int64)
    overlapping = set()
    for k, ((_, index), chunk_shape) in enumerate(zip(layout.chunks, layout.chunk_shapes)):
        owned = np.ones(chunk_shape, dtype=np.int64)
        for local in layout.shadowed[k]:
            owned[local] = 0
        owners[index] += owned
        others = np.zeros(shape, dtype=bool)
        for j, (_, other) in enumerate(layout.chunks):
            others[other] |= j != k
        overlapping |= {k} if others[index].any() else set()
    assert (owners == 1).all()
    assert set(layout.cover.overlapping()) == overlapping
    assert layout.has_overlaps == any(layout.shadowed)


@given(shapes_and_maps(), st.data())
def test_splits_reads_each_chunk_as_numpy_indexes_it(case, data):
    shape, index_map = case
    if not shape:
        return
    layout = Layout(shape, index_map)
    axis = data.draw(st.integers(0, len(shape) - 1))
    positions = np.arange(shape[axis])
    part = [
        (np.prod(chunk_shape) > 0, not np.array_equal(positions[index[axis]], positions))
        for (_, index), chunk_shape in zip(layout.chunks, layout.chunk_shapes)
    ]
    assert layout.splits(axis) == any(split for _, split in part)
    assert layout.splits(axis, empty_chunks=False) == any(full and split for full, split in part)


@given(shapes_and_maps(), st.data())
def test_whole_along_holds_the_axes_whole_on_the_same_devices(case, data):
    shape, index_map = case
    layout = Layout(shape, index_map)
    axes = tuple(data.draw(st.sets(st.integers(0, len(shape) - 1))) if shape else ())
    everywhere, longest = data.draw(st.booleans()), data.draw(st.booleans())
    whole = layout.whole_along(axes, everywhere=everywhere, longest=longest)
    assert whole.shape == layout.shape
    assert not any(whole.splits(a) for a in axes)
    others = [a for a in range(len(shape)) if a not in axes]
    if others:
        assert whole.devices == layout.devices
        along = max(others, key=lambda a: shape[a]) if longest else others[0]
        assert whole == Layout.block(shape, axis=along, devices=layout.devices)
    else:
        assert whole.devices == (layout.devices if everywhere else layout.devices[:1])
        assert not any(whole.splits(a) for a in range(len(shape)))
    if len(axes) == 1:
        assert layout.whole_along(axes[0], everywhere=everywhere, longest=longest) == whole


def test_whole_along_blocks_the_longest_other_axis_or_the_first():
    layout = Layout.block((2, 3, 8), axis=0, devices=DEVICES)
    assert layout.whole_along(0) == Layout.block((2, 3, 8), axis=2, devices=DEVICES)
    assert layout.whole_along(0, longest=False) == Layout.block((2, 3, 8), axis=1, devices=DEVICES)
    assert layout.whole_along((1, 2)) == Layout.block((2, 3, 8), axis=0, devices=DEVICES)
    line = Layout.block((5,), devices=DEVICES)
    assert line.whole_along(0) == Layout.replicated((5,), devices=DEVICES[:1])
    assert line.whole_along(0, everywhere=True) == Layout.replicated((5,), devices=DEVICES)


@pytest.mark.parametrize(
    "shape", [3, np.int64(3), (), (2, 3), [2, np.int32(3)], range(3), np.array([2, 1])]
)
def test_shape_tuple_reads_a_shape_as_numpy_does(shape):
    got = shape_tuple(shape)
    assert got == np.empty(shape).shape
    assert all(type(n) is int for n in got)


@pytest.mark.parametrize("shape", [2.5, [2, 1.5], None, "ab", [[2]]])
def test_shape_tuple_refuses_what_numpy_refuses(shape):
    with pytest.raises(TypeError):
        np.empty(shape)
    with pytest.raises(TypeError):
        shape_tuple(shape)


def test_index_map_is_a_new_dict_each_time():
    layout = Layout((4,), {0: slice(0, 2), 1: slice(2, 4)})
    layout.index_map[0].append((slice(0, 4, 1),))
    assert layout.index_map == {0: [(slice(0, 2, 1),)], 1: [(slice(2, 4, 1),)]}


def test_equal_layouts_hash_alike_whatever_the_spelling():
    a = Layout((4, 2), {0: (slice(0, 2),), 1: [(slice(2, None), slice(None))]})
    b = Layout((4, 2), {np.int64(0): [(slice(None, -2, 1), slice(0, 2, 1))], 1: (slice(-2, 4),)})
    assert a == b
    assert hash(a) == hash(b)
    assert a != Layout((4, 2), {1: (slice(0, 2),), 0: (slice(2, None),)})
    assert a != "layout"


# Constructors ------------------------------------------------------------------------


@given(mst.shapes(min_dims=1), st.data())
def test_block(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    devices = data.draw(st.lists(st.sampled_from(DEVICES), min_size=1, unique=True))
    layout = Layout.block(shape, axis=axis, devices=devices)
    assert layout.chunk_devices == tuple(devices)
    sizes = [s[axis] for s in layout.chunk_shapes]
    assert sum(sizes) == shape[axis]
    assert max(sizes) - min(sizes) <= 1
    assert not layout.has_overlaps


@given(mst.shapes(min_dims=1, max_dims=3), st.data())
def test_grid(shape, data):
    grid = tuple(data.draw(st.integers(1, 3)) for _ in shape)
    devices = data.draw(st.lists(st.sampled_from(DEVICES), min_size=1, unique=True))
    layout = Layout.grid(shape, grid, devices)
    assert len(layout.chunks) == int(np.prod(grid))
    expected = [devices[k % len(devices)] for k in range(len(layout.chunks))]
    assert sorted(layout.chunk_devices) == sorted(expected)
    assert sum(int(np.prod(s)) for s in layout.chunk_shapes) == int(np.prod(shape))
    if all(shape):
        assert not layout.has_overlaps


def test_replicated_and_defaults():
    layout = Layout.replicated((3, 2))
    assert layout.devices == DEVICES
    assert all(shape == (3, 2) for shape in layout.chunk_shapes)
    assert Layout.block((5,)).devices == DEVICES
    assert Layout.block((), devices=[DEVICES[-1]]).chunks == ((DEVICES[-1], ()),)
    assert Layout.block(4, devices=mdarray.DeviceSet(DEVICES[:1])).shape == (4,)
    assert Layout.grid((4, 4), (2,), devices=DEVICES[0]).chunk_shapes == ((2, 4), (2, 4))


def test_make_2d_index_map_as_in_the_seed():
    index_map = mdarray.make_2d_index_map([0, 2, 4], [0, 3, 5], [[{0}, {1}], [{2}, {0, 1}]])
    assert index_map == {
        0: [(slice(0, 2), slice(0, 3)), (slice(2, 4), slice(3, 5))],
        1: [(slice(0, 2), slice(3, 5)), (slice(2, 4), slice(3, 5))],
        2: [(slice(2, 4), slice(0, 3))],
    }
    assert Layout((4, 5), index_map).has_overlaps


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (([1, 2], [0, 2], [[{0}]]), "must increase strictly from 0"),  # must start at 0
        (([0, 2, 1], [0, 2], [[{0}], [{0}]]), "must increase strictly from 0"),
        (([0, 2], [0, 2], [[{0}], [{1}]]), "1 x 1 grid"),  # one row of devices per block row
        (([0, 2], [0, 2, 4], [[{0}]]), "1 x 2 grid"),  # one device set per block column
    ],
)
def test_make_2d_index_map_bad_input(args, words):
    with pytest.raises(ValueError, match=words):
        mdarray.make_2d_index_map(*args)


# Bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "index_map", "error", "words"),
    [
        ((4,), {0: slice(None, None, -1)}, ValueError, ["step", "axis 0", "device 0"]),
        ((4,), {0: slice(0, 4, 0)}, ValueError, ["step", "axis 0"]),
        (
            (4, 3),
            {0: [(slice(None),), (slice(None), slice(0, 3, -2))]},
            ValueError,
            ["chunk 1", "axis 1"],
        ),
        ((4,), {0: 4}, IndexError, ["index 4", "axis 0", "size 4"]),
        ((4,), {0: -5}, IndexError, ["-5", "axis 0"]),
        ((4,), {0: slice(0, 5)}, IndexError, ["stop 5", "axis 0"]),
        ((4,), {0: slice(-5, 4)}, IndexError, ["start -5"]),
        ((4,), {0: (slice(None), 0)}, IndexError, ["too many indices", "(4,)"]),
        ((), {0: (0,)}, IndexError, ["too many indices"]),
        ((4,), {0: 1.0}, TypeError, ["1.0", "axis 0"]),
        ((4,), {0: True}, TypeError, ["True"]),
        ((4,), {0: slice(0.0, 4)}, TypeError, ["start"]),
        ((4,), {0: (Ellipsis,)}, TypeError, ["Ellipsis"]),
        ((4,), {0: None}, TypeError, ["None"]),
        ((4,), {"0": slice(None)}, TypeError, ["'0'"]),
        ((4,), {1.0: slice(None)}, TypeError, ["1.0"]),
        ((4,), {-1: slice(None)}, ValueError, ["-1"]),
        ((4,), {}, ValueError, ["no chunks"]),
        ((4,), {0: []}, ValueError, ["no chunks"]),
        ((4,), [slice(None)], TypeError, ["dict"]),
        (
            (4, 3),
            {0: (slice(0, 2),), 1: (slice(2, 4), slice(0, 2))},
            ValueError,
            ["(2, 2)", "uncovered"],
        ),
        ((5,), {0: slice(0, 5, 2)}, ValueError, ["element (1,)", "uncovered"]),
        ((2, 3), {0: (slice(0, 0),)}, ValueError, ["element (0, 0)", "uncovered"]),
        ((-1,), {0: ()}, ValueError, ["negative"]),
        ((2.0,), {0: ()}, TypeError, ["shape"]),
    ],
)
def test_bad_index_maps(shape, index_map, error, words):
    before = copy.deepcopy(index_map)
    with pytest.raises(error) as info:
        Layout(shape, index_map)
    for word in words:
        assert word in str(info.value)
    assert repr(index_map) == repr(before)


def test_uncovered_element_is_really_uncovered():
    index_map = {0: (slice(0, 3), slice(0, 4, 2)), 1: (slice(1, 3),)}
    with pytest.raises(ValueError, match=r"element \(0, 1\)"):
        Layout((3, 4), index_map)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: Layout.block((4,), axis=1), np.exceptions.AxisError),
        (lambda: Layout.block((4,), devices=[]), ValueError),
        (lambda: Layout.grid((4,), (0,)), ValueError),
        (lambda: Layout.grid((4,), (2, 2)), ValueError),
        (lambda: Layout.grid((4,), (1.5,)), TypeError),
        (lambda: Layout.replicated((2,), devices=["a"]), TypeError),
    ],
)
def test_bad_constructor_input(call, error):
    with pytest.raises(error):
        call()


@pytest.mark.parametrize(
    ("shape", "dtype"),
    [
        ((2**32, 2**32), np.float64),  # 2**64 elements: the count overflows int64
        ((2**32, 2**32, 0), np.float64),  # NumPy counts the non-zero sides
        ((0, 2**62, 2**62), np.int8),
        ((2**64,), np.int8),  # one side past a signed index
        ((2**63,), np.int8),
        ((2**61, 2), np.float64),  # the count fits, the bytes do not
        ((2**62, 2), np.int8),
    ],
)
def test_sizes_past_a_signed_index_raise_as_numpy(shape, dtype):
    with pytest.raises(ValueError, match=r"too big|Maximum allowed dimension") as numpy_error:
        np.zeros(shape, dtype)
    for create in (mdarray.zeros, mdarray.empty, mdarray.ones):
        with pytest.raises(ValueError, match=re.escape(str(numpy_error.value))):
            create(shape, dtype=dtype)
