"""A pytest plugin: scikit-learn's array API tests enumerate mdarray beside its own
namespaces (``sklearn.utils._array_api.yield_namespaces``), unedited."""

from sklearn.utils import _array_api

# Imported now, before the suite's conftest.py puts its site-packages first on sys.path:
# the tests import mdarray by name, and must get this one, not an installed copy.
import mdarray  # noqa: F401

_original = _array_api.yield_namespaces


def _with_mdarray(include_numpy_namespaces=True):
    yield from _original(include_numpy_namespaces=include_numpy_namespaces)
    yield "mdarray"


_array_api.yield_namespaces = _with_mdarray
