"""Packed arrays: one slab per device, so elementwise ops run one kernel per device."""

import numpy as np
from _layouts import dist_pairs
from hypothesis import given, strategies as st

import mdarray
from mdarray._array.array import wrap
from mdarray.testing import assert_dist_equal, strategies as mst


@given(dist_pairs(dtype=np.float64, mode=mdarray.REPLICA), st.sampled_from([2.0, -1.5]))
def test_ops_on_packed_operands_stay_packed_and_match_numpy(pair, scalar):
    x, expected = pair
    assert x.storage.slabs is not None
    y = mdarray.distributed_array(expected * 2, x.layout)
    with mdarray.options(fallback="raise"):
        z = x * scalar + y
        q, r = np.divmod(z, 4.0)
    for result, want in [
        (z, expected * scalar + expected * 2),
        (q, np.divmod(expected * scalar + expected * 2, 4.0)[0]),
        (r, np.divmod(expected * scalar + expected * 2, 4.0)[1]),
    ]:
        assert result.storage.slabs is not None
        assert result.layout == x.layout
        assert_dist_equal(result, want)


@given(dist_pairs(dtype=np.int32, mode=mdarray.REPLICA))
def test_packed_and_unpacked_operands_mix(pair):
    x, expected = pair
    unpacked = wrap(x.storage.derive(buffers=[c.copy() for c in x.storage.buffers]), x.mode)
    assert unpacked.storage.slabs is None
    with mdarray.options(fallback="raise"):
        assert_dist_equal(x + unpacked, expected + expected)
        assert_dist_equal(unpacked - x, expected - expected)


def test_in_place_on_a_packed_array_writes_its_slabs_and_views():
    host = np.arange(12.0).reshape(6, 2)
    x = mdarray.distributed_array(host, mdarray.Layout.block(host.shape))
    slabs = x.storage.slabs
    view = x[1:4]
    with mdarray.options(fallback="raise"):
        x += 1.0
        np.multiply(x, 2.0, out=x)
    # Where a kernel could fail midway (several devices, warnings as errors as here), the
    # kernels compute new slabs, which x and its views take once all ran (whole or
    # nothing); else its one kernel writes the slab itself. Packed either way.
    assert x.storage.slabs is not None
    assert len(x.storage.slabs) == len(slabs)
    assert_dist_equal(x, (host + 1) * 2)
    assert_dist_equal(view, ((host + 1) * 2)[1:4])


def test_in_place_on_a_packed_array_sharing_chunks_copies_first():
    host = np.arange(8.0)
    x = mdarray.distributed_array(host, mdarray.Layout.block(host.shape))
    partial = x.change_mode("sum")
    with mdarray.options(fallback="raise"):
        x += 1.0
    assert_dist_equal(partial, host)
    assert_dist_equal(x, host + 1)


def test_creation_functions_make_packed_arrays():
    layout = mdarray.Layout.grid((6, 4), (3, 2))
    for x in (
        mdarray.zeros((6, 4), device=layout),
        mdarray.full((6, 4), 2.5, device=layout),
        mdarray.empty((6, 4), device=layout),
        mdarray.distributed_array(np.ones((6, 4)), layout),
    ):
        assert x.storage.slabs is not None
        assert len(x.storage.slabs) == len(layout.devices)


@given(dist_pairs(dtype=np.float32, mode=mdarray.REPLICA), st.data())
def test_a_reshard_that_keeps_no_chunk_is_packed(pair, data):
    x, expected = pair
    target = data.draw(mst.layouts(x.shape))
    y = x.reshard(target)
    if y is not x and all(not any(a is b for b in x.storage.buffers) for a in y.storage.buffers):
        assert y.storage.slabs is not None
    with mdarray.options(fallback="raise"):
        assert_dist_equal(y + 1, expected + 1)
    assert_dist_equal(y, expected)
