"""Elementwise calls on operands whose chunks do not line up run cell by cell
(`mdarray._ops.engine.ufunc_cells`): NumPy's values on drawn layouts, nothing gathered, and across
devices only the cells' halo pieces move."""

import numpy as np
import pytest
from _backend_facts import ON_CUDA
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray import Layout
from mdarray._exec import chunkwise
from mdarray._ops.engine import ufunc_plans as _ufunc_plans
from mdarray.testing import strategies as mst

DEVICES = mdarray.devices()


@pytest.fixture
def no_gather(monkeypatch):
    """The gathered path (`aligned`) fails: what passes ran cell by cell."""

    def refuse(*args, **kwargs):
        raise AssertionError("an operand was gathered")

    monkeypatch.setattr(_ufunc_plans, "aligned", refuse)


def test_a_stencil_on_row_blocks_moves_only_halo_rows(no_gather):
    host = np.arange(64 * 6, dtype=np.float64).reshape(64, 6)
    u = mdarray.distributed_array(host, Layout.block(host.shape, devices=DEVICES))
    for _ in range(2):  # the plan is made, then taken
        with mdarray.count_transfers() as moved:
            got = u[:-2, 1:-1] + u[2:, 1:-1] - u[1:-1, :-2] * u[1:-1, 2:]
        want = host[:-2, 1:-1] + host[2:, 1:-1] - host[1:-1, :-2] * host[1:-1, 2:]
        np.testing.assert_array_equal(got.get(), want)
        # Two halo rows of four values per device boundary and shifted operand, at most.
        assert moved.total <= 2 * 4 * 8 * 2 * (len(DEVICES) - 1)


@pytest.mark.skipif(len(DEVICES) < 2, reason="one device's row chunks make one block: no cells")
def test_a_large_call_runs_each_chunks_cells_on_its_devices_thread(no_gather, monkeypatch):
    """Above the backend's `parallel_bytes` every piece moves first, then each chunk's
    cells run through `Backend.each` (on the cpu backend, the devices' threads)."""
    host = np.arange(40 * 5, dtype=np.float64).reshape(40, 5)
    u = mdarray.distributed_array(host, Layout.block(host.shape, devices=DEVICES * 2))
    backend = u.storage.backend
    rows_run = []
    each = backend.each

    def counting(fn, rows, *args, **kwargs):
        rows_run.append(len(rows))
        return each(fn, rows, *args, **kwargs)

    monkeypatch.setattr(backend, "parallel_bytes", 0)
    monkeypatch.setattr(backend, "each", counting)
    got = u[:-1, :] * 2.0 + u[1:, :]
    np.testing.assert_array_equal(got.get(), host[:-1, :] * 2.0 + host[1:, :])
    assert len(DEVICES) * 2 in rows_run  # one row per result chunk


@settings(max_examples=40)
@given(data=st.data(), shift=st.integers(0, 3), op=st.sampled_from([np.add, np.multiply]))
def test_misaligned_operands_match_numpy(data, shift, op):
    rows = data.draw(st.integers(4, 12))
    a = data.draw(mst.dist_arrays(np.float64, (rows, 3), modes=mdarray.REPLICA))
    b = data.draw(mst.dist_arrays(np.float64, (rows, 3), modes=mdarray.REPLICA))
    ha, hb = a.get(), b.get()
    n = rows - shift
    for _ in range(2):
        got = op(a[:n], b[shift:])
        np.testing.assert_array_equal(got.get(), op(ha[:n], hb[shift:]))
        got = op(a[shift:, None, :], b[:n, :1])  # broadcast, another rank
        np.testing.assert_array_equal(got.get(), op(ha[shift:, None, :], hb[:n, :1]))
    assert got.dtype == np.float64


def test_a_cast_result_and_a_scalar_in_cells(no_gather):
    host = np.arange(40, dtype=np.int32).reshape(10, 4)
    x = mdarray.distributed_array(host, Layout.block(host.shape, devices=DEVICES))
    y = mdarray.distributed_array(
        host.astype(np.float32), Layout.block((10, 4), devices=DEVICES[::-1])
    )
    for _ in range(2):
        got = x[1:] / 3 + y[:-1]
        np.testing.assert_allclose(got.get(), host[1:] / 3 + host[:-1].astype(np.float32))
        assert got.dtype == np.float64
        got = np.maximum(x[1:], y[:-1]) + 1.5
        want = np.maximum(host[1:], host[:-1].astype(np.float32)) + 1.5
        np.testing.assert_array_equal(got.get(), want)


