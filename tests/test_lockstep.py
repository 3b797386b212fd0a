"""DistArrays and a NumPy model in lockstep over random sequences of operations.

A hypothesis state machine keeps pairs (DistArray, NumPy array) and applies each step to
both: ufuncs (with scalars, broadcasting, mixed dtypes, NaN/inf/signed zeros, integer
wrap), in-place operators (with scalars and with other pairs, views of the target
included), assignment, basic-index views (the model's are NumPy views of the model, so
writes through views propagate in the model exactly as NumPy says), reshards to drawn
layouts and mode changes (copies that may share memory), reductions and matmul, and
copies and pickling round trips (``copy.copy``, ``copy.deepcopy`` of one array or of two
together, ``pickle``, ``cloudpickle`` where installed: new values that must share nothing
with the originals, and, copied together, with each other as NumPy's do). After
every step every pair must agree with its model, every replica must hold the value, and
no array other than the one written (and its views) may have changed. Elementwise values
of the model come from the backend's kernel on the whole model array: NumPy's on cpu;
on cuda, CuPy's (its complex arithmetic at infinities is its own, not ours to fix).

Integers compare exactly. Floats compare exactly too, except where a sum is grouped by
chunks rather than in NumPy's order: each pair carries a bound on how far its elements may
be from the model (zero until a sum, product, matmul or partial result rounds
differently), propagated through every later step. A step whose result the bound cannot
settle (a division by a value that may be zero, ``inf`` times a value that may be zero) is
skipped.

``HYPOTHESIS_PROFILE=fuzz`` runs it long (tests/conftest.py).
"""

import copy
import importlib.util
import pickle

import numpy as np
import pytest
from _oracle import on_backend
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, multiple, rule

import mdarray
from mdarray.testing import assert_chunks_hold, strategies as mst

DTYPES = [np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.complex128)]
SHAPES = st.sampled_from([(4,), (3, 4), (2, 3, 2), (5,), (1, 4)])
# Rounding of one grouped sum or product, per term (generous: a few ulps of float64).
ROUNDING = 8 * np.finfo(np.float64).eps
# The bound of a zero whose sign is unspecified: a tie of -0.0 and +0.0 in a maximum or
# minimum (IEEE 754 lets it return either; NumPy's and a chunked order may differ).
UNSIGNED = np.finfo(np.float64).smallest_subnormal


COPIES = {
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    "pickle": lambda x: pickle.loads(pickle.dumps(x)),
}
if importlib.util.find_spec("cloudpickle") is not None:
    import cloudpickle

    COPIES["cloudpickle"] = lambda x: pickle.loads(cloudpickle.dumps(x))


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


def _close(got, want, bound):
    """Elementwise: equal (NaN where NaN, the same infinities, the same signed zeros), or
    finite and within `bound`."""
    parts = (np.real, np.imag) if want.dtype.kind == "c" else (np.real,)
    ok = np.ones(want.shape, bool)
    for part in parts:
        g, w = part(got), part(want)
        exact = (g == w) & (np.signbit(g) == np.signbit(w))
        near = np.isfinite(g) & np.isfinite(w) & (np.abs(g - w) <= bound)
        ok &= exact | (np.isnan(g) & np.isnan(w)) | (near & (bound > 0))
    # A complex value with a NaN part is NaN as a whole (np.isnan says so): which of its
    # parts are NaN or infinite depends on the order of the products (BLAS's or ours).
    return ok | (np.isnan(got) & np.isnan(want))


def same(got, want, bound):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    value = got.get()
    if want.dtype.kind not in "fc":
        np.testing.assert_array_equal(value, want)
        return
    ok = _close(value, want, np.broadcast_to(bound, want.shape))
    if not ok.all():
        where = tuple(int(i) for i in np.argwhere(~ok)[0])
        raise AssertionError(
            f"at {where}: got {value[where]!r}, want {want[where]!r} "
            f"(bound {np.broadcast_to(bound, want.shape)[where]!r})\ngot {value!r}\nwant {want!r}"
        )


def uncertain(model, bound):
    """Elements whose sign and zeroness the bound does not settle."""
    return (bound > 0) & ~(np.abs(model) > bound)


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


