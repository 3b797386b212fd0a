"""Sphinx configuration for the mdarray docs.

``nox -s docs`` (and ``.ci/run``) build them with warnings as errors and nitpicky
(``sphinx-build -W -n``), offline: nothing is fetched from the web.
"""

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# The checkout these docs belong to comes first: autodoc documents its source tree, not
# an mdarray installed elsewhere (a worktree's build must not show another branch's API).
sys.path[:0] = [str(ROOT), str(DOCS / "_ext")]

import mdarray  # noqa: E402 (the checkout's, after the path above)

project = "mdarray"
author = "The mdarray developers"
copyright = "2026, the mdarray developers"  # as LICENSE
release = mdarray.__version__  # this checkout's (the source tree is first on sys.path)
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "registry_table",  # docs/_ext: the native-vs-fallback table, from the registry
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# Docstrings are numpydoc-style; napoleon reads them without the numpydoc dependency.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_preprocess_types = True
# `DistArray` as a type links to the class from every page (mdarray.linalg's and
# mdarray.fft's functions, documented in their own modules, too).
napoleon_type_aliases = {"DistArray": ":class:`~mdarray.DistArray`"}
# Napoleon reads the first line of an attribute's or property's docstring, up to a colon, as
# its type ("The array's device group: ..." would link to a class of that name): such first
# lines have no colon.

autosummary_generate = True
# The docstrings say their types in numpydoc's words; the annotations (NumPy's typing
# aliases, private protocols) would add names that no page documents.
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True}
templates_path = ["_templates"]

nitpicky = True
# Words of numpydoc's type vocabulary that napoleon turns into references but name no
# Python object: the prose of "array_like", "ints", "callable", "list of int", ...
nitpick_ignore_regex = [
    ("py:class", r"\(?(array_like|callable|ints|lists|sets|sequence|dtype)\)?"),
    # NumPy's named tuples, which unique_* return: NumPy documents them under no
    # importable name (they live in a private module, numpy.lib._arraysetops_impl).
    ("py:class", r"Unique(All|Counts|Inverse)Result"),
]

exclude_patterns = ["_build"]
html_theme = "furo"
html_title = f"mdarray {release}"
