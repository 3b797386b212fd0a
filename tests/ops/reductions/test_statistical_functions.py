"""Reductions and scans against NumPy over drawn shapes, dtypes, layouts and modes;
partial results and data movement."""

import warnings

import numpy as np
import pytest
from _backend_facts import ON_CUDA
from _layouts import dist_pairs, spread, two_chunks
from hypothesis import assume, example, given, strategies as st
from numpy.lib.array_utils import normalize_axis_tuple

import mdarray
from mdarray import MAX, MIN, PROD, REPLICA, SUM, Layout
from mdarray.testing import assert_dist_equal, strategies as mst

DEVICES = mdarray.devices()


def arrays_of(dtypes, shapes=None, **kwargs):
    """`dist_pairs` of one of `dtypes`, shapes drawn from `shapes`."""
    return st.tuples(st.sampled_from(dtypes), mst.shapes() if shapes is None else shapes).flatmap(
        lambda pair: dist_pairs(shape=pair[1], dtype=pair[0], **kwargs)
    )


def quiet(func, *args, **kwargs):
    """`func` with NumPy's floating point warnings silenced (both sides see the same)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


def assert_matches(result, expected, rtol=1e-5) -> None:
    """Compare a DistArray result (or a NumPy out) with NumPy's; floats with a tolerance."""
    expected = np.asarray(expected)
    if expected.dtype.kind in "fc":
        got = quiet(result.get) if isinstance(result, mdarray.DistArray) else result
        assert np.asarray(got).dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-6, strict=True)
    else:
        assert_dist_equal(result, expected)


def check(numpy_func, x, expected, **kwargs):
    """`numpy_func` on the DistArray agrees with it on the NumPy array: same value,
    dtype and shape, or the same exception type."""
    try:
        want = quiet(numpy_func, expected, **kwargs)
    except Exception as error:  # NumPy's own error: ours must be of the same type
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            quiet(numpy_func, x, **kwargs)
        return None
    with mdarray.options(fallback="raise"):
        got = quiet(numpy_func, x, **kwargs)
    assert isinstance(got, mdarray.DistArray)
    assert_matches(got, want, rtol=1e-3 if np.asarray(want).dtype.itemsize <= 4 else 1e-6)
    return got


@st.composite
def axes(draw, ndim: int):
    """None, an int (maybe negative) or a tuple of distinct axes."""
    if ndim == 0:
        return draw(st.sampled_from([None, ()]))
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return None
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    chosen = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    return tuple(a - ndim if draw(st.booleans()) else a for a in chosen)


# Reductions -------------------------------------------------------------------------

REDUCTIONS = [np.sum, np.prod, np.max, np.min, np.all, np.any, np.amax, np.amin]


@example(
    (
        mdarray.distributed_array(np.arange(6.0), spread({0: slice(0, 4), 1: slice(2, 6)})),
        np.arange(6.0),
    ),
    np.sum,
    0,
    False,
)
@given(dist_pairs(), st.sampled_from(REDUCTIONS), st.data(), st.booleans())
def test_reductions_match_numpy(pair, func, data, keepdims):
    x, expected = pair
    axis = data.draw(axes(x.ndim)) if isinstance(data, st.DataObject) else data
    if func is np.prod and np.isfinite(expected).all():
        assume_no_overflowing_grouping(expected, axis)
    check(func, x, expected, axis=axis, keepdims=keepdims)


def assume_no_overflowing_grouping(expected, axis, dtype=None, initial=1) -> None:
    """A float product that overflows depends on its grouping where it meets a zero
    (inf * 0 is NaN in NumPy's order, 0 * finite first is 0 in a chunked one), as NumPy's
    own result depends on its loop order: assume no grouping of the nonzero factors
    overflows (their whole product and `initial`'s, in float64, within the range of the
    result's dtype). Integer products wrap alike in any order."""
    result = np.prod(np.ones(1, expected.dtype), dtype=dtype).dtype
    if result.kind not in "fc":
        return
    factors = np.abs(np.where(expected == 0, 1, expected)).astype(
        np.complex128 if result.kind == "c" else np.float64
    )
    largest = np.finfo(result).max / max(abs(initial), 1)
    assume((np.abs(quiet(np.prod, factors, axis=axis)) <= largest).all())


