"""Layouts: which device holds which part of an array, as an immutable value."""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterable, Sequence
from functools import cached_property, lru_cache
from typing import Any, SupportsIndex, TypeAlias

import numpy as np

from mdarray._backends.backend import Backend, DeviceSet, devices as backend_devices
from mdarray._core import plan_cache as _plan_cache, regions as _regions
from mdarray._core.limits import extent

#: A shape: an int or a sequence of ints.
ShapeLike: TypeAlias = int | np.integer | Sequence[SupportsIndex]
#: ``{device: index or [index, ...]}``; an index is an int, a slice or a tuple of them.
IndexMap: TypeAlias = dict[int, Any]
#: ``devices=``: device ids (a DeviceSet is one), one id, or None for all of the backend's.
DevicesLike: TypeAlias = Iterable[SupportsIndex] | int | np.integer | None


class Layout:
    """The immutable, hashable pair (shape, normalized index map).

    An index map is ``{device: [index, ...]}``; a bare index (not a list) means one chunk.
    Each index has one int or slice per leading axis (missing axes mean the whole axis);
    slices need a positive step. Normalized, every index is a tuple of ``slice(start,
    stop, step)`` with all three set, ints becoming length-1 slices, so chunks keep the
    array's ndim. Chunks may overlap, be strided, be empty, and several may share a
    device; together they must cover every element.

    >>> import mdarray
    >>> layout = mdarray.Layout((4, 6), {0: (slice(0, 2),), 1: [(slice(2, 4), 0), (slice(2, 4), slice(1, 6))]})
    >>> layout.index_map[1]
    [(slice(2, 4, 1), slice(0, 1, 1)), (slice(2, 4, 1), slice(1, 6, 1))]
    >>> Layout.block((4, 6), devices=[0, 1]).chunk_shapes
    ((2, 6), (2, 6))
    """

    __slots__ = ("__dict__", "_hash", "chunks", "shape")

    def __init__(self, shape: ShapeLike, index_map: IndexMap) -> None:
        self.shape = _normalize_shape(shape)
        #: The product of the non-zero sides, which NumPy limits (an array's size), checked
        #: here and, times the item size, where chunks are allocated.
        self.extent = extent(self.shape)
        if not isinstance(index_map, dict):
            raise TypeError(
                f"index_map must be a dict {{device: [index, ...]}}, got {type(index_map).__name__}"
            )
        chunks: list[tuple[int, tuple[slice, ...]]] = []
        for key, indices in index_map.items():
            device = _normalize_device(key)
            chunks.extend(
                (device, _normalize_index(index, self.shape, device, k))
                for k, index in enumerate(indices if isinstance(indices, list) else [indices])
            )
        if not chunks:
            raise ValueError("index_map has no chunks; every element needs a chunk holding it")
        self.chunks = tuple(chunks)
        self._hash = hash((self.shape, self._key))
        self._check_coverage()

    @cached_property
    def _key(self) -> tuple:
        return tuple(
            (d, tuple((s.start, s.stop, s.step) for s in index)) for d, index in self.chunks
        )

    @cached_property
    def boxes(self) -> tuple[tuple[range, ...], ...]:
        """Each chunk's global positions as a tuple of ranges (see `_regions`)."""
        return tuple(
            tuple(range(s.start, s.stop, s.step) for s in index) for _, index in self.chunks
        )

    @cached_property
    def plan_bytes(self) -> int:
        """What this layout holds (its chunks and the tables cached on it so far), walked
        once: each plan cached on it counts it by this figure (`_plan_cache.nbytes`), so
        remembering one more plan of a layout of many chunks does not walk them again."""
        return _plan_cache.nbytes((self.shape, self.chunks, *self.__dict__.values()))

    @cached_property
    def edges(self) -> tuple[tuple[int, ...] | None, ...]:
        """Per axis, the sorted starts and stops of the chunks' boxes along it (0 first),
        or None where a box is strided along it: the positions between two consecutive
        edges lie in the same chunks (`_ops.indexing.index_plans.position_plan`)."""
        out: list[tuple[int, ...] | None] = []
        for axis in range(len(self.shape)):
            ranges = [box[axis] for box in self.boxes]
            if any(len(r) > 1 and r.step != 1 for r in ranges):
                out.append(None)
                continue
            edges = {0}.union(*((r[0], r[-1] + 1) for r in ranges if len(r)))
            out.append(tuple(sorted(edges)))
        return tuple(out)

    @cached_property
    def box_index(self) -> _regions.BoxIndex:
        """The chunks' boxes indexed for `BoxIndex.meeting`: which chunks meet a region."""
        return _regions.BoxIndex(self.boxes)

    @cached_property
    def chunk_shapes(self) -> tuple[tuple[int, ...], ...]:
        return tuple(_regions.box_shape(box) for box in self.boxes)

    @cached_property
    def chunk_devices(self) -> tuple[int, ...]:
        return tuple(device for device, _ in self.chunks)

    @cached_property
    def packing(self) -> tuple:
        """How a packed array stores its chunks, one flat slab per device (in `devices`
        order) holding that device's chunks one after another, in layout order.

        Per device: ``(((chunk, offset, size), ...), total size)``. Operands of one
        layout packed this way line up slab to slab, so an elementwise op runs as one
        kernel per device instead of one per chunk.
        """
        out = []
        for device in self.devices:
            entries = []
            offset = 0
            for k, (d, shape) in enumerate(zip(self.chunk_devices, self.chunk_shapes)):
                if d == device:
                    size = math.prod(shape)
                    entries.append((k, offset, size))
                    offset += size
            out.append((tuple(entries), offset))
        return tuple(out)

    @cached_property
    def device_blocks(self) -> tuple | None:
        """Per device (in `devices` order), the box its chunks tile one after another
        along axis 0 in layout order (rows that follow on, the same unstrided extent
        along the other axes), or None if some device's chunks do not.

        A device's block is then one array: its packed slab in C order, or a strided view
        over its chunks' buffers (`Backend.span`). Operands whose blocks agree line up
        block to block whatever their chunks (``x[1:] - y[:-1]`` of row chunks on one
        device), so an elementwise op runs one kernel per device.
        """
        out = []
        for entries, _ in self.packing:
            boxes = [self.boxes[k] for k, _, _ in entries]
            block = boxes[0]
            for box in boxes[1:]:
                if not box or box[1:] != block[1:] or box[0].start != block[0].stop:
                    return None
                block = (range(block[0].start, box[0].stop), *block[1:])
            if len(boxes) > 1 and any(r.step != 1 and len(r) > 1 for b in boxes for r in b):
                return None
            out.append(block)
        return tuple(out)

    @cached_property
    def slab_block_keys(self) -> tuple | None:
        """Per device, ``(slab number, block shape, ...)``: its packed slab reshaped to its
        device block (`device_blocks`), as `Chunks.slab_blocks` takes it; None where
        the blocks do not exist."""
        blocks = self.device_blocks
        if blocks is None:
            return None
        return tuple((i, tuple(len(r) for r in box), ...) for i, box in enumerate(blocks))

    @cached_property
    def row_tiling(self) -> tuple[int, ...] | None:
        """The chunks that tile the array by whole rows, in row order (one chunk where one
        holds it all; chunks of no elements left out), or None where there are none such:
        the chunks whose buffers, lying one after another in one allocation, are the whole
        array (`Backend.span`)."""
        whole = tuple(range(n) for n in self.shape)
        if whole in self.boxes:
            return (self.boxes.index(whole),)
        held = [k for k, box in enumerate(self.boxes) if all(box)]
        order = sorted(held, key=lambda k: self.boxes[k][0].start)
        return tuple(order) if tile_rows([self.boxes[k] for k in order], self.shape) else None

    @property
    def index_map(self) -> dict[int, list[tuple[slice, ...]]]:
        """``{device: [index, ...]}`` with normalized indices (a new dict each time)."""
        out: dict[int, list[tuple[slice, ...]]] = {}
        for device, index in self.chunks:
            out.setdefault(device, []).append(index)
        return out

    @cached_property
    def devices(self) -> tuple[int, ...]:
        """The devices holding chunks, in order of first appearance."""
        return tuple(dict.fromkeys(self.chunk_devices))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @cached_property
    def has_overlaps(self) -> bool:
        """True if some element is held by more than one chunk."""
        return any(self.shadowed)

    @cached_property
    def cover(self) -> _regions.Cover:
        """Which chunk owns each element of the layout's array (its cover by the chunks)."""
        return _regions.cover(_regions.full_box(self.shape), self.boxes)

    @cached_property
    def shadowed(self) -> tuple[list[tuple], ...]:
        """Per chunk, index tuples into it of the elements it holds but another chunk
        owns (`_regions.Cover.shadowed`); all empty where no chunks overlap."""
        return tuple(self.cover.shadowed(k) for k in range(len(self.chunks)))

    def splits(self, axis: int, *, empty_chunks: bool = True) -> bool:
        """Whether some chunk holds only part of `axis` (with ``empty_chunks=False``:
        some chunk that holds elements)."""
        whole = range(self.shape[axis])
        return any(
            box[axis] != whole for box in self.boxes if empty_chunks or _regions.box_size(box)
        )

    def whole_along(
        self, axes: int | tuple[int, ...], *, everywhere: bool = False, longest: bool = True
    ) -> Layout:
        """A layout of this shape, over these devices, whose chunks hold `axes` whole:
        blocks along the longest other axis (``longest=False``: the first); where every
        axis is in `axes`, the whole array on the first device (`everywhere`: on each)."""
        whole = axes if isinstance(axes, tuple) else (axes,)
        others = [a for a in range(self.ndim) if a not in whole]
        if not others:
            devices = self.devices if everywhere else self.devices[:1]
            return Layout.replicated(self.shape, devices=devices)
        along = max(others, key=lambda a: self.shape[a]) if longest else others[0]
        return Layout.block(self.shape, axis=along, devices=self.devices)

    def _check_coverage(self) -> None:
        if 0 in self.shape:
            return
        missing = _regions.cover(_regions.full_box(self.shape), self.boxes).uncovered()
        if missing is not None:
            raise ValueError(
                f"index_map leaves element {missing} of an array of shape {self.shape} "
                "uncovered: every element needs a chunk holding it"
            )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layout):
            return NotImplemented
        return self.shape == other.shape and self._key == other._key

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Layout({self.shape}, {self.index_map!r})"

    def __reduce__(self) -> tuple[type[Layout], tuple[tuple[int, ...], IndexMap]]:
        return (Layout, (self.shape, self.index_map))

    # Constructors -------------------------------------------------------------------

    @classmethod
    def block(cls, shape: ShapeLike, axis: int = 0, devices: DevicesLike = None) -> Layout:
        """Contiguous blocks along `axis`, one per device, sizes as even as possible.

        >>> Layout.block((5, 2), devices=[0, 1]).index_map
        {0: [(slice(0, 3, 1), slice(0, 2, 1))], 1: [(slice(3, 5, 1), slice(0, 2, 1))]}
        """
        shape = _normalize_shape(shape)
        devices = _default_devices(devices)
        if not shape:
            return cls.replicated(shape, devices[:1])
        axis = _normalize_axis(axis, len(shape))
        grid = tuple(len(devices) if a == axis else 1 for a in range(len(shape)))
        return cls.grid(shape, grid, devices)

    @classmethod
    def grid(
        cls, shape: ShapeLike, grid: Sequence[SupportsIndex], devices: DevicesLike = None
    ) -> Layout:
        """Blocks on a grid: ``grid[a]`` parts along axis ``a``; devices assigned in C
        order over the blocks, cycling when there are more blocks than devices.

        >>> Layout.grid((4, 4), (2, 2), devices=[0, 1, 2, 3]).index_map[3]
        [(slice(2, 4, 1), slice(2, 4, 1))]
        """
        shape = _normalize_shape(shape)
        device_ids = _default_devices(devices)
        parts = tuple(operator.index(g) for g in grid)
        if len(parts) > len(shape) or any(g < 1 for g in parts):
            raise ValueError(
                f"grid {parts} must have at most {len(shape)} positive entries for shape {shape}"
            )
        parts = parts + (1,) * (len(shape) - len(parts))
        edges = [_split(n, g) for n, g in zip(shape, parts)]
        index_map: IndexMap = {}
        for k, block in enumerate(itertools.product(*[range(g) for g in parts])):
            index = tuple(slice(edges[a][b], edges[a][b + 1], 1) for a, b in enumerate(block))
            index_map.setdefault(device_ids[k % len(device_ids)], []).append(index)
        return cls(shape, index_map)

    @classmethod
    def replicated(cls, shape: ShapeLike, devices: DevicesLike = None) -> Layout:
        """The whole array on every device.

        >>> Layout.replicated((3,), devices=[0, 2]).index_map
        {0: [(slice(0, 3, 1),)], 2: [(slice(0, 3, 1),)]}
        """
        shape = _normalize_shape(shape)
        full = tuple(slice(0, n, 1) for n in shape)
        return cls(shape, {d: [full] for d in _default_devices(devices)})


