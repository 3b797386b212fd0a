"""A pytest plugin: scikit-learn's array API tests enumerate mdarray beside its own
namespaces (``sklearn.utils._array_api.yield_namespaces``), unedited."""

from sklearn.utils import _array_api

_original = _array_api.yield_namespaces


def _with_mdarray(include_numpy_namespaces=True):
    yield from _original(include_numpy_namespaces=include_numpy_namespaces)
    yield "mdarray"


_array_api.yield_namespaces = _with_mdarray
