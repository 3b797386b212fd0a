"""Manipulation functions against NumPy: relabelings keep the mode and move no data."""

import itertools

import numpy as np
import pytest
from _layouts import devices, dist_pairs, spread
from hypothesis import example, given, strategies as st

import mdarray
from mdarray.testing import assert_chunks_hold, assert_dist_equal, strategies as mst


@given(st.data())
def test_transposes_match_numpy_without_transfers(data):
    x, expected = data.draw(dist_pairs())
    axes = tuple(data.draw(st.permutations(range(x.ndim))))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        results = [np.transpose(x, axes), mdarray.permute_dims(x, axes), x.T, x.transpose()]
        if x.ndim >= 2:
            results += [x.mT, np.matrix_transpose(x), np.swapaxes(x, 0, -1)]
            results += [np.moveaxis(x, 0, -1)]
    assert moved.total == 0
    wanted = [np.transpose(expected, axes), np.transpose(expected, axes), expected.T]
    wanted += [expected.T]
    if x.ndim >= 2:
        wanted += [np.matrix_transpose(expected), np.matrix_transpose(expected)]
        wanted += [np.swapaxes(expected, 0, -1), np.moveaxis(expected, 0, -1)]
    for got, want in zip(results, wanted):
        assert got.mode is x.mode
        assert_chunks_hold(got, want)


@st.composite
def reshapes(draw):
    x, expected = draw(dist_pairs())
    factors = []
    n = expected.size
    while n > 1 and len(factors) < 4:
        f = draw(st.sampled_from([d for d in range(2, n + 1) if n % d == 0]))
        factors.append(f)
        n //= f
    if n > 1:
        factors.append(n)
    if expected.size == 0:
        factors = [0, *draw(st.lists(st.integers(1, 3), max_size=2))]
    ones = draw(st.lists(st.integers(0, len(factors)), max_size=2))
    for position in ones:
        factors.insert(position, 1)
    shape = tuple(draw(st.permutations(factors)))
    if shape and expected.size and draw(st.booleans()):
        shape = (-1, *shape[1:])
    return x, expected, shape


@example(
    (
        mdarray.distributed_array(
            np.arange(12), spread({0: slice(0, 12, 2), 1: slice(1, 12, 2)}), mode="sum"
        ),
        np.arange(12),
        (3, 4),
    )
)
@given(reshapes())
def test_reshape_matches_numpy_and_keeps_the_mode(case):
    x, expected, shape = case
    with mdarray.options(fallback="raise"):
        y = mdarray.reshape(x, shape)
        z = x.reshape(shape, order="F")
        flat = np.ravel(x)
    assert y.mode is x.mode
    assert_chunks_hold(y, expected.reshape(shape))
    assert_dist_equal(z, expected.reshape(shape, order="F"))
    assert_dist_equal(flat, expected.ravel())


@pytest.mark.parametrize(
    ("layout", "shape"),
    [
        (mdarray.Layout.block((12,), devices=devices(0, 1)), (4, 3)),
        (mdarray.Layout.block((4, 6), devices=devices(0, 1)), (2, 2, 3, 2)),
        (mdarray.Layout.block((4, 6), axis=1, devices=devices(0, 1)), (4, 2, 3)),
        (mdarray.Layout.grid((4, 6, 2), (2, 2), devices=devices(0, 1, 2, 3)), (4, 12)),
        (mdarray.Layout((12,), spread({0: slice(0, 12, 2), 1: slice(1, 12, 2)})), (3, 2, 2)),
    ],
)
def test_reshape_inside_chunks_moves_nothing(layout, shape):
    expected = np.arange(np.prod(layout.shape)).reshape(layout.shape)
    x = mdarray.distributed_array(expected, layout)
    with mdarray.count_transfers() as moved:
        y = mdarray.reshape(x, shape, copy=False)
    assert moved.total == 0
    assert_dist_equal(y, expected.reshape(shape))


