"""count_transfers: bytes per device pair, host included, nested and scoped."""

import numpy as np
import pytest

import mdarray
from mdarray import Layout

D = mdarray.devices()


def test_counts_host_and_device_moves_per_pair():
    layout = Layout.block((8,), devices=D)
    with mdarray.count_transfers() as outer:
        x = mdarray.distributed_array(np.arange(8.0), layout)
        with mdarray.count_transfers() as inner:
            y = x.reshard(Layout.replicated((8,), devices=D[:1]))
        y.get()
    for device, shape in zip(layout.chunk_devices, layout.chunk_shapes):
        assert outer[("host", device)] == 8 * shape[0]
        if device != D[0]:
            assert inner[(device, D[0])] == 8 * shape[0]
    assert inner.total == 8 * sum(
        s[0] for s, d in zip(layout.chunk_shapes, layout.chunk_devices) if d != D[0]
    )
    assert outer[(D[0], "host")] == 64
    assert outer.total == 64 + inner.total + 64
    assert inner.copies == len([d for d in layout.chunk_devices if d != D[0]])
    assert "host" in repr(outer)
    assert repr(outer).startswith("TransferCount(")


def test_nothing_is_counted_outside_the_block():
    with mdarray.count_transfers() as moved:
        pass
    mdarray.distributed_array(np.ones(4), {D[0]: ()}).get()
    assert moved.total == 0
    assert moved.copies == 0
    assert moved[(D[0], "host")] == 0


def test_counter_is_removed_after_an_error():
    with pytest.raises(RuntimeError), mdarray.count_transfers() as moved:
        raise RuntimeError
    mdarray.distributed_array(np.ones(4), {D[0]: ()})
    assert moved.total == 0
    assert not mdarray._core.debug._counters.get()