#: ``device=``: one device id, a DeviceSet, a Layout, or None for the default layout.
Device: TypeAlias = SupportsIndex | DeviceSet | Layout | None


def make_2d_index_map(
    i_partitions: Sequence[int],
    j_partitions: Sequence[int],
    devices: Sequence[Sequence[Iterable[int] | int]],
) -> dict[int, list[tuple[slice, slice]]]:
    """An index map for a 2-D array in blocks, as CuPy's seed function makes it.

    Parameters
    ----------
    i_partitions, j_partitions : list of int
        Block edges along each axis, increasing from 0 (the last is the axis length).
    devices : list of lists of sets of int
        ``devices[i][j]``: the devices holding block ``(i, j)`` (several mean copies),
        or one device id.

    Examples
    --------
    >>> import mdarray
    >>> mdarray.make_2d_index_map([0, 2, 4], [0, 3], [[{0}], [{1, 2}]])[2]
    [(slice(2, 4, None), slice(0, 3, None))]
    """
    for name, edges in (("i_partitions", i_partitions), ("j_partitions", j_partitions)):
        if not edges or edges[0] != 0 or any(a >= b for a, b in itertools.pairwise(edges)):
            raise ValueError(f"{name} must increase strictly from 0, got {edges!r}")
    if len(devices) != len(i_partitions) - 1 or any(
        len(row) != len(j_partitions) - 1 for row in devices
    ):
        raise ValueError(
            f"devices must be a {len(i_partitions) - 1} x {len(j_partitions) - 1} grid of "
            "device sets, one per block"
        )
    index_map: dict[int, list[tuple[slice, slice]]] = {}
    for i, row in enumerate(devices):
        for j, owners in enumerate(row):
            index = (
                slice(i_partitions[i], i_partitions[i + 1]),
                slice(j_partitions[j], j_partitions[j + 1]),
            )
            # One device id for a block held once.
            held_by = {owners} if isinstance(owners, (int, np.integer)) else owners
            for device in sorted(held_by):
                index_map.setdefault(device, []).append(index)
    return index_map


