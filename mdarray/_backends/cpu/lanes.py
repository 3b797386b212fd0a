"""Lanes: one device's kernel of a large call cut into pieces that run on several cores.

The device threads (`threads.py`) run the devices of a call at once, one thread each; on a
machine of more cores than devices the rest would idle. Where a kernel's work splits into
independent pieces of its result, the device's row becomes one piece per lane, each on a
thread of its own, each writing its part of one result array (nothing to join after):

- an elementwise ufunc (`CpuBackend.each`'s pooled path), or a kernel the caller calls
  elementwise (`mdarray.fuse`'s), over operands of the result's shape, C-contiguous, or
  scalars: contiguous runs of the flat elements;
- a reduction (`CpuBackend.reduce`) of one axis of a 2-D chunk: ranges of the other
  axis, so each lane reduces whole rows (or columns) and every value is the sum (or
  max, ...) the whole kernel computes, in the same order, bit for bit (a column keeps
  its row-by-row accumulation, a row its pairwise sum).

Everything else runs whole on its device's thread.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

#: No piece below this many bytes of result (elementwise) or of input (reductions): a
#: hand-over costs tens of microseconds.
MIN_PIECE_BYTES = 4 << 20
_ALIGN = 64  # elements: pieces start on cache-line multiples for every dtype


def _ranges(n: int, parts: int) -> list[slice]:
    """`n` split into at most `parts` contiguous ranges, aligned to `_ALIGN`."""
    step = -(-n // parts)
    step = -(-step // _ALIGN) * _ALIGN
    return [slice(start, min(start + step, n)) for start in range(0, n, step)]


def elementwise(into: Callable, kernel, args: Sequence, lanes: int, dtype, out=None):
    """``(out, pieces)``: the pieces ``(into, (kernel, out_part, *arg_parts))`` that make
    ``kernel(*args)`` in `out` (made here, of `dtype`, where not given) over `lanes`
    lanes; None where it does not split (array operands of several shapes, or not
    C-contiguous, or too little work)."""
    arrays = [a for a in args if type(a) is np.ndarray and a.ndim]
    if lanes < 2 or not arrays:
        return None
    shape = arrays[0].shape
    if any(
        a.shape != shape or not a.flags.c_contiguous
        for a in (*arrays, *([out] if out is not None else []))
    ):
        return None
    parts = min(lanes, math.prod(shape) * np.dtype(dtype).itemsize // MIN_PIECE_BYTES)
    if parts < 2:
        return None
    if out is None:
        out = np.empty(shape, dtype)
    flat = out.reshape(-1)
    flat_args = [a.reshape(-1) if type(a) is np.ndarray and a.ndim else a for a in args]
    pieces = [
        (
            into,
            (
                kernel,
                flat[s],
                *(a[s] if type(a) is np.ndarray and a.ndim else a for a in flat_args),
            ),
        )
        for s in _ranges(flat.size, parts)
    ]
    return out, pieces


def reduction(reduce: Callable, args: tuple, lanes: int):
    """``(out, pieces)``: the pieces ``(write_into, (reduce, out_part, *args_part))`` that make
    ``reduce(*args)`` (``CpuBackend.reduce`` of ``(ufunc, chunk, axes, dtype, result_dtype,
    skip_nan)``, keeping dims) in `out`, made here, over ranges of the axis a 2-D chunk
    keeps; None for other chunks and reductions, or too little work."""
    ufunc, chunk, axes, dtype, result_dtype, skip_nan = args
    if lanes < 2 or type(chunk) is not np.ndarray or chunk.ndim != 2 or len(axes) != 1:
        return None
    axis = 1 - axes[0]
    parts = min(lanes, chunk.nbytes // MIN_PIECE_BYTES, chunk.shape[axis])
    if parts < 2:
        return None
    out = np.empty(tuple(1 if a in axes else n for a, n in enumerate(chunk.shape)), result_dtype)
    step = -(-chunk.shape[axis] // parts)
    pieces = []
    for start in range(0, chunk.shape[axis], step):
        at = (slice(None),) * axis + (slice(start, start + step),)
        part = (ufunc, chunk[at], axes, dtype, result_dtype, skip_nan)
        pieces.append((write_into, (reduce, out[at], *part)))
    return out, pieces


def write_into(fn: Callable, out, *args) -> None:
    """``out[...] = fn(*args)``: a lane of a kernel that makes its own result."""
    out[...] = fn(*args)
