"""Running a matrix product's plan: per task its pieces of both operands on the task's
device and one kernel; and the runner that replays a decided product (`mdarray._core.decided`).

A vector operand is planned as a one-row or one-column matrix (`_product_operands`), but
its kernel is the matrix-vector product (`product_kernel`): BLAS's gemv, as NumPy's own
``a @ v`` runs, where a one-column matrix would take the general matrix product (on
NumPy's OpenBLAS, 512x2048 by a column: 85 us as gemm, 60 us as gemv).

A repeated ``a @ b`` whose first call needed no conversion (no mode change, reshard or
device blocks) runs its plan straight from the operands' buffers (`runner`): no checks,
dtype resolution, reshapes into DistArrays or plan lookups, the result made in its final
layout at once.
"""

from __future__ import annotations

import functools
import math

from mdarray._array.array import wrap
from mdarray._backends.backend import Backend
from mdarray._core import debug as _debug
from mdarray._core.modes import REPLICA
from mdarray._core.plan_cache import plan_cache
from mdarray._core.regions import box_shape, index_shape, is_basic
from mdarray._layouts.layout import Layout, tile_rows
from mdarray._movement.collectives import several
from mdarray._movement.redistribute import gather_steps, gathered, region_value, replica_plan
from mdarray._storage import local as _this_process
from mdarray._storage.chunks import Chunks
from mdarray._storage.local import all_here, is_placeholder, placed

# Multiply-adds from which a product of row blocks over devices that share memory runs
# as one kernel (`_one_product`): NumPy's 2048x2048 float64 product on 16 cores took
# 31.2-34.8 ms, its four 512-row block products 36.3-38.0 ms; a 2048x2048 float32 gemv
# of 4 row blocks on 2 cores 105 us against 96 us whole, less than checking the blocks.
ONE_KERNEL_WORK = 1 << 25


@functools.cache
def product_kernel(matmul, vector_a: bool, vector_b: bool):
    """The per-task kernel of a product whose operand a (`vector_a`) or b (`vector_b`)
    is a vector planned as a matrix: `matmul` (the backend's) on the vector itself, the
    result given the planned axis back (a view)."""
    if vector_a == vector_b:
        return matmul  # matrices, or two vectors: a (1, 1) product either way
    if vector_b:

        def matrix_vector(x, y, **options):
            return matmul(x, y[..., 0], **options)[..., None]

        return matrix_vector

    def vector_matrix(x, y, **options):
        return matmul(x[..., 0, :], y, **options)[..., None, :]

    return vector_matrix


def execute(plan, a: Chunks, mode_a, b: Chunks, mode_b, dtype, options: dict, kernel,
            layout: Layout | None = None) -> Chunks:  # fmt: skip
    """The chunks of the product `plan` (`_linear_algebra_functions._plan`) of `a` and
    `b` (in modes `mode_a`, `mode_b`), in the plan's layout or `layout` (the same chunks,
    reshaped: the planned axes of vectors dropped)."""
    backend = a.backend
    fetched: dict = {}
    if (
        not options
        and mode_a is REPLICA
        and mode_b is REPLICA
        and layout is None
        and kernel in (backend.matmul, product_kernel(backend.matmul, False, True))
        and len(plan.tasks) == len(plan.layout.devices)
        and not several()
        and not _debug.counting()
    ):
        # As the runner replays it (`runner`), so a repeat gives the first call's bits.
        whole = _row_blocks(plan, (a.layout, b.layout), plan.layout, backend)
        if whole is not None:
            task = plan.tasks[0]
            fetch_b = functools.partial(_piece, b, mode_b, task.b_source, task.device, fetched, 1)
            got = _one_product(whole, a, b, fetch_b, plan.layout, dtype, backend.matmul)
            if got is not None:
                return got
    results: list = [None] * len(plan.tasks)  # another process's task: its process runs it
    on = backend.on
    # the tasks, in the layout's chunk order
    held = dict(_this_process.mine(plan.layout.chunk_devices))
    for t, task in enumerate(plan.tasks):
        # Every process fetches every task's pieces (collective), then runs its own.
        x = _piece(a, mode_a, task.a_source, task.device, fetched, 0)
        y = _piece(b, mode_b, task.b_source, task.device, fetched, 1)
        if t in held:
            with on(task.device):
                results[t] = kernel(x, y, **options)
    layout = plan.layout if layout is None else layout
    if len(results) == len(layout.devices) and not several():
        # One product per device (blocks): each is its device's slab.
        slabs = [r.reshape(-1) for r in results]
        return Chunks.packed(layout, slabs, backend, dtype, check=False)
    if layout is not plan.layout:
        results = [
            None if r is None else r.reshape(shape)
            for r, shape in zip(results, layout.chunk_shapes)
        ]
    if not _this_process.ALL_HERE:
        results = placed(results, layout.chunk_shapes, layout.chunk_devices, dtype)
    return Chunks.of(layout, results, backend, dtype)


