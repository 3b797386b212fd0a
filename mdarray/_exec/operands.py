"""What an operand is: the one rule converting operands, its stand-in for NumPy's dtype
decisions, and the one rule of deferral.

- `as_operand`: how every operation takes an operand that is not a DistArray. NumPy and
  backend arrays and scalars stay as they are (Python scalars weakly typed, as NumPy
  takes them); anything else (nested lists, objects with ``__array__``, any Python
  object) becomes what ``numpy.asarray`` makes of it, so ``np.where(x > 1, x, [1, 5])``
  broadcasts the list as NumPy does.
- `stand_in`: what stands in for an operand where NumPy decides from dtypes alone (a
  result dtype, a cast check): NumPy runs on it, no elements computed.
- `verdict`: whether a call's operand types leave the call to mdarray. NumPy's protocols
  (NEP 13 for ufuncs, NEP 18 for functions) ask an implementation to return
  NotImplemented for types it does not know, so that theirs can answer: another
  library's duck array (a type with its own ``__array_ufunc__`` or
  ``__array_function__``, or ``__array_ufunc__ = None``) gets `DEFER`. A NumPy array
  subclass with a meaning of its own (a masked array, a matrix: NumPy's protocols, and a
  priority above ndarray's that makes NumPy hand results its type) gets `HOST`: the
  answer NumPy gives for it, from the DistArrays' values on the host. DistArrays,
  ndarrays (and subclasses that only store differently, ``memmap``), NumPy scalars, the
  backend's arrays and every other object are taken.

Types are looked at once (`TAKEN` and a cache of verdicts), so the protocols check an
operand's type with one set lookup.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from mdarray._backends.backend import backend as default_backend_object
from mdarray._core.registry import method
from mdarray._storage.stored import Stored

#: Another library's array answers the call itself: the protocol returns NotImplemented.
DEFER = "defer"
#: A NumPy array subclass of its own meaning: NumPy's answer, from gathered values.
HOST = "host"

#: Types whose operands every protocol takes: the protocols skip these with one lookup.
TAKEN: set[type] = {bool, int, float, complex, np.ndarray, list, tuple, type(None)}
_VERDICTS: dict[tuple[type, str], str | None] = {}
_OTHER = {"__array_ufunc__": "__array_function__", "__array_function__": "__array_ufunc__"}
_A = TypeVar("_A", bound="Operators")

#: `foreign`'s answer where mdarray answers the call.
OURS = object()
_PY_SCALARS = (bool, int, float, complex)


def foreign(func, types, args: tuple, kwargs: dict) -> Any:
    """The answer to a call of `func` (a NumPy function, or a ufunc's method) whose
    operands' `types` include one not in `TAKEN`: NotImplemented (`DEFER`), NumPy's
    answer (`HOST`: the fallback's gathered values, the result as NumPy gives it), or
    `OURS` where mdarray answers after all."""
    protocol = (
        "__array_ufunc__"
        if isinstance(getattr(func, "__self__", None), np.ufunc)
        else "__array_function__"
    )
    found = verdict(types, protocol)
    if found == DEFER:
        return NotImplemented
    if found == HOST:
        return method("numpy_answer")(func, args, kwargs)
    return OURS


def verdict(types, protocol: str) -> str | None:
    """`DEFER` if one of `types` is another library's array for `protocol`
    (``"__array_ufunc__"`` or ``"__array_function__"``), else `HOST` if one is a NumPy
    array subclass of its own meaning, else None (mdarray answers)."""
    found = None
    for kind in types:
        if kind in TAKEN:
            continue
        key = (kind, protocol)
        if key not in _VERDICTS:
            _VERDICTS[key] = _judge(kind, protocol)
            if _judge(kind, _OTHER[protocol]) is None and _VERDICTS[key] is None:
                TAKEN.add(kind)  # taken by both protocols: the protocols skip it
        seen = _VERDICTS[key]
        if seen == DEFER:
            return DEFER
        found = found or seen
    return found


def _judge(kind: type, protocol: str) -> str | None:
    if issubclass(kind, (Stored, np.generic)):
        return None
    if getattr(kind, "__array_ufunc__", False) is None:
        return DEFER  # NEP 13: such a type handles the operation, or nobody does
    if issubclass(kind, np.ndarray):
        if (
            kind.__array_ufunc__ is not np.ndarray.__array_ufunc__
            or kind.__array_function__ is not np.ndarray.__array_function__
        ):
            return DEFER
        priority = getattr(kind, "__array_priority__", 0.0)
        return HOST if isinstance(priority, (int, float)) and priority > 0.0 else None
    if kind.__module__.partition(".")[0] == "cupy":
        return None  # the cuda backend's arrays, taken as NumPy's
    own = getattr(kind, protocol, None)
    return DEFER if own is not None else None


def yields_to(other: Any) -> bool:
    """Whether a binary operator leaves ``x op other`` to `other`'s reflected operator:
    where `other` opts out of ufuncs (``__array_ufunc__ = None``, NEP 13) or is a NumPy
    array subclass of its own meaning (`HOST`), whose reflected operator Python would
    call first beside an ndarray (``ndarray * matrix`` multiplies matrices)."""
    kind = type(other)
    if getattr(kind, "__array_ufunc__", False) is None:
        return True
    return verdict((kind,), "__array_ufunc__") == HOST


def _forward(ufunc, name: str):
    def method(self, other):
        if type(other) not in TAKEN and yields_to(other):
            return NotImplemented
        return ufunc(self, other)

    return _named(method, f"__{name}__", f"``x {_SYMBOLS[name]} other``", ufunc)


def _reflected(ufunc, name: str):
    def method(self, other):
        if type(other) not in TAKEN and yields_to(other):
            return NotImplemented
        return ufunc(other, self)

    return _named(method, f"__r{name}__", f"``other {_SYMBOLS[name]} x``", ufunc)


def _named(method, name: str, expression: str, ufunc):
    """`method` named `name`, its docstring saying which ufunc `expression` calls."""
    method.__name__ = method.__qualname__ = name
    method.__doc__ = (
        f"{expression}: ``numpy.{ufunc.__name__}`` on DistArrays (see `DistArray.__array_ufunc__`)."
    )
    return method


# The mixin's in-place and unary operators have no docstrings: each gets one that names its
# ufunc, on a copy of the function (NumPy's own functions stay as they are).
def _documented(name: str, expression: str, ufunc):
    mixin = getattr(NDArrayOperatorsMixin, name)
    method = types.FunctionType(
        mixin.__code__, mixin.__globals__, name, mixin.__defaults__, mixin.__closure__
    )
    return _named(method, name, expression, ufunc)


class Operators(NDArrayOperatorsMixin):
    """NumPy's `NDArrayOperatorsMixin` (every operator is its ufunc, so ``a + b`` and
    ``np.add(a, b)`` take one path), whose binary operators also yield to a NumPy array
    subclass of its own meaning (`yields_to`), as an ndarray's do. In-place operators
    stay the mixin's: ``x += m`` writes x, as ``a += m`` writes an ndarray."""

    __slots__ = ()

    if TYPE_CHECKING:  # each operator gives an array of its operand's type (set below)

        def __lt__(self: _A, other: Any) -> _A: ...
        def __le__(self: _A, other: Any) -> _A: ...
        def __gt__(self: _A, other: Any) -> _A: ...
        def __ge__(self: _A, other: Any) -> _A: ...
        def __add__(self: _A, other: Any) -> _A: ...
        def __radd__(self: _A, other: Any) -> _A: ...
        def __iadd__(self: _A, other: Any) -> _A: ...
        def __sub__(self: _A, other: Any) -> _A: ...
        def __rsub__(self: _A, other: Any) -> _A: ...
        def __isub__(self: _A, other: Any) -> _A: ...
        def __mul__(self: _A, other: Any) -> _A: ...
        def __rmul__(self: _A, other: Any) -> _A: ...
        def __imul__(self: _A, other: Any) -> _A: ...
        def __matmul__(self: _A, other: Any) -> _A: ...
        def __rmatmul__(self: _A, other: Any) -> _A: ...
        def __imatmul__(self: _A, other: Any) -> _A: ...
        def __truediv__(self: _A, other: Any) -> _A: ...
        def __rtruediv__(self: _A, other: Any) -> _A: ...
        def __itruediv__(self: _A, other: Any) -> _A: ...
        def __floordiv__(self: _A, other: Any) -> _A: ...
        def __rfloordiv__(self: _A, other: Any) -> _A: ...
        def __ifloordiv__(self: _A, other: Any) -> _A: ...
        def __mod__(self: _A, other: Any) -> _A: ...
        def __rmod__(self: _A, other: Any) -> _A: ...
        def __imod__(self: _A, other: Any) -> _A: ...
        def __pow__(self: _A, other: Any) -> _A: ...
        def __rpow__(self: _A, other: Any) -> _A: ...
        def __ipow__(self: _A, other: Any) -> _A: ...
        def __lshift__(self: _A, other: Any) -> _A: ...
        def __rlshift__(self: _A, other: Any) -> _A: ...
        def __ilshift__(self: _A, other: Any) -> _A: ...
        def __rshift__(self: _A, other: Any) -> _A: ...
        def __rrshift__(self: _A, other: Any) -> _A: ...
        def __irshift__(self: _A, other: Any) -> _A: ...
        def __and__(self: _A, other: Any) -> _A: ...
        def __rand__(self: _A, other: Any) -> _A: ...
        def __iand__(self: _A, other: Any) -> _A: ...
        def __xor__(self: _A, other: Any) -> _A: ...
        def __rxor__(self: _A, other: Any) -> _A: ...
        def __ixor__(self: _A, other: Any) -> _A: ...
        def __or__(self: _A, other: Any) -> _A: ...
        def __ror__(self: _A, other: Any) -> _A: ...
        def __ior__(self: _A, other: Any) -> _A: ...
        def __divmod__(self: _A, other: Any) -> tuple[_A, _A]: ...
        def __rdivmod__(self: _A, other: Any) -> tuple[_A, _A]: ...
        def __neg__(self: _A) -> _A: ...
        def __pos__(self: _A) -> _A: ...
        def __abs__(self: _A) -> _A: ...
        def __invert__(self: _A) -> _A: ...


_COMPARISONS: dict[str, np.ufunc] = {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}
_BINARY: dict[str, np.ufunc] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "matmul": np.matmul,
    "truediv": np.true_divide,
    "floordiv": np.floor_divide,
    "mod": np.remainder,
    "divmod": np.divmod,
    "pow": np.power,
    "lshift": np.left_shift,
    "rshift": np.right_shift,
    "and": np.bitwise_and,
    "xor": np.bitwise_xor,
    "or": np.bitwise_or,
}
_SYMBOLS = {
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "add": "+",
    "sub": "-",
    "mul": "*",
    "matmul": "@",
    "truediv": "/",
    "floordiv": "//",
    "mod": "%",
    "divmod": "divmod",
    "pow": "**",
    "lshift": "<<",
    "rshift": ">>",
    "and": "&",
    "xor": "^",
    "or": "|",
}
_UNARY = {"neg": ("-x", np.negative), "pos": ("+x", np.positive), "abs": ("abs(x)", np.absolute)}
_UNARY["invert"] = ("~x", np.invert)
#: Each binary operator's ufunc, and how it calls it: ``(ufunc, reflected, in_place)``.
BINARY_OPERATORS: dict[str, tuple[np.ufunc, bool, bool]] = {}
for _name, _ufunc in _COMPARISONS.items():
    setattr(Operators, f"__{_name}__", _forward(_ufunc, _name))
    BINARY_OPERATORS[f"__{_name}__"] = (_ufunc, False, False)
