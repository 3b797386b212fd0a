"""A product of row blocks over devices that share memory (the cpu backend's): where the
left operand's blocks lie one after another in one allocation (arrays from the host,
`Backend.empty_slabs`), ``a @ b`` is one kernel over them, as NumPy's one product, and
its result's blocks lie so too (`_product_runs._one_product`)."""

import numpy as np
import pytest
from _backend_facts import ON_CUDA
from _call_counts import outcomes

import mdarray
from mdarray import Layout
from mdarray._backends.backend import backend as default_backend_object
from mdarray._ops.linalg import product_runs

pytestmark = pytest.mark.skipif(ON_CUDA, reason="devices that share memory: the cpu backend")

DEVICES = tuple(mdarray.devices())
BACKEND = default_backend_object()


@pytest.fixture
def one_products(monkeypatch):
    """The outcomes of `_one_product` (True: it ran the product as one kernel), for
    products of any size."""
    monkeypatch.setattr(product_runs, "ONE_KERNEL_WORK", 0)
    return outcomes(monkeypatch, product_runs, "_one_product")


def _rows(shape):
    return Layout.block(shape, devices=DEVICES)


@pytest.mark.skipif(len(DEVICES) < 2, reason="several devices")
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex64])
def test_products_of_row_blocks_run_as_one_kernel(one_products, dtype):
    rng = np.random.default_rng(7)
    ha = (rng.standard_normal((50, 36)) * 4).astype(dtype)
    hb = (rng.standard_normal((36, 20)) * 4).astype(dtype)
    hc = (rng.standard_normal((20, 12)) * 4).astype(dtype)
    a = mdarray.distributed_array(ha, _rows(ha.shape))
    b = mdarray.distributed_array(hb, _rows(hb.shape))
    c = mdarray.distributed_array(hc, Layout.replicated(hc.shape, devices=DEVICES))
    with mdarray.options(fallback="raise"):
        first, again = a @ b, a @ b
        chained = first @ c  # the product's own blocks line up too
    assert one_products == [True, True, True]
    np.testing.assert_array_equal(again.get(), first.get())  # a repeat: the first call's bits
    rtol = {np.float64: 1e-12, np.int64: 0}.get(dtype, 1e-4)
    np.testing.assert_allclose(first.get(), ha @ hb, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(chained.get(), ha @ hb @ hc, rtol=rtol, atol=rtol * 100)
    assert first.layout == _rows((50, 20))
    assert first.mode is mdarray.REPLICA


@pytest.mark.skipif(len(DEVICES) < 2, reason="several devices")
def test_blocks_apart_run_per_device_and_transfers_are_counted(one_products):
    rng = np.random.default_rng(8)
    ha, hb = rng.standard_normal((40, 16)), rng.standard_normal((16, 24))
    a = mdarray.distributed_array(ha, _rows(ha.shape))
    b = mdarray.distributed_array(hb, _rows(hb.shape))
    apart = a * 1.0  # an elementwise result: each device's block its own allocation
    np.testing.assert_allclose((apart @ b).get(), ha @ hb, rtol=1e-12)
    assert one_products == [False]
    # Counting moves plans every piece as the devices would move it: no one kernel.
    with mdarray.count_transfers() as moved:
        np.testing.assert_allclose((a @ b).get(), ha @ hb, rtol=1e-12)
    assert one_products == [False]
    assert moved.total >= (len(DEVICES) - 1) * hb.nbytes


@pytest.mark.skipif(len(DEVICES) < 2, reason="several devices")
def test_slabs_made_together_are_blocks_of_their_own():
    totals = [6, 0, 10, 3][: len(DEVICES)] + [4] * max(0, len(DEVICES) - 4)
    slabs = BACKEND.empty_slabs(totals, np.float32, DEVICES)
    assert [s.shape for s in slabs] == [(t,) for t in totals]
    assert all(s.flags.writeable for s in slabs)
    # One after another in memory, each its own block for the memory report.
    starts = [BACKEND.pointer(s) for s in slabs]
    assert starts[1] == starts[0] + 4 * totals[0]
    assert [BACKEND.allocation_of(s)[1] for s in slabs] == [4 * t for t in totals]
    x = mdarray.distributed_array(np.ones((8 * len(DEVICES), 5)), _rows((8 * len(DEVICES), 5)))
    report = mdarray.memory_report().arrays
    assert all(report[d] >= x.nbytes // len(DEVICES) for d in DEVICES)
    # Dtypes without a buffer format are made apart.
    dates = BACKEND.empty_slabs([2, 3], "datetime64[s]", DEVICES[:2])
    assert [d.dtype for d in dates] == [np.dtype("datetime64[s]")] * 2


@pytest.mark.skipif(len(DEVICES) < 2, reason="several devices")
def test_a_matrix_times_a_vector_is_one_gemv(one_products):
    rng = np.random.default_rng(9)
    ha, hv = rng.standard_normal((64, 48)), rng.standard_normal(48)
    a = mdarray.distributed_array(ha, _rows(ha.shape))
    split = mdarray.distributed_array(hv, _rows(hv.shape))
    whole = mdarray.distributed_array(hv, Layout.replicated(hv.shape, devices=DEVICES))
    apart = split * 1.0  # its blocks apart: gathered once, then the one gemv
    with mdarray.options(fallback="raise"):
        for v in (split, whole, apart):
            first, again = a @ v, a @ v
            np.testing.assert_array_equal(again.get(), first.get())
            np.testing.assert_allclose(first.get(), ha @ hv, rtol=1e-12)
            assert first.layout == _rows((64,))
    assert one_products == [True] * 6


@pytest.mark.skipif(len(DEVICES) < 2, reason="several devices")
def test_small_products_run_per_device(monkeypatch):
    seen: list = []
    monkeypatch.setattr(product_runs, "_one_product", lambda *a: seen.append(a))
    rng = np.random.default_rng(10)
    ha, hb = rng.standard_normal((64, 32)), rng.standard_normal((32, 16))
    a = mdarray.distributed_array(ha, _rows(ha.shape))
    b = mdarray.distributed_array(hb, _rows(hb.shape))
    np.testing.assert_allclose((a @ b).get(), ha @ hb, rtol=1e-12)
    np.testing.assert_allclose((a @ b).get(), ha @ hb, rtol=1e-12)
    assert seen == []


@pytest.mark.skipif(len(DEVICES) < 2, reason="several devices")
def test_partial_operands_are_combined_first(one_products):
    rng = np.random.default_rng(11)
    ha, hb = rng.standard_normal((32, 24)), rng.standard_normal((24, 16))
    a = mdarray.distributed_array(ha, _rows(ha.shape))
    b = mdarray.distributed_array(hb, Layout.replicated(hb.shape, devices=DEVICES))
    for x, y in ((a.change_mode("sum"), b), (a, b.change_mode("sum")), (a, b)):
        for _ in range(2):
            np.testing.assert_allclose((x @ y).get(), ha @ hb, rtol=1e-12)
    # A product combines partial operands first (`_operand_modes`): one kernel each.
    assert one_products == [True] * 6
