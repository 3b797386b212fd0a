"""Advanced indexing without gathering, against NumPy: boolean masks (get and set),
integer arrays along one axis, take, nonzero, argwhere, compress and extract, over drawn
layouts and modes under ``fallback="raise"``, with what moves counted."""

import numpy as np
import pytest
from _layouts import devices, dist_pairs, spread
from hypothesis import given, strategies as st

import mdarray
from mdarray.testing import assert_chunks_hold, assert_dist_equal, strategies as mst


def _chunks_on_host(x):
    return [np.array(c.get() if hasattr(c, "get") else c) for c in x.storage.buffers]


def _assert_same_chunks(before, x):
    after = _chunks_on_host(x)
    assert len(before) == len(after)
    for k, (a, b) in enumerate(zip(before, after)):
        np.testing.assert_array_equal(b, a, err_msg=f"chunk {k} changed", strict=True)


@st.composite
def masked(draw, leading=False):
    """``(x, expected, mask, host mask)``: a mask of x's shape or, with `leading`, of a
    leading part of it; a DistArray (any layout and mode) or a NumPy array."""
    shape = draw(mst.shapes(min_dims=1))
    x, expected = draw(dist_pairs(shape=shape))
    ndim = draw(st.integers(1, len(shape))) if leading else len(shape)
    mask, host = draw(dist_pairs(shape=shape[:ndim], dtype=np.bool_))
    if draw(st.booleans()):
        mask = host
    return x, expected, mask, host


@given(masked())
def test_mask_getitem_matches_numpy(case):
    x, expected, mask, host = case
    want = expected[host]
    with mdarray.options(fallback="raise"):
        got = x[mask]
    assert got.dtype == want.dtype
    assert_dist_equal(got, want)
    assert_chunks_hold(got, want)


@given(masked(leading=True))
def test_mask_getitem_leading_axes_matches_numpy(case):
    x, expected, mask, host = case
    with mdarray.options(fallback="raise"):
        got = x[mask]
    assert_chunks_hold(got, expected[host])


def test_mask_getitem_of_row_blocks_moves_nothing():
    host = np.arange(24.0).reshape(6, 4)
    layout = mdarray.Layout.block((6, 4), devices=devices(0, 1, 2))
    x = mdarray.distributed_array(host, layout)
    mask = x > 6
    with mdarray.count_transfers() as moved, mdarray.options(fallback="raise"):
        got = x[mask]
    assert moved.total == 0
    assert_chunks_hold(got, host[host > 6])


def test_mask_getitem_of_column_blocks_moves_the_reshard_only():
    host = np.arange(24.0).reshape(6, 4)
    x = mdarray.distributed_array(host, mdarray.Layout.block((6, 4), axis=1, devices=devices(0, 1)))
    with mdarray.options(fallback="raise"):
        assert_dist_equal(x[host % 5 == 1], host[host % 5 == 1])


@pytest.mark.parametrize(
    ("shape", "mask_shape"), [((5,), (4,)), ((3, 2), (3, 3)), ((3, 2), (2,)), ((3,), (3, 1))]
)
def test_mask_shape_errors_match_numpy(shape, mask_shape):
    host = np.zeros(shape)
    mask = np.ones(mask_shape, bool)
    x = mdarray.distributed_array(host, mdarray.Layout.block(shape, devices=devices(0, 1)))
    with pytest.raises(IndexError) as numpy_error:
        host[mask]
    for key in (mask, mdarray.asarray(mask)):
        with mdarray.options(fallback="raise"), pytest.raises(IndexError) as ours:
            x[key]
        assert str(ours.value) == str(numpy_error.value)
        with mdarray.options(fallback="raise"), pytest.raises(IndexError):
            x[key] = 1.0


# Assignment ---------------------------------------------------------------------------


@st.composite
def mask_assignments(draw):
    x, expected, mask, host = draw(masked(leading=True))
    selected = expected[host].shape
    kind = draw(st.sampled_from(["full", "broadcast", "scalar"]))
    if kind == "scalar":
        value = draw(dist_pairs(shape=(), dtype=expected.dtype))[1][()].item()
        return x, expected, mask, host, value, value
    shape = selected if kind == "full" else tuple(draw(st.sampled_from([1, n])) for n in selected)
    if kind == "broadcast":
        shape = shape[draw(st.integers(0, len(shape))) :]
    value, host_value = draw(dist_pairs(shape=shape, dtype=expected.dtype))
    form = draw(st.sampled_from(["distarray", "numpy", "list"]))
    if form == "numpy":
        value = host_value
    elif form == "list" and host_value.size:
        value = host_value.tolist()
    return x, expected, mask, host, value, host_value


