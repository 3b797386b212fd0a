"""Buffers shared by reshard and change_mode are copied before an in-place write."""

import copy
import gc
import pickle
import warnings
import weakref

import numpy as np
import pytest

import mdarray

BLOCKS = mdarray.Layout.block((8,), devices=mdarray.devices()[:2])


def _pair(make):
    host = np.arange(8.0)
    x = mdarray.distributed_array(host, BLOCKS)
    y = make(x)
    assert any(a is b for a in x.storage.buffers for b in y.storage.buffers), (
        "the test needs shared buffers"
    )
    return host, x, y


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x.change_mode("sum"),
        lambda x: x.change_mode("max"),
        lambda x: x.reshard(
            mdarray.Layout((8,), {**BLOCKS.index_map, 0: [slice(0, 4), slice(0, 8)]})
        ),
    ],
    ids=["sum", "max", "reshard"],
)
@pytest.mark.parametrize(
    "write",
    [
        lambda a: a.__setitem__(slice(1, 6), -5.0),
        lambda a: a.__iadd__(3.0),
        lambda a: np.multiply(a, 2.0, out=a),
    ],
    ids=["setitem", "iadd", "out"],
)
def test_writing_one_array_leaves_the_other(make, write):
    host, x, y = _pair(make)
    with mdarray.options(fallback="raise"):
        write(x)
    np.testing.assert_array_equal(y.get(), host)
    _, x, y = _pair(make)
    with mdarray.options(fallback="raise"):
        write(y)
    np.testing.assert_array_equal(x.get(), host)


def test_views_from_indexing_still_write_through():
    x = mdarray.distributed_array(np.arange(8.0), BLOCKS)
    view = x[2:6]
    view[...] = 0.0
    np.testing.assert_array_equal(x.get(), [0, 1, 0, 0, 0, 0, 6, 7])


# Views and copy on write together ---------------------------------------------------------
# A view (indexing, transpose, reshape) aliases its base: writes through either reach the
# other. An array made by reshard or change_mode is a copy that may share memory: writes
# through it, its base or their views never reach the other side. When a write makes an
# array copy the memory it shared, its views come along.

GRID = mdarray.Layout.grid((4, 6), (2, 2), devices=mdarray.devices()[:4])

# Ways to make an array that shares memory with `x` without being a view of it.
COPIES = {
    "change_mode(max)": lambda x: x.change_mode("max"),
    "change_mode(sum)": lambda x: x.change_mode("sum"),
    "reshard keeping chunks": lambda x: x.reshard(
        mdarray.Layout((4, 6), {**x.index_map, x.devices[0]: [*x.index_map[x.devices[0]], ()]})
    ),
    "reshard to its own layout": lambda x: x.reshard(x.layout),
}
# Ways to make a view, with NumPy's view of the same elements.
VIEWS = {
    "rows": (lambda a: a[1:3], lambda a: a[1:3]),
    "strided": (lambda a: a[::2, 1::2], lambda a: a[::2, 1::2]),
    "transpose": (lambda a: a.T, lambda a: a.T),
    "reshape": (lambda a: a.reshape(2, 2, 6), lambda a: a.reshape(2, 2, 6)),
}
# Writes, as (what), each applied to a DistArray and to its NumPy model.
WRITES = {
    "setitem": lambda a: a.__setitem__((slice(0, 2), slice(None)), -7.0),
    "iadd": lambda a: a.__iadd__(3.0),
    "ufunc out": lambda a: np.multiply(a, 2.0, out=a),
    "sum out": lambda a: np.sum(np.ones_like(a), axis=0, keepdims=True, out=a[:1]),
}


def _model():
    host = np.arange(24.0).reshape(4, 6)
    return host, mdarray.distributed_array(host, GRID)


@pytest.mark.parametrize("copy", sorted(COPIES))
@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("who", ["base", "view", "copy", "copy's view"])
@pytest.mark.parametrize("write", sorted(WRITES))
def test_views_and_copies_behave_as_numpy(copy, view, who, write):
    host, x = _model()
    make_view, numpy_view = VIEWS[view]
    y = COPIES[copy](x)
    y_host = host.copy()
    v, w = make_view(x), make_view(y)
    writer = {"base": x, "view": v, "copy": y, "copy's view": w}[who]
    model = {
        "base": host,
        "view": numpy_view(host),
        "copy": y_host,
        "copy's view": numpy_view(y_host),
    }[who]
    with mdarray.options(fallback="raise"):
        WRITES[write](writer)
    WRITES[write](model)
    np.testing.assert_array_equal(x.get(), host)
    np.testing.assert_array_equal(v.get(), numpy_view(host))
    np.testing.assert_array_equal(y.get(), y_host)
    np.testing.assert_array_equal(w.get(), numpy_view(y_host))


