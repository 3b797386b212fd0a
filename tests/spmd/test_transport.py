"""The transport between processes (`mdarray._spmd.transport`), in a run of one process.

`mdarray.distributed.initialize()` without ``mpiexec`` makes an MPI run of one process; an
`Exchange` from that process to itself then goes through the same MPI (or NCCL) calls as
between processes. The multi-process suite (tests/spmd/mpi, run by tests/spmd/test_spmd.py under
``mpiexec``) covers the rest.
"""

import functools

import numpy as np
import pytest

import mdarray
from mdarray._backends.backend import backend as default_backend_object
from mdarray._movement import fetch as _fetch
from mdarray._spmd import transport as _transport
from mdarray._spmd.transport import Exchange

pytest.importorskip("mpi4py", reason="the transport needs mpi4py (the mpi extra)")


@pytest.fixture(scope="module")
def run_of_one():
    mdarray.distributed.initialize()
    try:
        yield default_backend_object()
    finally:
        mdarray.distributed.finalize()


def _exchange(backend, host, pieces, intos, devices):
    exchange = Exchange(backend, host=host)
    for piece, into, device in zip(pieces, intos, devices):
        exchange.send(piece, 0, None if host else device, None if host else device)
        exchange.receive(into, 0, None if host else device, None if host else device)
    exchange.run()


@pytest.mark.parametrize("dtype", ["float64", "complex64", "bool", "int16"])
def test_host_pieces_of_any_strides_arrive_in_place(run_of_one, dtype):
    rng = np.random.default_rng(0)
    source = (rng.standard_normal((9, 10, 4)) * 10).astype(dtype)
    pieces = [source[1:8:3, ::2, 1:], source[4], source[0, 0, 0:1], source[::-1][0, 5, 1:2]]
    target = np.zeros((9, 10, 4), dtype)
    intos = [target[0:3, 5:10, :3], target[8], target[1, 1, 3:4], target[2, 2, 0:1]]
    _exchange(run_of_one, True, pieces, intos, [None] * 4)
    for piece, into in zip(pieces, intos):
        np.testing.assert_array_equal(into, piece)
    untouched = np.ones(target.shape, bool)
    untouched[0:3, 5:10, :3] = untouched[8] = False
    untouched[1, 1, 3] = untouched[2, 2, 0] = False
    assert not target[untouched].any()


def test_runs_longer_than_the_count_limit_are_split(run_of_one, monkeypatch):
    monkeypatch.setattr(_transport, "COUNT_LIMIT", 7)
    source = np.arange(100, dtype=np.float64)
    into = np.zeros(100)
    strided = np.zeros((5, 30))[:, 3:23]  # rows of 160 bytes, split in runs of 7
    _exchange(run_of_one, True, [source, source[:100].reshape(5, 20)], [into, strided], [None] * 2)
    np.testing.assert_array_equal(into, source)
    np.testing.assert_array_equal(strided, source.reshape(5, 20))


def test_empty_pieces_move_nothing(run_of_one):
    exchange = Exchange(run_of_one, host=True)
    exchange.send(np.zeros((0, 3)), 0)
    exchange.receive(np.zeros((3, 0)), 0)
    assert not exchange.sends
    assert not exchange.receives
    exchange.run()


def test_device_pieces_cross_by_the_backends_transport(run_of_one):
    backend = run_of_one
    device = mdarray.devices()[0]
    rng = np.random.default_rng(1)
    host = rng.standard_normal((6, 8)).astype(np.float32)
    chunk = backend.from_host(host, device)
    into = backend.full((8, 6), 0, np.float32, device)
    # A strided piece, received into a strided view: NCCL on GPUs, MPI on the cpu backend.
    _exchange(backend, False, [chunk[::2, 1:7]], [into[1:4, :]], [device])
    got = np.asarray(into.get() if hasattr(into, "get") else into)
    np.testing.assert_array_equal(got[1:4], host[::2, 1:7])
    assert not got[0].any()
    assert not got[4:].any()


def test_gpu_pieces_without_nccl_go_through_the_host(run_of_one, monkeypatch):
    backend = run_of_one
    if backend.name != "cuda":
        pytest.skip("the staged path is the cuda backend's (CuPy chunks without NCCL)")
    monkeypatch.setattr(backend, "nccl", None)
    device = mdarray.devices()[0]
    host = np.arange(24, dtype=np.int64).reshape(4, 6)
    chunk = backend.from_host(host, device)
    into = backend.full((4, 6), -1, np.int64, device)
    _exchange(backend, False, [chunk[:, ::2]], [into[:, 3:]], [device])
    got = into.get()
    np.testing.assert_array_equal(got[:, 3:], host[:, ::2])
    assert (got[:, :3] == -1).all()


