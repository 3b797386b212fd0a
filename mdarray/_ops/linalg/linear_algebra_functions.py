"""Linear algebra: `matmul` over any layouts and modes, planned block by block.

A matrix product is cut into *tasks*, each one local ``xp.matmul`` of a block of `a` by a
block of `b` on one device. The blocks are the operands' own chunks:

- An operand in REPLICA mode contributes its distinct chunk boxes; they must not overlap
  (a partition of the array). Chunks holding the same box are copies, so a task may run on
  any of their devices. A layout whose chunks contain no partition is resharded first.
- An operand in SUM mode contributes every chunk (each holds its own partial), overlaps and
  copies included, and its tasks run where the chunk is: no partial ever moves.

Each pair of blocks (``a[..., I, K]``, ``b[..., K', J]``) whose contracted ranges meet gives
the task ``a[..., I, K & K'] @ b[..., K & K', J]``, a partial of ``out[..., I, J]``. For a
fixed output element the blocks of `a` holding its row split ``k`` once, as do the blocks of
`b` holding its column, so the pairs split ``k`` into their common refinement: summing the
tasks gives the product exactly once. The result is in SUM mode where some task holds only
part of ``k`` (or an operand is SUM), else in REPLICA mode (its boxes are then disjoint).

Each task runs on the device that needs the fewest bytes brought in (the two operands'
devices are the candidates, ties go to the less loaded one); a block that is not there is
fetched once per device with `_redistribute.region_value`. Blocks that line up (as
`make_2d_index_map` builds them) therefore multiply with no transfer at all, and a small
operand is the one that travels. Plans depend only on layouts, so they are cached.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple, cast

import numpy as np

from mdarray._array.array import DistArray, wrap
from mdarray._backends.backend import Backend
from mdarray._core import regions as _regions
from mdarray._core.modes import REPLICA, SUM
from mdarray._core.plan_cache import plan_cache
from mdarray._core.registry import implements_ufunc_method
from mdarray._exec.chunkwise import as_blocks, backend_of, block_layout, write_out
from mdarray._layouts.layout import Layout
from mdarray._movement import redistribute as _redistribute
from mdarray._movement.collectives import several
from mdarray._ops.engine.fallback import fallback
from mdarray._ops.engine.ufunc_fast import decided as remember_runner
from mdarray._ops.shape.transposes import permute_dims
from mdarray._storage.chunks import Chunks

from . import product_bands
from .contraction_blocks import contracted_whole
from .product_operands import (
    axis_inserted as _axis_inserted,
    via_transpose,
    with_axis,
    without_axis,
)
from .product_runs import execute, product_kernel, runner as product_runner

__all__ = ["matmul", "tensordot", "vecdot"]

_SIGNATURE = "(n?,k),(k,m?)->(n?,m?)"
_SUPPORTED_KWARGS = frozenset({"out", "dtype", "casting"})


def matmul(x1: Any, x2: Any, /) -> DistArray:
    """Matrix product of two arrays, at least one a DistArray, as `numpy.matmul` (``x1 @ x2``).

    Works for 1-D, 2-D and batched operands of any layouts and modes. Blocks that line up
    (``x1``'s column blocks equal to ``x2``'s row blocks on the same devices, as
    `make_2d_index_map` builds them) multiply locally with no transfer, and the result is
    a partial sum (SUM mode) where the contracted axis is split; otherwise the smaller
    pieces travel. See the module `mdarray._ops.linalg.linear_algebra_functions` for the plan.

    >>> import mdarray, numpy as np
    >>> a = mdarray.distributed_array(np.arange(6).reshape(2, 3), mdarray.make_2d_index_map([0, 2], [0, 1, 3], [[0, 1]]))
    >>> b = mdarray.distributed_array(np.arange(12).reshape(3, 4), mdarray.make_2d_index_map([0, 1, 3], [0, 4], [[0], [1]]))
    >>> c = mdarray.matmul(a, b)
    >>> c.mode, c.get().tolist()
    (mdarray.SUM, [[20, 23, 26, 29], [56, 68, 80, 92]])
    """
    return np.matmul(x1, x2)


@implements_ufunc_method("__call__", ufuncs=[np.matmul], spmd=True)
def matmul_call(ufunc, inputs, kwargs):
    """``np.matmul(a, b, out=..., dtype=..., casting=...)`` with DistArray operands."""
    if set(kwargs) - _SUPPORTED_KWARGS:
        return fallback(ufunc, inputs, kwargs, "numpy.matmul")
    out = kwargs.get("out")
    if isinstance(out, tuple):
        (out,) = out
    if out is not None and not isinstance(out, DistArray):
        return fallback(ufunc, inputs, kwargs, "numpy.matmul")
    a, b = (x if isinstance(x, DistArray) or _is_array(x) else np.asarray(x) for x in inputs)
    decided: list | None = [] if not kwargs and type(a) is type(b) is DistArray else None
    if decided is not None:  # row bands first, where the product is one (`product_bands`)
        bands = product_bands.band_runner(a, b, _result_type(a.dtype, b.dtype))
        banded = None if bands is None else bands((a, b), None)
        if banded is not None:
            remember_runner(ufunc, inputs, kwargs, bands)
            return banded
    result = _matmul(a, b, kwargs.get("dtype"), kwargs.get("casting", "same_kind"), decided)
    if decided is not None:
        # The plan's replay where it applies, else the decisions made once (blocks of
        # several chunks per device, products through the transpose).
        runner = decided[0] if decided and decided[0] is not None else None
        if runner is None and out is None:
            runner = _plain_product(cast(DistArray, a), cast(DistArray, b), result.dtype)
        if runner is not None:
            remember_runner(ufunc, inputs, kwargs, runner)
    if out is None:
        return result
    return write_out(out, result, casting=kwargs.get("casting", "same_kind"), name="matmul")


def tensordot(x1: Any, x2: Any, /, *, axes: int | tuple[Any, Any] = 2) -> DistArray:
    """The tensor contraction of `x1` and `x2` over `axes` (array API, as
    `numpy.tensordot`): the last `axes` axes of `x1` with the first of `x2`, or the two
    sequences of axes ``(x1_axes, x2_axes)`` pairwise.

    Native (`mdarray._ops.linalg.contractions`): the contracted axes are permuted together and
    merged, and one `matmul` multiplies the blocks pairwise on their devices; where the
    contracted axes are split the result is a partial sum (SUM mode), combined only
    when needed.

    Parameters
    ----------
    x1, x2 : DistArray
        The operands (one may be a NumPy array).
    axes : int or (sequence of ints, sequence of ints)
        How many trailing axes of `x1` to contract with leading axes of `x2`, or which.

    Returns
    -------
    DistArray
        The remaining axes of `x1`, then those of `x2`.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> a = mdarray.asarray(np.arange(6.0).reshape(2, 3))
    >>> mdarray.tensordot(a, a, axes=([1], [1])).get()
    array([[ 5., 14.],
           [14., 50.]])
    """
    return cast(DistArray, np.tensordot(x1, x2, axes=axes))


def _is_array(x) -> bool:
    return (
        hasattr(x, "shape")
        and hasattr(x, "dtype")
        and (hasattr(x, "__array_namespace__") or hasattr(x, "__cuda_array_interface__"))
    )


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> DistArray:
    """Dot products of vectors along `axis`, ``sum(conj(x1) * x2, axis)``, broadcast.

    As `numpy.vecdot` (array API ``vecdot``): the vectors are the rows of a batched
    `matmul`, so a split `axis` gives a partial sum (SUM mode) with no transfers.

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(6.0).reshape(2, 3), mdarray.Layout.block((2, 3), axis=1, devices=[0, 1]))
    >>> mdarray.vecdot(x, np.ones(3)).get()
    array([ 3., 12.])
    """
    if axis != -1:
        x1, x2 = np.moveaxis(x1, axis, -1), np.moveaxis(x2, axis, -1)
    return np.vecdot(x1, x2)


# NumPy's vector products as matrix products: per operand, whether a vector becomes a
# row (its last axis stays last) or a column (a new last axis); the result axes of length
# one to drop afterwards; and whether the first operand is conjugated.
_VECTOR_PRODUCTS = {
    "vecdot": (("row", "column"), (-1, -1), True),
    "matvec": ((None, "column"), (-1,), False),
    "vecmat": (("row", None), (-2,), True),
}


@implements_ufunc_method(
    "__call__",
    ufuncs=[getattr(np, name) for name in _VECTOR_PRODUCTS if hasattr(np, name)],
    spmd=True,
)
def vector_product_call(ufunc, inputs, kwargs):
    """``np.vecdot``, ``np.matvec`` and ``np.vecmat``: each a `matmul` with a vector
    operand made a row (``x[..., None, :]``) or a column (``x[..., :, None]``)."""
    if set(kwargs) - _SUPPORTED_KWARGS:
        return fallback(ufunc, inputs, kwargs, f"numpy.{ufunc.__name__}")
    out = kwargs.get("out")
    if isinstance(out, tuple):
        (out,) = out
    if out is not None and not isinstance(out, DistArray):
        return fallback(ufunc, inputs, kwargs, f"numpy.{ufunc.__name__}")
    a, b = (x if isinstance(x, DistArray) or _is_array(x) else np.asarray(x) for x in inputs)
    _check_core(ufunc, a.shape, b.shape)
    (shape_a, shape_b), dropped, conjugate = _VECTOR_PRODUCTS[ufunc.__name__]
    if conjugate and a.dtype.kind == "c":
        a = np.conjugate(a)
    a = np.expand_dims(a, a.ndim - 1) if shape_a == "row" else a
    b = np.expand_dims(b, b.ndim) if shape_b == "column" else b
    casting = kwargs.get("casting", "same_kind")
    result = _matmul(a, b, kwargs.get("dtype"), casting)
    for axis in dropped:
        result = np.squeeze(result, result.ndim + axis)
    return result if out is None else write_out(out, result, casting=casting, name="matmul")


def _check_core(ufunc, shape_a, shape_b) -> None:
    """NumPy's errors for operands whose core dimensions do not fit `ufunc`."""
    core_a, core_b = (part.count(",") + 1 for part in ufunc.signature.split("->")[0].split("),("))
    for operand, (shape, core) in enumerate(((shape_a, core_a), (shape_b, core_b))):
        if len(shape) < core:
            raise ValueError(
                f"{ufunc.__name__}: Input operand {operand} does not have enough dimensions "
                f"(has {len(shape)}, gufunc core with signature {ufunc.signature} requires {core})"
            )
    k_a, k_b = shape_a[-1], shape_b[-1 if core_b == 1 else -2]
    if k_a != k_b:
        raise ValueError(
            f"{ufunc.__name__}: Input operand 1 has a mismatch in its core dimension 0, with "
            f"gufunc signature {ufunc.signature} (size {k_b} is different from {k_a})"
        )


