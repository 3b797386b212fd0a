"""``x[idx] = value`` for one integer array along one axis, against NumPy, over drawn
layouts and modes under ``fallback="raise"``: duplicates (the last write wins), every
replica written, errors that change nothing, and what moves."""

import numpy as np
import pytest
from _layouts import devices, dist_pairs, spread
from hypothesis import given, strategies as st

import mdarray
from mdarray.testing import assert_chunks_hold, assert_dist_equal, strategies as mst


def _chunks_on_host(x):
    return [np.array(c.get() if hasattr(c, "get") else c) for c in x.storage.buffers]


@st.composite
def integer_assignments(draw):
    """``(x, expected, key, host key, value, host value)``: one 1-D integer array (with
    duplicates and negatives) along a drawn axis, the others full slices; the value a
    scalar, or an array of the selection's shape or broadcast to it (DistArray, NumPy or
    list)."""
    shape = draw(mst.shapes(min_dims=1))
    x, expected = draw(dist_pairs(shape=shape))
    axis = draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    positions = st.integers(-n, n - 1) if n else st.nothing()
    indices = np.array(draw(st.lists(positions, max_size=6 if n else 0)), dtype=np.intp)
    form = draw(st.sampled_from(["numpy", "list", "distarray"]))
    key_indices = {
        "numpy": indices,
        "list": indices.tolist(),
        "distarray": mdarray.asarray(indices),
    }[form]
    if draw(st.booleans()):
        key = (Ellipsis, key_indices, *[slice(None)] * (len(shape) - axis - 1))
        host_key = (Ellipsis, indices, *[slice(None)] * (len(shape) - axis - 1))
    else:
        key = (*[slice(None)] * axis, key_indices)
        host_key = (*[slice(None)] * axis, indices)
    selected = expected[host_key].shape
    kind = draw(st.sampled_from(["full", "broadcast", "scalar"]))
    if kind == "scalar":
        value = draw(dist_pairs(shape=(), dtype=expected.dtype))[1][()].item()
        return x, expected, key, host_key, value, value
    vshape = tuple(draw(st.sampled_from([1, m])) if kind == "broadcast" else m for m in selected)
    if kind == "broadcast":
        vshape = vshape[draw(st.integers(0, len(vshape))) :]
    value, host_value = draw(dist_pairs(shape=vshape, dtype=expected.dtype))
    vform = draw(st.sampled_from(["distarray", "numpy", "list"]))
    if vform == "numpy":
        value = host_value
    elif vform == "list" and host_value.size:
        value = host_value.tolist()
    return x, expected, key, host_key, value, host_value


@given(integer_assignments())
def test_integer_setitem_matches_numpy_in_every_mode(case):
    x, expected, key, host_key, value, host_value = case
    want = expected.copy()
    want[host_key] = host_value
    with mdarray.options(fallback="raise"):
        x[key if len(key) > 1 else key[0]] = value
    assert_chunks_hold(x, want)
    assert_dist_equal(x, want)


def test_duplicates_keep_the_last_write_as_numpy():
    host = np.zeros((5, 2))
    x = mdarray.distributed_array(host, mdarray.Layout.block((5, 2), devices=devices(0, 1)))
    indices = [4, 0, -1, 4, 2, 0]
    value = np.arange(12.0).reshape(6, 2)
    with mdarray.options(fallback="raise"):
        x[indices] = value
        x[:, [1, 1, 0]] = mdarray.asarray(np.array([7.0, 8.0, 9.0]))
    host[indices] = value
    host[:, [1, 1, 0]] = [7.0, 8.0, 9.0]
    assert_chunks_hold(x, host)


@pytest.mark.parametrize("mode", ["replica", "sum", "max"])
def test_integer_setitem_writes_every_replica(mode):
    layout = mdarray.Layout((4, 3), spread({0: (), 1: (), 2: (slice(1, 3),)}))
    host = np.arange(12.0).reshape(4, 3)
    x = mdarray.distributed_array(host, layout, mode)
    with mdarray.options(fallback="raise"):
        x[[1, 3]] = np.array([1.0, 2.0, 3.0])
    host[[1, 3]] = [1.0, 2.0, 3.0]
    assert_chunks_hold(x, host)
    if mode == "replica":
        for chunk in _chunks_on_host(x)[:2]:
            np.testing.assert_array_equal(chunk, host)


@pytest.mark.parametrize(
    ("indices", "value", "error"),
    [
        ([5], 1, IndexError),
        ([0, -5], 1, IndexError),
        (np.array([1.0]), 1, IndexError),
        ([0, 1], np.zeros(4), ValueError),
        ([0, 1], np.zeros((3, 3)), ValueError),
        ([0, 1], "abc", ValueError),
        ([0, 1], 300, OverflowError),
    ],
)
@pytest.mark.parametrize("mode", ["replica", "sum", "max"])
def test_failed_integer_setitem_leaves_every_chunk_unchanged(indices, value, error, mode):
    layout = mdarray.Layout((4, 3), spread({0: (slice(0, 3),), 1: (slice(1, 4),), 2: [(), (0,)]}))
    host = np.arange(12, dtype=np.int8).reshape(4, 3)
    x = mdarray.distributed_array(host, layout, mode)
    before = _chunks_on_host(x)
    with pytest.raises(error) as numpy_error:
        host.copy()[indices] = value
    with mdarray.options(fallback="raise"), pytest.raises(error) as ours:
        x[indices] = value
    if error is not OverflowError:
        assert str(ours.value) == str(numpy_error.value)
    after = _chunks_on_host(x)
    for k, (a, b) in enumerate(zip(before, after)):
        np.testing.assert_array_equal(b, a, err_msg=f"chunk {k} changed", strict=True)


def test_integer_setitem_of_a_scalar_moves_nothing():
    host = np.arange(32.0).reshape(8, 4)
    layout = mdarray.Layout((8, 4), spread({0: [(slice(0, 5),)], 1: [(slice(3, 8),)]}))
    x = mdarray.distributed_array(host, layout)
    with mdarray.count_transfers() as moved, mdarray.options(fallback="raise"):
        x[[7, 0, 4, -1]] = -1.0
        x[:, np.array([2])] = 5.0
    assert moved.total == 0
    host[[7, 0, 4, -1]] = -1.0
    host[:, [2]] = 5.0
    assert_chunks_hold(x, host)


def test_integer_setitem_moves_only_the_kept_rows():
    host = np.zeros((8, 4))
    layout = mdarray.Layout.block((8, 4), devices=devices(0, 1))
    x = mdarray.distributed_array(host, layout)
    rows = np.arange(12.0).reshape(3, 4)
    # The value's rows 1 and 2 are the kept ones (x's rows 1 and 6; row 2 is the last
    # write to row 6), on the devices of x's chunks that hold those rows; row 0 is not read.
    value = mdarray.distributed_array(
        rows,
        mdarray.Layout((3, 4), spread({0: [(slice(0, 1),), (slice(1, 2),)], 1: (slice(2, 3),)})),
    )
    with mdarray.count_transfers() as moved, mdarray.options(fallback="raise"):
        x[[6, 1, 6]] = value
    host[[6, 1, 6]] = rows
    assert_chunks_hold(x, host)
    between_devices = sum(n for pair, n in moved.bytes.items() if "host" not in pair)
    assert between_devices == 0
