"""The ways data enters an SPMD run besides every process passing the same array:
``distributed_array(..., src=rank)`` (one process has the data), ``from_local_chunks``
(each process passes its own chunks) and ``from_callback`` (each process computes its own
chunks). Each array equals the NumPy array the data came from."""

import numpy as np
import pytest

import mdarray
from mdarray import distributed

from ._spmd import check_value, everywhere, raises_everywhere, rng, run

SHAPE = (7, 6)


def data(seed=0):
    return rng(seed).integers(-9, 10, size=SHAPE).astype(np.float64)


def layouts():
    devices = mdarray.devices()
    overlapping = {d: list(i) for d, i in mdarray.Layout.block(SHAPE, axis=0).index_map.items()}
    overlapping[devices[0]].append((slice(None), slice(1, None, 2)))
    overlapping[devices[-1]].append((slice(2, 5),))
    return {
        "rows": mdarray.Layout.block(SHAPE, axis=0),
        "cols": mdarray.Layout.block(SHAPE, axis=1),
        "overlapping": mdarray.Layout(SHAPE, overlapping),
        "on the last device": mdarray.Layout(SHAPE, {devices[-1]: ()}),
    }


LAYOUTS = list(layouts())


def sources():
    return sorted({0, distributed.size() - 1})


@pytest.mark.parametrize("mode", ["replica", "sum", "max"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_distributed_array_from_one_process(layout, mode):
    value = data(1)
    for src in sources():
        mine = value if distributed.rank() == src else None
        x = run(lambda src=src, mine=mine: mdarray.distributed_array(
            mine, layouts()[layout], mode, src=src
        ))  # fmt: skip
        everywhere(x.shape == SHAPE and x.dtype == value.dtype, f"{x.shape} {x.dtype}")
        check_value(x, value, exact=True)


def test_distributed_array_from_a_bad_source_raises_everywhere():
    value = data(2)
    layout = layouts()["rows"]
    raises_everywhere(ValueError, mdarray.distributed_array, value, layout, src=distributed.size())
    raises_everywhere(ValueError, mdarray.distributed_array, value, layout, src=-1)
    # The source's array must fit the layout; the others learn it from the source.
    wrong = np.zeros((3, 3)) if distributed.rank() == 0 else None
    raises_everywhere(ValueError, mdarray.distributed_array, wrong, layout, src=0)
    check_value(mdarray.distributed_array(value, layout), value)


def local_chunks(value, layout):
    """``{device: [value[index] for each of its chunks]}`` for this process's devices."""
    local = set(distributed.local_devices())
    return {
        device: [value[index] for index in layout.index_map[device]]
        for device in layout.index_map
        if device in local
    }


@pytest.mark.parametrize("layout", LAYOUTS)
def test_from_local_chunks(layout):
    value = data(3)
    chunks = local_chunks(value, layouts()[layout])
    x = run(lambda: mdarray.from_local_chunks(SHAPE, layouts()[layout], chunks))
    check_value(x, value, exact=True)


def test_from_local_chunks_of_the_wrong_shape_raises_everywhere():
    value = data(4)
    layout = layouts()["rows"]
    chunks = local_chunks(value, layout)
    if distributed.rank() == distributed.size() - 1:
        device = max(chunks)
        chunks[device] = [chunk[:, :1] for chunk in chunks[device]]
    raises_everywhere(ValueError, mdarray.from_local_chunks, SHAPE, layout, chunks)
    check_value(mdarray.distributed_array(value, layout), value)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_from_callback(layout):
    value = data(5)
    calls = []

    def chunk(index):
        calls.append(index)
        return value[index]

    x = run(lambda: mdarray.from_callback(SHAPE, layouts()[layout], chunk))
    check_value(x, value, exact=True)
    # Called once for each chunk of this process's devices, with that chunk's index.
    local = set(distributed.local_devices())
    mine = sorted(
        repr(value[index].shape) for device, index in layouts()[layout].chunks if device in local
    )
    called = sorted(repr(value[index].shape) for index in calls)
    everywhere(called == mine, f"called for {calls}, chunks {mine}")


def test_from_callback_that_raises_on_one_process_raises_everywhere():
    failing = distributed.size() - 1

    def chunk(index):
        if distributed.rank() == failing:
            raise ZeroDivisionError("no data here")
        return np.zeros(SHAPE)[index]

    layout = layouts()["rows"]  # a chunk on every device: every process calls `chunk`
    try:
        mdarray.from_callback(SHAPE, layout, chunk)
    except Exception as error:  # the type differs by process: checked below
        raised = error
    else:
        raised = None
    # The failing process raises its own error; the others an error naming that process.
    want = ZeroDivisionError if distributed.rank() == failing else RuntimeError
    everywhere(isinstance(raised, want), f"expected {want.__name__}, got {raised!r}")
    check_value(mdarray.distributed_array(data(6), layout), data(6))
