"""A pytest plugin: array-api-extra's test suite enumerates mdarray beside its own
backends (the ``Backend`` enum of ``array_api_extra._lib._backends``), unedited, and
knows the suite's own markers (its pyproject registers them)."""

import enum

import pytest
from array_api_extra._lib import _backends

# Imported now, before the suite's conftest.py puts its site-packages first on sys.path:
# the tests import mdarray by name, and must get this one, not an installed copy.
import mdarray  # noqa: F401

_members = {member.name: member.value for member in _backends.Backend}
_members["MDARRAY"] = "mdarray"
_Backend = enum.Enum("Backend", _members)
for _name in ("modname", "like", "pytest_param"):
    setattr(_Backend, _name, getattr(_backends.Backend, _name))
_Backend.__module__ = _backends.Backend.__module__
_backends.Backend = _Backend


def pytest_configure(config):
    for name in ("skip_xp_backend", "xfail_xp_backend", "thread_unsafe"):
        config.addinivalue_line("markers", f"{name}: array-api-extra's marker")


def pytest_collection_modifyitems(config, items):
    """A test that array-api-extra skips for array_api_strict because that namespace takes
    its array-agnostic fallback (it checks that a function delegates to a backend's own
    implementation) is skipped for mdarray too, which takes the same fallback."""
    for item in items:
        if "[mdarray" not in item.nodeid:
            continue
        for marker in item.iter_markers("skip_xp_backend"):
            strict = marker.args and marker.args[0].name == "ARRAY_API_STRICT"
            if strict and "array-agnostic fallback" in marker.kwargs.get("reason", ""):
                item.add_marker(pytest.mark.skip(reason="mdarray: array-agnostic fallback"))
