"""Each row of the mode rule table checked as an identity over drawn partial copies.

The partial operands hold arbitrary copies (not one value and identities), drawn over the
whole range of integer dtypes (so wrapping is exercised) and with infinities for floats;
the REPLICA operand satisfies the row's condition. The op must keep the row's mode, move
no data, and give NumPy's value of the combined operands.
"""

import numpy as np
import pytest
from _backend_facts import ON_CUDA
from _layouts import devices, spread
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import mdarray
from mdarray import Layout
from mdarray._array.array import DistArray, wrap
from mdarray._backends.backend import backend as default_backend_object
from mdarray._core.mode_rules import (
    IDEMPOTENT,
    REDUCTION_MODES,
    REORDERABLE,
    RULES,
    R,
    keeps_mode,
    reduction_mode,
)
from mdarray._storage.chunks import Chunks
from mdarray.testing import assert_dist_equal, strategies as mst

DTYPES = {
    "b": ["bool"],
    "i": ["int8", "int32"],
    "u": ["uint8"],
    "f": ["float32", "float64"],
    "c": ["complex128"],
}
CONDITIONS = {
    None: lambda v: True,
    "finite": np.isfinite,
    "finite positive": lambda v: np.isfinite(v) and v > 0,
    "finite negative": lambda v: np.isfinite(v) and v < 0,
}


def copy_elements(dtype):
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(int(info.min), int(info.max))
    small = st.integers(-8, 8).map(float)
    if dtype.kind == "f":
        # the extremes: a row must hold where copies overflow and where their value does
        big = float(np.finfo(dtype).max)
        return st.one_of(small, small, small, st.sampled_from([np.inf, -np.inf, big, -big]))
    return st.builds(complex, small, small)


@st.composite
def partial_arrays(draw, mode, dtype, layout):
    """A DistArray in `mode` whose chunks hold arbitrary copies."""
    backend = default_backend_object()
    data = [
        backend.from_host(draw(hnp.arrays(dtype, shape, elements=copy_elements(dtype))), device)
        for shape, device in zip(layout.chunk_shapes, layout.chunk_devices)
    ]
    return wrap(Chunks.of(layout, data, backend, dtype), mode)


def scalar_values(dtype):
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind == "u":
        return st.integers(0, 9)
    if dtype.kind == "i":
        return st.integers(-9, 9)
    values = st.sampled_from(
        [-3.0, -1.5, -0.5, 0.0, 0.25, 0.5, 1.0, 2.0, 2.5, 4.0, np.inf, -np.inf, np.nan]
    )
    return values if dtype.kind == "f" else values.map(complex)


@st.composite
def replica_operands(draw, rule, dtype, layout):
    """A REPLICA operand meeting the row's condition: a Python or NumPy scalar, or (where
    the dtype proves the condition) a NumPy array or a DistArray: of the partial operand's
    layout if of its shape (else the result would take this operand's layout, per the
    layout rule, and the partial operand would need moving), else of any layout."""
    shape = layout.shape
    array_ok = rule.condition is None or (rule.condition == "finite" and dtype.kind in "biu")
    kind = draw(st.sampled_from(["python", "numpy"] + ["dist", "array"] * array_ok))
    if kind in ("dist", "array"):
        sub_shape = shape[draw(st.integers(0, len(shape))) :]
        value = draw(hnp.arrays(dtype, sub_shape, elements=scalar_values(dtype)))
        if kind == "array":
            return value
        own = layout if sub_shape == shape else draw(mst.layouts(sub_shape))
        return mdarray.distributed_array(value, own)
    value = draw(scalar_values(dtype).filter(CONDITIONS[rule.condition]))
    return dtype.type(value) if kind == "numpy" else value


def rule_id(r) -> str:
    return f"{r.ufunc.__name__}({','.join(str(m) for m in r.operands)})->{r.result}" + (
        f"[{r.condition}]" if r.condition else ""
    )


#: The float rows with a partial operand.
FLOAT_PARTIAL_ROWS = [r for r in RULES if "f" in r.kinds and any(m.is_partial for m in r.operands)]


def value_of(x):
    return x.get() if isinstance(x, DistArray) else x


