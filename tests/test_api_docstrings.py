"""The API says what it does where users look first: every public member of DistArray and
every public name of the namespaces has a docstring, the class shows a signature, each mode
its own text, and a type checker sees DistArrays (tests/typing_checks.py)."""

import inspect
from pathlib import Path

import pytest

import mdarray
import mdarray.fft
import mdarray.linalg
from mdarray import DistArray

ROOT = Path(__file__).resolve().parent.parent
# Python floats and None carry no docstring of their own: docs/api.rst lists them.
CONSTANTS = {"e", "inf", "nan", "pi", "newaxis"}
# Class attributes that are data, not members to document.
DATA = {
    "__slots__",
    "__module__",
    "__doc__",
    "__dict__",
    "__weakref__",
    "__annotations__",
    "__hash__",
    "__array_priority__",
    "__signature__",
    "__firstlineno__",
    "__static_attributes__",
}


def _members():
    """``(name, object)`` of DistArray's public members and its dunders, from every class
    of its MRO but object."""
    names = set()
    for klass in DistArray.__mro__[:-1]:
        names |= {n for n in vars(klass) if not n.startswith("_") or n.startswith("__")}
    names -= DATA
    names -= {n for n in names if n in DistArray.__slots__}
    return sorted(names)


@pytest.mark.parametrize("name", _members())
def test_every_distarray_member_has_a_docstring(name):
    value = inspect.getattr_static(DistArray, name)
    doc = value.__doc__ if isinstance(value, property) else inspect.getdoc(getattr(DistArray, name))
    assert (doc or "").strip(), f"DistArray.{name} has no docstring"


def test_the_walk_sees_the_members_users_look_for():
    members = set(_members())
    assert {
        "shape",
        "dtype",
        "sum",
        "mean",
        "reshape",
        "get",
        "T",
        "__add__",
        "__iadd__",
        "__neg__",
        "__getitem__",
        "__array_ufunc__",
    } <= members
    assert len([n for n in members if not n.startswith("_")]) >= 65


@pytest.mark.parametrize(
    ("module", "name"),
    [
        (m, n)
        for m in (mdarray, mdarray.linalg, mdarray.fft)
        for n in m.__all__
        if n not in CONSTANTS
    ],
    ids=lambda v: getattr(v, "__name__", v),
)
def test_every_public_name_has_a_docstring(module, name):
    doc = inspect.getdoc(getattr(module, name))
    assert (doc or "").strip(), f"{module.__name__}.{name} has no docstring"


def test_distarray_shows_a_signature_and_refuses_direct_calls():
    signature = inspect.signature(DistArray)
    assert not signature.parameters
    assert "*args" not in str(signature)
    with pytest.raises(TypeError, match="distributed_array"):
        DistArray([1, 2])
    assert "mdarray.asarray" in DistArray.__doc__


def test_each_mode_has_its_own_docstring():
    modes = (mdarray.REPLICA, mdarray.SUM, mdarray.PROD, mdarray.MAX, mdarray.MIN)
    docs = [inspect.getdoc(mode) for mode in modes]
    assert len(set(docs)) == len(modes)
    assert inspect.getdoc(mdarray.Mode) not in docs
    assert "the sum of all its copies" in inspect.getdoc(mdarray.SUM)
    assert mdarray.Mode.__doc__.startswith("How overlapping copies combine")


def test_operators_have_docstrings():
    x = mdarray.asarray([1.0, 2.0])
    for operator in (x.__add__, x.__radd__, x.__iadd__, x.__neg__, x.__lt__, x.__matmul__):
        assert "numpy." in operator.__doc__
    assert x.__add__.__name__ == "__add__"


def test_type_checkers_see_distarrays():
    """mypy on tests/typing_checks.py: ``x + 1``, ``x.sum()``, ``x[0]``, ``mdarray.sin(x)``
    are DistArrays, ``x.get()`` an ndarray."""
    api = pytest.importorskip("mypy.api", reason="mypy is not installed (the typecheck group)")
    out, err, status = api.run(
        [str(ROOT / "tests" / "typing_checks.py"), "--config-file", str(ROOT / "pyproject.toml")]
    )
    assert status == 0, out + err
