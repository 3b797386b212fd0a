"""Device blocks: a device's chunks that follow one another along axis 0 are one array
(`Layout.device_blocks`, `_chunkwise.blocks`), so elementwise ops on operands whose chunks
differ but whose blocks agree (``z[1:, :] -= y[:-1, :]`` of row chunks on one device) run
one kernel per device. Every case is checked against NumPy on the same data, and the cases
the block path must leave to the general one (memory that does not line up, an ``out``
overlapping an input) are checked to give NumPy's values too."""

import copy

import numpy as np
import pytest
from _call_counts import outcomes
from _layouts import device, rows
from hypothesis import given, strategies as st

import mdarray
from mdarray._exec.chunkwise import blocks
from mdarray._ops.engine import (
    ufunc_fast as _ufunc_fast,
    ufunc_pieces as _ufunc_pieces,
    ufunc_plans as _ufunc_plans,
)
from mdarray._ops.indexing import indexing as _indexing
from mdarray.testing import _host


@pytest.fixture
def block_calls(monkeypatch):
    """How many calls took the block path."""
    return outcomes(monkeypatch, _ufunc_fast, "block_call")


def test_device_blocks_of_layouts():
    one = mdarray.Layout((8, 3), {0: [(slice(0, 3),), (slice(3, 5),), (slice(5, 8),)]})
    assert one.device_blocks == ((range(8), range(3)),)
    columns = mdarray.Layout((4, 6), {0: [(slice(None), slice(0, 3)), (slice(None), slice(3, 6))]})
    assert columns.device_blocks is None
    gap = mdarray.Layout((8,), {0: [slice(0, 2), slice(4, 6)], 1: [slice(2, 4), slice(6, 8)]})
    assert gap.device_blocks is None
    twice = mdarray.Layout((4,), {0: [slice(0, 4), slice(0, 4)]})
    assert twice.device_blocks is None
    strided = mdarray.Layout((8,), {0: [slice(0, 8, 2), slice(8, 8)], 1: slice(1, 8, 2)})
    assert strided.device_blocks is None
    alone = mdarray.Layout((8,), {0: slice(0, 8, 2), 1: slice(1, 8, 2)})
    assert alone.device_blocks == ((range(0, 8, 2),), (range(1, 8, 2),))


LAYOUTS = {
    "4 row chunks, one device": ([0, 16, 32, 48, 64], [0, 0, 0, 0]),
    "uneven, an empty chunk": ([0, 5, 5, 40, 64], [0, 0, 0, 0]),
    "2 devices, 2 chunks each": ([0, 16, 32, 48, 64], [0, 0, 1, 1]),
}


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_shifted_views_run_per_block_with_numpy_values(name, block_calls):
    edges, on = LAYOUTS[name]
    rng = np.random.default_rng(0)
    hz, hy = rng.standard_normal((64, 5)), rng.standard_normal((64, 5)).astype(np.float32)
    z = mdarray.distributed_array(hz, rows(edges, on))
    y = mdarray.distributed_array(hy, rows(edges, on))
    got = y[1:, 1:] * 2 + z[:-1, :-1]
    np.testing.assert_array_equal(got.get(), hy[1:, 1:] * 2 + hz[:-1, :-1])
    assert got.layout == y[1:, 1:].layout
    if len(got.layout.devices) == 1:  # blocks agree: a kernel per device, a packed result
        assert got.storage.slabs is not None
    z[1:, :] -= y[:-1, :]
    hz[1:, :] -= hy[:-1, :]
    np.testing.assert_array_equal(z.get(), hz)
    z[:-1, 2:] += z[1:, 2:] * 0 + y[1:, 2:]
    hz[:-1, 2:] += hy[1:, 2:]
    np.testing.assert_array_equal(z.get(), hz)
    assert True in block_calls  # some call took the block path (one block per device)