@pytest.mark.parametrize(
    "rule",
    RULES,
    ids=rule_id,
)
@settings(max_examples=15)
@given(data=st.data())
def test_rule_holds(rule, data):
    dtype = np.dtype(data.draw(st.sampled_from([d for k in rule.kinds for d in DTYPES[k]])))
    shape = data.draw(mst.shapes(max_dims=2, max_side=4))
    layout = data.draw(mst.layouts(shape))
    operands = [
        data.draw(replica_operands(rule, dtype, layout))
        if mode is R
        else data.draw(partial_arrays(mode, dtype, layout))
        for mode in rule.operands
    ]
    with np.errstate(all="ignore"):  # infinities meet in the copies, as in the values
        check_rule(rule, operands, layout, dtype)


def check_rule(rule, operands, layout, dtype):
    want = rule.ufunc(*map(value_of, operands))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = rule.ufunc(*operands)
    assert got.mode is rule.result
    assert got.layout == layout
    assert got.dtype == dtype
    replicas = [x for x, mode in zip(operands, rule.operands) if mode is R]
    if not any(isinstance(x, (DistArray, np.ndarray)) for x in replicas):
        assert moved.total == 0
    if dtype.kind in "fc":
        rtol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got.get(), want, rtol=rtol, atol=1e-6, equal_nan=True)
    else:
        assert_dist_equal(got, want)


def sum_array(value, layout=None, mode="sum"):
    value = np.asarray(value)
    layout = layout or Layout(value.shape, spread({0: (), 1: ()}))
    return mdarray.distributed_array(value, layout, mode)


VALUE = np.array([[1.0, -2.0, 3.0], [0.0, 5.0, -6.0]])
OTHER = Layout.block((2, 3), axis=1, devices=devices(2, 3))
UNPROVEN = {
    "sum * inf": lambda: sum_array(VALUE) * np.inf,
    "sum * float array": lambda: sum_array(VALUE) * sum_array(VALUE, mode="replica"),
    "sum / 0": lambda: sum_array(VALUE) / 0.0,
    "sum * 0.5": lambda: sum_array(VALUE) * 0.5,
    "sum / 2": lambda: sum_array(VALUE) / 2.0,
    "sum + scalar": lambda: sum_array(VALUE) + 1,
    "sum * sum": lambda: sum_array(VALUE) * sum_array(VALUE),
    "sum + sum, other layouts": lambda: sum_array(VALUE) + sum_array(VALUE, OTHER),
    "int8 sum + int16 sum": lambda: (
        sum_array(VALUE.astype(np.int8)) + sum_array(VALUE.astype(np.int16))
    ),
    "prod * 2": lambda: sum_array(VALUE, mode="prod") * 2,
    "max int + 1": lambda: sum_array(VALUE.astype(np.int32), mode="max") + 1,
    "max + inf": lambda: sum_array(VALUE, mode="max") + np.inf,
    "max * 0": lambda: sum_array(VALUE, mode="max") * 0.0,
    "max * float array": lambda: sum_array(VALUE, mode="max") * np.full((2, 3), 2.0),
    "-max int": lambda: -sum_array(VALUE.astype(np.int8), mode="max"),
    "max - max": lambda: sum_array(VALUE, mode="max") - sum_array(VALUE, mode="max"),
    "where": lambda: np.negative(sum_array(VALUE), where=True, out=mdarray.zeros((2, 3))),
    "sqrt(sum)": lambda: np.sqrt(sum_array(np.abs(VALUE))),
}


@pytest.mark.parametrize("case", sorted(UNPROVEN))
def test_unproven_ops_convert_to_replica(case):
    """Outside the table (or its conditions) the operands become REPLICA first: the
    result is REPLICA and right."""
    with mdarray.options(fallback="raise"), np.errstate(all="ignore"):
        got = UNPROVEN[case]()
    assert got.mode is mdarray.REPLICA


def test_unproven_values():
    x = sum_array(VALUE)
    with mdarray.options(fallback="raise"), np.errstate(all="ignore"):
        assert_dist_equal(x * np.inf, VALUE * np.inf)
        assert_dist_equal(x + 1, VALUE + 1)
        assert_dist_equal(x / 0.0, VALUE / 0.0)
        y = sum_array(VALUE.astype(np.int8), mode="max")
        assert_dist_equal(-y, -VALUE.astype(np.int8))