@given(arrays_of(["int8", "uint8", "int32", "float32", "bool"]), st.data())
def test_sum_prod_dtype_initial_where(pair, data):
    x, expected = pair
    axis = data.draw(axes(x.ndim))
    func = data.draw(st.sampled_from([np.sum, np.prod, np.max, np.min]))
    kwargs = {"axis": axis, "keepdims": data.draw(st.booleans())}
    if func in (np.sum, np.prod) and data.draw(st.booleans()):
        kwargs["dtype"] = data.draw(st.sampled_from([np.int64, np.float64, np.int16]))
    if data.draw(st.booleans()):
        kwargs["initial"] = data.draw(st.integers(0, 3))
    if data.draw(st.booleans()):
        mask = data.draw(st.lists(st.booleans(), min_size=x.size, max_size=x.size))
        where = np.array(mask, dtype=bool).reshape(x.shape)
        kwargs["where"] = (
            where
            if data.draw(st.booleans())
            else mdarray.distributed_array(where, data.draw(mst.layouts(x.shape)))
        )
    if func is np.prod:
        assume_no_overflowing_grouping(
            expected, axis, kwargs.get("dtype"), kwargs.get("initial", 1)
        )
    check(func, x, expected, **kwargs)


@given(arrays_of(["int16", "float64", "complex128", "bool"]), st.data())
def test_mean_var_std(pair, data):
    x, expected = pair
    func = data.draw(st.sampled_from([np.mean, np.var, np.std]))
    kwargs = {"axis": data.draw(axes(x.ndim)), "keepdims": data.draw(st.booleans())}
    if func is not np.mean:
        key = data.draw(st.sampled_from(["ddof", "correction"]))
        kwargs[key] = data.draw(st.sampled_from([0, 1, 2]))
    if data.draw(st.booleans()):
        kwargs["dtype"] = data.draw(st.sampled_from([np.float32, np.float64, np.complex128]))
    if data.draw(st.booleans()):
        mask = data.draw(st.lists(st.booleans(), min_size=x.size, max_size=x.size))
        kwargs["where"] = np.array(mask, dtype=bool).reshape(x.shape)
    check(func, x, expected, **kwargs)


def test_var_ddof_and_correction_conflict():
    x = mdarray.distributed_array(np.arange(4.0), Layout.block((4,), devices=DEVICES))
    with pytest.raises(ValueError, match="ddof and correction"):
        np.var(x, ddof=1, correction=1)


@given(arrays_of(["int32", "float64"]), st.data())
def test_out_keeps_its_layout(pair, data):
    x, expected = pair
    axis = data.draw(axes(x.ndim))
    want = np.sum(expected, axis=axis)
    out = mdarray.distributed_array(
        np.zeros(want.shape, want.dtype), data.draw(mst.layouts(want.shape))
    )
    layout = out.layout
    with mdarray.options(fallback="raise"):
        got = np.sum(x, axis=axis, out=out)
    assert got is out
    assert out.layout == layout
    assert_matches(out, want)


def test_out_numpy_and_ufunc_tuple():
    values = np.arange(12.0).reshape(3, 4)
    x = mdarray.distributed_array(values, Layout.block((3, 4), devices=DEVICES))
    host = np.empty(4)
    assert np.sum(x, axis=0, out=host) is host
    np.testing.assert_array_equal(host, values.sum(0))
    out = mdarray.zeros((4,))
    assert np.add.reduce(x, out=(out,)) is out
    np.testing.assert_array_equal(out.get(), values.sum(0))
    with pytest.raises(ValueError, match="out has shape"):
        np.sum(x, axis=0, out=mdarray.zeros((3,)))


REDUCE_UFUNCS = sorted(
    (u for u in vars(np).values() if isinstance(u, np.ufunc) and u.nin == 2 and u.nout == 1),
    key=lambda u: u.__name__,
)


def without_fold_differences(ufunc, pair):
    """On CUDA, `pair` without the inputs where a fold of CuPy's kernel differs from
    NumPy's by design (the reduce compared is the contract everywhere else):

    - ``power`` on integers: NumPy refuses negative exponents (ValueError), CuPy's kernel
      does not look at values (0 for most negative powers): the values are made >= 0;
    - ``floor_divide`` on floats: CuPy computes ``floor(a / b)``, NumPy a divmod whose
      quotient of an infinity is NaN (``inf // 3``: inf in CuPy, NaN in NumPy); an
      infinity comes from a zero divisor earlier in the fold: zeros are made 1.
    """
    x, expected = pair
    if not ON_CUDA:
        return pair
    if ufunc is np.power and expected.dtype.kind in "iu":
        fixed = np.abs(expected)
    elif ufunc is np.floor_divide and expected.dtype.kind == "f":
        fixed = np.where(expected == 0, 1, expected).astype(expected.dtype)
    else:
        return pair
    return mdarray.distributed_array(fixed, x.layout, x.mode), fixed


