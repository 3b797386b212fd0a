"""The memory under chunk buffers: allocations, the families using them, and recipes.

`_storage` tracks memory per *allocation* (a chunk's own array or a packed slab), with the
*families* (array values: an array and its views) that use it, and gives each chunk
buffer a *recipe*: the steps that view the chunk in its allocation. A recipe is a flat
tuple of steps run one after another, never a nesting of functions, so a chain of a
thousand views of views reads its buffers in one loop.

The same facts make an array's value portable: `saved` lists the memory an array's chunks
use, each allocation once, and where in it each chunk lies (a byte offset and strides
from the allocation's start), so pickling holds each byte once and a copy keeps the
sharing between the arrays copied together (`copy.deepcopy([x, y])`, a pickle of both)
while sharing nothing with the originals. `_storage` restores Chunks from it. The views
of packed slabs (`unpack`) and their checks (`check_slabs`) live here too.
"""

from __future__ import annotations

import copy
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from mdarray._backends.backend import Backend, get_backend
from mdarray._core import regions as _regions
from mdarray._core.limits import MAX_INDEX, allocatable
from mdarray._layouts.layout import Layout, check_devices
from mdarray._spmd import processes as _processes
from mdarray._spmd.processes import Remote, is_local

#: A chunk's recipe: steps that take its allocation's array to the chunk buffer.
Recipe = tuple[Callable[[Any], Any], ...]


class Weakly(dict):
    """Objects held weakly, by C functions alone: each is a key, a weak reference to it
    whose callback, this dict's ``pop``, removes it when it dies; ``len`` is the living
    count. Add with ``held[weakref.ref(obj, held.pop)] = None`` (a WeakSet's add, len and
    removal each cost a Python frame, on every view and write); iterate with `living`.
    The dict and a living member's reference form a cycle that the member's death
    breaks."""

    __slots__ = ()

    def living(self) -> list:
        """The members alive now."""
        return [obj for obj in map(_called, list(self)) if obj is not None]


def _called(ref):
    return ref()


class Allocation:
    """Memory that chunks live in: a root array (a chunk's own buffer or a packed slab) on
    a device of `backend`, and the families that use it (weakly).

    Pickled, it is its data on the host once however many arrays use it; unpickled, it
    waits (`backend` None) until the array that holds it places it on its device
    (`place`)."""

    __slots__ = ("__weakref__", "array", "backend", "device", "families")

    def __init__(self, array, device: int, backend: Backend | None) -> None:
        self.array = array
        self.device = device
        self.backend = backend
        self.families = Weakly()

    def __reduce__(self) -> tuple:
        # Each allocation pickles its own bytes. A fresh view of a host array: pickle
        # keeps one copy of an object met twice, and two allocations may hold one array
        # (the compact memory `saved` gives a chunk that uses part of an allocation is the
        # chunk buffer itself, which an array sharing it by copy on write uses too), so
        # unpickled they would write each other's memory with no family to part them.
        array = self.array
        if isinstance(array, np.ndarray):
            return (Allocation, (array.view(), self.device, None))
        backend = self.backend  # a device array: its bytes come to the host
        assert backend is not None, "a device array's allocation has its backend"
        host = backend.host_empty(array.shape, array.dtype)
        backend.to_host_into(host, array, self.device)
        backend.synchronize([self.device])
        return (Allocation, (host, self.device, None))

    def copied(self, memo: dict | None) -> Allocation:
        """A copy of this memory on its device, sharing nothing with it; `memo` (a
        ``copy.deepcopy`` memo) also copies the elements of an object array."""
        array = self.array
        if isinstance(array, Remote):  # another process's memory: its own copy is made there
            return Allocation(array, self.device, self.backend)
        if memo is not None and array.dtype == object:
            return Allocation(copy.deepcopy(array, memo), self.device, self.backend)
        backend = self.backend
        assert backend is not None, "only an unpickled allocation waits for its backend"
        return Allocation(backend.copy(array, self.device), self.device, backend)

    def place(self, backend: Backend) -> None:
        """An unpickled allocation's data moved onto its device of `backend` (once)."""
        if self.backend is None:
            array = self.array
            if not backend.is_native(array):
                array = backend.from_host(array, self.device)
            self.array = array
            self.backend = backend


