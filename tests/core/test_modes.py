"""Modes: names, identities per dtype, and the dtypes each mode can hold."""

import pickle

import numpy as np
import pytest
from hypothesis import given, strategies as st

import mdarray
from mdarray import MAX, MIN, PROD, REPLICA, SUM, Mode
from mdarray.testing import strategies as mst

D = mdarray.devices()

PARTIAL = [SUM, PROD, MAX, MIN]


@pytest.mark.parametrize("mode", [REPLICA, *PARTIAL])
def test_names_round_trip(mode):
    assert isinstance(mode, Mode)
    assert mdarray.as_mode(str(mode)) is mode
    assert mdarray.as_mode(str(mode).upper()) is mode
    assert mdarray.as_mode(mode) is mode
    assert eval(repr(mode), {"mdarray": mdarray}) is mode
    assert pickle.loads(pickle.dumps(mode)) is mode
    assert mode.is_partial == (mode is not REPLICA)
    assert mode.idempotent == (mode in (REPLICA, MAX, MIN))


def test_str_is_the_name():
    assert [str(m) for m in (REPLICA, SUM, PROD, MAX, MIN)] == [
        "replica",
        "sum",
        "prod",
        "max",
        "min",
    ]


@pytest.mark.parametrize("bad", ["mean", "", None, 1, SUM.ufunc_name])
def test_unknown_modes(bad):
    with pytest.raises(ValueError, match="unknown mode"):
        mdarray.as_mode(bad)


@given(mst.dtypes(), st.data())
def test_identity_is_neutral(dtype, data):
    mode = data.draw(mst.modes(dtype))
    if not mode.is_partial:
        with pytest.raises(TypeError):
            mode.identity(dtype)
        return
    identity = mode.identity(dtype)
    assert np.asarray(identity).dtype == dtype
    values = np.array([0, 1, 5], dtype=dtype)
    if dtype.kind in "fc":
        # IEEE's edges: signed zeros, infinities and NaN must come through unchanged.
        edges = [-0.0, np.inf, -np.inf, np.nan]
        if dtype.kind == "c":
            edges += [complex(np.inf, 0.0), complex(-0.0, -0.0), complex(0.0, np.inf)]
        values = np.concatenate([values, np.array(edges, dtype=dtype)])
    combine = mode.ufunc(np, dtype)
    with np.errstate(invalid="ignore"):
        combined = [combine(values, identity), combine(identity, values)]
    for got in combined:
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, values)
        np.testing.assert_array_equal(np.signbit(np.real(got)), np.signbit(np.real(values)))
        np.testing.assert_array_equal(np.signbit(np.imag(got)), np.signbit(np.imag(values)))


@pytest.mark.parametrize(
    ("dtype", "mode", "expected"),
    [
        (np.bool_, SUM, False),
        (np.bool_, PROD, True),
        (np.bool_, MAX, False),
        (np.bool_, MIN, True),
        (np.int8, MAX, -128),
        (np.int8, MIN, 127),
        (np.uint16, MAX, 0),
        (np.uint16, MIN, 65535),
        (np.int64, PROD, 1),
        (np.float32, MAX, -np.inf),
        (np.float64, MIN, np.inf),
        (np.float32, SUM, -0.0),
        (np.complex64, SUM, 0),
        (np.complex128, PROD, 1),
    ],
)
def test_identities(dtype, mode, expected):
    identity = mode.identity(dtype)
    assert identity.dtype == np.dtype(dtype)
    assert identity == expected


@pytest.mark.parametrize("mode", [MAX, MIN])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_max_min_on_complex_raise(mode, dtype):
    with pytest.raises(TypeError, match="complex"):
        mode.identity(dtype)
    with pytest.raises(TypeError, match="complex"):
        mode.check_dtype(dtype)


@pytest.mark.parametrize("mode", PARTIAL)
@pytest.mark.parametrize("dtype", ["U3", "O", "M8[s]"])
def test_partial_modes_need_numbers(mode, dtype):
    with pytest.raises(TypeError, match="numeric"):
        mode.check_dtype(dtype)


def test_replica_holds_any_dtype():
    REPLICA.check_dtype("U3")


def test_sum_identity_is_negative_zero():
    """-0.0 + v is v for every float v; +0.0 + -0.0 is +0.0, so a SUM holding -0.0 would
    read back +0.0 (and 1 / x would be +inf)."""
    assert np.signbit(SUM.identity(np.float64))
    assert np.signbit(np.real(SUM.identity(np.complex64)))
    assert np.signbit(np.imag(SUM.identity(np.complex64)))
    x = mdarray.distributed_array(np.array([-0.0, 1.0]), {D[0]: [(), ()]}, "sum")
    assert np.signbit(x.get()[0])
    assert np.signbit(x.change_mode("replica").get()[0])


def test_complex_prod_keeps_infinities_and_signed_zeros():
    """``(1+0j) * (inf+0j)`` is ``inf+nanj``: combining skips identity copies. ``1-0j``
    equals the identity ``1+0j`` but is a value: its sign survives."""
    value = np.array([complex(np.inf, 0.0), 2 + 1j, complex(0.0, np.inf), complex(1, -0.0)])
    x = mdarray.distributed_array(value, {D[0]: [(), ()]}, "prod")
    with np.errstate(invalid="ignore"):
        for got in (x.get(), x.change_mode("replica").get(), x.reshard({D[0]: [(), (), ()]}).get()):
            np.testing.assert_array_equal(got, value)
            np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(value.imag))
