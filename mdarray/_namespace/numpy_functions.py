"""NumPy's names that array-agnostic code calls on a namespace (``xp.cumsum``,
``xp.nanmean``, ``xp.pad`` ...), as CuPy's namespace has them.

Each is NumPy's function with NumPy's signature: called on DistArrays it takes the path of
``numpy.<name>(x)`` (a distributed implementation where the registry has one, else the
fallback policy), and a 0-d or scalar array result comes back a 0-d DistArray, as the
array API's functions return arrays. Non-array results (``allclose``'s bool) stay as
NumPy gives them.
"""

from __future__ import annotations

import contextlib
import functools
import inspect

import numpy as np

from mdarray._core.registry import spmd
from mdarray._ops.engine.fallback import as_distarrays, distarrays_in

NAMES = (
    "allclose",
    "array_equal",
    "array_split",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "average",
    "column_stack",
    "corrcoef",
    "cov",
    "cumprod",
    "cumsum",
    "diag",
    "diagonal",
    "dot",
    "einsum",
    "hstack",
    "isclose",
    "median",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmean",
    "nanmedian",
    "nanmin",
    "nanpercentile",
    "nanprod",
    "nanquantile",
    "nanstd",
    "nansum",
    "nanvar",
    "outer",
    "pad",
    "percentile",
    "ptp",
    "quantile",
    "ravel",
    "split",
    "trace",
    "transpose",
    "vstack",
)


def _numpy_function(name: str):
    func = getattr(np, name)

    @spmd  # it only dispatches: NumPy's function on DistArrays decides
    @functools.wraps(func)
    def function(*args, **kwargs):
        result = func(*args, **kwargs)
        arrays = distarrays_in((args, kwargs))
        return as_distarrays(result, arrays[0]) if arrays else result

    function.__module__ = "mdarray"
    # NumPy's signature without `__wrapped__`: some of NumPy's functions are builtins in
    # newer releases (``np.dot``), and doctest's finder unwraps to read ``__code__``.
    with contextlib.suppress(ValueError):  # NumPy < 2.4: some C functions carry none
        function.__signature__ = inspect.signature(func)  # type: ignore[attr-defined]
    del function.__wrapped__
    check = {"allclose": "r", "array_equal": "r"}.get(
        name, "isinstance(r[0] if type(r) is list else r, mdarray.DistArray)"
    )
    function.__doc__ = (
        f"NumPy's ``{name}`` on DistArrays (``numpy.{name}``'s signature and meaning); "
        "array results are DistArrays.\n\n"
        ">>> import mdarray, numpy as np\n"
        ">>> x = mdarray.asarray(np.arange(6.0).reshape(2, 3))\n"
        ">>> with mdarray.options(fallback='allow'):  # some still gather (a PerformanceWarning)\n"
        f"...     r = mdarray.{name}({_EXAMPLE_ARGS.get(name, 'x')})\n"
        f">>> {check}\n"
        "True\n"
    )
    return function


_EXAMPLE_ARGS = {
    "allclose": "x, x",
    "array_equal": "x, x",
    "array_split": "x, 2",
    "split": "x, 2",
    "column_stack": "(x, x)",
    "hstack": "(x, x)",
    "vstack": "(x, x)",
    "dot": "x, x.T",
    "outer": "x, x",
    "einsum": "'ij->j', x",
    "isclose": "x, x",
    "pad": "x, 1",
    "percentile": "x, 50",
    "nanpercentile": "x, 50",
    "quantile": "x, 0.5",
    "nanquantile": "x, 0.5",
}


FUNCTIONS = {name: _numpy_function(name) for name in NAMES}
