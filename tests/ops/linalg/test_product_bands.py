"""Products of row bands (`_product_bands`): ``a @ b`` with a band of a's rows on each
device, and ``s.T @ b`` with the same rows of s and b on each device, run one kernel per
device on the blocks where they lie, equal to NumPy's product and, on every replay, bit
for bit to the first call's."""

import numpy as np
import pytest
from _call_counts import outcomes

import mdarray
from mdarray import Layout
from mdarray._backends.backend import backend as default_backend_object
from mdarray._ops.linalg import product_bands

DEVICES = tuple(mdarray.devices())
BACKEND = default_backend_object()


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
    b = mdarray.distributed_array(hb, Layout.replicated(hb.shape, devices=a.devices))
    with mdarray.options(fallback="raise"):
        first = a @ b
        again = a @ b
        expected = ha @ hb
        assert first.dtype == again.dtype == expected.dtype
        assert again.layout == first.layout
        if a.layout.device_blocks is not None:
            assert first.layout.chunk_devices == a.layout.devices  # a chunk per band
        np.testing.assert_array_equal(again.get(), first.get())
        scale = float(np.max(np.abs(expected)))
        tolerance = 1e-5 if dtype_a in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(first.get(), expected, rtol=0, atol=tolerance * scale)
    assert made == [a.layout.device_blocks is not None]  # bands where devices hold bands


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


def test_b_whole_on_some_devices_only(made):
    # b (a transposed view) whole on device 0 only: where the devices share memory it is
    # read by every band (joined from its row chunks), elsewhere the plan's runner
    # gathers it.
    rng = np.random.default_rng(4)
    hp = rng.standard_normal((40, 16))
    on = list(range(min(4, len(DEVICES)))) * (4 // min(4, len(DEVICES)))
    points = mdarray.distributed_array(hp, _bands(on, hp.shape))
    centers = points[:8, :]
    with mdarray.options(fallback="raise"):
        first, again = points @ centers.T, points @ centers.T
        np.testing.assert_array_equal(again.get(), first.get())
        np.testing.assert_allclose(first.get(), hp @ hp[:8].T, rtol=1e-12)
    bands = points.layout.device_blocks is not None
    assert made == [bands and (len(points.devices) == 1 or BACKEND.shared_memory)]


def _crossed_cases():
    on_several = [[0, 0, 1, 1], [0, 1, 2, 3]] if len(DEVICES) > 1 else []
    return [[0, 0, 0, 0], *on_several]


@pytest.mark.parametrize("on", _crossed_cases())
@pytest.mark.parametrize("columns", [None, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_crossed_bands_sum_each_devices_rows(made, on, columns, dtype):
    # x.T @ r (a gradient) and onehot.T @ points (k-means' sums): a partial product per
    # device, SUM over several devices, REPLICA on one.
    rng = np.random.default_rng(5 + len(set(on)))
    hx = (rng.standard_normal((44, 7)) * 3).astype(dtype)
    hr = (rng.standard_normal((44,) if columns is None else (44, columns)) * 3).astype(dtype)
    x = mdarray.distributed_array(hx, _bands(on, hx.shape))
    r = mdarray.distributed_array(hr, _bands(on, hr.shape))
    with mdarray.options(fallback="raise"):
        first, again = x.T @ r, x.T @ r
        expected = hx.T @ hr
        several_devices = len(set(on)) > 1 and len(DEVICES) > 1
        assert first.mode is (mdarray.SUM if several_devices else mdarray.REPLICA)
        assert again.layout == first.layout
        assert again.mode is first.mode
        np.testing.assert_array_equal(again.get(), first.get())
        tolerance = 1e-5 if dtype == np.float32 else 1e-12
        scale = float(np.max(np.abs(expected)))
        np.testing.assert_allclose(first.get(), expected, rtol=0, atol=tolerance * scale)
    assert made == [x.layout.device_blocks is not None]


def test_crossed_operands_of_other_rows_take_the_plan(made):
    rng = np.random.default_rng(6)
    hx, hr = rng.standard_normal((30, 5)), rng.standard_normal(30)
    x = mdarray.distributed_array(hx, _bands([0, 0, 0, 0], hx.shape))
    r = mdarray.distributed_array(hr, _bands([0, 0, 0, 0, 0], hr.shape))  # other chunks
    r2 = mdarray.distributed_array(hr, _bands([0, 1], hr.shape))  # other devices
    fresh = mdarray.distributed_array(hx.T.copy(), Layout.block((5, 30), devices=DEVICES, axis=1))
    with mdarray.options(fallback="raise"):
        for a, b in [(x.T, r), (x.T, r2), (fresh, r)]:
            for _ in range(2):
                np.testing.assert_allclose((a @ b).get(), hx.T @ hr, rtol=1e-12)
    assert made[0] is True  # x.T @ r: equal rows on one device, whatever the chunks
    if len(DEVICES) > 1:  # column chunks, not a transposed view: no bands to read
        assert made[2] is False


def test_b_in_row_chunks_over_devices_that_share_memory(made):
    # Power iteration's v = w / |w| lies in a's row chunks: on the cpu backend every band
    # reads it joined; counted moves (count_transfers) take the plan, which counts them.
    rng = np.random.default_rng(8)
    ha, hv = rng.standard_normal((48, 48)), rng.standard_normal(48)
    on = [0, 1, 2, 3]
    a = mdarray.distributed_array(ha, _bands(on, ha.shape))
    v = mdarray.distributed_array(hv, _bands(on, hv.shape))
    with mdarray.options(fallback="raise"):
        first, again = a @ v, a @ v
        np.testing.assert_array_equal(again.get(), first.get())
        np.testing.assert_allclose(first.get(), ha @ hv, rtol=1e-12)
        with mdarray.count_transfers() as moved:
            counted = a @ v
        np.testing.assert_allclose(counted.get(), ha @ hv, rtol=1e-12)
    several = len({DEVICES[d % len(DEVICES)] for d in on}) > 1
    bands = a.layout.device_blocks is not None
    assert made[0] == (bands and (not several or BACKEND.shared_memory))
    if several:
        assert moved.total > 0  # each band's device fetched the others' rows of v
