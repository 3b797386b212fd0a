"""Utility functions of the array API not among the reductions: diff.

``all`` and ``any`` are reductions and live with the other statistical functions.
`diff` gathers its operands to the host for now and distributes NumPy's result again,
under the fallback policy (`mdarray.options`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DistArray
from ._creation_functions import asarray
from ._fallback import fallback
from ._registry import implements

_NO_VALUE: Any = np._NoValue


@implements(np.diff)
def _diff(a, n=1, axis=-1, prepend=_NO_VALUE, append=_NO_VALUE):
    kwargs = {"n": n, "axis": axis}
    if prepend is not _NO_VALUE:
        kwargs["prepend"] = prepend
    if append is not _NO_VALUE:
        kwargs["append"] = append
    return fallback(np.diff, (a,), kwargs, "numpy.diff")


def diff(
    x: DistArray,
    /,
    *,
    axis: int = -1,
    n: int = 1,
    prepend: DistArray | None = None,
    append: DistArray | None = None,
) -> DistArray:
    """The `n`-th forward differences of `x` along `axis`, ``out[i] = x[i+1] - x[i]``
    applied `n` times (array API), after joining `prepend` and `append` to `x` along it.

    Parameters
    ----------
    x : DistArray
        The input array, of at least one axis.
    axis : int
        The axis to take differences along (the last by default).
    n : int
        How many times to take differences (non-negative).
    prepend, append : DistArray, optional
        Values joined before and after `x` along `axis` first; `x`'s shape off `axis`.

    Returns
    -------
    DistArray
        The differences: `x`'s shape with `axis` ``n`` shorter (plus the joined lengths).

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([1, 4, 9, 16]))
    >>> with mdarray.options(fallback="allow"):
    ...     mdarray.diff(x).get(), mdarray.diff(x, n=2).get()
    (array([3, 5, 7]), array([2, 2]))
    """
    kwargs: dict[str, Any] = {"n": n, "axis": axis}
    if prepend is not None:
        kwargs["prepend"] = prepend
    if append is not None:
        kwargs["append"] = append
    return np.diff(asarray(x), **kwargs)