def test_in_place_rules_keep_the_partial_mode():
    x = sum_array(VALUE)
    chunks = x.storage.buffers
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        x *= 2
        x += sum_array(VALUE)
        x -= 1  # not in the table: x becomes REPLICA values written back in SUM mode
    assert moved.total > 0
    assert x.mode is mdarray.SUM
    assert all(a is b for a, b in zip(x.storage.buffers, chunks))
    assert_dist_equal(x, VALUE * 3 - 1)


# Reduction rows ---------------------------------------------------------------------

REDUCTION_DTYPES = {
    "b": ["bool"],
    "i": ["int8", "int64"],
    "u": ["uint16"],
    "f": ["float32", "float64"],
    "c": ["complex64"],
}


def reduction_elements(dtype):
    """Every value of integer and bool dtypes (wrapping included); for floats small
    integers (sums stay exact, so the identity is checked exactly) with infinities and NaN
    where the ufunc orders values."""
    if dtype.kind in "biu":
        return copy_elements(dtype)
    small = st.integers(-8, 8).map(float)
    if dtype.kind == "c":
        return st.builds(complex, small, small)
    return st.one_of(small, small, st.sampled_from([np.inf, -np.inf, np.nan]))


@pytest.mark.parametrize(
    "ufunc", sorted(REDUCTION_MODES, key=lambda u: u.__name__), ids=lambda u: u.__name__
)
@settings(max_examples=25)
@given(data=st.data())
def test_reduction_row_holds(ufunc, data):
    """``ufunc.reduce(p ++ q) == combine(ufunc.reduce(p), ufunc.reduce(q))``, the row's
    mode combining, for every dtype of the row's kinds: a reduction split over chunks is a
    partial result in that mode."""
    mode, kinds = REDUCTION_MODES[ufunc]
    dtype = np.dtype(data.draw(st.sampled_from([d for k in kinds for d in REDUCTION_DTYPES[k]])))
    if dtype.kind in "fc" and ufunc in (np.add, np.multiply):
        # Small integers keep every partial sum and product exact, as integer rows are
        # (floats hold these rows up to rounding, like every partial mode).
        small = st.integers(-2, 2).map(float)
        elements = small if dtype.kind == "f" else st.builds(complex, small, small)
    else:
        elements = reduction_elements(dtype)
    p, q = (
        data.draw(hnp.arrays(dtype, data.draw(st.integers(1, 6)), elements=elements))
        for _ in range(2)
    )
    assert reduction_mode(ufunc, dtype) is mode
    with np.errstate(all="ignore"):
        whole = ufunc.reduce(np.concatenate([p, q]), dtype=dtype)
        parts = mode.ufunc(np)(ufunc.reduce(p, dtype=dtype), ufunc.reduce(q, dtype=dtype))
    np.testing.assert_array_equal(whole, parts)


@pytest.mark.parametrize(
    "ufunc", sorted(IDEMPOTENT, key=lambda u: u.__name__), ids=lambda u: u.__name__
)
@given(data=st.data())
def test_idempotent_rows_hold(ufunc, data):
    """``ufunc(a, a) == a``: overlapping copies may all contribute to the reduction."""
    dtype = np.dtype(data.draw(st.sampled_from(["bool", "int8", "uint32", "float64"])))
    if dtype.kind == "f" and ufunc in (np.bitwise_and, np.bitwise_or):
        dtype = np.dtype(np.int16)
    a = data.draw(hnp.arrays(dtype, 5, elements=reduction_elements(dtype)))
    got = ufunc(a, a)
    want = a.astype(bool) if ufunc in (np.logical_and, np.logical_or) else a
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "ufunc", sorted(REORDERABLE, key=lambda u: u.__name__), ids=lambda u: u.__name__
)
@given(data=st.data())
def test_reorderable_rows_hold(ufunc, data):
    """Associative and commutative (exactly, on integers and bools): partial results may
    combine in any order."""
    dtype = np.dtype(data.draw(st.sampled_from(["bool", "int8", "uint64"])))
    a, b, c = (data.draw(reduction_elements(dtype)) for _ in range(3))
    a, b, c = (np.array(v, dtype)[()] for v in (a, b, c))
    with np.errstate(all="ignore"):
        assert ufunc(a, b) == ufunc(b, a)
        assert ufunc(ufunc(a, b), c) == ufunc(a, ufunc(b, c))


