"""The backend interface: chunk allocation, moves, host copies and their accounting.

These run on the default backend, so the same tests check the cpu backend here and the
cuda backend under ``MDARRAY_BACKEND=cuda``.
"""

import ctypes
import inspect

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

import mdarray
from mdarray._backends import backend as _backend

try:
    import resource
except ImportError:  # not on Windows
    resource = None  # type: ignore[assignment]
from mdarray._backends.cuda.staging import row_copies as _row_copies, segments as _segments


@pytest.fixture
def backend():
    return _backend.backend()


def _host(backend, array):
    """A chunk array of `backend` as NumPy (through the backend's own host copy)."""
    out = backend.host_empty(array.shape, array.dtype)
    backend.to_host_into(out, array, backend.device_of(array) or 0)
    backend.synchronize()
    return out


def test_default_backend_and_devices(backend):
    assert mdarray.default_backend() == backend.name
    assert mdarray.devices() == backend.device_ids
    assert backend.device_ids
    assert _backend.get_backend(backend.name) is backend


def test_backend_for_reads_device_as_the_creation_functions_do(backend):
    """``device=`` names a backend only as a DeviceSet; any other device (an id, a Layout,
    None) means the default backend."""
    assert _backend.backend_for(mdarray.DeviceSet(backend.device_ids[:1])) is backend
    cpu = _backend.get_backend("cpu")
    assert _backend.backend_for(mdarray.DeviceSet(cpu.device_ids, backend="cpu")) is cpu
    layout = mdarray.Layout.block((4,), devices=backend.device_ids)
    for device in (None, backend.device_ids[0], layout):
        assert _backend.backend_for(device) is backend
    x = mdarray.zeros(4, device=mdarray.DeviceSet(backend.device_ids[:1]))
    assert x.storage.backend is backend


def test_unknown_backend_name_is_refused():
    with pytest.raises(ValueError, match="unknown mdarray backend 'tpu'"):
        _backend.get_backend("tpu")


def test_cpu_backend_needs_a_device():
    with pytest.raises(ValueError, match="at least 1"):
        _backend.CpuBackend(0)


@pytest.mark.parametrize("dtype", ["float32", "int64", "complex128", "bool"])
def test_empty_full_and_from_host_make_chunks_on_the_device(backend, dtype):
    device = backend.device_ids[-1]
    host = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    with mdarray.count_transfers() as moved:
        chunk = backend.from_host(host, device)
    assert moved[("host", device)] == host.nbytes
    assert backend.is_native(chunk)
    assert backend.device_of(chunk) in (None, device)
    np.testing.assert_array_equal(_host(backend, chunk), host)
    filled = backend.full((2, 3), 1, dtype, device)
    np.testing.assert_array_equal(_host(backend, filled), np.ones((2, 3), dtype))
    assert backend.empty((0, 5), dtype, device).shape == (0, 5)


def test_move_to_the_same_device_is_a_view_and_is_not_counted(backend):
    device = backend.device_ids[0]
    chunk = backend.from_host(np.arange(6.0), device)
    with mdarray.count_transfers() as moved:
        same = backend.move(chunk, device, device)
    assert same is chunk
    assert moved.total == 0


def test_move_between_devices_copies_once(backend):
    if len(backend.device_ids) < 2:
        pytest.skip("needs two devices")
    src, dst = backend.device_ids[0], backend.device_ids[1]
    host = np.arange(20.0).reshape(4, 5)
    chunk = backend.from_host(host, src)
    with mdarray.count_transfers() as moved:
        out = backend.move(chunk[:, 1:4], src, dst)
    assert moved[(src, dst)] == 4 * 3 * 8
    assert moved.copies == 1
    assert backend.device_of(out) in (None, dst)
    np.testing.assert_array_equal(_host(backend, out), host[:, 1:4])


def test_host_empty_gives_writable_host_arrays(backend):
    out = backend.host_empty((3, 2), np.int16)
    assert isinstance(out, np.ndarray)
    assert out.shape == (3, 2)
    assert out.dtype == np.int16
    out[...] = 7
    assert out.sum() == 42
    assert backend.host_empty((0,), np.float64).shape == (0,)


