"""The ways data gets in (mdarray/_ops/creation/ways_in.py) in one process: distributed_array's src=,
from_local_chunks and from_callback, against NumPy and distributed_array.

(Their SPMD behaviour, several processes under mpiexec, is tested in tests/spmd/mpi/.)
"""

import numpy as np
import pytest
from _layouts import device, devices, dist_pairs, sources, spread, two_chunks
from hypothesis import given

import mdarray
from mdarray import PROD, REPLICA, SUM, Layout
from mdarray.testing import assert_dist_equal


def _host_chunks(x) -> list:
    return [np.asarray(mdarray.testing._host(c)) for c in x.storage.buffers]


def _assert_same_chunks(x, y) -> None:
    assert x.layout == y.layout
    assert x.mode is y.mode
    assert x.dtype == y.dtype
    for a, b in zip(_host_chunks(x), _host_chunks(y)):
        np.testing.assert_array_equal(a, b)


# distributed_array(..., src=) ------------------------------------------------------------


@given(sources())
def test_src_scatter_matches_every_process_passing_the_array(source):
    array, layout, mode = source
    x = mdarray.distributed_array(array, layout, mode, src=0)
    _assert_same_chunks(x, mdarray.distributed_array(array, layout, mode))
    if mode is REPLICA:
        assert_dist_equal(x, array)


def test_src_scatter_writes_identities_in_partial_modes():
    layout = Layout((4,), spread({0: slice(0, 3), 1: slice(1, 4)}))
    x = mdarray.distributed_array(np.arange(1, 5.0), layout, SUM, src=0)
    assert_dist_equal(x, np.arange(1, 5.0))
    y = mdarray.distributed_array(np.arange(1, 5.0), layout, PROD, src=0)
    assert_dist_equal(y, np.arange(1, 5.0))
    _assert_same_chunks(y, mdarray.distributed_array(np.arange(1, 5.0), layout, PROD))


def test_src_takes_lists_and_scalars():
    assert_dist_equal(
        mdarray.distributed_array([[1, 2], [3, 4]], {device(0): ()}, src=0), [[1, 2], [3, 4]]
    )
    assert_dist_equal(mdarray.distributed_array(3.5, {device(1): ()}, src=0), np.array(3.5))


def test_src_reads_a_strided_view_with_negative_steps():
    array = np.arange(24.0).reshape(4, 6)[::-1, ::2]
    layout = Layout(array.shape, two_chunks((slice(0, 2),), (slice(2, 4),)))
    assert_dist_equal(mdarray.distributed_array(array, layout, src=0), array)


@pytest.mark.parametrize("src", [1, -1, True, 0.0, "0"])
def test_src_must_be_a_rank(src):
    with pytest.raises(ValueError, match=r"src must be the rank of a process \(0\.\.0\)"):
        mdarray.distributed_array(np.zeros(2), {device(0): ()}, src=src)


def test_src_rejects_a_distarray():
    x = mdarray.zeros(4)
    with pytest.raises(TypeError, match="a DistArray is distributed already"):
        mdarray.distributed_array(x, x.layout, src=0)


def test_src_reports_an_index_map_that_does_not_fit():
    with pytest.raises(ValueError, match="does not match"):
        mdarray.distributed_array(np.zeros(3), Layout.block((4,)), src=0)
    with pytest.raises(ValueError, match="uncovered"):
        mdarray.distributed_array(np.zeros(4), {device(0): slice(0, 2)}, src=0)


def test_src_reports_what_is_no_array():
    with pytest.raises(ValueError, match=r"the array of process 0 \(src\)"):
        mdarray.distributed_array([[1, 2], [3]], {device(0): ()}, src=0)
    with pytest.raises(TypeError, match="Python objects"):
        mdarray.distributed_array(np.array([None, 1]), {device(0): ()}, src=0)


# from_local_chunks -----------------------------------------------------------------------


