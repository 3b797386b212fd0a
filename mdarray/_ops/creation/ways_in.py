"""The ways data gets into a DistArray, in an SPMD run as in one process.

- ``distributed_array(array, index_map)``: every process passes the same host array and
  keeps its own chunks' parts of it (nothing moves between processes).
- ``distributed_array(array, index_map, src=r)``: only process ``r`` has the data; it
  sends each other process the boxes of that process's chunks, in one grouped exchange
  (`scatter`).
- `from_local_chunks`: each process passes the arrays of its own chunks; nothing moves.
- `from_callback`: each process makes its own chunks, ``fn(index)`` for each (reading a
  big file in parallel, each process its own part).

The metadata every process needs (shape, dtype, whether some process was given bad
input) is agreed first, in one small collective, so bad input raises the same error on
every process instead of leaving the others waiting in a later message.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from mdarray._array.array import DistArray, wrap
from mdarray._array.calls import per_process
from mdarray._backends.backend import Backend, backend as default_backend_object
from mdarray._core.modes import REPLICA, Mode, as_mode
from mdarray._layouts.layout import IndexMap, Layout, ShapeLike, check_devices, shape_tuple
from mdarray._movement import redistribute as _redistribute
from mdarray._movement.collectives import allgathered, broadcast, owner, rank_and_size
from mdarray._movement.scatter import scatter_from
from mdarray._storage import local as _this_process
from mdarray._storage.chunks import Chunks


def as_layout(shape, index_map: IndexMap | Layout) -> Layout:
    """`index_map` (a Layout, checked against `shape`, or an index map dict) as a Layout
    of an array of `shape`."""
    if isinstance(index_map, Layout):
        if index_map.shape != tuple(shape):
            raise ValueError(
                f"layout shape {index_map.shape} does not match the array's shape {tuple(shape)}"
            )
        return index_map
    return Layout(shape, index_map)


# Scattering from one process -------------------------------------------------------------


def scatter(array: Any, index_map: IndexMap | Layout, mode: Mode, src: Any) -> DistArray:
    """``distributed_array(array, index_map, mode, src=src)``: `array` on process `src`
    (ignored elsewhere), each chunk's box sent to the process of its device. Collective."""
    backend = default_backend_object()
    rank, size = rank_and_size()
    if isinstance(src, bool) or not isinstance(src, (int, np.integer)) or not 0 <= src < size:
        raise ValueError(
            f"distributed_array: src must be the rank of a process (0..{size - 1}), got {src!r}"
        )
    src = int(src)
    native: Any = None  # on `src`: `array` native to the backend (CuPy), and on the host
    host: Any = None
    meta: Any = None
    if rank == src:
        (native, host), meta = _source(array, backend)
    # The shape and dtype only `src` knows, or why its array is no array.
    meta = broadcast(meta, src)
    shape, dtype, problem = meta
    if problem is not None:
        kind, message = problem
        raise (TypeError if kind == "TypeError" else ValueError)(
            f"distributed_array: the array of process {src} (src): {message}"
        )
    layout = as_layout(shape, index_map)
    mode.check_dtype(dtype)
    storage = Chunks.empty(layout, dtype, backend)
    scatter_from(storage, src, rank, native, host)
    if mode.is_partial and not mode.idempotent:
        # The chunks are fresh copies, so the identities may be written into them.
        _redistribute.fill_shadowed(storage, mode.identity(dtype), in_place=True)
    return wrap(storage, mode)


def _source(array: Any, backend: Backend) -> tuple:
    """On `src`: ``((native array or None, host array or None), (shape, dtype, problem))``,
    problem ``(kind, message)`` where `array` cannot be scattered."""
    if isinstance(array, DistArray):
        problem = (
            "TypeError",
            (
                "src= takes host data; a DistArray is distributed already (pass it on every "
                "process, without src=, to reshard it)"
            ),
        )
        return (None, None), ((), np.dtype(np.float64), problem)
    native = None
    if backend.is_native(array) and not isinstance(array, np.ndarray):
        native = array
        device = backend.device_of(array)
        host = backend.host_empty(array.shape, array.dtype)
        backend.to_host_into(host, array, device)  # type: ignore[arg-type]  # a native array's
        backend.synchronize([device])
    else:
        try:
            host = np.asarray(array)
        except (TypeError, ValueError) as error:
            return (None, None), ((), np.dtype(np.float64), (type(error).__name__, str(error)))
    if host.dtype.hasobject:
        problem = ("TypeError", f"dtype {host.dtype} holds Python objects, which cannot be sent")
        return (None, None), (host.shape, np.dtype(np.float64), problem)
    if any(stride < 0 for stride in host.strides):
        host = np.ascontiguousarray(host)  # MPI's datatypes here step forwards
    return (native, host), (host.shape, host.dtype, None)


# Each process's own chunks -----------------------------------------------------------------


