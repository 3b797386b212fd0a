"""Every fact of the form "X commutes with combining partial copies", in one place.

Three tables, each row with its algebra in a comment and a hypothesis proof in
`tests/core/test_mode_rules.py`:

- `RULES`: when an elementwise ufunc on partial operands gives a partial result;
- `REDUCTION_MODES`: which reductions leave a partial result, in which mode;
- `keeps_mode`: which casts may be applied to the copies of a partial value.

Elementwise rows
----------------

A partial operand holds its value spread over copies: in SUM mode the value is the sum of
the copies, in MAX mode their maximum, and so on; a copy that does not contribute holds the
mode's identity (0, 1, -inf, ...). Running a ufunc on every copy gives a partial result
exactly when the ufunc commutes with the combination: ``f(sum(p)) == sum(f(p))`` for every
set of copies ``p``, identities included. Each row of `RULES` states such an identity
(``p``, ``q``: the copies of partial operands; ``c``: the value of a REPLICA operand) and
the conditions under which it holds; `tests/core/test_mode_rules.py` checks every row with
hypothesis over drawn copies. Anything not in the table converts its operands to REPLICA.

Conditions that depend on a REPLICA operand's values ("c is finite", "c > 0") are proved
only from what the host already knows: the value of a Python or NumPy scalar (or 0-d NumPy
array), or a dtype whose values all qualify (integers and bools are always finite). Reading
a device array's values to prove them would synchronize the host with the device and make
the result's mode depend on data; such operands convert the partial operand instead.

Float rows hold up to rounding, as every partial mode does (the copies of a SUM are added
in an unspecified order); no row holds only up to overflow or to an identity: ``0 * inf`` is
NaN, so ``x * c`` needs a finite ``c``, and ``iinfo.min - 1`` wraps, so ``x - c`` stays MAX
only for floats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .modes import MAX, MIN, PROD, REPLICA, SUM, Mode

R = REPLICA  # in a row's operand pattern: any REPLICA operand (DistArray, array, scalar)


@dataclass(frozen=True)
class Rule:
    """One row: `ufunc` over operands in the modes of `operands` gives `result`.

    `kinds` are the dtype kinds (of the operands and the result, which must all be one
    dtype) for which the identity holds; `condition` is what the REPLICA operand's values
    must satisfy (`CONDITIONS`).
    """

    ufunc: np.ufunc
    operands: tuple
    result: Mode
    kinds: str
    condition: str | None = None


FLOAT = "f"
NUMBER = "iufc"
# Ring arithmetic: integers wrap modulo 2**n, so +, -, * of copies are exact for every
# value. Floats are not a ring at their edges: copies may overflow where their combined
# value does not (copies 1e308 and -1e308 hold the value 0; doubled, they are inf and -inf),
# so float rows need a condition that keeps every copy in range.
RING = "iu"

RULES = (
    # sum(p) + sum(q) == sum(p + q); floats: p + q may overflow where the sums do not
    Rule(np.add, (SUM, SUM), SUM, RING),
    # max(p) + c == max(p + c): rounding is monotone; -inf + c == -inf needs c finite
    Rule(np.add, (MAX, R), MAX, FLOAT, "finite"),
    Rule(np.add, (R, MAX), MAX, FLOAT, "finite"),
    # min(p) + c == min(p + c)
    Rule(np.add, (MIN, R), MIN, FLOAT, "finite"),
    Rule(np.add, (R, MIN), MIN, FLOAT, "finite"),
    # conj(sum(p)) == sum(conj(p)); complex: not for signed zeros (see negative)
    Rule(np.conjugate, (SUM,), SUM, "iuf"),
    # No float row scales a SUM (sum(p) / c, sum(p) * c): a product rounds each copy apart
    # (sum([10., -3., 1., -4., -4.]) / 5 is 0.0 as NumPy divides the sum, but its copies'
    # fifths sum to -2.2e-16), and even a power of two moves an overflow: float32 copies
    # [max, max] hold inf, which halved is inf, while their halves sum to max; doubled,
    # copies 1e308 and -1e308 overflow where the value 0 does not. Only c == 1 is exact.
    # max(p) / c == max(p / c) for c > 0; -inf / c == -inf
    Rule(np.divide, (MAX, R), MAX, FLOAT, "finite positive"),
    Rule(np.divide, (MIN, R), MIN, FLOAT, "finite positive"),
    # max(p) / c == min(p / c) for c < 0; -inf / c == +inf, MIN's identity
    Rule(np.divide, (MAX, R), MIN, FLOAT, "finite negative"),
    Rule(np.divide, (MIN, R), MAX, FLOAT, "finite negative"),
    # max(max(p), max(q)) == max(max(p, q)); NaN propagates on both sides
    Rule(np.maximum, (MAX, MAX), MAX, "biuf"),
    # max(max(p), c) == max(max(p, c)): max is idempotent
    Rule(np.maximum, (MAX, R), MAX, "biuf"),
    Rule(np.maximum, (R, MAX), MAX, "biuf"),
    # min(min(p), min(q)) == min(min(p, q))
    Rule(np.minimum, (MIN, MIN), MIN, "biuf"),
    # min(min(p), c) == min(min(p, c))
    Rule(np.minimum, (MIN, R), MIN, "biuf"),
    Rule(np.minimum, (R, MIN), MIN, "biuf"),
    # sum(p) * c == sum(p * c): 0 * inf is NaN, so c finite; integers only (see divide)
    Rule(np.multiply, (SUM, R), SUM, RING, "finite"),
    Rule(np.multiply, (R, SUM), SUM, RING, "finite"),
    # prod(p) * prod(q) == prod(p * q); floats: p * q may overflow (1e200 * 1e200) where
    # the products do not
    Rule(np.multiply, (PROD, PROD), PROD, RING),
    # max(p) * c == max(p * c) for c > 0 (monotone); -inf * c == -inf
    Rule(np.multiply, (MAX, R), MAX, FLOAT, "finite positive"),
    Rule(np.multiply, (R, MAX), MAX, FLOAT, "finite positive"),
    Rule(np.multiply, (MIN, R), MIN, FLOAT, "finite positive"),
    Rule(np.multiply, (R, MIN), MIN, FLOAT, "finite positive"),
    # max(p) * c == min(p * c) for c < 0; -inf * c == +inf, MIN's identity
    Rule(np.multiply, (MAX, R), MIN, FLOAT, "finite negative"),
    Rule(np.multiply, (R, MAX), MIN, FLOAT, "finite negative"),
    Rule(np.multiply, (MIN, R), MAX, FLOAT, "finite negative"),
    Rule(np.multiply, (R, MIN), MAX, FLOAT, "finite negative"),
    # -sum(p) == sum(-p); floats: not where copies cancel (1 + -1 is +0.0, so the value
    # negated is -0.0, while -1 + 1 is +0.0 again)
    Rule(np.negative, (SUM,), SUM, RING),
    # -max(p) == min(-p); -(-inf) == +inf (integers: -iinfo.min wraps, so floats only)
    Rule(np.negative, (MAX,), MIN, FLOAT),
    Rule(np.negative, (MIN,), MAX, FLOAT),
    # +v == v in every mode
    Rule(np.positive, (SUM,), SUM, NUMBER),
    Rule(np.positive, (PROD,), PROD, NUMBER),
    Rule(np.positive, (MAX,), MAX, "iuf"),
    Rule(np.positive, (MIN,), MIN, "iuf"),
    # sum(p) - sum(q) == sum(p - q)
    Rule(np.subtract, (SUM, SUM), SUM, RING),
    # max(p) - c == max(p - c)
    Rule(np.subtract, (MAX, R), MAX, FLOAT, "finite"),
    Rule(np.subtract, (MIN, R), MIN, FLOAT, "finite"),
    # c - max(p) == min(c - p); c - (-inf) == +inf, MIN's identity
    Rule(np.subtract, (R, MAX), MIN, FLOAT, "finite"),
    Rule(np.subtract, (R, MIN), MAX, FLOAT, "finite"),
)


def _by_pattern(rules) -> dict:
    table: dict = {}
    for rule in rules:
        table.setdefault((rule.ufunc, rule.operands), []).append(rule)
    return {key: tuple(rows) for key, rows in table.items()}


_TABLE = _by_pattern(RULES)


def result_mode(ufunc, pattern: tuple, replicas: tuple, dtype) -> Mode | None:
    """The partial mode of `ufunc` computed copy by copy, or None.

    `pattern` is each operand's mode (`R` for REPLICA operands, whatever they are),
    `replicas` the REPLICA operands themselves (their values may prove a row's condition).
    The caller checks that every partial operand has the result's layout and `dtype`: a
    cast between the copies and the value would not commute with the combination (int8
    copies wrap where their int16 casts would not). None means no row applies and the
    partial operands must become REPLICA.
    """
    for rule in _TABLE.get((ufunc, pattern), ()):
        if dtype.kind in rule.kinds and all(_holds(rule.condition, c) for c in replicas):
            return rule.result
    return None


def _holds(condition: str | None, operand) -> bool:
    """Whether the host can prove `condition` for every value of a REPLICA operand."""
    if condition is None:
        return True
    value = _host_scalar(operand)
    if value is None:
        # An array: only its dtype can prove anything, and only finiteness.
        kind = np.dtype(getattr(operand, "dtype", object)).kind
        return condition == "finite" and kind in "biu"
    checks = dict(zip(_WORDS, _checks(value)))
    return all(checks[word] for word in condition.split())


# The words of `Rule.condition`, in the order `_checks` proves them.
_WORDS = ("finite", "positive", "negative")


def _checks(value) -> tuple:
    if type(value) is float:  # the common scalar, without NumPy's per-call cost
        return (math.isfinite(value), value > 0, value < 0)
    with np.errstate(all="ignore"):
        real, imag = np.real(value), np.imag(value)
        return (
            bool(np.isfinite(value)),
            bool(real > 0 and imag == 0),
            bool(real < 0 and imag == 0),
        )


def host_facts(operand) -> tuple | None:
    """Everything `result_mode` may learn of a REPLICA operand's values (each condition
    word, true or not), for a scalar known on the host; None for an array, whose dtype is
    all it goes by. Equal facts and dtypes give equal modes: a key for caching a mode."""
    value = _host_scalar(operand)
    return None if value is None else _checks(value)


def _host_scalar(operand):
    """The value of a scalar operand known on the host (Python, NumPy, 0-d NumPy), or None."""
    if isinstance(operand, (bool, int, float, complex, np.generic)):
        return operand
    if isinstance(operand, np.ndarray) and operand.ndim == 0:
        return operand[()]
    return None


# Reductions -----------------------------------------------------------------------------

# Reducing ufunc -> (mode whose combine it is, result dtype kinds where that holds).
# Each row: the reduction of a union is the ufunc of the reductions of the parts.
REDUCTION_MODES = {
    np.add: (SUM, "biufc"),  # sum(p ++ q) == sum(p) + sum(q)
    np.multiply: (PROD, "biufc"),  # prod(p ++ q) == prod(p) * prod(q)
    np.maximum: (MAX, "biuf"),  # max(p ++ q) == maximum(max(p), max(q)), NaNs propagate
    np.minimum: (MIN, "biuf"),
    np.logical_and: (MIN, "b"),  # on bools, and == min
    np.logical_or: (MAX, "b"),  # on bools, or == max
    np.bitwise_and: (MIN, "b"),
    np.bitwise_or: (MAX, "b"),
    np.fmax: (MAX, "biu"),  # without NaNs, fmax == maximum
    np.fmin: (MIN, "biu"),
}
# op(a, a) == a: overlapping copies may all contribute.
IDEMPOTENT = frozenset(
    {np.maximum, np.minimum, np.fmax, np.fmin}
    | {np.logical_and, np.logical_or, np.bitwise_and, np.bitwise_or}
)
# Associative and commutative: partials may combine in any order.
REORDERABLE = IDEMPOTENT | {np.add, np.multiply, np.logical_xor, np.bitwise_xor}


def reduction_mode(ufunc, dtype) -> Mode | None:
    """The mode that combines partial `ufunc` reductions of `dtype`, or None."""
    mode, kinds = REDUCTION_MODES.get(ufunc, (None, ""))
    return mode if np.dtype(dtype).kind in kinds else None


def reduction_identity(ufunc, dtype):
    """A value of `dtype` that `ufunc` leaves every operand unchanged with, or None."""
    dtype = np.dtype(dtype)
    if ufunc in (np.fmax, np.fmin) and dtype.kind == "f":
        return dtype.type(np.nan)  # fmax(nan, v) == v
    mode = reduction_mode(ufunc, dtype)
    if mode is not None:
        return mode.identity(dtype)
    if ufunc not in REORDERABLE or ufunc.identity is None:
        return None
    # astype wraps -1 (bitwise_and's identity) to all ones for unsigned dtypes.
    return np.array(ufunc.identity).astype(dtype)[()]


# Casts ---------------------------------------------------------------------------------


def keeps_mode(mode: Mode, source, target) -> bool:
    """True where casting each copy then combining equals combining then casting, for
    every value (the one cast rule: `astype`, ``out=`` and every reduction use it).

    - SUM and PROD: the cast must be a ring homomorphism for every value. Integer to
      integer casts that keep or narrow the width are (wrapping arithmetic modulo 2**n
      reduces to modulo 2**m, m <= n); widening is not (``int8(100) + int8(100)`` wraps,
      its int16 copies do not), nor is any cast involving floats (``1e300 + -1e300`` is 0,
      its float32 copies give ``inf + -inf``, NaN; float32 copies that overflow when
      added do not in float64) or bools (bool SUM is logical or).
    - MAX and MIN: the cast must be monotone (non-decreasing), and the target must hold
      MAX/MIN: bool, int and float sources into floats, and safe casts between integer
      kinds; ``max(c(a), c(b)) == c(max(a, b))`` for monotone ``c``.
    - The same dtype keeps every mode.
    """
    source, target = np.dtype(source), np.dtype(target)
    if source == target or not mode.is_partial:
        return True
    if mode.name in ("sum", "prod"):
        return source.kind in "iu" and target.kind in "iu" and target.itemsize <= source.itemsize
    if target.kind == "f":
        return source.kind in "biuf"
    if target.kind in "iu":
        return source.kind in "biu" and np.can_cast(source, target, "safe")
    return False
