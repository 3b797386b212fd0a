"""The dispatch tables are complete: every NumPy ufunc is handled and exercised against
NumPy, every public name exists."""

import inspect

import numpy as np
import pytest
from _test_modules import load

import mdarray
import mdarray.fft
import mdarray.linalg
from mdarray._core import registry as _registry
from mdarray._namespace import numpy_functions
from mdarray._ops.elementwise import elementwise_functions

# The ufuncs the elementwise tests run against NumPy.
elementwise = load("ops/elementwise/test_elementwise_functions.py")

UFUNCS = sorted({u for u in vars(np).values() if isinstance(u, np.ufunc)}, key=lambda u: u.__name__)


@pytest.mark.parametrize("ufunc", UFUNCS, ids=lambda u: u.__name__)
def test_every_ufunc_is_handled(ufunc):
    """Elementwise ufuncs by the general ``__call__``; gufuncs by their own implementation
    or the fallback policy (their core dimensions may be split across chunks)."""
    assert "__call__" in _registry.UFUNC_METHODS
    if ufunc.signature is None:
        assert ufunc in elementwise.ELEMENTWISE
    else:
        assert ufunc in elementwise.GUFUNCS


def test_every_ufunc_is_exercised_against_numpy():
    """The elementwise tests enumerate NumPy's ufuncs the same way, at test time."""
    assert set(elementwise.ELEMENTWISE) | set(elementwise.GUFUNCS) == set(UFUNCS)
    assert len(UFUNCS) > 80


def test_every_public_name_exists():
    for name in mdarray.__all__:
        assert hasattr(mdarray, name), name
    assert len(set(mdarray.__all__)) == len(mdarray.__all__)


def _defined_here(module):
    """The public functions `module` defines (``mdarray.<name>`` by their ``__module__``)."""
    return {
        name: f
        for name, f in vars(module).items()
        if inspect.isfunction(f) and f.__module__ == "mdarray" and not name.startswith("_")
    }


@pytest.mark.parametrize(
    "module", [elementwise_functions, numpy_functions], ids=lambda m: m.__name__
)
def test_defined_names_are_the_namespaces(module):
    """The elementwise functions and NumPy's names are defined in their own modules and
    imported by name: the namespace holds those very objects (no wrapper around them)."""
    defined = _defined_here(module)
    assert len(defined) > 40
    for name, func in defined.items():
        assert name in mdarray.__all__
        assert getattr(mdarray, name) is func
        assert func.__name__ == name
        assert func.__doc__
        assert ">>>" in func.__doc__


@pytest.mark.parametrize("module", [mdarray, mdarray.linalg, mdarray.fft], ids=lambda m: m.__name__)
def test_each_public_function_is_wrapped_once(module):
    """The op modules' functions are wrapped by `keeping_groups` once, where the public
    module names them: what a wrapper wraps is never a wrapper."""
    wrapper = mdarray.sum.__code__  # every keeping_groups wrapper runs this code
    for name in module.__all__:
        func = getattr(module, name)
        inner = getattr(func, "__wrapped__", None)
        if inner is not None:
            assert func.__code__ is wrapper, f"{module.__name__}.{name}"
            assert getattr(inner, "__code__", None) is not wrapper, f"{module.__name__}.{name}"


def test_public_modules_write_no_name_twice():
    """Each public module lists its names once (`__all__`) and defines or imports each
    by name: no ``globals()`` updates, no declarations for type checkers alone."""
    for module in (mdarray, mdarray.linalg, mdarray.fft):
        source = inspect.getsource(module)
        assert "globals()" not in source
        assert "TYPE_CHECKING" not in source
        assert source.count("__all__") == 1


def test_registered_functions_are_callables():
    for func, impl in _registry.FUNCTIONS.items():
        assert callable(func)
        assert callable(impl)
    for (ufunc, method), impl in _registry.UFUNC_OVERRIDES.items():
        assert isinstance(ufunc, np.ufunc)
        assert hasattr(ufunc, method)
        assert callable(impl)
