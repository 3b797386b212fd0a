"""mdarray.fft (the array API's fft extension) and np.fft on DistArrays, against NumPy over
drawn layouts and modes; signatures and dtypes as the standard's."""

import inspect

import numpy as np
import pytest
from _layouts import devices, dist_pairs
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray import fft as mfft
from mdarray._core import registry as _registry
from mdarray.testing import assert_dist_equal, strategies as mst

ONE_D = "(x, /, *, n=None, axis=-1, norm='backward')"
N_D = "(x, /, *, s=None, axes=None, norm='backward')"
# The standard's signatures (array_api_stubs/_2024_12/fft.py), in inspect's spelling.
SIGNATURES = {
    "fft": ONE_D,
    "ifft": ONE_D,
    "rfft": ONE_D,
    "irfft": ONE_D,
    "hfft": ONE_D,
    "ihfft": ONE_D,
    "fftn": N_D,
    "ifftn": N_D,
    "rfftn": N_D,
    "irfftn": N_D,
    "fftfreq": "(n, /, *, d=1.0, dtype=None, device=None)",
    "rfftfreq": "(n, /, *, d=1.0, dtype=None, device=None)",
    "fftshift": "(x, /, *, axes=None)",
    "ifftshift": "(x, /, *, axes=None)",
}
REAL_INPUT = {"rfft", "ihfft", "rfftn"}
NORMS = st.sampled_from(["backward", "ortho", "forward"])


def unannotated(func) -> str:
    sig = inspect.signature(func)
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


def test_public_names():
    assert set(mfft.__all__) == set(SIGNATURES)
    assert mdarray.fft is mfft


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signature_is_the_standards(name):
    func = getattr(mfft, name)
    assert unannotated(func) == SIGNATURES[name]
    assert ">>>" in (func.__doc__ or "")


def assert_transform(result, expected):
    assert isinstance(result, mdarray.DistArray)
    assert result.shape == expected.shape
    assert result.dtype == expected.dtype
    single = expected.dtype in (np.float32, np.complex64)
    np.testing.assert_allclose(result.get(), expected, rtol=1e-4 if single else 1e-10, atol=1e-4)


def input_dtypes(name):
    if name in REAL_INPUT:
        return st.sampled_from([np.float32, np.float64])
    return st.sampled_from([np.complex64, np.complex128, np.float64])


