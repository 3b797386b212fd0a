"""Comparisons: `isclose`, `allclose`, `array_equal`, `array_equiv` and `isin`, native.

`isclose` is NumPy's formula written with native ufuncs, so it runs per chunk and moves
what an elementwise op moves (nothing for operands of one layout). `allclose`,
`array_equal` and `array_equiv` reduce it with the native `all` (one partial per chunk,
combined into one bool) and return a Python bool, as NumPy does. `isin` gathers the test
elements (usually few), sends a copy to each device and runs the backend's ``isin`` per
chunk of `element`.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from mdarray._array.array import DistArray, in_mode, wrap
from mdarray._core.modes import REPLICA
from mdarray._core.registry import implements, implements_method
from mdarray._exec.chunkwise import aligned, result_layout
from mdarray._exec.operands import as_operand
from mdarray._ops.engine.fallback import as_distarrays
from mdarray._ops.linalg.contractions import _operand
from mdarray._runtime.config import warn
from mdarray._storage import local as _this_process
from mdarray._storage.chunks import Chunks

__all__: list[str] = []


@implements(np.isclose, spmd=True)
def isclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    """``np.isclose``: ``|a - b| <= atol + rtol * |b|`` where `b` is finite, or ``a == b``
    (or both NaN with `equal_nan`), elementwise with NumPy's casts (`b` in at least
    float64's kind). Elementwise: nothing moves for operands of one layout.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> np.isclose(mdarray.asarray(np.array([1.0, np.nan])), 1.0 + 1e-9).get()
    array([ True, False])
    """
    x, y, atol, rtol = (
        v if isinstance(v, (int, float, complex)) else _operand(v) for v in (a, b, atol, rtol)
    )
    dtype = getattr(y, "dtype", None)
    if dtype is not None and dtype.kind != "m":
        target = np.result_type(y, 1.0)
        if target != dtype:
            y = y.astype(target)  # type: ignore[union-attr]
    elif isinstance(y, int):
        y = float(y)
    if not (_all_finite(atol) and _all_finite(rtol)):
        _report_invalid(f"One of rtol or atol is not valid, atol: {atol}, rtol: {rtol}")
    with np.errstate(invalid="ignore"):
        result = np.less_equal(np.abs(np.subtract(x, y)), atol + rtol * np.abs(y)) & np.isfinite(
            y
        ) | np.equal(x, y)
        if equal_nan:
            result = result | (np.isnan(x) & np.isnan(y))
    return result


def _all_finite(value) -> bool:
    return builtins.bool(np.all(np.isfinite(value)))


def _report_invalid(message: str) -> None:
    """NumPy's handling of an invalid rtol or atol, by the ``invalid`` error state."""
    action = np.geterr()["invalid"]
    if action == "warn":
        warn(message, RuntimeWarning)
    elif action == "raise":
        raise FloatingPointError(message)
    elif action == "print":
        print(message)  # noqa: T201 (NumPy's own handling of errstate 'print')


