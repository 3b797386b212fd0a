"""The array API's elementwise functions, and NumPy's elementwise functions that are
not ufuncs (``clip``, ``round``, ``real``, ``imag``).

Each array API function calls its NumPy ufunc, so ``mdarray.add(a, b)`` takes the one
path of ``np.add(a, b)`` and ``a + b`` (`_ufuncs`).
"""

from __future__ import annotations

import inspect

import numpy as np

from mdarray._array.array import DistArray, in_mode, wrap
from mdarray._core.modes import REPLICA
from mdarray._core.registry import implements, spmd
from mdarray._exec.chunkwise import write_out

# The array API's elementwise functions -------------------------------------------------

# Array API name -> NumPy ufunc; each function is ``ufunc(*args, **kwargs)``, so it takes
# the same path as ``np.add(a, b)`` and ``a + b``.
ARRAY_API_UFUNCS = {
    "abs": np.absolute,
    "acos": np.arccos,
    "acosh": np.arccosh,
    "add": np.add,
    "asin": np.arcsin,
    "asinh": np.arcsinh,
    "atan": np.arctan,
    "atan2": np.arctan2,
    "atanh": np.arctanh,
    "bitwise_and": np.bitwise_and,
    "bitwise_invert": np.invert,
    "bitwise_left_shift": np.left_shift,
    "bitwise_or": np.bitwise_or,
    "bitwise_right_shift": np.right_shift,
    "bitwise_xor": np.bitwise_xor,
    "ceil": np.ceil,
    "conj": np.conjugate,
    "copysign": np.copysign,
    "cos": np.cos,
    "cosh": np.cosh,
    "divide": np.divide,
    "equal": np.equal,
    "exp": np.exp,
    "expm1": np.expm1,
    "floor": np.floor,
    "floor_divide": np.floor_divide,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "hypot": np.hypot,
    "isfinite": np.isfinite,
    "isinf": np.isinf,
    "isnan": np.isnan,
    "less": np.less,
    "less_equal": np.less_equal,
    "log": np.log,
    "log10": np.log10,
    "log1p": np.log1p,
    "log2": np.log2,
    "logaddexp": np.logaddexp,
    "logical_and": np.logical_and,
    "logical_not": np.logical_not,
    "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "multiply": np.multiply,
    "negative": np.negative,
    "nextafter": np.nextafter,
    "not_equal": np.not_equal,
    "positive": np.positive,
    "pow": np.power,
    "reciprocal": np.reciprocal,
    "remainder": np.remainder,
    "sign": np.sign,
    "signbit": np.signbit,
    "sin": np.sin,
    "sinh": np.sinh,
    "sqrt": np.sqrt,
    "square": np.square,
    "subtract": np.subtract,
    "tan": np.tan,
    "tanh": np.tanh,
    "trunc": np.trunc,
}

# Elementwise functions of the array API that are not NumPy ufuncs ------------------------

# The ufunc behind ndarray.clip; NumPy has no public name for it, nor a type for `_core`.
_CLIP = np._core.umath.clip  # type: ignore[attr-defined]


@implements(np.clip, spmd=True)
def _clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None, **kwargs):
    """``numpy.clip`` through the ``clip`` ufunc (or ``minimum``/``maximum`` for one bound)."""
    low = a_min if min is None else min
    high = a_max if max is None else max
    out_kwargs = {} if out is None else {"out": out}
    if low is None and high is None:
        return a.copy() if out is None else np.positive(a, **out_kwargs, **kwargs)
    if low is None:
        return np.minimum(a, high, **out_kwargs, **kwargs)
    if high is None:
        return np.maximum(a, low, **out_kwargs, **kwargs)
    return _CLIP(a, low, high, **out_kwargs, **kwargs)


@implements(np.round, np.around, spmd=True)
def _round(a, decimals=0, out=None):
    """``numpy.round`` chunk by chunk."""
    return _per_chunk(a, out, lambda xp, c: xp.round(c, decimals), a.dtype)


@implements(np.real, spmd=True)
def _real(val):
    """The real part, chunk by chunk (a contiguous copy per chunk)."""
    dtype = np.real(np.empty(0, val.dtype)).dtype
    return _per_chunk(val, None, lambda xp, c: xp.array(xp.real(c), order="C", copy=True), dtype)


@implements(np.imag, spmd=True)
def _imag(val):
    """The imaginary part, chunk by chunk (zeros for real dtypes)."""
    dtype = np.imag(np.empty(0, val.dtype)).dtype
    return _per_chunk(val, None, lambda xp, c: xp.array(xp.imag(c), order="C", copy=True), dtype)


def _per_chunk(x: DistArray, out, function, dtype):
    """``function(xp, chunk)`` on each chunk of REPLICA `x`, written into `out` if given."""
    x = in_mode(x, REPLICA)
    xp = x.storage.backend.xp
    result = wrap(x.storage.map(lambda chunk: function(xp, chunk), dtype=np.dtype(dtype)))
    return result if out is None else write_out(out, result)


# The array API names -------------------------------------------------------------------

# Array API elementwise functions that are not ufuncs: name -> NumPy function.
ARRAY_API_OTHERS = {"clip": np.clip, "imag": np.imag, "real": np.real, "round": np.round}

# Sample inputs for each function's example, inside every function's domain.
_EXAMPLE_INPUTS = {"acosh": "[1.5, 2.0]", "integer": "[1, 2]", "bool": "[True, False]"}
_EXAMPLE_EXTRA_ARGS = {"clip": ", 0.3, 0.4"}


def _example(name: str, func) -> str:
    nin = getattr(func, "nin", 1)
    types = getattr(func, "types", ["d->d"])
    kinds = {np.dtype(t[0]).kind for t in types if t[0] not in "OmMV"}
    if "f" in kinds:
        values = _EXAMPLE_INPUTS.get(name, "[0.25, 0.5]")
    elif kinds & set("iu"):
        values = _EXAMPLE_INPUTS["integer"]
    else:
        values = _EXAMPLE_INPUTS["bool"]
    ours = ", ".join(["x"] * nin) + _EXAMPLE_EXTRA_ARGS.get(name, "")
    theirs = ours.replace("x", "x.get()")
    return (
        ">>> import mdarray, numpy as np\n"
        f">>> x = mdarray.distributed_array(np.array({values}), {{0: slice(0, 1), 1: slice(1, 2)}})\n"
        f">>> np.array_equal(mdarray.{name}({ours}).get(), np.{func.__name__}({theirs}))\n"
        "True\n"
    )


def _clip_signature(x, /, min=None, max=None): ...


# The standard's signature where it names keyword parameters (the others take what the
# NumPy function takes).
_SIGNATURES = {"clip": inspect.signature(_clip_signature)}


def _array_api_function(name: str, func):
    @spmd  # it only dispatches: the ufunc or function it calls decides
    def function(*args, **kwargs):
        return func(*args, **kwargs)

    if name in _SIGNATURES:
        function.__signature__ = _SIGNATURES[name]  # type: ignore[attr-defined]
    function.__name__ = function.__qualname__ = name
    function.__module__ = "mdarray"
    function.__doc__ = (
        f"The array API's ``{name}``: ``numpy.{func.__name__}`` on DistArrays, chunk by chunk."
        f"\n\nTakes what ``numpy.{func.__name__}`` takes and returns DistArrays; the result's "
        "layout and mode\nare described on ``DistArray``.\n\n" + _example(name, func)
    )
    return function


ARRAY_API_FUNCTIONS = {
    name: _array_api_function(name, func)
    for name, func in sorted({**ARRAY_API_UFUNCS, **ARRAY_API_OTHERS}.items())
}
