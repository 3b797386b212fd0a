"""The ufunc fast path: REPLICA operands of one layout (or whose device blocks agree)
and Python scalars, ``out`` at most, go from the operands' chunks to the kernels with no
planning and no copies; and the runners that replay what it decided (`mdarray._core.decided`).
"""

from __future__ import annotations

from itertools import repeat

from mdarray._array.array import DistArray, wrap
from mdarray._backends.backend import Backend
from mdarray._core.decided import remember
from mdarray._core.modes import REPLICA
from mdarray._exec.chunkwise import blocks, blocks_agree, commit, writes_in_place
from mdarray._layouts.layout import Layout
from mdarray._movement.collectives import agreeing, several
from mdarray._storage import local as _this_process
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import placed, placed_slabs
from mdarray._storage.stored import decided_key

from .ufunc_places import Placed
from .ufunc_plans import resolve

PY_SCALARS = (bool, int, float, complex)


def fast_call(ufunc, inputs, kwargs):
    """REPLICA DistArrays of one layout and Python scalars, ``out`` at most: kernels with
    no planning. None when the general path is needed.

    Packed operands (`Layout.packing`) line up slab to slab, so the kernel runs once per
    device on the slabs; others run once per chunk.
    """
    layout: Layout | None = None
    mixed = False  # layouts differ, their device blocks agree (`block_call`)
    spread = False  # a 0-d operand beside the others (`_beside`): not chunk by chunk
    keys = []
    operands = []  # the storage of DistArray operands, scalars as they are
    for x in inputs:  # the result's layout: the first array operand's of one axis or more
        if type(x) is DistArray and (layout is None or not layout.shape):
            layout, backend = x.storage.layout, x.storage.backend
    if layout is None:
        return None
    for x in inputs:
        kind = type(x)
        if kind is DistArray:
            if x.mode is not REPLICA:
                return None
            storage = x.storage
            if storage.layout is not layout and storage.layout != layout:
                if not storage.layout.shape and _beside(storage.layout, layout):
                    spread = True  # a 0-d operand, a copy per device: its slabs broadcast
                elif not blocks_agree(layout, storage.layout):
                    return None
                else:
                    mixed = True
            keys.append(storage.dtype)
            operands.append(storage)
        elif kind in PY_SCALARS:
            keys.append((kind, x if kind is int or kind is bool else None))
            operands.append(x)
        else:
            return None
    out = kwargs.get("out")
    if len(kwargs) != (out is not None):
        return None
    out_keys = None
    if out is not None:
        for o in out:
            if type(o) is not DistArray or o.mode is not REPLICA:
                return None
            if o.layout != layout:
                if not blocks_agree(layout, o.layout):
                    return None
                mixed = True
        out_keys = tuple(o.dtype for o in out)
    dtypes = resolve(ufunc, tuple(keys), out_keys, None, ())
    kernel = backend.ufunc_kernel(ufunc)
    if kernel is None:
        return None
    # Results first, then a commit, unless one kernel call writes `out` whole.
    staged = _staged(ufunc, backend, layout, dtypes, operands, out)
    # No collective until the kernels ran: a process whose kernel raised must not
    # leave the others waiting (`agreeing`).
    across = several()  # else every chunk is this process's
    packed = all(type(x) is not Chunks or x.slabs is not None for x in operands)
    if mixed and packed and out is None:
        # A device's packed slab is its block in C order: slabs of agreeing blocks line
        # up element for element, whatever the chunks (``p - y``, p in one chunk).
        mixed = False
    # Staged into packed outs of this layout: they take the results whole (no copy). In a
    # run of several processes the general path writes, after every process's kernels
    # are agreed to have run.
    refill = (
        staged
        and not across
        and packed
        and not mixed
        and all(o.storage.slabs is not None for o in out)
    )
    staged = staged and not refill
    if (mixed or staged or not packed) and not across and layout.device_blocks is not None:
        # Views and other unpacked chunks whose memory lines up run per block too.
        result = block_call(kernel, layout, backend, operands, out, dtypes, direct=not staged)
        if result is not None:
            runner = _block_runner(ufunc, kernel, layout, backend, dtypes, operands)
            decided(ufunc, inputs, kwargs, runner)
        if result is not None or mixed or staged:
            return result
    elif mixed or staged:
        return None
    may_fail = across and backend.may_fail(ufunc)
    if packed:
        with agreeing(may_fail):
            result = _slab_call(
                ufunc, kernel, layout, backend, operands, out, dtypes, across, refill
            )
        if result is not None and not across:
            runner = _slab_runner(ufunc, kernel, layout, backend, dtypes, inputs)
            decided(ufunc, inputs, kwargs, runner)
        return result
    if spread and len(layout.chunks) > len(layout.devices):
        return None
    columns = [x.buffers if type(x) is Chunks else repeat(x) for x in operands]
    on = backend.on
    if out is not None:
        if len(layout.chunks) > 1:
            return None  # several kernels: the general path computes, then commits
        rows = list(zip(*columns))
        targets = list(zip(*(o.storage.writable() for o in out)))
        for k, device in _this_process.mine(layout.chunk_devices):
            with on(device):
                kernel(*rows[k], out=targets[k])
        return out[0] if len(out) == 1 else out
    rows = list(zip(*columns))
    results: list = [None] * len(rows)  # another process's chunk: its process computes it
    with agreeing(may_fail):
        for k, device in _this_process.mine(layout.chunk_devices):
            with on(device):
                results[k] = kernel(*rows[k])
    return _wrap_results(ufunc, layout, results, backend, REPLICA, dtypes)


