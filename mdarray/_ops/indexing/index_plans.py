"""What basic indexing decides, from the key and the layout alone: the normalized key, the
result's layout and its parts (``x[key]``), the writes of ``x[key] = value``, and how a
selection's device blocks lie in its source's (`block_keys`). Every plan is cached on
immutable values (`_plan_cache`); `_indexing` runs them on arrays.
"""

from __future__ import annotations

import operator
from bisect import bisect_right

import numpy as np
from ndindex import Integer, Newaxis, Slice, ndindex

from mdarray._array.array import DistArray
from mdarray._core import regions as _regions
from mdarray._core.plan_cache import plan_cache
from mdarray._layouts.layout import Layout
from mdarray._movement.plans import shadowed_within

# A normalized basic key: one item per source axis plus Nones for new axes, each item an
# int (a position), a ``range`` (the selected positions, in result order) or None.


def basic_key(key, shape):
    """`key` normalized against `shape` as a tuple of int / range / None, or None when the
    key is advanced (arrays, bools). Raises IndexError like NumPy for bad basic keys."""
    if not isinstance(key, tuple):
        key = (key,)
    items = []
    for item in key:
        if isinstance(item, DistArray) and not item.ndim and item.dtype.kind in "iu":
            items.append(operator.index(item))
        elif is_advanced(item):
            return None
        else:
            items.append(item)
    expanded = ndindex(tuple(items)).expand(shape)
    out: list[int | range | None] = []
    axis = 0
    for item in expanded.args:
        if isinstance(item, Newaxis):
            out.append(None)
            continue
        n = shape[axis]
        axis += 1
        if isinstance(item, Integer):
            out.append(int(item.raw))
        elif isinstance(item, Slice):
            out.append(range(*item.raw.indices(n)))
        else:
            return None
    return tuple(out)


def is_advanced(item) -> bool:
    """Arrays, lists and bools index by value (advanced indexing); NumPy ints do not."""
    if isinstance(item, (bool, np.bool_)):
        return True
    if isinstance(item, np.integer):
        return False
    return isinstance(item, (list, DistArray)) or hasattr(item, "__array__")


def axis_part(box_range: range, item):
    """How one chunk axis meets one key item: ``(result range or None, local index)``,
    or None when the chunk holds none of the selected positions."""
    if item is None:
        return range(1), None
    if isinstance(item, int):
        if item not in box_range:
            return None
        return None, box_range.index(item)
    ascending = item if item.step > 0 else item[::-1]
    common = _regions.intersect_range(ascending, box_range)
    if not len(common):
        return None
    local = _regions.local_index(box_range, common)
    step = abs(item.step)
    first = (common[0] - item.start) // item.step
    last = (common[-1] - item.start) // item.step
    stride = common.step // step if len(common) > 1 else 1
    if item.step > 0:
        return range(first, last + 1, stride), local
    stop = local.start - 1
    reversed_local = slice(local.stop - local.step, None if stop < 0 else stop, -local.step)
    return range(last, first + 1, stride), reversed_local


def result_shape(key) -> tuple:
    return tuple(1 if item is None else len(item) for item in key if not isinstance(item, int))


@plan_cache
def getitem_plan(layout: Layout, key: tuple):
    """``(result layout, ((chunk, local index), ...))`` for a normalized basic key."""
    shape = result_shape(key)
    parts = []
    index_map: dict = {}
    for k, (box, device) in enumerate(zip(layout.boxes, layout.chunk_devices)):
        result_index, local_index = [], []
        axes = iter(box)
        for item in key:
            part = axis_part(range(1) if item is None else next(axes), item)
            if part is None:
                break
            result_range, local = part
            local_index.append(local)
            if result_range is not None:
                result_index.append(_regions.to_slice(result_range))
        else:
            parts.append((k, (*local_index, Ellipsis)))
            index_map.setdefault(device, []).append(tuple(result_index))
    if not parts or not int(np.prod(shape, dtype=np.int64)):
        # Nothing selected: one empty chunk on the first device keeps the layout valid.
        return Layout(shape, {layout.chunk_devices[0]: ()}), ()
    return Layout(shape, index_map), tuple(parts)


