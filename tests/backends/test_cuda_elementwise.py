"""The cuda backend's generated elementwise launches (`mdarray._backends.cuda.elementwise`) give
CuPy's values bit for bit, take the calls they are for, and leave the rest to CuPy.

Skipped unless CuPy imports and the default backend is cuda (``MDARRAY_BACKEND=cuda`` on
a GPU machine).
"""

import numpy as np
import pytest
from _backend_facts import CUDA_ONLY

import mdarray
from mdarray._backends.cuda import elementwise as _cuda_elementwise
from mdarray._backends.cuda.elementwise import Chain, Elementwise
from mdarray._kernels import kernels as _kernels

cupy = pytest.importorskip("cupy")

pytestmark = CUDA_ONLY


@pytest.fixture(autouse=True)
def _every_size(monkeypatch):
    """The generated kernels for every size here (the backend keeps small calls on
    CuPy's ufunc: `test_small_calls_stay_cupys`)."""
    monkeypatch.setattr(_cuda_elementwise, "_MIN_BYTES", 0)


DTYPES = [
    np.bool_,
    np.int8,
    np.uint16,
    np.int32,
    np.int64,
    np.float16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
]


def _ufuncs(nin):
    out = []
    for name in sorted(dir(np)):
        ufunc = getattr(np, name)
        own = getattr(cupy, name, None)
        if (
            isinstance(ufunc, np.ufunc)
            and isinstance(own, cupy.ufunc)
            and ufunc.nin == nin
            and ufunc.nout == 1
            and ufunc.__name__ == name
        ):
            out.append(name)
    return out


def _numpy_has(name, dtype) -> bool:
    """Whether NumPy's ufunc `name` has a loop for `dtype` operands (mdarray calls CuPy's
    only on those; CuPy fails to compile some others)."""
    ufunc = getattr(np, name)
    try:
        ufunc.resolve_dtypes((np.dtype(dtype),) * ufunc.nin + (None,))
    except (TypeError, ValueError):
        return False
    return True


def _values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    kind = np.dtype(dtype).kind
    if kind == "b":
        host = rng.integers(0, 2, shape).astype(dtype)
    elif kind in "iu":
        info = np.iinfo(dtype)
        host = rng.integers(max(info.min, -50), min(info.max, 50), shape, endpoint=True)
        host = host.astype(dtype)
    else:
        host = rng.standard_normal(shape) * 4
        if kind == "c":
            host = host + 1j * rng.standard_normal(shape)
        host = host.astype(dtype)
        flat = host.reshape(-1)
        flat[: min(4, flat.size)] = np.array([0, np.inf, -np.inf, np.nan])[: min(4, flat.size)]
    return cupy.asarray(host)


def _same(ours, theirs):
    assert ours.dtype == theirs.dtype
    assert ours.shape == theirs.shape
    a, b = cupy.asnumpy(ours), cupy.asnumpy(theirs)
    assert a.tobytes() == b.tobytes(), (a, b)


def _launched(launcher) -> int:
    return launcher.launches()


def _compared(name, dtype, args):
    """CuPy's ufunc `name` and its launcher, once their results on `args` are compared;
    None where NumPy has no loop for `dtype`, or CuPy lacks it (mdarray adapts it) and
    none is generated either."""
    own = getattr(cupy, name)
    launcher = Elementwise(cupy, getattr(np, name))
    if not _numpy_has(name, dtype):
        return None
    try:
        theirs = own(*args)
    except Exception:
        assert np.dtype(dtype) not in launcher._loops
        return None
    _same(launcher(*args), theirs)
    return own, launcher


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", _ufuncs(2))
def test_binary_ufuncs_bit_for_bit(name, dtype):
    a, b = _values(1003, dtype, 1), _values(1003, dtype, 2)
    compared = _compared(name, dtype, (a, b))
    if compared is None:
        return
    own, launcher = compared
    rows_a, rows_b = _values((37, 45), dtype, 3)[:, 2:], _values((37, 43), dtype, 4)
    _same(launcher(rows_a, rows_b), own(rows_a, rows_b))
    one = _values((1,), dtype, 5)
    _same(launcher(a, one), own(a, one))
    _same(launcher(one, rows_b), own(one, rows_b))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", _ufuncs(1))
