"""A repeated product of row bands (`_product_bands`): each device holds a band of a's
rows and all of b; the replay runs one kernel per device on the blocks where they lie,
equal to NumPy's product and, bit for bit, to the first call's."""

import numpy as np
import pytest
from _call_counts import outcomes

import mdarray
from mdarray import Layout
from mdarray._ops.linalg import product_bands

DEVICES = tuple(mdarray.devices())


def _bands(on, shape):
    """Row chunks of `shape`, chunk k on ``DEVICES[on[k] % len(DEVICES)]``, in row order."""
    cuts = np.linspace(0, shape[0], len(on) + 1).astype(int)
    rest = tuple(slice(0, n) for n in shape[1:])
    index_map: dict = {}
    for k, d in enumerate(on):
        chunk = (slice(int(cuts[k]), int(cuts[k + 1])), *rest)
        index_map.setdefault(DEVICES[d % len(DEVICES)], []).append(chunk)
    return index_map


@pytest.fixture
def made(monkeypatch):
    """Per first call of a product, whether it left a band runner."""
    return outcomes(monkeypatch, product_bands, "band_runner")


@pytest.mark.parametrize("on", [[0, 0, 0, 0], [0, 0, 1, 1], [0, 1, 2, 3], [1, 0]])
@pytest.mark.parametrize(
    ("dtype_a", "dtype_b"),
    [(np.float32, np.float32), (np.float64, np.float64), (np.int64, np.int64),
     (np.complex64, np.complex64), (np.int32, np.float64)],
)  # fmt: skip
@pytest.mark.parametrize("columns", [None, 1, 5])
def test_band_products_match_numpy_and_replay_bit_for_bit(made, on, dtype_a, dtype_b, columns):
    rng = np.random.default_rng(len(on) + (columns or 0))
    ha = (rng.standard_normal((37, 12)) * 3).astype(dtype_a)
    hb_shape = (12,) if columns is None else (12, columns)
    hb = (rng.standard_normal(hb_shape) * 3).astype(dtype_b)
    a = mdarray.distributed_array(ha, _bands(on, ha.shape))
    b = mdarray.asarray(hb, device=a.device)
    with mdarray.options(fallback="raise"):
        first = a @ b
        again = a @ b
        expected = ha @ hb
        assert first.dtype == again.dtype == expected.dtype
        assert again.layout == first.layout
        np.testing.assert_array_equal(again.get(), first.get())
        scale = float(np.max(np.abs(expected)))
        tolerance = 1e-5 if dtype_a in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(first.get(), expected, rtol=0, atol=tolerance * scale)
    assert made == [True]


def test_a_band_replay_reads_the_values_of_now():
    rng = np.random.default_rng(1)
    ha, hv = rng.standard_normal((20, 6)), rng.standard_normal(6)
    a = mdarray.distributed_array(ha, _bands([0, 0, 1, 1], ha.shape))
    v = mdarray.asarray(hv, device=a.device)
    np.testing.assert_allclose((a @ v).get(), ha @ hv, rtol=1e-12)
    a[3:7] = 2.5
    v[0] = -1.0
    ha[3:7], hv[0] = 2.5, -1.0
    np.testing.assert_allclose((a @ v).get(), ha @ hv, rtol=1e-12)


def test_operands_that_are_not_bands_take_the_other_runners(made):
    rng = np.random.default_rng(2)
    ha, hv = rng.standard_normal((24, 8)), rng.standard_normal(8)
    on = [0, 1, 0, 1] if len(DEVICES) > 1 else [0, 0, 0, 0]
    a = mdarray.distributed_array(ha, _bands(on, ha.shape))
    split = mdarray.distributed_array(hv, _bands([0, 1], hv.shape))  # b not whole anywhere
    columns = mdarray.distributed_array(ha, Layout.block(ha.shape, devices=DEVICES, axis=1))
    with mdarray.options(fallback="raise"):
        for x, y, hx, hy in [(a, split, ha, hv), (columns, split, ha, hv)]:
            for _ in range(2):
                np.testing.assert_allclose((x @ y).get(), hx @ hy, rtol=1e-12)
    if len(DEVICES) > 1:  # interleaved rows make no band per device; columns none
        assert True not in made


def test_a_view_operand_replays_through_its_blocks_or_the_whole_way():
    rng = np.random.default_rng(3)
    ha, hv = rng.standard_normal((32, 10)), rng.standard_normal(10)
    a = mdarray.distributed_array(ha, _bands([0, 0, 1, 1], ha.shape))
    v = mdarray.asarray(hv, device=a.device)
    first = a @ v
    np.testing.assert_allclose(first.get(), ha @ hv, rtol=1e-12)
    fresh = a * 1.0  # the same layout, new slabs
    np.testing.assert_allclose((fresh @ v).get(), ha @ hv, rtol=1e-12)
    view = mdarray.permute_dims(mdarray.permute_dims(a, (1, 0)), (1, 0))  # a's own chunks
    np.testing.assert_allclose((view @ v).get(), ha @ hv, rtol=1e-12)
    out = mdarray.zeros_like(first)
    np.matmul(a, v, out=out)
    np.testing.assert_allclose(out.get(), ha @ hv, rtol=1e-12)


def test_b_whole_on_some_devices_and_gathered_onto_the_others():
    # b (a transposed view) whole on device 0 only: a's other bands gather it there.
    rng = np.random.default_rng(4)
    hp = rng.standard_normal((40, 16))
    on = list(range(min(4, len(DEVICES)))) * (4 // min(4, len(DEVICES)))
    points = mdarray.distributed_array(hp, _bands(on, hp.shape))
    centers = points[:8, :]
    with mdarray.options(fallback="raise"):
        first, again = points @ centers.T, points @ centers.T
        np.testing.assert_array_equal(again.get(), first.get())
        np.testing.assert_allclose(first.get(), hp @ hp[:8].T, rtol=1e-12)
