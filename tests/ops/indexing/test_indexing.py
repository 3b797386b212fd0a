"""Indexing against NumPy: basic keys per chunk with no transfers, assignment in every
mode, and failed assignments leaving every chunk as it was."""

import numpy as np
import pytest
from _layouts import devices, dist_pairs, row_blocks, spread
from hypothesis import example, given, strategies as st
from hypothesis.extra import numpy as hnp

import mdarray
from mdarray._array.array import wrap
from mdarray.testing import assert_chunks_hold, assert_dist_equal, strategies as mst


def _chunks_on_host(x):
    return [np.array(c.get() if hasattr(c, "get") else c) for c in x.storage.buffers]


def _assert_same_chunks(before, x):
    after = _chunks_on_host(x)
    assert len(before) == len(after)
    for k, (a, b) in enumerate(zip(before, after)):
        np.testing.assert_array_equal(b, a, err_msg=f"chunk {k} changed", strict=True)


@st.composite
def arrays_and_keys(draw, **kwargs):
    x, expected = draw(dist_pairs(**kwargs))
    key = draw(hnp.basic_indices(expected.shape, allow_newaxis=True, allow_ellipsis=True))
    return x, expected, key


@example(
    (
        mdarray.distributed_array(np.arange(6), spread({0: slice(0, 6, 2), 1: slice(1, 6, 2)})),
        np.arange(6),
        slice(None, None, -2),
    )
)
@given(arrays_and_keys())
def test_basic_getitem_matches_numpy_without_transfers(case):
    x, expected, key = case
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        y = x[key]
    assert moved.total == 0
    assert y.mode is x.mode
    assert_dist_equal(y, expected[key])
    assert_chunks_hold(y, expected[key])


@given(st.data())
def test_integer_indexing_gives_0d_arrays_and_iter_rows(data):
    shape = data.draw(mst.shapes(min_dims=1, min_side=1))
    x, expected = data.draw(dist_pairs(shape=shape))
    with mdarray.options(fallback="raise"):
        element = x[(0,) * x.ndim]
        rows = list(x)
    assert isinstance(element, mdarray.DistArray)
    assert element.shape == ()
    assert element.get() == expected[(0,) * x.ndim]
    assert len(rows) == x.shape[0]
    for row, want in zip(rows, expected):
        assert_dist_equal(row, want)


@st.composite
def assignments(draw):
    x, expected, key = draw(arrays_and_keys())
    selected = expected[key].shape
    drop = draw(st.integers(0, len(selected)))
    value_shape = tuple(1 if draw(st.booleans()) else n for n in selected[drop:])
    kind = draw(st.sampled_from(["scalar", "numpy", "list", "distarray"]))
    if kind == "scalar":
        value = draw(dist_pairs(shape=(), dtype=expected.dtype))[1][()].item()
        return x, expected, key, value, value
    if kind == "distarray":
        value, host = draw(dist_pairs(shape=value_shape, dtype=expected.dtype))
        return x, expected, key, value, host
    host = draw(dist_pairs(shape=value_shape, dtype=expected.dtype))[1]
    # tolist() of an empty array loses its trailing axes, so empty values stay arrays.
    as_list = kind == "list" and host.size
    return x, expected, key, host.tolist() if as_list else host, host


@given(assignments())
def test_setitem_matches_numpy_in_every_mode(case):
    x, expected, key, value, host_value = case
    want = expected.copy()
    want[key] = host_value
    with mdarray.options(fallback="raise"):
        x[key] = value
    assert_chunks_hold(x, want)
    assert_dist_equal(x, want)


def test_setitem_writes_every_replica():
    x = mdarray.zeros((4, 3), device=mdarray.Layout((4, 3), spread({0: (), 1: (), 2: ()})))
    x[1:3, ::-2] = [7, 8]
    for chunk in _chunks_on_host(x):
        np.testing.assert_array_equal(chunk[1:3], [[8, 0, 7], [8, 0, 7]])


@pytest.mark.parametrize(
    ("key", "value", "error"),
    [
        ((5,), 1, IndexError),
        ((0, 0, 0), 1, IndexError),
        ((1.5,), 1, IndexError),
        ((slice(None),), np.zeros(5), ValueError),
        ((slice(None), 0), np.zeros((2, 2)), ValueError),
        ((0,), "abc", ValueError),
        ((0,), 300, OverflowError),
    ],
)
@pytest.mark.parametrize("mode", ["replica", "sum", "max"])
def test_failed_setitem_leaves_every_chunk_unchanged(key, value, error, mode):
    layout = mdarray.Layout((4, 3), spread({0: (slice(0, 3),), 1: (slice(1, 4),), 2: [(), (0,)]}))
    x = mdarray.distributed_array(np.arange(12, dtype=np.int8).reshape(4, 3), layout, mode)
    before = _chunks_on_host(x)
    numpy_error = None
    try:
        np.arange(12, dtype=np.int8).reshape(4, 3)[key] = value
    except Exception as e:  # the same exception type as NumPy's
        numpy_error = type(e)
    assert numpy_error is error
    with pytest.raises(error):
        x[key] = value
    _assert_same_chunks(before, x)


def test_failed_setitem_from_a_distarray_of_the_wrong_shape_changes_nothing():
    x = mdarray.arange(6, device=mdarray.Layout.block(6, devices=devices(0, 1)))
    before = _chunks_on_host(x)
    with pytest.raises(ValueError, match=r"could not broadcast input array from shape \(4,\)"):
        x[1:4] = mdarray.arange(4)
    _assert_same_chunks(before, x)


