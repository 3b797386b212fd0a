"""Repeated reductions run on cached plans: their host cost, and that the plans change nothing.

A repeated reduction (``xp.sum``, ``xp.max``, ``xp.mean``, ``xp.argmin`` along a whole axis)
looks up one plan cached on its layout, mode, dtype and arguments and runs only the
per-chunk kernels; a partial whose every chunk holds the whole (small) result becomes
REPLICA or goes to the host by a plan cached on its layout (`_dense_partials`). The guards
below hold the Python calls of each repeated op (`tests/_call_counts.calls`: deterministic,
unlike timings) under a budget about 20% above what they take, on one device and spread
over the backend's devices. The property tests compare every result with the general
path's, chunk by chunk and bit for bit (the plans are switched off for the reference), and
with NumPy.
"""

import warnings
from itertools import pairwise

import numpy as np
import pytest
from _backend_facts import ON_CUDA
from _call_counts import calls
from _layouts import device, dist_pairs, spread
from _partials import per_chunk
from hypothesis import assume, given, settings, strategies as st

import mdarray
from mdarray._movement import dense_partials as _dense_partials
from mdarray._ops.engine import reduction as _reduction
from mdarray._ops.sorting import searching_functions as _searching_functions
from mdarray.testing import _host, assert_allclose, assert_array_equal

SHAPE = (64, 64)


def row_map(devices) -> dict:
    """4 row blocks of SHAPE dealt over `devices` in turn (benchmarks.workloads.row_map)."""
    cuts = np.linspace(0, SHAPE[0], 5).astype(int)
    out: dict = {}
    for k in range(4):
        out.setdefault(devices[k % len(devices)], []).append(
            (slice(int(cuts[k]), int(cuts[k + 1])), slice(0, SHAPE[1]))
        )
    return out


PLACES = {"one device": (device(0),), "spread": tuple(mdarray.devices())}

# Budgets: about 20% above the counts reached (one device, spread over 4), so a change that
# puts planning back on the repeated path fails here (the reductions run what their first
# call decided, `mdarray._core.decided`; a one-chunk scalar is read alone). Counts spread over 4 devices where
# they differ (each device folds the partial copies itself: one move per other device).
OPS = {
    "xp.sum(x)": (lambda x, s, v: mdarray.sum(x), 32, 41),
    "float(xp.sum(x))": (lambda x, s, v: float(mdarray.sum(x)), 47, 86),
    # spread: the partial sums combine before the division (42 while each copy was divided)
    "xp.mean(x)": (lambda x, s, v: mdarray.mean(x), 33, 94),
    "xp.sum(x, axis=0)": (lambda x, s, v: mdarray.sum(x, axis=0), 34, 44),
    "xp.sum(x, axis=1)": (lambda x, s, v: mdarray.sum(x, axis=1), 34, 44),
    "xp.max(x)": (lambda x, s, v: mdarray.max(x), 32, 41),
    "xp.argmin(x, axis=1)": (lambda x, s, v: mdarray.argmin(x, axis=1), 38, 48),
    "s.change_mode('replica')": (lambda x, s, v: s.change_mode("replica"), 36, 69),
    "v.change_mode('replica')": (lambda x, s, v: v.change_mode("replica"), 36, 69),
    "s.get()": (lambda x, s, v: s.get(), 34, 38),
    "v.get()": (lambda x, s, v: v.get(), 36, 39),
}
# Spread over 4 cpu devices the counts were (46, 83, 45, 46, 46, 47, 48, 73, 73, 35, 36)
# in this order before the cpu backend's device context had no Python frames and the
# partial copies were folded where they lie (`Backend.combine_from`); on the cuda backend
# neither holds, and its budgets spread are those from before.
CUDA_SPREAD = {
    "xp.sum(x)": 56, "float(xp.sum(x))": 101, "xp.mean(x)": 120, "xp.sum(x, axis=0)": 56,
    "xp.sum(x, axis=1)": 56, "xp.max(x)": 58, "xp.argmin(x, axis=1)": 70,
    "s.change_mode('replica')": 87, "v.change_mode('replica')": 87,
}  # fmt: skip