def _piece(x: Chunks, mode, source: tuple, device, fetched: dict, side: int):
    if source[0] == "chunk":
        _, k, index = source
        chunk = x.buffers[k]
        return chunk if index is None or is_placeholder(chunk) else chunk[index]
    key = (side, source[1], device)
    piece = fetched.get(key)
    if piece is None:
        one = _one_chunk(x.layout, source[1], device) if mode is REPLICA else None
        if one is None or not all_here():  # one process: every chunk is here
            piece = region_value(x, mode, source[1], device)
        else:
            k, view, src = one
            chunk = x.buffers[k]
            piece = x.backend.move(chunk if view is None else chunk[view], src, device)
        fetched[key] = piece
    return piece


@plan_cache
def _one_chunk(layout: Layout, box: tuple, device) -> tuple | None:
    """``(chunk, view key or None for the whole chunk, its device)``: the one chunk of a
    REPLICA operand laid out as `layout` that holds `box` whole (nearest `device`), or
    None where the box needs several."""
    plan = replica_plan(layout, box, device)
    if len(plan) != 1:
        return None
    k, _, chunk_index = plan[0]
    shape = layout.chunk_shapes[k]
    if chunk_index is None or index_shape(chunk_index, shape) == shape:
        return (k, None, layout.chunk_devices[k])
    if not is_basic(chunk_index):
        return None
    return (k, (*chunk_index, Ellipsis), layout.chunk_devices[k])


def runner(
    plan, matrices: tuple, vectors: tuple, modes: tuple, dtype, layout: Layout, backend: Backend
):
    """A decided ``a @ b`` (no ``out``, ``dtype`` or conversion) as a runner: `plan` run
    on the operands' buffers (in `modes`), each operand seen under its planned layout
    (`matrices`: a vector's as a matrix), the result in its final `layout`. Where each
    task finds its pieces (`_recipe`) is decided here, once: a piece fetched for one
    device serves the others where the backend's devices share memory."""
    kernel = product_kernel(backend.matmul, *vectors)
    slots: dict = {}
    steps = tuple(
        (
            task.device,
            _recipe(matrices[0], modes[0], task.a_source, task.device, 0, slots, backend),
            _recipe(matrices[1], modes[1], task.b_source, task.device, 1, slots, backend),
        )
        for task in plan.tasks
    )
    per_device = len(steps) == len(layout.devices)
    mode = plan.mode
    # A vector b is a one-column matrix here, its product BLAS's gemv (`_one_product`).
    whole = None
    if per_device and not vectors[0] and modes == (REPLICA, REPLICA):
        whole = _row_blocks(plan, matrices, layout, backend)

    def run(inputs, out):
        a, b = inputs
        sa = as_matrix(a.storage, matrices[0]) if vectors[0] else a.storage
        sb = as_matrix(b.storage, matrices[1]) if vectors[1] else b.storage
        fetched: list = [None] * len(slots)
        if whole is not None and not _debug.counting():
            device, _, recipe_b = steps[0]
            fetch_b = functools.partial(_take, sb, b.mode, recipe_b, device, fetched)
            got = _one_product(whole, sa, sb, fetch_b, layout, dtype, backend.matmul)
            if got is not None:
                return wrap(got, mode)
        on = backend.on
        results = []
        for device, recipe_a, recipe_b in steps:
            x = _take(sa, a.mode, recipe_a, device, fetched)
            y = _take(sb, b.mode, recipe_b, device, fetched)
            with on(device):
                results.append(kernel(x, y))
        if per_device:
            slabs = [r.reshape(-1) for r in results]
            return wrap(Chunks.packed(layout, slabs, backend, dtype, check=False), mode)
        results = [r.reshape(shape) for r, shape in zip(results, layout.chunk_shapes)]
        return wrap(Chunks.of(layout, results, backend, dtype, check=False), mode)

    return run


def _row_blocks(plan, matrices: tuple, layout: Layout, backend: Backend) -> tuple | None:
    """Where a product's tasks are one per device, each a row block of a (a whole chunk,
    every column) times all of b, the blocks in row order: ``(a's chunks in task order,
    b's chunks that tile it by rows, or None)``, for `_one_product`; else None. Only
    where the devices share memory, so one kernel may read them all."""
    layout_a, layout_b = matrices
    if not backend.shared_memory or len(plan.tasks) < 2:
        return None
    if len(layout_a.shape) != 2 or len(layout_b.shape) != 2:
        return None
    if math.prod(layout_a.shape) * layout_b.shape[1] < ONE_KERNEL_WORK:
        return None  # checking that the blocks line up would cost more than it saves
    full_b = tuple(range(n) for n in layout_b.shape)
    chunks_a = []
    for task in plan.tasks:
        kind, *rest = task.a_source
        if kind != "chunk" or rest[1] is not None:
            return None
        if task.out_box[0] != layout_a.boxes[rest[0]][0]:
            return None
        if not _whole_b(task.b_source, layout_b, full_b):
            return None
        chunks_a.append(rest[0])
    if not tile_rows([layout_a.boxes[k] for k in chunks_a], layout_a.shape):
        return None
    return tuple(chunks_a), layout_b.row_tiling