def tile_rows(boxes: Sequence[tuple[range, ...]], shape: tuple[int, ...]) -> bool:
    """Whether `boxes`, in their order, tile an array of `shape` by whole rows."""
    rest = tuple(range(n) for n in shape[1:])
    row = 0
    for rows, *others in boxes:
        if rows.start != row or rows.step != 1 or tuple(others) != rest:
            return False
        row = rows.stop
    return row == shape[0]


def shape_tuple(shape: ShapeLike) -> tuple[int, ...]:
    """`shape` as a tuple of Python ints, as NumPy reads a shape: an int is one side, any
    other value a sequence of sides (NumPy's TypeError for a side that is not an integer;
    sides are not checked further)."""
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    return tuple(operator.index(n) for n in shape)


def _normalize_shape(shape: ShapeLike) -> tuple[int, ...]:
    try:
        normalized = shape_tuple(shape)
    except TypeError:
        raise TypeError(f"shape must be a tuple of ints, got {shape!r}") from None
    if any(n < 0 for n in normalized):
        raise ValueError(f"negative dimensions are not allowed: {normalized}")
    return normalized


def _normalize_device(device) -> int:
    if isinstance(device, (bool, np.bool_)) or not isinstance(device, (int, np.integer)):
        raise TypeError(f"index_map keys must be int device ids, got {device!r}")
    if device < 0:
        raise ValueError(f"device ids are non-negative, got {device}")
    return int(device)


