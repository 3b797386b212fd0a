"""Buffers shared by reshard and change_mode are copied before an in-place write."""

import numpy as np
import pytest

import mdarray

BLOCKS = mdarray.Layout.block((8,), devices=mdarray.devices()[:2])


def _pair(make):
    host = np.arange(8.0)
    x = mdarray.distributed_array(host, BLOCKS)
    y = make(x)
    assert any(a is b for a in x.storage.buffers for b in y.storage.buffers), (
        "the test needs shared buffers"
    )
    return host, x, y


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x.change_mode("sum"),
        lambda x: x.change_mode("max"),
        lambda x: x.reshard(
            mdarray.Layout((8,), {**BLOCKS.index_map, 0: [slice(0, 4), slice(0, 8)]})
        ),
    ],
    ids=["sum", "max", "reshard"],
)
@pytest.mark.parametrize(
    "write",
    [
        lambda a: a.__setitem__(slice(1, 6), -5.0),
        lambda a: a.__iadd__(3.0),
        lambda a: np.multiply(a, 2.0, out=a),
    ],
    ids=["setitem", "iadd", "out"],
)
def test_writing_one_array_leaves_the_other(make, write):
    host, x, y = _pair(make)
    with mdarray.options(fallback="raise"):
        write(x)
    np.testing.assert_array_equal(y.get(), host)
    _, x, y = _pair(make)
    with mdarray.options(fallback="raise"):
        write(y)
    np.testing.assert_array_equal(x.get(), host)


def test_views_from_indexing_still_write_through():
    x = mdarray.distributed_array(np.arange(8.0), BLOCKS)
    view = x[2:6]
    view[...] = 0.0
    np.testing.assert_array_equal(x.get(), [0, 1, 0, 0, 0, 0, 6, 7])
