"""histogram, bincount, histogram2d and histogramdd against NumPy over drawn shapes,
dtypes, layouts and modes; what moves."""

import numpy as np
import pytest
from _layouts import LAYOUT_NAMES, dist_pairs, on_layout
from _oracle import native_like_numpy
from hypothesis import given, settings, strategies as st
from test_nan_reductions import nan_arrays

import mdarray
from mdarray import SUM, Layout

DEVICES = mdarray.devices()


def both(func, x, expected, **kwargs):
    """`func` on the DistArray (under fallback="raise") and on the NumPy array: the same
    values, dtypes and shapes, or the same exception type."""
    host = {k: v.get() if isinstance(v, mdarray.DistArray) else v for k, v in kwargs.items()}
    try:
        with np.errstate(all="ignore"):
            want = func(expected, **host)
    except Exception as error:
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            func(x, **kwargs)
        return None
    with mdarray.options(fallback="raise"), np.errstate(all="ignore"):
        got = func(x, **kwargs)
    for g, w in zip(*((got, want) if isinstance(want, tuple) else ((got,), (want,)))):
        assert isinstance(g, mdarray.DistArray)
        value = g.get()
        assert (value.shape, value.dtype) == (w.shape, w.dtype)
        np.testing.assert_allclose(value, w, rtol=1e-12, equal_nan=True)
    return got


@settings(deadline=None)
@given(st.data())
def test_bincount_matches_numpy(data):
    dtype = data.draw(st.sampled_from([np.int64, np.int32, np.uint8, np.bool_, np.float64]))
    n = data.draw(st.integers(0, 12))
    elements = st.integers(-1 if data.draw(st.booleans()) else 0, 9)
    if np.dtype(dtype).kind == "b":
        elements = st.booleans()
    elif np.dtype(dtype).kind == "u":
        elements = st.integers(0, 9)
    x, expected = data.draw(dist_pairs(shape=(n,), dtype=dtype, elements=elements))
    kwargs = {"minlength": data.draw(st.integers(0, 12))}
    if data.draw(st.booleans()):
        weights, _ = data.draw(dist_pairs(shape=(n,), dtype=np.float64))
        kwargs["weights"] = weights
    both(np.bincount, x, expected, **kwargs)


@settings(deadline=None)
@given(st.data())
def test_histogram_matches_numpy(data):
    x, expected = data.draw(nan_arrays([np.float64, np.float32, np.int64, np.int16]))
    bins = data.draw(
        st.integers(1, 12) | st.lists(st.integers(-25, 25), min_size=1, max_size=6).map(np.sort)
    )
    kwargs = {"bins": bins}
    if data.draw(st.booleans()):
        low = data.draw(st.integers(-25, 25))
        kwargs["range"] = (low, low + data.draw(st.integers(0, 10)))
    if data.draw(st.booleans()):
        kwargs["density"] = True
    if data.draw(st.booleans()):
        weights, _ = data.draw(dist_pairs(shape=x.shape, dtype=np.float64))
        kwargs["weights"] = weights
    both(np.histogram, x, expected, **kwargs)


@pytest.mark.parametrize("density", [False, True])
def test_integers_count_against_float_edges_as_numpy(density):
    """An empty range widens to [-0.5, 0.5] (float edges): integers outside it count in
    no bin, compared as NumPy compares them (found on CUDA, where 1 was counted)."""
    for value in (np.array(1), np.array([1, 0, -1, 3], dtype=np.int16)):
        x = mdarray.asarray(value)
        both(np.histogram, x, value, bins=1, range=(0, 0), density=density)
        both(np.histogram, x, value, bins=np.array([-1.5, 0.25, 2.5]), density=density)


@pytest.mark.parametrize("density", [False, True])
def test_one_edge_gives_no_bins(density):
    value = np.arange(12.0)
    x = mdarray.distributed_array(value, Layout.block(value.shape, devices=DEVICES))
    weights = mdarray.distributed_array(value + 1, Layout.block(value.shape, devices=DEVICES))
    both(np.histogram, x, value, bins=np.array([3]), density=density, weights=weights)
    both(np.histogram, x, value, bins=np.array([3]), density=density)


def test_counts_stay_partial_and_only_extremes_move():
    value = np.random.default_rng(0).integers(0, 50, 10**4)
    x = mdarray.distributed_array(value, Layout.block(value.shape, devices=DEVICES))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        counts = np.bincount(x)
        hist, _ = np.histogram(x, bins=7)
    assert counts.mode is SUM
    assert hist.mode is SUM
    assert moved.total < 100 * len(DEVICES) * 8
    np.testing.assert_array_equal(counts.get(), np.bincount(value))
    np.testing.assert_array_equal(hist.get(), np.histogram(value, bins=7)[0])


# histogram2d and histogramdd ------------------------------------------------------------

_SAMPLE = np.random.default_rng(8).normal(size=(40, 3))
_SAMPLE[3] = _SAMPLE[4]
_ND_CASES = {
    "histogramdd": (np.histogramdd, [_SAMPLE]),
    "histogramdd bins range": (
        lambda a: np.histogramdd(a, bins=(2, 3, 4), range=[(-1, 1), None, (0, 2)]),
        [_SAMPLE],
    ),
    "histogramdd edges density": (
        lambda a: np.histogramdd(
            a, bins=[np.array([-1, 0, 1.0]), 3, np.array([-2, 2.0])], density=True
        ),
        [_SAMPLE],
    ),
    "histogramdd weights": (
        lambda a, w: np.histogramdd(a, bins=3, weights=w),
        [_SAMPLE, np.arange(40.0)],
    ),
    "histogramdd ints": (lambda a: np.histogramdd(a, bins=3), [(_SAMPLE * 3).astype(int)]),
    "histogramdd vectors": (
        lambda a, b: np.histogramdd([a, b], bins=3),
        [_SAMPLE[:, 0], _SAMPLE[:, 1].astype(np.float32)],
    ),
    "histogramdd nan": (np.histogramdd, [np.where(_SAMPLE > 1, np.nan, _SAMPLE)]),
    "histogramdd nan in range": (
        lambda a: np.histogramdd(a, range=[(-1, 1)] * 3, bins=2),
        [np.where(_SAMPLE > 1, np.nan, _SAMPLE)],
    ),
    "histogramdd empty": (lambda a: np.histogramdd(a, bins=2), [np.zeros((0, 2))]),
    "histogram2d": (np.histogram2d, [_SAMPLE[:, 0], _SAMPLE[:, 1]]),
    "histogram2d bins": (
        lambda a, b: np.histogram2d(a, b, bins=[3, 5], density=True),
        [_SAMPLE[:, 0], _SAMPLE[:, 1]],
    ),
    "histogram2d edges": (
        lambda a, b: np.histogram2d(a, b, bins=np.linspace(-2, 2, 5)),
        [_SAMPLE[:, 0], _SAMPLE[:, 1]],
    ),
    "histogram2d not monotonic": (
        lambda a, b: np.histogram2d(a, b, bins=[np.array([2, 1, 3])] * 2),
        [_SAMPLE[:, 0], _SAMPLE[:, 1]],
    ),
    "histogram2d no bins": (
        lambda a, b: np.histogram2d(a, b, bins=0),
        [_SAMPLE[:, 0], _SAMPLE[:, 1]],
    ),
}


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("case", list(_ND_CASES))
def test_histograms_of_several_dimensions_match_numpy(case, layout):
    call, arguments = _ND_CASES[case]
    native_like_numpy(call, *(on_layout(a, layout) for a in arguments))
