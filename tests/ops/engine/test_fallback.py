"""The fallback never loses a write: NumPy functions that write into a DistArray argument
(through the gathered copy) change the DistArray exactly as they change an ndarray."""

import numpy as np
import pytest
from _layouts import dist_pairs
from hypothesis import given, settings, strategies as st

import mdarray

# (name, call): each call writes into its first argument `a` (a DistArray or an ndarray)
# and may return something; `b` is a second array of a's shape.
WRITERS = [
    ("copyto", np.copyto),
    ("copyto where", lambda a, b: np.copyto(a, b, where=b > 1)),
    ("put", lambda a, b: np.put(a, [0, -1], [7.0, 8.0])),
    ("putmask", lambda a, b: np.putmask(a, b > 1, b)),
    ("place", lambda a, b: np.place(a, b > 1, [5.0, 6.0])),
    (
        "put_along_axis",
        lambda a, b: np.put_along_axis(a, np.zeros((1, *a.shape[1:]), int), 9.0, axis=0),
    ),
    ("nan_to_num copy=False", lambda a, b: np.nan_to_num(a, copy=False)),
    ("add.at", lambda a, b: np.add.at(a, [0, 0, -1], 1.0)),
    ("multiply.at", lambda a, b: np.multiply.at(a, ([0, 0],), 3.0)),
    # dot and einsum are native on DistArray operands; these calls still take the
    # fallback: only out= is a DistArray, or einsum is given dtype=.
    (
        "dot out",
        lambda a, b: np.dot(
            np.eye(a.shape[0]), np.asarray(b) if isinstance(a, np.ndarray) else b.get(), out=a
        ),
    ),
    ("einsum out", lambda a, b: np.einsum("ij->ij", b, out=a, dtype=np.float64)),
]


@pytest.mark.parametrize(("name", "call"), WRITERS, ids=[w[0] for w in WRITERS])
@settings(max_examples=15)
@given(data=st.data())
def test_fallback_writes_reach_the_distarray(name, call, data):
    shape = (3, 2) if "fill" not in name else (3, 3)
    x, value = data.draw(dist_pairs(shape=shape, dtype=np.dtype("float64")))
    y, other = data.draw(dist_pairs(shape=shape, dtype=np.dtype("float64")))
    if name == "nan_to_num copy=False":
        value[0, 0] = np.nan
        x[0, 0] = np.nan
    view = x[1:]  # a view: NumPy's write reaches it through x's buffers
    want = value.copy()
    want_returned = call(want, other)
    with mdarray.options(fallback="allow"):
        returned = call(x, y)
    np.testing.assert_array_equal(x.get(), want)
    np.testing.assert_array_equal(view.get(), want[1:])
    np.testing.assert_array_equal(y.get(), other)  # the source is untouched
    if want_returned is None:
        assert returned is None
    elif isinstance(want_returned, np.ndarray) and np.shares_memory(want_returned, want):
        assert returned is x  # nan_to_num(copy=False), out=: the written array itself


# The writers that have native implementations now, through the fallback itself (what a
# call takes where an argument is not covered natively, or in an SPMD run).
DIRECT = [
    ("copyto", np.copyto, lambda a, b: (a, b), {}),
    ("put", np.put, lambda a, b: (a, [0, -1], [7.0, 8.0]), {}),
    ("putmask", np.putmask, lambda a, b: (a, b > 1, b), {}),
    ("place", np.place, lambda a, b: (a, b > 1, [5.0, 6.0]), {}),
    ("fill_diagonal", np.fill_diagonal, lambda a, b: (a, -1.0), {"wrap": True}),
    ("put_along_axis", np.put_along_axis, lambda a, b: (a, np.zeros((1, 2), int), 9.0, 0), {}),
]


@pytest.mark.parametrize(("name", "func", "args", "kwargs"), DIRECT, ids=[d[0] for d in DIRECT])
def test_the_fallback_itself_writes_back(name, func, args, kwargs):
    value = np.arange(6.0).reshape(3, 2)
    other = np.arange(6.0).reshape(3, 2)[::-1].copy()
    x = mdarray.distributed_array(value, mdarray.Layout.block((3, 2), devices=mdarray.devices()))
    y = mdarray.asarray(other)
    want = value.copy()
    func(*args(want, other), **kwargs)
    with mdarray.options(fallback="allow"):
        mdarray._ops.engine.fallback.fallback(func, args(x, y), kwargs, f"numpy.{name}")
    np.testing.assert_array_equal(x.get(), want)


def test_fill_diagonal_writes_back():
    value = np.arange(9.0).reshape(3, 3)
    x = mdarray.distributed_array(
        value, mdarray.Layout.block((3, 3), axis=1, devices=mdarray.devices())
    )
    want = value.copy()
    np.fill_diagonal(want, -1)
    with mdarray.options(fallback="allow"):
        np.fill_diagonal(x, -1)
    np.testing.assert_array_equal(x.get(), want)


def test_a_failed_fallback_writes_nothing():
    value = np.arange(6.0).reshape(3, 2)
    x = mdarray.distributed_array(value, mdarray.Layout.block((3, 2), devices=mdarray.devices()))
    with mdarray.options(fallback="allow"), pytest.raises(IndexError):
        np.put(x, [0, 100], [1.0, 2.0])  # NumPy checks every index first; so nothing moves
    np.testing.assert_array_equal(x.get(), value)


def test_zero_d_results_of_a_fallback_are_zero_d_distarrays():
    """np.median(x) (native now; it gathered once) gives a 0-d DistArray, as the native
    reductions and the fallback do; a Python result (np.allclose's bool) stays Python."""
    value = np.arange(6.0).reshape(3, 2)
    x = mdarray.distributed_array(value, mdarray.Layout.block((3, 2), devices=mdarray.devices()))
    with mdarray.options(fallback="allow"):
        median = np.median(x)
        close = np.allclose(x, x)
    assert isinstance(median, mdarray.DistArray)
    assert median.shape == ()
    assert float(median) == np.median(value)
    assert close is True