def _beside(zero_d, layout) -> bool:
    """Whether a 0-d operand of layout `zero_d` has one copy on each device of `layout`,
    in the same order: its slab (or block) on each device broadcasts against the
    others'."""
    return zero_d.devices == layout.devices and len(zero_d.chunks) == len(zero_d.devices)


def decided(ufunc, inputs, kwargs, runner) -> None:
    """Leave `runner` for the calls like this one (`mdarray._core.decided`)."""
    arrays = [x for x in (*inputs, *(kwargs.get("out") or ())) if type(x) is DistArray]
    remember(decided_key(ufunc, inputs, kwargs), runner, tuple(x.layout for x in arrays))


def _storages(inputs) -> list:
    return [x.storage if type(x) is DistArray else x for x in inputs]


def _staged(ufunc, backend: Backend, layout, dtypes, operands, out) -> bool:
    """Whether ``out`` is written by a commit after all kernels ran (`writes_in_place`:
    decided per call, as the error state is the call's)."""
    return out is not None and not writes_in_place(
        backend, ufunc, len(layout.devices), dtypes, (*operands, *out), each=True
    )


def _slab_runner(ufunc, kernel, layout, backend: Backend, dtypes, inputs):
    """What `fast_call` decided for packed operands (`inputs`, of this call's key), as a
    runner: the kernels over the slabs, while every operand is packed; a staged ``out``
    only where it takes the results whole (else the whole way). A call of one new result
    below the size that runs on the devices' threads takes the shortest way
    (`_fresh_runner`)."""
    dtype = dtypes[0]

    def runner(inputs, out):
        operands = _storages(inputs)
        for x in operands:
            if type(x) is Chunks and x.slabs is None:
                return None
        refill = out is not None and _staged(ufunc, backend, layout, dtypes, operands, out)
        if refill and any(o.storage.slabs is None for o in out):
            return None
        return _slab_call(ufunc, kernel, layout, backend, operands, out, dtypes, False, refill)

    if ufunc.nout == 1 and layout.extent * dtype.itemsize < backend.parallel_bytes:
        return _fresh_runner(kernel, layout, backend, dtype, inputs, runner)
    return runner


def _fresh_runner(kernel, layout, backend: Backend, dtype, inputs, general):
    """The runner of a call of one new result on packed operands (`inputs`: which are
    arrays) in the fewest steps: per device the kernel on the operands' slabs (the
    backend's kernel for slabs of their size), cast to NumPy's `dtype` where the
    backend's promotion differs; ``out`` and a run of several processes `general`."""
    arrays = tuple(k for k, x in enumerate(inputs) if type(x) is DistArray)
    nbytes = _largest(layout, inputs)
    devices = tuple(enumerate(layout.devices))
    on = backend.on
    # Per device the kernel bound to its slabs (`Backend.ufunc_kernel_for`), at its
    # first call: every call of this runner has slabs of the same shapes and dtypes.
    kernels: list = [None] * len(devices)

    def runner(inputs, out):
        if out is not None or not _this_process.ALL_HERE:
            return general(inputs, out)
        columns = list(inputs)
        for k in arrays:
            slabs = inputs[k].storage.slabs
            if slabs is None:
                return None
            columns[k] = slabs
        slabs = []
        for d, device in devices:
            args = columns.copy()
            for k in arrays:
                args[k] = columns[k][d]
            with on(device):
                bound = kernels[d]
                if bound is None:
                    bound = kernels[d] = backend.ufunc_kernel_for(kernel, nbytes, args)
                got = bound(*args)
            slabs.append(got if got.dtype == dtype else got.astype(dtype))
        # `Chunks.packed` unchecked, in one frame: slabs a kernel just made, of `dtype`.
        return wrap(Chunks(layout, backend, dtype, None, tuple(slabs)))

    return runner


def _sized(kernel, layout, backend: Backend, operands):
    """`kernel` as the backend runs it on `operands` (arrays or their storage, and
    scalars) of `layout`: sized by the largest device's share (`Backend.ufunc_kernel_for`)."""
    return backend.ufunc_kernel_for(kernel, _largest(layout, operands))


