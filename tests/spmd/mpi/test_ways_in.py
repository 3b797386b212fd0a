"""The ways data gets in, run by every process of an SPMD run (``mpiexec -n N python -m
mpi4py -m pytest tests/spmd/mpi``; the harness initializes mdarray.distributed once).

Every process runs each test, in the same order: the collectives meet. Bad input on one
process must raise on every process (the test then passes everywhere) instead of leaving
the others waiting. The tests pass in a single-process run too.
"""

import numpy as np
import pytest

import mdarray
import mdarray.testing
from mdarray import MAX, PROD, SUM, Layout
from mdarray._spmd.processes import Remote
from mdarray.distributed import local_devices, rank, size


def _expected(shape=(7, 5), dtype=np.float64) -> np.ndarray:
    return np.arange(np.prod(shape), dtype=dtype).reshape(shape)


def _layouts(shape=(7, 5)) -> list:
    """Blocks over every device; several chunks per device (a grid of twice as many
    blocks, strided and overlapping chunks); a layout on process 0's devices alone."""
    everyone = mdarray.devices()
    n = len(everyone)
    twice = [d for d in everyone for _ in (0, 1)]
    first = everyone[0]
    overlapping = {
        d: [(slice(k % shape[0], shape[0], n),), (slice(0, 2), slice(k % shape[1], None))]
        for k, d in enumerate(everyone)
    }
    return [
        Layout.block(shape, devices=everyone),
        Layout.grid(shape, (len(twice), 1), devices=twice),
        Layout(shape, overlapping),
        Layout.replicated(shape, devices=[first]),
    ]


def _assert_local_chunks(x, expected) -> None:
    """The chunks of this process's devices hold their boxes of `expected` (no messages)."""
    for (device, index), chunk in zip(x.layout.chunks, x.storage.buffers):
        if device in local_devices():
            np.testing.assert_array_equal(mdarray.testing._host(chunk), expected[index])


def _last() -> int:
    return size() - 1


# distributed_array(..., src=) ------------------------------------------------------------


@pytest.mark.parametrize("which", range(4))
def test_src_scatters_from_every_rank(which):
    expected = _expected()
    layout = _layouts()[which]
    for src in range(size()):
        x = mdarray.distributed_array(expected if rank() == src else None, layout, src=src)
        assert x.dtype == expected.dtype
        _assert_local_chunks(x, expected)
        np.testing.assert_array_equal(x.get(), expected)


@pytest.mark.parametrize("mode", [SUM, PROD, MAX])
def test_src_scatters_partial_modes_with_their_identities(mode):
    expected = _expected((6, 3), np.int64) % 5 + 1
    layout = Layout.replicated((6, 3), devices=mdarray.devices())
    x = mdarray.distributed_array(
        expected if rank() == _last() else None, layout, mode, src=_last()
    )
    np.testing.assert_array_equal(x.get(), expected)
    y = mdarray.distributed_array(expected, layout, mode)  # every process has the data
    for a, b in zip(x.storage.buffers, y.storage.buffers):
        if not isinstance(a, Remote):
            np.testing.assert_array_equal(mdarray.testing._host(a), mdarray.testing._host(b))


def test_src_scatters_empty_and_0d_arrays():
    empty = mdarray.distributed_array(
        np.zeros((0, 3)) if rank() == 0 else None, Layout.block((0, 3)), src=0
    )
    assert empty.get().shape == (0, 3)
    scalar = mdarray.distributed_array(
        np.float32(2.5) if rank() == 0 else None, Layout.replicated((), mdarray.devices()), src=0
    )
    # (Checked chunk by chunk: get() of a 0-d array across processes fails in
    # _fetch.gather_host, whose ``out[()]`` is a scalar, not a view MPI can fill.)
    _assert_local_chunks(scalar, np.array(2.5, np.float32))
    assert scalar.dtype == np.float32


def test_src_bad_input_raises_on_every_process():
    data = _expected((4,)) if rank() == _last() else None
    with pytest.raises(ValueError, match="does not match"):
        mdarray.distributed_array(data, Layout.block((5,)), src=_last())
    with pytest.raises(ValueError, match="uncovered"):
        mdarray.distributed_array(data, {mdarray.devices()[0]: slice(0, 2)}, src=_last())
    ragged = [[1, 2], [3]] if rank() == _last() else None
    with pytest.raises(ValueError, match=rf"the array of process {_last()} \(src\)"):
        mdarray.distributed_array(ragged, Layout.block((2,)), src=_last())
    with pytest.raises(ValueError, match="src must be the rank of a process"):
        mdarray.distributed_array(data, Layout.block((4,)), src=size())
    # Nothing was left in flight: the next collective works.
    x = mdarray.distributed_array(data, Layout.block((4,)), src=_last())
    np.testing.assert_array_equal(x.get(), _expected((4,)))


# from_local_chunks -----------------------------------------------------------------------


def _own_chunks(layout, expected) -> dict:
    return {
        d: [expected[index] for index in indices]
        for d, indices in layout.index_map.items()
        if d in local_devices()
    }


