"""DistArrays and a NumPy model in lockstep over random sequences of operations.

A hypothesis state machine keeps pairs (DistArray, NumPy array) and applies each step to
both: ufuncs (with scalars, broadcasting, NaN/inf/signed zeros, integer wrap), in-place
operators, assignment, basic-index views (the model's are NumPy views of the model, so
writes through views propagate in the model exactly as NumPy says), reshards to drawn
layouts and mode changes (copies that may share memory), reductions and matmul. After
every step every pair must agree, every replica must hold its value, and no array other
than the one written (and its views) may have changed.

``HYPOTHESIS_PROFILE=fuzz`` runs it long (tests/conftest.py).
"""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

import mdarray
from mdarray.testing import assert_chunks_hold
from mdarray.testing import strategies as mst

DTYPES = [np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.complex128)]
SHAPES = st.sampled_from([(4,), (3, 4), (2, 3, 2), (5,), (1, 4)])


def elements(dtype):
    if dtype.kind == "i":
        big = st.sampled_from([np.iinfo(dtype).max, np.iinfo(dtype).min])
        return st.one_of(st.integers(-9, 9), st.integers(-9, 9), big)
    real = st.one_of(
        st.integers(-9, 9).map(float),
        st.integers(-9, 9).map(float),
        st.sampled_from([-0.0, np.inf, -np.inf, np.nan, 0.5]),
    )
    return real if dtype.kind == "f" else st.builds(complex, real, real)


def same(got, want):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    value = got.get()
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(value, want, rtol=1e-9, atol=1e-9, equal_nan=True)
    else:
        np.testing.assert_array_equal(value, want)


def basic_keys(shape):
    """A basic index of `shape`: one int or slice (any step) per axis, or fewer axes."""
    items = [
        st.one_of(
            st.integers(-n, n - 1) if n else st.just(slice(None)),
            st.builds(
                slice,
                st.none() | st.integers(-n, n),
                st.none() | st.integers(-n, n),
                st.none() | st.sampled_from([1, 2, -1, -2]),
            ),
        )
        for n in shape
    ]
    return st.integers(0, len(shape)).flatmap(lambda k: st.tuples(*items[:k]))


class Lockstep(RuleBasedStateMachine):
    pairs = Bundle("pairs")

    def __init__(self):
        super().__init__()
        self.all = []  # every pair made, to check that none changed unexpectedly

    def _add(self, x, model, how=""):
        model = np.asarray(model)  # NumPy gives scalars for 0-d results; the model is an array
        self.all.append((x, model, f"pairs_{len(self.all)} {how}"))
        return (x, model)

    @rule(target=pairs, data=st.data())
    def create(self, data):
        dtype = data.draw(st.sampled_from(DTYPES))
        shape = data.draw(SHAPES)
        value = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype)))
        layout = data.draw(mst.layouts(shape))
        mode = data.draw(mst.modes(dtype)) if dtype.kind != "c" else mdarray.REPLICA
        x = mdarray.distributed_array(value, layout, mode)
        return self._add(x, value.copy())

    @rule(target=pairs, pair=pairs, data=st.data())
    def view(self, pair, data):
        x, model = pair
        if data.draw(st.booleans()) and x.ndim >= 2:
            return self._add(x.T, model.T, "transpose")
        key = data.draw(basic_keys(x.shape))
        # An integer per axis gives NumPy's scalar, a copy (as ours is then).
        return self._add(x[key], np.asarray(model[key]), f"view {key}")

    @rule(target=pairs, pair=pairs, data=st.data())
    def copy_by_moving(self, pair, data):
        """reshard and change_mode make new values that may share memory."""
        x, model = pair
        if data.draw(st.booleans()):
            y = x.reshard(data.draw(mst.layouts(x.shape)))
        else:
            y = x.change_mode(data.draw(mst.modes(x.dtype)))
        return self._add(y, model.copy(), f"moved to {y.mode}")

    @rule(target=pairs, a=pairs, b=pairs, data=st.data())
    def binary(self, a, b, data):
        (x, mx), (y, my) = a, b
        ufunc = data.draw(
            st.sampled_from([np.add, np.subtract, np.multiply, np.maximum, np.divide])
        )
        if ufunc is np.maximum and "c" in (mx.dtype.kind, my.dtype.kind):
            ufunc = np.add
        if data.draw(st.booleans()):
            y, my = data.draw(st.sampled_from([2, -1, 0.5, 3])), None
        with np.errstate(all="ignore"):
            try:
                want = ufunc(mx, my if my is not None else y)
            except (ValueError, TypeError) as error:
                with mdarray.options(fallback="raise"):
                    try:
                        ufunc(x, y)
                    except type(error):
                        return self._add(x, mx)
                raise AssertionError(f"{ufunc.__name__} did not raise {error!r}") from None
            with mdarray.options(fallback="raise"):
                got = ufunc(x, y)
            same(got, want)
        return self._add(got, want)

    @rule(pair=pairs, data=st.data())
    def in_place(self, pair, data):
        x, model = pair
        op = data.draw(st.sampled_from(["__iadd__", "__isub__", "__imul__"]))
        value = data.draw(st.sampled_from([1, 2, -3]))
        with np.errstate(all="ignore"), mdarray.options(fallback="raise"):
            getattr(x, op)(value)
            getattr(model, op)(value)

    @rule(pair=pairs, data=st.data())
    def assign(self, pair, data):
        x, model = pair
        key = data.draw(basic_keys(x.shape))
        value = data.draw(elements(x.dtype))
        with mdarray.options(fallback="raise"):
            x[key] = value
        model[key] = value

    @rule(target=pairs, pair=pairs, data=st.data())
    def reduce(self, pair, data):
        x, model = pair
        func = data.draw(st.sampled_from([np.sum, np.max, np.min, np.prod]))
        if func in (np.max, np.min) and x.dtype.kind == "c":
            func = np.sum
        if func is np.prod and x.dtype.kind == "c" and not np.isfinite(model).all():
            # Complex products are not associative at infinities ((1+0j) * (inf+1j) is
            # inf+nanj) and NumPy's own result depends on its loop order (np.prod of a
            # 2-D array differs by axis); a product grouped by chunks cannot follow it.
            func = np.sum
        axis = data.draw(st.none() | st.integers(0, max(x.ndim - 1, 0)))
        if x.ndim == 0:
            axis = None
        with np.errstate(all="ignore"):
            try:
                want = func(model, axis=axis)
            except ValueError:
                return self._add(x, model)  # an empty max: NumPy raises; so may we
            with mdarray.options(fallback="raise"):
                got = func(x, axis=axis)
            same(got, want)
        return self._add(got, np.asarray(want))

    @rule(target=pairs, a=pairs, b=pairs)
    def matmul(self, a, b):
        (x, mx), (y, my) = a, b
        if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[0]:
            return self._add(x, mx)
        with np.errstate(all="ignore"):
            want = mx @ my
            with mdarray.options(fallback="raise"):
                got = x @ y
            same(got, want)
        return self._add(got, want)

    @invariant()
    def every_pair_agrees(self):
        for x, model, how in self.all:
            _check_pair(x, model, how)


def _check_pair(x, model, how):
    try:
        with np.errstate(all="ignore"):
            same(x, model)
        if x.mode is mdarray.REPLICA:
            assert_chunks_hold(x, np.asarray(model))
    except AssertionError as error:
        raise AssertionError(f"{how}: {error}") from None


TestLockstep = Lockstep.TestCase