# A host view of a box of a bigger array, as `get` writes it: (shape, box as slices).
_VIEWS = [
    ((8, 16, 32), (slice(None),) * 3),
    ((8, 16, 32), (slice(1, 3), slice(None), slice(None))),
    ((8, 16, 32), (slice(None), slice(2, 5), slice(None))),
    ((8, 16, 32), (slice(None), slice(None), slice(4, 20))),
    ((8, 16, 32), (slice(2, 4), slice(3, 9), slice(0, 30))),
    ((8, 16, 32), (slice(None), slice(None), slice(None, None, 2))),
    ((64, 256), (slice(None), slice(0, 128))),
    ((64, 256), (slice(5, 6), slice(3, 4))),
    ((5,), (slice(1, 4),)),
    ((), ()),
]


@pytest.mark.parametrize(("shape", "box"), _VIEWS)
def test_to_host_into_fills_strided_views(backend, shape, box):
    device = backend.device_ids[-1]
    value = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    out = backend.host_empty(shape, np.float32)
    out[...] = -1
    box = (*box, ...)  # views, also for 0-d arrays
    chunk = backend.from_host(value[box], device)
    with mdarray.count_transfers() as moved:
        backend.to_host_into(out[box], chunk, device)
    backend.synchronize([device])
    assert moved[(device, "host")] == value[box].nbytes
    expected = np.full(shape, -1, np.float32)
    expected[box] = value[box]
    np.testing.assert_array_equal(out, expected)


def _apply_row_copies(view: np.ndarray, source: np.ndarray) -> None:
    """Do what the planned 2-D copies do, on host memory, to check the plan."""
    base = view.__array_interface__["data"][0]
    memory = np.frombuffer(view.base if view.base is not None else view, np.uint8)
    start = base - memory.__array_interface__["data"][0]
    src = source.reshape(-1).view(np.uint8)
    offset = 0
    for dst_offset, width, height, pitch in _row_copies(view):
        for row in range(height):
            at = start + dst_offset + row * pitch
            memory[at : at + width] = src[offset : offset + width]
            offset += width
    assert offset == source.nbytes


@example(shape=(4, 6, 300), lo=(0, 1, 0), hi=(4, 3, 300))
@given(
    shape=st.lists(st.integers(1, 40), min_size=1, max_size=4).map(tuple),
    lo=st.lists(st.integers(0, 39), min_size=4, max_size=4).map(tuple),
    hi=st.lists(st.integers(1, 40), min_size=4, max_size=4).map(tuple),
)
def test_row_copies_write_exactly_the_view(shape, lo, hi):
    box = tuple(
        slice(min(a, n - 1), max(min(a, n - 1) + 1, min(b, n))) for a, b, n in zip(lo, hi, shape)
    )
    parent = np.zeros(shape, np.float64)
    view = parent[box]
    if _row_copies(view) is None:
        return  # staged instead; the device test above covers that path
    source = np.arange(1, view.size + 1, dtype=np.float64).reshape(view.shape)
    _apply_row_copies(view, source)
    expected = np.zeros(shape)
    expected[box] = source
    np.testing.assert_array_equal(parent, expected)


def test_row_copies_merge_contiguous_axes():
    a = np.zeros((16, 32), np.float32)
    assert _row_copies(a) == ((0, 16 * 32 * 4, 1, 16 * 32 * 4),)
    assert _row_copies(a[:, 0:16]) == ((0, 64, 16, 128),) or _row_copies(a[:, 0:16]) is None
    b = np.zeros((4, 1024), np.float32)
    assert _row_copies(b[:, 0:512]) == ((0, 2048, 4, 4096),)
    assert _row_copies(b[:, ::2]) is None  # one-element rows: staged


