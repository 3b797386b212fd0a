"""SciPy's special functions that are elementwise ufuncs, for DistArrays:
``mdarray.special.ndtr(x)``, ``.gammaln(x)``, ``.xlogy(x, y)``, ... (SciPy must be
installed; it is imported at the first name asked for).

Each name is SciPy's own ufunc (``scipy.special.ndtr`` unwrapped of SciPy's array API
dispatch), so DistArray's ``__array_ufunc__`` runs it as any ufunc: on each chunk where
it lies (on the cuda backend as CuPy's twin in ``cupyx.scipy.special`` where CuPy has
one, else under the fallback policy), the result in the operands' layout, mode rules and
device group. NumPy arrays get NumPy's result, as the ufunc gives it.

SciPy's array API layer (``SCIPY_ARRAY_API=1``) looks up an array namespace's ``special``
for its elementwise functions before it falls back to NumPy through the host: with this
module, ``scipy.stats`` functions that call them (``entropy``, ``ttest_1samp``,
``combine_pvalues``, ...) keep DistArrays on their devices. Names that are not
elementwise ufuncs in SciPy (``logsumexp``, ``softmax``, the generalized ufuncs) are not
here, and SciPy takes its array API implementations of them.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from ._core.scipy_ufuncs import scipy_ufunc


def __getattr__(name: str) -> Any:
    ufunc = _elementwise(name)
    if ufunc is None:
        raise AttributeError(
            f"module 'mdarray.special' has no attribute {name!r} (SciPy's elementwise "
            "special-function ufuncs only)"
        )
    return ufunc


def __dir__() -> list[str]:
    special = _scipy_special()
    if special is None:
        return []
    return sorted(n for n in dir(special) if not n.startswith("_") and _elementwise(n))


def _scipy_special() -> Any:
    try:
        return importlib.import_module("scipy.special")
    except ImportError:
        return None


def _elementwise(name: str) -> np.ufunc | None:
    """SciPy's ufunc of `name` (an elementwise one), or None."""
    return scipy_ufunc(_scipy_special(), name)
