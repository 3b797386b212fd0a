"""Every ufunc's ``__call__``, run chunk by chunk.

One implementation serves every NumPy ufunc, so ``a + b``, ``np.add(a, b)``,
``mdarray.add(a, b)`` and ``cupy.add(a, b)`` take one path:

1. NumPy itself resolves the dtypes, on empty stand-ins of the operands (`_ufunc_plans.resolve`,
   cached on the ufunc and the operands' types), so result dtypes, casting errors and
   rejected type combinations are NumPy's own, raised before any chunk is touched.
2. The result takes the layout of the first DistArray ``out``, else of the first DistArray
   operand of the output's shape (`_chunkwise.result_layout`).
3. Partial operands stay partial where `_mode_rules` proves the algebra; otherwise they
   become REPLICA first.
4. The backend's kernel runs on each chunk, on the chunk's device, writing straight into
   ``out``'s chunks where ``out`` has the result's layout and mode, so ``x += y`` writes
   every replica of ``x`` in place; any other ``out`` is written by `write_out`.

REPLICA operands of one layout, with Python scalars, take a fast path (`_ufunc_fast.fast_call`) that
goes from the operands' chunks to the kernels with no planning and no copies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mdarray._array.array import DistArray, in_group, in_mode, wrap
from mdarray._backends.backend import Backend
from mdarray._core.modes import REPLICA
from mdarray._core.plan_cache import lookup, remember
from mdarray._core.registry import implements_method, implements_ufunc_method, method
from mdarray._exec.chunkwise import aligned, backend_of, result_layout, write_out, writes_in_place
from mdarray._exec.operands import TAKEN, as_operand, yields_to
from mdarray._movement.collectives import agreeing
from mdarray._runtime import profile as _profile
from mdarray._storage import local as _this_process
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import placed
from mdarray._storage.stored import decided_call

from . import ufunc_cells as _cells
from .fallback import fallback
from .ufunc_fast import PY_SCALARS, decided, fast_call, wrap_buffers
from .ufunc_plans import (
    call_key,
    call_shape,
    columns,
    decide_mode,
    dtype_key,
    make_plan,
    operands,
    planning,
    resolve,
    rule_mode,
    run,
)

_IGNORED = frozenset({"order", "subok"})  # no effect on values; chunks are always C order
_PASSED = frozenset({"dtype", "casting"})


# The general path --------------------------------------------------------------------


@implements_ufunc_method("__call__", spmd=True)
def ufunc_call(ufunc, inputs, kwargs):
    """Run `ufunc` on each chunk of the result's layout, operands aligned to it."""
    result = fast_call(ufunc, inputs, kwargs)
    if result is not None:
        return result
    if ufunc.signature is not None:
        # A gufunc without its own implementation (matmul has one): its core dimensions
        # may be split across chunks, so it cannot run chunk by chunk.
        return _fallback_call(ufunc, inputs, kwargs)
    kwargs = dict(kwargs)
    outs = _outputs(ufunc, kwargs.pop("out", None))
    where = kwargs.pop("where", True)
    for name in _IGNORED & kwargs.keys():
        del kwargs[name]
    if kwargs.keys() - _PASSED:
        if "signature" in kwargs:
            return _fallback_call(ufunc, inputs, {**kwargs, "out": outs, "where": where})
        unknown = min(kwargs.keys() - _PASSED)
        raise TypeError(f"'{unknown}' is an invalid keyword to ufunc '{ufunc.__name__}'")
    if planning():
        result = _planned_call(ufunc, inputs, outs, where, kwargs)
        if result is not None:
            return result
    inputs = tuple(as_operand(x) for x in inputs)
    where = _as_where(where)
    options = tuple(sorted(kwargs.items()))
    dtypes, shape, backend, kernel = _decide(ufunc, inputs, outs, where, options)
    if kernel is None:
        where = True if where is None else where
        return _fallback_call(ufunc, inputs, {**kwargs, "out": outs, "where": where})
    first_out = next((o for o in outs or () if isinstance(o, DistArray)), None)
    layout = first_out.layout if first_out is not None else result_layout(shape, inputs)
    inputs, mode = _operands_in_mode(ufunc, inputs, layout, dtypes, where)
    columns = [
        x.storage.buffers
        if isinstance(x, DistArray) and x.mode is not REPLICA
        # Partial operands kept by a mode rule already have the result's layout.
        else aligned(x, layout, backend)
        for x in inputs
    ]
    in_place = outs is None or writes_in_place(backend, ufunc, len(layout.chunks), dtypes, inputs)
    direct = tuple(
        in_place and isinstance(o, DistArray) and o.layout == layout and o.mode is mode
        for o in outs or (None,) * ufunc.nout
    )
    targets = _targets(ufunc, outs, direct, where, layout, backend, dtypes)
    masks = None if where is None else aligned(where, layout, backend)
    with agreeing(backend.may_fail(ufunc)):
        results = _run(kernel, columns, targets, masks, layout, backend, kwargs, dtypes)
    return _deliver(ufunc, outs, direct, results, layout, backend, mode, dtypes)


