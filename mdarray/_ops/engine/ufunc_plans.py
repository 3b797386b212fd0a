"""Plans of the general elementwise path: what a call decides, remembered by what it
depends on, so a repeated call only fetches pieces and runs kernels.

A call's decisions (the result's dtypes, layout and mode, which partial operands are
combined first, where each result chunk finds its piece of every operand, whether
``out`` is written in place) depend only on the operands' signatures (`call_key`): a
DistArray's layout, mode, dtype and backend; a NumPy array's type, shape and dtype; a
Python scalar's type (an int's sign and bit length, which decide NumPy's checks of its
range against the other dtypes); and, where a partial operand meets a scalar known on the
host, what the mode rules can learn of its value (`_mode_rules.host_facts`). Values are
never part of a plan: pieces are cut from the operands' current buffers on every call.

A plan (`Plan`) says, per operand, how chunk k of the result gets its piece: the operand's
own buffer k (`OWN`), the value as it is (`VALUE`, scalars), a view of one chunk on the
same device or a move of it from another (a tuple per chunk), or `aligned` for anything
else (`ALIGN`: host arrays, pieces gathered from several chunks). Where every operand is
packed in the result's layout or 0-d, the kernel runs once per device over the slabs.

Only single-process runs take plans (`planning`); a run of several processes takes the
general path, which exchanges pieces between processes.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from mdarray._array.array import DistArray, in_mode, wrap
from mdarray._backends.backend import Backend
from mdarray._core.mode_rules import R, host_facts, result_mode
from mdarray._core.modes import REPLICA, Mode
from mdarray._core.plan_cache import lookup, plan_cache, remember
from mdarray._exec.chunkwise import (
    aligned,
    backend_of,
    result_layout,
    shape_of,
)
from mdarray._exec.operands import stand_in
from mdarray._layouts.layout import Layout
from mdarray._movement.redistribute import replica_plan
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import all_here

from . import ufunc_cells as _cells
from .ufunc_pieces import HOST0, VALUE, blocked, pieces, pieces_of, run_blocks

OWN = "own"  # the operand's own buffers: it has the result's layout
ALIGN = "align"  # `aligned` on every call


# Dtype resolution --------------------------------------------------------------------


def dtype_key(x):
    """What decides dtypes for an operand: an array's dtype, or a Python scalar's weak type
    (with an int's value, whose range NumPy checks against the other operands' dtypes)."""
    if isinstance(x, (DistArray, np.generic)) or hasattr(x, "dtype"):
        return x.dtype
    if isinstance(x, int):
        return (type(x), x)
    return (type(x), None)


def _key_stand_in(key):
    """`stand_in` of an operand known only by its `dtype_key` (what `resolve` caches by)."""
    if isinstance(key, tuple):
        kind, value = key
        return kind(0) if value is None else value
    return np.empty(0, key)


@lru_cache(maxsize=4096)
def resolve(ufunc, keys: tuple, out_keys: tuple | None, where_key, options: tuple) -> tuple:
    """The dtypes of ``ufunc``'s outputs for operands of these types (NumPy's errors).

    With `out_keys` (dtypes, or None for outputs not given) or a `where_key`, NumPy also
    checks the casts into the outputs and of the mask, with the call's `options`.
    """
    inputs = [_key_stand_in(k) for k in keys]
    kwargs = dict(options)
    with np.errstate(all="ignore"):
        results = ufunc(*inputs, **kwargs)
        results = results if isinstance(results, tuple) else (results,)
        if out_keys is not None or where_key is not None:
            dtypes = out_keys or (None,) * ufunc.nout
            outs = tuple(np.empty(0, r.dtype if d is None else d) for r, d in zip(results, dtypes))
            where = True if where_key is None else _key_stand_in(where_key)
            ufunc(*inputs, out=outs, where=where, **kwargs)
    return tuple(r.dtype for r in results)


def call_shape(inputs, outs, where) -> tuple:
    shapes = [shape_of(x) for x in inputs]
    if where is not None:
        shapes.append(shape_of(where))
    out_shapes = [o.shape for o in outs or () if o is not None]
    shape = np.broadcast_shapes(*shapes, *out_shapes)
    for out_shape in out_shapes:
        if out_shape != shape:
            raise ValueError(
                f"non-broadcastable output operand with shape {out_shape} doesn't match "
                f"the broadcast shape {shape}"
            )
    return shape


def rule_mode(ufunc, inputs, layout, dtype) -> Mode | None:
    """The mode a row of `_mode_rules.RULES` gives ``ufunc(*inputs)`` computed copy by
    copy, or None. Every partial operand must have the result's layout and dtype."""
    pattern = []
    replicas = []
    for x in inputs:
        if isinstance(x, DistArray) and x.mode.is_partial:
            if x.layout != layout or x.dtype != dtype:
                return None
            pattern.append(x.mode)
        else:
            pattern.append(R)
            replicas.append(x)
    return result_mode(ufunc, tuple(pattern), tuple(replicas), dtype)