def test_unary_ufuncs_bit_for_bit(name, dtype):
    compared = _compared(name, dtype, (_values(1003, dtype, 1),))
    if compared is None:
        return
    own, launcher = compared
    rows = _values((19, 40), dtype, 3)[:, 1:]
    _same(launcher(rows), own(rows))


@pytest.mark.parametrize("scalar", [2, 2.5, True, -3, 1.5 - 2j])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex64])
def test_python_scalars_as_cupy_takes_them(dtype, scalar):
    a = _values(1001, dtype, 7)
    for name in ("add", "multiply", "true_divide", "subtract", "less", "power"):
        own = getattr(cupy, name)
        launcher = Elementwise(cupy, getattr(np, name))
        for args in ((a, scalar), (scalar, a)):
            try:
                theirs = own(*args)
            except (TypeError, ValueError, OverflowError):
                continue
            _same(launcher(*args), theirs)


def test_the_common_calls_take_the_generated_kernels():
    a, b = _values(4096, np.float32, 1), _values(4096, np.float32, 2)
    views = _values((64, 66), np.float32, 3)
    for args in ((a, b), (a, 2.0), (3, a), (a, b[:1]), (views[:, 1:-1], views[:, 2:])):
        launcher = Elementwise(cupy, np.add)
        _same(launcher(*args), cupy.add(*args))
        assert _launched(launcher) == 1, args


def test_calls_outside_its_cases_are_cupys():
    a = _values((8, 6), np.float32, 1)
    cases = [
        (a, a[:, :1]),  # broadcasting
        (a, a.astype(np.float64)),  # mixed dtypes
        (a.T, a.T),  # strided columns
        (a, np.float32(2)),  # a NumPy scalar (a strong type)
        (a.astype(np.int32), 2.5),  # a float scalar on integers: float64 result
    ]
    for args in cases:
        launcher = Elementwise(cupy, np.add)
        _same(launcher(*args), cupy.add(*args))
        assert _launched(launcher) == 0, args
    launcher = Elementwise(cupy, np.add)
    _same(launcher(a, a, dtype=np.float64), cupy.add(a, a, dtype=np.float64))
    assert _launched(launcher) == 0


def test_out_in_place_and_overlapping():
    own = cupy.subtract
    launcher = Elementwise(cupy, np.subtract)
    base = _values((40, 33), np.float32, 1)
    ours, theirs = base.copy(), base.copy()
    launcher(ours, ours[::-1].copy(), out=(ours,))  # the same elements read and written
    own(theirs, theirs[::-1].copy(), out=theirs)
    _same(ours, theirs)
    assert _launched(launcher) == 1
    # A shifted view of itself: the kernel's threads would race; CuPy orders it.
    launcher = Elementwise(cupy, np.subtract)
    ours, theirs = base.copy(), base.copy()
    launcher(ours[1:, :], ours[:-1, :], out=(ours[1:, :],))
    own(theirs[1:, :], theirs[:-1, :], out=theirs[1:, :])
    _same(ours, theirs)
    assert _launched(launcher) == 0
    # Rows of a view written in place, the rows kernel.
    launcher = Elementwise(cupy, np.subtract)
    ours, theirs = base.copy(), base.copy()
    other = _values((40, 30), np.float32, 2)
    launcher(ours[:, 1:-2], other, out=(ours[:, 1:-2],))
    own(theirs[:, 1:-2], other, out=theirs[:, 1:-2])
    _same(ours, theirs)
    assert _launched(launcher) == 1


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 4099])
def test_lengths_offsets_and_tails(n):
    base = _values(n + 5, np.float32, 1)
    launcher = Elementwise(cupy, np.multiply)
    for offset in (0, 1, 4):  # an offset of one element cannot take vector loads
        a = base[offset : offset + n]
        _same(launcher(a, a), cupy.multiply(a, a))
    _same(launcher(base[:0].reshape(0, 3), 2.0), cupy.multiply(base[:0].reshape(0, 3), 2.0))