def test_a_copy_on_write_keeps_earlier_views_attached():
    """x copies the chunk it shares with y; the view made before still writes into x."""
    host, x = _model()
    y = x.change_mode("max")
    v = x[0:2]
    x[1] = -1.0  # x moves to a copy of the shared memory; v comes along
    v[...] = 99.0
    host[1] = -1.0
    host[0:2] = 99.0
    np.testing.assert_array_equal(x.get(), host)
    np.testing.assert_array_equal(y.get(), np.arange(24.0).reshape(4, 6))


@pytest.mark.parametrize(
    "write",
    [
        lambda x: x.__iadd__(2),
        lambda x: x.__imul__(2),
        lambda x: np.add(x, 2, out=x),
    ],
    ids=["+= 2", "*= 2", "add out"],
)
@pytest.mark.parametrize("mode", ["sum", "prod", "max"])
def test_in_place_ops_on_partial_arrays_keep_views(write, mode):
    host = np.arange(1.0, 25.0).reshape(4, 6)
    x = mdarray.distributed_array(host, mdarray.Layout.replicated((4, 6), GRID.devices), mode)
    v = x[:]
    with mdarray.options(fallback="raise"):
        write(x)
    want = host.copy()
    write(want)
    np.testing.assert_array_equal(x.get(), want)
    np.testing.assert_array_equal(v.get(), want)


# Memory seen outside mdarray ---------------------------------------------------------
# A DLPack export views the array's memory. That memory stays the array's: an array
# sharing it by copy on write moves off it (before the export, or at once after), so
# writes through the export and through the array reach each other, and nothing else.

ONE = mdarray.Layout.replicated((4, 6), devices=mdarray.devices()[:1])


@pytest.mark.parametrize("copy", sorted(COPIES))
@pytest.mark.parametrize("when", ["copy made before the export", "copy made after it"])
def test_an_exported_array_keeps_its_memory(copy, when):
    host = np.arange(24.0).reshape(4, 6)
    x = mdarray.distributed_array(host, ONE)
    xp = x.storage.backend.xp
    y = COPIES[copy](x) if when.endswith("before the export") else None
    seen = xp.from_dlpack(x)
    y = COPIES[copy](x) if y is None else y
    with mdarray.options(fallback="raise"):
        x[0, 0] = -1.0
        np.multiply(x, 2.0, out=x)
    seen[0, 1] = -2.0
    want = host * 2.0
    want[0, 0], want[0, 1] = -2.0, -2.0
    np.testing.assert_array_equal(x.get(), want)
    np.testing.assert_array_equal(xp.asnumpy(seen) if xp is not np else seen, want)
    np.testing.assert_array_equal(y.get(), host)
    y[1, 1] = -3.0
    assert float(seen[1, 1]) == want[1, 1]


# Views that join their family late ---------------------------------------------------------
# A view by slices or a transpose is made with none of its family's bookkeeping: it holds
# its source and joins the family when its own buffers are first made. Every move of the
# family before then (a copy on write, a write computed into new memory) must reach it as
# NumPy's view would see the write, and a view of such a view too.

LATE = ["rows", "strided", "transpose"]


@pytest.mark.parametrize("copy", sorted(COPIES))
@pytest.mark.parametrize("view", LATE)
@pytest.mark.parametrize("writer", ["base", "view", "view of the view"])
@pytest.mark.parametrize("read", ["unread", "read first"])
def test_a_view_outside_its_family_sees_every_move(copy, view, writer, read):
    """Read or not (an op reads a late view's buffers from its source's, without joining
    the family), a late view follows its family onto new memory."""
    host, x = _model()
    make_view, numpy_view = VIEWS[view]
    v = make_view(x)
    vv = make_view(x)[1:]  # (v is not its source: both stay outside the family)
    if read == "read first":
        with mdarray.options(fallback="raise"):
            np.testing.assert_array_equal((v + vv[:1] * 0.0).get(), numpy_view(host))
    y = COPIES[copy](x)  # shares x's memory: the first write moves x's family
    with mdarray.options(fallback="raise"):
        {"base": x, "view": v, "view of the view": vv}[writer].__iadd__(1.0)
        x[0, 0] = -1.0
    want = host.copy()
    {"base": want, "view": numpy_view(want), "view of the view": numpy_view(want)[1:]}[
        writer
    ].__iadd__(1.0)
    want[0, 0] = -1.0
    np.testing.assert_array_equal(vv.get(), numpy_view(want)[1:])
    np.testing.assert_array_equal(v.get(), numpy_view(want))
    np.testing.assert_array_equal(x.get(), want)
    np.testing.assert_array_equal(y.get(), host)