# The product ------------------------------------------------------------------------


def _matmul(a, b, dtype, casting, decided: list | None = None):
    """``a @ b``; where `decided` is a list and the call needs no conversion (modes,
    reshards, device blocks, empty chunks), a runner that replays it is appended."""
    _check_shapes(a.shape, b.shape)
    if via_transpose(a, b):
        # a @ v == v @ a.T, element for element the same products and sums.
        return _matmul(b, permute_dims(a), dtype, casting)
    if dtype is None:
        out_dtype = _result_type(a.dtype, b.dtype)
        kernel_kwargs = {}
    else:
        out_dtype = np.dtype(dtype)
        kernel_kwargs = {"dtype": out_dtype, "casting": casting}
    backend = backend_of((a, b))
    vector_a, vector_b = a.ndim == 1, b.ndim == 1
    given = (a, b)
    a = with_axis(a, 0) if vector_a else a
    b = with_axis(b, 1) if vector_b else b
    planned = (a, b)
    a, b = _operand_modes(a, b, out_dtype)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) if a.ndim + b.ndim > 4 else ()
    out_shape = (*batch, a.shape[-2], b.shape[-1])
    plan = None
    if not math.prod(out_shape) or not a.shape[-1]:
        result = _zeros(out_shape, out_dtype, a if isinstance(a, DistArray) else b, backend)
    else:
        a, b = _partitioned(a, b, backend)
        if not several():
            # One product per device block, not per chunk: row chunks of one device make
            # one matrix (`as_blocks`), and the result has a chunk per block.
            a, b = _as_blocks(a), _as_blocks(b)
        plan = _plan(a.layout, a.mode is SUM, a.itemsize, b.layout, b.mode is SUM, b.itemsize)
        kernel = product_kernel(backend.matmul, vector_a, vector_b)
        chunks = execute(plan, a.storage, a.mode, b.storage, b.mode, out_dtype, kernel_kwargs,
                         kernel)  # fmt: skip
        result = wrap(chunks, plan.mode)
    if vector_b:
        result = without_axis(result, result.ndim - 1)
    if vector_a:
        result = without_axis(result, result.ndim - (1 if vector_b else 2))
    if (
        decided is not None
        and plan is not None
        and a is planned[0]
        and b is planned[1]
        and not several()
    ):
        decided.append(_runner(plan, given, (vector_a, vector_b), out_dtype, result, backend))
    return result