def _finite_abs(a):
    out = np.abs(np.asarray(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64))
    return np.where(np.isfinite(out), out, 0.0)


def _elementwise_bound(ufunc, a, ea, b, eb, result):
    """How far ``ufunc(a, b)`` may be off, its operands off by `ea` and `eb`."""
    a, b = _finite_abs(a), _finite_abs(b)
    if ufunc in (np.add, np.subtract):
        bound = ea + eb
    elif ufunc is np.multiply:
        bound = ea * b + eb * a + ea * eb
    elif ufunc is np.maximum:
        bound = np.maximum(ea, eb) + UNSIGNED * (result == 0)
    else:  # divide, by a divisor its bound keeps away from zero
        with np.errstate(all="ignore"):
            bound = np.where(eb > 0, (ea * b + a * eb) / np.maximum(b * (b - eb), 1e-300), ea / b)
        bound = np.where(np.isfinite(bound), bound, 0.0)
    # An operand's uncertainty never vanishes from its result: the unsigned-zero mark
    # (`UNSIGNED`, the smallest subnormal) divided by 3 underflows to 0, which would
    # demand the signed zero a grouped product leaves unspecified.
    uncertain_in = (np.asarray(ea) > 0) | (np.asarray(eb) > 0)
    bound = np.where(uncertain_in, np.maximum(bound, UNSIGNED), bound).astype(np.float64)
    bound = bound + (bound > 0) * ROUNDING * _finite_abs(result)
    if np.iscomplexobj(result) and ufunc in (np.multiply, np.divide):
        # A complex product is several roundings (a*c - b*d), fused or not depending on
        # the loop NumPy picks for the memory layout: a few ulps of |a| |b| apart.
        with np.errstate(all="ignore"):
            scale = a * b if ufunc is np.multiply else np.where(b > 0, a / b, 0.0)
        bound = bound + ROUNDING * np.where(np.isfinite(scale), scale, 0.0)
    return bound


