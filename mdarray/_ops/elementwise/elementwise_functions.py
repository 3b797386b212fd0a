"""The array API's elementwise functions, and NumPy's elementwise functions that are
not ufuncs (``clip``, ``round``, ``real``, ``imag``).

Each array API function calls its NumPy ufunc (``add = _binary(np.add)``), so
``mdarray.add(a, b)`` takes the one path of ``np.add(a, b)`` and ``a + b`` (`_ufuncs`):
the ufunc's ``__array_ufunc__`` keeps the device group and joins an SPMD run, once per
call. A repeated call on DistArrays (beside Python numbers) runs the runner its first
call left (`mdarray._core.decided`) at once, as ``DistArray.__array_ufunc__`` would, with
no NumPy dispatch before it: ``mdarray.add(x, y)`` costs no more Python calls than
``np.add(x, y)`` (tests/ops/engine/test_host_cost_ufuncs.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike

from mdarray._array.array import DistArray, in_group, in_mode, wrap
from mdarray._core.modes import REPLICA
from mdarray._core.registry import implements
from mdarray._exec.chunkwise import write_out
from mdarray._runtime import profile as _profile
from mdarray._storage.stored import decided_call

# How the array API's functions are made ------------------------------------------------


class Unary(Protocol):
    """The type of an array API elementwise function of one array (``mdarray.sin``): it
    takes what its NumPy ufunc takes."""

    def __call__(self, x: ArrayLike, /, out: Any = None, **kwargs: Any) -> DistArray: ...


class Binary(Protocol):
    """The type of an array API elementwise function of two arrays (``mdarray.add``): it
    takes what its NumPy ufunc takes."""

    def __call__(
        self, x1: ArrayLike, x2: ArrayLike, /, out: Any = None, **kwargs: Any
    ) -> DistArray: ...


# The operand types of a call that may go straight to its runner: NumPy's dispatch would
# call DistArray's own ``__array_ufunc__`` for these (a subclass's, or another library's
# array's, may differ), and a decided key holds them (`decided_key`).
_DIRECT = frozenset({DistArray, bool, int, float, complex})


def _unary(ufunc: np.ufunc, name: str | None = None) -> Unary:
    """The array API function `name` (default: the ufunc's name): `ufunc` of one operand."""
    if ufunc.nin != 1:
        raise TypeError(f"{ufunc.__name__} takes {ufunc.nin} operands, not 1")

    def function(x, /, out=None, **kwargs):
        if out is None and not kwargs and type(x) is DistArray and not _profile.recording:
            done = decided_call(ufunc, (x,), kwargs)
            if done is not None:
                return in_group(done, (x,))
        return ufunc(x, out=out, **kwargs)

    return cast(Unary, _named(function, ufunc, name or ufunc.__name__))


def _binary(ufunc: np.ufunc, name: str | None = None) -> Binary:
    """The array API function `name` (default: the ufunc's name): `ufunc` of two operands."""
    if ufunc.nin != 2:
        raise TypeError(f"{ufunc.__name__} takes {ufunc.nin} operands, not 2")

    def function(x1, x2, /, out=None, **kwargs):
        if (
            out is None
            and not kwargs
            and type(x1) in _DIRECT
            and type(x2) in _DIRECT
            and not _profile.recording
        ):
            done = decided_call(ufunc, (x1, x2), kwargs)
            if done is not None:
                return in_group(done, (x1, x2))
        return ufunc(x1, x2, out=out, **kwargs)

    return cast(Binary, _named(function, ufunc, name or ufunc.__name__))


def _named(function: Any, numpy_function: Any, name: str, numpys: bool = True) -> Any:
    """`function`, the array API's `name` calling `numpy_function`, named and documented
    as ``mdarray.<name>``; its frames too (``add`` in a traceback, a profile, or the
    transfer guard's message when a runner moves data)."""
    function.__code__ = function.__code__.replace(co_name=name, co_qualname=name)
    function.__name__ = function.__qualname__ = name
    function.__module__ = "mdarray"
    function.__doc__ = _doc(name, numpy_function, numpys)
    return function


def _doc(name: str, func: Any, numpys: bool = True) -> str:
    """`numpys`: the function takes what NumPy's takes, else its own signature's."""
    takes = f"what ``numpy.{func.__name__}`` takes" if numpys else "the parameters of its signature"
    return (
        f"The array API's ``{name}``: ``numpy.{func.__name__}`` on DistArrays, chunk by chunk."
        f"\n\nTakes {takes} and returns DistArrays; the result's "
        "layout and mode\nare described on ``DistArray``.\n\n" + _example(name, func)
    )


# Sample inputs for each function's example, inside every function's domain.
_EXAMPLE_INPUTS = {"acosh": "[1.5, 2.0]", "integer": "[1, 2]", "bool": "[True, False]"}
_EXAMPLE_EXTRA_ARGS = {"clip": ", 0.3, 0.4"}


def _example(name: str, func: Any) -> str:
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


F = TypeVar("F", bound=Callable[..., Any])


def _documented(numpy_function: Any) -> Callable[[F], F]:
    """Name and document a function of this module as ``mdarray.<name>``, the array API's
    function that calls `numpy_function`."""

    def decorate(function: F) -> F:
        return cast(F, _named(function, numpy_function, function.__name__, numpys=False))

    return decorate


# The array API's elementwise functions -------------------------------------------------

abs = _unary(np.absolute, "abs")
acos = _unary(np.arccos, "acos")
acosh = _unary(np.arccosh, "acosh")
add = _binary(np.add)
asin = _unary(np.arcsin, "asin")
asinh = _unary(np.arcsinh, "asinh")
atan = _unary(np.arctan, "atan")
atan2 = _binary(np.arctan2, "atan2")
atanh = _unary(np.arctanh, "atanh")
bitwise_and = _binary(np.bitwise_and)
bitwise_invert = _unary(np.invert, "bitwise_invert")
bitwise_left_shift = _binary(np.left_shift, "bitwise_left_shift")
bitwise_or = _binary(np.bitwise_or)
bitwise_right_shift = _binary(np.right_shift, "bitwise_right_shift")
bitwise_xor = _binary(np.bitwise_xor)
ceil = _unary(np.ceil)
conj = _unary(np.conjugate, "conj")
copysign = _binary(np.copysign)
cos = _unary(np.cos)
cosh = _unary(np.cosh)
divide = _binary(np.divide)
equal = _binary(np.equal)
exp = _unary(np.exp)
expm1 = _unary(np.expm1)
floor = _unary(np.floor)
floor_divide = _binary(np.floor_divide)
greater = _binary(np.greater)
greater_equal = _binary(np.greater_equal)
hypot = _binary(np.hypot)
isfinite = _unary(np.isfinite)
isinf = _unary(np.isinf)
isnan = _unary(np.isnan)
less = _binary(np.less)
less_equal = _binary(np.less_equal)
log = _unary(np.log)
log10 = _unary(np.log10)
log1p = _unary(np.log1p)
log2 = _unary(np.log2)
logaddexp = _binary(np.logaddexp)
logical_and = _binary(np.logical_and)
logical_not = _unary(np.logical_not)
logical_or = _binary(np.logical_or)
logical_xor = _binary(np.logical_xor)
maximum = _binary(np.maximum)
minimum = _binary(np.minimum)
multiply = _binary(np.multiply)
negative = _unary(np.negative)
nextafter = _binary(np.nextafter)
not_equal = _binary(np.not_equal)
positive = _unary(np.positive)
pow = _binary(np.power, "pow")
reciprocal = _unary(np.reciprocal)
remainder = _binary(np.remainder)
sign = _unary(np.sign)
signbit = _unary(np.signbit)
sin = _unary(np.sin)
sinh = _unary(np.sinh)
sqrt = _unary(np.sqrt)
square = _unary(np.square)
subtract = _binary(np.subtract)
tan = _unary(np.tan)
tanh = _unary(np.tanh)
trunc = _unary(np.trunc)


# The array API's elementwise functions that are not ufuncs: each calls its NumPy
# function, whose ``__array_function__`` keeps the group and joins an SPMD run. (NumPy's
# types say ndarray; for DistArrays NumPy's function returns a DistArray.)


@_documented(np.clip)
def clip(x: ArrayLike, /, min: ArrayLike | None = None, max: ArrayLike | None = None) -> DistArray:
    return np.clip(x, min, max)  # type: ignore[return-value]


@_documented(np.imag)
def imag(x: ArrayLike, /) -> DistArray:
    return np.imag(x)  # type: ignore[return-value]


@_documented(np.real)
def real(x: ArrayLike, /) -> DistArray:
    return np.real(x)  # type: ignore[return-value]


@_documented(np.round)
def round(x: ArrayLike, /, decimals: int = 0, out: DistArray | None = None) -> DistArray:
    return np.round(x, decimals, out)  # type: ignore[arg-type]


# NumPy's clip, round, real and imag on DistArrays --------------------------------------

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