def test_in_place_updates_by_misaligned_operands_run_in_cells(no_gather):
    """``y[1:, :] -= u[:-1, :]`` (CG's stencil) and ``z[1:] -= z[:-1]`` (out read shifted
    by itself): the results come cell by cell from views (no operand gathered), then go
    into ``out`` after all of them are computed, as NumPy's values."""
    host = np.arange(40 * 5, dtype=np.float64).reshape(40, 5) ** 1.5
    layout = Layout.block(host.shape, devices=DEVICES)
    for _ in range(2):  # the plan is made, then taken
        u = mdarray.distributed_array(host, layout)
        y = 4 * u
        y[1:, :] -= u[:-1, :]
        y[:, 1:] -= u[:, :-1]
        want = 4 * host
        want[1:, :] -= host[:-1, :]
        want[:, 1:] -= host[:, :-1]
        np.testing.assert_array_equal(y.get(), want)
        z = mdarray.distributed_array(host, layout)
        z[1:] -= z[:-1]
        np.testing.assert_array_equal(z.get(), _shifted(host))
        np.multiply(u[1:], u[:-1], out=z[:-1])
        want_z = _shifted(host)
        want_z[:-1] = host[1:] * host[:-1]
        np.testing.assert_array_equal(z.get(), want_z)


@pytest.mark.filterwarnings("default::RuntimeWarning")
def test_in_place_cells_write_out_themselves_where_nothing_else_meets_it(no_gather, monkeypatch):
    """``z[1:, :] -= y[:-1, :]`` on the cpu backend: the kernels write ``z``'s chunks cell
    by cell (no fresh results committed), where no operand but ``out`` meets its memory:
    another array, a copy of ``z`` sharing its memory until written. A view of ``z``
    read shifted, or a raising error state, takes the staged commit: NumPy's values
    either way, and a failed call writes nothing."""

    commits = []
    real = chunkwise.commit
    monkeypatch.setattr(chunkwise, "commit", lambda *a: commits.append(1) or real(*a))

    host = np.arange(40 * 5, dtype=np.float64).reshape(40, 5) ** 1.5
    other = host[::-1].copy()
    layout = Layout.block(host.shape, devices=DEVICES)
    several = len(layout.chunks) > 1
    in_place = mdarray.default_backend() == "cpu" or not several
    for _ in range(2):
        z = mdarray.distributed_array(host, layout)
        y = mdarray.distributed_array(other, layout)
        before = mdarray.asarray(z, copy=True)  # z's memory until z is written
        commits.clear()
        z[1:, :] -= y[:-1, :]
        want = host.copy()
        want[1:, :] -= other[:-1, :]
        np.testing.assert_array_equal(z.get(), want)
        np.testing.assert_array_equal(before.get(), host)
        np.testing.assert_array_equal(y.get(), other)
        assert (commits == []) == in_place
        z[2:] += before[:-2]  # the copy, apart from z once z is written
        want[2:] += host[:-2]
        np.testing.assert_array_equal(z.get(), want)
        assert (commits == []) == in_place
        np.add(z[:-1], z[1:], out=z[1:])  # out read shifted by another view of it
        want[1:] = want[:-1] + want[1:].copy()
        np.testing.assert_array_equal(z.get(), want)
        assert bool(commits) == several
        if not ON_CUDA:  # CuPy's kernels do not raise floating-point errors
            big = mdarray.distributed_array(np.full(host.shape, 1e308), layout)
            with np.errstate(over="raise"), pytest.raises(FloatingPointError):
                big[1:] *= y[:-1]  # overflows in some cells: nothing written
            np.testing.assert_array_equal(big.get(), np.full(host.shape, 1e308))


def _shifted(host):
    out = host.copy()
    out[1:] -= host[:-1]
    return out