class Family:
    """One logical array value: the Chunks of an array and of its views.

    `exported` once its memory is viewed outside mdarray (a DLPack export, the CUDA array
    interface): from then on it shares that memory with no other array value (`Chunks.
    export`), and a write computed into new memory is copied into it, so the outside
    view and the array stay one."""

    __slots__ = ("__weakref__", "exported", "members")

    def __init__(self) -> None:
        self.members = Weakly()
        self.exported = False


def slab_part(offset: int, size: int, shape: tuple) -> tuple:
    """The recipe of a packed chunk: its part of the slab, in its shape (two C callables,
    so a view's buffers are made with no Python frame per step)."""
    return operator.itemgetter(slice(offset, offset + size)), operator.methodcaller(
        "reshape", shape
    )


_RECIPES: dict = {}  # layout -> `slab_recipes` (bounded)


def slab_recipes(layout: Layout) -> tuple:
    """Per chunk of `layout` ``(slab number, recipe)``: where packed storage holds it
    (`slab_part`), the same for every array of the layout, so made once per layout."""
    got = _RECIPES.get(layout)
    if got is None:
        refs: list = [None] * len(layout.chunks)
        for i, (entries, _) in enumerate(layout.packing):
            for k, offset, size in entries:
                refs[k] = (i, slab_part(offset, size, layout.chunk_shapes[k]))
        if len(_RECIPES) >= 256:
            _RECIPES.clear()
        got = _RECIPES[layout] = tuple(refs)
    return got


def viewed_chunks(groups: tuple | None, chunks) -> list | None:
    """The source's chunks that chunks `chunks` (None: all) of a view are views of: by
    `groups` (`Chunks.select`'s), else chunk t of chunk t (`Chunks.remap`)."""
    if groups is None:
        return None if chunks is None else list(chunks)
    wanted = None if chunks is None else set(chunks)
    return [k for _, es in groups for t, k, _, _ in es if wanted is None or t in wanted]


def late_buffers(layout, backend: Backend, source: tuple, pending: tuple) -> tuple:
    """The chunk buffers of a late view (`Chunks._late`: ``(source chunks, groups,
    make)``) made from its source's chunk buffers `source`: chunk t ``make(t, chunk t)``,
    or by `groups` ``getter(chunk k)`` (chunk k itself where the getter is None)."""
    _, groups, make = pending
    devices = layout.chunk_devices
    if groups is None:  # a remap may copy (a reshape of strided memory): on its device
        on = backend.on
        out = []
        for t, buffer in enumerate(source):
            with on(devices[t]):
                out.append(make(t, buffer))
        return tuple(out)
    # Basic indexing makes views: no device work, so no device or stream to enter.
    buffers: list = [None] * len(devices)
    for _, entries in groups:
        for t, k, _, getter in entries:
            buffers[t] = source[k] if getter is None else getter(source[k])
    return tuple(buffers)


def block_view(slabs, key: tuple, made: dict):
    """``slabs[i].reshape(shape)[index]`` by `key`'s ``(i, shape, index)``, with no view
    made where a step changes nothing (a slab already of `shape`, the index ``...``) or
    was made before (`made`: ``{(i, shape, ...): view}``): each view is a library call."""
    i, shape, index = key
    slab = slabs[i]
    if slab.shape == shape:
        block = slab
    elif (block := made.get((i, shape, ...))) is None:
        block = made[(i, shape, ...)] = slab.reshape(shape)
    return block if index is ... else block[index]


def as_slabs(layout, buffers) -> tuple | None:
    """``(slabs, blocks)``: new chunk `buffers` (kernels' results, one array's alone) as
    the packed slabs of `layout`, where each device holds one chunk and each buffer lies
    in C order (its slab a view of it), and the buffers as the slabs' blocks
    (`Chunks.slab_blocks`), a NumPy scalar made a 0-d array first. None where they are
    not slabs."""
    if len(buffers) != len(layout.devices) or len(layout.chunks) != len(buffers):
        return None
    slabs, blocks = [], []
    for given in buffers:
        if type(given) is Remote or (given.ndim > 1 and not given.flags.c_contiguous):
            return None
        # (NumPy's kernels give scalars for 0-d operands: a 0-d array is a block.)
        b = zero_d(given) if isinstance(given, np.generic) else given
        blocks.append(b)
        slabs.append(b if b.ndim == 1 else b.reshape(-1))
    return slabs, blocks