def test_small_calls_stay_cupys(monkeypatch):
    monkeypatch.setattr(_cuda_elementwise, "_MIN_BYTES", 16 << 20)
    launcher = Elementwise(cupy, np.add)
    small = _values(1024, np.float32, 1)
    _same(launcher(small, small), cupy.add(small, small))
    assert _launched(launcher) == 0
    large = cupy.ones(4 << 20, np.float32)
    _same(launcher(large, 1.0), cupy.add(large, 1.0))
    assert _launched(launcher) == 1


def test_distarray_ufuncs_run_on_generated_kernels():
    host = np.arange(4096, dtype=np.float32).reshape(64, 64)
    x = mdarray.asarray(host)
    backend = x.storage.backend
    kernel = backend.ufunc_kernel(np.add)
    assert isinstance(kernel, Elementwise)
    before = _launched(kernel)
    np.testing.assert_array_equal((x + x).get(), host + host)
    np.testing.assert_array_equal((x + 1.5).get(), host + 1.5)
    assert _launched(kernel) > before


@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.float32, np.complex128])
def test_a_bound_launch_gives_the_launchers_values_and_checks_its_arguments(dtype):
    launcher = Elementwise(cupy, np.multiply)
    a, b = _values(1003, dtype, 1), _values(1003, dtype, 2)
    bound = launcher.sized(0, (a, b))
    assert isinstance(bound, _cuda_elementwise.Bound)
    for x, y in [(a, b), (b, a), (_values(1003, dtype, 3), b)]:
        _same(bound(x, y), cupy.multiply(x, y))
    # Other arguments than it was made for: the launcher's own way, the same values.
    for x, y in [(a[:500], b[:500]), (a[::2], b[::2]), (a.reshape(17, 59), b.reshape(17, 59))]:
        _same(bound(x, y), cupy.multiply(x, y))
    scaled = launcher.sized(0, (a, 3))
    for value in (3, 5, -2):
        _same(scaled(a, value), cupy.multiply(a, value))
    if np.dtype(dtype).kind == "i":  # no int32 holds it: CuPy's own call refuses it
        for call in (scaled, cupy.multiply):
            with pytest.raises(OverflowError):
                call(a, 1 << 40)


def test_a_bound_launch_is_the_launcher_where_no_kernel_is_generated():
    launcher = Elementwise(cupy, np.add)
    a = _values(64, np.float32, 1)
    assert launcher.sized(0, (a, a[:1].reshape(1, 1) + a[:8].reshape(8, 1))) is launcher
    assert launcher.sized(0, (a, a)).__class__ is _cuda_elementwise.Bound
    assert launcher.sized(1 << 40, (a, a)).__class__ is _cuda_elementwise.Bound


def _unfused(fn, *args):
    """`fn` on CuPy's ufuncs, one call per op."""
    return _kernels.with_kernels(fn, lambda ufunc: getattr(cupy, ufunc.__name__))(*args)


CHAINS = {
    "sin(a) * 2 + b": lambda a, b: np.sin(a) * 2 + b,
    "a * b + a": lambda a, b: a * b + a,
    "(a - b) / (a + b)": lambda a, b: (a - b) / (a + b),
    "exp(-(a * a)) * 0.5": lambda a, b: np.exp(-(a * a)) * 0.5,
    "hypot(a, b) * b - 1": lambda a, b: np.hypot(a, b) * b - 1,
    "(a > b) & (b > 0)": lambda a, b: (a > b) & (b > 0),
    "abs(a - b) <= 1": lambda a, b: abs(a - b) <= 1,
}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.int32])
@pytest.mark.parametrize("name", list(CHAINS))
def test_fused_chains_give_the_unfused_values_bit_for_bit(name, dtype):
    fn = CHAINS[name]
    a, b = _values(1003, dtype, 1), _values(1003, dtype, 2)
    try:
        theirs = _unfused(fn, a, b)
    except Exception:  # CuPy has no such loop (hypot of complex, ...)
        return
    chain = Chain(cupy, fn, "chain")
    ours = chain(a, b)
    if ours is None:  # a step CuPy's loops take differently: the caller runs it
        assert np.dtype(dtype).kind != "f" or dtype is np.float16, name
        return
    _same(ours, theirs)
    assert chain.launches() == 1
    rows_a, rows_b = _values((37, 45), dtype, 3)[:, 2:], _values((37, 43), dtype, 4)
    _same(chain(rows_a, rows_b), _unfused(fn, rows_a, rows_b))
    one = _values((1,), dtype, 5)
    _same(chain(a, one), _unfused(fn, a, one))