@pytest.mark.parametrize("which", range(4))
def test_from_local_chunks_each_process_its_own(which):
    expected = _expected()
    layout = _layouts()[which]
    x = mdarray.from_local_chunks(expected.shape, layout, _own_chunks(layout, expected))
    assert x.dtype == expected.dtype
    _assert_local_chunks(x, expected)
    np.testing.assert_array_equal(x.get(), expected)
    y = mdarray.from_local_chunks(expected.shape, layout.index_map, _own_chunks(layout, expected))
    np.testing.assert_array_equal(y.get(), expected)


def test_from_local_chunks_of_partial_terms():
    layout = Layout.replicated((3,), devices=mdarray.devices())
    chunks = {d: np.full(3, d + 1) for d in local_devices()}
    x = mdarray.from_local_chunks(3, layout, chunks, "sum")
    total = sum(d + 1 for d in mdarray.devices())
    np.testing.assert_array_equal(x.get(), np.full(3, total))


def test_from_local_chunks_missing_chunk_raises_on_every_process():
    expected = _expected()
    layout = _layouts()[1]
    chunks = _own_chunks(layout, expected)
    if rank() == _last():
        missing = local_devices()[-1]
        del chunks[missing]
    else:
        missing = mdarray.devices()[-1]
    with pytest.raises(
        ValueError,
        match=rf"from_local_chunks: process {_last()}: device {missing}: its 2 chunks are missing",
    ):
        mdarray.from_local_chunks(expected.shape, layout, chunks)


def test_from_local_chunks_wrong_shape_raises_on_every_process():
    expected = _expected()
    layout = _layouts()[0]
    chunks = _own_chunks(layout, expected)
    device = local_devices()[0]
    if rank() == _last():
        chunks[device] = [np.zeros((1, 1))]
    with pytest.raises(ValueError, match=rf"process {_last()}: device \d+, chunk 0 .* has shape"):
        mdarray.from_local_chunks(expected.shape, layout, chunks)


def test_from_local_chunks_other_process_device_raises_on_every_process():
    expected = _expected()
    layout = _layouts()[0]
    chunks = _own_chunks(layout, expected)
    if rank() == _last() and size() > 1:
        chunks[mdarray.devices()[0]] = [expected[layout.chunks[0][1]]]
    if size() == 1:
        pytest.skip("needs another process")
    with pytest.raises(ValueError, match=rf"process {_last()}: device 0 is a device of process 0"):
        mdarray.from_local_chunks(expected.shape, layout, chunks)


def test_from_local_chunks_dtypes_must_agree():
    if size() == 1:
        pytest.skip("needs another process")
    expected = _expected()
    layout = _layouts()[0]
    chunks = _own_chunks(layout, expected.astype(np.float32 if rank() == 0 else np.float64))
    with pytest.raises(
        ValueError, match=r"differ in dtype \(process 0: float32, process 1: float64"
    ):
        mdarray.from_local_chunks(expected.shape, layout, chunks)


# from_callback ---------------------------------------------------------------------------


@pytest.mark.parametrize("which", range(4))
def test_from_callback_each_process_its_own_chunks(which):
    expected = _expected()
    layout = _layouts()[which]
    seen = []

    def read(index):
        seen.append(index)
        return expected[index]

    x = mdarray.from_callback(expected.shape, layout, read)
    mine = [index for device, index in layout.chunks if device in local_devices()]
    assert [repr(i) for i in seen] == [repr(i) for i in mine]
    assert x.dtype == expected.dtype  # agreed, also where a process made no chunk
    np.testing.assert_array_equal(x.get(), expected)
    y = mdarray.from_callback(expected.shape, layout, read, dtype=np.float32)
    np.testing.assert_array_equal(y.get(), expected.astype(np.float32))


def test_from_callback_promotes_the_processes_dtypes():
    expected = _expected()
    layout = _layouts()[0]
    dtype = np.int32 if rank() == 0 else np.float32
    x = mdarray.from_callback(expected.shape, layout, lambda index: expected[index].astype(dtype))
    assert x.dtype == (np.int32 if size() == 1 else np.float64)
    np.testing.assert_array_equal(x.get(), expected)


def test_from_callback_error_raises_on_every_process():
    layout = _layouts()[0]

    def read(index):
        if rank() == _last():
            raise FileNotFoundError("no such file: part.f32")
        return np.zeros(_shape(index))

    error = FileNotFoundError if rank() == _last() else RuntimeError
    with pytest.raises(error, match=r"part\.f32"):
        mdarray.from_callback((7, 5), layout, read)


def test_from_callback_wrong_shape_raises_on_every_process():
    layout = _layouts()[0]

    def read(index):
        shape = _shape(index)
        return np.zeros((shape[0] + 1, shape[1]) if rank() == _last() else shape)

    with pytest.raises(ValueError, match=rf"process {_last()}: fn's result for the chunk"):
        mdarray.from_callback((7, 5), layout, read)


def _shape(index) -> tuple:
    return tuple(len(range(s.start, s.stop, s.step)) for s in index)