def test_reshape_that_needs_data_movement_reshards_or_refuses_with_copy_false():
    x = mdarray.arange(12, device=mdarray.Layout.block((12,), devices=devices(0, 1, 2)))
    with pytest.raises(ValueError, match="copy=False"):
        mdarray.reshape(x, (4, 3), copy=False)
    assert_dist_equal(mdarray.reshape(x, (4, 3)), np.arange(12).reshape(4, 3))
    with pytest.raises(ValueError, match="cannot reshape array of size 12 into shape"):
        mdarray.reshape(x, (5, -1))


@given(st.data())
def test_axis_relabelings_match_numpy_without_transfers(data):
    x, expected = data.draw(dist_pairs())
    axis = data.draw(st.integers(-x.ndim - 1, x.ndim))
    flip_axis = data.draw(st.none() | st.integers(0, max(x.ndim - 1, 0))) if x.ndim else None
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        expanded = np.expand_dims(x, axis)
        squeezed = np.squeeze(expanded, axis=axis)
        flipped = np.flip(x, flip_axis)
        broadcast = np.broadcast_to(x, (2, *x.shape))
        parts = mdarray.unstack(expanded, axis=axis)
    assert moved.total == 0
    assert_chunks_hold(expanded, np.expand_dims(expected, axis))
    assert_chunks_hold(squeezed, expected)
    assert_chunks_hold(flipped, np.flip(expected, flip_axis))
    assert_chunks_hold(broadcast, np.broadcast_to(expected, (2, *x.shape)))
    assert len(parts) == 1
    assert_chunks_hold(parts[0], expected)


def test_squeeze_of_a_long_axis_raises_like_numpy():
    with pytest.raises(ValueError, match="size not equal to one"):
        mdarray.squeeze(mdarray.zeros((2, 1)), axis=0)


def test_broadcast_arrays_and_errors():
    a, b = mdarray.broadcast_arrays(mdarray.ones((2, 1)), np.arange(3.0))
    assert_dist_equal(b, np.broadcast_to(np.arange(3.0), (2, 3)))
    assert a.shape == (2, 3)
    with pytest.raises(ValueError, match="could not be broadcast"):
        mdarray.broadcast_to(mdarray.ones(3), (2, 4))


@pytest.mark.parametrize("shape", [3, np.int64(3), (np.int64(2), 3)])
def test_broadcast_to_takes_a_shape_as_numpy_does(shape):
    # A NumPy integer is a shape of one axis, as a Python int is.
    assert_dist_equal(
        mdarray.broadcast_to(mdarray.ones(1), shape), np.broadcast_to(np.ones(1), shape)
    )


@given(st.data())
def test_concat_and_stack_match_numpy_without_transfers(data):
    shape = data.draw(mst.shapes(min_dims=1))
    x, a = data.draw(dist_pairs(shape=shape))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    other = list(shape)
    other[axis] = data.draw(st.integers(0, 3))
    y, b = data.draw(dist_pairs(shape=tuple(other), dtype=data.draw(mst.dtypes())))
    dtype = np.result_type(a, b)
    if not np.can_cast(b.dtype, dtype, "same_kind") or not np.can_cast(a.dtype, dtype):
        return
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        joined = np.concatenate([x, y], axis=axis)
        stacked = mdarray.stack([x, x], axis=axis)
    if x.mode is y.mode and x.dtype == y.dtype:
        assert moved.total == 0
        assert joined.mode is x.mode
    assert_chunks_hold(joined, np.concatenate([a, b], axis=axis))
    assert_chunks_hold(stacked, np.stack([a, a], axis=axis))
    with mdarray.options(fallback="raise"):
        assert_dist_equal(mdarray.concat([x, y], axis=None), np.concatenate([a, b], axis=None))


def test_concat_copies_the_chunks():
    x = mdarray.zeros(4, device=mdarray.Layout.block(4, devices=devices(0, 1)))
    y = mdarray.concat([x, x])
    y[0] = 1
    assert x.get()[0] == 0


