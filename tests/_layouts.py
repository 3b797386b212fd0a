"""Devices, small index maps and data shared by the tests.

Tests name devices by number (0, 1, 2, ...); `device` maps a number onto the backend's
devices, cycling, so the same test runs with any number of devices: with one, every
chunk sits on device 0 (several chunks per device, still a real test of the chunk logic).
`dist_pairs` draws the ``(DistArray, NumPy value)`` pairs most op tests compare.
"""

import itertools

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mdarray
from mdarray.testing import strategies as mst

D = mdarray.devices()


def device(i: int) -> int:
    """The backend device for test device number `i` (cycling over the devices)."""
    return D[i % len(D)]


def devices(*numbers: int) -> list[int]:
    """`device` of each number, repeats kept: as ``devices=`` of ``Layout.block`` or
    ``Layout.grid`` it still gives one block per number."""
    return [device(i) for i in numbers]


def distinct(*numbers: int) -> list[int]:
    """`devices` without repeats, first occurrence first (for a DeviceSet or
    ``Layout.replicated``)."""
    return list(dict.fromkeys(devices(*numbers)))


def row_blocks(shape: tuple, parts: int = 4, on: tuple = (0, 0, 1, 1)) -> dict:
    """An index map of `parts` even row blocks of a 2-D `shape`, block k on test device
    number ``on[k]`` (`spread`)."""
    cuts = np.linspace(0, shape[0], parts + 1).astype(int)
    index_map: dict = {}
    for k in range(parts):
        index_map.setdefault(on[k], []).append((slice(cuts[k], cuts[k + 1]), slice(0, shape[1])))
    return spread(index_map)


def spread(index_map: dict) -> dict:
    """An index map keyed by test device numbers, put on the backend's devices: chunks
    of numbers that land on one device are merged into its list, in order."""
    result: dict = {}
    for number, indices in index_map.items():
        result.setdefault(device(number), []).extend(
            indices if isinstance(indices, list) else [indices]
        )
    return result


def rows(edges, on) -> dict:
    """Row chunks between `edges`, chunk k on test device number ``on[k]`` (`spread`)."""
    out: dict = {}
    for k, d in enumerate(on):
        out.setdefault(d, []).append((slice(edges[k], edges[k + 1]),))
    return spread(out)


def two_chunks(first, second) -> dict:
    """An index map with `first` on the first device and `second` on the last one
    (both on one device when there is only one); each an index or a list of them."""
    if D[0] == D[-1]:
        return {D[0]: [*_listed(first), *_listed(second)]}
    return {D[0]: first, D[-1]: second}


def _listed(indices) -> list:
    return indices if isinstance(indices, list) else [indices]


def holders(layout: mdarray.Layout) -> np.ndarray:
    """The device holding each element of `layout` (one without overlaps), as an array of
    its shape: what moves between two elements is a transfer where their holders differ
    (moves within one device are not counted)."""
    holder = np.empty(layout.shape, dtype=int)
    for box, device in zip(layout.boxes, layout.chunk_devices):
        holder[np.ix_(*box)] = device
    return holder


def fetched(source: mdarray.Layout, target: mdarray.Layout) -> int:
    """How many elements `target`'s chunks hold that `source` (without overlaps) has on
    another device: the elements a reshard from `source` to `target` moves."""
    holder = holders(source)
    return sum(
        int(np.count_nonzero(holder[np.ix_(*box)] != device))
        for box, device in zip(target.boxes, target.chunk_devices)
    )


@st.composite
def sources(draw):
    """(array, layout, mode) with small values so every mode is exact."""
    dtype = draw(mst.dtypes())
    shape = draw(mst.shapes())
    array = draw(hnp.arrays(dtype, shape, elements=mst.small_elements(dtype)))
    return array, draw(mst.layouts(shape)), draw(mst.modes(dtype))


@st.composite
def dist_pairs(draw, shape=None, dtype=None, mode=None, *, elements=None, **layout_options):
    """Pairs ``(x, value)``: a NumPy `value` drawn by hypothesis, and a DistArray `x` built
    from it on a drawn layout (`layout_options` as for `mst.layouts`) in a drawn mode.

    The tests compare an op on `x` with NumPy's op on `value`: a value drawn on its own,
    not read back from `x`'s chunks (``x.get()`` would make the comparison circular).
    Shape, dtype and mode are drawn unless given; elements default to
    `mst.small_elements`, so every mode is exact.
    """
    shape = draw(mst.shapes()) if shape is None else tuple(shape)
    dtype = np.dtype(draw(mst.dtypes()) if dtype is None else dtype)
    if elements is None:
        elements = mst.small_elements(dtype)
    value = draw(hnp.arrays(dtype, shape, elements=elements))
    x = draw(
        mst.spread(
            st.just(value),
            layouts=lambda shape: mst.layouts(shape, **layout_options),
            modes=mode,
        )
    )
    return x, value


LAYOUT_NAMES = ("rows", "cols", "replicated", "uneven")


def named_layout(name: str, shape: tuple) -> mdarray.Layout:
    """A layout of `shape` by name: ``rows`` (blocks along axis 0), ``cols`` (along the
    last axis), ``replicated`` (every device holds it all) or ``uneven`` (blocks of
    unequal lengths along axis 0, one of them empty where the axis is short)."""
    shape = tuple(shape)
    if name == "replicated" or not shape:
        return mdarray.Layout.replicated(shape, devices=distinct(0, 1, 2))
    axis = len(shape) - 1 if name == "cols" else 0
    if name in ("rows", "cols"):
        return mdarray.Layout.block(shape, axis=axis, devices=devices(0, 1, 2))
    n = shape[0]
    cuts = sorted({0, min(1, n), min(n, max(1, (2 * n) // 3)), n})
    rest = tuple(slice(0, m) for m in shape[1:])
    index_map: dict = {}
    for k, (lo, hi) in enumerate(itertools.pairwise(cuts)):
        index_map.setdefault(k % 3, []).append((slice(lo, hi), *rest))
    if len(cuts) < 2 or cuts[-1] == 0:
        return mdarray.Layout.replicated(shape, devices=distinct(0, 1))
    return mdarray.Layout(shape, spread(index_map))


def on_layout(value, name: str):
    """`value` (a NumPy array; anything else as it is) as a DistArray on `named_layout`."""
    if not isinstance(value, np.ndarray):
        return value
    return mdarray.distributed_array(value, named_layout(name, value.shape))