@pytest.mark.parametrize(
    "write",
    [
        lambda a: a[1:].__isub__(a[:-1]),
        lambda a: a[:-1].__iadd__(a[1:]),
        lambda a: np.add(a[1:], a[:-1], out=a[:-1]),
        lambda a: np.multiply(a[:-1], 3, out=a[1:]),
    ],
    ids=["a[1:] -= a[:-1]", "a[:-1] += a[1:]", "add into a[:-1]", "multiply into a[1:]"],
)
def test_an_out_overlapping_an_input_gets_numpy_values(write):
    host = np.arange(40.0).reshape(8, 5)
    a = mdarray.distributed_array(host, rows([0, 3, 5, 8], [0, 0, 0]))
    expected = host.copy()
    write(expected)
    write(a)
    np.testing.assert_array_equal(a.get(), expected)


def test_chunks_in_separate_memory_take_the_general_path(block_calls):
    host = np.arange(48.0).reshape(8, 6)
    x = mdarray.distributed_array(host, rows([0, 4, 8], [0, 0]))
    apart = mdarray.DistArray._new(
        x.storage.derive(buffers=[b.copy() for b in x.storage.buffers]), x.mode
    )
    assert blocks(apart.storage) is None
    got = apart[1:] + x[:-1]
    np.testing.assert_array_equal(got.get(), host[1:] + host[:-1])
    assert block_calls == [False]


def test_an_in_place_block_write_copies_memory_another_array_shares():
    host = np.arange(48.0).reshape(8, 6)
    z = mdarray.distributed_array(host, rows([0, 4, 8], [0, 0]))
    y = mdarray.distributed_array(host * 10, rows([0, 4, 8], [0, 0]))
    shared = z.change_mode("replica")  # shares z's buffers until one is written
    view = z[2:]
    z[1:] -= y[:-1]
    expected = host.copy()
    expected[1:] -= host[:-1] * 10
    np.testing.assert_array_equal(z.get(), expected)
    np.testing.assert_array_equal(view.get(), expected[2:])
    np.testing.assert_array_equal(shared.get(), host)


@pytest.mark.skipif(mdarray.default_backend() != "cpu", reason="CuPy broadcasts are writable")
def test_a_read_only_target_raises_and_changes_nothing():
    host = np.arange(12.0).reshape(4, 3)
    x = mdarray.distributed_array(host, rows([0, 2, 4], [0, 0]))
    b = np.broadcast_to(x[:1], (4, 3))
    before = b.get()
    with pytest.raises(ValueError, match="read-only"):
        b[1:] += x[:-1]
    np.testing.assert_array_equal(b.get(), before)


@given(
    cuts=st.lists(st.integers(0, 12), min_size=1, max_size=4),
    shift=st.integers(1, 3),
    columns=st.slices(5),
    in_place=st.booleans(),
)
def test_drawn_row_chunks_and_shifts_match_numpy(cuts, shift, columns, in_place):
    edges = [0, *sorted(cuts), 12]
    host = np.arange(60, dtype=np.int64).reshape(12, 5)
    other = host[::-1].copy() * 3
    layout = rows(edges, [0] * (len(edges) - 1))
    x = mdarray.distributed_array(host, layout)
    y = mdarray.distributed_array(other, layout)
    if in_place:
        x[shift:, columns] -= y[:-shift, columns]
        expected = host.copy()
        expected[shift:, columns] -= other[:-shift, columns]
        np.testing.assert_array_equal(x.get(), expected)
    else:
        got = x[shift:, columns] - y[:-shift, columns]
        np.testing.assert_array_equal(got.get(), host[shift:, columns] - other[:-shift, columns])


def test_blocks_are_views_of_the_chunks():
    host = np.arange(24.0).reshape(6, 4)
    x = mdarray.distributed_array(host, {device(0): [(slice(0, 2),), (slice(2, 6),)]})
    (block,) = blocks(x[1:, 1:].storage)
    np.testing.assert_array_equal(_host(block), host[1:, 1:])
    block[...] = -1  # a view: writes reach the chunks
    np.testing.assert_array_equal(x.get()[1:, 1:], -1)


