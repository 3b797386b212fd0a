"""The dispatch tables are complete: every NumPy ufunc is handled and exercised against
NumPy, every public name exists."""

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest
import test_elementwise_functions as elementwise

import mdarray
from mdarray._core import registry as _registry
from mdarray._namespace.numpy_functions import FUNCTIONS as NUMPY_FUNCTIONS
from mdarray._ops.elementwise.elementwise_functions import ARRAY_API_FUNCTIONS

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


def test_array_api_elementwise_names_are_public():
    for name, func in ARRAY_API_FUNCTIONS.items():
        assert name in mdarray.__all__
        assert inspect.unwrap(getattr(mdarray, name)) is func  # wrapped by keeping_groups
        assert func.__doc__
        assert ">>>" in func.__doc__


def test_type_checkers_see_the_generated_names():
    """mdarray/__init__.py declares the generated functions (elementwise, NumPy's names) for type checkers
    (``if TYPE_CHECKING:``), since they do not run ``globals().update``."""
    tree = ast.parse(Path(mdarray.__file__).read_text())
    (block,) = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    declared = [n.target.id for n in block.body if isinstance(n, ast.AnnAssign)]
    assert declared == sorted([*ARRAY_API_FUNCTIONS, *NUMPY_FUNCTIONS])


def test_registered_functions_are_callables():
    for func, impl in _registry.FUNCTIONS.items():
        assert callable(func)
        assert callable(impl)
    for (ufunc, method), impl in _registry.UFUNC_OVERRIDES.items():
        assert isinstance(ufunc, np.ufunc)
        assert hasattr(ufunc, method)
        assert callable(impl)