@per_process("chunks")
def from_local_chunks(
    shape: ShapeLike,
    layout: Layout | IndexMap,
    chunks: dict[int, Any],
    mode: Mode | str = REPLICA,
) -> DistArray:
    """A DistArray of the chunks each process passes for its own devices; no data moves
    between processes. Collective.

    Every process checks its own chunks (each device of `layout` it holds present, each
    chunk of the shape its index needs, one dtype); then one small collective shares the
    outcome, so a process with a missing or wrong chunk makes every process raise the
    same ValueError, naming the process, device and chunk. The processes' dtypes must be
    the same.

    Parameters
    ----------
    shape : int or tuple of ints
        The whole array's shape.
    layout : Layout or dict
        The layout (``{device: [index, ...]}``, global device ids) of the whole array.
    chunks : dict
        ``{device: [array per chunk of that device, in index map order]}`` for every
        device of `layout` this process holds (a bare array for a device of one chunk):
        NumPy arrays, or CuPy arrays on the cuda backend. They are copied onto their
        devices; the DistArray never shares memory with them.
    mode : Mode or str
        In a partial mode the chunks are the partial terms, combined by the mode where
        chunks overlap (nothing is replaced by the identity).

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> layout = mdarray.Layout.block((4,), devices=[0, 1])
    >>> x = mdarray.from_local_chunks((4,), layout, {0: np.zeros(2), 1: np.ones(2)})
    >>> x.get()
    array([0., 0., 1., 1.])
    """
    mode = as_mode(mode)
    backend = default_backend_object()
    layout = as_layout(shape_tuple(shape), layout)
    check_devices(layout, backend)
    arrays, problems = _given_chunks(layout, chunks, backend)
    dtypes = {a.dtype for a in arrays.values()}
    if len(dtypes) > 1:
        problems.append(f"the chunks have dtypes {sorted(map(str, dtypes))}: one dtype is needed")
    local = dtypes.pop() if len(dtypes) == 1 else None
    found = _agree("from_local_chunks", local, problems)
    if len(set(found.values())) > 1:
        listed = ", ".join(f"process {r}: {d}" for r, d in sorted(found.items()))
        raise ValueError(
            f"from_local_chunks: the processes' chunks differ in dtype ({listed}): "
            "cast them to one dtype"
        )
    dtype = next(iter(found.values()))
    mode.check_dtype(dtype)
    return wrap(_copied_in(layout, arrays, dtype, backend), mode)


def _given_chunks(layout: Layout, chunks: Any, backend: Backend) -> tuple[dict, list[str]]:
    """``({chunk: array}, problems)`` of the chunks this process passed."""
    if not isinstance(chunks, dict):
        kind = type(chunks).__name__
        return {}, [f"chunks must be a dict {{device: [array, ...]}}, got {kind}"]
    wanted: dict[int, list[int]] = {}
    for k, device in _this_process.mine(layout.chunk_devices):
        wanted.setdefault(device, []).append(k)
    problems: list[str] = []
    given: dict[int, Any] = {}
    for key, value in chunks.items():
        try:
            device = operator.index(key)
        except TypeError:
            problems.append(f"{key!r} is not a device id")
            continue
        if device not in layout.devices:
            problems.append(
                f"device {device} holds no chunk of the layout (devices {list(layout.devices)})"
            )
        elif device not in wanted:
            problems.append(
                f"device {device} is a device of process {owner(device)}: "
                "each process passes the chunks of its own devices"
            )
        else:
            given[device] = value
    arrays: dict[int, Any] = {}
    for device, ks in wanted.items():
        if device not in given:
            problems.append(f"device {device}: its {_count(len(ks))} missing")
            continue
        value = given[device]
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        if len(items) != len(ks):
            problems.append(
                f"device {device}: the layout gives it {len(ks)} chunks, {len(items)} "
                "arrays were given"
            )
            continue
        for i, (k, item) in enumerate(zip(ks, items)):
            where = f"device {device}, chunk {i} {index_text(layout.chunks[k][1])}"
            problem = _as_chunk(item, layout.chunk_shapes[k], backend, arrays, k)
            if problem is not None:
                problems.append(f"{where} {problem}")
    return arrays, problems


def _as_chunk(item: Any, shape: tuple, backend: Backend, arrays: dict, k: int) -> str | None:
    """Put `item` as an array into ``arrays[k]``; or say why it cannot be chunk `k`."""
    try:
        array = item if backend.is_native(item) else np.asarray(item)
    except (TypeError, ValueError) as error:
        return f"is not an array ({error})"
    if tuple(array.shape) != shape:
        return f"has shape {tuple(array.shape)}, its index needs {shape}"
    arrays[k] = array
    return None


def _count(n: int) -> str:
    return "chunk is" if n == 1 else f"{n} chunks are"


def index_text(index: tuple) -> str:
    """A normalized index as NumPy's slice notation, ``[0:2, 3:9:2]``."""
    parts = (f"{s.start}:{s.stop}" + ("" if s.step == 1 else f":{s.step}") for s in index)
    return f"[{', '.join(parts)}]"


# Made by a callback ----------------------------------------------------------------------