class Lockstep(RuleBasedStateMachine):
    pairs = Bundle("pairs")

    def __init__(self):
        super().__init__()
        self.all = []  # every pair made, to check that none changed unexpectedly

    def _add(self, x, model, bound, how=""):
        """A pair: the DistArray, its model, and a bound on their distance, an array like
        the model (a view of another pair's bound where the model is a view)."""
        model = np.asarray(model)  # NumPy gives scalars for 0-d results; the model is an array
        bound = np.asarray(bound, np.float64)
        if bound.shape != model.shape:
            bound = np.broadcast_to(bound, model.shape).copy()
        self.all.append((x, model, bound, f"pairs_{len(self.all)} {how}"))
        return (x, model, bound)

    @rule(target=pairs, data=st.data())
    def create(self, data):
        dtype = data.draw(st.sampled_from(DTYPES))
        shape = data.draw(SHAPES)
        value = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype)))
        layout = data.draw(mst.layouts(shape))
        mode = data.draw(mst.modes(dtype)) if dtype.kind != "c" else mdarray.REPLICA
        x = mdarray.distributed_array(value, layout, mode)
        return self._add(x, value.copy(), np.zeros(shape))

    @rule(target=pairs, pair=pairs, data=st.data())
    def view(self, pair, data):
        x, model, bound = pair
        if data.draw(st.booleans()) and x.ndim >= 2:
            return self._add(x.T, model.T, bound.T, "transpose")
        key = data.draw(basic_keys(x.shape))
        if len(key) == x.ndim and all(isinstance(k, int) for k in key):
            # An integer per axis gives NumPy's scalar, a copy (as ours is then).
            return self._add(x[key], model[key], bound[key].copy(), f"element {key}")
        return self._add(x[key], model[key], bound[key], f"view {key}")

    @rule(target=pairs, pair=pairs, data=st.data())
    def copy_by_moving(self, pair, data):
        """reshard and change_mode make new values that may share memory."""
        x, model, bound = pair
        if data.draw(st.booleans()):
            y = x.reshard(data.draw(mst.layouts(x.shape)))
        else:
            y = x.change_mode(data.draw(mst.modes(x.dtype)))
        return self._add(y, model.copy(), bound.copy(), f"moved to {y.mode}")

    @rule(target=pairs, pair=pairs, how=st.sampled_from(sorted(COPIES)))
    def copy_whole(self, pair, how):
        """A copy or a pickling round trip: the same value, layout, mode and dtype."""
        x, model, bound = pair
        y = COPIES[how](x)
        assert y is not x
        assert (y.layout, y.mode, y.dtype, y.device) == (x.layout, x.mode, x.dtype, x.device)
        return self._add(y, model.copy(), bound.copy(), how)

    @rule(target=pairs, a=pairs, b=pairs, how=st.sampled_from(["deepcopy", "pickle"]))
    def copy_together(self, a, b, how):
        """Two arrays copied together (which may share memory, or be views of one
        another, or be one array): as NumPy's, the copies share no writes with each other
        unless they are the same array."""
        (x, mx, ex), (y, my, ey) = a, b
        cx, cy = COPIES[how]([x, y])
        assert (cx is cy) == (x is y)
        if x is y:
            return multiple(self._add(cx, mx.copy(), ex.copy(), f"{how} together"))
        return multiple(
            self._add(cx, mx.copy(), ex.copy(), f"{how} together"),
            self._add(cy, my.copy(), ey.copy(), f"{how} together"),
        )

    def _operands(self, ufunc, a, b):
        """`b`'s DistArray, model and bound, or None where the step is not decidable."""
        (_, mx, ex), (y, my, ey) = a, b
        if ufunc is np.divide and (uncertain(my, ey).any() or ((ey > 0).any() and (my == 0).any())):
            return None
        if ufunc in (np.multiply, np.divide):
            with np.errstate(all="ignore"):
                shape = np.broadcast_shapes(mx.shape, my.shape)
            wild_x = np.broadcast_to(~np.isfinite(mx) | uncertain(mx, ex), shape)
            wild_y = np.broadcast_to(~np.isfinite(my) | uncertain(my, ey), shape)
            if (wild_x & wild_y).any():
                return None
        return y, my, ey

    @rule(target=pairs, a=pairs, b=pairs, data=st.data())
    def binary(self, a, b, data):
        x, mx, ex = a
        ufunc = data.draw(
            st.sampled_from([np.add, np.subtract, np.multiply, np.maximum, np.divide])
        )
        if ufunc is np.maximum and "c" in (mx.dtype.kind, b[1].dtype.kind):
            ufunc = np.add
        if data.draw(st.booleans()):
            scalar = data.draw(st.sampled_from([2, -1, 0.5, 3]))
            b = (scalar, np.asarray(scalar), np.zeros(()))
        try:
            np.broadcast_shapes(mx.shape, b[1].shape)
        except ValueError as error:
            with np.errstate(all="ignore"):
                _raises_as_numpy(error, lambda: ufunc(x, b[0]))
            return self._add(x, mx, ex)
        operands = self._operands(ufunc, a, b)
        if operands is None:
            return self._add(x, mx, ex)
        y, my, ey = operands
        with np.errstate(all="ignore"):
            want = np.asarray(on_backend(ufunc, mx, my if isinstance(y, mdarray.DistArray) else y))
            with mdarray.options(fallback="raise"):
                got = ufunc(x, y)
            bound = _elementwise_bound(ufunc, mx, ex, my, ey, want)
            same(got, want, bound)
        return self._add(got, want, bound, ufunc.__name__)

    def _in_place(self, a, b, op, ufunc):
        x, mx, ex = a
        y, my, ey = b
        with np.errstate(all="ignore"):
            try:
                getattr(mx.copy(), op)(my)  # NumPy's verdict on shapes and casting
            except (ValueError, TypeError) as error:
                _raises_as_numpy(error, lambda: getattr(x, op)(y))
                return
            operands = self._operands(ufunc, a, b)
            want = on_backend(ufunc, mx, my)
            if operands is None or want.shape != mx.shape:
                return
            bound = _elementwise_bound(ufunc, mx, ex, my, ey, want)
            with mdarray.options(fallback="raise"):
                getattr(x, op)(y)
            mx[...] = want
        ex[...] = bound  # through the bound of every view of x, as the write goes

    @rule(pair=pairs, data=st.data())
    def in_place(self, pair, data):
        op, ufunc = data.draw(st.sampled_from(IN_PLACE))
        value = data.draw(st.sampled_from([1, 2, -3]))
        self._in_place(pair, (value, np.asarray(value), np.zeros(())), op, ufunc)

    @rule(a=pairs, b=pairs, data=st.data())
    def in_place_with(self, a, b, data):
        """``x op= y`` with another pair, which may be a view of x itself (NumPy reads
        all of y before it writes, whatever the overlap)."""
        op, ufunc = data.draw(st.sampled_from(IN_PLACE))
        self._in_place(a, b, op, ufunc)

    @rule(pair=pairs, data=st.data())
    def assign(self, pair, data):
        x, model, bound = pair
        key = data.draw(basic_keys(x.shape))
        value = data.draw(elements(x.dtype))
        with mdarray.options(fallback="raise"):
            x[key] = value
        model[key] = value
        bound[key] = 0

    @rule(target=pairs, pair=pairs, data=st.data())
    def reduce(self, pair, data):
        x, model, bound = pair
        func = data.draw(st.sampled_from([np.sum, np.max, np.min, np.prod]))
        if func in (np.max, np.min) and x.dtype.kind == "c":
            func = np.sum
        if func is np.prod and x.dtype.kind == "c" and not np.isfinite(model).all():
            # Complex products are not associative at infinities ((1+0j) * (inf+1j) is
            # inf+nanj) and NumPy's own result depends on its loop order (np.prod of a
            # 2-D array differs by axis); a product grouped by chunks cannot follow it.
            func = np.sum
        if func is np.prod and uncertain(model, bound).any() and not np.isfinite(model).all():
            return self._add(x, model, bound)  # inf times a value that may be zero
        axis = data.draw(st.none() | st.integers(0, max(x.ndim - 1, 0)))
        if x.ndim == 0:
            axis = None
        with np.errstate(all="ignore"):
            try:
                want = np.asarray(func(model, axis=axis))
            except ValueError:
                return self._add(x, model, bound)  # an empty max: NumPy raises; so may we
            with mdarray.options(fallback="raise"):
                got = func(x, axis=axis)
            terms = _finite_abs(model)
            if func is np.sum:
                new = np.sum(bound, axis=axis) + ROUNDING * np.sum(terms, axis=axis)
            elif func is np.prod:
                relative = np.where(terms > 0, bound / np.where(terms > 0, terms, 1), 0)
                new = _finite_abs(want) * (np.sum(relative, axis=axis) + ROUNDING * model.size)
                # A factor the bound leaves at zero or not (a max's unsigned zero tie among
                # them) leaves the product anywhere within the product of the magnitudes.
                loose = np.prod(terms + np.where(uncertain(model, bound), bound, 0), axis=axis)
                new = new + np.where(np.any(uncertain(model, bound), axis=axis), loose, 0)
                if x.dtype.kind == "c":
                    # A zero part's sign depends on the grouping ((0+0j) * 1j * 1j is 0j
                    # in order, -0+0j as 0 * (1j * 1j)): unspecified, like a max's tie.
                    new = new + UNSIGNED * ((want.real == 0) | (want.imag == 0))
            else:
                new = np.max(bound, axis=axis, initial=0) + UNSIGNED * (want == 0)
            same(got, want, new)
        return self._add(got, want, new, func.__name__)

    @rule(target=pairs, a=pairs, b=pairs)
    def matmul(self, a, b):
        (x, mx, ex), (y, my, ey) = a, b
        if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[0]:
            return self._add(x, mx, ex)
        wild_x = ~np.isfinite(mx) | uncertain(mx, ex)
        wild_y = ~np.isfinite(my) | uncertain(my, ey)
        if (wild_x.astype(int) @ wild_y.astype(int)).any():
            return self._add(x, mx, ex)
        if "c" in (mx.dtype.kind, my.dtype.kind) and not (
            np.isfinite(mx).all() and np.isfinite(my).all()
        ):
            # Complex products at infinities depend on how BLAS groups the parts (inf+infj
            # for one blocking, nan+nanj for another), NumPy's own result included.
            return self._add(x, mx, ex)
        with np.errstate(all="ignore"):
            want = mx @ my
            with mdarray.options(fallback="raise"):
                got = x @ y
            ax, ay = _finite_abs(mx), _finite_abs(my)
            bound = (ax + ex) @ ey + ex @ ay + ROUNDING * x.shape[1] * (ax @ ay)
            # A zero's sign depends on the grouping (see reduce), and for real sums on where
            # the accumulator starts: BLAS's start at +0, so its sum of -0 terms is +0 where
            # the exact sum (and a sum of partial products) is -0.
            bound = bound + UNSIGNED * ((want.real == 0) | (want.imag == 0))
            same(got, want, bound)
        return self._add(got, want, bound, "matmul")

    @rule(target=pairs, a=pairs, b=pairs, data=st.data())
    def foreign(self, a, b, data):
        """A binary ufunc with an operand that is no DistArray: the other pair's model as
        a nested list (converted and broadcast as NumPy does: a new pair), as a masked
        array (NumPy's answer, mask included, changing no pair), or as another library's
        duck array (which answers the call itself)."""
        x, mx, ex = a
        _, my, ey = b
        ufunc = data.draw(st.sampled_from([np.add, np.subtract, np.multiply]))
        kind = data.draw(st.sampled_from(["list", "masked", "duck"]))
        try:
            np.broadcast_shapes(mx.shape, my.shape)
        except ValueError:
            return self._add(x, mx, ex)
        if kind == "duck":
            assert ufunc(x, _Duck()) == "duck"
            assert np.concatenate([x.reshape(-1), _Duck()]) == "duck"
            return self._add(x, mx, ex)
        with np.errstate(all="ignore"):
            if kind == "list":
                operands = self._operands(ufunc, a, b)
                if operands is None or my.ndim == 0:
                    return self._add(x, mx, ex)
                # As NumPy converts the list (an empty one is float64 whatever my is, and
                # of shape (0,) whatever my's: such a list is another operand).
                listed = np.asarray(my.tolist())
                if listed.shape != my.shape:
                    return self._add(x, mx, ex)
                want = np.asarray(on_backend(ufunc, mx, listed))
                with mdarray.options(fallback="raise"):
                    got = ufunc(x, my.tolist())
                bound = _elementwise_bound(ufunc, mx, ex, my, ey, want)
                same(got, want, bound)
                return self._add(got, want, bound, f"{ufunc.__name__} with a list")
            if ex.any() or ey.any():  # NumPy computes on the host: compare exact values
                return self._add(x, mx, ex)
            mask = data.draw(hnp.arrays(np.bool_, my.shape))
            masked = np.ma.array(my, mask=mask)
            want = ufunc(mx, masked)
            with mdarray.options(fallback="allow"):
                got = ufunc(x, masked)
        assert type(got) is type(want)
        np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
        np.testing.assert_array_equal(np.ma.filled(got, 0), np.ma.filled(want, 0))
        return self._add(x, mx, ex)

    @invariant()
    def every_pair_agrees(self):
        for x, model, bound, how in self.all:
            _check_pair(x, model, bound, how)


class _Duck:
    """Another library's duck array: it answers every NumPy function and ufunc."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return "duck"

    def __array_function__(self, func, types, args, kwargs):
        return "duck"


IN_PLACE = [("__iadd__", np.add), ("__isub__", np.subtract), ("__imul__", np.multiply)]


def _raises_as_numpy(error, step):
    """`step` (on DistArrays) raises as NumPy did: a ValueError or a TypeError."""
    kind = ValueError if isinstance(error, ValueError) else TypeError
    with mdarray.options(fallback="raise"), pytest.raises(kind):
        step()


def _check_pair(x, model, bound, how):
    try:
        with np.errstate(all="ignore"):
            same(x, model, bound)
            if x.mode is mdarray.REPLICA:
                assert_chunks_hold(x, x.get())
    except AssertionError as error:
        raise AssertionError(f"{how}: {error}") from None


TestLockstep = Lockstep.TestCase
