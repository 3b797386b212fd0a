"""options(transfer_guard=...): implicit moves between devices allowed, logged or refused
(before the copy), explicit ones (reshard, get, printing...) always allowed."""

import dataclasses
import logging

import numpy as np
import pytest
from _layouts import D

import mdarray
import mdarray.testing
from mdarray._runtime import config as _config

several = pytest.mark.skipif(len(D) < 2, reason="moves between devices need two devices")


def _on(value, devices, axis=0):
    return mdarray.distributed_array(
        value, mdarray.Layout.block(value.shape, axis=axis, devices=devices)
    )


def _pair():
    """x and y of one shape on different devices (where there are two): x + y moves."""
    half = max(len(D) // 2, 1)
    value = np.arange(16.0).reshape(4, 4)
    return _on(value, D[:half]), _on(value[::-1].copy(), D[half:] or D[:1])


@several
def test_allow_moves_and_counts():
    x, y = _pair()
    with mdarray.options(transfer_guard="allow"), mdarray.count_transfers() as moved:
        z = x + y
    assert moved.total > 0
    np.testing.assert_array_equal(z.get(), x.get() + y.get())


@several
def test_raise_refuses_before_the_copy_and_names_the_move():
    x, y = _pair()
    with (
        mdarray.options(transfer_guard="raise"),
        mdarray.count_transfers() as moved,
        pytest.raises(mdarray.TransferError) as info,
    ):
        x + y
    message = str(info.value)
    assert "numpy.add" in message
    assert "transfer_guard='raise'" in message
    assert "bytes from device" in message
    assert moved.total == 0  # the refused copy is not counted: it never happened
    assert isinstance(info.value, RuntimeError)


@several
def test_log_names_the_operation_devices_and_bytes(caplog):
    x, y = _pair()
    with (
        caplog.at_level(logging.WARNING, logger="mdarray"),
        mdarray.options(transfer_guard="log"),
        mdarray.count_transfers() as moved,
    ):
        z = x + y
    records = [r for r in caplog.records if r.name == "mdarray"]
    assert records
    assert all("numpy.add" in r.getMessage() for r in records)
    logged = sum(int(r.getMessage().split(" moves ")[1].split()[0]) for r in records)
    assert logged == moved.total
    np.testing.assert_array_equal(z.get(), x.get() + y.get())


@several
def test_a_refused_operation_leaves_its_operands_unchanged():
    x, y = _pair()
    before_x, before_y = x.get(), y.get()
    with mdarray.options(transfer_guard="raise"):
        with pytest.raises(mdarray.TransferError):
            x += y
        with pytest.raises(mdarray.TransferError):
            x[...] = y
        with pytest.raises(mdarray.TransferError):
            np.add(x, y, out=x)
    np.testing.assert_array_equal(x.get(), before_x)
    np.testing.assert_array_equal(y.get(), before_y)


@several
def test_explicit_moves_pass_under_raise():
    x, y = _pair()
    value = x.get()
    total = x.sum(axis=0)  # split along axis 0: a partial result (SUM) over x's devices
    assert total.mode is mdarray.SUM
    with mdarray.options(transfer_guard="raise"), mdarray.count_transfers() as moved:
        np.testing.assert_array_equal(x.reshard(y.layout).get(), value)
        np.testing.assert_array_equal(x.to_device(D[-1]).get(), value)
        np.testing.assert_array_equal(total.change_mode("replica").get(), value.sum(axis=0))
        np.testing.assert_array_equal(np.asarray(total), value.sum(axis=0))
        assert str(total) == str(value.sum(axis=0))
        assert repr(total).startswith("DistArray([")
        assert float(total[1]) == value.sum(axis=0)[1]
        assert total.tolist() == value.sum(axis=0).tolist()
        assert total[2].item() == value.sum(axis=0)[2]
        assert bool(total[1])
        mdarray.testing.assert_dist_equal(total, value.sum(axis=0))
        moved_too = mdarray.asarray(x, device=y.layout)
        again = mdarray.distributed_array(x, y.layout)
        made = mdarray.distributed_array(value, y.layout)  # from host data
    assert moved.total > 0
    for z in (moved_too, again, made):
        assert z.layout == y.layout
        np.testing.assert_array_equal(z.get(), value)


@several
def test_moves_inside_an_operation_stay_implicit():
    # sort along a split axis reshards with x.reshard, the public method: called by the
    # op, not by the user, so it is guarded.
    x = _on(np.arange(16.0).reshape(4, 4)[::-1].copy(), D)
    with mdarray.options(transfer_guard="raise"), pytest.raises(mdarray.TransferError) as info:
        np.sort(x, axis=0)
    assert "numpy.sort" in str(info.value)
    total = x.sum(axis=0)
    with mdarray.options(transfer_guard="raise"), pytest.raises(mdarray.TransferError):
        np.sqrt(total)  # combining the partial copies is the op's move
    with mdarray.options(transfer_guard="log"):
        np.testing.assert_array_equal(np.sort(x, axis=0).get(), np.sort(x.get(), axis=0))


def test_moves_within_one_device_are_not_transfers():
    value = np.arange(16.0).reshape(4, 4)
    x = _on(value, [D[0], D[0]])
    y = _on(value, [D[0]] * 4, axis=1)
    with mdarray.options(transfer_guard="raise"):
        np.testing.assert_array_equal((x + y).get(), value * 2)
        np.testing.assert_array_equal(np.sort(x, axis=0).get(), np.sort(value, axis=0))
        total = x.sum(axis=0)
        np.testing.assert_array_equal(np.sqrt(total).get(), np.sqrt(value.sum(axis=0)))


@several
def test_set_options_guards_every_context_until_changed():
    x, y = _pair()
    before = _config._defaults
    try:
        mdarray.set_options(transfer_guard="raise")
        with pytest.raises(mdarray.TransferError):
            x + y
        with mdarray.count_transfers(), pytest.raises(mdarray.TransferError):
            x + y
        with mdarray.options(transfer_guard="allow"):
            x + y
    finally:
        mdarray.set_options(**dataclasses.asdict(before))
    x + y
    assert mdarray._core.debug.counting() == ()  # nothing observes copies again


def test_guard_left_with_its_block():
    with mdarray.options(transfer_guard="raise"):
        assert _config.TRANSFER_GUARD in mdarray._core.debug.counting()
    assert _config.TRANSFER_GUARD not in mdarray._core.debug.counting()
