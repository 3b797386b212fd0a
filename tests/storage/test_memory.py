"""Copies and pickles of arrays (`mdarray._storage.memory`), against NumPy's on the same data.

A copy (``copy.copy``, ``copy.deepcopy``) or a pickling round trip is a new array with
the same value, layout, mode, dtype and devices, sharing nothing with the original; arrays
copied together share nothing with each other either (NumPy's views come apart in a
deepcopy too), though their copies may share memory (copy on write keeps them apart). A
pickle holds each byte once. Recipes of views are flat: a chain of views stays readable.
"""

import copy
import importlib.util
import pickle

import numpy as np
import pytest
from _backend_facts import numpy_dtypes_only

import mdarray
from mdarray._storage import memory as _memory

DEVICES = mdarray.devices()
GRID = mdarray.Layout.grid((4, 6), (2, 2), devices=DEVICES[:4])
HOST = np.arange(24.0).reshape(4, 6)

ROUND_TRIPS = {
    "pickle": lambda x: pickle.loads(pickle.dumps(x)),
    "deepcopy": copy.deepcopy,
    "copy": copy.copy,
}
if importlib.util.find_spec("cloudpickle") is not None:
    import cloudpickle

    ROUND_TRIPS["cloudpickle"] = lambda x: pickle.loads(cloudpickle.dumps(x))

# Arrays as users meet them, with NumPy's array of the same elements.
VIEWS = {
    "fresh": lambda a: a,
    "rows": lambda a: a[1:3],
    "strided": lambda a: a[::2, 1::2],
    "reversed": lambda a: a[::-1, ::-2],
    "transpose": lambda a: a.T,
    "reshape": lambda a: a.reshape(24),
}
# Ways an array comes to share memory with another or be viewed (tracked storage).
SHARED = {
    "indexed once": lambda x: (x[0], x)[1],
    "change_mode": lambda x: x.change_mode("replica"),
    "reshard": lambda x: x.reshard(x.layout),
    "sum mode": lambda x: x.change_mode("sum"),
}


def _array():
    return mdarray.distributed_array(HOST, GRID)


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("how", sorted(ROUND_TRIPS))
def test_a_round_trip_gives_a_connected_independent_array(how, view):
    x = VIEWS[view](_array())
    want = VIEWS[view](HOST.copy())
    y = ROUND_TRIPS[how](x)
    assert (y.layout, y.mode, y.dtype, y.device) == (x.layout, x.mode, x.dtype, x.device)
    y += 10  # reaches every chunk of y: its chunk views and its memory agree
    want += 10
    np.testing.assert_array_equal(y.get(), want)
    np.testing.assert_array_equal((y + 0).get(), want)
    y[(0,) * y.ndim] = 100
    want[(0,) * y.ndim] = 100
    np.testing.assert_array_equal((y * 1).get(), want)
    np.testing.assert_array_equal(y.get(), want)
    np.testing.assert_array_equal(x.get(), VIEWS[view](HOST))


@pytest.mark.parametrize("how", sorted(ROUND_TRIPS))
def test_writes_to_the_original_never_reach_the_copy(how):
    x = _array()
    y = ROUND_TRIPS[how](x)
    x += 1
    x[0] = -1
    np.testing.assert_array_equal(y.get(), HOST)


@pytest.mark.parametrize("shared", sorted(SHARED))
@pytest.mark.parametrize("how", sorted(ROUND_TRIPS))
def test_arrays_once_viewed_or_shared_copy_and_pickle(how, shared):
    made = SHARED[shared](_array())
    y = ROUND_TRIPS[how](made)
    assert y.mode is made.mode
    np.testing.assert_array_equal(y.get(), HOST)
    y -= 1
    np.testing.assert_array_equal(y.get(), HOST - 1)
    np.testing.assert_array_equal(made.get(), HOST)


def test_copy_copy_is_a_copy_as_numpys():
    x = _array()
    y = copy.copy(x)
    y[1] = 7.0
    x[2] = 5.0
    a = HOST.copy()
    b = copy.copy(a)
    b[1] = 7.0
    a[2] = 5.0
    np.testing.assert_array_equal(x.get(), a)
    np.testing.assert_array_equal(y.get(), b)