def _planned_call(ufunc, inputs, outs, where, kwargs):
    """The call by its plan (`_ufunc_plans`), made on the first call of its key; None
    where an operand takes no plan or the backend has no kernel (the general path then
    runs, and falls back)."""
    where = None if where is True else _as_where(where)
    options = tuple(sorted(kwargs.items())) if kwargs else ()
    key = call_key(ufunc, inputs, outs, where, options)
    if key is None:
        return None
    plan = lookup(key)
    if plan is None:
        plan = _plan(ufunc, inputs, outs, where, kwargs, options)
        if plan is None:
            return None
        remember(key, plan)
    result = _run_plan(ufunc, plan, inputs, outs, where)
    if where is None and not options:
        decided(ufunc, inputs, {} if outs is None else {"out": outs}, _plan_runner(ufunc, plan))
    return result


def _plan_runner(ufunc, plan):
    """A plan as a runner (`mdarray._core.decided`)."""

    nout = ufunc.nout

    def runner(inputs, out):
        if out is None:  # (`_run_plan`'s first case, one frame fewer)
            return run(plan, inputs, nout)
        return _run_plan(ufunc, plan, inputs, out, None)

    return runner


def _run_plan(ufunc, plan, inputs, outs, where):
    """The call by its `plan` (see `_planned_call`)."""
    if outs is None and where is None:
        return run(plan, inputs, ufunc.nout)
    if plan.convert:
        inputs = operands(plan, inputs)
    layout, backend, dtypes = plan.layout, plan.backend, plan.dtypes
    several = len(layout.chunks) > 1  # kernels of several calls write ``out`` in cells only
    # Not the plan's to say: writing in place depends on the call's error state too.
    in_place = outs is None or (not several and writes_in_place(backend, ufunc, 1, dtypes, inputs))
    direct = tuple(in_place and d for d in plan.direct)
    if plan.cells is not None and where is None and not any(direct):
        if outs is not None and _writes_cells(ufunc, plan, inputs, outs):
            _cells.write_cells(plan, inputs, outs[0])
            return outs[0]
        # Misaligned operands cell by cell on views of their chunks, not gathered; the
        # fresh results then go to ``out`` as every staged write does.
        cells = _cells.run_cells(plan, inputs, dtypes[0]).buffers
        return _deliver(ufunc, outs, direct, [(c,) for c in cells], layout, backend,
                        plan.mode, dtypes)  # fmt: skip
    pieces = columns(plan, inputs, any(direct))
    targets = _targets(ufunc, outs, direct, where, layout, backend, dtypes)
    masks = None if where is None else aligned(where, layout, backend)
    results = _run(plan.kernel, pieces, targets, masks, layout, backend, plan.options, dtypes)
    return _deliver(ufunc, outs, direct, results, layout, backend, plan.mode, dtypes)


def _writes_cells(ufunc, plan, inputs, outs) -> bool:
    """Whether the cells of a call with ``out`` (one, of the plan's layout and mode) are
    written into it by the kernels themselves (`_cells.write_cells`), all in one
    `Backend.write_each`, rather than computed fresh and committed."""
    count = sum(map(len, plan.cells))
    return (
        plan.direct[0]
        and not plan.options
        and writes_in_place(plan.backend, ufunc, count, plan.dtypes, inputs, each=True)
        and _cells.writes_cells(plan, inputs, outs[0])
    )