def _runner(plan, given: tuple, vectors: tuple, dtype, result: DistArray, backend: Backend):
    """The runner of a product that needed no conversion, or None where its decisions
    depend on more than the operands' layouts (device blocks that `as_blocks` may find
    or not, empty chunks that `without_axis` squeezes, both operands vectors)."""
    if all(vectors) or any(0 in shape for shape in result.layout.chunk_shapes):
        return None
    if any(block_layout(x.layout) is not None for x in given):
        return None
    matrices = tuple(
        _axis_inserted(x.layout, side) if vector else x.layout
        for side, (x, vector) in enumerate(zip(given, vectors))
    )
    modes = tuple(x.mode for x in given)
    return product_runner(plan, matrices, vectors, modes, dtype, result.layout, backend)


def _plain_product(a: DistArray, b: DistArray, dtype):
    """``a @ b`` as a runner (`mdarray._core.decided`) where `_matmul` decides nothing but
    what the operands' layouts, modes and dtypes fix: REPLICA operands laid out in
    blocks the plan takes, a product that is not empty; None otherwise."""
    transpose = via_transpose(a, b)
    if transpose:
        a, b = b, permute_dims(a)
    vector_a, vector_b = a.ndim == 1, b.ndim == 1
    shaped_a = with_axis(a, 0) if vector_a else a
    shaped_b = with_axis(b, 1) if vector_b else b
    if (
        a.mode is not REPLICA
        or b.mode is not REPLICA
        or shaped_a.ndim + shaped_b.ndim > 4
        or not (shaped_a.size and shaped_b.size and a.shape[-1])
        or _blocks(shaped_a.layout, False) is None
        or _blocks(shaped_b.layout, False) is None
    ):
        return None
    kernel = product_kernel(a.storage.backend.matmul, vector_a, vector_b)
    last = 1 if vector_b else 2

    def runner(inputs, out):
        a, b = inputs
        if transpose:
            a, b = b, permute_dims(a)
        a = _as_blocks(with_axis(a, 0) if vector_a else a)
        b = _as_blocks(with_axis(b, 1) if vector_b else b)
        plan = _plan(a.layout, False, a.itemsize, b.layout, False, b.itemsize)
        result = wrap(
            execute(plan, a.storage, REPLICA, b.storage, REPLICA, dtype, {}, kernel), plan.mode
        )
        if vector_b:
            result = without_axis(result, result.ndim - 1)
        if vector_a:
            result = without_axis(result, result.ndim - last)
        return result

    return runner