# Keys ----------------------------------------------------------------------------------


def planning() -> bool:
    """Whether calls take plans: a single-process run, where every piece is local."""
    return all_here()


def operand_key(x):
    """An operand's part of a call's key, or None for one that takes no plan."""
    kind = type(x)
    if kind is DistArray:
        return x.signature()
    if kind is float or kind is complex:
        return kind
    if kind is int:
        # NumPy checks a weak int against the other dtypes' ranges: sign and bit length
        # are all that decides (``~x`` makes -128 as long as 127, as int8 holds both).
        return (int, x < 0, (~x if x < 0 else x).bit_length())
    if kind is bool:
        return (bool, x)
    if kind is np.ndarray:
        return (kind, x.shape, x.dtype)
    if isinstance(x, np.generic):
        return (kind, x.dtype)
    return None


def call_key(name, inputs, outs, where, options: tuple):
    """The key of a call's plan, or None where some operand takes no plan."""
    keys = []
    partial = False
    for x in inputs:
        if type(x) is DistArray:
            key = x.signature()
            partial = partial or key[1] is not REPLICA
        else:
            key = operand_key(x)
            if key is None:
                return None
        keys.append(key)
    out_keys = None
    if outs is not None:
        if any(o is not None and type(o) is not DistArray for o in outs):
            return None
        out_keys = tuple(None if o is None else operand_key(o) for o in outs)
    where_key = None
    if where is not None:
        where_key = operand_key(where)
        if where_key is None:
            return None
    facts = None
    if partial:
        # A mode rule may hold for one scalar's value and not another's.
        facts = tuple(None if type(x) is DistArray else host_facts(x) for x in inputs)
    if options:
        try:
            hash(options)
        except TypeError:
            return None
    return (name, tuple(keys), out_keys, where_key, options, facts)


# Plans ---------------------------------------------------------------------------------


class Plan(NamedTuple):
    """What a call decided: the result's `dtypes`, `layout` and `mode`; the inputs made
    REPLICA first (`convert`, positions); per input its `sources` (`OWN`, `VALUE`,
    `HOST0`, `ALIGN` or per chunk ``(chunk, view key or None, from device, to device)``);
    `slabs` per input (`OWN`, `VALUE`, `HOST0` or per device ``(chunk, from, to)``) where
    the kernel can run once per device, else None; `groups`: per device its chunks;
    `direct`: per output, written into ``out``'s chunks; the `kernel` and its `options`."""

    dtypes: tuple
    layout: Layout
    mode: Mode
    convert: tuple
    sources: tuple
    slabs: tuple | None
    groups: tuple
    direct: tuple
    kernel: Any
    options: dict
    backend: Backend
    cells: tuple | None = None
    specs: tuple = ()
    block_sources: tuple | None = None


def decide_mode(ufunc, inputs, layout, dtypes, where) -> tuple[Mode, tuple]:
    """The result's mode and the positions of the partial inputs to make REPLICA first:
    partial where a mode rule proves it (never under a mask, which mixes in old values)."""
    partial = tuple(
        i for i, x in enumerate(inputs) if isinstance(x, DistArray) and x.mode.is_partial
    )
    if not partial:
        return REPLICA, ()
    if where is None and ufunc.nout == 1:
        mode = rule_mode(ufunc, inputs, layout, dtypes[0])
        if mode is not None:
            return mode, ()
    return REPLICA, partial