# The cast rule ------------------------------------------------------------------------


@pytest.mark.parametrize("stat", [np.mean, np.var, np.std])
def test_statistics_cast_by_the_one_cast_rule(stat):
    """mean/var/std of float16 compute in float32, then cast: by the same rule as
    ``astype`` (a SUM partial of float32 cast to float16 is combined first: float casts of
    partial copies do not commute with adding them)."""
    value = np.arange(24, dtype=np.float16).reshape(4, 6)
    x = mdarray.distributed_array(value, Layout.block((4, 6), devices=devices(0, 1)))
    with mdarray.options(fallback="raise"):
        got = stat(x, axis=0)
        partial = np.sum(x, axis=0, dtype=np.float32)
    assert got.mode is partial.astype(np.float16).mode
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.get(), stat(value, axis=0), rtol=1e-3)


def test_float_casts_of_partial_sums_are_not_in_the_rule():
    """The counterexample that keeps float casts out: the SUM copies 1e300 and -1e300
    (value 0) cast to float32 give inf + -inf."""
    assert not keeps_mode(mdarray.SUM, np.float64, np.float32)
    x = sum_array(np.array([0.0]), Layout((1,), spread({0: (), 1: ()})))
    copies = [np.array([1e300]), np.array([-1e300])]
    backend = default_backend_object()
    layout = x.layout
    x = wrap(
        Chunks.of(
            layout,
            [backend.from_host(c, d) for c, d in zip(copies * 2, layout.chunk_devices)],
            backend,
        ),
        mdarray.SUM,
    )
    if len(layout.chunks) == 2:
        with mdarray.options(fallback="raise"):
            assert_dist_equal(x.astype(np.float32), np.array([0.0], np.float32))


def partial_of(copies, mode, dtype):
    """A DistArray of two chunks holding `copies` (two 1-D arrays) in `mode`."""
    layout = Layout((len(copies[0]),), spread({0: (), 1: ()}))
    backend = default_backend_object()
    buffers = [
        backend.from_host(np.array(c, dtype), d) for c, d in zip(copies, layout.chunk_devices)
    ]
    return wrap(Chunks.of(layout, buffers, backend, np.dtype(dtype)), mode)


def apply_row(rule, data, dtype, partial):
    """``(got, want)`` of `rule` on `partial(mode)` operands and a drawn REPLICA scalar
    meeting the row's condition."""
    operands = [
        data.draw(scalar_values(dtype).filter(CONDITIONS[rule.condition]).map(dtype.type))
        if mode is R
        else partial(mode)
        for mode in rule.operands
    ]
    with np.errstate(all="ignore"):
        want = rule.ufunc(*map(value_of, operands))
        with mdarray.options(fallback="raise"):
            got = rule.ufunc(*operands)
    assert got.mode is rule.result
    return got, want