@per_process("fn")
def from_callback(
    shape: ShapeLike,
    layout: Layout | IndexMap,
    fn: Callable[[tuple[slice, ...]], Any],
    dtype: DTypeLike | None = None,
    mode: Mode | str = REPLICA,
) -> DistArray:
    """A DistArray whose chunks each process makes: ``fn(index)`` for each chunk of its
    own devices. Collective.

    `index` is the chunk's normalized index, a tuple of ``slice(start, stop, step)`` (one
    per axis); `fn` returns the chunk's values (a NumPy array, anything `numpy.asarray`
    takes, or a CuPy array on the cuda backend), called with the chunk's device current.
    The results are copied onto their devices. This is how each process reads its own
    part of a big file, in parallel, never holding the whole of it::

        data = np.memmap("big.f32", dtype=np.float32, mode="r", shape=shape)
        x = mdarray.from_callback(shape, layout, lambda index: data[index])

    One small collective shares each process's dtype and whether its `fn` failed or gave
    a wrong shape: then every process raises (the one whose `fn` raised, that error; the
    others a RuntimeError naming it), instead of the others waiting.

    Parameters
    ----------
    shape : int or tuple of ints
        The whole array's shape.
    layout : Layout or dict
        The layout (``{device: [index, ...]}``, global device ids) of the whole array.
    fn : callable
        ``fn(index) -> array`` of the chunk's shape.
    dtype : dtype, optional
        The array's dtype (the results are cast to it). By default the type NumPy
        promotes the results of every process to.
    mode : Mode or str
        In a partial mode the results are the partial terms, combined by the mode where
        chunks overlap.

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> def read(index):  # the values 10 * row + column of the chunk's rows and columns
    ...     rows, columns = (np.arange(s.start, s.stop, s.step) for s in index)
    ...     return 10 * rows[:, None] + columns
    >>> x = mdarray.from_callback((3, 2), mdarray.Layout.block((3, 2), devices=[0, 1]), read)
    >>> x.get()
    array([[ 0,  1],
           [10, 11],
           [20, 21]])
    """
    mode = as_mode(mode)
    backend = default_backend_object()
    layout = as_layout(shape_tuple(shape), layout)
    check_devices(layout, backend)
    cast = None if dtype is None else np.dtype(dtype)
    if cast is not None:
        mode.check_dtype(cast)
    arrays: dict[int, Any] = {}
    problems: list[str] = []
    raised: BaseException | None = None
    for k, device in _this_process.mine(layout.chunk_devices):
        index = layout.chunks[k][1]
        where = f"the chunk {index_text(index)} of device {device}"
        try:
            with backend.on(device):
                made = fn(index)
        except Exception as error:  # every process must hear of it, whatever it is
            raised = error
            problems.append(f"fn raised {type(error).__name__} for {where}: {error}")
            break
        problem = _as_chunk(made, layout.chunk_shapes[k], backend, arrays, k)
        if problem is not None:
            problems.append(f"fn's result for {where} {problem}")
    local = None
    if arrays and cast is None:
        try:
            local = np.result_type(*(a.dtype for a in arrays.values()))
        except TypeError as error:
            problems.append(f"fn's results have no common dtype ({error})")
    found = _agree("from_callback", local, problems, raised)
    if cast is None:
        try:
            cast = np.result_type(*found.values()) if found else np.dtype(np.float64)
        except TypeError as error:
            raise TypeError(
                f"from_callback: the processes' results have no common dtype ({error})"
            ) from None
        mode.check_dtype(cast)
    return wrap(_copied_in(layout, arrays, cast, backend), mode)


# Shared by both ---------------------------------------------------------------------------


def _agree(name: str, dtype, problems: list[str], raised: BaseException | None = None) -> dict:
    """``{rank: dtype}`` of the processes that made chunks, after raising on every process
    if any had `problems` (the one whose code `raised`, that error)."""
    everyone = allgathered((dtype, "; ".join(problems) or None, raised is not None))
    failed = [(r, message, foreign) for r, (_, message, foreign) in enumerate(everyone) if message]
    if failed:
        if raised is not None:
            raise raised
        text = f"{name}: " + "; ".join(f"process {r}: {message}" for r, message, _ in failed)
        raise (RuntimeError if any(foreign for _, _, foreign in failed) else ValueError)(text)
    return {r: np.dtype(d) for r, (d, _, _) in enumerate(everyone) if d is not None}


def _copied_in(layout: Layout, arrays: dict, dtype, backend: Backend) -> Chunks:
    """Packed chunks of `layout` holding ``arrays[k]`` (cast to `dtype`) for each local
    chunk k."""
    storage = Chunks.empty(layout, dtype, backend)
    for k, buffer in enumerate(storage.buffers):
        if k not in arrays:
            continue
        array = arrays[k]
        device = layout.chunk_devices[k]
        if isinstance(array, np.ndarray):
            backend.from_host(array.astype(dtype, copy=False), device, out=buffer)
        else:
            with backend.on(backend.device_of(array)):  # type: ignore[arg-type]  # native
                array = array.astype(dtype, copy=False)
            backend.adopt(array, device, out=buffer)
    return storage
