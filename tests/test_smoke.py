from hypothesis import given

from mdarray.testing import assert_dist_equal
from mdarray.testing import strategies as mst


@given(mst.dist_arrays())
def test_drawn_arrays_hold_their_value(pair):
    x, expected = pair
    assert_dist_equal(x, expected)
