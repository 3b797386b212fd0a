"""A pytest plugin: SciPy's ``xp`` fixture (``scipy/conftest.py``, with
``SCIPY_ARRAY_API=1``) runs each test on mdarray too, beside its own backends, unedited:
when SciPy's conftest registers, before pytest reads its fixtures, mdarray joins the
fixture's parameters and SciPy's known backends, so its markers treat mdarray as they
treat array_api_strict (``np_only`` tests skip both)."""

import dataclasses

import pytest

import mdarray


@pytest.hookimpl(tryfirst=True)
def pytest_plugin_registered(plugin, manager):
    fixture = getattr(plugin, "xp", None)
    marker = getattr(fixture, "_fixture_function_marker", None)
    if marker is None or not getattr(plugin, "__file__", "").endswith("conftest.py"):
        return
    if "scipy" not in plugin.__file__ or any(
        getattr(p, "id", None) == "mdarray" for p in marker.params or ()
    ):
        return
    plugin.xp_known_backends.add("mdarray")
    param = pytest.param(mdarray, id="mdarray", marks=pytest.mark.array_api_backends)
    params = (*marker.params, param)
    object.__setattr__(
        fixture, "_fixture_function_marker", dataclasses.replace(marker, params=params)
    )