@plan_cache
def key_plan(layout: Layout, key: tuple):
    """What ``x[key]`` decides for a hashable key (see `hashable_key`) on an x of
    `layout`: ``(normalized key, result layout, parts, groups, copy)``, `groups` the
    parts by source device for `Chunks.select` and `copy` whether NumPy gives a scalar
    (an int per axis, no Ellipsis). Raises IndexError like NumPy for bad keys."""
    raw = tuple(slice(*item) if type(item) is tuple else item for item in key)
    basic = basic_key(raw, layout.shape)
    assert basic is not None  # ints, slices, Ellipsis and None only
    result_layout, parts = getitem_plan(layout, basic)
    groups = _groups(layout, parts)
    copy = all(isinstance(item, int) for item in basic) and Ellipsis not in key
    blocks = block_keys(layout, basic, result_layout)
    return basic, result_layout, parts, groups, copy, blocks


def position_plan(layout: Layout, key: tuple):
    """`key_plan` of a hashable key whose first items are ints (``x[i]``, ``x[i, j]``,
    ``x[i, 2:]``), without a plan per position: an int selects the same chunks, and the
    same result layout, as the first position of its *segment* (the positions between
    two consecutive chunk edges along its axis), only shifted inside each chunk. So the
    plan of the segment's first position is looked up and its chunk indices shifted, and
    iterating over an array (``for row in x``, ``max(x)``) plans once per segment rather
    than once per element. Other keys, and layouts with strided boxes along those axes,
    take `key_plan` itself."""
    if not key or type(key[0]) is not int:  # no position: no frame spent on one
        return key_plan(layout, key)
    first, shifts = _segments(layout, key)
    plan = key_plan(layout, first)
    if not any(shifts):
        return plan
    basic, result_layout, parts, _, copy, blocks = plan
    parts = tuple((k, _moved(index, shifts)) for k, index in parts)
    return _moved(basic, shifts), result_layout, parts, _groups(layout, parts), copy, blocks


def position_key(layout: Layout, key: tuple) -> tuple:
    """The normalized key of a hashable key (`key_plan`'s first item), by its segment's
    plan where it starts with ints (see `position_plan`)."""
    if not key or type(key[0]) is not int:
        return key_plan(layout, key)[0]
    first, shifts = _segments(layout, key)
    return _moved(key_plan(layout, first)[0], shifts)


def position_write_plan(layout: Layout, mode, key: tuple, value_shape: tuple):
    """`write_plan` of a normalized key whose first items are ints (``x[i] = v``), by way
    of the plan of its segment's first position shifted, as `position_plan`: the same
    chunks hold the position, and the same of them are shadowed."""
    if not key or type(key[0]) is not int:
        return write_plan(layout, mode, key, value_shape)
    first, shifts = _segments(layout, key)
    return _shifted(write_plan(layout, mode, first, value_shape), shifts)


def position_writes(layout: Layout, mode, key: tuple, value_shape: tuple):
    """`position_write_plan` of a hashable key as given (`hashable_key`), its segments
    found once: the plan of ``x[i] = 1.0`` without the normalized key first."""
    if not key or type(key[0]) is not int:
        return write_plan(layout, mode, key_plan(layout, key)[0], value_shape)
    first, shifts = _segments(layout, key)
    return _shifted(write_plan(layout, mode, key_plan(layout, first)[0], value_shape), shifts)