def make_plan(
    inputs, layout, mode, convert, dtypes, direct, kernel, options, backend: Backend, packable,
    unmasked=None,
):  # fmt: skip
    """The `Plan` of a call whose decisions are made; `packable`: no ``out`` or mask, so
    the kernel may run over slabs; `unmasked` (default `packable`): no mask, so it may
    run cell by cell (into fresh chunks that a write to ``out`` then commits)."""
    unmasked = packable if unmasked is None else unmasked
    sources = []
    slabs: list | None = [] if packable else None
    for x in inputs:
        source: Any
        if isinstance(x, DistArray):
            # Partial operands that stay partial have the result's layout (`rule_mode`);
            # those made REPLICA keep theirs.
            own = x.layout == layout
            source = OWN if own else (pieces(x.layout, layout) or ALIGN)
            slab = OWN if own else (device_pieces(x.layout, layout) if x.ndim == 0 else None)
        elif isinstance(x, np.ndarray):
            source = HOST0 if x.ndim == 0 else ALIGN
            slab = HOST0 if x.ndim == 0 else None
        else:
            source = slab = VALUE
        sources.append(source)
        if slabs is not None:
            slabs = None if slab is None else [*slabs, slab]
    if slabs is not None and OWN not in slabs:
        slabs = None  # no operand has the result's layout to say how it packs
    cells = None
    specs: tuple = ()
    if unmasked and len(dtypes) == 1 and ALIGN in sources:
        # Misaligned DistArray operands run cell by cell on views, not gathered
        # (`_ufunc_cells`); host arrays keep `aligned`.
        specs = tuple(
            _cells.OWN
            if source is OWN
            else x.layout
            if isinstance(x, DistArray)
            else _cells.VALUE
            if source is not ALIGN
            else None
            for x, source in zip(inputs, sources)
        )
        cells = None if None in specs else _cells.split_cells(specs, layout)
    return Plan(
        dtypes,
        layout,
        mode,
        convert,
        tuple(sources),
        None if slabs is None else tuple(slabs),
        device_groups(layout),
        direct,
        kernel,
        options,
        backend,
        cells,
        specs,
        blocked(inputs, layout) if packable and slabs is None else None,
    )


@plan_cache
def device_pieces(source: Layout, layout: Layout) -> tuple:
    """Per device of `layout`, ``(chunk, from device, to device)``: a 0-d operand's copy
    nearest to it."""
    out = []
    for device in layout.devices:
        ((k, _, _),) = replica_plan(source, (), device)
        out.append((k, source.chunk_devices[k], device))
    return tuple(out)


@plan_cache
def device_groups(layout: Layout) -> tuple:
    """Per device of `layout`: ``(device, its chunk numbers)``."""
    return tuple(
        (device, tuple(k for k, d in enumerate(layout.chunk_devices) if d == device))
        for device in layout.devices
    )


# Running a plan --------------------------------------------------------------------------


def operands(plan: Plan, inputs) -> list:
    """The inputs with the partial ones the plan combines first made REPLICA (each
    distinct array once: ``s / s`` combines ``s`` once)."""
    inputs = list(inputs)
    done: dict = {}
    for i in plan.convert:
        x = inputs[i]
        replica = done.get(id(x))
        if replica is None:
            replica = done[id(x)] = in_mode(x, REPLICA)
        inputs[i] = replica
    return inputs


def columns(plan: Plan, inputs, copies: bool) -> list:
    """Per input, its piece for every chunk of the result. Pieces on the chunk's device
    are views unless `copies` (where ``out`` is written in place, and a view of it must
    not see the chunks written before)."""
    backend = plan.backend
    n = len(plan.layout.chunk_devices)
    out: list = []
    for x, source in zip(inputs, plan.sources):
        if source is OWN:
            out.append(x.storage.buffers)
        elif source is VALUE:
            out.append((x,) * n)
        elif source is HOST0:
            out.append((x[()],) * n)
        elif source is ALIGN:
            out.append(aligned(x, plan.layout, backend))
        else:
            out.append(pieces_of(x, source, plan.layout, plan.backend, copies))
    return out


def run_slabs(plan: Plan, inputs, nout: int):
    """The plan's kernel once per device over packed slabs: the results (a DistArray per
    output), or None where an operand of the result's layout is not packed now."""
    backend = plan.backend
    devices = plan.layout.devices
    args: list = []
    for x, slab in zip(inputs, plan.slabs):  # type: ignore[arg-type]
        if slab is OWN:
            slabs = x.storage.slabs
            if slabs is None:
                return None
            args.append(slabs)
        elif slab is VALUE:
            args.append((x,) * len(devices))
        elif slab is HOST0:
            args.append((x[()],) * len(devices))
        else:
            storage = x.storage
            # A 0-d operand packed one chunk per device: each chunk is its slab, of shape
            # (1,), which broadcasts as the 0-d chunk would (no chunk views made).
            own = storage.slabs if storage.layout.shape == () else None
            if own is not None and len(own) != len(storage.layout.chunks):
                own = None
            if own is None:
                buffers = storage.buffers
                pieces = [buffers[k] for k, _, _ in slab]
            else:
                held = storage.layout.devices
                pieces = [own[held.index(src)] for _, src, _ in slab]
            column = []
            for piece, (_, src, dst) in zip(pieces, slab):
                column.append(piece if src == dst else backend.move(piece, src, dst))
            args.append(column)
    kernel, options, dtypes = plan.kernel, plan.options, plan.dtypes
    results = []
    on = backend.on
    for device, row in zip(devices, zip(*args)):
        with on(device):
            got = kernel(*row, **options)
            if nout == 1:
                results.append(got if got.dtype == dtypes[0] else got.astype(dtypes[0]))
            else:
                results.append([g if g.dtype == t else g.astype(t) for g, t in zip(got, dtypes)])
    if nout == 1:
        return wrap(Chunks.packed(plan.layout, results, backend, dtypes[0], check=False), plan.mode)
    return tuple(
        wrap(
            Chunks.packed(plan.layout, [r[i] for r in results], backend, t, check=False), plan.mode
        )
        for i, t in enumerate(dtypes)
    )