@pytest.mark.skipif(
    mdarray.default_backend() != "cpu", reason="CuPy's kernels do not honour numpy.errstate"
)
def test_a_raising_in_place_block_op_writes_nothing(block_calls):
    """Under ``errstate(divide="raise")`` the kernel may raise after writing part of its
    output: the block path computes every device's result first, so a raise leaves the
    target as it was, and a success writes NumPy's values."""
    host = np.arange(1.0, 25.0).reshape(8, 3)
    divisor = np.ones((8, 3))
    divisor[6, 1] = 0.0
    z = mdarray.distributed_array(host, rows([0, 3, 5, 8], [0, 0, 0]))
    y = mdarray.distributed_array(divisor, rows([0, 3, 5, 8], [0, 0, 0]))
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            z[1:] /= y[:-1]
        np.testing.assert_array_equal(z.get(), host)
        z[:-1] /= y[1:] * 0 + 2
    expected = host.copy()
    expected[:-1] /= 2
    np.testing.assert_array_equal(z.get(), expected)
    assert block_calls[-1] is True


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_assigning_a_value_whose_blocks_agree_copies_per_block(name, monkeypatch):
    edges, on = LAYOUTS[name]
    taken = []
    original = _indexing._block_setitem
    monkeypatch.setattr(
        _indexing, "_block_setitem", lambda *a: taken.append(original(*a)) or taken[-1]
    )
    rng = np.random.default_rng(2)
    hu, hn = rng.standard_normal((64, 6)), np.zeros((64, 6))
    u = mdarray.distributed_array(hu, rows(edges, on))
    new = mdarray.distributed_array(hn, rows(edges, on))
    shared = new.change_mode("replica")  # shares new's memory until new is written
    new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    hn[1:-1, 1:-1] = 0.25 * (hu[:-2, 1:-1] + hu[2:, 1:-1] + hu[1:-1, :-2] + hu[1:-1, 2:])
    np.testing.assert_array_equal(new.get(), hn)
    np.testing.assert_array_equal(shared.get(), np.zeros((64, 6)))
    ints = mdarray.distributed_array(np.arange(64 * 6).reshape(64, 6), rows(edges, on))
    new[:-1] = ints[1:]  # cast on the way in, as NumPy's assignment does
    hn[:-1] = np.arange(64 * 6).reshape(64, 6)[1:]
    np.testing.assert_array_equal(new.get(), hn)
    if len(new.layout.devices) == 1:
        assert taken == [True, True]