# Ufuncs whose float loops NumPy may run on AVX-512 (SVML) even in a reduce, where the
# loop's input is its own output with stride 0: each step then reads the first element,
# not the running result, and the reduce is ``op(a[0], a[-1])``. Seen with NumPy 2.5.2
# on the GPU host (``arctan2.reduce([1.0, 1.0, 1.0])`` is ``arctan2(1, 1)``, 0.785, not
# ``arctan2(arctan2(1, 1), 1)``, 0.666); NumPy without AVX-512 folds as documented.
SIMD_REDUCE_BUGS = {np.arctan2, np.power}


def numpy_reduce(ufunc):
    """``ufunc.reduce``; for NumPy arrays, NumPy's documented semantics where its own loop
    may break them (`SIMD_REDUCE_BUGS`): the left fold ``r = op(r, a[i])`` along the axis,
    one elementwise call per step (the same loop and dtype, no overlapping operands).
    Both backends give the fold: NumPy's broken result depends on the shape it is given,
    so a chunked array's would differ from the whole array's.
    """

    def reduce(a, axis=0, keepdims=False):
        result = ufunc.reduce(a, axis=axis, keepdims=keepdims)  # NumPy's errors, dtype
        if not isinstance(a, np.ndarray) or ufunc not in SIMD_REDUCE_BUGS:
            return result
        if a.ndim == 0 or np.asarray(result).dtype.kind != "f":
            return result  # nothing folded (a 0-d array), or an integer loop (exact)
        axes = tuple(range(a.ndim)) if axis is None else normalize_axis_tuple(axis, a.ndim)
        if len(axes) != 1 or a.shape[axes[0]] < 2:
            return result  # no step to fold (NumPy refuses several axes for these)
        steps = np.moveaxis(a, axes[0], 0)
        value = steps[0]
        for step in steps[1:]:
            value = ufunc(value, step)
        value = np.asarray(value, dtype=np.asarray(result).dtype)
        return np.expand_dims(value, axes[0]) if keepdims else value

    return reduce


@given(
    arrays_of(["bool", "int64", "float64"], shapes=mst.shapes(max_dims=2)),
    st.sampled_from(REDUCE_UFUNCS),
    st.data(),
)
def test_every_ufunc_reduce(pair, ufunc, data):
    x, expected = without_fold_differences(ufunc, pair)
    kwargs = {"keepdims": data.draw(st.booleans())}
    if data.draw(st.booleans()):
        kwargs["axis"] = data.draw(axes(x.ndim))
    check(numpy_reduce(ufunc), x, expected, **kwargs)


# Partial results and data movement --------------------------------------------------


@pytest.mark.parametrize(
    ("func", "mode"),
    [(np.sum, SUM), (np.prod, PROD), (np.max, MAX), (np.min, MIN), (np.mean, REPLICA)],
)
def test_split_axis_gives_partial_without_transfers(func, mode):
    # mean: the partial sums combine before the division, as NumPy divides the sum (see
    # test_a_sum_that_overflows_scales_as_numpy_does); only they move, never the chunks.
    values = np.arange(1.0, 25.0).reshape(4, 6)
    x = mdarray.distributed_array(values, Layout.block((4, 6), devices=DEVICES))
    with mdarray.count_transfers() as moved, mdarray.options(fallback="raise"):
        partial = func(x, axis=0)
    assert moved.total <= (0 if mode.is_partial else len(DEVICES) * 6 * values.itemsize * 2)
    assert partial.mode is (mode if len(x.devices) > 1 else REPLICA)
    assert_matches(partial, func(values, axis=0))
    with mdarray.count_transfers() as moved:
        whole = func(x, axis=1)
    assert moved.total == 0
    assert whole.mode is REPLICA
    assert_matches(whole, func(values, axis=1))


