"""``MDARRAY_CHECK_COLLECTIVES=1``: processes making different collective calls raise
RuntimeError on every process instead of hanging. ``tests/test_spmd.py`` runs this module
in a run of its own, with the variable set: without it such a program hangs (the point of
the check), so it is skipped there."""

import os

import numpy as np
import pytest

import mdarray
from mdarray import distributed

from ._spmd import check_value, raises_everywhere

pytestmark = pytest.mark.skipif(
    os.environ.get("MDARRAY_CHECK_COLLECTIVES", "") in ("", "0"),
    reason="needs MDARRAY_CHECK_COLLECTIVES=1 (without it the mismatched calls hang)",
)


def arrays():
    value = np.arange(24.0).reshape(4, 6)
    rows = mdarray.Layout.block(value.shape, axis=0)
    cols = mdarray.Layout.block(value.shape, axis=1)
    return value, mdarray.distributed_array(value, rows), cols


def test_get_on_one_process_reshard_on_the_others():
    value, x, cols = arrays()
    if distributed.rank() == 0:
        raises_everywhere(RuntimeError, x.get)
    else:
        raises_everywhere(RuntimeError, x.reshard, cols)
    check_value(x, value)  # the processes are in step again


def test_reshard_to_different_layouts():
    value, x, cols = arrays()
    target = cols if distributed.rank() == 0 else mdarray.Layout.replicated(value.shape)
    raises_everywhere(RuntimeError, x.reshard, target)
    check_value(x.reshard(cols), value)


def test_get_to_different_roots():
    value, x, _ = arrays()
    raises_everywhere(RuntimeError, x.get, root=distributed.rank())
    check_value(x, value)


def test_change_mode_to_different_modes():
    value, x, _ = arrays()
    mode = "sum" if distributed.rank() == 0 else "max"
    raises_everywhere(RuntimeError, x.change_mode, mode)
    check_value(x, value)
