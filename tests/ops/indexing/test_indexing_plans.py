"""The cached plans of basic indexing (`_index_plans.key_plan`, `write_plan`) and the
self-assignment that ends ``x[key] op= y``, against NumPy: keys made hashable, repeated
calls on cached plans, partial modes, overlapping layouts, views of views, negative
steps, and the cases where the self-assignment must not be skipped."""

import numpy as np
import pytest
from _layouts import devices, spread
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import mdarray
from mdarray._core import regions as _regions
from mdarray._ops.indexing import index_plans
from mdarray.testing import _host, assert_dist_equal

ROWS = spread({0: (slice(0, 3), slice(0, 5)), 1: (slice(3, 5), slice(0, 5)),
               2: (slice(5, 6), slice(0, 5)), 3: (slice(6, 8), slice(0, 5))})  # fmt: skip
OVERLAPPING = spread({0: (slice(0, 5), slice(0, 5)), 1: (slice(3, 8), slice(0, 5))})
MODES = ("replica", "sum", "max")


def _pair(index_map, mode="replica", dtype=np.float64):
    host = np.arange(40, dtype=dtype).reshape(8, 5) - 7
    x = mdarray.distributed_array(host, index_map)
    return (x if mode == "replica" else x.change_mode(mode)), host.copy()


def _chunks(x):
    return [_host(c).copy() for c in x.storage.buffers]


KEYS = [
    0, -1, 3, (2, 4), (slice(1, None), slice(None)), (slice(None, -1), slice(None)),
    slice(1, 3), slice(None, None, -1), (slice(6, 1, -2), slice(None, None, -3)),
    (Ellipsis, 2), (None, slice(2, 7), None, 1), (), Ellipsis, (slice(5, 5),),
    (slice(-100, 100), slice(3, -1)), (1, Ellipsis), (slice(None), None),
]  # fmt: skip


