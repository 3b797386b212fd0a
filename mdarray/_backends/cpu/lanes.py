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


def elementwise(into: Callable, ufunc, out, args: Sequence, lanes: int) -> list | None:
    """The pieces ``(into, (ufunc, out_part, *arg_parts))`` of ``ufunc(*args, out=out)``
    over `lanes` lanes, or None where it does not split (an operand not of `out`'s shape
    or not C-contiguous, or too little work)."""
    if lanes < 2 or not out.flags.c_contiguous:
        return None
    parts = min(lanes, out.nbytes // MIN_PIECE_BYTES)
    if parts < 2:
        return None
    flat_args = []
    for a in args:
        if type(a) is np.ndarray and a.ndim:
            if a.shape != out.shape or not a.flags.c_contiguous:
                return None
            flat_args.append(a.reshape(-1))
        else:
            flat_args.append(a)  # a scalar or a 0-d array: every piece reads it whole
    flat = out.reshape(-1)
    return [
        (
            into,
            (ufunc, flat[s], *(a[s] if type(a) is np.ndarray and a.ndim else a for a in flat_args)),
        )
        for s in _ranges(flat.size, parts)
    ]


def reduction(reduce: Callable, out, args: tuple, lanes: int) -> list | None:
    """The pieces ``(write, (reduce, out_part, args_part))`` of `reduce` (``CpuBackend.reduce``
    of ``(ufunc, chunk, axes, dtype, result_dtype, skip_nan)``, keeping dims) writing into
    `out` (its result's shape), over ranges of the axis a 2-D chunk keeps; None for other
    chunks and reductions, or too little work."""
    ufunc, chunk, axes, *rest = args
    if lanes < 2 or type(chunk) is not np.ndarray or chunk.ndim != 2 or len(axes) != 1:
        return None
    axis = 1 - axes[0]
    parts = min(lanes, chunk.nbytes // MIN_PIECE_BYTES, chunk.shape[axis])
    if parts < 2:
        return None
    step = -(-chunk.shape[axis] // parts)
    pieces = []
    for start in range(0, chunk.shape[axis], step):
        at = (slice(None),) * axis + (slice(start, start + step),)
        pieces.append((_write, (reduce, out[at], (ufunc, chunk[at], axes, *rest))))
    return pieces


def _write(fn: Callable, out, args: tuple) -> None:
    out[...] = fn(*args)


def write_into(fn: Callable, out, *args) -> None:
    """``out[...] = fn(*args)``: a lane of a kernel that makes its own result."""
    out[...] = fn(*args)


def result_of_reduction(args: tuple) -> np.ndarray:
    """An empty array for the kept-dims result of ``CpuBackend.reduce(*args)``."""
    _, chunk, axes, _, result_dtype, _ = args
    shape = tuple(1 if a in axes else n for a, n in enumerate(chunk.shape))
    return np.empty(shape, result_dtype)
