"""When an elementwise op on partial operands may stay partial: the rule table.

A partial operand holds its value spread over copies: in SUM mode the value is the sum of
the copies, in MAX mode their maximum, and so on; a copy that does not contribute holds the
mode's identity (0, 1, -inf, ...). Running a ufunc on every copy gives a partial result
exactly when the ufunc commutes with the combination: ``f(sum(p)) == sum(f(p))`` for every
set of copies ``p``, identities included. Each row of `RULES` states such an identity
(``p``, ``q``: the copies of partial operands; ``c``: the value of a REPLICA operand) and
the conditions under which it holds; `tests/test_mode_rules.py` checks every row with
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

from dataclasses import dataclass

import numpy as np

from ._array import DistArray
from ._modes import MAX, MIN, PROD, REPLICA, SUM, Mode

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
NUMBER = "iufc"  # ring arithmetic: integers wrap modulo 2**n, so +, -, * stay exact

RULES = (
    # sum(p) + sum(q) == sum(p + q)
    Rule(np.add, (SUM, SUM), SUM, NUMBER),
    # max(p) + c == max(p + c): rounding is monotone; -inf + c == -inf needs c finite
    Rule(np.add, (MAX, R), MAX, FLOAT, "finite"),
    Rule(np.add, (R, MAX), MAX, FLOAT, "finite"),
    # min(p) + c == min(p + c)
    Rule(np.add, (MIN, R), MIN, FLOAT, "finite"),
    Rule(np.add, (R, MIN), MIN, FLOAT, "finite"),
    # conj(sum(p)) == sum(conj(p))
    Rule(np.conjugate, (SUM,), SUM, NUMBER),
    # sum(p) / c == sum(p / c): c finite and nonzero (0 / 0 is NaN, 1 / 0 is not)
    Rule(np.divide, (SUM, R), SUM, "fc", "finite nonzero"),
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
    # sum(p) * c == sum(p * c): 0 * inf is NaN, so c finite
    Rule(np.multiply, (SUM, R), SUM, NUMBER, "finite"),
    Rule(np.multiply, (R, SUM), SUM, NUMBER, "finite"),
    # prod(p) * prod(q) == prod(p * q)
    Rule(np.multiply, (PROD, PROD), PROD, NUMBER),
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
    # -sum(p) == sum(-p)
    Rule(np.negative, (SUM,), SUM, NUMBER),
    # -max(p) == min(-p); -(-inf) == +inf (integers: -iinfo.min wraps, so floats only)
    Rule(np.negative, (MAX,), MIN, FLOAT),
    Rule(np.negative, (MIN,), MAX, FLOAT),
    # +v == v in every mode
    Rule(np.positive, (SUM,), SUM, NUMBER),
    Rule(np.positive, (PROD,), PROD, NUMBER),
    Rule(np.positive, (MAX,), MAX, "iuf"),
    Rule(np.positive, (MIN,), MIN, "iuf"),
    # sum(p) - sum(q) == sum(p - q)
    Rule(np.subtract, (SUM, SUM), SUM, NUMBER),
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


def result_mode(ufunc, inputs, layout, dtype) -> Mode | None:
    """The partial mode of ``ufunc(*inputs)`` computed copy by copy, or None.

    None means no row applies and the partial operands must become REPLICA. A row needs
    every partial operand in `layout` (the result's) with the result's `dtype`: a cast
    between the copies and the value would not commute with the combination (int8
    copies wrap where their int16 casts would not).
    """
    pattern = []
    replicas = []
    for x in inputs:
        if isinstance(x, DistArray) and x._mode.is_partial:
            if x._layout != layout or x._dtype != dtype:
                return None
            pattern.append(x._mode)
        else:
            pattern.append(R)
            replicas.append(x)
    for rule in _TABLE.get((ufunc, tuple(pattern)), ()):
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
    with np.errstate(all="ignore"):
        checks = {
            "finite": bool(np.isfinite(value)),
            "nonzero": value != 0,
            "positive": np.real(value) > 0 and np.imag(value) == 0,
            "negative": np.real(value) < 0 and np.imag(value) == 0,
        }
    return all(checks[word] for word in condition.split())


def _host_scalar(operand):
    """The value of a scalar operand known on the host (Python, NumPy, 0-d NumPy), or None."""
    if isinstance(operand, (bool, int, float, complex, np.generic)):
        return operand
    if isinstance(operand, np.ndarray) and operand.ndim == 0:
        return operand[()]
    return None