def _as_blocks(x: DistArray) -> DistArray:
    """`x` with a chunk per device block, where its blocks still partition it (devices'
    blocks may overlap where their chunks did not all)."""
    storage = x.storage
    coarse = as_blocks(storage)
    if coarse is storage or _blocks(coarse.layout, x.mode is SUM) is None:
        return x
    return wrap(coarse, x.mode)


def _check_shapes(shape_a, shape_b) -> None:
    for operand, shape in enumerate((shape_a, shape_b)):
        if not shape:
            raise ValueError(
                f"matmul: Input operand {operand} does not have enough dimensions (has 0, "
                f"gufunc core with signature {_SIGNATURE} requires 1)"
            )
    k_a = shape_a[-1]
    k_b = shape_b[0] if len(shape_b) == 1 else shape_b[-2]
    if k_a != k_b:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature {_SIGNATURE} (size {k_b} is different from {k_a})"
        )
    if len(shape_a) > 2 or len(shape_b) > 2:
        np.broadcast_shapes(shape_a[:-2], shape_b[:-2])


@functools.lru_cache(maxsize=256)
def _result_type(a: np.dtype, b: np.dtype) -> np.dtype:
    """NumPy's result dtype of a product (remembered: a repeated call asks again)."""
    return np.result_type(a, b)


