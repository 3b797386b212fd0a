"""unique_all/counts/inverse/values against NumPy 2's functions of the same names over
drawn layouts and modes: NaNs distinct, signed zeros one, named tuples of DistArrays."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mdarray
from mdarray.testing import assert_dist_equal
from mdarray.testing import strategies as mst

ELEMENTS = {
    "float64": st.sampled_from([0.0, -0.0, 1.0, 2.0, np.nan]),
    "complex128": st.sampled_from([0j, 1 + 1j, complex(np.nan, 0), 2j]),
    "int32": st.integers(-3, 3),
    "uint16": st.integers(0, 3),
    "bool": st.booleans(),
}

arrays = st.sampled_from(sorted(ELEMENTS)).flatmap(
    lambda dtype: mst.dist_arrays(dtype=dtype, elements=ELEMENTS[dtype])
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
    with mdarray.options(fallback="allow"):
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
        assert_dist_equal(getattr(got, field), getattr(want, field))
        assert_dist_equal(getattr(through_numpy, field), getattr(want, field))


def test_unique_values_are_sorted():
    """Array libraries sort them (scikit-learn's labels rely on it); NumPy's own
    ``unique_values`` has used hash order since 2.3."""
    x = mdarray.asarray(np.array([1, 2, 0, 2, 1, 5, 3, 3]))
    with mdarray.options(fallback="allow"):
        assert mdarray.unique_values(x).get().tolist() == [0, 1, 2, 3, 5]
        assert np.unique_values(x).get().tolist() == [0, 1, 2, 3, 5]


def test_nans_are_distinct_and_zeros_one():
    value = np.array([np.nan, 0.0, np.nan, -0.0, 1.0])
    x = mdarray.distributed_array(value, mdarray.Layout.block((5,)), "max")
    with mdarray.options(fallback="allow"):
        values, counts = mdarray.unique_counts(x)
    assert_dist_equal(values, np.array([-0.0, 1.0, np.nan, np.nan]))
    assert_dist_equal(counts, np.array([2, 1, 1, 1]))


def test_0d_and_empty_and_the_warning():
    with pytest.warns(mdarray.PerformanceWarning, match="numpy.unique_values"):
        got = mdarray.unique_values(mdarray.asarray(np.float32(2.0)))
    assert_dist_equal(got, np.array([2.0], np.float32))
    with mdarray.options(fallback="allow"):
        result = mdarray.unique_all(mdarray.asarray(np.zeros((0, 2), np.int8)))
        inverse = mdarray.unique_inverse(mdarray.asarray(np.int64(5))).inverse_indices
    assert_dist_equal(result.values, np.zeros(0, np.int8))
    assert_dist_equal(result.inverse_indices, np.zeros((0, 2), np.intp))
    assert_dist_equal(inverse, np.unique_inverse(np.int64(5)).inverse_indices)