def _plan(ufunc, inputs, outs, where, kwargs, options):
    """What the general path decides for these operands (see `ufunc_call`), as a plan;
    None where the backend has no kernel for `ufunc`."""
    dtypes, shape, backend, kernel = _decide(ufunc, inputs, outs, where, options)
    if kernel is None:
        return None
    first_out = next((o for o in outs or () if isinstance(o, DistArray)), None)
    layout = first_out.layout if first_out is not None else result_layout(shape, inputs)
    mode, convert = decide_mode(ufunc, inputs, layout, dtypes, where)
    direct = tuple(
        isinstance(o, DistArray) and o.layout == layout and o.mode is mode
        for o in outs or (None,) * ufunc.nout
    )
    packable = outs is None and where is None
    return make_plan(
        inputs, layout, mode, convert, dtypes, direct, kernel, dict(kwargs), backend, packable,
        where is None,
    )  # fmt: skip


def _decide(ufunc, inputs, outs, where, options: tuple) -> tuple:
    """``(dtypes, shape, backend, kernel)`` of a call: NumPy's result dtypes (and its
    errors), the broadcast shape, the operands' backend and its kernel (None: none)."""
    out_keys = None if outs is None else tuple(None if o is None else o.dtype for o in outs)
    where_key = None if where is None else dtype_key(where)
    dtypes = resolve(ufunc, tuple(map(dtype_key, inputs)), out_keys, where_key, options)
    shape = call_shape(inputs, outs, where)
    backend = backend_of((*inputs, *(outs or ()), where))
    return dtypes, shape, backend, backend.ufunc_kernel(ufunc)


def _outputs(ufunc, out) -> tuple | None:
    """``out`` as a tuple with one entry (an array or None) per output, or None."""
    if out is None:
        return None
    out = out if isinstance(out, tuple) else (out,)
    if len(out) != ufunc.nout:
        raise ValueError("The 'out' tuple must have exactly one entry per ufunc output")
    if all(o is None for o in out):
        return None
    return tuple(o if o is None or isinstance(o, DistArray) else _as_array(o) for o in out)


def _as_array(x):
    if isinstance(x, np.ndarray) or backend_of(()).is_native(x):
        return x
    raise TypeError(f"return arrays must be of ArrayType, got {type(x).__name__}")


def _as_where(where):
    """None for a mask that is True everywhere; a host scalar stays a scalar."""
    if isinstance(where, (bool, np.bool_)) and where:
        return None
    return as_operand(where)


def _operands_in_mode(ufunc, inputs, layout, dtypes, where):
    """The operands to run per chunk and the result's mode: partial where a mode rule
    proves it (never under a mask, which mixes in old values), else all REPLICA."""
    if not any(isinstance(x, DistArray) and x.mode.is_partial for x in inputs):
        return inputs, REPLICA
    if where is None and ufunc.nout == 1:
        mode = rule_mode(ufunc, inputs, layout, dtypes[0])
        if mode is not None:
            return inputs, mode
    return tuple(in_mode(x, REPLICA) if isinstance(x, DistArray) else x for x in inputs), REPLICA


def _targets(ufunc, outs, direct, where, layout, backend: Backend, dtypes):
    """Per output, the chunk arrays the kernel writes into, or None to let it allocate.

    ``out``'s own chunks where it has the result's layout and mode; under a mask, fresh
    chunks holding ``out``'s old values (or uninitialized ones for no ``out``), since
    where the mask is False the output keeps what it held."""
    targets: list[Sequence[Any] | None] = []
    for i in range(ufunc.nout):
        o = None if outs is None else outs[i]
        if direct[i] and isinstance(o, DistArray):  # direct: `o` is a DistArray
            targets.append(o.storage.writable())
        elif where is None:
            targets.append(None)
        elif o is None:
            shapes, devices = layout.chunk_shapes, layout.chunk_devices
            fresh: list = [None] * len(devices)
            for k, device in _this_process.mine(devices):
                fresh[k] = backend.empty(shapes[k], dtypes[i], device)
            targets.append(placed(fresh, shapes, devices, dtypes[i]))
        else:
            old = aligned(o, layout, backend)
            targets.append(_private_copies(old, o, layout, backend))
    return targets


def _private_copies(chunks, owner, layout, backend: Backend):
    """`chunks`, copied where they are `owner`'s own buffers (they are written into)."""
    own = {id(c) for c in owner.storage.buffers} if isinstance(owner, DistArray) else set()
    out = list(chunks)
    for k, device in _this_process.mine(layout.chunk_devices):
        if id(out[k]) in own:
            out[k] = backend.copy(out[k], device)
    return out