def unpack(layout, slabs) -> tuple:
    """The chunk views of packed slabs: views only (no kernel, no allocation).

    Where a device's chunks all have one shape (of one axis or more), its slab is viewed
    once as their stack and each chunk is one index into it, the cheapest view there is.
    """
    buffers: list = [None] * len(layout.chunks)
    shapes = layout.chunk_shapes
    for slab, device, (entries, _) in zip(slabs, layout.devices, layout.packing):
        if isinstance(slab, Remote):
            for k, _, _ in entries:
                buffers[k] = Remote(shapes[k], slab.dtype, device)
            continue
        shape = shapes[entries[0][0]]
        # Views of a contiguous slab: no device work, so no device or stream to enter.
        if len(entries) == 1 and entries[0][2] == slab.size:
            # The whole slab: itself where of the chunk's shape, else one view.
            buffers[entries[0][0]] = slab if slab.shape == shape else slab.reshape(shape)
        elif len(entries) > 1 and shape and all(shapes[k] == shape for k, _, _ in entries):
            stack = slab.reshape(len(entries), *shape)
            for i, (k, _, _) in enumerate(entries):
                buffers[k] = stack[i]
        else:
            for k, offset, size in entries:
                buffers[k] = slab[offset : offset + size].reshape(shapes[k])
    return tuple(buffers)


def check_buffers(layout, buffers: tuple, dtype, backend: Backend) -> np.dtype:
    """Check chunk `buffers` against `layout` (count, shapes, devices) and one dtype
    (`dtype`, or the first buffer's); returns that dtype."""
    if len(buffers) != len(layout.chunks):
        raise ValueError(
            f"layout has {len(layout.chunks)} chunks but {len(buffers)} arrays were given"
        )
    dtype = np.dtype(buffers[0].dtype if dtype is None else dtype)
    check_devices(layout, backend)
    for k, (array, shape, device) in enumerate(
        zip(buffers, layout.chunk_shapes, layout.chunk_devices)
    ):
        if tuple(array.shape) != shape:
            raise ValueError(
                f"chunk {k} on device {device} has shape {array.shape}, its index needs {shape}"
            )
        if array.dtype != dtype:
            raise TypeError(
                f"chunk {k} on device {device} has dtype {array.dtype}, the array's is {dtype}"
            )
        if isinstance(array, Remote) or not is_local(device):
            if not isinstance(array, Remote):
                raise ValueError(
                    f"chunk {k} belongs to device {device} of process "
                    f"{_processes.owner(device)}, not to this process"
                )
            continue
        where = backend.device_of(array)
        if where is not None and where != device:
            raise ValueError(
                f"chunk {k} is on device {where}, its index map puts it on device {device}"
            )
    return dtype


def check_slabs(layout, slabs: tuple, dtype, backend: Backend) -> None:
    if len(slabs) != len(layout.devices):
        raise ValueError(f"layout has {len(layout.devices)} devices but {len(slabs)} slabs")
    check_devices(layout, backend)
    for slab, device, (_, total) in zip(slabs, layout.devices, layout.packing):
        if slab.shape != (total,) or slab.dtype != dtype:
            raise ValueError(
                f"the slab of device {device} is {slab.dtype}{list(slab.shape)}, "
                f"the layout needs {dtype}[{total}]"
            )
        remote = not is_local(device)
        if isinstance(slab, Remote) != remote:
            raise ValueError(f"the slab of device {device} is not where its process holds it")
        if remote:
            continue
        where = backend.device_of(slab)
        if where is not None and where != device:
            raise ValueError(f"the slab of device {device} is on device {where}")