def _normalize_axis(axis, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def _normalize_index(index, shape: tuple, device: int, k: int) -> tuple[slice, ...]:
    where = f"chunk {k} of device {device}"
    if not isinstance(index, tuple):
        index = (index,)
    if len(index) > len(shape):
        raise IndexError(
            f"too many indices for an array of shape {shape}: {where} has {len(index)}"
        )
    out = []
    for axis, (item, n) in enumerate(
        zip(index + (slice(None),) * (len(shape) - len(index)), shape)
    ):
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, np.integer, slice)):
            raise TypeError(f"{where}: index {item!r} on axis {axis} must be an int or a slice")
        if isinstance(item, slice):
            for name in ("start", "stop", "step"):
                value = getattr(item, name)
                if value is not None and not isinstance(value, (int, np.integer)):
                    raise TypeError(
                        f"{where}: slice {name} {value!r} on axis {axis} must be an int"
                    )
            if item.step is not None and item.step <= 0:
                raise ValueError(
                    f"{where}: slice step must be positive on axis {axis}, got {item.step}"
                )
            for name in ("start", "stop"):
                value = getattr(item, name)
                if value is not None and not -n <= value <= n:
                    raise IndexError(
                        f"{where}: slice {name} {value} is out of bounds for axis {axis} with size {n}"
                    )
            out.append(_regions.to_slice(range(*item.indices(n))))
        else:
            if not -n <= item < n:
                raise IndexError(
                    f"{where}: index {item} is out of bounds for axis {axis} with size {n}"
                )
            i = int(item) % n
            out.append(slice(i, i + 1, 1))
    return tuple(out)


