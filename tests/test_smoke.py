import numpy as np

import mdarray


def test_round_trip_over_block_layout():
    host = np.arange(24.0).reshape(6, 4)
    x = mdarray.distributed_array(host, mdarray.Layout.block(host.shape))
    np.testing.assert_array_equal(x.get(), host)
