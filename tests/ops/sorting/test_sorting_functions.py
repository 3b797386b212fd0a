"""sort/argsort against NumPy over drawn layouts and modes: ties, NaNs, signed zeros,
descending order that keeps equal elements in their original order, 0-d and empty."""

import numpy as np
import pytest
from _layouts import devices, dist_pairs
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray._ops.sorting import sorting_functions as _sorting_functions
from mdarray.testing import assert_dist_equal

# Few distinct values, so ties are common; NaNs and both zeros sometimes.
TIED = {
    "float64": st.sampled_from([0.0, -0.0, 1.0, 2.0, np.nan]),
    "float32": st.sampled_from([0.0, 1.0, -3.0, np.nan]),
    "int16": st.integers(-2, 2),
    "uint8": st.integers(0, 3),
    "bool": st.booleans(),
}

ELEMENTS = {
    "float64": st.sampled_from([0.0, -0.0, 1.0, -np.inf, np.inf, np.nan]),
    "int32": st.integers(-3, 3),
    "complex128": st.sampled_from([0j, 1 + 0j, 1j, -1j, complex(np.nan, 0), complex(0, np.nan)]),
}

arrays = st.sampled_from(sorted(TIED)).flatmap(
    lambda dtype: dist_pairs(dtype=dtype, elements=TIED[dtype])
)


def _descending_argsort(value, axis):
    """The stable descending order, independently of mdarray's flip: by dense rank (NaNs
    rank highest, as NumPy sorts them last ascending), ties in their original order."""
    _, rank = np.unique(value, return_inverse=True)
    return np.argsort(-rank.reshape(value.shape), axis=axis, stable=True)


def _expected(func, value, axis, descending, stable):
    order = (
        _descending_argsort(value, axis)
        if descending
        else np.argsort(value, axis=axis, stable=stable)
    )
    if func is mdarray.argsort:
        return order
    return np.take_along_axis(value, order, axis=axis)


@settings(max_examples=40)
@given(
    arrays,
    st.sampled_from([mdarray.sort, mdarray.argsort]),
    st.integers(-4, 3),
    st.booleans(),
    st.booleans(),
)
def test_sort_argsort_match_numpy(pair, func, axis, descending, stable):
    x, value = pair
    try:
        want = _expected(func, value, axis, descending, stable)
    except Exception as error:
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            func(x, axis=axis, descending=descending, stable=stable)
        return
    with mdarray.options(fallback="raise"):
        got = func(x, axis=axis, descending=descending, stable=stable)
    assert isinstance(got, mdarray.DistArray)
    if func is mdarray.argsort and not stable and not descending:
        # Unstable: any order of equal elements sorts the values.
        value = value.reshape(got.shape)  # NumPy's argsort takes a 0-d array as 1-D
        got = np.take_along_axis(value, got.get(), axis=axis)
        want = np.sort(value, axis=axis)
        np.testing.assert_array_equal(got, want, strict=True)
        return
    assert_dist_equal(got, want)


def test_descending_keeps_equal_elements_in_order():
    value = np.array([[1.0, np.nan, 3.0, 1.0, np.nan, 3.0, -0.0, 0.0]])
    x = mdarray.distributed_array(value, mdarray.Layout.block(value.shape, axis=1))
    with mdarray.options(fallback="raise"):
        order = mdarray.argsort(x, descending=True)
        values = mdarray.sort(x, descending=True)
    assert_dist_equal(order, np.array([[1, 4, 2, 5, 0, 3, 6, 7]]))
    assert np.signbit(values.get()[0, -2])
    assert not np.signbit(values.get()[0, -1])


def test_numpy_functions_take_the_same_path_natively():
    value = np.array([3, 1, 2, 1])
    x = mdarray.asarray(value)
    with mdarray.options(fallback="raise"):
        assert_dist_equal(np.sort(x), np.sort(value))
        assert_dist_equal(np.argsort(x, kind="mergesort"), np.argsort(value, stable=True))
        assert_dist_equal(mdarray.argsort(x), np.argsort(value, stable=True))
        assert_dist_equal(np.sort(x, axis=None), np.sort(value, axis=None))
        with pytest.raises(TypeError, match=r"numpy\.sort"):
            np.sort(x, order="f")  # record arrays are NumPy's


@settings(max_examples=40)
@given(
    st.tuples(st.sampled_from(["float64", "int32", "complex128"]), st.integers(0, 40)).flatmap(
        lambda drawn: dist_pairs(shape=(drawn[1],), dtype=drawn[0], elements=ELEMENTS[drawn[0]])
    ),
    st.booleans(),
)
def test_1d_sample_sort_matches_numpy(pair, arg):
    """The sample sort over uneven, strided, overlapping and empty chunks: argsort
    stable with many ties."""
    x, value = pair
    with mdarray.options(fallback="raise"):
        got = mdarray.argsort(x) if arg else mdarray.sort(x)
    want = np.argsort(value, stable=True) if arg else np.sort(value, stable=True)
    assert_dist_equal(got, want)