for _name, _ufunc in _BINARY.items():
    setattr(Operators, f"__{_name}__", _forward(_ufunc, _name))
    setattr(Operators, f"__r{_name}__", _reflected(_ufunc, _name))
    BINARY_OPERATORS[f"__{_name}__"] = (_ufunc, False, False)
    BINARY_OPERATORS[f"__r{_name}__"] = (_ufunc, True, False)
    if _name != "divmod":  # in place: written into x, in its layout and mode
        _expression = f"``x {_SYMBOLS[_name]}= other``, in place"
        setattr(Operators, f"__i{_name}__", _documented(f"__i{_name}__", _expression, _ufunc))
        BINARY_OPERATORS[f"__i{_name}__"] = (_ufunc, False, True)
for _name, (_expression, _ufunc) in _UNARY.items():
    _method = _documented(f"__{_name}__", f"``{_expression}``", _ufunc)
    _method.ufunc = _ufunc  # (DistArray's decided unary operators call it)
    setattr(Operators, f"__{_name}__", _method)


def as_operand(x: Any) -> Any:
    """`x` as per-chunk code takes an operand: DistArrays, NumPy and backend arrays and
    scalars as they are (Python scalars stay weakly typed); anything else as the NumPy
    array ``numpy.asarray`` makes of it (a list, an object with ``__array__``, a 0-d
    object array of any other object, as NumPy makes)."""
    if isinstance(x, (Stored, np.ndarray, np.generic, *_PY_SCALARS)):
        return x
    if default_backend_object().is_native(x):
        return x
    return np.asarray(x)


def stand_in(operand: Any, *, one: bool = False) -> Any:
    """What stands in for `operand` where NumPy decides from dtypes alone (a result dtype,
    a cast check): a Python scalar as it is (weakly typed, as NumPy takes it); anything
    else an array of its dtype and dimensions without elements (each side but 1 made 0,
    so stand-ins broadcast as their operands do), or with `one` of one element (zeros,
    so a cast NumPy checks by converting it raises only as the operand's values would)."""
    if isinstance(operand, _PY_SCALARS):
        return operand
    if not hasattr(operand, "dtype"):
        operand = np.asarray(operand)
    sides = np.shape(operand)
    shape = (1,) * len(sides) if one else tuple(0 if n != 1 else 1 for n in sides)
    return np.zeros(shape, operand.dtype)