def _whole_b(source: tuple, layout: Layout, full: tuple) -> bool:
    """Whether a task's piece of b (its plan's source) is all of b."""
    if source[0] == "fetch":
        return source[1] == full
    return source[2] is None and layout.boxes[source[1]] == full


def _one_product(whole: tuple, sa: Chunks, sb: Chunks, fetch_b, layout: Layout, dtype,
                 matmul) -> Chunks | None:  # fmt: skip
    """A product planned as one row block per device (`_row_blocks`) as one kernel,
    where a's blocks lie one after another in memory (as `Backend.empty_slabs` makes
    them): b's chunks read where they lie when they do too, else fetched once
    (`fetch_b()`); the result's slabs made together, so the next product finds them so.
    None where a's blocks do not line up.

    The first call of a product (`execute`) and its replays (`runner`) decide alike, so
    a repeat gives the first call's bits (a gemm of other shapes may round otherwise)."""
    backend = sa.backend
    chunks_a, chunks_b = whole
    a = backend.span([sa.buffers[k] for k in chunks_a])
    if a is None:
        return None
    b = None if chunks_b is None else backend.span([sb.buffers[k] for k in chunks_b])
    if b is None:
        b = fetch_b()
    columns = b.shape[1]
    rows = [sa.buffers[k].shape[0] for k in chunks_a]
    slabs = backend.empty_slabs([n * columns for n in rows], dtype, layout.devices)
    out = backend.span([s.reshape(n, columns) for s, n in zip(slabs, rows)])
    if out is None:
        return None
    with backend.on(layout.devices[0]):
        if b.shape[1] == 1:  # a matrix times a vector: BLAS's gemv, as `product_kernel`
            matmul(a, b[:, 0], out=out[:, 0])
        else:
            matmul(a, b, out=out)
    return Chunks.packed(layout, slabs, backend, dtype, check=False)


def _slot(slots: dict, side: int, box: tuple, device, backend: Backend) -> tuple:
    """``(slot, the device that fetches into it)`` of one operand's piece `box` needed on
    `device`: a slot per device, or one for all where the backend's devices share memory
    (`Backend.shared_memory`: the first device needing it fetches, the others read it)."""
    key = (side, box) if backend.shared_memory else (side, box, device)
    if key not in slots:
        slots[key] = (len(slots), device)
    return slots[key]


def _recipe(layout: Layout, mode, source: tuple, device, side: int, slots: dict,
            backend: Backend) -> tuple:  # fmt: skip
    """How a task of a decided product finds one operand's piece, its operand laid out as
    `layout` (as planned): the plan's ``("chunk", k, index)``, or a fetch into a slot
    (`_slot`), read on another device than the one that fetched it as
    ``("read", slot, fetcher)``, else fetched as ``("one", slot, k, view, device)`` (a
    view of one chunk, moved), ``("steps", slot, gather steps, shape)`` or ``("region",
    slot, box)``."""
    if source[0] == "chunk":
        return source
    box = source[1]
    slot, fetcher = _slot(slots, side, box, device, backend)
    if fetcher != device:
        return ("read", slot, fetcher)
    if mode is REPLICA:
        one = _one_chunk(layout, box, device)
        if one is not None:
            return ("one", slot, *one)
        steps = gather_steps(layout, box, device)
        if steps is not None:
            return ("steps", slot, steps, box_shape(box))
    return ("region", slot, box)


def _take(x: Chunks, mode, recipe: tuple, device, fetched: list):
    """One operand's piece of a task by its `_recipe`."""
    kind = recipe[0]
    if kind == "chunk":
        chunk = x.buffers[recipe[1]]
        return chunk if recipe[2] is None else chunk[recipe[2]]
    if kind == "read":  # fetched by an earlier task's device, read here
        piece = fetched[recipe[1]]
        if _debug.counting():
            _debug.record_transfer(recipe[2], device, piece.nbytes)
        return piece
    piece = fetched[recipe[1]]
    if piece is None:
        if kind == "one":
            _, _, k, view, source = recipe
            chunk = x.buffers[k]
            piece = x.backend.move(chunk if view is None else chunk[view], source, device)
        elif kind == "steps":
            piece = gathered(x, recipe[2], recipe[3], device)
        else:
            piece = region_value(x, mode, recipe[2], device)
        fetched[recipe[1]] = piece
    return piece


def as_matrix(storage: Chunks, layout: Layout) -> Chunks:
    """A vector's chunks under `layout`, its planned matrix layout: each buffer reshaped,
    no view tracking (for reading within the product)."""
    buffers = [b.reshape(shape) for b, shape in zip(storage.buffers, layout.chunk_shapes)]
    return Chunks.of(layout, buffers, storage.backend, storage.dtype, check=False)
