"""``MDARRAY_CHECK_COLLECTIVES=1``: processes making different collective calls (another
name, other arguments, another array, or no call at all) raise RuntimeError on every
process instead of hanging. ``tests/spmd/test_spmd.py`` runs this module in runs of their own
(2 and 4 processes), with the variable set and a short ``MDARRAY_CHECK_TIMEOUT``: without
the check such a program hangs (the point of the check), so it is skipped there."""

import os

import numpy as np
import pytest

import mdarray
from mdarray import distributed

from ._spmd import check_value, everywhere, raises_everywhere

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


# What the check compares beyond the call's name and arrays' metadata -------------------

LAST = distributed.size() - 1


def test_a_skipped_get_does_not_pair_with_the_next_one():
    """A process that skips ``a.get()`` makes ``b.get()`` (same layout and dtype) its
    next call: the arrays differ (they were made by different calls), so every process
    raises instead of one reading the other's values."""
    value, a, _ = arrays()
    b = a + 100.0

    def calls():
        if distributed.rank() != LAST:
            a.get()
        b.get()

    raises_everywhere(RuntimeError, calls)
    check_value(b, value + 100.0)


def test_different_setitem_keys():
    value, x, _ = arrays()

    def write():
        x[distributed.rank() % 2, 0] = -1.0

    raises_everywhere(RuntimeError, write)
    check_value(x, value)


def test_different_scalar_operands():
    value, x, _ = arrays()
    raises_everywhere(RuntimeError, lambda: x + distributed.rank())
    raises_everywhere(RuntimeError, lambda: x.sum(axis=distributed.rank() % 2))
    raises_everywhere(RuntimeError, lambda: x + np.full(6, float(distributed.rank())))
    check_value(x + 1.0, value + 1.0)


def test_bad_input_on_one_process_raises_everywhere():
    """The process with the bad key never reaches its IndexError: the check sees the
    keys differ first, on every process."""
    value, x, _ = arrays()
    raises_everywhere(RuntimeError, lambda: x[9 if distributed.rank() == LAST else 0])
    check_value(x, value)


def test_a_process_that_finalizes_while_the_others_get():
    value, x, _ = arrays()
    if distributed.rank() == LAST:
        raises_everywhere(RuntimeError, distributed.finalize)
    else:
        raises_everywhere(RuntimeError, x.get)
    check_value(x, value)


def test_the_same_calls_pass():
    value, x, cols = arrays()
    y = x.reshard(cols)
    y[1:3, 2] = np.arange(2.0)
    value[1:3, 2] = np.arange(2.0)
    check_value(y * 2.0, value * 2.0)
    check_value(np.cumsum(y, axis=0), np.cumsum(value, axis=0))
    check_value(lambda: mdarray.sum(y[1:], axis=1), value[1:].sum(axis=1))


# Last: after a timeout the run is out of step (the missing process's record comes late).


def test_a_process_that_leaves_early_times_out_naming_it():
    """The last process makes no more calls; the others raise after the timeout
    (``MDARRAY_CHECK_TIMEOUT``, short in this run) naming it, instead of waiting forever."""
    _, x, _ = arrays()
    if distributed.size() == 1:
        return
    if distributed.rank() == LAST:
        everywhere(True)
        return
    try:
        x.get()
    except RuntimeError as error:
        message = str(error)
    else:
        message = "it returned"
    everywhere(f"process {LAST} did not make call" in message, message)
