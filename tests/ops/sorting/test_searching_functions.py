"""argmax/argmin against NumPy over drawn layouts and modes: ties, NaNs, flat indices."""

import warnings

import numpy as np
import pytest
from _layouts import devices, dist_pairs, spread
from hypothesis import example, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import mdarray
from mdarray import Layout
from mdarray.testing import assert_dist_equal, strategies as mst

DEVICES = mdarray.devices()


def arrays_of(dtypes, shapes=None, **kwargs):
    """`dist_pairs` of one of `dtypes`, shapes drawn from `shapes`."""
    return st.tuples(st.sampled_from(dtypes), mst.shapes() if shapes is None else shapes).flatmap(
        lambda pair: dist_pairs(shape=pair[1], dtype=pair[0], **kwargs)
    )


# Few distinct values, so ties across chunks are common; NaNs sometimes.
tied = st.sampled_from([0.0, 1.0, 2.0, np.nan])


@example(
    (
        mdarray.distributed_array(
            np.array([1.0, 2.0, 2.0, 1.0]), spread({0: slice(0, 2), 1: slice(1, 4)})
        ),
        np.array([1.0, 2.0, 2.0, 1.0]),
    ),
    np.argmax,
    None,
    False,
)
@given(
    arrays_of(["float64", "int16", "bool"], elements=None) | arrays_of(["float64"], elements=tied),
    st.sampled_from([np.argmax, np.argmin]),
    st.data(),
    st.booleans(),
)
def test_argmax_argmin_match_numpy(pair, func, data, keepdims):
    x, expected = pair
    if isinstance(data, st.DataObject):
        axis = data.draw(st.none() | st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1))
    else:
        axis = data
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = func(expected, axis=axis, keepdims=keepdims)
    except Exception as error:
        with pytest.raises(type(error)):
            func(x, axis=axis, keepdims=keepdims)
        return
    with mdarray.options(fallback="raise"):
        got = func(x, axis=axis, keepdims=keepdims)
    assert_dist_equal(got, np.asarray(want))


def test_split_axis_moves_only_pairs():
    values = np.arange(24.0).reshape(4, 6)[::-1].copy()
    x = mdarray.distributed_array(values, Layout.block((4, 6), devices=DEVICES))
    with mdarray.count_transfers() as moved:
        result = np.argmax(x, axis=0)
    # Each chunk receives at most the (value, index) pairs of the others: result-sized.
    n = len(DEVICES)
    assert moved.total <= n * (n - 1) * 6 * (8 + 8)
    assert_dist_equal(result, values.argmax(0))


def test_array_api_and_methods():
    values = np.array([[3, 9, 9], [9, 1, 0]])
    x = mdarray.distributed_array(values, Layout.block((2, 3), axis=1, devices=DEVICES))
    assert int(mdarray.argmax(x)) == values.argmax()
    assert_dist_equal(mdarray.argmin(x, axis=1, keepdims=True), values.argmin(1, keepdims=True))
    assert_dist_equal(x.argmax(axis=0), values.argmax(0))
    with pytest.raises(ValueError, match="empty sequence"):
        np.argmax(mdarray.distributed_array(np.zeros((0, 3)), {DEVICES[0]: ()}), axis=0)


def _operand(data, shape, dtype):
    """A DistArray (drawn layout and mode), a NumPy array or a Python scalar."""
    kind = data.draw(
        st.sampled_from(["dist", "numpy", "scalar"] if not shape else ["dist", "numpy"])
    )
    if kind == "scalar":
        value = data.draw(st.sampled_from([True, 2, -1.5, 1 + 2j] if dtype is None else [0, 1]))
        return value, value
    dtype = dtype or data.draw(st.sampled_from(["float64", "int32", "bool", "complex64"]))
    x, value = data.draw(dist_pairs(shape=shape, dtype=dtype))
    return (x, value) if kind == "dist" else (value, value)


@settings(max_examples=30)
@given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=4), st.data())
def test_where_matches_numpy(shapes, data):
    operands = [
        _operand(data, shape, dtype)
        for shape, dtype in zip(shapes.input_shapes, ["bool", None, None])
    ]
    if not any(isinstance(op, mdarray.DistArray) for op, _ in operands):
        operands[1] = (mdarray.asarray(np.asarray(operands[1][1])), np.asarray(operands[1][1]))
    want = np.where(*(value for _, value in operands))
    with mdarray.options(fallback="raise"):
        got = np.where(*(op for op, _ in operands))
        assert_dist_equal(got, want)
        assert_dist_equal(mdarray.where(*(op for op, _ in operands)), want)


def test_where_moves_nothing_for_operands_of_one_layout():
    layout = Layout.block((6, 4), devices=DEVICES)
    a = mdarray.distributed_array(np.arange(24.0).reshape(6, 4), layout)
    with mdarray.count_transfers() as moved, mdarray.options(fallback="raise"):
        got = mdarray.where(a > 10, a, 0.5)
    assert moved.total == 0
    assert got.layout == layout
    assert_dist_equal(
        got, np.where(np.arange(24.0).reshape(6, 4) > 10, np.arange(24.0).reshape(6, 4), 0.5)
    )
    with pytest.raises(ValueError, match="both or neither"):
        np.where(a > 1, a)


# count_nonzero, nonzero, searchsorted --------------------------------------------------

zeros_often = {
    "float64": st.sampled_from([0.0, -0.0, 1.5, np.nan]),
    "complex64": st.sampled_from([0j, 1j, 2 + 0j]),
    "int8": st.integers(-1, 1),
    "uint32": st.integers(0, 1),
    "bool": st.booleans(),
}
arrays_with_zeros = st.sampled_from(sorted(zeros_often)).flatmap(
    lambda dtype: dist_pairs(dtype=dtype, elements=zeros_often[dtype])
)


