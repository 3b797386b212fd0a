"""Operands that are not DistArrays: the one conversion rule (`_operands.as_operand`) and
the one deferral rule (`_operands.verdict`), each against NumPy on the same data.

- Another library's duck array (its own ``__array_ufunc__`` / ``__array_function__``)
  answers the call itself: mdarray's protocols return NotImplemented (NEP 13, NEP 18).
- A NumPy array subclass of its own meaning (a masked array, a matrix) gets NumPy's
  answer: with a DistArray where NumPy has an ndarray, the same result, mask included.
- Lists and other array-likes are what ``numpy.asarray`` makes of them, broadcast
  against the DistArrays as NumPy broadcasts them.
"""

import operator
import warnings

import numpy as np
import pytest
from _backend_facts import numpy_dtypes_only

import mdarray
from mdarray._exec.operands import DEFER, HOST, stand_in, verdict


def _dist(a):
    return mdarray.asarray(np.asarray(a))


def _value(x):
    return x.get() if isinstance(x, mdarray.DistArray) else x


class Duck:
    """Another library's duck array: answers every NumPy function and ufunc itself."""

    def __init__(self, values):
        self.values = np.asarray(values)
        self.shape, self.dtype, self.ndim = self.values.shape, self.values.dtype, 1

    def __array_function__(self, func, types, args, kwargs):
        return ("duck", func.__name__)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return ("duck", ufunc.__name__)


class Refuses:
    """A type that opts out of ufuncs (NEP 13's ``__array_ufunc__ = None``)."""

    __array_ufunc__ = None

    def __radd__(self, other):
        return "refuses.__radd__"


# Deferral ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("isin", np.isin),
        ("concatenate", lambda x, d: np.concatenate([x, d])),
        ("where", lambda x, d: np.where(x > 1, x, d)),
        ("dot", np.dot),
        ("allclose", np.allclose),
    ],
)
def test_functions_defer_to_another_librarys_array(name, call):
    x = _dist([1.0, 2.0, 3.0, 4.0])
    got = call(x, Duck([1.0, 2.0, 3.0, 4.0]))
    # NumPy hands the call to the duck array once mdarray returned NotImplemented.
    assert got[0] == "duck"


@pytest.mark.parametrize(
    "call",
    [
        np.add,
        lambda x, d: x + d,
        lambda x, d: d + x,
        lambda x, d: np.multiply(d, x),
        lambda x, d: np.add(x, 1.0, out=(d,)),
    ],
)
def test_ufuncs_defer_to_another_librarys_array(call):
    x = _dist([1.0, 2.0, 3.0, 4.0])
    assert call(x, Duck([1.0, 2.0, 3.0, 4.0]))[0] == "duck"


def test_operators_defer_to_array_ufunc_none():
    x = _dist([1.0, 2.0])
    assert x + Refuses() == "refuses.__radd__"
    with pytest.raises(TypeError):
        np.add(x, Refuses())


def test_verdicts():
    assert verdict([mdarray.DistArray, np.ndarray], "__array_function__") is None
    assert verdict([np.memmap, np.float32], "__array_ufunc__") is None  # stores, no meaning
    assert verdict([np.ma.MaskedArray], "__array_function__") == HOST
    assert verdict([np.matrix, Duck], "__array_ufunc__") == DEFER
    assert verdict([Refuses], "__array_ufunc__") == DEFER


# NumPy array subclasses of their own meaning ---------------------------------------------