@given(mask_assignments())
def test_mask_setitem_matches_numpy_in_every_mode(case):
    x, expected, mask, host, value, host_value = case
    want = expected.copy()
    want[host] = host_value
    with mdarray.options(fallback="raise"):
        x[mask] = value
    assert_chunks_hold(x, want)
    assert_dist_equal(x, want)


def test_mask_setitem_writes_every_replica():
    x = mdarray.zeros((4, 3), device=mdarray.Layout((4, 3), spread({0: (), 1: (), 2: (1,)})))
    host = np.zeros((4, 3))
    mask = np.zeros((4, 3), bool)
    mask[1, ::2] = mask[3, 1] = True
    with mdarray.options(fallback="raise"):
        x[mask] = np.array([1.0, 2.0, 3.0])
    host[mask] = [1.0, 2.0, 3.0]
    assert_chunks_hold(x, host)
    for chunk in _chunks_on_host(x)[:2]:
        np.testing.assert_array_equal(chunk, host)


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (np.zeros(2), ValueError),
        (np.zeros((3, 1)), TypeError),
        (np.zeros(4), ValueError),
        ("abc", ValueError),
        (300, OverflowError),
    ],
)
@pytest.mark.parametrize("mode", ["replica", "sum", "max"])
def test_failed_mask_setitem_leaves_every_chunk_unchanged(value, error, mode):
    layout = mdarray.Layout((4, 3), spread({0: (slice(0, 3),), 1: (slice(1, 4),), 2: [(), (0,)]}))
    host = np.arange(12, dtype=np.int8).reshape(4, 3)
    x = mdarray.distributed_array(host, layout, mode)
    mask = host % 4 == 1
    before = _chunks_on_host(x)
    with pytest.raises(error):
        host.copy()[mask] = value
    for key in (mask, mdarray.asarray(mask)):
        with mdarray.options(fallback="raise"), pytest.raises(error):
            x[key] = value
        _assert_same_chunks(before, x)


# Integer arrays -----------------------------------------------------------------------


@st.composite
def integer_keys(draw):
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
    return x, expected, axis, indices, key_indices


@given(integer_keys(), st.booleans())
def test_integer_array_getitem_matches_numpy(case, ellipsis):
    x, expected, axis, indices, key_indices = case
    if ellipsis:
        key = (Ellipsis, key_indices, *[slice(None)] * (x.ndim - axis - 1))
        host_key = (Ellipsis, indices, *[slice(None)] * (x.ndim - axis - 1))
    else:
        key = (*[slice(None)] * axis, key_indices)
        host_key = (*[slice(None)] * axis, indices)
    want = expected[host_key]
    with mdarray.options(fallback="raise"):
        got = x[key if len(key) > 1 else key[0]]
    assert got.dtype == want.dtype
    assert_chunks_hold(got, want)


@given(integer_keys())
def test_take_matches_numpy(case):
    x, expected, axis, indices, key_indices = case
    want = np.take(expected, indices, axis=axis)
    with mdarray.options(fallback="raise"):
        got = np.take(x, key_indices, axis=axis)
        also = mdarray.take(x, mdarray.asarray(indices), axis=axis)
    assert_chunks_hold(got, want)
    assert_chunks_hold(also, want)