@pytest.mark.parametrize("chunks", [1, 3])
def test_nans_with_the_sign_bit_set_sort_last(chunks):
    """Every NaN sorts last, in order, whatever its sign bit (CuPy's own sort puts a
    negative NaN first): sort, argsort, median and percentile as NumPy's."""
    negative = np.copysign(np.nan, -1.0)
    value = np.array([1.0, negative, 0.5, np.nan, -2.0, negative, 3.0, 0.0, 2.0])
    x = mdarray.distributed_array(
        value, mdarray.Layout.block(value.shape, devices=devices(*range(chunks)))
    )
    with mdarray.options(fallback="raise"):
        assert_dist_equal(np.sort(x), np.sort(value))
        assert_dist_equal(np.argsort(x), np.argsort(value, stable=True))
        assert_dist_equal(np.nanmedian(x), np.nanmedian(value))
        assert_dist_equal(np.nanpercentile(x, 30), np.nanpercentile(value, 30))
        assert_dist_equal(np.median(x), np.median(value))
        assert_dist_equal(np.partition(x, 6)[6:], np.partition(value, 6)[6:])  # the NaNs
        assert_dist_equal(np.unique(x), np.unique(value))
    grid = mdarray.distributed_array(value.reshape(3, 3), mdarray.Layout.block((3, 3)))
    with mdarray.options(fallback="raise"):
        assert_dist_equal(np.argsort(grid, axis=1), np.argsort(value.reshape(3, 3), axis=1))
        assert_dist_equal(np.nanmedian(grid, axis=1), np.nanmedian(value.reshape(3, 3), axis=1))


def test_sort_of_an_unsplit_axis_moves_nothing():
    value = np.random.default_rng(0).normal(size=(8, 50))
    x = mdarray.distributed_array(
        value, mdarray.Layout.block(value.shape, devices=devices(0, 1, 2))
    )
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.sort(x, axis=-1)
        order = np.argsort(x, axis=1)
    assert moved.total == 0
    assert_dist_equal(got, np.sort(value, axis=-1))
    assert_dist_equal(order, np.argsort(value, axis=1, stable=True))
    assert got.layout == x.layout


def test_1d_sample_sort_moves_each_element_about_once():
    n = 100_000
    value = np.random.default_rng(1).normal(size=n)
    x = mdarray.distributed_array(value, mdarray.Layout.block((n,), devices=devices(0, 1, 2, 3)))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.sort(x)
    assert_dist_equal(got, np.sort(value))
    between_devices = sum(b for (s, d), b in moved.bytes.items() if "host" not in (s, d))
    assert between_devices <= value.nbytes
    pieces = len(x.layout.chunk_devices)
    assert moved.total - between_devices <= 64 * pieces**2  # samples and cuts
    # Balanced: regular samples split random values into near-even blocks.
    assert max(len(box[0]) for box in got.layout.boxes) < 1.25 * n / len(x.devices)


def test_nd_split_axis_reshards_once():
    value = np.random.default_rng(2).integers(0, 5, size=(6, 9))
    x = mdarray.distributed_array(
        value, mdarray.Layout.block(value.shape, axis=1, devices=devices(0, 1))
    )
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.argsort(x, axis=1)
    assert_dist_equal(got, np.argsort(value, axis=1, stable=True))
    assert moved.total <= value.nbytes


def test_errors_and_edge_shapes():
    with mdarray.options(fallback="raise"):
        with pytest.raises(np.exceptions.AxisError):
            mdarray.sort(mdarray.asarray(np.float64(1.0)))
        with pytest.raises(np.exceptions.AxisError):
            mdarray.argsort(mdarray.asarray(np.zeros((2, 3))), axis=2, descending=True)
        empty = mdarray.argsort(mdarray.asarray(np.zeros((0, 3))), axis=0, descending=True)
    assert_dist_equal(empty, np.zeros((0, 3), np.intp))


def test_1d_sample_sort_spreads_ties():
    """Splitters cut ties too (by original position): a two-valued array spreads over
    every device, and argsort stays stable."""
    n = 20_000
    value = np.random.default_rng(4).integers(0, 2, size=n).astype(bool)
    x = mdarray.distributed_array(value, mdarray.Layout.block((n,), devices=devices(0, 1, 2, 3)))
    with mdarray.options(fallback="raise"):
        order = np.argsort(x)
        values = np.sort(x)
    assert_dist_equal(order, np.argsort(value, stable=True))
    assert_dist_equal(values, np.sort(value))
    for result in (order, values):
        assert max(len(box[0]) for box in result.layout.boxes) < 1.25 * n / len(x.devices)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_stable_sort_of_numpy_chunks_is_the_stable_sort_bit_for_bit(dtype):
    # NumPy's default sort, then signed zeros and NaNs back in their order of appearance.
    rng = np.random.default_rng(5)
    pool = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -1.0, np.inf, -np.inf, 2.5], dtype)
    bits = f"u{np.dtype(dtype).itemsize}"
    for size in range(16):
        for _ in range(20):
            values = rng.choice(pool, size=size)
            got = _sorting_functions.stable_sort(np, values, 0)
            want = np.sort(values, kind="stable")
            np.testing.assert_array_equal(got.view(bits), want.view(bits))
