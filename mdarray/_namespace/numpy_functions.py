"""NumPy's names that array-agnostic code calls on a namespace (``xp.cumsum``,
``xp.nanmean``, ``xp.pad`` ...), as CuPy's namespace has them.

Each is NumPy's function with NumPy's signature (``cumsum = _numpy(np.cumsum, DistArray)``):
called on DistArrays it takes the path of ``numpy.<name>(x)`` (a distributed
implementation where the registry has one, else the fallback policy), whose
``__array_function__`` keeps the device group and joins an SPMD run, once per call; a 0-d
or scalar array result comes back a 0-d DistArray, as the array API's functions return
arrays. Non-array results (``allclose``'s bool) stay as NumPy gives them.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar, overload

import numpy as np

from mdarray._array.array import DistArray, in_group
from mdarray._ops.engine.fallback import as_distarrays, distarrays_in

P = ParamSpec("P")
R = TypeVar("R")


@overload
def _numpy(
    func: Callable[P, Any], returns: None = None, example: str = "x"
) -> Callable[P, Any]: ...
@overload
def _numpy(func: Callable[P, Any], returns: type[R], example: str = "x") -> Callable[P, R]: ...
def _numpy(func: Any, returns: Any = None, example: str = "x") -> Any:
    """``mdarray.<name>``: NumPy's function `func` of that name on DistArrays. `returns`
    is what it returns for DistArray operands, for type checkers (None: it depends on
    the arguments); `example` the arguments of its docstring's example."""
    name = func.__name__

    @functools.wraps(func)
    def function(*args, **kwargs):
        result = func(*args, **kwargs)
        if type(result) is DistArray:  # in its group already (`__array_function__`)
            return result
        arrays = distarrays_in((args, kwargs))
        return in_group(as_distarrays(result, arrays[0]), arrays) if arrays else result

    function.__module__ = "mdarray"
    # NumPy's signature without `__wrapped__`: some of NumPy's functions are builtins in
    # newer releases (``np.dot``), and doctest's finder unwraps to read ``__code__``.
    with contextlib.suppress(ValueError):  # NumPy < 2.4: some C functions carry none
        function.__signature__ = inspect.signature(func)  # type: ignore[attr-defined]
    del function.__wrapped__
    check = (
        "r" if returns is bool else "isinstance(r[0] if type(r) is list else r, mdarray.DistArray)"
    )
    function.__doc__ = (
        f"NumPy's ``{name}`` on DistArrays (``numpy.{name}``'s signature and meaning); "
        "array results are DistArrays.\n\n"
        ">>> import mdarray, numpy as np\n"
        ">>> x = mdarray.asarray(np.arange(6.0).reshape(2, 3))\n"
        ">>> with mdarray.options(fallback='allow'):  # some still gather (a PerformanceWarning)\n"
        f"...     r = mdarray.{name}({example})\n"
        f">>> {check}\n"
        "True\n"
    )
    return function


allclose = _numpy(np.allclose, bool, "x, x")  # as NumPy: a Python bool
array_equal = _numpy(np.array_equal, bool, "x, x")
array_split = _numpy(np.array_split, list[DistArray], "x, 2")
atleast_1d = _numpy(np.atleast_1d)  # a DistArray, or a tuple of several
atleast_2d = _numpy(np.atleast_2d)
atleast_3d = _numpy(np.atleast_3d)
average = _numpy(np.average)  # a DistArray, or a tuple with returned=True
column_stack = _numpy(np.column_stack, DistArray, "(x, x)")
corrcoef = _numpy(np.corrcoef, DistArray)
cov = _numpy(np.cov, DistArray)
cumprod = _numpy(np.cumprod, DistArray)
cumsum = _numpy(np.cumsum, DistArray)
diag = _numpy(np.diag, DistArray)
diagonal = _numpy(np.diagonal, DistArray)
dot = _numpy(np.dot, DistArray, "x, x.T")
einsum = _numpy(np.einsum, DistArray, "'ij->j', x")
hstack = _numpy(np.hstack, DistArray, "(x, x)")
isclose = _numpy(np.isclose, DistArray, "x, x")
median = _numpy(np.median, DistArray)
nanargmax = _numpy(np.nanargmax, DistArray)
nanargmin = _numpy(np.nanargmin, DistArray)
nancumprod = _numpy(np.nancumprod, DistArray)
nancumsum = _numpy(np.nancumsum, DistArray)
nanmax = _numpy(np.nanmax, DistArray)
nanmean = _numpy(np.nanmean, DistArray)
nanmedian = _numpy(np.nanmedian, DistArray)
nanmin = _numpy(np.nanmin, DistArray)
nanpercentile = _numpy(np.nanpercentile, DistArray, "x, 50")
nanprod = _numpy(np.nanprod, DistArray)
nanquantile = _numpy(np.nanquantile, DistArray, "x, 0.5")
nanstd = _numpy(np.nanstd, DistArray)
nansum = _numpy(np.nansum, DistArray)
nanvar = _numpy(np.nanvar, DistArray)
outer = _numpy(np.outer, DistArray, "x, x")
pad = _numpy(np.pad, DistArray, "x, 1")
percentile = _numpy(np.percentile, DistArray, "x, 50")
ptp = _numpy(np.ptp, DistArray)
quantile = _numpy(np.quantile, DistArray, "x, 0.5")
ravel = _numpy(np.ravel, DistArray)
split = _numpy(np.split, list[DistArray], "x, 2")
trace = _numpy(np.trace, DistArray)
transpose = _numpy(np.transpose, DistArray)
vstack = _numpy(np.vstack, DistArray, "(x, x)")