def test_assigning_an_overlapping_view_of_the_target_gets_numpy_values():
    host = np.arange(40.0).reshape(8, 5)
    x = mdarray.distributed_array(host, rows([0, 3, 5, 8], [0, 0, 0]))
    x[1:] = x[:-1]
    expected = host.copy()
    expected[1:] = host[:-1].copy()
    np.testing.assert_array_equal(x.get(), expected)
    x[:-2, 1:] = x[2:, :-1]
    expected[:-2, 1:] = expected[2:, :-1].copy()
    np.testing.assert_array_equal(x.get(), expected)


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_a_views_blocks_follow_its_source_through_copy_on_write(name):
    """A selection's device blocks come from its source's packed slabs
    (`Chunks.view_blocks`): after the source's family moves to a copy (a write to an
    array sharing its memory) they are the copy's, and a source that is gone leaves the
    view to its own chunks; the values are NumPy's every time."""
    edges, on = LAYOUTS[name]
    host = np.arange(64 * 5, dtype=np.float64).reshape(64, 5)
    x = mdarray.distributed_array(host, rows(edges, on))
    view = x[1:, 1:]
    shared = x.change_mode("replica")  # one memory for x, shared and view until a write
    x[0, 0] = -1.0  # x's family (view included) moves to a copy; shared keeps the old
    x[2, 3] = -2.0  # written through x: the view sees it
    expected = host.copy()
    expected[0, 0], expected[2, 3] = -1.0, -2.0
    got = view + x[:-1, :-1]
    np.testing.assert_array_equal(got.get(), expected[1:, 1:] + expected[:-1, :-1])
    np.testing.assert_array_equal(shared.get(), host)
    # A view not yet in its family holds its source, read or not; once it joins the
    # family (a copy saves its memory) a source that nothing else holds is gone.
    orphan = mdarray.distributed_array(host, rows(edges, on))[1:, 1:]
    held = orphan.storage.view_blocks() is not None
    orphan.storage.buffers  # (read: still apart from its family)
    assert (orphan.storage.view_blocks() is not None) == held
    copy.deepcopy(orphan)
    assert orphan.storage.view_blocks() is None
    np.testing.assert_array_equal((orphan + view).get(), host[1:, 1:] + expected[1:, 1:])
    selected = x[3:, :]
    if len(set(on)) == 1 and x.storage.slabs is not None:
        (block,) = blocks(selected.storage)
        np.testing.assert_array_equal(_host(block), expected[3:, :])


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_kept_block_views_are_dropped_when_the_slabs_move(name):
    """Device blocks made once per plan (`Chunks.slab_blocks`) stay valid only while the
    slabs are the same: after a copy on write moves x to new memory, the same views of
    x read (and write) the new memory, never the one `shared` kept."""
    edges, on = LAYOUTS[name]
    host = np.arange(64 * 5, dtype=np.float64).reshape(64, 5)
    x = mdarray.distributed_array(host, rows(edges, on))
    z = mdarray.distributed_array(host * 3, rows(edges, on))
    expected_x, expected_z = host.copy(), host * 3
    for step in range(3):
        z[1:, :] -= x[:-1, :]  # keeps x's and z's blocks for these keys
        expected_z[1:, :] -= expected_x[:-1, :]
        shared = x.change_mode("replica")  # x's memory, until x is written
        before = expected_x.copy()
        x[1:, :] += z[:-1, :]  # x moves to a copy, then is written there
        expected_x[1:, :] += expected_z[:-1, :]
        np.testing.assert_array_equal(shared.get(), before, err_msg=f"step {step}")
        np.testing.assert_array_equal(x.get(), expected_x, err_msg=f"step {step}")
        np.testing.assert_array_equal(z.get(), expected_z, err_msg=f"step {step}")


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_a_block_results_kept_blocks_are_its_memory(name, block_calls):
    """A result of the block path keeps the blocks its slabs flatten (`Chunks.packed`'s
    ``blocks``), and the views of one array share one reshape of its slab: the result's
    views read and write its own memory, through later writes and copies on write."""
    edges, on = LAYOUTS[name]
    rng = np.random.default_rng(3)
    hx, hy = rng.standard_normal((64, 5)), rng.standard_normal((64, 5))
    x = mdarray.distributed_array(hx, rows(edges, on))
    y = mdarray.distributed_array(hy, rows(edges, on))
    w = x[1:, :] + y[:-1, :]  # the block path: w is new, its blocks kept
    expected = hx[1:, :] + hy[:-1, :]
    assert any(block_calls) or len(set(on)) > 1  # across devices the shift needs moves
    if any(block_calls):
        xp = w.storage.backend.xp
        for block, slab in zip(blocks(w.storage), w.storage.slabs):
            assert xp.shares_memory(block, slab)
    kept = w.change_mode("replica")  # shares w's memory until w is written
    w[1:, :] -= w[:-1, :].copy()  # reads and writes w's blocks (a copy on write first)
    expected[1:, :] -= expected[:-1, :].copy()
    w[:, 1:] *= 2.0
    expected[:, 1:] *= 2.0
    np.testing.assert_array_equal(w.get(), expected)
    np.testing.assert_array_equal(kept.get(), hx[1:, :] + hy[:-1, :])
    np.testing.assert_array_equal((w[:-1, :] + w[1:, :]).get(), expected[:-1, :] + expected[1:, :])


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_a_block_result_of_transposed_operands_reads_its_values(name, block_calls):
    """The blocks of a transposed view lie in Fortran order, so the kernels' results
    do too (NumPy's order "K"): their C-order slabs are copies, and later readers and
    writers use the slabs, not those blocks (tests/test_libraries.py's
    scipy.stats.moment reads such a result after its block's memory went back to the
    pool)."""
    edges, on = LAYOUTS[name]
    host = np.random.default_rng(4).standard_normal((64, 5))
    t = mdarray.distributed_array(host, rows(edges, on)).T
    w = abs(t)
    expected = abs(host.T)
    np.testing.assert_allclose((w**3).get(), expected**3, rtol=1e-15)  # CuPy's pow
    np.testing.assert_array_equal((w[:, 1:] - w[:, :-1]).get(), expected[:, 1:] - expected[:, :-1])
    w[:, :3] *= -1.0
    expected[:, :3] *= -1.0
    np.testing.assert_array_equal(w.get(), expected)
    np.testing.assert_allclose(mdarray.sum(w * w, axis=1).get(), np.sum(expected**2, axis=1))