def _shifted(plan: tuple, shifts: tuple) -> tuple:
    """A `write_plan` of a segment's first position moved on by `shifts` in each chunk."""
    writes, order = plan
    if not any(shifts):
        return plan

    def shifted(index: tuple) -> tuple:
        moved = (slice(i.start + d, i.stop + d, i.step) for i, d in zip(index, shifts))
        return (*moved, *index[len(shifts) :])

    writes = tuple(
        (k, device, shifted(chunk_index), region, tuple(shifted(i) for i in shadowed))
        for k, device, chunk_index, region, shadowed in writes
    )
    return writes, order


def _moved(items: tuple, shifts: tuple) -> tuple:
    """`items` with its first ints moved on by `shifts`."""
    return (*(i + d for i, d in zip(items, shifts)), *items[len(shifts) :])


def _segments(layout: Layout, key: tuple) -> tuple:
    """``(key of the first positions, shifts)`` for a key that starts with an int: `key`
    with each of its first ints (those on axes whose boxes are not strided) replaced by
    the first position of its segment, and each int's offset from it. Raises NumPy's
    IndexError for a position out of range."""
    shape, edges = layout.shape, layout.edges
    if len(key) > len(shape) and all(type(i) is int for i in key[: len(shape) + 1]):
        return key, ()  # too many indices: key_plan says so, as NumPy does
    firsts: list = []
    shifts: list = []
    for axis, i in enumerate(key[: len(shape)]):
        cuts = edges[axis]
        if type(i) is not int or cuts is None:
            break
        n = shape[axis]
        position = i + n if i < 0 else i
        if not 0 <= position < n:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
        first = cuts[bisect_right(cuts, position) - 1]
        firsts.append(first)
        shifts.append(position - first)
    return (*firsts, *key[len(firsts) :]), tuple(shifts)


def _groups(layout: Layout, parts: tuple) -> tuple:
    """`parts` by source device, as `Chunks.select` takes them (no getter for a part that
    is its whole chunk: the view's chunk is then its source's)."""
    by_device: dict = {}
    for t, (k, index) in enumerate(parts):
        whole = _whole(index, layout.chunk_shapes[k])
        entry = (t, k, index, None if whole else operator.itemgetter(index))
        by_device.setdefault(layout.chunk_devices[k], []).append(entry)
    return tuple((device, tuple(entries)) for device, entries in by_device.items())


def _whole(index: tuple, shape: tuple) -> bool:
    """Whether a local `index` (slices, ints and None, then an Ellipsis) selects all of a
    chunk of `shape`, in order and in its shape."""
    items = index[:-1]
    return len(items) == len(shape) and all(
        type(i) is slice and i.start == 0 and i.stop == n and i.step == 1
        for i, n in zip(items, shape)
    )


def block_keys(layout: Layout, key: tuple, result: Layout) -> tuple | None:
    """Per device of `result` (the layout of ``x[key]``), ``(position of its device in
    `layout`, the shape of that device's block, the index of the selection in it)``:
    the view's device block is then ``slab.reshape(shape)[index]`` of x's packed slab
    (`Chunks.view_blocks`). None unless `key` is a unit-step range per axis (a slice,
    normalized), new axes (None) aside, and both layouts have device blocks
    (`Layout.device_blocks`)."""
    blocks, selected = layout.device_blocks, result.device_blocks
    ranges = [item for item in key if item is not None]
    if blocks is None or selected is None or len(ranges) != len(layout.shape):
        return None
    if not all(type(item) is range and item.step == 1 for item in ranges):
        return None
    position = {device: i for i, device in enumerate(layout.devices)}
    out = []
    for device, view_box in zip(result.devices, selected):
        i = position[device]
        box = blocks[i]
        shape = _regions.box_shape(box)
        index: list[slice | None] = []
        sizes = []
        axis = 0
        for item in key:
            if item is None:
                index.append(None)
                sizes.append(1)
                continue
            r = box[axis]
            if r.step != 1 and len(r) > 1:
                return None
            start, stop = max(item.start, r.start), min(item.stop, r.stop)
            part = slice(start - r.start, max(stop, start) - r.start)
            index.append(part)
            sizes.append(len(range(shape[axis])[part]))
            axis += 1
        if tuple(sizes) != _regions.box_shape(view_box):
            return None
        out.append((i, shape, (*index, Ellipsis)))  # an array also where the block is 0-d
    return tuple(out)