def _operand_modes(a, b, out_dtype):
    """The operands in modes the plan takes: REPLICA, or one of them SUM.

    ``(sum_p A_p) @ B == sum_p (A_p @ B)`` (and likewise on the right), so a SUM operand
    times a REPLICA one stays SUM: each partial is multiplied where it lies and the
    products are the partials of the result. That holds for every value only in ring
    arithmetic with no cast: integers of the result's dtype (int8 copies 100 and 100
    hold -56; cast to int16 first, they would give 200). Float copies meet ``0 * inf``
    (an identity copy times an infinite element of B is NaN) and overflow where the value
    does not, so they are combined first, as are PROD, MAX and MIN partials (which do not
    distribute over the product) and the second of two SUM operands.
    """

    def stays(x) -> bool:
        return x.mode is SUM and x.dtype == out_dtype and out_dtype.kind in "iu"

    a_sum = isinstance(a, DistArray) and stays(a)
    if isinstance(a, DistArray) and a.mode.is_partial and not a_sum:
        a = a.change_mode(REPLICA)
    if isinstance(b, DistArray) and b.mode.is_partial and (a_sum or not stays(b)):
        b = b.change_mode(REPLICA)
    return a, b


def _zeros(shape, dtype, like, backend: Backend) -> DistArray:
    """An empty product, or one over an empty contracted axis: all zeros."""
    layout = Layout.block(shape, devices=like.devices if isinstance(like, DistArray) else None)
    return wrap(Chunks.full(layout, 0, dtype, backend))


def _partitioned(a, b, backend: Backend):
    """The operands as DistArrays whose blocks the plan can use.

    A REPLICA DistArray without a partition among its chunks is resharded to blocks of
    rows (`a`) or columns (`b`), so the contracted axis stays whole. A NumPy or CuPy
    operand is distributed lined up with the other operand's blocks.
    """
    for side, operand in ((0, a), (1, b)):
        if isinstance(operand, DistArray) and _blocks(operand.layout, operand.mode is SUM) is None:
            layout = Layout.block(operand.shape, axis=-2 + side, devices=operand.devices)
            resharded = operand.reshard(layout)
            a, b = (resharded, b) if side == 0 else (a, resharded)
    if not isinstance(a, DistArray):
        a = wrap(Chunks.from_host(a, _lined_up(b.layout, b.mode is SUM, a.shape, 1), backend))
    if not isinstance(b, DistArray):
        b = wrap(Chunks.from_host(b, _lined_up(a.layout, a.mode is SUM, b.shape, 0), backend))
    return a, b


