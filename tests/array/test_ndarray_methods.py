"""ndarray's methods on DistArrays against the same methods of ndarrays."""

import numpy as np
import pytest
from _layouts import dist_pairs
from hypothesis import given, settings, strategies as st

import mdarray

# name -> call of the method on `a` (shape (3, 4), float64 or complex128).
CALLS = {
    "argsort": lambda a: a.argsort(axis=1, stable=True),
    "argpartition": lambda a: a.argpartition(0, axis=0),
    "clip": lambda a: a.real.clip(-1.0, 2.0),
    "compress": lambda a: a.compress([True, False, True], axis=0),
    "conj": lambda a: a.conj(),
    "conjugate": lambda a: a.conjugate(),
    "real": lambda a: a.real,
    "imag": lambda a: a.imag,
    "diagonal": lambda a: a.diagonal(1),
    "trace": lambda a: a.trace(),
    "dot": lambda a: a.dot(np.ones(4)),
    "flatten": lambda a: a.flatten(),
    "ravel": lambda a: a.ravel(),
    "nonzero": lambda a: a.nonzero(),
    "repeat": lambda a: a.repeat(2, axis=1),
    "round": lambda a: a.round(1),
    "searchsorted": lambda a: np.sort(a.real.ravel()).searchsorted(
        [0.0, 1.5]
    ),  # sorted: else undefined
    "squeeze": lambda a: a[:1].squeeze(),
    "swapaxes": lambda a: a.swapaxes(0, 1),
    "take": lambda a: a.take([0, 2], axis=1),
}
# name -> in-place call; the array itself is compared afterwards.
IN_PLACE = {
    "sort": lambda a: a.sort(axis=0),
    "partition": lambda a: a.partition(1, axis=1),
    "fill": lambda a: a.fill(3.5),
    "put": lambda a: a.put([0, 5], [7.0, 8.0]),
}


def _pairs(data, dtype):
    return data.draw(dist_pairs(shape=(3, 4), dtype=np.dtype(dtype)))


def _same(got, want):
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert isinstance(got, mdarray.DistArray), type(got)
    np.testing.assert_array_equal(got.get(), np.asarray(want))
    assert got.dtype == np.asarray(want).dtype


@pytest.mark.parametrize("name", sorted(CALLS))
@settings(max_examples=10)
@given(data=st.data())
def test_methods_match_ndarrays(name, data):
    dtype = "complex128" if name in ("conj", "conjugate", "real", "imag") else "float64"
    x, value = _pairs(data, dtype)
    if name == "argpartition":  # only the k-th position is defined; compare what it picks
        with mdarray.options(fallback="allow"):
            got = CALLS[name](x).get()
        np.testing.assert_array_equal(np.take_along_axis(value, got, 0)[0], np.sort(value, 0)[0])
        return
    with mdarray.options(fallback="allow"):
        got = CALLS[name](x)
    _same(got, CALLS[name](value))


@pytest.mark.parametrize("name", sorted(IN_PLACE))
@settings(max_examples=10)
@given(data=st.data())
def test_in_place_methods_write_through(name, data):
    x, value = _pairs(data, "float64")
    view = x[1:]
    want = value.copy()
    IN_PLACE[name](want)
    with mdarray.options(fallback="allow"):
        assert IN_PLACE[name](x) is None
    got = x.get()
    if name == "partition":  # only the k-th column is defined
        np.testing.assert_array_equal(got[:, 1], want[:, 1])
        np.testing.assert_array_equal(np.sort(got, axis=1), np.sort(want, axis=1))
        return
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(view.get(), want[1:])


def test_every_ndarray_method_is_there_or_left_out_on_purpose():
    left_out = {
        "base",
        "ctypes",
        "data",
        "flags",
        "flat",
        "strides",
        "byteswap",
        "getfield",
        "setfield",
        "setflags",
        "resize",
        "dump",
        "dumps",
        "tofile",
        "tobytes",
        "choose",
    }
    # NumPy < 2.4 still lists methods that NumPy 2 removed (they raise AttributeError).
    removed = {"itemset", "newbyteorder", "ptp"}
    listed = {n for n in dir(np.ndarray) if not n.startswith("_")} - removed
    missing = listed - set(dir(mdarray.DistArray))
    assert missing == left_out


VIEWS = [
    ("complex128", "float64"),  # smaller: the last axis doubles
    ("float64", "complex128"),  # larger: the last axis halves
    ("int32", "float32"),  # the same size
    ("int32", "int8"),
    ("int32", "int64"),
    ("float64", "float64"),
]


@pytest.mark.parametrize(("source", "target"), VIEWS)
@settings(max_examples=20)
@given(data=st.data())
def test_view_reads_the_bytes_as_numpy_and_writes_through(source, target, data):
    x, value = data.draw(dist_pairs(shape=(3, 4), dtype=np.dtype(source)))
    want = value.view(target)
    combined = x.mode is not mdarray.REPLICA and x.layout.has_overlaps and source != target
    parts = [range(s.start, s.stop, s.step) for _, (_, s) in x.layout.chunks]
    whole = want.itemsize == x.itemsize or all(
        (len(r) < 2 or r.step == 1)
        and r.start * x.itemsize % want.itemsize == 0
        and len(r) * x.itemsize % want.itemsize == 0
        for r in parts
    )
    if not whole:  # a chunk's part of the last axis is strided or would split an item
        with pytest.raises(ValueError, match="whole"):
            x.view(target)
        return
    got = x.view(target)
    _same(got, want)
    got[0, 0] = 7  # a view: the write reaches x, as it reaches value through want
    want[0, 0] = 7
    if combined:  # a view of x's combined copy: x keeps its value
        np.testing.assert_array_equal(got.get(), want)
        assert x.mode is not mdarray.REPLICA
    else:
        np.testing.assert_array_equal(x.get(), value)


def test_view_in_whole_chunks_and_numpys_errors():
    value = np.arange(24, dtype=np.int32).reshape(2, 12)
    layout = mdarray.Layout.block(value.shape, axis=1, devices=(mdarray.devices() * 4)[:4])
    x = mdarray.distributed_array(value, layout)  # column blocks of 3: whole int64 items?
    with pytest.raises(ValueError, match="whole int64 items"):
        x.view(np.int64)
    rows = mdarray.distributed_array(value, mdarray.Layout.block(value.shape))
    np.testing.assert_array_equal(rows.view(np.int64).get(), value.view(np.int64))
    np.testing.assert_array_equal(rows.view().get(), value)
    assert rows.view(np.int32) is not rows
    for bad, call in [
        (value.T, lambda a: a.view(np.int8)),  # the last axis is not contiguous
        (value[0, 0], lambda a: a.view(np.int64)),  # 0-d: the item size must stay
        (value[:, :3], lambda a: a.view(np.int64)),  # 12 bytes: no whole int64
        (value.astype(np.int64), lambda a: a.view("S3")),  # 3 does not divide 8
    ]:
        with pytest.raises(ValueError, match="dtype") as numpys:
            call(bad)
        with pytest.raises(ValueError, match=str(numpys.value)[:30]):
            call(mdarray.asarray(bad) if bad.ndim != 2 or bad.strides[-1] == 4 else rows.T)
    with pytest.raises(TypeError, match="no ndarray subclass"):
        rows.view(np.ndarray)
    overlapping = mdarray.distributed_array(value, mdarray.Layout.replicated(value.shape))
    partial = overlapping.change_mode("sum")  # each copy holds part of the value
    np.testing.assert_array_equal(partial.view(np.float32).get(), value.view(np.float32))