@pytest.mark.parametrize(
    "rule",
    FLOAT_PARTIAL_ROWS,
    ids=rule_id,
)
@settings(max_examples=10)
@given(data=st.data())
def test_float_rows_hold_where_copies_are_huge(rule, data):
    """Copies near the dtype's range (``big`` and ``-big`` hold the value 0 in SUM mode):
    a row may not overflow a copy where the value does not (``(big, -big) * 2`` would
    give ``inf - inf``)."""
    dtype = np.dtype(data.draw(st.sampled_from(["float32", "float64"])))
    big = np.finfo(dtype).max / 2

    def partial(mode):
        copies = {
            "sum": (big, -big),
            "prod": (big, 1 / big),
            "max": (big, -big),
            "min": (-big, big),
        }[mode.name]
        return partial_of([[c, c / 4] for c in copies], mode, dtype)

    got, want = apply_row(rule, data, dtype, partial)
    np.testing.assert_allclose(got.get(), want, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize(
    "rule",
    FLOAT_PARTIAL_ROWS,
    ids=rule_id,
)
@settings(max_examples=10)
@given(data=st.data())
def test_float_rows_round_as_the_combined_value_does(rule, data):
    """Copies with full mantissas: a row kept partial gives, bit for bit, the op of the
    combined value (a SUM scaled copy by copy by a non-power of two would not:
    ``(a + b) / 5`` and ``a / 5 + b / 5`` differ in the last bit)."""
    dtype = np.dtype(data.draw(st.sampled_from(["float32", "float64"])))
    mantissas = st.floats(-1e3, 1e3, allow_nan=False, width=8 * dtype.itemsize)
    if ON_CUDA:  # CuPy gave 0 for a subnormal float32 quotient (an H100); NumPy keeps it
        mantissas = mantissas.filter(lambda v: v == 0 or abs(v) > 1e-30)

    def partial(mode):
        return partial_of(
            [data.draw(st.lists(mantissas, min_size=3, max_size=3)) for _ in "ab"], mode, dtype
        )

    got, want = apply_row(rule, data, dtype, partial)
    np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize(
    "rule",
    [
        r
        for r in RULES
        if "f" in r.kinds
        and any(m.is_partial for m in r.operands)
        and not {m.name for m in r.operands} & {"max", "min"}
    ],
    ids=rule_id,
)
@settings(max_examples=10)
@given(data=st.data())
def test_float_rows_keep_signed_zeros(rule, data):
    """Zeros keep NumPy's sign through every float SUM and PROD row: copies that cancel
    (``1`` and ``-1`` hold ``+0.0``; negated, the value is ``-0.0`` while ``-1 + 1`` is
    ``+0.0`` again) and a ``-0.0`` held beside identity copies. (Which zero a tie of
    ``-0.0`` and ``+0.0`` gives in MAX and MIN is unspecified, as in IEEE 754.)"""
    dtype = np.dtype(data.draw(st.sampled_from(["float32", "float64"])))
    copies = {
        "sum": ([1.0, -0.0, 0.0], [-1.0, -0.0, -0.0]),
        "prod": ([1.0, -0.0, 0.0], [1.0, 1.0, -1.0]),
    }
    got, want = apply_row(
        rule, data, dtype, lambda mode: partial_of(copies[mode.name], mode, dtype)
    )
    value = got.get()
    np.testing.assert_array_equal(value, want)
    np.testing.assert_array_equal(np.signbit(value), np.signbit(want), "signs of zeros")


@pytest.mark.parametrize(
    "op",
    [np.negative, lambda x: x * -0.5, lambda x: x / -2, lambda x: -1 * x, np.conjugate],
    ids=["negative", "times -0.5", "over -2", "-1 times", "conjugate"],
)
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_sign_flips_of_cancelling_copies_give_negative_zero(op, dtype):
    """Copies 1 and -1 hold +0.0; the value negated is -0.0, while the copies negated
    (-1 and 1) would sum to +0.0 again: the flip runs on the combined value, so the result
    is the op on the value as one replicated array (NumPy's on cpu; CuPy's complex division
    signs zeros its own way)."""
    copies = [[c * (1 + 1j) if dtype == "complex128" else c] for c in (1, -1)]
    x = partial_of(copies, mdarray.SUM, dtype)
    want = op(mdarray.asarray(x.get())).get()
    with mdarray.options(fallback="raise"):
        got = op(x).get()
    for part in (np.real, np.imag):
        np.testing.assert_array_equal(np.signbit(part(got)), np.signbit(part(want)))


def test_scaling_a_complex_sum_keeps_signed_zeros():
    """(-0-0j) * (1+0j) is 0-0j: scaled copy by copy, an identity copy would stop being
    neutral and -0+5j would read back 0+5j."""
    layout = Layout((1,), spread({0: (), 1: ()}))
    x = mdarray.distributed_array(np.array([complex(-0.0, 5.0)]), layout, mdarray.SUM)
    for op in (lambda v: v * 1, lambda v: v / 1, lambda v: v * 0.5):
        want = op(np.array([complex(-0.0, 5.0)]))
        with mdarray.options(fallback="raise"):
            got = op(x).get()
        np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))