# A second array related to the first, with NumPy's relative: views are views; arrays
# that share memory by copy on write are copies to NumPy.
SECOND = {
    "view": (lambda x: x[1:], lambda a: a[1:]),
    "transpose": (lambda x: x.T, lambda a: a.T),
    "change_mode": (lambda x: x.change_mode("replica"), np.copy),
    "reshard": (lambda x: x.reshard(x.layout), np.copy),
    "same": (lambda x: x, lambda a: a),
}


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
@pytest.mark.parametrize("second", sorted(SECOND))
def test_arrays_copied_together_keep_no_link_as_numpys(how, second):
    """NumPy: ``deepcopy([a, a[1:]])`` gives two independent arrays, ``[a, a]`` one."""
    trip = ROUND_TRIPS[how]
    ours, numpys = SECOND[second]
    x = _array()
    y = ours(x)
    a = HOST.copy()
    cx, cy = trip([x, y])
    ca, cb = trip([a, numpys(a)])
    assert (cx is cy) == (ca is cb)
    cx[...] = -1.0
    ca[...] = -1.0
    np.testing.assert_array_equal(cy.get(), cb)
    np.testing.assert_array_equal(cx.get(), ca)
    cy[...] = 3.0
    cb[...] = 3.0
    np.testing.assert_array_equal(cx.get(), ca)
    np.testing.assert_array_equal(x.get(), HOST)
    np.testing.assert_array_equal(y.get(), numpys(HOST))


def test_a_pickle_holds_each_byte_once():
    n = 1 << 15
    fresh = mdarray.arange(n, dtype=np.float64)
    overhead = 4096
    assert len(pickle.dumps(fresh)) < fresh.nbytes + overhead
    viewed = mdarray.arange(n, dtype=np.float64)
    viewed[3:]  # tracked from now on
    assert len(pickle.dumps(viewed)) < viewed.nbytes + overhead
    # Two arrays sharing memory (copy on write) pickle it once together.
    pair = [viewed, viewed.change_mode("replica")]
    assert len(pickle.dumps(pair)) < viewed.nbytes + 2 * overhead
    # A small view of a large array holds its own elements, not the large one's.
    small = viewed[5:15]
    assert len(pickle.dumps(small)) < small.nbytes + overhead


@numpy_dtypes_only
def test_deepcopy_copies_the_elements_of_object_arrays_as_numpys():
    host = np.empty(4, dtype=object)
    host[:] = [[1], [2], [3], [4]]
    x = mdarray.distributed_array(host, mdarray.Layout.block((4,), devices=DEVICES[:2]))
    deep, shallow = copy.deepcopy(x), copy.copy(x)
    host_deep, host_shallow = copy.deepcopy(host), copy.copy(host)
    x.get()[0].append(9)  # the element objects themselves: host[0] is x's first element
    host[0].append(9)
    assert deep.get().tolist() == host_deep.tolist()
    assert shallow.get().tolist() == host_shallow.tolist()


def test_unpickling_without_the_devices_raises_naming_them(monkeypatch):
    x = mdarray.distributed_array(HOST, GRID)
    data = pickle.dumps(x)

    class Fewer:  # the backend of a process with none of x's devices
        name = x.backend
        device_ids = ()

    monkeypatch.setattr(_memory, "get_backend", lambda name: Fewer())
    with pytest.raises(ValueError, match=rf"devices \[{', '.join(map(str, x.devices))}\]"):
        pickle.loads(data)


def test_unpickling_keeps_the_device_group():
    x = _array()
    part = x[:1, :1]  # on fewer devices than its group, where there are several
    y = pickle.loads(pickle.dumps(part))
    assert y.device == x.device
    assert y.devices == part.devices


def test_a_long_chain_of_views_stays_readable_after_a_copy_on_write():
    """Recipes are flat: a view of a view of ... reads its chunks in one loop."""
    x = mdarray.distributed_array(np.arange(8.0), mdarray.Layout.block((8,), devices=DEVICES))
    other = x.change_mode("replica")  # shares x's memory: a write to x copies it
    v = x
    for _ in range(1200):
        v = v[:]
    x[0] = 5.0
    want = np.arange(8.0)
    want[0] = 5.0
    np.testing.assert_array_equal(v.get(), want)
    v[1] = 6.0
    want[1] = 6.0
    np.testing.assert_array_equal(x.get(), want)
    np.testing.assert_array_equal(other.get(), np.arange(8.0))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(v)).get(), want)


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_view_and_its_shared_copy_copied_together_keep_no_link(how):
    """A view uses part of its chunks' memory, so a pickle keeps the view's own elements;
    a copy of the view that shares them (copy on write) must not come back writing into
    the view's (found by the lockstep test: both pickled the one buffer once)."""
    x = _array()
    view = x[1:]
    shared = view.change_mode("replica")
    for first, second in [(shared, view), (view, shared)]:
        got_first, got_second = ROUND_TRIPS[how]([first, second])
        got_second[...] = -1.0
        np.testing.assert_array_equal(got_first.get(), HOST[1:])
        got_first[...] = 3.0
        np.testing.assert_array_equal(got_second.get(), np.full_like(HOST[1:], -1.0))
    np.testing.assert_array_equal(x.get(), HOST)