def test_all_any_partial_modes():
    values = np.array([[True, False], [True, True], [False, True]])
    x = mdarray.distributed_array(values, Layout.block((3, 2), devices=DEVICES))
    with mdarray.count_transfers() as moved:
        a, b = np.all(x, axis=0), np.any(x, axis=0)
    assert moved.total == 0
    if len(DEVICES) > 1:
        assert (a.mode, b.mode) == (MIN, MAX)
    assert_dist_equal(a, values.all(0))
    assert_dist_equal(b, values.any(0))


def test_overlapping_replicas_count_once():
    values = np.arange(8.0)
    layout = Layout((8,), two_chunks(slice(0, 6), slice(2, 8)))
    x = mdarray.distributed_array(values, layout)
    for func in (np.sum, np.prod, np.max, np.mean):
        assert_matches(func(x), func(values))


@given(arrays_of(["int64", "float64"], mode=SUM), st.data())
def test_sum_of_sum_mode_stays_sum_without_transfers(pair, data):
    x, expected = pair
    axis = data.draw(axes(x.ndim))
    with mdarray.count_transfers() as moved:
        result = np.sum(x, axis=axis)
    if x.size:
        assert moved.total == 0
        assert result.mode is SUM
    assert_matches(result, np.sum(expected, axis=axis))


def test_zero_d_results():
    x = mdarray.distributed_array(np.arange(5), Layout.block((5,), devices=DEVICES))
    total = x.sum()
    assert total.shape == ()
    assert int(total) == 10
    assert float(total) == 10.0
    assert mdarray.sum(x).item() == 10
    assert bool(mdarray.any(x))
    assert not bool(mdarray.all(x))


def test_array_api_functions():
    values = np.arange(1.0, 13.0).reshape(3, 4)
    x = mdarray.distributed_array(values, Layout.block((3, 4), devices=DEVICES))
    assert_matches(mdarray.sum(x, axis=1, keepdims=True), values.sum(1, keepdims=True))
    assert_matches(mdarray.prod(x, axis=0), values.prod(0))
    assert_matches(mdarray.max(x), values.max())
    assert_matches(mdarray.min(x, axis=-1), values.min(-1))
    assert_matches(mdarray.mean(x, axis=0), values.mean(0))
    assert_matches(mdarray.var(x, axis=0, correction=1), values.var(0, ddof=1))
    assert_matches(mdarray.std(x, correction=0.5), values.std(ddof=0.5))


# Scans ------------------------------------------------------------------------------

SCANS = [np.cumsum, np.cumprod, np.add.accumulate, np.multiply.accumulate, np.maximum.accumulate]


@given(
    arrays_of(["bool", "int8", "int64", "float64"]),
    st.sampled_from(SCANS),
    st.data(),
)
def test_scans_match_numpy(pair, func, data):
    x, expected = pair
    kwargs = {}
    if func in (np.cumsum, np.cumprod):
        kwargs["axis"] = data.draw(st.none() | st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1))
        if data.draw(st.booleans()):
            kwargs["dtype"] = np.float64
    elif x.ndim:
        kwargs["axis"] = data.draw(st.integers(-x.ndim, x.ndim - 1))
    check(func, x, expected, **kwargs)


@given(
    arrays_of(["int64", "float32"], shapes=mst.shapes(min_dims=1, max_dims=2)),
    st.data(),
)
def test_cumulative_sum_prod_include_initial(pair, data):
    x, expected = pair
    func = data.draw(st.sampled_from([np.cumulative_sum, np.cumulative_prod]))
    kwargs = {"include_initial": data.draw(st.booleans())}
    if x.ndim > 1 or data.draw(st.booleans()):
        kwargs["axis"] = data.draw(st.integers(-x.ndim, x.ndim - 1))
    check(func, x, expected, **kwargs)
    api = mdarray.cumulative_sum if func is np.cumulative_sum else mdarray.cumulative_prod
    assert_matches(api(x, **kwargs), quiet(func, expected, **kwargs))


def test_scan_moves_only_carries():
    values = np.arange(64.0).reshape(16, 4)
    x = mdarray.distributed_array(values, Layout.block((16, 4), devices=DEVICES))
    with mdarray.count_transfers() as moved:
        result = np.cumsum(x, axis=0)
    # Each chunk's row of totals to the host and each later chunk's carry back (a row
    # each, linear in the chunks), never the input.
    assert moved.total <= (2 * len(DEVICES) - 1) * 4 * 8
    assert result.layout == x.layout
    assert_matches(result, np.cumsum(values, axis=0))