def _run(kernel, columns, targets, masks, layout, backend: Backend, options, dtypes):
    """Run `kernel` on every chunk: per chunk, the tuple of its output arrays."""
    results: list = [None] * len(layout.chunk_devices)  # another process computes its own
    for k, device in _this_process.mine(layout.chunk_devices):
        args = [column[k] for column in columns]
        given = [None if t is None else t[k] for t in targets]
        mask = None if masks is None else masks[k]
        with backend.on(device):
            results[k] = _run_chunk(kernel, args, given, mask, backend, options)
    return results


def _run_chunk(kernel, args, given, mask, backend: Backend, options):
    """One chunk: ``kernel(*args)`` into the `given` outputs (None: allocated), under
    `mask`; the outputs."""
    if isinstance(mask, (bool, np.bool_)):
        if not mask:
            return tuple(given)  # a False scalar mask writes nothing
        mask = None
    if mask is None:
        if any(t is not None for t in given):
            # A bare array for one output: CuPy's non-ufunc kernels (clip) take no tuple.
            got = kernel(*args, out=given[0] if len(given) == 1 else tuple(given), **options)
        else:
            got = kernel(*args, **options)
        return got if isinstance(got, tuple) else (got,)
    return backend.call_masked(kernel, args, tuple(given), mask, options)


def _deliver(ufunc, outs, direct, results, layout, backend: Backend, mode, dtypes):
    """The call's return value: new DistArrays, or the ``out`` arrays written."""
    values = []
    for i in range(ufunc.nout):
        o = None if outs is None else outs[i]
        if direct[i]:
            values.append(o)
            continue
        data = placed(
            [None if r is None else r[i] for r in results],
            layout.chunk_shapes,
            layout.chunk_devices,
            dtypes[i],
        )
        if o is None:
            values.append(wrap_buffers(layout, data, backend, mode, dtypes[i]))
            continue
        write_out(o, wrap(Chunks.of(layout, data, backend), mode))
        values.append(o)
    return values[0] if ufunc.nout == 1 else tuple(values)


def _fallback_call(ufunc, inputs, kwargs):
    """Gather, compute with NumPy and write back, under the fallback policy."""
    outs = kwargs.get("out")
    result = fallback(ufunc, inputs, kwargs, f"numpy.{ufunc.__name__}")
    if not outs:
        return result
    results = result if isinstance(result, tuple) else (result,)
    delivered = []
    for o, r in zip(outs, results):
        if isinstance(o, DistArray):
            write_out(o, r)
        delivered.append(r if o is None else o)
    return delivered[0] if len(delivered) == 1 else tuple(delivered)


@implements_method("compare")
def compare(ufunc, x: DistArray, other):
    """``x == other`` or ``x != other`` (`ufunc` is `numpy.equal` or `numpy.not_equal`),
    as NumPy's operators: where the ufunc has no loop for the two dtypes (a number against
    a string), every element compares unequal instead of raising."""
    kind = type(other)
    if (kind is DistArray or kind in PY_SCALARS) and not _profile.recording:
        # What a call like this one decided, without NumPy's dispatch (`__array_ufunc__`
        # looks the same runner up first).
        if (done := decided_call(ufunc, (x, other), {})) is not None:
            return in_group(done, (x, other))
    elif kind not in TAKEN and yields_to(other):
        return NotImplemented
    try:
        return ufunc(x, other)
    except TypeError:
        other_dtype = getattr(other, "dtype", None) or np.asarray(other).dtype
        if x.dtype.names is not None or np.dtype(other_dtype).names is not None:
            return method("structured_compare")(ufunc, x, other)
        try:
            ufunc(np.empty(0, x.dtype), np.empty(0, other_dtype))
        except TypeError:
            pass  # NumPy has no loop either: its operator answers "all unequal"
        else:
            if np.dtype(other_dtype).kind != "O":
                raise
            # NumPy compares through Python objects, which CuPy's kernels cannot hold:
            # no number equals None; anything else is compared as NumPy does, on the host.
            if other is not None:
                return fallback(ufunc, (x, other), {}, f"numpy.{ufunc.__name__} (object operand)")
    unequal = np.full_like(x, ufunc is np.not_equal, dtype=np.bool_)
    if np.broadcast_shapes(x.shape, np.shape(other)) != x.shape:
        unequal = np.logical_or(unequal, np.zeros(np.shape(other), np.bool_))
    return unequal
