"""mdarray as an array API namespace: `__array_namespace__`, the inspection object, the
public names, and the NumPy functions this area registers."""

import numpy as np
import pytest

import mdarray
from mdarray._core import registry as _registry

REGISTERED_HERE = [
    np.shape, np.ndim, np.size, np.result_type, np.can_cast, np.copy, np.astype,
    np.iscomplexobj, np.isrealobj, np.transpose, np.matrix_transpose, np.swapaxes,
    np.moveaxis, np.expand_dims, np.squeeze, np.flip, np.reshape, np.ravel,
    np.broadcast_to, np.broadcast_arrays, np.concatenate, np.stack, np.unstack,
    np.full_like, np.zeros_like, np.ones_like, np.empty_like, np.tril, np.triu, np.meshgrid,
]  # fmt: skip


def test_array_namespace_is_mdarray():
    x = mdarray.zeros(3)
    assert x.__array_namespace__() is mdarray
    assert x.__array_namespace__(api_version="2024.12") is mdarray
    assert mdarray.__array_api_version__ == "2024.12"
    with pytest.raises(ValueError, match="unsupported array API version"):
        x.__array_namespace__(api_version="2019.01")


def test_namespace_info_follows_the_standard():
    info = mdarray.__array_namespace_info__()
    assert set(info.capabilities()) == {
        "boolean indexing",
        "data-dependent shapes",
        "max dimensions",
    }
    default = info.default_device()
    assert isinstance(default, mdarray.DeviceSet)
    assert tuple(default) == mdarray.devices()
    assert info.devices()[0] == default
    assert info.devices()[1:] == list(mdarray.devices())
    assert info.default_dtypes() == {
        "real floating": np.dtype("float64"),
        "complex floating": np.dtype("complex128"),
        "integral": np.dtype("int64"),
        "indexing": np.dtype("int64"),
    }
    assert len(info.dtypes()) == 13
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert set(info.dtypes(kind=("bool", "unsigned integer"))) == {
        "bool", "uint8", "uint16", "uint32", "uint64",
    }  # fmt: skip
    with pytest.raises(ValueError, match="unsupported dtype kind"):
        info.dtypes(kind="floating")


def test_every_device_the_info_lists_works_as_device_argument():
    for device in mdarray.__array_namespace_info__().devices():
        x = mdarray.ones(4, device=device)
        assert set(x.devices) <= set(mdarray.devices())
        assert mdarray.zeros(2, device=x.device).device == mdarray.DeviceSet(x.devices)


def test_public_names_exist():
    for name in mdarray.__all__:
        assert hasattr(mdarray, name), name


@pytest.mark.parametrize("func", REGISTERED_HERE, ids=lambda f: f.__name__)
def test_numpy_functions_of_this_area_are_registered(func):
    assert func in _registry.FUNCTIONS


def test_constants_are_numpys():
    for name in ("e", "pi", "inf"):
        assert getattr(mdarray, name) == getattr(np, name)
        assert type(getattr(mdarray, name)) is float
    assert np.isnan(mdarray.nan)
    assert mdarray.newaxis is None
    x = mdarray.asarray(np.arange(3.0))
    assert x[mdarray.newaxis].shape == (1, 3)
    np.testing.assert_array_equal((x * mdarray.pi).get(), np.arange(3.0) * np.pi)
