"""The pieces of one movement step, wherever they are: on this process's devices, or
on another process's (moved in one `Exchange` per step).

`Fetch` serves the device-to-device steps of `_redistribute`; `gather_host` and
`share_host` make a host value on every process (or one). In a single-process run every
piece is local and nothing here sends a message.
"""

from __future__ import annotations

import numpy as np

from mdarray._backends.backend import Backend
from mdarray._core import regions as _regions
from mdarray._kernels import kernels as _kernels
from mdarray._layouts.layout import Layout
from mdarray._spmd import processes as _processes
from mdarray._spmd.processes import is_local
from mdarray._spmd.transport import Exchange, allreduce_op, nccl_op
from mdarray._storage.chunks import Chunks


class Fetch:
    """The pieces of `chunks` that one movement step needs on devices.

    A piece whose chunk and destination are on this process is read (and moved between
    devices) at once. One that crosses processes is sent by its holder and received by
    the destination's process when `run` moves them all in one `Exchange`; the pieces
    for other processes' destinations that this process does not hold are skipped. In a
    single-process run every piece is local and `run` does nothing.
    """

    def __init__(self, chunks: Chunks) -> None:
        self.chunks = chunks
        self.buffers = chunks.buffers
        self.devices = chunks.layout.chunk_devices
        # A single-process run: every piece is local and nothing waits for `run`.
        self.alone = _processes.current() is None
        self._exchange: Exchange | None = None  # made by the first piece that crosses
        self.landed: list = []

    @property
    def exchange(self) -> Exchange:
        if self._exchange is None:
            self._exchange = Exchange(self.chunks.backend)
        return self._exchange

    def _source(self, k: int, chunk_index):
        buffer = self.buffers[k]
        if chunk_index is None:
            return buffer
        return _regions.apply_index(buffer, chunk_index, self.chunks.backend.xp)

    def _cross(self, k: int, chunk_index, device, into_shape) -> object:
        """Send or receive a piece that crosses processes: the buffer it lands in on
        `device` (here), or None (sent, or neither end here)."""
        backend = self.chunks.backend
        source = self.chunks.layout.chunk_devices[k]
        if is_local(source):
            with backend.on(source):
                piece = self._source(k, chunk_index)
            self.exchange.send(piece, _processes.owner(device), source, device)
            return None
        if not is_local(device):
            return None
        into = backend.empty(into_shape, self.chunks.dtype, device)
        self.exchange.receive(into, _processes.owner(source), device, source)
        return into

    def get(self, k: int, chunk_index, device):
        """Piece `chunk_index` (None: whole) of chunk `k` on `device`: the array now, or
        the buffer it arrives in at `run`; None where `device` is another process's."""
        source = self.devices[k]
        if self.alone or (is_local(source) and is_local(device)):
            return read_here(self.chunks, k, chunk_index, device)
        shape = _regions.index_shape(chunk_index, self.chunks.layout.chunk_shapes[k])
        return self._cross(k, chunk_index, device, shape)

    def into(self, k: int, chunk_index, device, out, region_index) -> None:
        """Write piece `chunk_index` of chunk `k` into ``out[region_index]`` on `device`
        (`out` is None where `device` is another process's)."""
        backend = self.chunks.backend
        source = self.chunks.layout.chunk_devices[k]
        if self.alone or (is_local(source) and is_local(device)):
            piece = self._source(k, chunk_index)
            backend.assign(out, region_index, backend.move(piece, source, device))
            return
        if out is not None and _regions.is_basic(region_index) and not is_local(source):
            # Received in place: MPI writes the view itself.
            view = out[_view_key(region_index)]
            self.exchange.receive(view, _processes.owner(source), device, source)
            return
        shape = _regions.index_shape(chunk_index, self.chunks.layout.chunk_shapes[k])
        landing = self._cross(k, chunk_index, device, shape)
        if landing is not None:
            self.landed.append((out, region_index, landing, device))

    def run(self) -> None:
        """Move the pieces that cross processes and write those bound for a region."""
        if not self.alone:  # every process, crossing pieces or not: `Exchange.run` agrees
            self.exchange.run()
        backend = self.chunks.backend
        for out, region_index, piece, device in self.landed:
            with backend.on(device):
                backend.assign(out, region_index, piece)