# The cuda backend's own Python where it differs: the copy to the host (CuPy's ``get`` and
# its stream handling) and CuPy's argmin (a reduction kernel looked up per call).
CUDA_BUDGETS = {"s.get()": (50, 50), "v.get()": (53, 53), "xp.argmin(x, axis=1)": (93, 95)}


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("name", sorted(OPS))
def test_repeated_reduction_stays_within_its_budget(name, place):
    op, one, several = OPS[name]
    host = np.random.default_rng(1).standard_normal(SHAPE, np.float32)
    x = mdarray.distributed_array(host, row_map(PLACES[place]))
    s, v = mdarray.sum(x), mdarray.sum(x, axis=0)
    if ON_CUDA:
        several = CUDA_SPREAD.get(name, several)
        one, several = CUDA_BUDGETS.get(name, (one, several))
    budget = one if len(set(PLACES[place])) == 1 else several
    with mdarray.options(fallback="raise"):
        got = calls(lambda: op(x, s, v))
    assert got <= budget, f"{name} on {place}: {got} Python calls, budget {budget}"


# The plans change nothing: every result equals the general path's, chunk by chunk -----


def _general(monkeypatch):
    """Switch the cached plans off: every call takes the general path."""
    monkeypatch.setattr(_reduction, "chunk_plan", lambda *args: None)
    monkeypatch.setattr(_reduction, "_mean_plan", lambda *args: None)
    monkeypatch.setattr(_dense_partials, "dense_plan", lambda *args: None)
    monkeypatch.setattr(_searching_functions, "_whole_plan", lambda *args: None)


def _assert_same(fast, slow):
    """`fast` and `slow` alike: type, and for DistArrays layout, mode, dtype and every
    chunk bit for bit (NaNs in the same places)."""
    if not isinstance(slow, mdarray.DistArray):
        assert type(fast) is type(slow)
        np.testing.assert_array_equal(np.asarray(fast), np.asarray(slow), strict=True)
        return
    assert fast.layout == slow.layout
    assert fast.mode is slow.mode
    assert fast.dtype == slow.dtype
    for a, b in zip(fast.storage.buffers, slow.storage.buffers):
        bits = [np.ascontiguousarray(_host(c)).reshape(-1).view(np.uint8) for c in (a, b)]
        np.testing.assert_array_equal(*bits, strict=True)


def _calls(x):
    """The calls under test on `x`, each a function of nothing (repeated to reach the
    plans), its NumPy reference or None."""
    axes = [None, *range(x.ndim), *([(0, x.ndim - 1)] if x.ndim > 1 else [])]
    out = []
    for axis in axes:
        for keepdims in (False, True):
            out.append(lambda a=axis, k=keepdims: np.sum(x, axis=a, keepdims=k))
            out.append(lambda a=axis, k=keepdims: np.max(x, axis=a, keepdims=k))
            out.append(lambda a=axis, k=keepdims: np.prod(x, axis=a, keepdims=k))
            out.append(lambda a=axis, k=keepdims: np.mean(x, axis=a, keepdims=k))
            out.append(lambda a=axis: np.sum(x, axis=a, dtype=np.float64))
            out.append(lambda a=axis: np.add.reduce(x, axis=a, keepdims=True))
    for axis in range(x.ndim):
        for keepdims in (False, True):
            out.append(lambda a=axis, k=keepdims: np.argmin(x, axis=a, keepdims=k))
            out.append(lambda a=axis, k=keepdims: np.argmax(x, axis=a, keepdims=k))
    return out


def _pairs(dtype):
    return dist_pairs(dtype=dtype)