MASKED = np.ma.array([1.0, 2.0, 3.0, 4.0], mask=[0, 0, 1, 0])


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("x * m", lambda x, m: x * m),
        ("m * x", lambda x, m: m * x),
        ("x + m", lambda x, m: x + m),
        ("np.add(x, m)", np.add),
        ("np.add(m, x)", lambda x, m: np.add(m, x)),
        ("sum(x * m)", lambda x, m: np.sum(x * m)),
        ("x == m", lambda x, m: x == m),
        ("maximum.reduce", lambda x, m: np.maximum.reduce([x, m])),
        ("concatenate", lambda x, m: np.concatenate([x, m])),
        ("where", lambda x, m: np.where(x > 1, x, m)),
        ("dot", np.dot),
    ],
)
def test_masked_operands_give_numpys_answer(name, call):
    data = np.array([1.0, 5.0, 2.0, 4.0])
    want = call(data, MASKED.copy())
    with mdarray.options(fallback="allow"):
        got = call(_dist(data), MASKED.copy())
    assert type(got) is type(want)
    # The values under a mask are unspecified (NumPy's operators and ufuncs differ there).
    np.testing.assert_array_equal(np.ma.filled(got, -1), np.ma.filled(want, -1))
    np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))


def test_masked_operand_is_a_fallback_under_the_policy():
    # Through a ufunc, mdarray gathers x (the operators leave it to the masked array's
    # own, which reads x through __array__, as it reads any array-like).
    x = _dist([1.0, 5.0, 2.0, 4.0])
    with mdarray.options(fallback="raise"), pytest.raises(TypeError, match=r"numpy\.multiply"):
        np.multiply(x, MASKED)
    with pytest.warns(mdarray.PerformanceWarning, match=r"numpy\.multiply"):
        np.multiply(x, MASKED)


def test_masked_in_place_writes_the_distarray():
    data = np.array([1.0, 5.0, 2.0, 4.0])
    x = _dist(data)
    with mdarray.options(fallback="allow"):
        x += MASKED
    data += MASKED
    assert type(x) is mdarray.DistArray
    np.testing.assert_array_equal(x.get(), data)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix's own
def test_matrix_operand_gives_numpys_answer():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    m = np.matrix([[0.0, 1.0], [1.0, 0.0]])
    with mdarray.options(fallback="allow"):
        got = _dist(a) * m
    assert type(got) is np.matrix
    np.testing.assert_array_equal(got, a * m)


# Conversion of array-likes -------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("where other", lambda np_, x: np_.where(x > 1, x, [1, 5, 2, 4])),
        ("where condition", lambda np_, x: np_.where([True, False, True, False], x, 0)),
        ("where row", lambda np_, x: np_.where(x.reshape(2, 2) > 1, x.reshape(2, 2), [7, 8])),
        ("add", lambda np_, x: np_.add(x, [1, 5, 2, 4])),
        ("tuple", lambda np_, x: x * (1, 5, 2, 4)),
    ],
)
def test_list_operands_broadcast_as_numpy(name, call):
    data = np.array([1.0, 5.0, 2.0, 4.0])
    want = call(np, data)
    with mdarray.options(fallback="raise"):
        got = call(np, _dist(data))
    np.testing.assert_array_equal(got.get(), want)
    assert got.dtype == want.dtype


@pytest.mark.parametrize("b", [[1, 2], [[1, 0], [0, 1]]])
def test_solve_takes_lists(b):
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    with mdarray.options(fallback="allow"):
        got = np.linalg.solve(_dist(a), b)
    np.testing.assert_allclose(got.get(), np.linalg.solve(a, b))


@numpy_dtypes_only
@pytest.mark.parametrize(
    "obj",
    [object(), None, "text", (i for i in range(3)), {"a": 1}, [None, 1]],
    ids=["object", "None", "str", "generator", "dict", "list of objects"],
)
def test_asarray_of_any_object_is_numpys(obj):
    """As a NumPy array, any object is NumPy's (the cpu backend holds every dtype); as
    Python data that NumPy holds as objects or strings, the namespace refuses it, as the
    array API's namespaces do (`test_creation_api`), unless dtype= asks for it."""
    want = np.asarray(obj)
    with pytest.raises(TypeError, match="array API's data types"):
        mdarray.asarray(obj)
    got = mdarray.asarray(want)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    if want.dtype.kind != "O":
        np.testing.assert_array_equal(got.get(), want)
    else:
        assert [type(v) for v in got.get().flat] == [type(v) for v in want.flat]