def test_fused_chain_multiply_add_is_not_contracted():
    # a * b + c rounds twice unfused; an FMA would round once and differ here.
    rng = np.random.default_rng(3)
    a, b, c = (cupy.asarray(rng.standard_normal(4096)) for _ in range(3))
    fn = lambda a, b, c: a * b + c  # noqa: E731
    _same(Chain(cupy, fn, "madd")(a, b, c), _unfused(fn, a, b, c))


def test_fused_chain_reads_the_values_it_closes_over_at_each_call():
    a = _values(2048, np.float32, 1)
    scale = [2.0]
    chain = Chain(cupy, lambda a: a * scale[0] + 1, "scaled")
    for value in (2.0, -0.5, 3):
        scale[0] = value
        _same(chain(a), a * value + 1)
    assert chain.launches() == 1  # one kernel: the values are its arguments


def test_fused_chains_outside_its_cases_are_left_to_the_caller():
    a = _values((8, 6), np.float32, 1)
    cases = [
        (lambda a, b: np.where(a > b, a, b), (a, a)),  # not a ufunc
        (lambda a, b: a.astype(np.float64) + b, (a, a)),  # a method
        (lambda a, b: a + b, (a, a.astype(np.float64))),  # mixed dtypes in one step
        (lambda a, b: a + b, (a, a[:, :1])),  # broadcasting
        (lambda a, b: a + b, (a.T, a.T)),  # strided columns
        (lambda a, b: a + 1.5j, (a, a)),  # a complex scalar on floats
        (lambda a, b: a, (a, a)),  # no step
        (lambda a, b: np.add(a, b, dtype=np.float64), (a, a)),  # options
    ]
    for fn, args in cases:
        assert Chain(cupy, fn, "other")(*args) is None


def test_mdarray_fuse_runs_on_a_generated_kernel(monkeypatch):
    launched = []
    original = _cuda_elementwise.launch

    def counting(call, *rest):
        launched.append(len(call.steps))
        return original(call, *rest)

    monkeypatch.setattr(_cuda_elementwise, "launch", counting)
    rng = np.random.default_rng(4)
    hx, hy = rng.standard_normal((64, 32)), rng.standard_normal((64, 32))
    x, y = mdarray.asarray(hx), mdarray.asarray(hy)
    fused = mdarray.fuse(CHAINS["sin(a) * 2 + b"])
    got = fused(x, y)
    np.testing.assert_array_equal(got.get(), (np.sin(x) * 2 + y).get())
    np.testing.assert_allclose(got.get(), np.sin(hx) * 2 + hy, rtol=1e-13)  # CuPy's sin
    assert 3 in launched


def test_mdarray_fuse_of_small_chunks_gives_the_unfused_values(monkeypatch):
    # Below the elementwise threshold too: a multiply then an add, which an FMA (as
    # cupy.fuse's compiler may make) would round once instead of twice.
    monkeypatch.setattr(_cuda_elementwise, "_MIN_BYTES", 16 << 20)
    rng = np.random.default_rng(5)
    hosts = [rng.standard_normal((64, 16)) for _ in range(3)]
    a, b, c = (mdarray.asarray(h) for h in hosts)
    fn = lambda a, b, c: a * b + c  # noqa: E731
    got = mdarray.fuse(fn)(a, b, c).get()
    np.testing.assert_array_equal(got, fn(*hosts))  # NumPy rounds the product, then the sum


def test_sized_is_cupys_ufunc_below_the_generated_kernels_size(monkeypatch):
    """A runner of small slabs calls CuPy's ufunc itself (`Elementwise.sized`): the same
    kernel the launcher would hand them to, without its checks."""
    monkeypatch.setattr(_cuda_elementwise, "_MIN_BYTES", 1024)
    launcher = Elementwise(cupy, np.add)
    assert launcher.sized(1023) is cupy.add
    assert launcher.sized(1024) is launcher
