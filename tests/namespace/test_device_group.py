"""``x.device`` is the array's device group (DESIGN.md): results keep their operands' group
though they may live on fewer devices (``x.devices``), and ``device=`` sets it."""

import re
import warnings

import numpy as np
import pytest
from _layouts import distinct

import mdarray

GROUP = mdarray.DeviceSet(distinct(0, 1, 2, 3))


def _few():
    """Two rows of a 10 x 4 array in blocks over the group: held by the first device only
    where there are several."""
    x = mdarray.asarray(np.arange(40.0).reshape(10, 4), device=GROUP)
    return x[:2]


OPS = {
    "slice": lambda x: x[:1],
    "mask": lambda x: x[x > 3],
    "int array": lambda x: x[np.array([0, 1])],
    "ufunc": lambda x: np.sin(x) + 1,
    "operator": lambda x: -x * 2,
    "reduction": lambda x: np.sum(x, axis=0),
    "partial to replica": lambda x: np.sum(x, axis=0).change_mode("replica"),
    "namespace sum": mdarray.sum,
    "astype": lambda x: mdarray.astype(x, mdarray.float32),
    "method": lambda x: x.astype("f4").reshape(8).T,
    "concat": lambda x: mdarray.concat([x, x]),
    "stack": lambda x: mdarray.stack([x, x]),
    "reshape": lambda x: mdarray.reshape(x, (8,)),
    "permute_dims": lambda x: mdarray.permute_dims(x, (1, 0)),
    "expand_dims": lambda x: mdarray.expand_dims(x, axis=0),
    "flip": mdarray.flip,
    "broadcast_to": lambda x: mdarray.broadcast_to(x[:1], (3, 4)),
    "broadcast_arrays": lambda x: mdarray.broadcast_arrays(x, x[:1])[1],
    "where": lambda x: mdarray.where(x > 3, x, 0.0),
    "sort": mdarray.sort,
    "unique": mdarray.unique_values,
    "matmul": lambda x: x @ x.T,
    "vecdot": lambda x: mdarray.vecdot(x, x),
    "std": mdarray.std,
    "zeros_like": mdarray.zeros_like,
    "tril": mdarray.tril,
    "meshgrid": lambda x: mdarray.meshgrid(x[0], x[1])[0],
    "unstack": lambda x: mdarray.unstack(x)[0],
    "linalg": lambda x: mdarray.linalg.svd(x).U,
    "fft": mdarray.fft.fft,
    "numpy's median": lambda x: np.median(x, axis=0),
    "asarray": mdarray.asarray,
}


@pytest.mark.parametrize("op", OPS.values(), ids=OPS.keys())
def test_results_keep_the_operands_group(op):
    x = _few()
    assert x.device == GROUP
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mdarray.PerformanceWarning)
        result = op(x)
    assert result.device == GROUP
    assert set(result.devices) <= set(GROUP)


def test_device_places_and_names_the_group():
    x = _few()
    first = GROUP.device_ids[0]
    assert mdarray.asarray(x, device=first).device == mdarray.DeviceSet([first])
    assert x.to_device(first).device == mdarray.DeviceSet([first])
    assert mdarray.zeros(3, device=x.device).device == GROUP
    np.testing.assert_array_equal(mdarray.asarray(x, device=first).get(), x.get())


def test_writes_keep_the_targets_own_group():
    """``out=`` and in-place operators return their target, whose group stays its own."""
    small = mdarray.asarray(np.ones(2), device=GROUP.device_ids[0])
    wide = mdarray.asarray(np.ones(2), device=GROUP)
    small += wide
    np.add(small, wide, out=small)
    assert small.device == mdarray.DeviceSet([GROUP.device_ids[0]])


def test_operands_of_several_groups_give_their_union():
    first, last = GROUP.device_ids[0], GROUP.device_ids[-1]
    a = mdarray.asarray(np.ones(2), device=first)
    b = mdarray.asarray(np.ones(2), device=last)
    union = mdarray.DeviceSet(sorted({first, last}))
    assert (a + b).device == (b + a).device == union


def test_a_group_that_holds_the_others_is_the_result_group_whatever_the_order():
    """``x_on_one_device + y`` and ``y + x_on_one_device`` are both in y's group (clients
    compare ``res.device == y.device``; the union used to list x's device first)."""
    wide = mdarray.asarray(np.ones(2), device=GROUP)
    for device in GROUP.device_ids:
        small = mdarray.asarray(np.ones(2), device=device)
        assert (small + wide).device == (wide + small).device == wide.device
        assert np.stack([small, wide]).device == wide.device


@pytest.mark.parametrize(
    ("ids", "error"),
    [
        ([1.5], TypeError),
        (["1"], TypeError),
        ([True], TypeError),
        ([np.bool_(True)], TypeError),
        ([0, 1.0], TypeError),
        ([-1], ValueError),
    ],
)
def test_device_set_refuses_what_is_no_device_id(ids, error):
    with pytest.raises(error, match=re.escape(repr(ids[-1]))):
        mdarray.DeviceSet(ids)


def test_device_set_takes_integers_of_any_kind():
    assert mdarray.DeviceSet([np.int64(0), 0 + 1]).device_ids == (0, 1)
    assert mdarray.DeviceSet(range(2)) == mdarray.DeviceSet([0, 1])


@pytest.mark.parametrize(
    "make",
    [
        lambda d: mdarray.asarray(0.5, device=d),
        lambda d: mdarray.zeros((), device=d),
        lambda d: mdarray.full((1,), 2.0, device=d),
        lambda d: mdarray.arange(1, device=d),
        lambda d: mdarray.eye(1, device=d),
    ],
)
def test_a_small_array_made_on_a_group_is_in_that_group(make):
    """The idiom of array-API libraries for a scalar beside x, ``xp.asarray(0.5,
    device=x.device)``: the array lives on one device of the group (``devices``) but its
    ``device`` is the group, so it meets x's arrays with equal devices."""
    x = _few()
    made = make(x.device)
    assert made.device == x.device
    assert set(made.devices) <= set(GROUP)
    assert (made + x[0]).device == x.device


def test_arrays_made_without_device_are_in_the_default_group():
    """No ``device=`` and no operand: every device of the backend (DESIGN.md), so a 0-d
    array and an element of a larger one have equal devices."""
    everything = mdarray.DeviceSet(mdarray.devices())
    assert mdarray.asarray(1.0).device == everything
    assert mdarray.zeros(1)[0].device == mdarray.asarray(1.0).device
    assert mdarray.asarray(np.ones(3)).device == everything
    assert mdarray.asarray(1.0, device=mdarray.devices()[0]).devices == (mdarray.devices()[0],)


@pytest.mark.parametrize(
    "call",
    [
        mdarray.asarray,
        lambda x: mdarray.asarray(x, dtype=x.dtype, copy=None),
        lambda x: mdarray.astype(x, x.dtype, copy=False),
    ],
)
def test_an_operand_a_creation_function_returns_keeps_its_own_group(call):
    # x's group is made on first use; a function that returns x itself (no copy needed)
    # must not give it the default group meanwhile (SciPy's xp_promote, then x[0].device).
    device = distinct(0, 1)[-1]
    x = mdarray.asarray(np.arange(6.0), device=device)
    assert call(x) is x
    assert x.device == mdarray.DeviceSet([device])