@plan_cache
def _lined_up(layout: Layout, partial: bool, other_shape: tuple, side: int) -> Layout:
    """A layout for the other operand holding, beside each block of `layout`, the part
    of the other operand it multiplies (every task then finds its blocks on one device)."""
    batch = np.broadcast_shapes(layout.shape[:-2], other_shape[:-2])
    index_map: dict = {}
    for box, holders in _blocks(layout, partial):
        expanded = _expand(box[:-2], layout.shape[:-2], batch)
        other_batch = _restrict(expanded, other_shape[:-2], batch)
        core = (box[-1], range(other_shape[-1])) if side == 0 else (range(other_shape[-2]), box[-2])
        index = tuple(_regions.to_slice(r) for r in (*other_batch, *core))
        chunks = index_map.setdefault(layout.chunk_devices[holders[0]], [])
        if index not in chunks:
            chunks.append(index)
    return Layout(other_shape, index_map)


# Blocks and plans -------------------------------------------------------------------


@plan_cache
def _blocks(layout: Layout, partial: bool):
    """The blocks an operand contributes: ``((box, holder chunks), ...)``, or None.

    In SUM mode every non-empty chunk is its own block. In REPLICA mode chunks with equal
    boxes are copies of one block; the blocks must not overlap, so chunks overlapping an
    earlier block are left out (in layout order, else, where that leaves a gap, largest
    first: a chunk inside another one), and None says the rest does not cover the array.
    """
    sized = [(k, box) for k, box in enumerate(layout.boxes) if _regions.box_size(box)]
    if partial:
        return tuple((box, (k,)) for k, box in sized)
    holders: dict = {}
    for k, box in sized:
        holders.setdefault(box, []).append(k)
    whole = _regions.full_box(layout.shape)
    for order in (list(holders), sorted(holders, key=_regions.box_size, reverse=True)):
        chosen: list = []
        for box in order:
            if all(_regions.intersect(box, other) is None for other in chosen):
                chosen.append(box)
        if _regions.cover(whole, tuple(chosen)).uncovered() is None:
            return tuple((box, tuple(holders[box])) for box in chosen)
    return None


class _Task(NamedTuple):
    device: int
    a_source: tuple  # ("chunk", k, index into the chunk or None: whole) or ("fetch", box)
    b_source: tuple
    out_box: tuple


class _Plan(NamedTuple):
    tasks: tuple  # in the order of `layout.chunks`
    layout: Layout
    mode: object


@plan_cache
def _plan(layout_a: Layout, sum_a: bool, size_a: int, layout_b: Layout, sum_b: bool, size_b: int):
    """The tasks of ``a @ b`` for operands of these layouts (SUM mode or REPLICA) and
    item sizes, each on the device needing the fewest bytes brought in."""
    batch = np.broadcast_shapes(layout_a.shape[:-2], layout_b.shape[:-2])
    k_full = range(layout_a.shape[-1])
    fetched: set = set()
    load: dict = {}
    tasks = []
    split = sum_a or sum_b
    blocks_a, blocks_b = _blocks(layout_a, sum_a), _blocks(layout_b, sum_b)
    if not split:
        out_bytes = math.prod((*batch, layout_a.shape[-2], layout_b.shape[-1])) * max(
            size_a, size_b
        )
        blocks_a, blocks_b = contracted_whole(blocks_a, size_a, blocks_b, size_b, k_full, out_bytes)
    for box_a, holders_a in blocks_a:
        expanded_a = _expand(box_a[:-2], layout_a.shape[:-2], batch)
        for box_b, holders_b in blocks_b:
            k = _regions.intersect_range(box_a[-1], box_b[-2])
            out_batch = _regions.intersect(
                expanded_a, _expand(box_b[:-2], layout_b.shape[:-2], batch)
            )
            if not len(k) or out_batch is None:
                continue
            piece_a = (*_restrict(out_batch, layout_a.shape[:-2], batch), box_a[-2], k)
            piece_b = (*_restrict(out_batch, layout_b.shape[:-2], batch), k, box_b[-1])
            sides = (
                (layout_a, holders_a, piece_a, size_a, box_a),
                (layout_b, holders_b, piece_b, size_b, box_b),
            )
            device = _place(sides, sum_a, sum_b, fetched, load)
            a_source, b_source = (
                _source(layout, holders, piece, box, device, side, fetched)
                for side, (layout, holders, piece, _, box) in enumerate(sides)
            )
            out_box = (*out_batch, box_a[-2], box_b[-1])
            work = _regions.box_size(out_box) * len(k)
            load[device] = load.get(device, 0) + work
            tasks.append(_Task(device, a_source, b_source, out_box))
            split = split or k != k_full
    order = {d: n for n, d in enumerate(dict.fromkeys(t.device for t in tasks))}
    tasks.sort(key=lambda t: order[t.device])
    index_map: dict = {}
    for task in tasks:
        index_map.setdefault(task.device, []).append(
            tuple(_regions.to_slice(r) for r in task.out_box)
        )
    out_shape = (*batch, layout_a.shape[-2], layout_b.shape[-1])
    return _Plan(tuple(tasks), Layout(out_shape, index_map), SUM if split else REPLICA)


