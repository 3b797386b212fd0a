"""``x[idx] = value`` for one 1-D integer array `idx` along one axis, without gathering.

The indices are read on the host and reduced to NumPy's rule for duplicates (the last
write of a row wins): each distinct row keeps the position of its last occurrence. Each
chunk of x writes the requested rows it holds, every copy of them; in a partial mode the
owner of each element gets the value and the other copies the identity. A scalar moves
nothing; an array value's rows (the kept ones) move to the chunks that hold them.
Everything that can fail (the indices, the value's shape and cast, moving it) happens
before the first write, so a failure changes nothing.
"""

from __future__ import annotations

import numpy as np

from mdarray._array.array import DistArray
from mdarray._backends.backend import Backend
from mdarray._core import regions as _regions
from mdarray._exec.chunkwise import commit
from mdarray._movement.redistribute import region_value

from .advanced import host_indices, in_dtype_of, take_rows


def _last_occurrences(indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of `indices` (ascending) and, per row, the position of its last
    occurrence in `indices` (NumPy's last write wins)."""
    rows, first_reversed = np.unique(indices[::-1], return_index=True)
    return rows, (len(indices) - 1 - first_reversed).astype(np.intp)


def _checked_value(x: DistArray, value, selected: tuple):
    """`value` cast to x's dtype and checked against the `selected` shape as NumPy does;
    a plain scalar comes back as a NumPy scalar, an array with x's number of axes."""
    value = in_dtype_of(x, value)
    vshape = tuple(value.shape)
    fits = len(vshape) <= len(selected) and all(
        v in (1, n) for v, n in zip(vshape[::-1], selected[::-1])
    )
    if not fits:
        raise ValueError(
            f"shape mismatch: value array of shape {_shape_text(vshape)} could not be "
            f"broadcast to indexing result of shape {_shape_text(selected)}"
        )
    if isinstance(value, np.ndarray) and not value.ndim:
        return value[()]
    if len(vshape) < len(selected):
        value = value[(None,) * (len(selected) - len(vshape))]
    return value


def _shape_text(shape: tuple) -> str:
    """A shape as NumPy's advanced assignment writes it: ``(3,3)``, ``(4,)``."""
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _value_on(value, region: tuple, device, backend: Backend):
    """The part `region` (a box) of `value` on `device`."""
    if isinstance(value, DistArray):
        return region_value(value.storage, value.mode, region, device)
    piece = value[tuple(_regions.to_slice(r) for r in region)]
    if isinstance(piece, np.ndarray):
        return backend.from_host(np.ascontiguousarray(piece), device)
    return backend.adopt(piece, device)


def integer_setitem(x: DistArray, indices, axis: int, value) -> None:
    """``x[..., indices, ...] = value`` along `axis` (`indices` 1-D ints, negative ones
    counted from the end), every copy of each selected element written, or none on error.

    Each chunk writes the requested rows it holds; duplicates follow NumPy (the last
    occurrence wins). A scalar moves nothing; an array value's kept rows move to the
    chunks that hold them (only those rows).

    Examples
    --------
    >>> import mdarray, numpy as np
    >>> x = mdarray.asarray(np.zeros(4))
    >>> with mdarray.options(fallback="raise"):
    ...     x[[3, 0, 3]] = np.array([1.0, 2.0, 5.0])
    >>> x.get()
    array([2., 0., 0., 5.])
    """
    layout, backend = x.layout, x.storage.backend
    wanted = host_indices(indices, x.shape[axis], axis)
    selected = (*x.shape[:axis], len(wanted), *x.shape[axis + 1 :])
    value = _checked_value(x, value, selected)
    rows, last = _last_occurrences(wanted)
    scalar = isinstance(value, np.generic)
    if not scalar and value.shape[axis] != 1:
        if isinstance(value, DistArray):
            value = take_rows(value, last, axis)
        elif isinstance(value, np.ndarray):
            value = np.take(value, last, axis=axis)
        else:
            value = backend.xp.take(value, backend.xp.asarray(last), axis=axis)
    writes = []  # (chunk, local rows, value piece)
    for k, (box, device) in enumerate(zip(layout.boxes, layout.chunk_devices)):
        span = box[axis]
        if not _regions.box_size(box) or not len(rows):
            continue
        held = (rows >= span.start) & (rows < span.stop) & ((rows - span.start) % span.step == 0)
        positions = np.flatnonzero(held)
        if not len(positions):
            continue
        local = ((rows[positions] - span.start) // span.step).astype(np.intp)
        if scalar:
            piece = value
        else:
            region = [range(1) if n == 1 else r for n, r in zip(value.shape, box)]
            along = value.shape[axis] != 1
            if along:
                region[axis] = range(int(positions[0]), int(positions[-1]) + 1)
            piece = _value_on(value, tuple(region), device, backend)
            if along and len(positions) != len(region[axis]):
                with backend.on(device):
                    offsets = backend.from_host(positions - positions[0], device)
                    piece = backend.xp.take(piece, offsets, axis=axis)
        writes.append((k, local, piece))
    _write_rows(x, axis, writes)


def _write_rows(x: DistArray, axis: int, writes: list) -> None:
    layout, backend = x.layout, x.storage.backend
    identity = x.mode.identity(x.dtype) if x.mode.is_partial else None
    buffers = x.storage.writable([k for k, *_ in writes])
    full = (slice(None),) * x.ndim
    assigns = []
    for k, local, piece in writes:
        buffer, device = buffers[k], layout.chunk_devices[k]
        assigns.append((device, buffer, (*full[:axis], local, *full[axis + 1 :]), piece))
        if identity is None:
            continue
        for index in layout.shadowed[k]:
            shadow = _regions.positions(index[axis], buffer.shape[axis])
            common = np.intersect1d(np.asarray(shadow), local)
            if len(common):
                rows = (*index[:axis], common.astype(np.intp), *index[axis + 1 :])
                assigns.append((device, buffer, rows, identity))
    commit(backend, assigns)
