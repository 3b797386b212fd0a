"""unique_values, unique_counts and numpy.unique (values and counts) across processes, on
the native path: the distributed sort, each run marking its new values against the last
element of the run before it (fetched in one step), the counts shared between the
processes. The inverse and first indices still take the fallback there."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import mdarray
from mdarray.testing import strategies as mst

from ._spmd import check_value, everywhere, run
from .test_spmd_operations import LAYOUTS, layouts
from .test_spmd_sorting import data as vector, layouts_1d


def check_counts(got, values, counts) -> None:
    everywhere(isinstance(got, tuple) and len(got) == 2, repr(type(got)))
    check_value(got[0], values, exact=True)
    check_value(got[1], counts, exact=True)


@pytest.mark.parametrize("kind", ["distinct", "ties", "nans and zeros"])
@pytest.mark.parametrize("layout", ["blocks", "uneven", "strided", "overlapping"])
def test_unique_of_a_split_vector(layout, kind):
    a = vector(kind)
    x = mdarray.distributed_array(a, layouts_1d()[layout])
    want = np.unique_counts(a)
    check_value(lambda: np.unique_values(x), want.values, exact=True, native=True)
    check_counts(run(lambda: np.unique_counts(x), native=True), want.values, want.counts)
    check_value(lambda: np.unique(x), np.unique(a), exact=True, native=True)
    got = run(lambda: np.unique(x, return_counts=True, equal_nan=False), native=True)
    check_counts(got, *np.unique(a, return_counts=True, equal_nan=False))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_unique_of_a_matrix(layout):
    a = np.random.default_rng(60).integers(0, 7, (6, 5))
    x = mdarray.distributed_array(a, layouts()[layout], "max")
    want = np.unique_counts(a)
    check_counts(run(lambda: mdarray.unique_counts(x), native=True), want.values, want.counts)


def test_the_inverse_is_right_by_the_fallback():
    a = vector("ties")
    x = mdarray.distributed_array(a, layouts_1d()["strided"])
    got = run(lambda: np.unique(x, return_inverse=True))
    values, inverse = np.unique(a, return_inverse=True)
    check_value(got[0], values, exact=True)
    check_value(got[1], inverse, exact=True)


@given(st.data())
def test_drawn_arrays(data):
    shape = data.draw(mst.shapes(min_dims=1, max_dims=2, max_side=6))
    a = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(-3, 3)))
    x = mdarray.distributed_array(a, data.draw(mst.layouts(shape)), data.draw(mst.modes()))
    want = np.unique_counts(a)
    check_counts(run(lambda: np.unique_counts(x), native=True), want.values, want.counts)
