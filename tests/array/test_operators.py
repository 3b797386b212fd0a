"""Python operators go through ``__array_ufunc__`` (NDArrayOperatorsMixin), in-place ones
writing every replica in place."""

import operator

import numpy as np
import pytest
from _backend_facts import raised_by_backend, ulps
from _layouts import devices, dist_pairs, spread
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray import Layout
from mdarray.testing import (
    assert_chunks_hold,
    assert_dist_allclose,
    assert_dist_equal,
    strategies as mst,
)

BINARY = [
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.pow,
    operator.and_,
    operator.or_,
    operator.xor,
    operator.lshift,
    operator.rshift,
    operator.eq,
    operator.ne,
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
]
IN_PLACE = {
    operator.add: operator.iadd,
    operator.sub: operator.isub,
    operator.mul: operator.imul,
    operator.truediv: operator.itruediv,
    operator.floordiv: operator.ifloordiv,
    operator.mod: operator.imod,
    operator.pow: operator.ipow,
    operator.and_: operator.iand,
    operator.or_: operator.ior,
    operator.xor: operator.ixor,
    operator.lshift: operator.ilshift,
    operator.rshift: operator.irshift,
}
UNARY = [operator.neg, operator.pos, operator.abs, operator.invert]


def outcome(func, *args):
    with np.errstate(all="ignore"):
        try:
            return func(*args), None
        except Exception as error:
            return None, error


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@settings(max_examples=15)
@given(data=st.data())
def test_binary_operators(op, data):
    dtype = data.draw(mst.dtypes(complex_=False))
    x, a = data.draw(dist_pairs(dtype=dtype, max_blocks=3))
    other = data.draw(st.sampled_from(["same", "dist", "numpy", "scalar"]))
    if other == "same":
        y, b = x, a
    elif other == "dist":
        y, b = data.draw(dist_pairs(shape=x.shape[1:], dtype=dtype))
    elif other == "numpy":
        y = b = a[..., :1] if a.ndim else a
    else:
        y = b = data.draw(st.integers(0, 3))
    reflected = data.draw(st.booleans())
    args, values = ((y, x), (b, a)) if reflected else ((x, y), (a, b))
    # ndarray's ``a ** 2`` takes a fast path through ``square`` (bool ** 2 is int8, not
    # np.power's int64); the mixin's ``**`` is ``np.power``, the ufunc compared with.
    reference = np.power if op is operator.pow else op
    want, error = outcome(reference, *values)
    with mdarray.options(fallback="raise"), np.errstate(all="ignore"):
        if error is not None:
            if not raised_by_backend(error):
                return
            with pytest.raises(type(error)):
                op(*args)
            return
        got = op(*args)
    want = np.asarray(want)
    if ulps(want.dtype)["rtol"]:
        assert_dist_allclose(got, want, **ulps(want.dtype))
    else:
        assert_dist_equal(got, want)


@pytest.mark.parametrize("op", UNARY, ids=lambda f: f.__name__)
@given(pair=dist_pairs())
@settings(max_examples=15)
def test_unary_operators(op, pair):
    x, a = pair
    want, error = outcome(op, a)
    with mdarray.options(fallback="raise"), np.errstate(all="ignore"):
        if error is not None:
            if not raised_by_backend(error):
                return
            with pytest.raises(type(error)):
                op(x)
            return
        got = op(x)
    want = np.asarray(want)
    if ulps(want.dtype)["rtol"]:
        # CUDA's abs of a complex (a hypot) may round 1 ulp from NumPy's.
        assert_dist_allclose(got, want, **ulps(want.dtype))
    else:
        assert_dist_equal(got, want)


@pytest.mark.parametrize("op", sorted(IN_PLACE, key=lambda f: f.__name__), ids=lambda f: f.__name__)
@settings(max_examples=12)
@given(data=st.data())
def test_in_place_operators_write_every_replica(op, data):
    dtype = data.draw(mst.dtypes(complex_=False))
    x, a = data.draw(dist_pairs(dtype=dtype, mode=mdarray.REPLICA))
    y, b = data.draw(dist_pairs(shape=x.shape, dtype=data.draw(mst.dtypes(complex_=False))))
    layout, view = x.layout, x[...]
    expected = a.copy()
    want, error = outcome(IN_PLACE[op], expected, b)
    with mdarray.options(fallback="raise"), np.errstate(all="ignore"):
        if error is not None:
            if not raised_by_backend(error):
                return
            with pytest.raises(type(error)):
                IN_PLACE[op](x, y)
            assert_chunks_hold(x, a)  # nothing written
            return
        result = IN_PLACE[op](x, y)
    assert result is x
    assert x.layout == layout
    assert_chunks_hold(view, x.get())  # a view of x sees the write
    if ulps(want.dtype)["rtol"]:
        # CUDA: CuPy's math library rounds some results differently from NumPy's (pow by
        # an ulp): NumPy's value within ulps, and every replica holding the same value.
        assert_dist_allclose(x, want, **ulps(want.dtype))
        assert_chunks_hold(x, x.get())
    else:
        assert_chunks_hold(x, want)