@settings(max_examples=15)
@given(st.data(), st.sampled_from(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]))
def test_one_dimensional_transforms(data, name):
    shape = data.draw(mst.shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    x, value = data.draw(dist_pairs(shape=shape, dtype=data.draw(input_dtypes(name))))
    kwargs = {
        "n": data.draw(st.sampled_from([None, 1, 2, 5, 8])),
        "axis": data.draw(st.integers(-len(shape), len(shape) - 1)),
        "norm": data.draw(NORMS),
    }
    try:
        expected = getattr(np.fft, name)(value, **kwargs)
    except ValueError:
        with pytest.raises(ValueError, match="Invalid number"), mdarray.options(fallback="allow"):
            getattr(mfft, name)(x, **kwargs)
        return
    with mdarray.options(fallback="allow"):
        assert_transform(getattr(mfft, name)(x, **kwargs), expected)
        assert_transform(getattr(np.fft, name)(x, **kwargs), expected)


@settings(max_examples=15)
@given(st.data(), st.sampled_from(["fftn", "ifftn", "rfftn", "irfftn"]))
def test_n_dimensional_transforms(data, name):
    shape = data.draw(mst.shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    x, value = data.draw(dist_pairs(shape=shape, dtype=data.draw(input_dtypes(name))))
    axes = data.draw(
        st.none() | st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True).map(tuple)
    )
    s = None
    if axes is not None and data.draw(st.booleans()):
        s = tuple(data.draw(st.sampled_from([-1, 2, 3, 4])) for _ in axes)
    norm = data.draw(NORMS)
    try:
        expected = getattr(np.fft, name)(value, s=s, axes=axes, norm=norm)
    except ValueError:
        with pytest.raises(ValueError, match="Invalid number"), mdarray.options(fallback="allow"):
            getattr(mfft, name)(x, s=s, axes=axes, norm=norm)
        return
    with mdarray.options(fallback="raise"):
        assert_transform(getattr(mfft, name)(x, s=s, axes=axes, norm=norm), expected)
        assert_transform(getattr(np.fft, name)(x, s=s, axes=axes, norm=norm), expected)


def test_s_without_axes_means_the_last_axes():
    value = np.arange(12.0).reshape(3, 4)
    with mdarray.options(fallback="allow"):
        result = mfft.fftn(mdarray.asarray(value), s=(2,))
    assert_transform(result, np.fft.fftn(value, s=(2,), axes=(-1,)))


@pytest.mark.parametrize(
    ("name", "dtype", "result"),
    [
        ("fft", np.float32, np.complex64),
        ("fft", np.complex64, np.complex64),
        ("ifft", np.complex128, np.complex128),
        ("rfft", np.float32, np.complex64),
        ("irfft", np.complex64, np.float32),
        ("hfft", np.complex64, np.float32),
        ("ihfft", np.float32, np.complex64),
        ("rfftn", np.float64, np.complex128),
        ("irfftn", np.complex128, np.float64),
    ],
)
def test_result_dtypes_are_the_standards(name, dtype, result):
    with mdarray.options(fallback="allow"):
        assert getattr(mfft, name)(mdarray.asarray(np.ones((2, 4), dtype))).dtype == result


@settings(max_examples=15)
@given(
    st.data(),
    mst.shapes(min_dims=1, max_dims=3, max_side=6),
    st.sampled_from(["fftshift", "ifftshift"]),
)
def test_shifts_are_native(data, shape, name):
    x, value = data.draw(dist_pairs(shape=shape))
    ndim = len(shape)
    axes = data.draw(
        st.none()
        | (st.integers(-ndim, ndim - 1) if ndim else st.none())
        | st.lists(st.integers(0, max(ndim - 1, 0)), max_size=ndim).map(tuple)
    )
    expected = getattr(np.fft, name)(value, axes=axes)
    with mdarray.options(fallback="raise"):
        result = getattr(mfft, name)(x, axes=axes)
        assert_dist_equal(result, expected)
        assert_dist_equal(getattr(np.fft, name)(x, axes), expected)
    assert result is not x


@settings(max_examples=15)
@given(
    st.integers(1, 9),
    st.sampled_from([1.0, 0.5, 3]),
    st.sampled_from([None, np.float32, np.float64]),
    st.sampled_from(["fftfreq", "rfftfreq"]),
)
def test_frequencies(n, d, dtype, name):
    result = getattr(mfft, name)(n, d=d, dtype=dtype)
    expected = getattr(np.fft, name)(n, d).astype(dtype or np.float64)
    assert_dist_equal(result, expected)
    device = mdarray.devices()[-1]
    assert getattr(mfft, name)(n, device=device).devices == (device,)


def test_frequencies_need_a_real_floating_dtype():
    with pytest.raises(ValueError, match="real floating-point"):
        mfft.fftfreq(4, dtype=np.int64)
    with pytest.raises(ValueError, match="real floating-point"):
        mfft.rfftfreq(4, dtype=np.complex128)


def test_errors_and_policy():
    x = mdarray.asarray(np.ones(4))
    with mdarray.options(fallback="allow"), pytest.raises(ValueError, match="norm"):
        mfft.fft(x, norm="sideways")
    # A transform of no axis is NumPy's to decide: it gathers, under the policy.
    with mdarray.options(fallback="raise"), pytest.raises(TypeError, match=r"numpy\.fft\.fftn"):
        mfft.fftn(x, axes=())
    with pytest.warns(mdarray.PerformanceWarning, match=r"numpy\.fft\.ifftn"):
        mfft.ifftn(x, axes=())


# np.fft on DistArrays -----------------------------------------------------------------

NUMPY_FUNCTIONS = [
    "fft",
    "fft2",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftn",
]


def test_every_registered_numpy_fft_function_is_exercised():
    registered = {
        f.__name__ for f in _registry.FUNCTIONS if getattr(f, "__module__", "") == "numpy.fft"
    }
    assert registered <= set(NUMPY_FUNCTIONS)


@pytest.mark.parametrize("name", NUMPY_FUNCTIONS)
def test_numpy_fft_on_distarrays(name):
    value = np.arange(12.0).reshape(3, 4) + (
        0 if name in ("rfft", "rfft2", "rfftn", "ihfft") else 1j
    )
    func = getattr(np.fft, name)
    with mdarray.options(fallback="raise"):
        assert_transform(func(mdarray.asarray(value)), func(value))


def test_numpy_fft_out_is_written():
    value = np.arange(4.0)
    out = mdarray.zeros((4,), dtype=mdarray.complex128)
    with mdarray.options(fallback="allow"):
        returned = np.fft.fft(mdarray.asarray(value), out=out)
    assert returned is out
    assert_dist_equal(out, np.fft.fft(value))


ONE_DIMENSIONAL = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]


