"""Modes: how the copies of an element held by overlapping chunks combine into its value."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import DTypeLike


class Mode:
    """How overlapping copies combine, REPLICA or a partial result (SUM, PROD, MAX, MIN).

    In REPLICA mode every copy holds the value. In the other modes the value is the
    sum / product / max / min of all copies; a copy that does not contribute holds the
    mode's identity. Modes are singletons; ``str(mode)`` is the name accepted wherever a
    mode is taken.

    >>> import mdarray
    >>> str(mdarray.SUM), mdarray.as_mode("max") is mdarray.MAX
    ('sum', True)
    """

    __slots__ = ("_doc", "_holds", "idempotent", "name", "ufunc_name")

    def __init__(self, name: str, ufunc_name: str | None, *, idempotent: bool, doc: str) -> None:
        #: The name accepted wherever a mode is taken (``"sum"``).
        self.name = name
        #: The binary ufunc (by name) that combines two copies; None for REPLICA.
        self.ufunc_name = ufunc_name
        #: Whether combining a value with itself gives it back (REPLICA, MAX, MIN). Then
        #: equal copies may all contribute, and a REPLICA array is already in this mode.
        self.idempotent = idempotent
        # The dtypes `check_dtype` passed (every array made checks its mode once per dtype).
        self._holds: set = set()
        # This mode's own docstring, its ``__doc__`` (`_OwnDoc`).
        self._doc = doc

    def __repr__(self) -> str:
        return f"mdarray.{self.name.upper()}"

    def __str__(self) -> str:
        return self.name

    def __reduce__(self) -> tuple[Callable[[str], Mode], tuple[str]]:
        return (as_mode, (self.name,))

    @property
    def is_partial(self) -> bool:
        """Whether the value is spread over the copies (SUM, PROD, MAX and MIN)."""
        return self.ufunc_name is not None

    def ufunc(self, xp: Any, dtype: DTypeLike | None = None) -> Any:
        """The binary ufunc of `xp` (NumPy or CuPy) that combines two partial copies (of
        `dtype`), called as ``ufunc(a, b, out=...)``.

        For complex PROD the identity is not neutral in IEEE arithmetic (``(1+0j) *
        (inf+0j)`` is ``inf+nanj``), so the combination there skips identity copies: it
        gives the other operand where one of them is the identity.
        """
        if self.ufunc_name is None:
            raise TypeError("REPLICA mode has no combining ufunc")
        combine = getattr(xp, self.ufunc_name)
        if dtype is None or self.name != "prod" or np.dtype(dtype).kind != "c":
            return combine
        identity = self.identity(dtype)

        def is_identity(z: Any) -> Any:
            # 1-0j equals 1+0j but is a value, not the identity: its sign must survive.
            return (z == identity) & ~xp.signbit(z.imag)

        def skipping_identities(a: Any, b: Any, out: Any = None) -> Any:
            with np.errstate(invalid="ignore"):  # identity products are not used
                product = combine(a, b)
            result = xp.where(is_identity(b), a, xp.where(is_identity(a), b, product))
            if out is None:
                return result
            out[...] = result
            return out

        return skipping_identities

    def identity(self, dtype: DTypeLike) -> np.generic:
        """The value a non-contributing copy holds, as a scalar of `dtype`.

        Raises TypeError where the dtype cannot hold this mode (MAX or MIN on complex,
        any partial mode on non-numeric dtypes).
        """
        resolved: np.dtype[Any] = np.dtype(dtype)
        if not self.is_partial:
            raise TypeError("REPLICA mode has no identity")
        kind = resolved.kind
        if kind not in "biufc":
            raise TypeError(f"mode {self} needs a numeric or bool dtype, got {resolved}")
        if self.name == "sum":
            # -0.0, not +0.0: -0.0 + v is v for every float v, -0.0 included (+0.0 + -0.0
            # is +0.0, so a SUM holding -0.0 would read back +0.0).
            if kind == "c":
                return resolved.type(complex(-0.0, -0.0))
            return resolved.type(-0.0 if kind == "f" else 0)
        if self.name == "prod":
            return resolved.type(1)
        if kind == "c":
            raise TypeError(f"mode {self} is not defined for complex dtype {resolved}")
        lowest = self.name == "max"
        if kind == "b":
            return np.bool_(not lowest)
        if kind == "f":
            return resolved.type(-np.inf if lowest else np.inf)
        info = np.iinfo(resolved)
        return resolved.type(info.min if lowest else info.max)

    def check_dtype(self, dtype: DTypeLike) -> None:
        """Raise TypeError if `dtype` cannot hold this mode."""
        if self.ufunc_name is not None and dtype not in self._holds:
            self.identity(dtype)
            self._holds.add(np.dtype(dtype))


class _OwnDoc:
    """``Mode.__doc__``, the class's docstring on the class, each mode's own on a mode, so
    ``help(mdarray.SUM)`` and the API reference say what SUM means (a mode is an instance:
    without this it would show the class's text)."""

    def __init__(self, class_doc: str | None) -> None:
        self.class_doc = class_doc

    def __get__(self, mode: Mode | None, owner: type | None = None) -> str | None:
        return self.class_doc if mode is None else mode._doc


# A heap type's __doc__ may be a descriptor: `type.__doc__` calls its __get__(None, cls).
setattr(Mode, "__doc__", _OwnDoc(Mode.__doc__))  # noqa: B010  (typed str | None)

REPLICA = Mode(
    "replica",
    None,
    idempotent=True,
    doc="""Every copy of an element holds its value (overlapping chunks are replicas).

    The mode of arrays made from data (`distributed_array`, the creation functions) and
    of most operation results. Reading an element takes any one copy; a write reaches
    every copy.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(3), mdarray.Layout.replicated((3,), devices=[0, 1]))
    >>> x.mode, [c.tolist() for c in x.all_chunks()[1]]
    (mdarray.REPLICA, [[0, 1, 2]])
    """,
)
SUM = Mode(
    "sum",
    "add",
    idempotent=False,
    doc="""A partial sum, an element's value being the sum of all its copies.

    A sum or mean along an axis that chunks split gives this mode without moving data:
    each device keeps the sum of its own part. A copy that does not contribute holds 0
    (-0.0 for floats, so that a value of -0.0 survives). The copies are added up when
    the value is observed (`DistArray.get`, ``repr``, ``item``) or an operation needs
    REPLICA (``x.change_mode(mdarray.REPLICA)``).

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(4.0), mdarray.Layout.block((4,), devices=[0, 1]))
    >>> s = x.sum()
    >>> s.mode, [c.tolist() for c in s.all_chunks()[0] + s.all_chunks()[1]], float(s)
    (mdarray.SUM, [1.0, 5.0], 6.0)
    """,
)
PROD = Mode(
    "prod",
    "multiply",
    idempotent=False,
    doc="""A partial product, an element's value being the product of all its copies.

    A product along an axis that chunks split gives this mode without moving data. A
    copy that does not contribute holds 1. Complex copies that hold the identity are
    skipped when combining (``(1+0j) * (inf+0j)`` is not ``inf+0j`` in IEEE arithmetic).
    """,
)
MAX = Mode(
    "max",
    "maximum",
    idempotent=True,
    doc="""A partial maximum, an element's value being the largest of its copies.

    A max along an axis that chunks split gives this mode without moving data (``any``
    of booleans too). A copy that does not contribute holds the dtype's lowest value
    (-inf, the integer minimum, False); complex dtypes cannot hold it (TypeError). Equal
    copies may all contribute, so a REPLICA array is already a valid MAX array.
    """,
)
MIN = Mode(
    "min",
    "minimum",
    idempotent=True,
    doc="""A partial minimum, an element's value being the smallest of its copies.

    A min along an axis that chunks split gives this mode without moving data (``all``
    of booleans too). A copy that does not contribute holds the dtype's highest value
    (inf, the integer maximum, True); complex dtypes cannot hold it (TypeError).
    """,
)

MODES = {mode.name: mode for mode in (REPLICA, SUM, PROD, MAX, MIN)}


def as_mode(mode: object) -> Mode:
    """The Mode for a Mode or its name (case-insensitive); ValueError for anything else."""
    if isinstance(mode, Mode):
        return mode
    if isinstance(mode, str) and mode.lower() in MODES:
        return MODES[mode.lower()]
    raise ValueError(f"unknown mode {mode!r}; expected one of {sorted(MODES)} or a mdarray.Mode")


# The modes are instances, which doctest's finder skips: their examples run from here.
__test__ = {name: mode.__doc__ for name, mode in MODES.items()}
