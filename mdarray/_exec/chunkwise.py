"""Chunkwise execution: operands aligned to a layout, kernels run per chunk, and the one
``out=`` writer.

Op modules build on four pieces:

- `result_layout` picks the layout of a result from its operands;
- `aligned` brings any operand (a DistArray, NumPy or CuPy array, or scalar) to a
  layout, one piece per chunk on the chunk's device;
- `map_chunks` runs a kernel per chunk over aligned operands (`Chunks.view` makes
  views under a new layout);
- `cast` and `write_out`: the one cast rule (`_mode_rules.keeps_mode`) and the one
  writer of ``out=``, which writes through ``out``'s buffers as NumPy does, so views of
  ``out`` see the result;
- `writes_in_place` and `commit`: the rule that makes every write whole or nothing. A
  kernel writes ``out`` directly only where its calls cannot raise after writing part
  of it: one call, or plain numbers' kernels run by `Backend.write_each` (one per
  device, no Python between them; an error raised by a later call lets the rest
  finish); every other write computes its results first, whatever may raise there (an
  element's operation, an error state, a MemoryError, an interrupt), and then
  `commit`s them.

Operands are recognized as `Stored` (DistArray's base); results are `Chunks` (with their
mode), which the layers above wrap into DistArrays.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import numpy as np

from mdarray._backends.backend import Backend, backend as default_backend_object
from mdarray._core import regions as _regions
from mdarray._core.limits import native
from mdarray._core.mode_rules import keeps_mode
from mdarray._core.modes import REPLICA, Mode
from mdarray._core.plan_cache import plan_cache
from mdarray._layouts.layout import Layout
from mdarray._movement import redistribute as _redistribute
from mdarray._spmd.processes import Remote, is_local, merged_everywhere, several
from mdarray._storage.chunks import Chunks
from mdarray._storage.stored import Stored

from .operands import as_operand

_SCALARS = (bool, int, float, complex, np.generic)

#: NumPy's casting rules (``casting=`` of ufuncs, ``can_cast``, ``concat``).
Casting: TypeAlias = Literal["no", "equiv", "safe", "same_kind", "unsafe"]


def result_layout(shape: tuple, operands) -> Layout:
    """The layout of the first DistArray operand of `shape`, else blocks over the devices
    of the first DistArray operand (or of the backend)."""
    first = None
    for x in operands:
        if isinstance(x, Stored):
            if x.shape == shape:
                return x.layout
            first = x if first is None else first
    devices = first.layout.devices if first is not None else default_backend_object().device_ids
    return Layout.block(shape, devices=devices)


def backend_of(operands) -> Backend:
    """The backend of the first DistArray operand (else the default backend)."""
    for x in operands:
        if isinstance(x, Stored):
            return x.storage.backend
    return default_backend_object()


def shape_of(x) -> tuple:
    """The shape of an operand without gathering it (DistArray, array or scalar)."""
    return x.shape if isinstance(x, Stored) else np.shape(x)


@plan_cache
def broadcast_regions(layout: Layout, operand_shape: tuple) -> tuple:
    """For each chunk of `layout`, the box of an operand of `operand_shape` it reads
    under broadcasting (the operand's axes align with the layout's trailing axes)."""
    offset = len(layout.shape) - len(operand_shape)
    return tuple(
        tuple(
            range(1) if n == 1 and layout.shape[offset + a] != 1 else box[offset + a]
            for a, n in enumerate(operand_shape)
        )
        for box in layout.boxes
    )


def aligned(operand, layout: Layout, backend: Backend) -> list:
    """`operand` cut to the chunks of `layout` (broadcast, on each chunk's device).

    A DistArray of the same layout and REPLICA mode gives its buffers as they are; any
    other DistArray is brought over with `_redistribute.region_value` (in REPLICA mode);
    NumPy and CuPy arrays are sliced and copied to the devices; scalars are returned as
    they are, one per chunk; anything else (a nested list) is first what `as_operand`
    makes of it, as NumPy converts it.
    """
    if isinstance(operand, Stored):
        storage, mode = operand.storage, operand.mode
        if storage.layout == layout and mode is REPLICA:
            return list(storage.buffers)
        storage = _redistribute.change_mode(storage, mode, REPLICA)
        regions = broadcast_regions(layout, operand.shape)
        return _redistribute.regions_value(storage, regions, layout.chunk_devices)
    if isinstance(operand, np.ndarray) or backend.is_native(operand):
        if operand.ndim == 0:
            if isinstance(operand, np.ndarray):
                return [operand[()]] * len(layout.chunks)
            return [
                backend.adopt(operand, d) if is_local(d) else Remote((), operand.dtype, d)
                for d in layout.chunk_devices
            ]
        regions = broadcast_regions(layout, operand.shape)
        copy_in = backend.from_host if isinstance(operand, np.ndarray) else backend.adopt
        return [
            copy_in(operand[tuple(_regions.to_slice(r) for r in region)], device)
            if is_local(device)
            else Remote(_regions.box_shape(region), operand.dtype, device)
            for region, device in zip(regions, layout.chunk_devices)
        ]
    if isinstance(operand, _SCALARS):
        return [operand] * len(layout.chunks)
    return aligned(as_operand(operand), layout, backend)


def map_chunks(x: Stored, fn, *operands, dtype=None) -> Chunks:
    """``fn(buffer, *aligned operand pieces)`` per chunk of `x` (operands brought to x's
    layout with `aligned`): fresh Chunks in x's layout."""
    storage = x.storage
    columns = [aligned(op, storage.layout, storage.backend) for op in operands]
    return storage.map(fn, *columns, dtype=dtype)


def map_elements(storage: Chunks, fn, dtype=None) -> Chunks:
    """Fresh Chunks of `storage`'s layout holding ``fn`` of each element (`fn` maps an
    array to one of its shape, element by element: a cast, a copy, ``isnan``): one call
    per device over the slabs of packed chunks, else one per chunk as ``Chunks.map``."""
    slabs = storage.slabs
    if slabs is None:
        return map_kernel(storage, fn, dtype)
    backend = storage.backend
    on = backend.on
    out: list = []
    done = None  # a large call's kernels, run at once on the devices' threads
    if slabs[0].nbytes * len(slabs) >= backend.parallel_bytes and not several():
        done = iter(backend.each(fn, [(d, (s,)) for d, s in zip(storage.layout.devices, slabs)]))
    for slab, device in zip(slabs, storage.layout.devices):
        if isinstance(slab, Remote):
            out.append(Remote(slab.shape, storage.dtype if dtype is None else dtype, device))
            continue
        with on(device):
            result = fn(slab) if done is None else next(done)
            if dtype is not None and result.dtype != dtype:
                result = result.astype(dtype)
        out.append(result)
    dtype = out[0].dtype if dtype is None else dtype
    return Chunks.packed(storage.layout, out, storage.backend, dtype, check=False)


def map_kernel(storage: Chunks, fn, dtype=None) -> Chunks:
    """``storage.map(fn, dtype=dtype)`` for a kernel `fn` of one chunk alone (no
    movement, no shared state): a large call runs the chunks' kernels at once, on the
    devices' threads (`Backend.each`)."""
    buffers = storage.buffers
    backend = storage.backend
    if not buffers or buffers[0].nbytes * len(buffers) < backend.parallel_bytes or several():
        return storage.map(fn, dtype=dtype)
    layout = storage.layout
    out = backend.each(fn, [(d, (b,)) for d, b in zip(layout.chunk_devices, buffers)])
    if dtype is not None:
        out = [b if b.dtype == dtype else b.astype(dtype) for b in out]
    return Chunks.of(layout, out, backend, dtype)


def blocks_agree(a: Layout, b: Layout) -> bool:
    """Whether arrays of layouts `a` and `b` line up device block to device block
    (`Layout.device_blocks`): equal shapes, devices and blocks."""
    if a.shape != b.shape or a.devices != b.devices:
        return False
    blocks = a.device_blocks
    return blocks is not None and blocks == b.device_blocks


@plan_cache
def block_layout(layout: Layout) -> Layout | None:
    """The layout whose chunks are `layout`'s device blocks (`Layout.device_blocks`), one
    per device: the same array seen as one block per device, for kernels that do not care
    where chunks begin (reductions over `blocks`); None where the blocks are the chunks
    already or some device's chunks do not make one block."""
    boxes = layout.device_blocks
    if boxes is None or len(boxes) == len(layout.boxes):
        return None
    return Layout(
        layout.shape,
        {
            device: [tuple(_regions.to_slice(r) for r in box)]
            for device, box in zip(layout.devices, boxes)
        },
    )


def as_blocks(storage: Chunks) -> Chunks:
    """`storage` seen as one chunk per device (`block_layout`), the chunks' own memory,
    where its devices' chunks make blocks; else `storage`. For reading within one
    operation (a kernel per device instead of per chunk), never for keeping."""
    coarse = block_layout(storage.layout)
    if coarse is None:
        return storage
    column = blocks(storage)
    if column is None:
        return storage
    return Chunks.of(coarse, column, storage.backend, storage.dtype, check=False)


def blocks(storage: Chunks) -> tuple | None:
    """Per device of `storage`'s layout one array holding its block (`Layout.device_blocks`):
    the packed slab's reshape, or a view spanning the device's chunk buffers where their
    memory lies so (`Backend.span`); None otherwise. Views of the chunks' memory, for use
    within one operation (asked again after `Chunks.writable`)."""
    layout = storage.layout
    keys = layout.slab_block_keys
    if keys is None:
        return None
    if storage.slabs is not None:
        return storage.slab_blocks(keys)
    selected = storage.view_blocks()
    if selected is not None:
        return selected
    buffers = storage.buffers
    span = storage.backend.span
    out = []
    for entries, _ in layout.packing:
        block = span([buffers[k] for k, _, _ in entries])
        if block is None:
            return None
        out.append(block)
    return tuple(out)


# Casts and out= ------------------------------------------------------------------------


def cast(storage: Chunks, mode: Mode, dtype) -> tuple[Chunks, Mode]:
    """`storage` (in `mode`) cast to `dtype`, as fresh Chunks and their mode.

    The copies are cast where the cast commutes with combining them
    (`_mode_rules.keeps_mode`); otherwise the value is made REPLICA first.
    """
    dtype = native(dtype)
    if dtype.kind in "SUVMm":
        dtype = _sized(storage, dtype)
    if not keeps_mode(mode, storage.dtype, dtype):
        storage, mode = _redistribute.change_mode(storage, mode, REPLICA), REPLICA
    out = cast_slabs(storage, dtype)
    if out is None:
        out = map_elements(storage, lambda b: b.astype(dtype, copy=True), dtype=dtype)
    return out, mode


def cast_slabs(storage: Chunks, dtype) -> Chunks | None:
    """Packed `storage` of plain numbers cast to `dtype` (a native dtype of plain
    numbers), one call per device over the slabs; None where it is not packed now, a
    dtype is another's, or in a run of several processes (`map_elements` casts those)."""
    slabs = storage.slabs
    if slabs is None or storage.dtype.kind + dtype.kind not in _CASTS or several():
        return None
    backend, devices = storage.backend, storage.layout.devices
    if not backend.shared_memory:
        on, out = backend.on, []
        for device, slab in zip(devices, slabs):
            with on(device):
                out.append(slab.astype(dtype))
        return Chunks.packed(storage.layout, out, backend, dtype, check=False)
    # Into chunks made together, as arrays from the host (one NumPy array views them).
    made = Chunks.empty(storage.layout, dtype, backend)
    rows = list(zip(devices, zip(made.slabs or (), slabs)))
    if slabs[0].nbytes * len(slabs) >= backend.parallel_bytes:
        backend.each(_copy_into, rows)
    else:
        for _, (into, slab) in rows:
            _copy_into(into, slab)
    return made


_CASTS = frozenset(a + b for a in "biufc" for b in "biufc")  # `copyto` casts these as astype


def _copy_into(into, slab) -> None:
    np.copyto(into, slab, casting="unsafe")


def writes_in_place(
    backend: Backend, ufunc, calls: int, dtypes, operands=(), each: bool = False
) -> bool:
    """Whether `calls` calls of `ufunc`'s kernel may write ``out``'s buffers themselves.

    One call: a kernel that cannot raise after writing part of its output
    (`Backend.may_fail`), with no object array among the result `dtypes` and the
    `operands` (their elements' own operations may raise anywhere). Several calls, where
    they run by `Backend.write_each` (`each`): besides, the backend runs them with no
    Python between them (`Backend.writes_each`) and every dtype is a plain number's
    (bool, integer, float, complex: no element operation, no cast that can fail), so a
    call fails only before it writes (a failed allocation) and `write_each` lets the
    remaining calls finish. Otherwise the kernels compute fresh results and `commit`
    writes them."""
    if backend.may_fail(ufunc):
        return False
    # List comprehensions, not generators: this runs on every in-place call.
    kinds = [np.dtype(d).kind for d in dtypes]
    kinds += [getattr(getattr(x, "dtype", None), "kind", "") for x in operands]
    if calls == 1:
        return "O" not in kinds
    return each and backend.writes_each(ufunc) and _NUMBERS.issuperset(kinds)


_NUMBERS = frozenset(["b", "i", "u", "f", "c", ""])  # "": a Python scalar operand


def commit(backend: Backend, writes) -> None:
    """Copy computed pieces into their targets, the last step of a write, after all that
    can fail ran: `writes` lists ``(device, target, index, piece)``, each
    ``target[index] = piece`` (`Backend.assign`; pieces of the target's dtype, copies
    that cannot fail on their values). An exception arriving midway (an interrupt) lets
    the remaining copies finish before it propagates, so every replica holds the new
    value and never part of it."""
    writes = list(writes)
    done = 0
    try:
        for device, target, index, piece in writes:
            with backend.on(device):
                backend.assign(target, index, piece)
            done += 1
    except BaseException:
        for device, target, index, piece in writes[done:]:
            with backend.on(device):
                backend.assign(target, index, piece)
        raise


def _sized(storage: Chunks, dtype: np.dtype) -> np.dtype:
    """`dtype` with the size or unit NumPy's cast from `storage`'s dtype gives it where
    it names none (``astype(str)`` of float64 is ``<U32``); where that size depends on the
    values (objects to strings), the widest any chunk needs, as NumPy's whole array (on
    every process alike: a collective in an SPMD run)."""
    if storage.dtype.kind == "O" and dtype.kind in "SU" and not dtype.itemsize:
        local = {
            k: b.astype(dtype).dtype.str
            for k, b in enumerate(storage.buffers)
            if not isinstance(b, Remote)
        }
        found = [np.dtype(d) for d in merged_everywhere(local).values()]
        return max(found, key=lambda d: d.itemsize, default=dtype.type(1).dtype)
    return np.empty(0, storage.dtype).astype(dtype).dtype


def write_out(out, value: Stored, *, casting: Casting | None = None, name: str = ""):
    """Make `out` (``out=`` of a ufunc or function) hold `value`'s value; return `out`.

    The one writer of ``out=``. A DistArray `out` keeps its layout, mode and dtype, and
    its buffers are written through, as NumPy writes an ndarray ``out``: views of `out`
    see the result, and buffers `out` shares with other arrays are copied first (copy on
    write). Everything that can fail (the shape and cast checks, the cast, moving the
    value to `out`'s layout and mode) happens before the first write. A NumPy or CuPy
    `out` gets the gathered value. With `casting`, the cast from the value's dtype is
    checked first, as NumPy does.
    """
    if tuple(out.shape) != value.shape:
        raise ValueError(
            f"{name or 'output'}: out has shape {tuple(out.shape)}, the result's is {value.shape}"
        )
    if casting is not None and not np.can_cast(value.dtype, out.dtype, casting):
        raise TypeError(
            f"Cannot cast ufunc {name!r} output from {value.dtype!r} to {out.dtype!r} "
            f"with casting rule {casting!r}"
        )
    storage, mode = value.storage, value.mode
    if isinstance(out, Stored):
        if storage.dtype != out.dtype:
            storage, mode = cast(storage, mode, out.dtype)
        storage = _redistribute.change_mode(storage, mode, out.mode)
        storage = _redistribute.reshard(storage, out.mode, out.layout)
        target = out.storage
        writes = zip(target.layout.chunk_devices, target.writable(), storage.buffers)
        commit(
            target.backend,
            [(d, b, (), piece) for d, b, piece in writes if b is not piece and is_local(d)],
        )
        return out
    if isinstance(out, np.ndarray):
        np.copyto(out, _redistribute.to_host(storage, mode), casting="unsafe")
        return out
    backend = storage.backend
    device = backend.device_of(out)
    # A CuPy `out` is this process's: the value comes to it (collective in an SPMD run).
    piece = _redistribute.region_value(storage, mode, _regions.full_box(value.shape), device)
    with backend.on(device):  # type: ignore[arg-type]  # a CuPy array's device: an int
        out[...] = piece
    backend.export_to_current(device)  # type: ignore[arg-type]
    return out