@implements(np.allclose, spmd=True)
def allclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    """``np.allclose``: ``all(isclose(...))`` by the native reduction, a Python bool (one
    bool partial per device is combined).

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> np.allclose(mdarray.asarray(np.ones(3)), 1.0 + 1e-9)
    True
    """
    return builtins.bool(np.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


@implements(np.array_equal, spmd=True)
def array_equal(a1, a2, equal_nan=False):
    """``np.array_equal``: equal shapes and every element equal (NaNs at the same places
    equal with `equal_nan`), by the native ``all``; a Python bool.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.array([1.0, np.nan]))
    >>> np.array_equal(x, x.copy()), np.array_equal(x, x.copy(), equal_nan=True)
    (False, True)
    """
    try:
        a1, a2 = _operand(a1), _operand(a2)
    except Exception:
        return False
    if a1.shape != a2.shape:
        return False
    if equal_nan and a1 is a2:
        return True  # NumPy's shortcut: an array equals itself, NaNs and all
    equal = np.equal(a1, a2)
    if equal_nan and _can_hold_nan(a1.dtype) and _can_hold_nan(a2.dtype):
        equal = equal | (np.isnan(a1) & np.isnan(a2))
    return builtins.bool(np.all(equal))


def _can_hold_nan(dtype) -> bool:
    return np.dtype(dtype).kind in "fcmM"


@implements(np.array_equiv, spmd=True)
def array_equiv(a1, a2):
    """``np.array_equiv``: shapes that broadcast and every element equal, by the native
    ``all``; a Python bool.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> np.array_equiv(mdarray.asarray(np.ones((2, 3))), np.ones(3))
    True
    """
    try:
        a1, a2 = _operand(a1), _operand(a2)
        np.broadcast_shapes(a1.shape, a2.shape)
    except Exception:
        return False
    return builtins.bool(np.all(np.equal(a1, a2)))


@implements(np.isin, spmd=True)
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """``np.isin``: `test_elements` gathered (they are usually few), a copy sent to each
    device of `element`, and the backend's ``isin`` run per chunk of `element` (in
    REPLICA mode), so `element`'s chunks stay where they are.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> np.isin(mdarray.asarray(np.arange(5)), [1, 3]).get()
    array([False,  True, False,  True, False])
    """
    template = test_elements
    if isinstance(test_elements, DistArray):
        test_elements = test_elements.get()
    if not isinstance(element, DistArray):
        result = np.isin(element, test_elements, assume_unique, invert, kind=kind)
        return as_distarrays(result, template)
    test = np.asarray(test_elements) if not _operand_is_native(test_elements) else test_elements
    if element.mode.is_partial:
        element = element.change_mode(REPLICA)
    storage = element.storage
    backend, xp = storage.backend, storage.backend.xp
    copies: dict = {}
    for _, device in _this_process.mine(storage.layout.chunk_devices):
        if device not in copies:
            copies[device] = (
                backend.from_host(test, device)
                if isinstance(test, np.ndarray)
                else backend.adopt(test, device)
            )
    options = {"assume_unique": assume_unique, "invert": invert}
    if kind is not None:
        # NumPy's errors for the kind (say "table" of floats), on empty stand-ins; CuPy's
        # isin has no kind (a speed choice only, the result is the same).
        np.isin(np.empty(0, element.dtype), np.empty(0, test.dtype), kind=kind)
        if xp is np:
            options["kind"] = kind
    column = [copies.get(d) for d in storage.layout.chunk_devices]
    return wrap(storage.map(lambda b, t: xp.isin(b, t, **options), column, dtype=np.dtype(bool)))


def _operand_is_native(x) -> bool:
    return not isinstance(x, np.ndarray) and hasattr(x, "__cuda_array_interface__")


@implements_method("structured_compare")
def structured_compare(ufunc, x: DistArray, other) -> DistArray:
    """``x == other`` or ``x != other`` (`ufunc` names which) of structured arrays, which
    NumPy's operators compare field by field though its ufuncs have no loop: NumPy's
    operator per chunk of the result, on the chunk's pieces (NumPy's errors for
    structures that do not match)."""
    compare = operator.eq if ufunc is np.equal else operator.ne
    other = as_operand(other)
    dtype = other.dtype if hasattr(other, "dtype") else np.asarray(other).dtype
    compare(np.empty(0, x.dtype), np.empty(0, dtype))
    shape = np.broadcast_shapes(x.shape, np.shape(other))
    operands = (
        in_mode(x, REPLICA),
        in_mode(other, REPLICA) if isinstance(other, DistArray) else other,
    )
    layout = result_layout(shape, operands)
    backend = x.storage.backend
    columns = [aligned(op, layout, backend) for op in operands]

    def chunk(k):
        got = compare(columns[0][k], columns[1][k])
        return backend.xp.broadcast_to(got, layout.chunk_shapes[k]).copy()

    return wrap(Chunks.generate(layout, backend, chunk, np.bool_))