def _largest(layout, operands) -> int:
    """The bytes of the largest device's share of the widest of `operands` (arrays or
    their storage, and scalars) of `layout`."""
    largest = max((t for _, t in layout.packing), default=0)
    return largest * max(x.dtype.itemsize for x in operands if type(x) in (DistArray, Chunks))


def _block_runner(ufunc, kernel, layout, backend: Backend, dtypes, operands):
    """What `fast_call` decided for operands whose device blocks agree, as a runner;
    whether ``out`` is written in place decided once (`operands`: this call's) where the
    backend's kernels fail alike in every call (`Backend.errors_per_call`)."""
    staged = None
    if not backend.errors_per_call:
        staged = not writes_in_place(
            backend, ufunc, len(layout.devices), dtypes, operands, each=True
        )
    # Launches on the blocks by pointer where the backend has them, bound at the first
    # call the blocks' way ran in one step (results new, or written in place).
    placed = Placed(kernel, layout, backend, dtypes[0]) if ufunc.nout == 1 else None
    kernel = _sized(kernel, layout, backend, operands)

    def runner(inputs, out):
        nonlocal placed
        operands = [x.storage if type(x) is DistArray else x for x in inputs]
        if out is None:
            direct = True
        elif staged is None:
            direct = not _staged(ufunc, backend, layout, dtypes, operands, out)
        else:
            direct = not staged
        if (here := placed) is not None and direct:  # (read once: threads share runners)
            if here.bound is not None and (done := here.call(operands, out)) is not None:
                return done
            got = block_call(kernel, layout, backend, operands, out, dtypes, direct=True)
            if got is not None and here.bound is None and not here.bind(operands, out):
                placed = None  # (blocks that did not bind never will)
            return got
        return block_call(kernel, layout, backend, operands, out, dtypes, direct=direct)

    return runner


def _slab_call(
    ufunc, kernel, layout, backend: Backend, operands, out, dtypes, across: bool, refill=False
):
    """One kernel per device over the slabs of packed operands (see `fast_call`);
    `across`: a run of several processes; `refill`: ``out`` takes the results' memory."""
    targets: list[tuple] | None = None
    if refill:
        dtypes = tuple(o.dtype for o in out)
    elif out is not None:
        targets = []
        for o in out:
            slabs = o.storage.own_slabs()
            if slabs is None:
                return None
            targets.append(slabs)
    results: list = [None] * len(layout.devices)  # another process computes its own
    writes = []
    done = None  # a large call's kernels, run at once on the devices' threads
    if (
        targets is None
        and not across
        and layout.extent * dtypes[0].itemsize >= backend.parallel_bytes
    ):
        rows = list(zip(layout.devices, _slab_args(operands)))
        # NumPy's own result dtype (a refill's are `out`'s): results may go to the pool.
        pooled = dtypes[0] if len(dtypes) == 1 and not refill else None
        done = iter(backend.each(kernel, rows, pooled))
    for d, device in _this_process.mine(layout.devices):
        # `fast_call` came here only with every Chunks operand packed (slabs not None).
        args = [x.slabs[d] if type(x) is Chunks else x for x in operands]  # type: ignore[index]
        if targets is not None:
            writes.append((device, args, [t[d] for t in targets]))
            continue
        with backend.on(device):
            got = kernel(*args) if done is None else next(done)
            got = got if isinstance(got, tuple) else (got,)
            if refill:  # an operand handed back as the result is not new memory
                got = tuple([g.copy() if any(g is a for a in args) else g for g in got])
            # NumPy's dtype is the contract where CuPy promotes differently.
            results[d] = [g if g.dtype == t else g.astype(t) for g, t in zip(got, dtypes)]
    if writes:
        backend.write_each(kernel, writes)  # in place (`writes_in_place`)
    if out is not None:
        for i, o in enumerate(out if refill else ()):
            o.storage.refill([r[i] for r in results])
        return out[0] if len(out) == 1 else out
    values = []
    for i, dtype in enumerate(dtypes):
        if _this_process.ALL_HERE:
            slabs = [r[i] for r in results]
        else:  # another process's devices: placeholders of their slabs
            slabs = placed_slabs([None if r is None else r[i] for r in results], layout, dtype)
        values.append(wrap(Chunks.packed(layout, slabs, backend, dtype, check=False)))
    return values[0] if ufunc.nout == 1 else tuple(values)


def _slab_args(operands) -> list:
    """Per device the kernel's arguments over packed `operands` (slabs and scalars)."""
    count = next(len(x.slabs) for x in operands if type(x) is Chunks)  # type: ignore[arg-type]
    return [
        [x.slabs[d] if type(x) is Chunks else x for x in operands]  # type: ignore[index]
        for d in range(count)
    ]