@settings(max_examples=40)
@given(arrays_with_zeros, st.data(), st.booleans())
def test_count_nonzero_is_native_and_matches_numpy(pair, data, keepdims):
    x, value = pair
    bound = max(x.ndim, 1)
    axis = data.draw(
        st.none()
        | st.integers(-bound - 1, bound)
        | st.lists(st.integers(-bound, bound - 1), max_size=2).map(tuple)
    )
    try:
        want = np.asarray(np.count_nonzero(value, axis=axis, keepdims=keepdims))
    except Exception as error:
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            mdarray.count_nonzero(x, axis=axis, keepdims=keepdims)
        return
    with mdarray.options(fallback="raise"):
        got = mdarray.count_nonzero(x, axis=axis, keepdims=keepdims)
        assert_dist_equal(got, want.astype(np.intp))
        assert_dist_equal(np.count_nonzero(x, axis=axis, keepdims=keepdims), want)


def test_count_nonzero_of_a_split_axis_moves_nothing():
    value = np.array([[0, 1, 2, 0], [3, 0, 0, 4]])
    x = mdarray.distributed_array(value, Layout.block(value.shape, axis=1, devices=DEVICES))
    with mdarray.count_transfers() as moved, mdarray.options(fallback="raise"):
        got = mdarray.count_nonzero(x, axis=1)
    assert moved.total == 0
    assert_dist_equal(got, np.array([2, 2]))


@settings(max_examples=30)
@given(arrays_with_zeros)
def test_nonzero_matches_numpy(pair):
    x, value = pair
    try:
        want = np.nonzero(value)
    except ValueError:
        with pytest.raises(ValueError, match="0d"), mdarray.options(fallback="allow"):
            mdarray.nonzero(x)
        return
    with mdarray.options(fallback="allow"):
        got = mdarray.nonzero(x)
    assert isinstance(got, tuple)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_dist_equal(g, w)


@settings(max_examples=30)
@given(
    st.sampled_from(["float64", "int16"]),
    st.integers(0, 8),
    mst.shapes(max_dims=2, max_side=4),
    st.sampled_from(["left", "right"]),
    st.booleans(),
    st.data(),
)
def test_searchsorted_matches_numpy(dtype, n, shape, side, use_sorter, data):
    elements = st.sampled_from([0.0, 1.0, 2.0, np.nan]) if dtype == "float64" else None
    x1, v1 = data.draw(dist_pairs(shape=(n,), dtype=dtype, elements=elements))
    x2, v2 = data.draw(dist_pairs(shape=shape, dtype=dtype, elements=elements))
    if use_sorter:
        order = np.argsort(v1)
        sorter = mdarray.distributed_array(order, data.draw(mst.layouts(order.shape)))
        want = np.searchsorted(v1, v2, side=side, sorter=order)
    else:
        v1 = np.sort(v1)
        x1 = mdarray.distributed_array(v1, x1.layout, x1.mode)
        sorter = None
        want = np.searchsorted(v1, v2, side=side)
    with mdarray.options(fallback="raise"):
        got = mdarray.searchsorted(x1, x2, side=side, sorter=sorter)
    assert_dist_equal(got, np.asarray(want))


def test_searchsorted_scalars_and_errors():
    x1 = mdarray.asarray(np.array([1, 3, 5]))
    with mdarray.options(fallback="raise"):
        assert_dist_equal(mdarray.searchsorted(x1, 4), np.asarray(np.searchsorted([1, 3, 5], 4)))
        with pytest.raises(ValueError, match="side"):
            mdarray.searchsorted(x1, 4, side="middle")
        with pytest.raises(ValueError, match="too deep"):
            mdarray.searchsorted(mdarray.asarray(np.zeros((2, 2))), 1.0)
        assert_dist_equal(
            mdarray.searchsorted(x1, 2.5), np.asarray(np.searchsorted([1, 3, 5], 2.5))
        )
        assert_dist_equal(np.searchsorted(x1, x1, side="right"), np.array([1, 2, 3]))
    with pytest.warns(mdarray.PerformanceWarning, match="numpy.searchsorted"):
        np.searchsorted(np.array([1, 3, 5]), x1)  # a NumPy array searched: NumPy's


def test_searchsorted_moves_only_the_queries_and_answers():
    v1 = np.arange(1000.0)
    x1 = mdarray.distributed_array(v1, mdarray.Layout.block(v1.shape, devices=devices(0, 1, 2, 3)))
    v2 = np.array([3.5, 999.0, 250.0, 600.0])
    x2 = mdarray.distributed_array(v2, mdarray.Layout.block(v2.shape, devices=devices(0)))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = mdarray.searchsorted(x1, x2)
    assert_dist_equal(got, np.searchsorted(v1, v2))
    between_devices = sum(b for (s, d), b in moved.bytes.items() if "host" not in (s, d))
    assert between_devices <= 2 * 3 * 8  # three queries routed away, three answers back
    assert moved.total < 400


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("func", [np.argmin, np.argmax])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_first_nan_and_lowest_tie_win_in_every_float_dtype(dtype, func, axis):
    # Rows of several NaNs, ties, infinities; row chunks (whole rows: the per-block pick).
    rng = np.random.default_rng(7)
    host = rng.choice([0.0, 1.0, -1.0, np.inf, -np.inf, np.nan], size=(24, 9)).astype(dtype)
    host[3] = np.nan
    host[5] = 1.0
    x = mdarray.distributed_array(host, spread({k: slice(6 * k, 6 * k + 6) for k in range(4)}))
    assert_dist_equal(func(x, axis=axis), func(host, axis=axis))
