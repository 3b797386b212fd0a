"""Per-chunk kernels written once over an array module (NumPy or CuPy).

The backends build their kernel capabilities (`Backend.assign`, `Backend.reduce`,
`Backend.accumulate`) from these; nothing here knows which module it is given.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from mdarray._core import regions as _regions


def exact_array(xp, a):
    """`a` (an array or a scalar) as an array of `xp`, bit for bit: CuPy makes a 0-d array
    of a NumPy one or of a scalar with a fill that writes ``-0.0`` as ``+0.0``, and a
    1-element array with a copy of the bytes."""
    if xp is np or not isinstance(a, (bool, int, float, complex, np.generic, np.ndarray)):
        return xp.asarray(a)
    host = np.asarray(a)
    return xp.asarray(host.reshape(host.shape or (1,))).reshape(host.shape)


def assign(xp, out, index: tuple, value) -> None:
    """``out[index] = value`` where `index` has one slice or int array per axis (int
    arrays select positions per axis, as a box: ``out[ix_(...)]``), or is one boolean
    mask of out's leading axes (``out[mask] = value``)."""
    if len(index) == 1 and getattr(index[0], "dtype", None) == np.bool_:
        out[index[0]] = exact_array(xp, value)  # keeps -0.0 on CuPy
    elif _regions.is_basic(index):
        key = (*index, ...)
        out[key] = value
    else:
        positions = [xp.asarray(_regions.positions(i, n)) for i, n in zip(index, out.shape)]
        # CuPy scatters a scalar through a 0-d array of it, which loses -0.0's sign.
        out[xp.ix_(*positions)] = value if np.ndim(value) else exact_array(xp, value)


def combine_into(xp, out, index: tuple, piece, ufunc) -> None:
    """``out[index] = ufunc(out[index], piece)`` in place, for slices or int arrays."""
    if _regions.is_basic(index):
        key = (*index, ...)
        target = out[key]
        ufunc(target, piece, out=target)
    else:
        assign(xp, out, index, ufunc(_regions.apply_index(out, index, xp), piece))


def fold(kernel):
    """A function of any number of operands that folds them left with `kernel` (a binary
    ufunc): ``kernel(kernel(a, b), c)``, the order in which partial copies combine."""

    def folded(*operands):
        acc = operands[0]
        for operand in operands[1:]:
            acc = kernel(acc, operand)
        return acc

    return folded


def combine_copies(xp, ufunc, pieces, copies: int, dtype):
    """`ufunc` folded left over `pieces` (arrays of one shape), as a new C-contiguous
    array of `dtype` holding `copies` copies of the result stacked along a new first axis.

    One allocation, one call per piece after the first (``out=`` the first copy; one copy
    call for a single piece), and one more call copying the result into the other copies.
    """
    out = xp.empty((copies, *pieces[0].shape), dtype)
    first = out[0, ...]
    if len(pieces) == 1:
        first[...] = pieces[0]
    else:
        ufunc(pieces[0], pieces[1], out=first)
        for piece in pieces[2:]:
            ufunc(first, piece, out=first)
    if copies > 1:
        out[1:] = first
    return out


def fold_reduce(xp, kernel, chunk, axes: tuple, dtype, identity=None, acc_dtype=None):
    """`kernel` (a binary ufunc of `xp`) reduced over `axes` keeping dims, for modules
    whose ufunc lacks ``reduce`` for it: its own reduce where it has one, else a left fold.

    Like NumPy, a ufunc with an identity starts from it (``hypot.reduce([-1.0])`` is 1),
    also where no axis is folded; the running value and the identity have `acc_dtype`,
    NumPy's loop output (float16 for logaddexp of bools: its identity -inf is no bool)."""
    try:
        out = kernel.reduce(chunk, axis=axes, dtype=dtype, keepdims=True)
    except (AttributeError, NotImplementedError, TypeError):
        pass
    else:
        # A reduce that starts from the first element: joining the identity afterwards
        # gives NumPy's value (e o (x0 o x1 ...) == (e o x0) o x1 ... for these ufuncs).
        return out if identity is None else kernel(xp.asarray(identity, dtype=out.dtype), out)
    out = chunk if dtype is None else chunk.astype(dtype)
    acc_dtype = out.dtype if acc_dtype is None else acc_dtype
    if not axes:
        return out if identity is None else kernel(xp.asarray(identity, dtype=acc_dtype), out)
    for axis in axes:
        acc = out[(slice(None),) * axis + (slice(0, 1),)].astype(acc_dtype, copy=False)
        if identity is not None:
            acc = kernel(xp.asarray(identity, dtype=acc_dtype), acc)
        for i in range(1, out.shape[axis]):
            acc = kernel(acc, out[(slice(None),) * axis + (slice(i, i + 1),)])
        out = acc
    return out


def fold_accumulate(kernel, chunk, axis: int, dtype):
    """`kernel` accumulated along `axis`: its own accumulate, else a loop over the axis."""
    try:
        return kernel.accumulate(chunk, axis=axis, dtype=dtype)
    except (AttributeError, NotImplementedError, TypeError):
        pass
    out = chunk.astype(dtype or chunk.dtype, copy=True)
    for i in range(1, out.shape[axis]):
        before = (slice(None),) * axis + (slice(i - 1, i),)
        here = (slice(None),) * axis + (slice(i, i + 1),)
        out[here] = kernel(out[before], out[here])
    return out