def block_call(kernel, layout, backend: Backend, operands, out, dtypes, *, direct: bool):
    """One kernel per device over the device blocks of operands (and ``out``) whose
    blocks agree (`Layout.device_blocks`) though their chunks may differ, in one process;
    None where some block is not one array.

    ``out`` is written by the kernels themselves where `direct`, unless it overlaps an
    input other than element for element (None: the general path orders such writes);
    else (a kernel that may raise midway) every device's result is computed and cast
    first and then copied in, so a failure writes nothing."""
    targets: list = []
    written: dict = {}  # id of an out's storage -> its blocks: an input that is out reads them
    for o in out or ():
        o.storage.make_writable()
        column = blocks(o.storage)
        if column is None:
            return None
        targets.append(column)
        written[id(o.storage)] = column
    overlaps = backend.xp.may_share_memory
    columns: list = []
    for x in operands:
        if type(x) is not Chunks:
            columns.append(None)
            continue
        column = written.get(id(x)) or blocks(x)
        if column is None:
            return None
        if direct and id(x) not in written:
            for o, target in zip(out or (), targets):
                if not x.apart_from(o.storage) and any(map(overlaps, column, target)):
                    return None
        columns.append(column)
    results = []
    if direct and out is not None:  # in place (`writes_in_place`)
        backend.write_each(
            kernel,
            [
                (device, [x if c is None else c[d] for x, c in zip(operands, columns)], t)
                for d, (device, t) in enumerate(zip(layout.devices, zip(*targets)))
            ],
        )
        return out[0] if len(out) == 1 else out
    done = None  # a large call's kernels, run at once on the devices' threads
    if layout.extent * dtypes[0].itemsize >= backend.parallel_bytes:
        rows = [
            (device, [x if c is None else c[d] for x, c in zip(operands, columns)])
            for d, device in enumerate(layout.devices)
        ]
        done = iter(backend.each(kernel, rows, dtypes[0] if len(dtypes) == 1 else None))
    for d, device in enumerate(layout.devices):
        args = [x if c is None else c[d] for x, c in zip(operands, columns)]
        with backend.on(device):
            got = kernel(*args) if done is None else next(done)
            got = got if isinstance(got, tuple) else (got,)
            wanted = dtypes if out is None else [o.dtype for o in out]
            results.append([g if g.dtype == t else g.astype(t) for g, t in zip(got, wanted)])
    if out is not None:
        if not direct:
            commit(
                backend,
                [
                    (device, target[d], (), result)
                    for d, device in enumerate(layout.devices)
                    for target, result in zip(targets, results[d])
                ],
            )
        return out[0] if len(out) == 1 else out
    # A block result flattened in C order is its device's slab of `layout`; where each
    # slab is a view of its block (a block in C order), the blocks serve later readers.
    values = []
    for i, dtype in enumerate(dtypes):
        kept: list | None = [r[i] for r in results]
        slabs = []
        for b in kept:  # type: ignore[union-attr]
            slabs.append(b if b.ndim == 1 else b.reshape(-1))
            if b.ndim != 1 and not (b.ndim and b.flags.c_contiguous):
                # A block in another order (its slab is a copy, not its memory), or a 0-d
                # result (NumPy's kernels give scalars): the slabs alone.
                kept = None
        values.append(wrap(Chunks.packed(layout, slabs, backend, dtype, check=False, blocks=kept)))
    return values[0] if len(values) == 1 else tuple(values)


def _wrap_results(ufunc, layout, results, backend: Backend, mode, dtypes):
    """DistArrays from per-chunk results (tuples for several outputs), in `dtypes`."""
    shapes, devices = layout.chunk_shapes, layout.chunk_devices
    if ufunc.nout == 1:
        if not _this_process.ALL_HERE:
            results = placed(results, shapes, devices, dtypes[0])
        return wrap_buffers(layout, results, backend, mode, dtypes[0])
    return tuple(
        wrap_buffers(
            layout,
            placed([None if r is None else r[i] for r in results], shapes, devices, dtypes[i]),
            backend,
            mode,
            dtypes[i],
        )
        for i in range(ufunc.nout)
    )


def wrap_buffers(layout, buffers, backend: Backend, mode, dtype):
    if any(b.dtype != dtype for b in buffers):
        # A backend whose kernels promote differently from NumPy (CuPy in corner cases):
        # NumPy's dtype is the contract.
        casts: list = [None] * len(buffers)
        for k, device in _this_process.mine(layout.chunk_devices):
            with backend.on(device):
                casts[k] = buffers[k].astype(dtype)
        buffers = placed(casts, layout.chunk_shapes, layout.chunk_devices, dtype)
    return wrap(Chunks.of(layout, buffers, backend, dtype), mode)