def _run(fn):
    """``fn()``, or the exception type it raised (NumPy's errors stay NumPy's); NumPy's
    warnings (the mean of an empty slice) are not what is compared."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    except (TypeError, ValueError) as error:
        return type(error)


@settings(max_examples=25)
@given(st.sampled_from([np.float32, np.float64, np.int32, np.bool_]).flatmap(_pairs))
def test_cached_plans_give_the_general_paths_results(pair):
    x, _ = pair
    # Per chunk on both sides: the blocked kernels have their own test below.
    with mdarray.options(fallback="raise"), per_chunk():
        calls = _calls(x)
        fast = [(_run(fn), _run(fn)) for fn in calls]  # the second run uses the plans
        with pytest.MonkeyPatch.context() as monkeypatch:
            _general(monkeypatch)
            slow = [_run(fn) for fn in calls]
    for (first, again), reference in zip(fast, slow):
        if isinstance(reference, type):
            assert first is reference
            assert again is reference
            continue
        _assert_same(first, reference)
        _assert_same(again, reference)
        for partial in (again, reference):
            assert partial.get().dtype == reference.dtype
        _assert_same(again.get(), reference.get())
        _assert_same(again.change_mode("replica"), reference.change_mode("replica"))


@given(st.sampled_from([np.float32, np.int64, np.complex64]).flatmap(_pairs))
def test_reductions_match_numpy(pair):
    x, value = pair
    assume(
        x.ndim >= 1 and x.size > 0
    )  # empty inputs: test_cached_plans_give_the_general_paths_results
    with mdarray.options(fallback="raise"):
        for _ in range(2):
            assert_allclose(np.sum(x), np.sum(value), rtol=1e-5)
            # The partial sums combine in another order than NumPy's pairwise sum: a
            # rounding apart where the sum cancels to 0.
            assert_allclose(np.mean(x, axis=0), np.mean(value, axis=0), rtol=1e-5, atol=1e-6)
            assert_allclose(np.sum(x, axis=-1, keepdims=True), np.sum(value, -1, keepdims=True))
            assert_array_equal(
                np.prod(x, axis=0, dtype=np.complex128), np.prod(value, 0, np.complex128)
            )
            if x.dtype.kind != "c":
                assert_array_equal(np.argmin(x, axis=-1), np.argmin(value, axis=-1))
                assert_array_equal(np.max(x), np.max(value))
            assert float(abs(np.sum(x))) == pytest.approx(float(abs(np.sum(value))), rel=1e-5)


@settings(max_examples=40)
@given(
    cuts=st.lists(st.integers(0, 12), max_size=4),
    columns=st.integers(1, 4),
    dtype=st.sampled_from([np.float32, np.float64, np.int32, np.bool_]),
    mode=st.sampled_from(["replica", "sum", "max"]),
    data=st.data(),
)
def test_blocked_reductions_run_once_per_device_and_match_numpy(cuts, columns, dtype, mode, data):
    """Row chunks on one device make one block: each reduction (and argmin along the rows)
    runs one kernel per device, gives NumPy's values, and equals the per-chunk path's
    values; along the rows the result is packed in the per-chunk layout, across them it
    holds one result per device."""
    edges = [0, *sorted(cuts), 12]
    value = (np.arange(12 * columns) % 7 - 3).reshape(12, columns).astype(dtype)
    index_map = {
        device(0): [(slice(a, b), slice(None)) for a, b in pairwise(edges)],
    }
    x = mdarray.distributed_array(value, index_map)
    if mode != "replica" and dtype is not np.bool_:
        x = x.change_mode(mode)
    value = x.get()
    blocked = len(edges) > 2 and all(b > a for a, b in pairwise(edges))
    axis = data.draw(st.sampled_from([None, 0, 1, -1, (0, 1)]))
    keepdims = data.draw(st.booleans())
    kernels = []
    backend = x.storage.backend
    real = backend.reduce

    def counted(*args):
        kernels.append(args[1].shape)
        return real(*args)

    with mdarray.options(fallback="raise"), pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(backend, "reduce", counted)
        for func in (np.sum, np.max, np.mean):
            if func is np.max and x.mode.name == "sum":
                continue
            got = [func(x, axis=axis, keepdims=keepdims) for _ in range(2)]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = func(value, axis=axis, keepdims=keepdims)
            for result in got:
                # Partial sums combine in another order than NumPy's pairwise sum: rounded
                # apart by an ulp of the elements where the sum cancels to 0.
                assert_allclose(result, want, rtol=1e-6, atol=1e-6 if func is np.mean else 0)
                if axis in (1, -1) and x.mode.name == "replica" and blocked:
                    assert result.storage.slabs is not None  # packed per chunk
        if x.mode.name == "replica" and dtype is not np.bool_:
            assert_array_equal(np.argmin(x, axis=1), np.argmin(value, axis=1))
    # Never a chunk alone but the device's block (a partial input that a reduction
    # combines first makes fresh chunks, which need not lie as one block).
    if x.mode.name == "replica" and blocked:
        assert set(kernels) <= {value.shape}
    with per_chunk():
        for func in (np.sum, np.mean):
            # atol: per-chunk sums combine in another order than NumPy's pairwise sum.
            assert_allclose(func(x, axis=axis), func(value, axis=axis), rtol=1e-6, atol=1e-6)


def test_a_plan_is_not_reused_for_another_layout_mode_or_dtype():
    rng = np.random.default_rng(2)
    host = rng.integers(-5, 5, (12, 6))
    layouts = [
        spread({0: (slice(0, 5), slice(None)), 1: (slice(5, 12), slice(None))}),
        spread({0: (slice(0, 12), slice(0, 2)), 1: (slice(0, 12), slice(2, 6))}),
        spread({0: (slice(0, 8), slice(None)), 1: (slice(4, 12), slice(None))}),  # overlaps
        spread({0: (slice(0, 12), slice(None)), 1: (slice(0, 0), slice(None))}),  # empty chunk
    ]
    with mdarray.options(fallback="raise"):
        for _ in range(2):
            for index_map in layouts:
                for dtype in (np.int8, np.float32, np.float64, np.bool_):
                    value = host.astype(dtype)
                    for mode in ("replica", "sum", "max"):
                        x = mdarray.distributed_array(value, index_map).change_mode(mode)
                        for axis in (None, 0, 1):
                            for keepdims in (False, True):
                                expected = np.sum(value, axis=axis, keepdims=keepdims)
                                got = np.sum(x, axis=axis, keepdims=keepdims)
                                assert_array_equal(got, expected)
                                assert_array_equal(
                                    np.max(x, axis=axis, keepdims=keepdims),
                                    np.max(value, axis=axis, keepdims=keepdims),
                                )
                                assert_allclose(
                                    np.mean(x, axis=axis, keepdims=keepdims),
                                    np.mean(value, axis=axis, keepdims=keepdims),
                                    rtol=1e-6,
                                )
                        assert_array_equal(np.argmin(x, axis=1), np.argmin(value, axis=1))
                        assert_array_equal(np.sum(x, dtype=np.int16), np.sum(value, dtype=np.int16))


def test_errors_are_raised_every_time_never_remembered():
    x = mdarray.distributed_array(
        np.arange(12.0).reshape(3, 4), spread({0: slice(0, 2), 1: slice(2, 3)})
    )
    for _ in range(3):
        with pytest.raises(np.exceptions.AxisError):
            np.sum(x, axis=2)
        with pytest.raises(TypeError):
            np.sum(x, axis=1.0)
        with pytest.raises(np.exceptions.AxisError):
            np.argmin(x, axis=3)
    assert_array_equal(np.sum(x, axis=1), np.arange(12.0).reshape(3, 4).sum(axis=1))


def test_mean_of_a_partial_and_of_float16():
    value = np.arange(24, dtype=np.float16).reshape(4, 6)
    x = mdarray.distributed_array(value, spread({0: slice(0, 1), 1: slice(1, 4)}))
    for _ in range(2):
        assert_allclose(np.mean(x), np.mean(value))
        assert np.mean(x).dtype == np.float16
        with per_chunk():  # a partial per chunk, even with one device
            s = np.sum(x.astype(np.float32), axis=0)
        assert s.mode is mdarray.SUM
        assert_allclose(np.mean(s), np.mean(value.astype(np.float32).sum(axis=0)))