class UfuncsAs(NDArrayOperatorsMixin):
    """An array (or a value ``cupy.fuse`` traces) inside a fused function whose NumPy
    ufunc calls, operators included, run ``kernel_for(ufunc)`` on it: CuPy's kernels for
    ``np.sin(x)`` and ``x + 1`` where CuPy's own objects only take CuPy's names."""

    __slots__ = ("kernel_for", "value")

    def __init__(self, value, kernel_for) -> None:
        self.value = value
        self.kernel_for = kernel_for

    # What a fused function may ask of its operands besides ufuncs (CuPy's traced values
    # have them too).
    shape = property(lambda self: self.value.shape)
    ndim = property(lambda self: self.value.ndim)
    dtype = property(lambda self: self.value.dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs:
            return NotImplemented
        got = self.kernel_for(ufunc)(*(_unwrapped(x) for x in inputs))
        if isinstance(got, tuple):
            return tuple(UfuncsAs(g, self.kernel_for) for g in got)
        return UfuncsAs(got, self.kernel_for)


def _unwrapped(x):
    return x.value if isinstance(x, UfuncsAs) else x


def with_kernels(fn, kernel_for):
    """`fn` with its array operands (anything with a dtype that is not a NumPy scalar)
    seen as `UfuncsAs`, so its ufuncs run ``kernel_for(ufunc)``; its result unwrapped."""

    @functools.wraps(fn)
    def run(*args):
        got = fn(*(UfuncsAs(a, kernel_for) if _is_array(a) else a for a in args))
        if isinstance(got, tuple):
            return tuple(_unwrapped(g) for g in got)
        return _unwrapped(got)

    return run


def _is_array(x) -> bool:
    return hasattr(x, "dtype") and not isinstance(x, np.generic)


def span(buffers, pointer, view, starts=None, shape=None):
    """One array viewing `buffers` as the block they tile: one after another along axis 0
    (a device's chunks), or each at its `starts` in a block of `shape` where given (the
    chunks of an array). The buffer itself where there is one, else ``view(buffers,
    first, shape, strides)`` of the block where they lie in place (`view`: the backend's
    check that they lie in one allocation, and its strided view; None where they do not);
    None where they do not. `lined_up` finds the row case in few Python calls (every
    product asks it), `laid_out` any tiling."""
    if len(buffers) == 1 and (shape is None or buffers[0].shape == shape):
        return buffers[0]
    found = (
        lined_up(buffers, pointer) if starts is None else laid_out(buffers, starts, shape, pointer)
    )
    return None if found is None else view(buffers, *found)


def laid_out(buffers, starts, shape, pointer):
    """How `buffers`, which tile a block of `shape` from their `starts`, lie as one block
    in memory: ``(first, shape, strides)`` of the strided view whose every buffer lies at
    its place (one stride per axis), `first` the buffer at its origin; else None. Buffers
    of no elements are passed over; `pointer` gives a buffer's address."""
    live = [(b, s) for b, s in zip(buffers, starts) if b.size]
    first = next((b for b, s in live if not any(s)), None)
    if first is None:
        return None
    origin = pointer(first)
    strides = []
    for axis in range(len(shape)):
        stride = next((b.strides[axis] for b, _ in live if b.shape[axis] > 1), None)
        if stride is None:  # no buffer holds two places of the axis: the neighbour's distance
            step = tuple(int(a == axis) for a in range(len(shape)))
            after = next((b for b, s in live if tuple(s) == step), None)
            stride = first.strides[axis] if after is None else pointer(after) - origin
        strides.append(stride)
    for b, s in live:
        if pointer(b) != origin + sum(i * step for i, step in zip(s, strides)):
            return None
        if any(n > 1 and b.strides[a] != strides[a] for a, n in enumerate(b.shape)):
            return None
    return first, tuple(shape), tuple(strides)


def lined_up(buffers, pointer):
    """How `buffers` (one device's chunks, one after another along axis 0) lie as one
    block in memory: ``(first, shape, strides)`` of the strided view that spans them, where
    each starts where the one before ends and all share one stride pattern; else None.
    `pointer` gives a buffer's address. Chunks of no rows are passed over."""
    live = [b for b in buffers if b.shape[0]]
    if not live or not live[0].size:
        return None
    first = live[0]
    rest = first.strides[1:]
    step = next((b.strides[0] for b in live if b.shape[0] > 1), None)
    if step is None:  # every chunk one row: the stride is the distance between them
        step = pointer(live[1]) - pointer(first) if len(live) > 1 else first.strides[0]
    expected = pointer(first)
    rows = 0
    for b in live:
        if b.strides[1:] != rest or (b.shape[0] > 1 and b.strides[0] != step):
            return None
        if pointer(b) != expected:
            return None
        expected += b.shape[0] * step
        rows += b.shape[0]
    return first, (rows, *first.shape[1:]), (step, *rest)
