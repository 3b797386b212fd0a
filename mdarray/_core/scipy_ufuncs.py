"""SciPy's elementwise special-function ufuncs by name: what `mdarray.special` holds and
what the cuda backend runs as CuPy's twins (`cupyx.scipy.special`)."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np


def scipy_ufunc(special: Any, name: str) -> np.ufunc | None:
    """The ufunc `name` of the module `special` (``scipy.special``, or None where it is
    not there), unwrapped of SciPy's array API dispatch, where it is elementwise (a ufunc
    without core dimensions); else None."""
    if name.startswith("_"):
        return None
    found = getattr(special, name, None)
    found = inspect.unwrap(found) if callable(found) else None
    if isinstance(found, np.ufunc) and found.signature is None:
        return found
    return None