def test_in_place_on_a_partial_array_keeps_its_mode():
    layout = Layout((4,), spread({0: (), 1: (), 2: ()}))
    x = mdarray.distributed_array(np.arange(4.0), layout, mode="max")
    with mdarray.options(fallback="raise"):
        x += 2.0  # max(p) + c: stays MAX, no data moved
        assert x.mode is mdarray.MAX
        x *= np.arange(4.0)  # not provable for an array: computed REPLICA, written back as MAX
    assert x.mode is mdarray.MAX
    assert_dist_equal(x, (np.arange(4.0) + 2) * np.arange(4.0))


def test_operators_with_numpy_arrays_on_the_left():
    x = mdarray.distributed_array(
        np.arange(6).reshape(2, 3), Layout.block((2, 3), devices=devices(0, 1))
    )
    with mdarray.options(fallback="raise"):
        got = np.arange(3) - x
        assert isinstance(got, mdarray.DistArray)
        assert_dist_equal(got, np.arange(3) - np.arange(6).reshape(2, 3))
        assert_dist_equal(divmod(7, x + 1)[1], 7 % (np.arange(6).reshape(2, 3) + 1))
        assert_dist_equal(2**x, 2 ** np.arange(6).reshape(2, 3))


@pytest.mark.parametrize("other", ["a", ["a", "b", "c"], [["a"], ["b"]], None, object()])
@pytest.mark.parametrize("op", [operator.eq, operator.ne], ids=["eq", "ne"])
def test_equality_with_values_of_no_common_type_is_all_unequal(op, other):
    """NumPy's == and != answer elementwise "unequal" where the ufunc has no loop (a
    number against a string); the other comparisons raise NumPy's error."""
    a = np.arange(3.0)
    x = mdarray.distributed_array(a, mdarray.Layout.block(a.shape, devices=mdarray.devices()))
    with mdarray.options(fallback="allow"):  # CuPy has no object loop: object() is gathered
        got = op(x, other)
    assert isinstance(got, mdarray.DistArray)
    np.testing.assert_array_equal(got.get(), op(a, other))
    assert got.dtype == np.bool_
    with pytest.raises(TypeError, match="less"):
        operator.lt(x, "a")
    with pytest.raises(ValueError, match="broadcast"):
        op(x, ["a", "b"])


def test_divmod_of_a_python_bool_by_a_zero_d_partial_array():
    """A Python bool on the left and a 0-d uint64 PROD array: NumPy returns two 0-d
    results; so do we (this raised "return arrays must be of ArrayType")."""
    devices = mdarray.devices()
    layout = mdarray.Layout((), {d: [()] for d in devices[:2]})
    x = mdarray.distributed_array(np.array(3, np.uint64), layout, mdarray.PROD)
    want = np.divmod(False, np.array(3, np.uint64))
    got = np.divmod(False, x)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g.get(), w)


@pytest.mark.parametrize("name", sorted(mdarray._exec.operands.BINARY_OPERATORS))
def test_a_repeated_operator_runs_its_decided_runner_with_numpys_values(name, monkeypatch):
    """The second ``a op b`` (and ``b op a``, ``a op= b``) on the same layouts runs the
    runner the first decided, straight from the operator: the same values as NumPy, the
    operands in their places, and no ``__array_ufunc__`` call (``x @= y`` decides no
    runner: it takes the protocol each time)."""
    ufunc, _, in_place = mdarray._exec.operands.BINARY_OPERATORS[name]
    rng = np.random.default_rng(5)
    bitwise = (np.left_shift, np.right_shift, np.bitwise_and, np.bitwise_or, np.bitwise_xor)
    dtype = np.int64 if ufunc in bitwise else np.float64
    host = rng.integers(1, 5, (4, 4)).astype(dtype)
    other = rng.integers(1, 3, (4, 4)).astype(dtype)
    layout = Layout.block(host.shape, devices=devices(0, 1))
    shifted = Layout.block(host.shape, devices=devices(1, 0, 1))
    for right in (mdarray.distributed_array(other, shifted), 3):
        right_host = other if isinstance(right, mdarray.DistArray) else right
        try:
            want = getattr(host.copy(), name)(right_host)
        except Exception as error:  # matmul by a scalar
            want = error
        for attempt in range(2):
            x = mdarray.distributed_array(host, layout)
            if isinstance(want, Exception):  # raised: nothing was decided
                with pytest.raises(type(want)):
                    getattr(x, name)(right)
                continue
            if attempt and name != "__imatmul__":  # decided now: no protocol needed
                monkeypatch.setattr(mdarray.DistArray, "__array_ufunc__", None)
            got = getattr(x, name)(right)
            monkeypatch.undo()
            if in_place:
                assert got is x
            if isinstance(want, tuple):
                for g, w in zip(got, want):
                    assert_dist_equal(g, w)
            elif ulps(want.dtype)["rtol"]:  # CUDA's pow of floats may round 1 ulp off
                assert_dist_allclose(got, want, **ulps(want.dtype))
            else:
                assert_dist_equal(got, want)