@numpy_dtypes_only
def test_structured_compare_is_numpys():
    s = np.array([(1, 2.0), (0, 0.0), (1, 2.0)], dtype=[("a", "i4"), ("b", "f8")])
    x = _dist(s)
    for other in (s, s[0], s[:1], np.array([(1, 2.0)], dtype=[("a", "i8"), ("b", "f4")])):
        for op in (operator.eq, operator.ne):
            np.testing.assert_array_equal(op(x, other).get(), op(s, other))
            np.testing.assert_array_equal(op(x, _dist(other)).get(), op(s, other))
    for bad in (1, (1, 2.0), np.array([(1, 2.0)], dtype=[("c", "i4"), ("b", "f8")])):
        with pytest.raises(TypeError) as numpy_error:
            s == bad  # noqa: B015
        with pytest.raises(TypeError, match=str(numpy_error.value)[:20]):
            x == bad  # noqa: B015


_OPERANDS = [
    True,
    3,
    2**40,
    1.5,
    1j,
    np.float32(2),
    np.float64(2),
    np.int8(1),
    np.complex128(1),
    np.arange(3, dtype=np.int8),
    np.ones((2, 1), np.float32),
    np.zeros((1, 3), np.uint16),
    np.array(5, np.int64),
    [1, 2, 3],
    [[1.5], [2.5]],
    "dist int16",
    "dist float32",
]


def _operand(spec):
    """The operand (a DistArray for a "dist" spec) and its NumPy value."""
    if isinstance(spec, str):
        value = np.arange(6, dtype=spec.split()[1]).reshape(2, 3)
        return _dist(value), value
    return spec, spec


@numpy_dtypes_only
@pytest.mark.parametrize("third", _OPERANDS, ids=repr)
@pytest.mark.parametrize("second", _OPERANDS, ids=repr)
def test_stand_ins_give_numpys_dtypes_and_errors(second, third):
    """`stand_in`: NumPy's result dtype, broadcasting and cast checks on the stand-ins are
    those on the operands' values (Python scalars weak, an int's range checked)."""
    (b, b_value), (c, c_value) = _operand(second), _operand(third)
    condition = np.array([True, False, True])
    for fn, operands, values in (
        (np.where, (condition, b, c), (condition, b_value, c_value)),
        (np.add, (b, c), (b_value, c_value)),
        (np.multiply, (c, b), (c_value, b_value)),
    ):
        stand_ins = [stand_in(x) for x in operands]
        try:
            want = fn(*values).dtype
        except (TypeError, ValueError, OverflowError) as error:
            with pytest.raises(type(error)):
                fn(*stand_ins)
            continue
        assert fn(*stand_ins).dtype == want
    for casting in ("safe", "same_kind", "unsafe"):
        dst = np.zeros(np.broadcast_shapes(np.shape(b_value), (2, 3)), np.float32)
        with warnings.catch_warnings(record=True) as want_warned:
            warnings.simplefilter("always")
            try:
                np.copyto(dst, b_value, casting=casting)
            except (TypeError, ValueError, OverflowError) as error:
                with pytest.raises(type(error)):
                    np.copyto(stand_in(dst, one=True), stand_in(b, one=True), casting=casting)
                continue
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            np.copyto(stand_in(dst, one=True), stand_in(b, one=True), casting=casting)
        assert [w.category for w in warned] == [w.category for w in want_warned]


def test_stand_in_shapes():
    x = _dist(np.ones((4, 1, 3)))
    assert stand_in(x).shape == (0, 1, 0)
    assert stand_in(x, one=True).shape == (1, 1, 1)
    assert stand_in(x).dtype == x.dtype
    assert stand_in([[1, 2]]).shape == (1, 0)
    assert stand_in(np.float32(1)).shape == ()
    for scalar in (True, 2, 2.5, 1j):
        assert stand_in(scalar) is scalar