def _place(sides, sum_a: bool, sum_b: bool, fetched: set, load: dict) -> int:
    """The device for one task: where a partial lies, else the cheapest candidate."""
    if sum_a or sum_b:
        layout, holders = sides[0][:2] if sum_a else sides[1][:2]
        return layout.chunk_devices[holders[0]]
    candidates = dict.fromkeys(
        layout.chunk_devices[k] for layout, holders, *_ in sides for k in holders
    )

    def cost(device):
        moved = sum(
            _fetch_bytes(layout, holders, piece, device, side, fetched) * size
            for side, (layout, holders, piece, size, _) in enumerate(sides)
        )
        return moved, load.get(device, 0)

    return min(candidates, key=cost)


def _fetch_bytes(layout: Layout, holders, piece: tuple, device, side: int, fetched: set) -> int:
    """Elements of `piece` to bring to `device` (none if a holder or an earlier fetch has
    them), counted with the plan `region_value` follows."""
    if any(layout.chunk_devices[k] == device for k in holders) or (side, piece, device) in fetched:
        return 0
    shape = _regions.box_shape(piece)
    return sum(
        _index_size(index, shape)
        for k, index, _ in _redistribute.replica_plan(layout, piece, device)
        if layout.chunk_devices[k] != device
    )


def _index_size(index: tuple, shape: tuple) -> int:
    """Elements selected by a tuple of slices or int arrays from an array of `shape`."""
    return int(
        np.prod(
            [len(range(n)[i]) if isinstance(i, slice) else len(i) for i, n in zip(index, shape)]
        )
    )


def _source(layout: Layout, holders, piece, box, device, side: int, fetched: set) -> tuple:
    for k in holders:
        if layout.chunk_devices[k] == device:
            # None: the whole chunk, taken as it is on every call.
            return ("chunk", k, None if piece == box else _regions.local_box_index(box, piece))
    fetched.add((side, piece, device))
    return ("fetch", piece)


def _expand(batch_box: tuple, shape: tuple, batch: tuple) -> tuple:
    """An operand's batch ranges in the broadcast batch's coordinates."""
    lead = len(batch) - len(shape)
    return tuple(
        range(n) if t < lead or (shape[t - lead] == 1 and n != 1) else batch_box[t - lead]
        for t, n in enumerate(batch)
    )


def _restrict(batch_box: tuple, shape: tuple, batch: tuple) -> tuple:
    """Broadcast batch ranges as an operand of batch `shape` reads them."""
    lead = len(batch) - len(shape)
    return tuple(
        range(1) if n == 1 and batch[s + lead] != 1 else batch_box[s + lead]
        for s, n in enumerate(shape)
    )