@given(dist_pairs())
def test_from_local_chunks_rebuilds_an_array_from_its_chunks(pair):
    x, expected = pair
    y = mdarray.from_local_chunks(x.shape, x.layout, x.all_chunks(), x.mode)
    _assert_same_chunks(y, x)
    assert_dist_equal(y, expected)


def test_from_local_chunks_takes_an_index_map_and_bare_arrays():
    index_map = {device(0): [slice(0, 2), slice(4, 6)], device(1): slice(2, 4)}
    if device(0) == device(1):
        pytest.skip("needs two devices")
    chunks = {device(0): [np.array([0, 1]), np.array([4, 5])], device(1): np.array([2, 3])}
    assert_dist_equal(mdarray.from_local_chunks(6, index_map, chunks), np.arange(6))
    as_tuple = {device(0): (np.array([0, 1]), np.array([4, 5])), device(1): [[2, 3]]}
    assert_dist_equal(mdarray.from_local_chunks((6,), index_map, as_tuple), np.arange(6))


def test_from_local_chunks_in_a_partial_mode_combines_the_chunks_as_given():
    layout = Layout.replicated((3,), devices=devices(0, 1))
    chunks = {d: np.arange(3.0) for d in layout.devices}
    x = mdarray.from_local_chunks((3,), layout, chunks, "sum")
    assert_dist_equal(x, len(layout.devices) * np.arange(3.0))


def test_from_local_chunks_copies_the_chunks():
    chunk = np.arange(4.0)
    x = mdarray.from_local_chunks((4,), {device(0): ()}, {device(0): chunk})
    chunk[:] = -1
    assert_dist_equal(x, np.arange(4.0))


def test_from_local_chunks_of_a_0d_and_an_empty_array():
    assert_dist_equal(mdarray.from_local_chunks((), {device(0): ()}, {device(0): 7}), np.array(7))
    empty = mdarray.from_local_chunks((0, 3), {device(0): ()}, {device(0): np.zeros((0, 3))})
    assert_dist_equal(empty, np.zeros((0, 3)))


def _two_device_layout():
    if device(0) == device(1):
        pytest.skip("needs two devices")
    return Layout((4, 2), {device(0): [(slice(0, 1),), (slice(1, 2),)], device(1): (slice(2, 4),)})


@pytest.mark.parametrize(
    ("chunks", "message"),
    [
        (
            lambda d0, d1: {d0: [np.zeros((1, 2)), np.zeros((1, 2))]},
            r"process 0: device {d1}: its chunk is missing",
        ),
        (
            lambda d0, d1: {d0: np.zeros((1, 2)), d1: np.zeros((2, 2))},
            r"process 0: device {d0}: the layout gives it 2 chunks, 1 arrays were given",
        ),
        (
            lambda d0, d1: {d0: [np.zeros((1, 2)), np.zeros((2, 2))], d1: np.zeros((2, 2))},
            (
                r"process 0: device {d0}, chunk 1 \[1:2, 0:2\] has shape \(2, 2\), "
                r"its index needs \(1, 2\)"
            ),
        ),
        (
            lambda d0, d1: {d0: [np.zeros((1, 2))] * 2, d1: np.zeros((2, 2)), 999: np.zeros(1)},
            r"device 999 holds no chunk of the layout",
        ),
        (
            lambda d0, d1: {d0: [np.zeros((1, 2))] * 2, d1: np.zeros((2, 2)), "a": np.zeros(1)},
            r"'a' is not a device id",
        ),
        (
            lambda d0, d1: {d0: [np.zeros((1, 2))] * 2, d1: np.zeros((2, 2), np.int32)},
            r"the chunks have dtypes \['float64', 'int32'\]: one dtype is needed",
        ),
        (
            lambda d0, d1: [np.zeros((1, 2))] * 3,
            r"chunks must be a dict \{device: \[array, ...\]\}, got list",
        ),
    ],
)
def test_from_local_chunks_names_the_process_device_and_chunk_at_fault(chunks, message):
    layout = _two_device_layout()
    d0, d1 = layout.devices
    with pytest.raises(
        ValueError,
        match="from_local_chunks: .*" + message.replace("{d0}", str(d0)).replace("{d1}", str(d1)),
    ):
        mdarray.from_local_chunks((4, 2), layout, chunks(d0, d1))