@pytest.mark.parametrize("view", LATE)
def test_a_view_keeps_what_it_views_when_its_source_is_dropped(view):
    host, _ = _model()
    make_view, numpy_view = VIEWS[view]
    v = make_view(mdarray.distributed_array(host, GRID))
    gc.collect()
    v[0] = -4.0  # its own memory now: nothing else sees it
    want = numpy_view(host.copy())
    want[0] = -4.0
    np.testing.assert_array_equal(v.get(), want)
    np.testing.assert_array_equal(copy.deepcopy(v).get(), want)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(v)).get(), want)


@pytest.mark.parametrize("view", LATE)
@pytest.mark.parametrize("write", sorted(WRITES))
@pytest.mark.parametrize("writer", ["base", "view"])
@pytest.mark.parametrize("read", ["unread", "read first"])
def test_a_late_view_of_a_new_array_sees_every_write(view, write, writer, read):
    """An op's result is tracked by nobody: its late view leaves it so, read or not,
    and a write through either (in place, or computed into new memory and committed)
    reaches both."""
    host, x = _model()
    make_view, numpy_view = VIEWS[view]
    y, want = x * 1.0, host * 1.0
    v = make_view(y)
    if read == "read first":
        np.testing.assert_array_equal(mdarray.sum(v, axis=0).get(), numpy_view(want).sum(axis=0))
    with mdarray.options(fallback="raise"):
        WRITES[write](y if writer == "base" else v)
    WRITES[write](want if writer == "base" else numpy_view(want))
    np.testing.assert_array_equal(v.get(), numpy_view(want))
    np.testing.assert_array_equal(y.get(), want)
    np.testing.assert_array_equal(x.get(), host)


@pytest.mark.skipif(len(mdarray.devices()) < 2, reason="a view on fewer devices needs two")
def test_a_view_on_fewer_devices_lets_its_source_go():
    """A view on some of its source's devices joins its family at once: it keeps the
    memory it views, not its source (whose other devices' memory would stay with it)."""
    host = np.arange(24.0).reshape(4, 6)
    x = mdarray.distributed_array(host, GRID)
    whole, part = x[:, ::-1], x[:1, :3]  # every device; only the first
    assert len(part.devices) < len(x.devices) == len(whole.devices)
    source = weakref.ref(x.storage)
    del x
    gc.collect()
    assert source() is not None  # the late view over every device holds it
    del whole
    gc.collect()
    assert source() is None
    np.testing.assert_array_equal(part.get(), host[:1, :3])


@pytest.mark.parametrize("read", ["unread", "read first"])
def test_a_late_view_of_an_exported_array_shares_nothing_it_derives(read):
    """A result sharing a late view's memory (a mode change) is a copy where the view's
    family is exported, whether an op read the view first or not: writes through the
    export never reach it."""
    host = np.arange(24.0).reshape(4, 6)
    x = mdarray.distributed_array(host, ONE)
    xp = x.storage.backend.xp
    seen = xp.from_dlpack(x)
    v = x[1:3]
    if read == "read first":
        np.testing.assert_array_equal((v + 0.0).get(), host[1:3])
    y = v.change_mode("sum")
    seen[1, 0] = -5.0
    np.testing.assert_array_equal(y.get(), host[1:3])
    want = host.copy()
    want[1, 0] = -5.0
    np.testing.assert_array_equal(v.get(), want[1:3])


def test_a_shifted_update_between_new_arrays_tracks_neither():
    """``y[1:, :] -= u[:-1, :]`` with y and u new results (a Laplacian's step): memory no
    family tracks is its own array's, so the write needs no copy-on-write bookkeeping
    (neither joins a family) and gives NumPy's values; within one array
    (``y[1:, :] -= y[:-1, :]``) the overlap is seen and NumPy's values kept."""
    host = np.arange(48.0).reshape(8, 6)
    device = mdarray.devices()[0]
    x = mdarray.distributed_array(host, mdarray.Layout.block(host.shape, devices=[device] * 4))
    u, y = x * 1.0, x * 4.0
    want_u, want_y = host * 1.0, host * 4.0
    # Warnings as warnings (the suite makes them errors, after which a cpu kernel may
    # raise midway and writes are staged: another path).
    with mdarray.options(fallback="raise"), warnings.catch_warnings():
        warnings.simplefilter("default")
        y[1:, :] -= u[:-1, :]
        y[:, :-1] -= u[:, 1:]
    want_y[1:, :] -= want_u[:-1, :]
    want_y[:, :-1] -= want_u[:, 1:]
    np.testing.assert_array_equal(y.get(), want_y)
    np.testing.assert_array_equal(u.get(), want_u)
    assert u.storage._family is None
    assert y.storage._family is None
    y[1:, :] -= y[:-1, :]
    want_y[1:, :] -= want_y[:-1, :].copy()
    np.testing.assert_array_equal(y.get(), want_y)