@settings(max_examples=40)
@given(
    st.sampled_from([(6,), (4, 6), (3, 2, 5)]).flatmap(
        lambda shape: st.sampled_from(["float64", "float32", "complex128"]).flatmap(
            lambda dtype: dist_pairs(shape=shape, dtype=np.dtype(dtype))
        )
    ),
    st.sampled_from(ONE_DIMENSIONAL),
    st.data(),
)
def test_one_dimensional_transforms_run_without_gathering(pair, name, data):
    """Chunk by chunk along an unsplit axis, after a reshard along a split one; NumPy's
    values, dtypes and shapes either way."""
    x, value = pair
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = data.draw(st.sampled_from([None, 1, 4, 7]))
    norm = data.draw(st.sampled_from(["backward", "ortho", "forward"]))
    try:
        want = getattr(np.fft, name)(value, n=n, axis=axis, norm=norm)
    except TypeError as error:  # rfft of complex input: NumPy's TypeError, ours too
        with mdarray.options(fallback="raise"), pytest.raises(type(error)):
            getattr(mfft, name)(x, n=n, axis=axis, norm=norm)
        return
    with mdarray.options(fallback="raise"):
        got = getattr(mfft, name)(x, n=n, axis=axis, norm=norm)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    scale = 1 + np.max(np.abs(value), initial=0) * value.size
    np.testing.assert_allclose(got.get(), want, rtol=1e-5, atol=1e-5 * scale)


def test_a_transform_along_an_unsplit_axis_moves_nothing():
    value = np.arange(48.0).reshape(6, 8)
    x = mdarray.distributed_array(
        value, mdarray.Layout.block(value.shape, devices=devices(0, 1, 2))
    )
    with mdarray.count_transfers() as moved, mdarray.options(fallback="raise"):
        got = mfft.rfft(x, axis=1)
    assert moved.total == 0
    assert got.layout.chunk_devices == x.layout.chunk_devices
    np.testing.assert_allclose(got.get(), np.fft.rfft(value, axis=1), atol=1e-9)


def test_an_n_dimensional_transform_reshards_once_per_split_axis():
    """fftn of row blocks: along the columns per chunk (nothing moves), then one reshard
    makes the columns whole for the transform along the rows (the pencil transpose)."""
    value = np.arange(96.0).reshape(8, 12) % 7
    x = mdarray.distributed_array(value, mdarray.Layout.block(value.shape, devices=devices(0, 1)))
    once = x.astype(mdarray.complex128).reshard_cost(
        mdarray.Layout.block(value.shape, axis=1, devices=devices(0, 1))
    )
    with mdarray.count_transfers() as moved, mdarray.options(fallback="raise"):
        got = mfft.fftn(x)
    assert moved.bytes == once.bytes
    assert_transform(got, np.fft.fftn(value))
    with mdarray.count_transfers() as moved, mdarray.options(fallback="raise"):
        mfft.fftn(x, axes=(1,))
    assert moved.total == 0