def test_a_0d_block_result_is_written_in_place():
    """``k = 1.0 * x[0]; k *= x[1]`` (scipy.signal.sos2zpk's gain): the block path's 0-d
    result is a scalar where NumPy's kernels give one, so its slab alone is kept and the
    in-place product writes k's memory."""
    host = np.array([2.0, 3.0, 5.0])
    x = mdarray.asarray(host, device=device(0))
    k = 1.0 * x[0]
    k *= x[1]
    k *= x[2]
    assert float(k) == 1.0 * host[0] * host[1] * host[2]
    k += k
    np.testing.assert_array_equal(k.get(), 2 * host[0] * host[1] * host[2])


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_a_broadcast_operand_spanning_chunks_is_read_from_its_block(name, monkeypatch):
    """``sq[:, None] - t``: the result takes `t`'s layout (one chunk per device), and each
    of its chunks reads `sq`'s rows from the device block they make (a view, nothing
    gathered) wherever one device holds them; NumPy's values, in place of an ``out`` too."""
    edges, on = LAYOUTS[name]
    rng = np.random.default_rng(4)
    hsq, ht = rng.standard_normal(64), rng.standard_normal((64, 3))
    sq = mdarray.distributed_array(hsq, rows(edges, on))
    t = mdarray.distributed_array(ht, {device(0): (slice(None), slice(None))})
    if len(set(on)) == 1:  # a gather would fail here
        monkeypatch.setattr(_ufunc_plans, "aligned", None)
        monkeypatch.setattr(_ufunc_pieces, "aligned", None)
    for _ in range(2):  # the plan is made, then taken
        np.testing.assert_array_equal((sq[:, None] - t).get(), hsq[:, None] - ht)
        np.testing.assert_array_equal((t * sq[:, None]).get(), ht * hsq[:, None])
    out = mdarray.asarray(t, copy=True)
    np.subtract(sq[:, None], t, out=out)
    np.testing.assert_array_equal(out.get(), hsq[:, None] - ht)
    column = sq[:, None]
    if sq.layout.device_blocks is not None and column.layout.device_blocks is not None:
        # The new axis's view reads the slab: no view per chunk is made for it.
        assert column.storage.view_blocks() is not None
        np.testing.assert_array_equal((column - t).get(), hsq[:, None] - ht)
        if len(set(on)) == 1:  # nothing moves between devices
            assert column.storage._buffers is None


@pytest.mark.parametrize("split", [False, True], ids=["one chunk", "a chunk per device"])
def test_a_transposed_view_reads_its_sources_chunks_without_joining(split):
    """``t.T`` of one chunk per device: its device blocks are views of its source's chunks
    (`Chunks.view_blocks`), read by products and elementwise ops without the view joining
    its family; after the source's family moves (a write to an array sharing its memory)
    they are the new memory's, and a write into the view reaches its source, as NumPy's."""
    rng = np.random.default_rng(7)
    host, other = rng.standard_normal((6, 40)), rng.standard_normal((40, 6))
    rows = {device(0): (slice(0, 3),), device(1): (slice(3, 6),)} if split else None
    rows = rows if rows and len(rows) == 2 else {device(0): (slice(None), slice(None))}
    t = mdarray.distributed_array(host, rows)
    view = t.T
    u = mdarray.distributed_array(other, view.layout)
    np.testing.assert_allclose((view @ t).get(), host.T @ host)
    np.testing.assert_array_equal((view + u).get(), host.T + other)
    assert view.storage._buffers is None  # read through its source's chunks alone
    shared = t.change_mode("replica")  # t's memory until a write
    t[0, 0] = -1.0  # t's family moves to a copy; shared keeps the old memory
    expected = host.copy()
    expected[0, 0] = -1.0
    np.testing.assert_array_equal((view + u).get(), expected.T + other)
    np.add(view, u, out=view)  # written through the view: its source sees it
    expected += other.T
    np.testing.assert_array_equal(t.get(), expected)
    np.testing.assert_array_equal(shared.get(), host)
    np.testing.assert_array_equal(view.get(), expected.T)