def fetch_pieces(chunks: Chunks, wanted) -> list:
    """The pieces ``(k, chunk_index, device)`` of `chunks` (piece `chunk_index`, None for
    the whole, of chunk k) on their devices, in one step: each an array, or None where
    the device is another process's. Collective: every process lists the same pieces in
    the same order."""
    fetch = Fetch(chunks)
    got = [fetch.get(k, chunk_index, device) for k, chunk_index, device in wanted]
    fetch.run()
    return got


def gather_host(chunks: Chunks, plan, shape, root: int | None):
    """A host array filled by the pieces ``(chunk, out_index, chunk_index)``: each
    process copies its own, then sends them to the others (to `root` alone where given)."""
    backend = chunks.backend
    layout = chunks.layout
    group = _processes.current()
    out = backend.host_empty(shape, chunks.dtype)
    staged = []
    buffers = chunks.buffers
    for k, region_index, chunk_index in plan:
        device = layout.chunk_devices[k]
        if not is_local(device):
            continue
        piece = _regions.apply_index(buffers[k], chunk_index, backend.xp)
        if _regions.is_basic(region_index):
            backend.to_host_into(out[_view_key(region_index)], piece, device)
        else:
            staged.append((region_index, to_host_now(backend, piece, device)))
    backend.synchronize([d for d in layout.devices if is_local(d)])
    for region_index, piece in staged:
        _kernels.assign(np, out, region_index, piece)
    if group is None:
        return out
    exchange = Exchange(backend, host=True)
    landed = []
    for k, region_index, _ in plan:
        holder = group.owner(layout.chunk_devices[k])
        basic = _regions.is_basic(region_index)
        if holder == group.rank:
            piece = (
                out[_view_key(region_index)] if basic else _regions.apply_index(out, region_index)
            )
            for rank in range(group.size) if root is None else (root,):
                if rank != holder:
                    exchange.send(piece, rank)
        elif root is None or root == group.rank:
            if basic:
                exchange.receive(out[_view_key(region_index)], holder)
            else:
                into = np.empty(_regions.index_shape(region_index, shape), out.dtype)
                exchange.receive(into, holder)
                landed.append((region_index, into))
    exchange.run()
    for region_index, piece in landed:
        _kernels.assign(np, out, region_index, piece)
    return out if root is None or root == group.rank else None


def share_host(backend: Backend, host, shape, dtype, holder: int, root: int | None):
    """`host` (a host array on process `holder`, None elsewhere) on every process, or on
    `root` alone (None elsewhere)."""
    group = _processes.current()
    if group is None:
        return host
    exchange = Exchange(backend, host=True)
    if group.rank == holder:
        for rank in range(group.size) if root is None else (root,):
            if rank != holder:
                exchange.send(host, rank)
    elif root is None or root == group.rank:
        host = np.empty(shape, dtype)
        exchange.receive(host, holder)
    exchange.run()
    return host if root is None or root == group.rank else None


def read_here(chunks: Chunks, k: int, chunk_index, device):
    """Piece `chunk_index` (None: whole) of chunk `k` of `chunks`, both it and `device`
    this process's, on `device`: a view where it is the chunk's device, else moved."""
    buffer = chunks.buffers[k]
    piece = (
        buffer
        if chunk_index is None
        else _regions.apply_index(buffer, chunk_index, chunks.backend.xp)
    )
    source = chunks.layout.chunk_devices[k]
    return piece if source == device else chunks.backend.move(piece, source, device)


def _view_key(index: tuple) -> tuple:
    """A basic index that gives a view even where it names one element (0-d)."""
    return (*index, Ellipsis)


def to_host_now(backend: Backend, array, device):
    out = backend.host_empty(array.shape, array.dtype)
    backend.to_host_into(out, array, device)
    backend.synchronize([device])
    return out


