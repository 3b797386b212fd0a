"""Packed arrays: one slab per device, so elementwise ops run one kernel per device."""

import numpy as np
import pytest
from _call_counts import outcomes
from _layouts import devices, dist_pairs
from hypothesis import given, strategies as st

import mdarray
from mdarray._array.array import wrap
from mdarray._ops.engine import ufunc_fast
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


@pytest.mark.parametrize("on", [(0,), (0, 1)])
def test_results_made_per_chunk_are_packed_where_each_device_holds_one(on):
    """A result whose layout holds one chunk per device and whose kernels made its buffers
    in C order is packed (`Chunks.made`): a full sum, a reduction along an axis, argmin,
    a cast chunk by chunk, a broadcast product; later calls read and write its slabs,
    and copies on write keep every value NumPy's."""
    rng = np.random.default_rng(8)
    host = rng.standard_normal((6, 4))
    layout = mdarray.Layout.block(host.shape, devices=devices(*on))
    x = mdarray.distributed_array(host, layout)
    results = {
        "sum": (mdarray.sum(x * x), np.sum(host * host)),
        "sum axis 1": (mdarray.sum(x, axis=1), np.sum(host, axis=1)),
        "argmin": (mdarray.argmin(x, axis=1), np.argmin(host, axis=1)),
        "cast of a view": (mdarray.astype(x[:, ::2], np.float32), host[:, ::2].astype(np.float32)),
        "outer": (x[:, :1] * x[:1, :], host[:, :1] * host[:1, :]),
    }
    for name, pair in results.items():
        result, want = pair
        if len(result.layout.chunks) == len(result.layout.devices):
            assert result.storage.slabs is not None, name
        kept = result.change_mode("replica")  # shares its memory until it is written
        assert_dist_equal(result, want)
        with mdarray.options(fallback="raise"):
            assert_dist_equal(mdarray.sqrt(abs(result)), np.sqrt(abs(want)))
            result *= 2
        assert_dist_equal(result, want * 2)
        assert_dist_equal(kept, want)


def test_a_result_in_fortran_order_is_not_packed():
    """Per-chunk results in Fortran order (a cast keeps its operand's order) are kept as
    chunks: their flat slab would be a copy, not their memory."""
    host = np.arange(12.0).reshape(3, 4)
    x = mdarray.distributed_array(host, mdarray.Layout.block(host.shape, devices=devices(0)))
    cast = mdarray.astype(x.T, np.float32)
    if cast.storage.slabs is None:
        assert not cast.storage.buffers[0].flags.c_contiguous
    cast[0, 0] = -1.0
    want = host.T.astype(np.float32)
    want[0, 0] = -1.0
    assert_dist_equal(cast, want)
    assert_dist_equal(x, host)


@pytest.mark.parametrize("shape", [(64,), (64, 3)])
def test_packed_operands_whose_blocks_agree_run_slab_by_slab(shape, monkeypatch):
    """``p - y`` with p in one chunk per device and y in two row chunks per device: the
    slabs of agreeing device blocks line up element for element, so the kernel runs on
    the slabs (no block views), in p's layout, with NumPy's values; in place too."""

    slab_calls = outcomes(monkeypatch, ufunc_fast, "_slab_call")
    block_calls = outcomes(monkeypatch, ufunc_fast, "block_call")
    rng = np.random.default_rng(9)
    hp, hy = rng.standard_normal(shape), rng.standard_normal(shape)
    one = {devices(0)[0]: [slice(0, 32)], devices(1)[0]: [slice(32, 64)]}
    if devices(0) == devices(1):
        one = {devices(0)[0]: [slice(0, 64)]}
    two = mdarray.Layout.block(shape, devices=devices(0, 0, 1, 1))
    p = mdarray.distributed_array(hp, mdarray.Layout(shape, one))
    y = mdarray.distributed_array(hy, two)
    assert p.layout != y.layout
    for _ in range(2):
        with mdarray.options(fallback="raise"):
            d = p - y
        assert d.layout == p.layout
        assert d.storage.slabs is not None
        assert_dist_equal(d, hp - hy)
    assert slab_calls
    assert not block_calls
    with mdarray.options(fallback="raise"):
        p -= y
    assert_dist_equal(p, hp - hy)


@pytest.mark.parametrize("on", [(0, 0, 1, 1), (0, 1)])
def test_a_0d_operand_with_a_copy_per_device_runs_beside_the_slabs(on, monkeypatch):
    """``s * x`` with s a 0-d array holding one copy on each of x's devices (a full sum):
    the kernel runs on x's slabs with s's (which broadcast), in x's layout, whichever
    operand comes first; in place too; and beside a view (no slabs) per device block."""

    slab_calls = outcomes(monkeypatch, ufunc_fast, "_slab_call")
    rng = np.random.default_rng(10)
    hx = rng.standard_normal((64, 3))
    x = mdarray.distributed_array(hx, mdarray.Layout.block(hx.shape, devices=devices(*on)))
    hs = np.float64(2.5)
    s = mdarray.distributed_array(hs, mdarray.Layout.replicated((), devices=x.devices))
    for _ in range(2):
        with mdarray.options(fallback="raise"):
            for got, want in ((s * x, hs * hx), (x / s, hx / hs), (s - x[1:], hs - hx[1:])):
                assert got.layout.shape == want.shape
                assert_dist_equal(got, want)
    assert slab_calls
    assert (s * x).layout == x.layout
    with mdarray.options(fallback="raise"):
        x *= s
    assert_dist_equal(x, hx * hs)
    assert_dist_equal(s, hs)
