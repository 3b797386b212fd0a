"""Sphinx configuration for the mdarray docs (built by ``nox -s docs`` with warnings as errors)."""

from importlib.metadata import version as _package_version

project = "mdarray"
author = "mdarray developers"
release = _package_version("mdarray")
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
]

# Docstrings are numpydoc-style; napoleon reads them without the numpydoc dependency.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

autosummary_generate = True
autodoc_typehints = "description"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}

nitpicky = False
exclude_patterns = ["_build"]
html_theme = "alabaster"