def _dense_fold(chunks: Chunks, combine):
    """``(group, op, folded)`` where the partial copies of `chunks` can combine by one MPI
    collective: a run of several processes, every chunk the whole array, every process
    holding one, NumPy chunks, and an MPI operation that gives `combine`'s result
    (`allreduce_op`); `folded` is this process's copies combined. Else None. Decided on
    metadata alone, so alike on every process."""
    group = _processes.current()
    layout = chunks.layout
    if group is None or group.size == 1 or chunks.backend.name != "cpu":
        return None
    op = allreduce_op(combine, chunks.dtype)
    whole = _regions.full_box(layout.shape)
    if op is None or any(box != whole for box in layout.boxes):
        return None
    if group.ranks_of(layout.devices) != frozenset(range(group.size)):
        return None
    mine = [b for b, d in zip(chunks.buffers, layout.chunk_devices) if is_local(d)]
    return group, op, _fold(chunks.backend, combine, mine, chunks.dtype)


def _fold(backend: Backend, combine, copies: list, dtype):
    """`copies` (of one shape, on the current device) combined by `combine`: the copy
    itself where there is one and it is contiguous (the collectives only read it), else
    a new array."""
    if len(copies) == 1 and copies[0].flags.c_contiguous:
        return copies[0]
    with np.errstate(all="ignore"):
        return backend.combine(combine, copies, 1, dtype)[0]


def allreduced(chunks: Chunks, combine) -> Chunks | None:
    """The copies of `chunks` combined by `combine` into every chunk, by one MPI
    all-reduce where `_dense_fold` allows (each process folds its own copies first), or
    one NCCL all-reduce on GPUs (`_nccl_allreduced`); None where the general plan is
    needed."""
    if chunks.backend.nccl is not None:
        return _nccl_allreduced(chunks, combine)
    dense = _dense_fold(chunks, combine)
    if dense is None:
        return None
    group, op, folded = dense
    out = Chunks.empty(chunks.layout, chunks.dtype, chunks.backend)
    views = [b for b, d in zip(out.buffers, out.layout.chunk_devices) if is_local(d)]
    group.allreduce(folded, views[0], op)
    for view in views[1:]:
        view[...] = views[0]
    return out


def _nccl_fold(chunks: Chunks, combine, group) -> dict | None:
    """``{local GPU: its copies of `chunks` combined}`` where one NCCL collective can
    combine the folds: every GPU of the run holds a chunk, every chunk is the whole array
    and NCCL has the operation (`nccl_op`); else None. Decided on metadata alone."""
    backend = chunks.backend
    layout = chunks.layout
    if nccl_op(combine, chunks.dtype) is None:
        return None
    whole = _regions.full_box(layout.shape)
    if set(layout.devices) != set(group.device_ids) or any(b != whole for b in layout.boxes):
        return None
    folded = {}
    for device in group.local:
        mine = [b for b, d in zip(chunks.buffers, layout.chunk_devices) if d == device]
        with backend.on(device):
            folded[device] = _fold(backend, combine, mine, chunks.dtype)
    return folded


def _nccl_allreduced(chunks: Chunks, combine) -> Chunks | None:
    """`allreduced` over NCCL: each GPU folds its own copies (`_nccl_fold`) and one NCCL
    all-reduce combines the folds."""
    group = _processes.current()
    folded = None if group is None else _nccl_fold(chunks, combine, group)
    if folded is None:
        return None
    backend = chunks.backend
    out = Chunks.empty(chunks.layout, chunks.dtype, backend)
    firsts: dict = {}
    for buffer, device in zip(out.buffers, out.layout.chunk_devices):
        if is_local(device):
            firsts.setdefault(device, buffer)
    pairs = {device: (folded[device], firsts[device]) for device in folded}
    backend.nccl.allreduce(backend, pairs, combine, chunks.dtype)
    for buffer, device in zip(out.buffers, out.layout.chunk_devices):
        if is_local(device) and buffer is not firsts[device]:
            with backend.on(device):
                buffer[...] = firsts[device]
    return out