def test_the_run_of_one_is_the_single_process_library(run_of_one):
    assert mdarray.distributed.is_initialized()
    assert (mdarray.distributed.rank(), mdarray.distributed.size()) == (0, 1)
    assert mdarray.distributed.local_devices() == mdarray.devices()
    a = np.arange(12.0).reshape(3, 4)
    x = mdarray.distributed_array(a, mdarray.Layout.block(a.shape, axis=1))
    np.testing.assert_array_equal((x * 2).sum(axis=0).get(), (a * 2).sum(axis=0))
    np.testing.assert_array_equal(x.get(root=0), a)
    with pytest.raises(ValueError, match="root must be the rank"):
        x.get(root=1)


@pytest.mark.parametrize(
    ("mode", "dtype"),
    [("sum", np.float32), ("sum", np.complex128), ("prod", np.float64), ("max", np.int32)],
)
def test_whole_partials_combine_by_one_collective(run_of_one, mode, dtype):
    """Partial copies that each hold the whole array, over every device of the run: on
    GPUs one NCCL all-reduce (a communicator of one here); the value on every backend."""
    value = (np.arange(24).reshape(4, 6) % 5 + 1).astype(dtype)
    layout = mdarray.Layout.replicated(value.shape, devices=mdarray.devices())
    x = mdarray.distributed_array(value, layout, mode)
    np.testing.assert_array_equal(x.change_mode("replica").get(), value)
    if run_of_one.name == "cuda":
        combine = x.mode.ufunc(run_of_one.xp, x.dtype)
        assert _fetch.allreduced(x.storage, combine) is not None


class _OneProcessNccl:
    """NCCL's all-reduce and reduce-scatter over the devices of one process (the cpu
    backend's virtual devices), with NumPy: the layout work of the NCCL paths (folding,
    padding uneven blocks, unpacking) checked without GPUs, several devices included."""

    def allreduce(self, backend, pairs, combine, dtype):
        total = functools.reduce(combine, [send for send, _ in pairs.values()])
        for _, receive in pairs.values():
            receive[...] = total

    def reduce_scatter(self, backend, pairs, combine, dtype):
        total = functools.reduce(combine, [send.reshape(-1) for send, _ in pairs.values()])
        for device, (_, receive) in pairs.items():
            receive[...] = total[device * receive.size : (device + 1) * receive.size]


@pytest.fixture
def nccl_of_this_run(run_of_one, monkeypatch):
    """The backend with NCCL's links: the real ones on GPUs, `_OneProcessNccl` on cpu."""
    if run_of_one.nccl is None:
        monkeypatch.setattr(run_of_one, "nccl", _OneProcessNccl())
    return run_of_one


def _one_part_per_device(shape, kind):
    """A layout giving each device one part of an array of `shape`: blocks of rows (in
    device order or reversed), blocks of columns, or every n-th row (strided)."""
    devices = mdarray.devices()
    if kind == "columns":
        return mdarray.Layout.block(shape, axis=1, devices=devices)
    if kind == "reversed rows":
        return mdarray.Layout.block(shape, axis=0, devices=devices[::-1])
    if kind == "strided rows":
        n = len(devices)
        return mdarray.Layout(shape, {d: [(slice(k, None, n),)] for k, d in enumerate(devices)})
    return mdarray.Layout.block(shape, axis=0, devices=devices)


@pytest.mark.parametrize("kind", ["rows", "reversed rows", "columns", "strided rows"])
@pytest.mark.parametrize(
    ("mode", "dtype"),
    [("sum", np.float32), ("sum", np.complex128), ("prod", np.int64), ("min", np.int32)],
)
@pytest.mark.parametrize("extra", [0, 1], ids=["even", "uneven"])
def test_whole_partials_reduce_scatter_to_one_part_per_device(
    nccl_of_this_run, mode, dtype, extra, kind
):
    """Partial copies of the whole array on every device, resharded to one part per
    device: one NCCL reduce-scatter (parts packed in device order, uneven ones padded)."""
    backend = nccl_of_this_run
    n = len(mdarray.devices())
    rows = np.arange(2 * n + extra)[:, None] % 3
    value = (rows + np.arange(2 * n + extra) + 1).astype(dtype)
    replicated = mdarray.Layout.replicated(value.shape, mdarray.devices())
    x = mdarray.distributed_array(value, replicated, mode)
    target = _one_part_per_device(value.shape, kind)
    combine = x.mode.ufunc(backend.xp, x.dtype)
    scattered = _fetch.reduce_scattered(x.storage, combine, target)
    assert scattered is not None
    assert scattered.layout == target
    for (device, index), chunk in zip(target.chunks, scattered.buffers):
        np.testing.assert_array_equal(_fetch.to_host_now(backend, chunk, device), value[index])
    resharded = x.reshard(target)
    np.testing.assert_array_equal(resharded.get(), value)
    np.testing.assert_array_equal(x.change_mode("replica").get(), value)