@example(shape=(3, 5, 7), limit=60)
@given(
    shape=st.lists(st.integers(0, 9), min_size=0, max_size=4).map(tuple),
    limit=st.integers(1, 400),
)
def test_segments_tile_the_array_in_c_order(shape, limit):
    itemsize = 4
    flat = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    seen = np.zeros(shape, np.int32)
    offset = 0
    for index, start, nbytes in _segments(shape, itemsize, limit):
        piece = flat[(*index, ...)]
        assert start == offset
        assert nbytes == piece.nbytes
        assert nbytes <= max(limit, itemsize) or not piece.size
        np.testing.assert_array_equal(piece.ravel(), np.arange(start // 4, (start + nbytes) // 4))
        seen[(*index, ...)] += 1
        offset += nbytes
    if flat.size:
        assert offset == flat.nbytes
        assert (seen == 1).all()


def test_synchronize_accepts_any_device_subset(backend):
    backend.synchronize()
    backend.synchronize([])
    backend.synchronize(backend.device_ids[:1])


def test_export_to_current_is_harmless_without_user_streams(backend):
    backend.export_to_current(backend.device_ids[0])


def test_device_set_is_hashable_and_iterable():
    ds = mdarray.DeviceSet([0, 1], backend="cpu")
    assert list(ds) == [0, 1]
    assert len(ds) == 2
    assert 1 in ds
    assert ds == mdarray.DeviceSet((0, 1), backend="cpu")
    assert hash(ds) == hash(mdarray.DeviceSet((0, 1), backend="cpu"))
    assert ds != mdarray.DeviceSet([0, 1], backend="cuda")
    assert eval(repr(ds), {"DeviceSet": mdarray.DeviceSet}) == ds
    # A device id is the set of that one device: equal, and hashed alike.
    one = mdarray.DeviceSet([1], backend="cpu")
    assert one == 1
    assert one != 0
    assert ds != 0
    assert one != True  # noqa: E712 (a bool is not a device id)
    assert {one: "x"}[1] == "x"
    with pytest.raises(ValueError, match="at least one device"):
        mdarray.DeviceSet([])


# The protocol -----------------------------------------------------------------------

PROTOCOL_METHODS = sorted(
    name for name, value in vars(_backend.Backend).items() if callable(value) and name[0] != "_"
)


@pytest.mark.parametrize("cls", [_backend.CpuBackend, _backend.CudaBackend])
def test_every_backend_implements_the_protocol(cls):
    """Each method of `Backend` exists with the protocol's parameters (a backend may add
    optional ones after them)."""
    for name in PROTOCOL_METHODS:
        want = list(inspect.signature(getattr(_backend.Backend, name)).parameters)
        if not hasattr(cls, name):  # set per instance, declared on the class (cuda's `on`)
            assert name in cls.__annotations__, f"{cls.__name__}.{name}"
            continue
        attribute = getattr(cls, name)
        if not inspect.isfunction(attribute):  # a C callable (the cpu backend's `on`)
            assert callable(attribute), f"{cls.__name__}.{name}"
            continue
        got = list(inspect.signature(attribute).parameters)
        assert got[: len(want)] == want, f"{cls.__name__}.{name}{got} is not {want}"


def test_the_default_backend_is_a_backend(backend):
    assert isinstance(backend, _backend.Backend)


def test_backend_kernels_match_numpy(backend):
    device = backend.device_ids[-1]
    a = np.arange(-6, 6, dtype=np.int16).reshape(3, 4)
    chunk = backend.from_host(a, device)
    with backend.on(device):
        assert backend.ufunc_kernel(np.add) is not None
        total = backend.reduce(np.add, chunk, (0,), None, np.dtype(np.int64))
        folded = backend.reduce(np.bitwise_xor, chunk, (1,), None, np.dtype(np.int16))
        scanned = backend.accumulate(np.multiply, chunk, 1, None)
        outs = (backend.full((3, 4), 0.0, np.float64, device),)
        mask = backend.from_host(a > 0, device)
        masked = backend.call_masked(backend.ufunc_kernel(np.negative), (chunk,), outs, mask, {})
        backend.assign(chunk, (slice(0, 1), np.array([1, 3])), 7)
    np.testing.assert_array_equal(_host(backend, total), a.sum(axis=0, keepdims=True))
    np.testing.assert_array_equal(
        _host(backend, folded), np.bitwise_xor.reduce(a, axis=1, keepdims=True)
    )
    np.testing.assert_array_equal(_host(backend, scanned), np.multiply.accumulate(a, axis=1))
    np.testing.assert_array_equal(_host(backend, masked[0])[a > 0], -a[a > 0])
    expected = a.copy()
    expected[0, [1, 3]] = 7
    np.testing.assert_array_equal(_host(backend, chunk), expected)


_COMBINED = {  # dtype -> values whose copies fold to order-independent results
    "int8": np.array([127, 1, -128, -1, 100, 0], np.int8),  # sums and products wrap
    "float32": np.array([-0.0, -0.0, 1.5, np.inf, np.nan, -2.0], np.float32),
    "bool": np.array([True, False, False, True, False, True]),
    # Finite: how a product of complex infinities comes out is the library's own choice.
    "complex64": np.array([-0.0 - 0.0j, 1 + 2j, -3j, 0.5, 2, -1j], np.complex64),
}


@pytest.mark.parametrize("dtype", list(_COMBINED))
@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.minimum])
@pytest.mark.parametrize("count", [1, 2, 4])
@pytest.mark.parametrize("copies", [1, 3])
def test_combine_folds_copies_like_numpy(backend, dtype, ufunc, count, copies):
    # The kernel that combines partial copies (one fused kernel of CuPy's own ufuncs on
    # the cuda backend): the left fold of the pieces, stacked `copies` times, -0.0 kept.
    if np.dtype(dtype).kind == "c" and ufunc in (np.maximum, np.minimum):
        pytest.skip("MAX and MIN are not defined for complex")
    device = backend.device_ids[-1]
    rng = np.random.default_rng(count * 10 + copies)
    values = _COMBINED[dtype]
    pieces = [values[rng.permutation(len(values))].reshape(2, 3) for _ in range(count)]
    if count > 1:
        pieces[0][0, 0] = pieces[1][0, 0] = values[0]  # every copy -0.0: the sum is -0.0
    expected = pieces[0]
    with np.errstate(all="ignore"):
        for piece in pieces[1:]:
            expected = ufunc(expected, piece)
    on_device = [backend.from_host(p, device) for p in pieces]
    kernel = getattr(backend.xp, ufunc.__name__)
    with backend.on(device), np.errstate(all="ignore"):
        got = _host(backend, backend.combine(kernel, on_device, copies, np.dtype(dtype)))
    assert got.shape == (copies, 2, 3)
    assert got.dtype == np.dtype(dtype)
    for copy in got:
        np.testing.assert_array_equal(copy, expected)
        # A NaN's sign is the hardware's choice; a zero's is IEEE's.
        if ufunc is np.add and np.dtype(dtype).kind in "fc" and not np.isnan(expected[0, 0]):
            assert np.signbit(np.real(copy[0, 0])) == np.signbit(np.real(expected[0, 0]))