@pytest.mark.parametrize("index_map", [ROWS, OVERLAPPING], ids=["rows", "overlapping"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_repeated_getitem_and_setitem_match_numpy(index_map, mode, key):
    x, host = _pair(index_map, mode)
    for _ in range(2):  # the second call runs on the cached plans
        assert_dist_equal(x[key], host[key])
    shape = host[key].shape
    value = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 3 + 1
    for _ in range(2):
        x[key] = 2.5
        host[key] = 2.5
        assert_dist_equal(x, host)
        x[key] = mdarray.asarray(value)
        host[key] = value
        assert_dist_equal(x, host)
        x[key] = value  # a NumPy value
        assert_dist_equal(x, host)


@pytest.mark.parametrize("key", [(slice(None, None, -1), 2), (slice(7, 0, -3),), (None, 1)])
def test_distarray_values_broadcast_and_reverse(key):
    x, host = _pair(ROWS)
    shape = host[key].shape
    for value_shape in {shape, shape[1:], (1,) * len(shape), ()}:
        value_host = np.arange(int(np.prod(value_shape)), dtype=np.float64).reshape(value_shape)
        value = mdarray.distributed_array(
            value_host, mdarray.Layout.replicated(value_shape, devices=devices(1))
        )
        x[key] = value
        host[key] = value_host
        assert_dist_equal(x, host)


def test_value_of_another_layout_and_mode_and_dtype():
    x, host = _pair(ROWS)
    y, yhost = _pair(OVERLAPPING, "sum", np.int32)
    x[1:, :] = y[:-1, :]
    host[1:, :] = yhost[:-1, :]
    assert_dist_equal(x, host)


def test_keys_equal_in_value_share_a_plan_but_not_their_types():
    x, host = _pair(ROWS)
    assert_dist_equal(x[np.int64(2)], host[np.int64(2)])
    assert_dist_equal(x[slice(np.int64(1), 4)], host[1:4])
    assert type(x[2, 3]) is type(x[2, 3, ...])
    assert x[2, 3].get() == host[2, 3]
    with pytest.raises(IndexError):
        x[8]
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(IndexError):
        x[1.0]
    with pytest.raises(ValueError, match="could not broadcast"):
        x[1:3] = np.zeros((3, 5))
    with pytest.raises(ValueError, match="could not broadcast"):
        x[1:3] = mdarray.zeros((3, 5))


def test_scalar_key_result_is_a_copy():
    x, host = _pair(ROWS)
    s = x[2, 3]
    x[2, 3] = 100.0
    assert s.get() == host[2, 3]
    v = x[2, 3, ...]
    x[2, 3] = 7.0
    assert v.get() == 7.0


@pytest.mark.parametrize("mode", MODES)
def test_views_of_views_see_writes(mode):
    x, host = _pair(ROWS, mode)
    v = x[1:, ::-1][2:5]
    w = v[::2, 1:3]
    w[...] = -4.0
    host[1:, ::-1][2:5][::2, 1:3] = -4.0
    assert_dist_equal(x, host)
    assert_dist_equal(v, host[1:, ::-1][2:5])
    x[3] = 9.0
    host[3] = 9.0
    assert_dist_equal(w, host[1:, ::-1][2:5][::2, 1:3])


@pytest.mark.parametrize("index_map", [ROWS, OVERLAPPING], ids=["rows", "overlapping"])
@pytest.mark.parametrize("mode", MODES)
def test_augmented_assignment(index_map, mode):
    x, host = _pair(index_map, mode)
    y, yhost = _pair(ROWS)
    for _ in range(3):
        x[1:, :] -= y[:-1, :]
        host[1:, :] -= yhost[:-1, :]
        x[:, ::-2] *= 2
        host[:, ::-2] *= 2
        x[0] += 1
        host[0] += 1
    assert_dist_equal(x, host)


def test_self_assignment_of_a_view_writes_nothing_and_moves_nothing():
    x, _ = _pair(ROWS)
    t = x[1:, :]
    before = _chunks(x)
    with mdarray.count_transfers() as moved:
        x[1:, :] = t
    assert moved.total == 0
    for a, b in zip(before, _chunks(x)):
        np.testing.assert_array_equal(a, b)


def test_self_assignment_of_partial_overlapping_copies_is_written():
    # Written as any value: the owner copy gets the value, the others the identity.
    x, host = _pair(OVERLAPPING, "sum")
    x[1:, :] = x[1:, :]
    assert_dist_equal(x, host)
    buffers = _chunks(x)
    np.testing.assert_array_equal(buffers[1][:2], 0)  # rows 3, 4: chunk 0 owns them


def test_assignment_of_shifted_views_of_itself_is_not_skipped():
    x, host = _pair(ROWS)
    x[1:] = x[:-1]
    host[1:] = host[:-1].copy()
    assert_dist_equal(x, host)
    x[::-1] = x[:]
    host[::-1] = host[:].copy()
    assert_dist_equal(x, host)
    x[2:4] = x[2:4:1][:]  # a view of the view: the same elements, another selection
    assert_dist_equal(x, host)


def test_view_of_another_array_is_written():
    x, host = _pair(ROWS)
    other, other_host = _pair(ROWS)
    other = other * 10
    other_host = other_host * 10
    w = other[1:, :]
    x[1:, :] = w
    host[1:, :] = other_host[1:, :]
    assert_dist_equal(x, host)


def test_writes_after_copy_and_derive_keep_values_apart():
    x, host = _pair(ROWS)
    t = x[1:, :]
    c = x.copy()
    c[1:, :] = t  # t views x, not c
    assert_dist_equal(c, host)
    t[...] = 0.5
    host[1:, :] = 0.5
    x[1:, :] = t
    assert_dist_equal(x, host)
    assert_dist_equal(c, np.arange(40.0).reshape(8, 5) - 7)
    r = x.reshard(x.layout)  # shares memory, a new value
    s = r[1:, :]
    s += 1
    r[1:, :] = s
    assert_dist_equal(x, host)
    host2 = host.copy()
    host2[1:, :] += 1
    assert_dist_equal(r, host2)


@pytest.mark.skipif(mdarray.default_backend() != "cpu", reason="CuPy broadcasts are writable")
def test_self_assignment_into_a_read_only_array_raises():
    x = mdarray.broadcast_to(mdarray.asarray(np.arange(5.0)), (8, 5))
    t = x[1:, :]
    with pytest.raises(ValueError, match="read-only"):
        x[1:, :] = t


@settings(max_examples=60, deadline=None)
@given(data=st.data(), mode=st.sampled_from(MODES), index_map=st.sampled_from([ROWS, OVERLAPPING]))
def test_drawn_augmented_assignment_matches_numpy(data, mode, index_map):
    x, host = _pair(index_map, mode)
    key = data.draw(hnp.basic_indices((8, 5), allow_newaxis=True, allow_ellipsis=True))
    x[key] -= 2
    host[key] -= 2
    assert_dist_equal(x, host)
    view = x[key]
    x[key] = view
    assert_dist_equal(x, host)


STRIDED = spread({0: (slice(0, 8, 2), slice(0, 5)), 1: (slice(1, 8, 2), slice(0, 5))})
COLUMNS = spread({0: (slice(0, 8), slice(0, 2)), 1: (slice(0, 8), slice(1, 5))})


@pytest.mark.parametrize(
    "index_map",
    [ROWS, OVERLAPPING, STRIDED, COLUMNS],
    ids=["rows", "overlapping", "strided", "columns"],
)
def test_a_position_plans_as_its_own_key(index_map):
    """`position_plan` (the plan of a position's segment, shifted) decides what
    `key_plan` decides for the position itself, at every position of every segment,
    negative positions too; out-of-range positions raise NumPy's IndexError."""
    x, host = _pair(index_map)
    layout = x.layout
    keys = [(i,) for i in range(-8, 8)] + [(i, j) for i in range(-8, 8) for j in range(-5, 5)]
    keys += [(i, (1, None, None)) for i in range(8)] + [(i, None) for i in range(8)]

    def comparable(plan):  # the getters compare by identity: their indices instead
        basic, result, parts, groups, copy, blocks = plan
        groups = tuple((d, tuple(entry[:3] for entry in entries)) for d, entries in groups)
        return basic, result, parts, groups, copy, blocks

    for key in keys:
        got = comparable(index_plans.position_plan(layout, key))
        assert got == comparable(index_plans.key_plan(layout, key))
        raw = tuple(slice(*item) if type(item) is tuple else item for item in key)
        assert_dist_equal(x[raw], host[raw])
    for key in [(8,), (-9,), (0, 5), (1, -6)]:
        with pytest.raises(IndexError) as ours:
            x[key]
        with pytest.raises(IndexError) as theirs:
            host[key]
        assert str(ours.value) == str(theirs.value)
    assert [row.get().tolist() for row in x] == host.tolist()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "index_map",
    [ROWS, OVERLAPPING, STRIDED, COLUMNS],
    ids=["rows", "overlapping", "strided", "columns"],
)
def test_a_position_writes_as_its_own_key(index_map, mode):
    """`position_write_plan` decides what `write_plan` decides for the position itself
    (shadowed copies of partial modes included), and ``x[i] = v``, ``x[i, j] = v`` write
    what NumPy writes."""
    x, host = _pair(index_map, mode)
    layout = x.layout
    keys = [(i, j) for i in range(8) for j in range(5)]  # normalized keys, as write_plan's
    keys += [(i, range(1, 5)) for i in range(8)] + [(i, range(5)) for i in range(8)]
    for key in keys:
        shape = (len(key[1]),) if type(key[1]) is range else ()
        for value_shape in {(), shape}:
            got = index_plans.position_write_plan(layout, x.mode, key, value_shape)
            assert got == index_plans.write_plan(layout, x.mode, key, value_shape)
    for value, key in enumerate([(3,), (-1,), (4, 2), (-3, -2), (5, slice(1, None))]):
        x[key] = value
        host[key] = value
        assert_dist_equal(x, host)


def test_numpy_integer_keys_index_as_python_ints():
    """``for i in np.arange(n): x[i]`` takes the cached position plans as Python ints do
    (NumPy's integer scalars of every kind, negative ones too), for reads and writes."""
    x, host = _pair(ROWS)
    for kind in (np.int8, np.int32, np.int64, np.uint16, np.intp):
        for i in range(-8 if np.dtype(kind).kind == "i" else 0, 8):
            key = (kind(i), kind(abs(i) % 5))
            assert _regions.hashable_key(key) == (int(i), abs(i) % 5)
            assert_dist_equal(x[key], host[key])
            assert_dist_equal(x[kind(i)], host[kind(i)])
    x[np.int64(3), np.uint8(2)] = 99.0
    host[3, 2] = 99.0
    assert_dist_equal(x, host)
