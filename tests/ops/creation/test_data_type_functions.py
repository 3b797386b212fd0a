"""Data types: astype against NumPy with its mode rule, each row of the rule checked as an
identity, and the dtype queries NumPy asks of a DistArray."""

import numpy as np
import pytest
from _layouts import devices, dist_pairs
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import mdarray
from mdarray._core.mode_rules import keeps_mode
from mdarray.testing import assert_chunks_hold, assert_dist_equal, strategies as mst

REAL = mst.dtypes(complex_=False)


def defined_cast_elements(source: np.dtype, target: np.dtype):
    """Elements of `source` whose cast to `target` has one defined value (None: the
    default small elements of `dist_pairs`, integers -20..20, all of them defined).

    The contract compared with NumPy covers defined casts only: a float cast to an integer
    dtype is undefined behaviour in C where the value is outside the target's range or is
    NaN or infinite, and the backends' kernels then differ (-1.0 to uint8 is 255 in NumPy,
    0 in CuPy). Such a float is drawn inside the target's range; every other cast (integer
    wrapping, to bool, between floats) is defined."""
    if source.kind != "f" or target.kind not in "iu":
        return None
    info = np.iinfo(target)
    return st.integers(max(-20, info.min), min(20, info.max)).map(float)


@given(st.data())
def test_astype_matches_numpy_and_keeps_the_mode_where_the_rule_allows(data):
    source = data.draw(mst.dtypes())
    target = data.draw(mst.dtypes(complex_=source.kind == "c"))
    if source.kind == "c" and target.kind != "c":
        target = np.dtype(np.complex128)
    elements = defined_cast_elements(source, target)
    x, expected = data.draw(dist_pairs(dtype=source, elements=elements))
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        y = mdarray.astype(x, target)
    want = expected.astype(target)
    assert_chunks_hold(y, want)
    if keeps_mode(x.mode, x.dtype, target):
        assert y.mode is x.mode
        assert moved.total == 0
    else:
        assert y.mode is mdarray.REPLICA
    assert_dist_equal(x.astype(target), want)


@given(
    st.sampled_from([mdarray.SUM, mdarray.PROD, mdarray.MAX, mdarray.MIN]),
    REAL,
    REAL,
    st.data(),
)
def test_each_row_of_the_astype_mode_rule_is_an_identity(mode, source, target, data):
    """Where `keeps_mode` says so, casting copies then combining them equals combining
    then casting, for every value of the source dtype (extremes and identities too)."""
    if not keeps_mode(mode, source, target) or source == target:
        return
    a, b = (data.draw(hnp.arrays(source, 8)) for _ in range(2))
    combine = mode.ufunc(np)
    with np.errstate(over="ignore", invalid="ignore"):
        left = combine(a, b).astype(target)
        right = combine(a.astype(target), b.astype(target))
    np.testing.assert_array_equal(left, right)


def test_the_rule_refuses_casts_that_change_combined_values():
    assert not keeps_mode(mdarray.SUM, np.int8, np.int16)  # 100 + 100 wraps in int8
    assert not keeps_mode(mdarray.SUM, np.float32, np.float64)  # rounding differs
    assert not keeps_mode(mdarray.MAX, np.int16, np.int8)  # wrapping is not monotone
    assert not keeps_mode(mdarray.MAX, np.float64, np.int64)  # NaN has no integer
    assert keeps_mode(mdarray.SUM, np.int64, np.uint8)
    assert keeps_mode(mdarray.MIN, np.int64, np.float32)


def test_copy_copies_each_chunk_on_its_device():
    x = mdarray.arange(6, device=mdarray.Layout.block(6, devices=devices(0, 1)))
    with mdarray.count_transfers() as moved:
        y = np.copy(x)
    assert moved.total == 0
    y[0] = 9
    assert x.get()[0] == 0
    assert y.layout == x.layout


def test_dtype_queries_read_no_data():
    x = mdarray.zeros(
        (3, 4), dtype=mdarray.int8, device=mdarray.Layout.block((3, 4), devices=devices(0, 1))
    )
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        assert np.shape(x) == (3, 4)
        assert np.ndim(x) == 2
        assert np.size(x) == 12
        assert np.size(x, 1) == 4
        assert np.result_type(x, 1.0) == np.result_type(np.zeros(1, np.int8), 1.0)
        assert np.result_type(x, np.int16) == np.int16
        assert mdarray.result_type(x, mdarray.uint8) == np.int16
        assert np.can_cast(x, np.int16)
        assert not np.can_cast(x, np.uint8)
        assert mdarray.can_cast(x, mdarray.float32)
        assert mdarray.iinfo(x).max == 127
        assert np.isrealobj(x)
        assert not np.iscomplexobj(x)
    assert moved.total == 0


@pytest.mark.parametrize(
    "name",
    [
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ],
)
def test_dtype_names_are_numpy_dtypes(name):
    assert np.dtype(getattr(mdarray, name)) == np.dtype(name)
    assert mdarray.isdtype(getattr(mdarray, name), np.dtype(name))


def test_finfo_and_isdtype_follow_numpy():
    assert mdarray.finfo(mdarray.float32).eps == np.finfo(np.float32).eps
    assert mdarray.finfo(mdarray.ones(2)).bits == 64
    assert mdarray.isdtype(mdarray.int8, ("integral", "real floating"))
    assert not mdarray.isdtype(mdarray.complex64, "real floating")


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_finfo_fields_are_python_numbers_of_the_real_dtype(dtype):
    """The standard's finfo fields are Python floats (NumPy's are NumPy scalars); a complex
    dtype gives its parts' limits."""
    got, want = mdarray.finfo(np.dtype(dtype)), np.finfo(np.dtype(dtype))
    for field in ("eps", "max", "min", "smallest_normal"):
        assert type(getattr(got, field)) is float
        assert getattr(got, field) == getattr(want, field)
    assert type(got.bits) is int
    assert got.bits == want.bits
    assert got.dtype == want.dtype
    assert got.dtype.kind == "f"


def test_a_repeated_astype_casts_each_calls_own_chunks():
    """Calls of one key (layout, mode, dtype, target) after the first run its runner
    (`mdarray._core.decided`): packed chunks cast slab by slab, chunks that are not
    packed (a transposed view) chunk by chunk; each result NumPy's values in new memory,
    and a SUM array whose cast does not keep its mode combined first."""
    layout = mdarray.Layout.block((8, 6), devices=devices(0, 0, 1, 1))
    rng = np.random.default_rng(5)
    for _ in range(3):
        host = rng.standard_normal((8, 6)) * 40
        x = mdarray.distributed_array(host, layout)
        unpacked = x.T
        assert x.storage.slabs is not None
        assert unpacked.storage.slabs is None
        for a, want in ((x, host), (unpacked, host.T)):
            for target in (np.float32, np.int16, np.complex64, np.float64):
                got = mdarray.astype(a, target)
                assert_dist_equal(got, want.astype(target))
                assert got.mode is mdarray.REPLICA
            copied = mdarray.astype(a, a.dtype)
            copied[0, 0] = -1.0
            np.testing.assert_array_equal(a.get(), want)
    partial = mdarray.distributed_array(np.full((8, 6), 0.5), layout).change_mode("sum")
    for _ in range(2):
        assert partial.mode is mdarray.SUM
        cast = mdarray.astype(partial, np.float32)  # float64 -> float32: rounding differs
        assert cast.mode is mdarray.REPLICA
        np.testing.assert_array_equal(cast.get(), np.full((8, 6), 0.5, np.float32))