def fresh_slabs(layout: Layout, dtype, backend: Backend, fill: tuple | None) -> tuple:
    """``(dtype, slabs)`` of fresh packed chunks of `layout`, filled with ``fill[0]`` (None:
    left as allocated), made together where local (`Backend.empty_slabs`: one allocation in
    shared memory, seen whole by `span`); the dtype one that can hold the layout's extent."""
    dtype = np.dtype(dtype)
    if layout.extent * dtype.itemsize > MAX_INDEX or not dtype.isnative:
        dtype = allocatable(layout.extent, dtype)
    check_devices(layout, backend)
    value: Any = None if fill is None else fill[0]
    if all(map(is_local, layout.devices)) and (fill is None or backend.shared_memory):
        totals = [t for _, t in layout.packing]
        slabs = tuple(backend.empty_slabs(totals, dtype, layout.devices))
        for slab in slabs if fill is not None else ():
            np.copyto(slab, value, casting="unsafe")  # as `numpy.full` (host memory here)
        return dtype, slabs
    empty, full = backend.empty, backend.full
    return dtype, tuple(
        (empty((t,), dtype, d) if fill is None else full((t,), value, dtype, d))
        if is_local(d)
        else Remote((t,), dtype, d)
        for d, (_, t) in zip(layout.devices, layout.packing)
    )


def generated(layout: Layout, backend: Backend, make: Callable[[int], Any], dtype) -> list:
    """Per chunk k ``make(k)`` run on its device (cast to `dtype` where given), None for
    another process's chunk."""
    buffers: list = []
    for k, device in enumerate(layout.chunk_devices):
        if not is_local(device):
            buffers.append(None)
            continue
        with backend.on(device):
            buffer = make(k)
            if dtype is not None and buffer.dtype != dtype:
                buffer = buffer.astype(dtype)
            buffers.append(buffer)
    return buffers


def made_by(make: Callable[[int, Any], Any], t: int) -> Callable[[Any], Any]:
    """The recipe step of chunk t of a view: `make` (see `Chunks.view`)."""
    return lambda array: make(t, array)