def test_concat_errors_match_numpy():
    with pytest.raises(ValueError, match="along dimension 1, the array at index 0 has size 3"):
        mdarray.concat([mdarray.zeros((2, 3)), mdarray.zeros((2, 2))])
    with pytest.raises(ValueError, match="same number of dimensions"):
        mdarray.concat([mdarray.zeros((2, 3)), mdarray.zeros(2)])
    with pytest.raises(ValueError, match="zero-dimensional"):
        mdarray.concat([mdarray.zeros(()), mdarray.zeros(())])


def test_broadcast_arrays_is_a_list_in_the_namespace_and_a_tuple_in_numpy():
    a, b = mdarray.ones((2, 1)), mdarray.ones(3)
    assert isinstance(mdarray.broadcast_arrays(a, b), list)
    assert isinstance(np.broadcast_arrays(a, b), tuple)
    assert [x.shape for x in np.broadcast_arrays(a, b)] == [(2, 3), (2, 3)]


@pytest.mark.parametrize("first", list(itertools.permutations(range(3))))
@pytest.mark.parametrize("second", [(0, 1, 2), (2, 0, 1), (1, 2, 0), (1, 0, 2)])
def test_a_permutation_of_a_permutation_is_numpys_and_a_view(first, second):
    host = np.arange(24.0).reshape(2, 3, 4)
    rest = (slice(0, 3), slice(0, 4))
    x = mdarray.distributed_array(
        host, spread({0: [(slice(0, 1), *rest)], 1: [(slice(1, 2), *rest)]})
    )
    y = np.transpose(np.transpose(x, first), second)
    want = np.transpose(np.transpose(host, first), second)
    np.testing.assert_array_equal(y.get(), want)
    y[(0,) * 3] = -1.0  # a view: the write reaches x, as NumPy's
    host = host.copy()
    np.transpose(np.transpose(host, first), second)[(0,) * 3] = -1.0
    np.testing.assert_array_equal(x.get(), host)
    x += 1  # and x's writes reach it
    np.testing.assert_array_equal(y.get(), np.transpose(np.transpose(host + 1, first), second))


def test_broadcast_arrays_give_arrays_of_the_common_shape_back_writable():
    """NumPy returns an operand that needs no broadcasting as a writable array (SciPy's
    iterative solvers write into ``broadcast_arrays``' results); the broadcast ones are
    read-only views here."""
    host = np.arange(6.0).reshape(2, 3)
    a, b = mdarray.ones(3), mdarray.asarray(host)
    for results in (np.broadcast_arrays(a, b), mdarray.broadcast_arrays(a, b)):
        assert results[1] is b
        np.testing.assert_array_equal(results[0].get(), np.ones((2, 3)))
        results[1][0, 0] = -1.0
    assert b[0, 0].get() == -1.0


AXIS_ERRORS = {
    "moveaxis source out of bounds": lambda a: np.moveaxis(a, 5, 0),
    "moveaxis destination out of bounds": lambda a: np.moveaxis(a, 0, -4),
    "moveaxis repeated source": lambda a: np.moveaxis(a, [0, 0], [0, 1]),
    "moveaxis lengths differ": lambda a: np.moveaxis(a, [0, 1], [0]),
    "transpose repeated": lambda a: np.transpose(a, (1, 1)),
    "transpose out of bounds": lambda a: np.transpose(a, (0, 2)),
    "transpose too few": lambda a: np.transpose(a, (0,)),
    "expand_dims repeated": lambda a: np.expand_dims(a, (0, 0)),
    "flip out of bounds": lambda a: np.flip(a, 3),
}


@pytest.mark.parametrize("case", sorted(AXIS_ERRORS))
def test_axis_errors_are_numpys(case):
    """Clients match NumPy's messages (SciPy's input validation tests look for
    ``source: axis ... out of bounds``): the same type and text."""
    value = np.zeros((2, 3))
    with pytest.raises((ValueError, IndexError)) as theirs:
        AXIS_ERRORS[case](value)
    with pytest.raises(type(theirs.value)) as ours:
        AXIS_ERRORS[case](mdarray.asarray(value))
    assert str(ours.value) == str(theirs.value)
