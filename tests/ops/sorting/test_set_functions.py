"""unique_all/counts/inverse/values against NumPy 2's functions of the same names over
drawn layouts and modes: NaNs distinct, signed zeros one, named tuples of DistArrays."""

import numpy as np
from _layouts import devices, dist_pairs
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray.testing import assert_dist_equal

ELEMENTS = {
    "float64": st.sampled_from([0.0, -0.0, 1.0, 2.0, np.nan]),
    "complex128": st.sampled_from([0j, 1 + 1j, complex(np.nan, 0), 2j]),
    "int32": st.integers(-3, 3),
    "uint16": st.integers(0, 3),
    "bool": st.booleans(),
}

arrays = st.sampled_from(sorted(ELEMENTS)).flatmap(
    lambda dtype: dist_pairs(dtype=dtype, elements=ELEMENTS[dtype])
)

FUNCTIONS = {
    "unique_all": ("values", "indices", "inverse_indices", "counts"),
    "unique_counts": ("values", "counts"),
    "unique_inverse": ("values", "inverse_indices"),
    "unique_values": None,
}


@settings(max_examples=40)
@given(arrays, st.sampled_from(sorted(FUNCTIONS)))
def test_unique_functions_match_numpy(pair, name):
    x, value = pair
    # Values sorted, as NumPy's other three give them (its unique_values is in hash order).
    want = getattr(np, name)(value) if name != "unique_values" else np.unique_all(value).values
    with mdarray.options(fallback="raise"):
        got = getattr(mdarray, name)(x)
        through_numpy = getattr(np, name)(x)
    fields = FUNCTIONS[name]
    if fields is None:
        assert_dist_equal(got, want)
        assert_dist_equal(through_numpy, want)
        return
    assert type(got)._fields == fields
    assert type(through_numpy) is type(got)
    for field in fields:
        for ours in (got, through_numpy):
            if field == "inverse_indices" and np.isnan(value).any():
                _check_inverse(ours, value, getattr(want, field))
                continue
            assert_dist_equal(getattr(ours, field), getattr(want, field))


def _check_inverse(result, value, want):
    """Each NaN is its own unique value, and NumPy numbers equal-looking NaNs by an
    unstable sort: the inverse must rebuild the array, each NaN from an entry of its own."""
    inverse, values = result.inverse_indices.get(), result.values.get()
    assert inverse.shape == want.shape
    assert inverse.dtype == want.dtype
    np.testing.assert_array_equal(values[inverse], value)
    nans = inverse[np.isnan(value)]
    assert len(set(nans.tolist())) == nans.size


def test_unique_values_are_sorted():
    """Array libraries sort them (scikit-learn's labels rely on it); NumPy's own
    ``unique_values`` has used hash order since 2.3."""
    x = mdarray.asarray(np.array([1, 2, 0, 2, 1, 5, 3, 3]))
    with mdarray.options(fallback="raise"):
        assert mdarray.unique_values(x).get().tolist() == [0, 1, 2, 3, 5]
        assert np.unique_values(x).get().tolist() == [0, 1, 2, 3, 5]


def test_nans_are_distinct_and_zeros_one():
    value = np.array([np.nan, 0.0, np.nan, -0.0, 1.0])
    x = mdarray.distributed_array(value, mdarray.Layout.block((5,)), "max")
    with mdarray.options(fallback="raise"):
        values, counts = mdarray.unique_counts(x)
    assert_dist_equal(values, np.array([-0.0, 1.0, np.nan, np.nan]))
    assert_dist_equal(counts, np.array([2, 1, 1, 1]))


def test_0d_and_empty_natively():
    with mdarray.options(fallback="raise"):
        got = mdarray.unique_values(mdarray.asarray(np.float32(2.0)))
    assert_dist_equal(got, np.array([2.0], np.float32))
    with mdarray.options(fallback="raise"):
        result = mdarray.unique_all(mdarray.asarray(np.zeros((0, 2), np.int8)))
        inverse = mdarray.unique_inverse(mdarray.asarray(np.int64(5))).inverse_indices
    assert_dist_equal(result.values, np.zeros(0, np.int8))
    assert_dist_equal(result.inverse_indices, np.zeros((0, 2), np.intp))
    assert_dist_equal(inverse, np.unique_inverse(np.int64(5)).inverse_indices)


@settings(max_examples=40)
@given(
    st.sampled_from(["float64", "int32"]).flatmap(
        lambda dtype: dist_pairs(dtype=dtype, elements=ELEMENTS[dtype])
    ),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_numpy_unique_matches_numpy(pair, return_index, return_inverse, return_counts, equal_nan):
    x, value = pair
    args = {
        "return_index": return_index,
        "return_inverse": return_inverse,
        "return_counts": return_counts,
        "equal_nan": equal_nan,
    }
    want = np.unique(value, **args)
    with mdarray.options(fallback="raise"):
        got = np.unique(x, **args)
    if isinstance(want, tuple):
        assert len(got) == len(want)
        if return_inverse and not equal_nan and np.isnan(value).any():
            # NumPy sorts unstably without return_index: its inverse numbers the NaNs in
            # any order. Ours numbers them in order; both rebuild the array.
            k = 1 + return_index
            inverse = got[k].get()
            assert inverse.shape == want[k].shape
            np.testing.assert_array_equal(want[0][inverse], value)
            assert sorted(inverse[np.isnan(value)].tolist()) == sorted(
                want[k][np.isnan(value)].tolist()
            )
            got, want = got[:k] + got[k + 1 :], want[:k] + want[k + 1 :]
        for g, w in zip(got, want):
            assert_dist_equal(g, w)
    else:
        assert_dist_equal(got, want)


def test_unique_moves_little_beyond_the_sort():
    n = 40_000
    value = np.random.default_rng(3).integers(0, 50, size=n)
    x = mdarray.distributed_array(value, mdarray.Layout.block((n,), devices=devices(0, 1, 2, 3)))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        values, counts = mdarray.unique_counts(x)
    assert_dist_equal(values, np.unique(value))
    assert_dist_equal(counts, np.unique_counts(value).counts)
    between_devices = sum(b for (s, d), b in moved.bytes.items() if "host" not in (s, d))
    assert between_devices <= value.nbytes + 8 * len(x.layout.chunk_devices)