def run_chunks(plan: Plan, cols: list, nout: int):
    """The plan's kernel once per chunk over the pieces `cols`: a DistArray per output."""
    backend = plan.backend
    kernel, options, dtypes = plan.kernel, plan.options, plan.dtypes
    rows = list(zip(*cols))
    results: list = [None] * len(rows)
    on = backend.on
    for device, chunks in plan.groups:
        with on(device):
            for k in chunks:
                results[k] = kernel(*rows[k], **options)
    if nout == 1:
        return wrap_chunks(plan, results, dtypes[0])
    return tuple(wrap_chunks(plan, [r[i] for r in results], t) for i, t in enumerate(dtypes))


def wrap_chunks(plan: Plan, buffers: list, dtype):
    """A DistArray of per-chunk kernel results, in `dtype` (NumPy's dtype is the contract
    where a backend's kernels promote otherwise)."""
    backend = plan.backend
    for k, buffer in enumerate(buffers):
        if buffer.dtype != dtype:
            with backend.on(plan.layout.chunk_devices[k]):
                buffers[k] = buffer.astype(dtype)
    return wrap(Chunks.made(plan.layout, buffers, backend, dtype), plan.mode)


def run(plan: Plan, inputs, nout: int):
    """A plan without ``out`` or mask: the call's results."""
    if plan.convert:
        inputs = operands(plan, inputs)
    if plan.slabs is not None:
        result = run_slabs(plan, inputs, nout)
        if result is not None:
            return result
    if plan.block_sources is not None:
        result = run_blocks(plan, inputs, nout)
        if result is not None:
            return result
    if plan.cells is not None:
        return wrap(_cells.run_cells(plan, inputs, plan.dtypes[0]), plan.mode)
    return run_chunks(plan, columns(plan, inputs, False), nout)


# where ---------------------------------------------------------------------------------


def where_call(condition, x, y):
    """``numpy.where(condition, x, y)`` by its plan (every operand REPLICA, the result
    in the layout of the first DistArray operand of its shape); None where an operand
    takes no plan (the caller's general path runs)."""
    inputs = (condition, x, y)
    plan = where_plan(inputs)
    return None if plan is None else run(plan, inputs, 1)


def where_plan(inputs: tuple) -> Plan | None:
    """The plan of ``numpy.where(*inputs)`` (see `where_call`), or None."""
    if not planning():
        return None
    key = call_key(np.where, inputs, None, None, ())
    if key is None:
        return None
    plan = lookup(key)
    if plan is None:
        plan = _where_plan(inputs)
        remember(key, plan)
    return plan


def _where_plan(inputs) -> Plan:
    shape = np.broadcast_shapes(*(shape_of(op) for op in inputs))
    # NumPy's promotion, Python scalars weak: from empty stand-ins of the arrays.
    dtype = np.where(*(stand_in(op) for op in inputs)).dtype
    layout = result_layout(shape, inputs)
    backend = backend_of(inputs)
    convert = tuple(
        i for i, x in enumerate(inputs) if isinstance(x, DistArray) and x.mode.is_partial
    )
    kernel = backend.xp.where
    if not isinstance(inputs[0], DistArray) and not (
        isinstance(inputs[0], np.ndarray) and inputs[0].ndim
    ):
        kernel = _ScalarCondition(backend.xp)  # CuPy's where takes arrays only
    return make_plan(
        inputs, layout, REPLICA, convert, (dtype,), (False,), kernel, {}, backend, True
    )


class _ScalarCondition:
    """``xp.where`` for a scalar condition, made an array first."""

    __slots__ = ("xp",)

    def __init__(self, xp) -> None:
        self.xp = xp

    def __call__(self, condition, x, y):
        return self.xp.where(self.xp.asarray(condition), x, y)