def value_order(key: tuple, vshape: tuple) -> tuple:
    """How a value of `vshape` assigned to ``x[key]`` lines up with the selection box
    (ascending positions, one axis per source axis): ``(lead, axes, reorder)``, `lead` the
    axes broadcasting prepends, per source axis ``(value axis or None, reversed)``, and
    ``value[(None,) * lead][reorder]`` the value in box order. Raises ValueError like
    NumPy when the value does not broadcast to the selection."""
    shape = result_shape(key)
    if len(vshape) > len(shape) or any(v not in (1, n) for v, n in zip(vshape[::-1], shape[::-1])):
        raise ValueError(f"could not broadcast input array from shape {vshape} into shape {shape}")
    lead = len(shape) - len(vshape)
    full_shape = (1,) * lead + vshape
    axes: list[tuple[int | None, bool]] = []
    reorder: list[int | slice | None] = []
    axis = 0
    for item in key:
        if isinstance(item, int):
            axes.append((None, False))
            reorder.append(None)
        elif item is None:
            reorder.append(0)
            axis += 1
        else:
            reverse = item.step < 0 and full_shape[axis] > 1
            value_axis = axis - lead
            axes.append(
                (value_axis if value_axis >= 0 and vshape[value_axis] > 1 else None, reverse)
            )
            reorder.append(slice(None, None, -1) if reverse else slice(None))
            axis += 1
    return lead, tuple(axes), tuple(reorder)


@plan_cache
def write_plan(layout: Layout, mode, key: tuple, value_shape: tuple):
    """What ``x[key] = value`` decides for a normalized key on an x of `layout` in
    `mode` and a value of `value_shape`: ``(writes, (lead, reorder))``, one write
    ``(chunk, device, chunk index, value region, shadowed indices)`` per chunk holding
    selected elements, the value region the box of the value (in its own axes, ascending)
    that the chunk reads, and ``piece[lead][reorder]`` (None: as it is) the piece in box
    order (as `_operand_in_box_order` orders the whole value). Raises ValueError like
    NumPy when the value does not broadcast to the selection."""
    vshape = value_shape
    box = selection_box(key)
    lead_count, axes, reorder = value_order(key, vshape)
    identity = not lead_count and all(r == slice(None) for r in reorder)
    order = (None, None) if identity or not vshape else ((None,) * lead_count, tuple(reorder))
    writes = []
    boxes, devices = layout.boxes, layout.chunk_devices
    for k in layout.box_index.meeting(box):
        chunk_box, device = boxes[k], devices[k]
        common = _regions.intersect(box, chunk_box)
        if common is None:
            continue
        within = [range(i.start, i.stop, i.step) for i in _regions.local_box_index(box, common)]
        region = [range(1)] * len(vshape)
        for (target_axis, reverse), r in zip(axes, within):
            if target_axis is None:
                continue
            n = vshape[target_axis]
            region[target_axis] = range(n - 1 - r[-1], n - r[0], r.step) if reverse else r
        shadowed: tuple = ()
        if mode.is_partial:
            shadowed = shadowed_within(layout, common, k)
        chunk_index = _regions.local_box_index(chunk_box, common)
        writes.append((k, device, chunk_index, tuple(region), shadowed))
    return tuple(writes), order


def selection_box(key: tuple) -> tuple:
    """The selected positions of the source as a box of ascending ranges."""
    out = []
    for item in key:
        if item is None:
            continue
        if isinstance(item, int):
            out.append(range(item, item + 1))
        else:
            out.append(item if item.step > 0 else item[::-1])
    return tuple(out)
