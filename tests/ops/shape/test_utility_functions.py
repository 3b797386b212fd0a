"""diff against NumPy over drawn layouts and modes (n, axis, prepend and append), natively:
under ``fallback="raise"``, and moving only the halo rows."""

import numpy as np
import pytest
from _layouts import devices, dist_pairs, holders
from hypothesis import given, settings, strategies as st

import mdarray
from mdarray.testing import assert_dist_equal


@settings(max_examples=40)
@given(
    st.sampled_from(["float64", "int32", "uint8", "bool"]).flatmap(
        lambda dtype: dist_pairs(dtype=dtype)
    ),
    st.data(),
)
def test_diff_matches_numpy(pair, data):
    x, value = pair
    bound = max(x.ndim, 1)
    axis = data.draw(st.integers(-bound - 1, bound))
    n = data.draw(st.integers(-1, 3))
    kwargs: dict = {"axis": axis, "n": n}
    numpy_kwargs = dict(kwargs)
    for side in ("prepend", "append"):
        if data.draw(st.booleans()) and -x.ndim <= axis < x.ndim:
            shape = list(value.shape)
            shape[axis] = data.draw(st.integers(0, 2))
            extra, extra_value = data.draw(dist_pairs(shape=tuple(shape), dtype=value.dtype))
            kwargs[side], numpy_kwargs[side] = extra, extra_value
    if data.draw(st.booleans()) and -x.ndim <= axis < x.ndim:
        kwargs["append"] = numpy_kwargs["append"] = 7  # a scalar, broadcast along axis
    try:
        want = np.diff(value, **numpy_kwargs)
    except Exception as error:
        with pytest.raises(type(error)), mdarray.options(fallback="raise"):
            mdarray.diff(x, **kwargs)
        return
    with mdarray.options(fallback="raise"):
        assert_dist_equal(mdarray.diff(x, **kwargs), want)
        assert_dist_equal(np.diff(x, **kwargs), want)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_diff_moves_only_the_halo(n):
    """Row blocks along axis 0: each chunk boundary between devices moves n rows,
    nothing else."""
    value = np.arange(60.0).reshape(12, 5) ** 2
    x = mdarray.distributed_array(
        value, mdarray.Layout.block(value.shape, devices=devices(0, 1, 2))
    )
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = np.diff(x, n=n, axis=0)
    # Elements with a neighbour below them on another device: n rows there.
    across = np.count_nonzero(np.diff(holders(x.layout), axis=0))
    assert moved.total == n * across * value.itemsize
    assert_dist_equal(got, np.diff(value, n=n, axis=0))
    assert got.devices == x.devices
    with mdarray.count_transfers() as moved:
        np.diff(x, n=n, axis=1)
    assert moved.total == 0


def test_diff_errors():
    got = mdarray.diff(mdarray.asarray(np.array([1, 4, 9])))
    assert_dist_equal(got, np.array([3, 5]))
    with mdarray.options(fallback="raise"):
        with pytest.raises(ValueError, match="at least one dimensional"):
            mdarray.diff(mdarray.asarray(np.float64(1.0)))
        with pytest.raises(np.exceptions.AxisError):
            mdarray.diff(mdarray.asarray(np.zeros(3)), axis=1)


@given(dist_pairs(shape=(8, 6)), st.integers(0, 8), st.integers(0, 8))
def test_shares_memory_answers_as_numpy_without_gathering(pair, start, stop):
    """``np.may_share_memory`` / ``np.shares_memory`` of an array and its views, copies
    and other arrays: NumPy's answer for the same relations, chunk buffers tested pair by
    pair on each device (``fallback="raise"``)."""
    x, host = pair
    view = x[start:stop]
    with mdarray.options(fallback="raise"):
        for name in ("may_share_memory", "shares_memory"):
            test = getattr(np, name)
            assert test(x, view) == test(host, host[start:stop])
            assert not test(x, x.copy())
            assert not test(x, mdarray.asarray(host))
            assert test(x, x.T) == bool(host.size)
            assert not test(view, x[stop:])


@pytest.mark.skipif(mdarray.default_backend() != "cpu", reason="host memory as chunks")
def test_shares_memory_sees_a_numpy_view_of_the_chunks():
    """``np.asarray(x)`` may view x's chunks (cpu backend): NumPy's memory tests see it,
    either way round, as scikit-learn's ``check_array`` asks before it writes in place."""
    x = mdarray.asarray(np.arange(24.0).reshape(4, 6))
    a = np.asarray(x)
    assert any(np.shares_memory(a, b) for b in x.storage.buffers)
    for name in ("may_share_memory", "shares_memory"):
        test = getattr(np, name)
        assert test(a, x)
        assert test(x, a)
        assert test(a[3:], x)
        assert not test(a.copy(), x)