def test_from_local_chunks_checks_the_layout_and_mode():
    with pytest.raises(ValueError, match="does not match"):
        mdarray.from_local_chunks((3,), Layout.block((4,)), {})
    with pytest.raises(ValueError, match="not a device"):
        mdarray.from_local_chunks((2,), {10**6: ()}, {10**6: np.zeros(2)})
    with pytest.raises(TypeError):
        mdarray.from_local_chunks((2,), {device(0): ()}, {device(0): np.array(["a", "b"])}, "sum")


# from_callback ---------------------------------------------------------------------------


@given(dist_pairs(mode=REPLICA))
def test_from_callback_makes_each_chunk_of_its_index(pair):
    x, expected = pair
    seen = []

    def fn(index):
        seen.append(index)
        return expected[index]

    y = mdarray.from_callback(x.shape, x.layout, fn)
    _assert_same_chunks(y, x)
    assert seen == [index for _, index in x.layout.chunks]


@given(sources())
def test_from_callback_in_every_mode_takes_the_results_as_the_chunks(source):
    array, layout, mode = source
    x = mdarray.distributed_array(array, layout, mode)
    chunks = iter(_host_chunks(x))  # fn is called for the chunks in layout order
    y = mdarray.from_callback(array.shape, layout, lambda index: next(chunks), mode=mode)
    _assert_same_chunks(y, x)


def test_from_callback_casts_to_dtype_or_promotes_the_results():
    layout = Layout((4,), spread({0: slice(0, 2), 1: slice(2, 4)}))
    x = mdarray.from_callback((4,), layout, lambda index: np.arange(4)[index], dtype="float32")
    assert_dist_equal(x, np.arange(4, dtype=np.float32))

    def mixed(index):
        return np.arange(4)[index] if index[0].start == 0 else np.arange(4.0)[index]

    assert_dist_equal(mdarray.from_callback(4, layout, mixed), np.arange(4.0))
    assert_dist_equal(
        mdarray.from_callback(4, layout, lambda index: [1, 2]), np.array([1, 2, 1, 2])
    )


def test_from_callback_reads_a_file_each_chunk_its_part(tmp_path):
    data = np.arange(30.0, dtype=np.float32).reshape(5, 6)
    data.tofile(tmp_path / "data.f32")
    stored = np.memmap(tmp_path / "data.f32", dtype=np.float32, mode="r", shape=(5, 6))
    layout = Layout.grid((5, 6), (2, 2), devices=devices(0, 1, 2, 3))
    x = mdarray.from_callback((5, 6), layout, lambda index: stored[index])
    assert_dist_equal(x, data)
    x[0, 0] = -1  # the chunks are the array's own, not the read-only file's
    assert stored[0, 0] == 0


def test_from_callback_reports_a_wrong_shape():
    layout = Layout((4,), {device(0): [slice(0, 1), slice(1, 4)]})
    with pytest.raises(
        ValueError,
        match=rf"from_callback: process 0: fn's result for the chunk \[1:4\] of device "
        rf"{device(0)} has shape \(2,\), its index needs \(3,\)",
    ):
        mdarray.from_callback((4,), layout, lambda index: np.zeros(min(index[0].stop, 2)))


def test_from_callback_raises_the_callbacks_own_error():
    def fn(index):
        raise FileNotFoundError("no such file: big.f32")

    with pytest.raises(FileNotFoundError, match=r"big\.f32"):
        mdarray.from_callback((4,), Layout.block((4,)), fn)


def test_from_callback_checks_dtype_and_mode():
    with pytest.raises(TypeError):
        mdarray.from_callback((2,), {device(0): ()}, lambda index: np.zeros(2), "U3", "sum")
    with pytest.raises(TypeError):
        mdarray.from_callback((2,), {device(0): ()}, lambda index: np.array(["a", "b"]), mode="sum")