def reduce_scattered(chunks: Chunks, combine, target: Layout) -> Chunks | None:
    """The copies of `chunks` combined by `combine` and laid out as `target`, by one
    reduce-scatter where `target` splits the array (no overlaps) into one chunk per
    process (MPI, `_dense_fold`) or per GPU of the run (NCCL, `_nccl_fold`). Each
    process's fold is packed in rank order first, with no copy where the parts are
    already consecutive in C order (blocks of whole rows). None where the general plan
    is needed."""
    group = _processes.current()
    if group is None:
        return None
    if chunks.backend.nccl is not None:
        return _nccl_reduce_scattered(chunks, combine, target, group)
    order = _one_part_each(target, group.size, group.owner)
    if order is None:
        return None
    dense = _dense_fold(chunks, combine)
    if dense is None:
        return None
    group, op, folded = dense
    out = Chunks.empty(target, chunks.dtype, chunks.backend)
    counts = [int(np.prod(target.chunk_shapes[k], dtype=np.int64)) for k in order]
    send = _packed(np, folded, target, order, max(counts) if counts else 0, padded=False)
    mine = out.buffers[order[group.rank]]
    group.reduce_scatter(send, mine.reshape(-1), counts, op)
    return out


def _nccl_reduce_scattered(chunks: Chunks, combine, target: Layout, group) -> Chunks | None:
    """`reduce_scattered` over NCCL (chunk ``order[g]`` of `target` on GPU g of the run).
    NCCL gives every GPU the same count: uneven parts are packed padded to the largest
    and received into a buffer of that size."""
    order = _one_part_each(target, len(group.device_ids), int)
    if order is None:
        return None
    folded = _nccl_fold(chunks, combine, group)
    if folded is None:
        return None
    backend = chunks.backend
    xp = backend.xp
    width = max(int(np.prod(target.chunk_shapes[k], dtype=np.int64)) for k in order)
    out = Chunks.empty(target, chunks.dtype, backend)
    pairs = {}
    for device, fold in folded.items():
        flat = out.buffers[order[device]].reshape(-1)
        with backend.on(device):
            send = _packed(xp, fold, target, order, width, padded=True)
            receive = flat if flat.size == width else xp.empty(width, chunks.dtype)
        pairs[device] = (send, receive)
    backend.nccl.reduce_scatter(backend, pairs, combine, chunks.dtype)
    for device, (_, receive) in pairs.items():
        flat = out.buffers[order[device]].reshape(-1)
        if receive is not flat:
            with backend.on(device):
                flat[...] = receive[: flat.size]
    return out


def _one_part_each(layout: Layout, n: int, owner) -> list[int] | None:
    """``order[r]``: the chunk of `layout` that ``owner(device) == r`` holds, where the
    chunks split the array (no overlaps) and each of the `n` owners holds exactly one;
    else None."""
    if layout.has_overlaps or len(layout.chunks) != n:
        return None
    order = [-1] * n
    for k, device in enumerate(layout.chunk_devices):
        r = owner(device)
        if order[r] != -1:
            return None
        order[r] = k
    return order


def _packed(xp, folded, layout: Layout, order: list[int], width: int, padded: bool):
    """`folded` (a whole array) flat, with chunk ``order[0]``'s elements first, then
    ``order[1]``'s, ... each in C order; with `padded`, each in a slot of `width`. A view
    where that is `folded`'s own order, else one copy."""
    sizes = [int(np.prod(layout.chunk_shapes[k], dtype=np.int64)) for k in order]
    flat = folded.reshape(-1)
    if (not padded or all(n == width for n in sizes)) and _consecutive(layout, order):
        return flat
    send = xp.zeros(len(order) * width if padded else flat.size, folded.dtype)
    start = 0
    for k, n in zip(order, sizes):
        index = layout.chunks[k][1]
        send[start : start + n].reshape(layout.chunk_shapes[k])[...] = folded[index]
        start += width if padded else n
    return send


def _consecutive(layout: Layout, order: list[int]) -> bool:
    """Whether the chunks ``order[0], order[1], ...`` are consecutive blocks of whole
    rows, from the first row to the last."""
    shape = layout.shape
    start = 0
    for k in order:
        box = layout.boxes[k]
        if not shape or any(box[a] != range(n) for a, n in enumerate(shape) if a):
            return False
        rows = box[0]
        if rows.start != start or (len(rows) > 1 and rows.step != 1):
            return False
        start = rows.start + len(rows)
    return start == (shape[0] if shape else 0)