@given(integer_keys(), st.sampled_from([(2, 3), (3, 1), (2, 1, 2), (0, 2)]), st.booleans())
def test_integer_array_of_more_axes_getitem_matches_numpy(case, index_shape, ellipsis):
    """An integer array of several axes along one axis (``sample[..., i]``, SciPy's
    bootstrap): its shape in place of the axis, as NumPy's, without a gather."""
    x, expected, axis, _, _ = case
    n = x.shape[axis]
    size = int(np.prod(index_shape))
    if not n and size:
        return
    indices = (np.arange(size) * 7 % max(n, 1) - (size % 2) * (n // 2)).reshape(index_shape)
    for key_indices in (indices, mdarray.asarray(indices)):
        rest = [slice(None)] * (x.ndim - axis - 1)
        key = (Ellipsis, key_indices, *rest) if ellipsis else (*[slice(None)] * axis, key_indices)
        host_key = (Ellipsis, indices, *rest) if ellipsis else (*[slice(None)] * axis, indices)
        want = expected[host_key]
        with mdarray.options(fallback="raise"):
            got = x[key]
            summed = np.sum(got, axis=-1)
        assert got.dtype == want.dtype
        assert_chunks_hold(got, want)
        if axis:  # the taken axes whole in each chunk: a sum over them is NumPy's, bit for bit
            np.testing.assert_array_equal(summed.get(), want.sum(axis=-1), strict=True)


@given(dist_pairs(shape=(3, 4, 2, 3)), st.sampled_from([0, 1, 2]), st.integers(0, 2**6 - 1))
def test_mask_of_several_axes_getitem_matches_numpy(pair, first, bits):
    """``x[..., mask]`` / ``x[:, mask]`` with a boolean mask of several axes (SciPy's
    ``input[..., footprint]``): NumPy's values, without a gather; a mask of the wrong
    shape raises NumPy's IndexError."""
    x, expected = pair
    spans = 4 - first if first else 2
    shape = expected.shape[first : first + spans]
    mask = (np.arange(int(np.prod(shape))) * 5 + bits) % 3 == 0
    mask = mask.reshape(shape)
    for key in ((*[slice(None)] * first, mask), (Ellipsis, mask) if first + spans == 4 else None):
        if key is None:
            continue
        with mdarray.options(fallback="raise"):
            got = x[key]
        assert_chunks_hold(got, expected[key])
    wrong = np.ones((*shape[:-1], shape[-1] + 1), bool)
    with pytest.raises(IndexError) as numpy_error:
        expected[(*[slice(None)] * first, wrong)]
    with pytest.raises(IndexError) as ours:
        x[(*[slice(None)] * first, wrong)]
    assert str(ours.value) == str(numpy_error.value)


@pytest.mark.parametrize("indices", [[5], [-6], np.array([0, 9]), np.array([1.0])])
def test_integer_array_errors_match_numpy(indices):
    host = np.arange(10.0).reshape(5, 2)
    x = mdarray.distributed_array(host, mdarray.Layout.block((5, 2), devices=devices(0, 1)))
    with pytest.raises(IndexError) as numpy_error:
        host[indices]
    with mdarray.options(fallback="raise"), pytest.raises(IndexError) as ours:
        x[indices]
    assert str(ours.value) == str(numpy_error.value)


def test_integer_array_getitem_moves_only_the_requested_rows():
    host = np.arange(32.0).reshape(8, 4)
    layout = mdarray.Layout.block((8, 4), devices=devices(0, 1))
    x = mdarray.distributed_array(host, layout)
    indices = np.array([7, 0, 7, 5])
    # The result's first half (rows 7 and 0) is on device 0, which lacks row 7; its
    # second half (rows 7 and 5) is on device 1, which holds both.
    with mdarray.count_transfers() as moved, mdarray.options(fallback="raise"):
        got = x[indices]
    assert_chunks_hold(got, host[indices])
    first, last = layout.devices[0], layout.devices[-1]
    between_devices = sum(n for pair, n in moved.bytes.items() if "host" not in pair)
    assert between_devices == (4 * host.itemsize if first != last else 0)
    assert moved[(first, last)] == 0
    # The host sends each chunk its positions into the rows it fetched.
    assert moved.total - between_devices == indices.size * np.dtype(np.intp).itemsize


# nonzero, argwhere, compress, extract -----------------------------------------------------


@given(st.data())
def test_nonzero_and_argwhere_match_numpy(data):
    shape = data.draw(mst.shapes(min_dims=1))
    x, expected = data.draw(dist_pairs(shape=shape))
    with mdarray.options(fallback="raise"):
        got = np.nonzero(x)
        api = mdarray.nonzero(x)
        where = np.argwhere(x)
    want = np.nonzero(expected)
    assert len(got) == len(want) == len(api)
    for g, a, w in zip(got, api, want):
        assert g.dtype == w.dtype
        assert_chunks_hold(g, w)
        assert_chunks_hold(a, w)
    assert_chunks_hold(where, np.argwhere(expected))


def test_nonzero_of_row_blocks_moves_nothing():
    host = np.array([[0, 1, 0], [2, 0, 3], [0, 0, 4], [5, 0, 0]])
    x = mdarray.distributed_array(host, mdarray.Layout.block((4, 3), devices=devices(0, 1)))
    with mdarray.count_transfers() as moved, mdarray.options(fallback="raise"):
        rows, cols = np.nonzero(x)
    assert moved.total == 0
    assert_chunks_hold(rows, np.nonzero(host)[0])
    assert_chunks_hold(cols, np.nonzero(host)[1])


@given(st.data())
def test_compress_and_extract_match_numpy(data):
    shape = data.draw(mst.shapes(min_dims=1))
    x, expected = data.draw(dist_pairs(shape=shape))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    condition = np.array(data.draw(st.lists(st.booleans(), max_size=shape[axis])), dtype=bool)
    selector, host_selector = data.draw(dist_pairs(shape=shape, dtype=np.int8))
    with mdarray.options(fallback="raise"):
        compressed = np.compress(condition, x, axis=axis)
        extracted = np.extract(selector, x)
    assert_chunks_hold(compressed, np.compress(condition, expected, axis=axis))
    assert_chunks_hold(extracted, np.extract(host_selector, expected))


def test_compress_errors_match_numpy():
    host = np.arange(5)
    x = mdarray.asarray(host)
    for condition, error in (([0, 0, 0, 0, 0, 1], IndexError), ([[1]], ValueError)):
        with pytest.raises(error) as numpy_error:
            np.compress(condition, host)
        with mdarray.options(fallback="raise"), pytest.raises(error) as ours:
            np.compress(condition, x)
        assert str(ours.value) == str(numpy_error.value)


@given(st.data())
def test_zero_d_masks_match_numpy(data):
    """A 0-d boolean mask (the array API's own case, ``x[xp.asarray(True)]``) is a new
    first axis of length one or zero, for get and set, natively (``fallback="raise"``)."""
    shape = data.draw(mst.shapes(max_dims=2))
    x, expected = data.draw(dist_pairs(shape=shape, dtype=np.float64))
    chosen = data.draw(st.booleans())
    mask = data.draw(st.sampled_from([mdarray.asarray(chosen), np.asarray(chosen)]))
    with mdarray.options(fallback="raise"):
        got = x[mask]
        assert got.shape == expected[np.asarray(chosen)].shape
        np.testing.assert_array_equal(got.get(), expected[np.asarray(chosen)])
        value = data.draw(st.sampled_from([7.0, np.full((1, *shape), 3.0), np.full(shape, 2.0)]))
        target = x.change_mode("replica")
        host = expected.copy()
        host[np.asarray(chosen)] = value
        target[mask] = value if np.ndim(value) == 0 else mdarray.asarray(value, device=x.device)
        np.testing.assert_array_equal(target.get(), host)


def test_zero_d_mask_value_errors_match_numpy():
    x = mdarray.asarray(np.zeros((2, 3)))
    for chosen in (True, False):
        with pytest.raises(ValueError, match="broadcast"):
            np.zeros((2, 3))[np.asarray(chosen)] = np.ones((2, 2))
        with pytest.raises(ValueError, match="broadcast"):
            x[np.asarray(chosen)] = np.ones((2, 2))


def test_a_zero_d_view_writes_into_a_zero_d_array():
    x = mdarray.asarray(1.5)
    x[...] = mdarray.asarray(np.full(1, 9.0))[0]
    assert x.get() == 9.0


@given(st.data())
def test_integer_arrays_on_leading_axes_match_numpy(data):
    """``x[rows, cols]`` (and ``x[i, j, ...]``): points by integer arrays on x's first
    axes, broadcast together, natively (``fallback="raise"``)."""
    shape = data.draw(mst.shapes(min_dims=2, max_dims=3, min_side=1))
    x, expected = data.draw(dist_pairs(shape=shape))
    k = data.draw(st.integers(2, len(shape)))
    index_shape = data.draw(mst.shapes(max_dims=2, max_side=3))
    arrays = []
    for n in shape[:k]:
        host = data.draw(
            st.lists(
                st.integers(-n, n - 1),
                min_size=int(np.prod(index_shape)),
                max_size=int(np.prod(index_shape)),
            )
        )
        host = np.asarray(host, dtype=np.int64).reshape(index_shape)
        arrays.append(mdarray.asarray(host) if data.draw(st.booleans()) else host)
    tail = data.draw(st.sampled_from([(), (Ellipsis,), (slice(None),) * (len(shape) - k)]))
    want = expected[tuple(np.asarray(a.get() if hasattr(a, "get") else a) for a in arrays) + tail]
    with mdarray.options(fallback="raise"):
        got = x[(*arrays, *tail)]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.get(), want)


def test_integer_arrays_on_leading_axes_raise_as_numpy():
    host = np.zeros((3, 4))
    x = mdarray.asarray(host)
    for key in ((np.array([3]), np.array([0])), (np.array([0, 1]), np.array([0, 1, 2]))):
        with pytest.raises(IndexError) as theirs:
            host[key]
        with pytest.raises(IndexError) as ours:
            x[key]
        assert str(ours.value).strip() == str(theirs.value).strip()


@pytest.mark.parametrize(
    ("shape", "index_shape"),
    [
        ((0, 5), (0, 3)),
        ((3, 5), (3, 0)),
        ((1, 5), (4, 2)),
        ((4, 5), (1, 2)),
        ((4, 1, 5), (1, 3, 2)),
    ],
)
def test_take_along_axis_broadcasts_and_takes_nothing_natively(shape, index_shape):
    """The array API's ``take_along_axis`` broadcasts the axes other than `axis`; an empty
    selection is an empty array (array-api-extra's searchsorted relies on both)."""
    rng = np.random.default_rng(0)
    host = rng.standard_normal(shape)
    indices = rng.integers(0, shape[-1], index_shape)
    common = np.broadcast_shapes(shape[:-1], index_shape[:-1])
    want = np.take_along_axis(
        np.broadcast_to(host, (*common, shape[-1])),
        np.broadcast_to(indices, (*common, index_shape[-1])),
        axis=-1,
    )
    x = mdarray.asarray(host)
    with mdarray.options(fallback="raise"):
        for ind in (indices, mdarray.asarray(indices)):
            got = mdarray.take_along_axis(x, ind, axis=-1)
            assert got.shape == want.shape
            np.testing.assert_array_equal(got.get(), want)


@given(st.data())
def test_a_mask_along_one_axis_among_slices_matches_numpy(data):
    """``x[mask, :]``, ``x[:, mask]``, ``x[..., mask]`` (a 1-D mask of one axis, the other
    items full slices or an Ellipsis), get and set, natively (``fallback="raise"``)."""
    shape = data.draw(mst.shapes(min_dims=2, max_dims=3, min_side=1))
    x, expected = data.draw(dist_pairs(shape=shape))
    axis = data.draw(st.integers(0, len(shape) - 1))
    host = np.asarray(
        data.draw(st.lists(st.booleans(), min_size=shape[axis], max_size=shape[axis]))
    )
    mask = mdarray.asarray(host) if data.draw(st.booleans()) else host
    if data.draw(st.booleans()) and axis == len(shape) - 1:
        key, host_key = (Ellipsis, mask), (Ellipsis, host)
    else:
        key = (*(slice(None),) * axis, mask, *(slice(None),) * (len(shape) - axis - 1))
        host_key = (*(slice(None),) * axis, host, *(slice(None),) * (len(shape) - axis - 1))
    with mdarray.options(fallback="raise"):
        got = x[key]
        assert got.shape == expected[host_key].shape
        np.testing.assert_array_equal(got.get(), expected[host_key])
        target = x.change_mode("replica")
        target[key] = 1
    want = expected.copy()
    want[host_key] = 1
    np.testing.assert_array_equal(target.get(), want)


def test_a_mask_of_the_wrong_length_raises_as_numpy():
    host = np.zeros((3, 5))
    key = (slice(None), np.array([True, False]))
    with pytest.raises(IndexError) as theirs:
        host[key]
    with pytest.raises(IndexError) as ours:
        mdarray.asarray(host)[key]
    assert str(ours.value) == str(theirs.value)


@given(st.data())
def test_integer_arrays_on_leading_axes_write_as_numpy(data):
    """``x[rows, cols] = value``: every copy of each point written, the last value where
    a point repeats (NumPy's order), a scalar, a host array or a DistArray value,
    natively (``fallback="raise"``)."""
    shape = data.draw(mst.shapes(min_dims=2, max_dims=3, min_side=1))
    x, expected = data.draw(dist_pairs(shape=shape, dtype=np.float64))
    count = data.draw(st.integers(0, 5))
    arrays = [
        np.asarray(
            data.draw(st.lists(st.integers(-n, n - 1), min_size=count, max_size=count)),
            dtype=np.int64,
        )
        for n in shape[:2]
    ]
    keys = [mdarray.asarray(a) if data.draw(st.booleans()) else a for a in arrays]
    kind = data.draw(st.sampled_from(["scalar", "host", "distributed"]))
    values = np.arange(count * int(np.prod(shape[2:])), dtype=np.float64).reshape(
        (count, *shape[2:])
    )
    value = {"scalar": 9.0, "host": values, "distributed": mdarray.asarray(values)}[kind]
    want = expected.copy()
    want[tuple(arrays)] = 9.0 if kind == "scalar" else values
    with mdarray.options(fallback="raise"):
        x = x.change_mode("replica")
        x[tuple(keys)] = value
    np.testing.assert_array_equal(x.get(), want)
