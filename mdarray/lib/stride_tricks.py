"""``mdarray.lib.stride_tricks``: NumPy's ``numpy.lib.stride_tricks`` for DistArrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._array.array import DistArray
from .._namespace.groups import keeping_groups

__all__ = ["sliding_window_view"]


@keeping_groups
def sliding_window_view(
    x: DistArray,
    window_shape: int | tuple[int, ...],
    axis: int | tuple[int, ...] | None = None,
    *,
    subok: bool = False,
    writeable: bool = False,
) -> Any:
    """NumPy's ``sliding_window_view``: the windows of `window_shape` along `axis` as new
    trailing axes (xarray's ``rolling`` builds on it). A DistArray result holds a copy of
    the windows, not a view; the operands gather under the fallback policy
    (`mdarray.options`) until a halo exchange makes it native.

    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.arange(5.0))
    >>> with mdarray.options(fallback="allow"):
    ...     mdarray.lib.stride_tricks.sliding_window_view(x, 3).get().tolist()
    [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]
    """
    return np.lib.stride_tricks.sliding_window_view(
        x, window_shape, axis=axis, subok=subok, writeable=writeable
    )