def test_move_into_writes_the_piece_and_counts_other_devices(backend):
    devices = mdarray.devices()
    other = devices[-1]
    piece = backend.from_host(np.arange(6.0).reshape(2, 3), devices[0])
    out = backend.full((4, 3), -1.0, np.float64, other)
    with mdarray.count_transfers() as moved:
        backend.move_into(out, (slice(1, 3), Ellipsis), piece, devices[0], other)
    want = np.full((4, 3), -1.0)
    want[1:3] = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(_host(backend, out), want)
    assert moved.total == (48 if other != devices[0] else 0)


def _c_library():
    try:
        return ctypes.CDLL(None)
    except (OSError, TypeError):
        return None


@pytest.mark.skipif(
    resource is None or _backend.backend().name != "cpu",
    reason="page faults counted on the cpu backend, where getrusage exists",
)
def test_chunked_results_reuse_freed_memory():
    """Results of a few MiB per chunk come from memory the allocator kept: no page faults
    once warm (glibc gave them back to the system and every result faulted again:
    about 2000 faults per call here)."""
    if not hasattr(_c_library(), "mallopt"):
        pytest.skip("the C library has no mallopt")
    devices = mdarray.devices()
    host = np.ones((2048, 1024), np.float32)  # 8 MiB: 2 MiB per chunk
    x = mdarray.distributed_array(
        host,
        mdarray.Layout.block(host.shape, devices=[devices[k % len(devices)] for k in range(4)]),
    )

    def faults() -> int:
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

    for _ in range(3):
        y = x + x
    start = faults()
    for _ in range(5):
        y = x + x
    assert faults() - start < 200
    np.testing.assert_array_equal(y.get(), host + host)