class Strided:
    """The recipe step of a chunk restored from its place in its allocation: the strided
    view `shape`, `strides` (bytes) starting `offset` bytes into the (C-ordered) root."""

    __slots__ = ("offset", "shape", "strides", "xp")

    def __init__(self, xp, offset: int, shape: tuple, strides: tuple) -> None:
        self.xp = xp
        self.offset = offset
        self.shape = shape
        self.strides = strides

    def __call__(self, root):
        start = root.reshape(-1)[self.offset // root.dtype.itemsize :]
        return self.xp.lib.stride_tricks.as_strided(start, self.shape, self.strides)


def saved(buffers: tuple, refs: tuple, devices: tuple, backend: Backend) -> tuple[list, list]:
    """What a copy or a pickle of chunks keeps: ``(memories, parts)``, the allocations
    the chunk `buffers` use (each once) and per chunk ``(memory index, place)``, where
    place is ``(offset, strides)`` in bytes from the memory's start, or None where the
    memory is the chunk itself in C order.

    An allocation that the chunks use whole (a C-ordered root with as many bytes in them
    as it has) is kept as it is, so arrays copied together that share it share its copy.
    Where the chunks use part of one (a small view of a large array) or it is not in C
    order, each chunk keeps its own compact memory instead: no byte beyond what they hold.
    """
    pointer = backend.pointer
    users: dict[int, list[int]] = {}
    for k, (allocation, _) in enumerate(refs):
        users.setdefault(id(allocation), []).append(k)
    memories: list[Allocation] = []
    parts: list = [None] * len(buffers)
    for ks in users.values():
        allocation = refs[ks[0]][0]
        root = allocation.array
        whole = (
            isinstance(root, Remote)
            or all(buffers[k] is root for k in ks)
            or (root.flags.c_contiguous and sum(buffers[k].nbytes for k in ks) >= root.nbytes)
        )
        if whole:
            i = len(memories)
            memories.append(allocation)
            for k in ks:
                buffer = buffers[k]
                same = buffer is root or isinstance(root, Remote)
                place = None if same else (pointer(buffer) - pointer(root), buffer.strides)
                parts[k] = (i, place)
            continue
        for k in ks:
            parts[k] = (len(memories), None)
            memories.append(Allocation(buffers[k], devices[k], backend))
    return memories, parts


def own_memories(arrays, devices, backend: Backend) -> list[Allocation]:
    """Allocations for memory no other array uses (untracked chunks' buffers or slabs)."""
    return [Allocation(a, d, backend) for a, d in zip(arrays, devices)]


def copied_memories(memories: list, memo: dict | None) -> list[Allocation]:
    """Copies of `memories`, each made once per `memo` (a ``copy.deepcopy`` memo, or None
    for a shallow copy of one array): memory that arrays copied together share stays
    shared between their copies."""
    table: dict = {} if memo is None else memo
    out = []
    for allocation in memories:
        got = table.get(id(allocation))
        if got is None:
            got = table[id(allocation)] = allocation.copied(memo)
            table.setdefault(id(table), []).append(allocation)  # as copy's memo keeps alive
        out.append(got)
    return out


def unpickling_backend(name: str, layout: Layout) -> Backend:
    """The backend called `name` where every device of `layout` exists, else an error
    naming the devices missing."""
    if _processes.current() is not None:
        raise TypeError("a DistArray cannot be unpickled in a run of several processes")
    try:
        backend = get_backend(name)
    except (RuntimeError, ValueError) as error:
        raise RuntimeError(f"cannot unpickle a DistArray of the {name} backend: {error}") from error
    missing = [d for d in layout.devices if d not in backend.device_ids]
    if missing:
        raise ValueError(
            f"cannot unpickle a DistArray: its chunks are on devices {missing} of the {name} "
            f"backend, which this process lacks (it has devices {list(backend.device_ids)})"
        )
    return backend


def fill_remote(layout: Layout, buffers: list, dtype) -> list:
    """`buffers` (None for each chunk of another process's device) with a `Remote` in
    each gap, of the dtype the local buffers have (agreed between processes where some
    process holds none of the chunks)."""
    if _processes.current() is None:
        return buffers
    if dtype is None:
        local = next((b.dtype for b in buffers if b is not None), None)
        dtype = _processes.agree_dtype(local, layout.devices)
    return [
        Remote(shape, dtype, device) if b is None else b
        for b, shape, device in zip(buffers, layout.chunk_shapes, layout.chunk_devices)
    ]


def loaded(
    kind, layout: Layout, backend: Backend | str, dtype, memories: list, parts, tracked: bool
) -> Any:
    """Chunks (of class `kind`) restored from what `Chunks._saved` kept (a pickle's or a copy's memories;
    `backend` by name when unpickled): packed where `parts` is None, tracked by copy on
    write where the original was, as a new family on `memories`."""
    if isinstance(backend, str):
        backend = unpickling_backend(backend, layout)
    for memory in memories:
        memory.place(backend)
    if parts is None:
        out = kind(layout, backend, dtype, None, tuple(m.array for m in memories))
        if tracked:
            out._attach_slabs(memories)
        return out
    if not tracked:
        return kind(layout, backend, dtype, tuple(memories[i].array for i, _ in parts))
    out = kind(layout, backend, dtype)
    xp = backend.xp
    out._attach(
        [
            (memories[i], () if place is None else (Strided(xp, place[0], shape, place[1]),))
            for (i, place), shape in zip(parts, layout.chunk_shapes)
        ]
    )
    return out


def zero_d(value) -> Any:
    """A kernel's result on 0-d operands (a NumPy scalar, or an object array's Python
    object) as a chunk: a writable 0-d array."""
    return np.array(value) if isinstance(value, np.generic) else np.array(value, dtype=object)


def copied_in(array, layout: Layout, backend: Backend, buffers) -> None:
    """The parts of `array` (a NumPy array or the backend's own) that `layout` gives each
    chunk this process holds, copied into its buffer (`Chunks.from_host`)."""
    copy_in = backend.from_host if isinstance(array, np.ndarray) else backend.adopt
    for box, device, buffer in zip(layout.boxes, layout.chunk_devices, buffers):
        if is_local(device):
            # Ellipsis last: a view even of a 0-d array (an object array's item is no array).
            part = (*(_regions.to_slice(r) for r in box), Ellipsis)
            copy_in(array[part], device, out=buffer)