def _split(n: int, parts: int) -> list[int]:
    base, extra = divmod(n, parts)
    edges = [0]
    for p in range(parts):
        edges.append(edges[-1] + base + (1 if p < extra else 0))
    return edges


def _default_devices(devices: DevicesLike) -> tuple[int, ...]:
    if devices is None:
        return backend_devices()
    ids = getattr(devices, "device_ids", devices)  # a DeviceSet's ids
    if isinstance(ids, (int, np.integer)):
        ids = (ids,)
    device_ids = tuple(_normalize_device(d) for d in ids)
    if not device_ids:
        raise ValueError("devices must not be empty")
    return device_ids


def layout_for_device(shape: Sequence[int], device: Device, backend: Backend) -> Layout:
    """The layout that ``device=`` means for an array of `shape` on `backend`: an int (all
    on that device), a DeviceSet (blocks along axis 0 over its devices), a Layout
    (exactly it) or None (blocks over all the backend's devices)."""
    shape = tuple(shape)
    if device is None:
        return _blocks_over(shape, tuple(backend.device_ids))
    if isinstance(device, Layout):
        if device.shape != shape:
            raise ValueError(f"device layout has shape {device.shape}, the array has shape {shape}")
        return device
    if isinstance(device, DeviceSet):
        if device.backend != backend.name:
            raise ValueError(f"{device!r} is of the {device.backend} backend, not {backend.name}")
        return _blocks_over(shape, tuple(device.device_ids))
    try:
        device = operator.index(device)
    except TypeError:
        raise TypeError(
            f"device must be a device id, a DeviceSet, a Layout or None, got {device!r}"
        ) from None
    return _blocks_over(shape, (device,), whole=True)


@lru_cache(maxsize=1024)
def _blocks_over(shape: tuple, devices: tuple, whole: bool = False) -> Layout:
    """Blocks along axis 0 over `devices` (`whole`: the array on its one device), one
    Layout object per shape and devices, so what operations decide and keep by layout
    (plans, decided calls) serves every array made alike (``ones(n, device=x.device)``
    in a loop)."""
    if whole:
        return Layout.replicated(shape, devices=list(devices))
    return Layout.block(shape, devices=devices)


def check_devices(layout: Layout, backend: Backend) -> None:
    """Raise ValueError naming the first device of `layout` that `backend` lacks."""
    for device in layout.devices:
        if device not in backend.device_ids:
            raise ValueError(
                f"device {device} in the index map is not a device of the {backend.name} backend "
                f"(devices {list(backend.device_ids)})"
            )