# CuPy's reduction hook ----------------------------------------------------------------


def test_cupy_reduction_hook():
    cupy = pytest.importorskip("cupy")
    if mdarray.default_backend() != "cuda":
        pytest.skip("needs the cuda backend")
    values = np.arange(24.0).reshape(4, 6)
    x = mdarray.distributed_array(values, Layout.block((4, 6), devices=DEVICES))
    for func in (cupy.sum, cupy.amax, cupy.amin, cupy.prod):
        result = func(x, axis=0)
        assert isinstance(result, mdarray.DistArray)
        np.testing.assert_allclose(result.get(), getattr(np, func.__name__)(values, axis=0))


def test_complex_var_with_too_large_ddof_divides_like_numpy():
    host = np.array([0, 1j])
    x = mdarray.distributed_array(host, two_chunks(slice(0, 1), slice(1, 2)))
    # NumPy warns "Degrees of freedom <= 0"; the values are what this test checks.
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.var(host, ddof=2, dtype=np.complex128)
        with mdarray.options(fallback="raise"):
            got = np.var(x, ddof=2, dtype=np.complex128).get()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("func", [np.mean, np.var, np.std])
@pytest.mark.parametrize(("shape", "axis"), [((0,), None), ((0, 5), 0), ((0, 5), 1), ((3, 0), 0)])
def test_moments_of_empty_arrays_warn_as_numpy(func, shape, axis):
    """NumPy's values and its warnings ("Mean of empty slice", "Degrees of freedom <= 0")
    where a slice is empty; none where the result is empty."""
    value = np.zeros(shape)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        want = func(value, axis=axis)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = func(mdarray.asarray(value), axis=axis)
    assert_matches(got, want)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("rows", [1, 3, 4, 5, 7, 8, 9])
def test_a_mean_divides_the_sum_as_numpy_does(rows, dtype):
    # Found by SciPy's zmap tests: the partial sums of [10, -3, 1, -4, -4] over four
    # devices were each divided by 5 and summed to -2.2e-16 (NumPy: the sum 0.0, divided).
    # Sums of small integers are exact in any order, so every value below is NumPy's bit
    # for bit: the mean, the sum divided by a Python int, and nanmean.
    rng = np.random.default_rng(rows)
    values = rng.integers(-20, 20, (rows, 3)).astype(dtype)
    x = mdarray.distributed_array(values, Layout.block(values.shape, devices=DEVICES))
    flat = mdarray.distributed_array(values[:, 0], Layout.block((rows,), devices=DEVICES))
    with mdarray.options(fallback="raise"):
        for _ in range(2):  # the first call and the replayed one
            np.testing.assert_array_equal(mdarray.mean(x, axis=0).get(), np.mean(values, axis=0))
            np.testing.assert_array_equal(float(mdarray.mean(flat)), np.mean(values[:, 0]))
            np.testing.assert_array_equal(
                (mdarray.sum(flat) / rows).get(), values[:, 0].sum() / rows
            )
            np.testing.assert_array_equal(np.nanmean(x, axis=0).get(), np.nanmean(values, axis=0))
    five = mdarray.distributed_array(
        np.array([10.0, -3, 1, -4, -4]), Layout.block((5,), devices=DEVICES)
    )
    assert float(mdarray.mean(five)) == 0.0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("scale", ["mean", "sum / 2", "sum * 0.5", "var"])
def test_a_sum_that_overflows_scales_as_numpy_does(scale, dtype):
    # Found by SciPy's TestXP_Mean::test_dtype: halving each device's partial sum of
    # [max, max] gave max (NumPy: the sum inf, halved, inf); doubling copies that cancel
    # overflows where their value does not. Only the combined sum may be scaled.
    big = np.finfo(dtype).max
    values = np.array([big, big, -big / 2, big / 2], dtype=dtype)
    x = mdarray.distributed_array(values, Layout.block(values.shape, devices=DEVICES))
    ops = {
        "mean": np.mean,
        "sum / 2": lambda v: np.sum(v) / 2,
        "sum * 0.5": lambda v: np.sum(v) * 0.5,
        "var": np.var,
    }
    with np.errstate(all="ignore"), mdarray.options(fallback="raise"):
        want = ops[scale](values)
        for _ in range(2):  # the first call and the replayed one
            np.testing.assert_array_equal(ops[scale](x).get(), want)