@pytest.mark.parametrize(
    "key", [(3,), (-4,), (0, 0, 0), 1.5, "a", (slice(0, 2), slice(0, 2), 0), (Ellipsis, Ellipsis)]
)
def test_getitem_errors_match_numpy(key):
    host = np.arange(6).reshape(3, 2)
    x = mdarray.distributed_array(host, mdarray.Layout.block((3, 2), devices=devices(0, 1)))
    with pytest.raises(IndexError) as numpy_error:
        host[key]
    with pytest.raises(IndexError) as ours:
        x[key]
    assert str(ours.value) == str(numpy_error.value)


def test_advanced_indexing_goes_through_the_fallback_policy():
    """Masks and one integer array among full slices run natively, get and set
    (tests/ops/indexing/test_advanced_indexing.py, test_index_writes.py); other advanced keys
    gather."""
    host = np.arange(12.0).reshape(4, 3)
    x = mdarray.distributed_array(host, mdarray.Layout.block((4, 3), devices=devices(0, 1)))
    with mdarray.options(fallback="raise"), pytest.raises(TypeError, match="advanced index"):
        x[[0, 2], 1:]
    with mdarray.options(fallback="raise"), pytest.raises(TypeError, match="advanced index"):
        x[[3, 0], 1:] = -1.0
    with mdarray.options(fallback="allow"):
        assert_dist_equal(x[[0, 2], 1:], host[[0, 2], 1:])
        assert_dist_equal(x[x > 4], host[host > 4])
        x[[3, 0], 1:] = -1.0
    host[[3, 0], 1:] = -1.0
    assert_dist_equal(x, host)


@given(st.data())
def test_mask_assignment_of_a_scalar_runs_per_chunk(data):
    shape = data.draw(mst.shapes(min_dims=1))
    x, expected = data.draw(dist_pairs(shape=shape, dtype=np.float64))
    mask = x > 0
    want = expected.copy()
    want[expected > 0] = -3.0
    with mdarray.options(fallback="raise"):
        x[mask] = -3.0
    assert_chunks_hold(x, want)


@pytest.mark.skipif(mdarray.default_backend() != "cpu", reason="CuPy broadcasts are writable")
def test_assigning_into_a_broadcast_view_raises_before_writing():
    x = mdarray.broadcast_to(mdarray.arange(3), (2, 3))
    with pytest.raises(ValueError, match="read-only"):
        x[0] = 5


@pytest.mark.parametrize("key", [1, (1, 2), (-1, 0)])
def test_an_integer_per_axis_gives_a_copy_as_numpy_gives_a_scalar(key):
    """NumPy's ``a[1, 2]`` is a scalar: later writes to `a` do not reach it. ``a[1, ...]``
    is a view, and they do."""
    a = np.arange(12.0).reshape(3, 4) if isinstance(key, tuple) else np.arange(4.0)
    x = mdarray.distributed_array(a, mdarray.Layout.block(a.shape, devices=mdarray.devices()))
    element, view = x[key], x[(*np.atleast_1d(key).tolist(), ...)]
    want = a[key]
    x[...] = -1
    np.testing.assert_array_equal(element.get(), want)
    np.testing.assert_array_equal(view.get(), -1.0)


def _no_gathered_regions(monkeypatch):
    """Make a write that gathers the value's regions before copying them fail."""

    def refuse(*args):
        raise AssertionError("the value's region was gathered before the write")

    monkeypatch.setattr("mdarray._ops.indexing.indexing.region_value", refuse)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
@pytest.mark.parametrize(
    "key", [(slice(1, -1), slice(1, -1)), (slice(None, None, 2), slice(2, None)), (Ellipsis,)]
)
def test_a_misaligned_distarray_value_is_copied_straight_into_the_chunks(monkeypatch, key, dtype):
    """``new[1:-1, 1:-1] = s`` (Jacobi's update): s's rows lie otherwise than the
    selection's; each piece of s is copied into the chunks that take it, on every
    replica, with no gathered copy of each chunk's region between."""
    host = np.arange(12 * 9, dtype=np.float32).reshape(12, 9)
    index_map = spread(
        {0: (slice(0, 5),), 1: [(slice(5, 9),), (slice(3, 12),)], 2: (slice(9, 12),)}
    )
    x = mdarray.distributed_array(host, mdarray.Layout((12, 9), index_map))
    want = host.copy()
    shape = want[key].shape
    value_host = np.arange(-np.prod(shape), 0).reshape(shape).astype(dtype)
    value = mdarray.distributed_array(
        value_host, mdarray.Layout.block(shape, devices=devices(2, 0, 1))
    )
    want[key] = value_host
    _no_gathered_regions(monkeypatch)
    x[key] = value
    assert_chunks_hold(x, want)
    assert_dist_equal(x, want)


@pytest.mark.parametrize("view", [True, False])
def test_a_value_in_the_arrays_own_memory_is_written_as_numpy_writes_it(view):
    """``x[1:4] = x[:3]``: the value reads memory the write changes (x's view, or another
    array value on x's memory, which copy on write moves x off first); NumPy's value is
    the one read before any write."""
    host = np.arange(40.0).reshape(10, 4)
    layout = mdarray.Layout((10, 4), row_blocks((10, 4), parts=3, on=(0, 0, 1)))
    x = mdarray.distributed_array(host, layout)
    if view:
        value = x[:3, :]
        assert value.storage.apart_from(x.storage) is False
    else:  # chunk 0 holds rows 0:3: a value sharing its buffer
        storage = x.storage
        first = mdarray.Layout((3, 4), {layout.chunk_devices[0]: [(slice(0, 3), slice(0, 4))]})
        value = wrap(storage.derive(first, [storage.buffers[0]]))
        assert value.storage.buffers[0] is storage.buffers[0]
    want = host.copy()
    want[1:4, :] = host[:3, :]
    x[1:4, :] = value
    assert_dist_equal(x, want)
