"""Hypothesis strategies for layouts, index maps, modes and DistArrays.

Use them in your own property tests::

    from hypothesis import given
    from mdarray.testing import strategies as mst

    @given(mst.dist_arrays())
    def test_double(pair):
        x, expected = pair
        assert (x * 2).get().tolist() == (expected * 2).tolist()

Every strategy draws devices from the default backend (``mdarray.devices()``) unless
given ``devices=``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.typing import DTypeLike

from .._array import DistArray
from .._backend import devices as backend_devices
from .._creation_functions import distributed_array
from .._layout import Layout
from .._modes import MAX, MIN, PROD, REPLICA, SUM, Mode

__all__ = [
    "dist_arrays",
    "dtypes",
    "index_maps",
    "layouts",
    "modes",
    "shapes",
]


def shapes(
    *, min_dims: int = 0, max_dims: int = 3, min_side: int = 0, max_side: int = 7
) -> st.SearchStrategy[tuple[int, ...]]:
    """Array shapes, empty and 0-d ones included by default."""
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


def dtypes(*, bool_: bool = True, complex_: bool = True) -> st.SearchStrategy[np.dtype[Any]]:
    """Numeric dtypes (bool, signed and unsigned ints, floats, optionally complex)."""
    options: list[st.SearchStrategy[np.dtype[Any]]] = [
        hnp.integer_dtypes(endianness="="),
        hnp.unsigned_integer_dtypes(endianness="="),
        hnp.floating_dtypes(endianness="=", sizes=(32, 64)),
    ]
    if bool_:
        options.append(hnp.boolean_dtypes())
    if complex_:
        options.append(hnp.complex_number_dtypes(endianness="="))
    return st.one_of(*options)


def modes(dtype: DTypeLike | None = None) -> st.SearchStrategy[Mode]:
    """Modes the dtype can hold (MAX and MIN not for complex)."""
    if dtype is not None and np.dtype(dtype).kind == "c":
        return st.sampled_from([REPLICA, SUM, PROD])
    return st.sampled_from([REPLICA, SUM, PROD, MAX, MIN])


def _cuts(n: int, parts: int):
    """Sorted cut points 0 = c0 <= c1 <= ... <= c_parts = n (empty parts allowed)."""
    return st.lists(st.integers(0, n), min_size=parts - 1, max_size=parts - 1).map(
        lambda inner: [0, *sorted(inner), n]
    )


@st.composite
def index_maps(
    draw: st.DrawFn,
    /,
    shape: Sequence[int],
    *,
    devices: Iterable[int] | None = None,
    max_blocks: int = 4,
    overlapping: bool = True,
    strided: bool = True,
    max_extra: int = 2,
) -> dict[int, Any]:
    """Index maps ``{device: [index, ...]}`` that cover an array of `shape`.

    A grid of blocks (uneven, possibly empty) assigned to random devices, where a block
    may be split into interleaved strided chunks, plus optional extra chunks that overlap
    the others. Indices mix slices and ints, and may leave trailing axes out.
    """
    shape = tuple(shape)
    devices = tuple(backend_devices() if devices is None else devices)
    if not shape:
        copies = 2 if overlapping else 1
        chosen = draw(st.lists(st.sampled_from(devices), min_size=1, max_size=copies, unique=True))
        return {d: [()] for d in chosen}
    parts = [draw(st.integers(1, max(1, min(max_blocks, n or 1)))) for n in shape]
    cuts = [draw(_cuts(n, p)) for n, p in zip(shape, parts)]
    chunks = []

    def blocks(axis, prefix):
        if axis == len(shape):
            yield tuple(prefix)
            return
        for a, b in zip(cuts[axis], cuts[axis][1:]):
            yield from blocks(axis + 1, [*prefix, slice(a, b, 1)])

    for block in blocks(0, []):
        if strided and draw(st.booleans()) and any(s.stop - s.start > 1 for s in block):
            axis = next(a for a, s in enumerate(block) if s.stop - s.start > 1)
            s = block[axis]
            for offset in (0, 1):
                part = list(block)
                part[axis] = slice(s.start + offset, s.stop, 2)
                chunks.append(tuple(part))
        else:
            chunks.append(block)
    if overlapping:
        for _ in range(draw(st.integers(0, max_extra))):
            extra = []
            for n in shape:
                start = draw(st.integers(0, n))
                stop = draw(st.integers(start, n))
                step = draw(st.integers(1, 3)) if strided else 1
                extra.append(slice(start, stop, step))
            chunks.append(tuple(extra))
    index_map: dict = {}
    for chunk in chunks:
        index_map.setdefault(draw(st.sampled_from(devices)), []).append(
            _respell(chunk, shape, draw)
        )
    return {
        d: (idx[0] if len(idx) == 1 and draw(st.booleans()) else idx)
        for d, idx in index_map.items()
    }


def _respell(chunk: tuple, shape: tuple, draw):
    """An equivalent spelling of a chunk's index, as users write them: ints (negative
    too), None for whole ends and unit steps, negative bounds, trailing whole axes left
    out, and a bare int or slice for a one-axis index."""
    chunk = tuple(_respell_slice(s, n, draw) for s, n in zip(chunk, shape))
    while chunk and chunk[-1] == slice(None) and draw(st.booleans()):
        chunk = chunk[:-1]
    if len(chunk) == 1 and draw(st.booleans()):
        return chunk[0]
    return chunk


def _respell_slice(s: slice, n: int, draw):
    if s.step == 1 and s.stop - s.start == 1 and draw(st.booleans()):
        return draw(st.sampled_from([s.start, s.start - n, np.intp(s.start)]))
    start, stop, step = s.start, s.stop, s.step
    if start == 0 and draw(st.booleans()):
        start = None
    elif start < n and draw(st.booleans()):
        start -= n
    if range(s.start, n, s.step) == range(s.start, s.stop, s.step) and draw(st.booleans()):
        stop = None
    elif stop < n and draw(st.booleans()):
        stop -= n
    if step == 1 and draw(st.booleans()):
        step = None
    return slice(start, stop, step)


@st.composite
def layouts(draw: st.DrawFn, /, shape: tuple[int, ...] | None = None, **kwargs: Any) -> Layout:
    """Layouts over `shape` (drawn when not given); keyword arguments as `index_maps`."""
    if shape is None:
        shape = draw(shapes())
    return Layout(shape, draw(index_maps(shape, **kwargs)))


@st.composite
def dist_arrays(
    draw: st.DrawFn,
    /,
    shape: tuple[int, ...] | None = None,
    dtype: DTypeLike | None = None,
    mode: Mode | str | None = None,
    *,
    elements: st.SearchStrategy[Any] | None = None,
    **kwargs: Any,
) -> tuple[DistArray, np.ndarray]:
    """Pairs ``(x, expected)``: a DistArray and the NumPy array equal to its value.

    Shape, dtype, layout (keyword arguments as `index_maps`) and mode are drawn unless
    given. Elements default to small finite values so arithmetic stays exact.
    """
    if shape is None:
        shape = draw(shapes())
    if dtype is None:
        dtype = draw(dtypes())
    dtype = np.dtype(dtype)
    if elements is None:
        elements = _small_elements(dtype)
    expected = draw(hnp.arrays(dtype, shape, elements=elements))
    layout = draw(layouts(shape, **kwargs))
    if mode is None:
        mode = draw(modes(dtype))
    return distributed_array(expected, layout, mode), expected


def _small_elements(dtype: np.dtype) -> st.SearchStrategy[Any]:
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind == "u":
        return st.integers(0, 20)
    if dtype.kind == "i":
        return st.integers(-20, 20)
    if dtype.kind == "f":
        return st.integers(-20, 20).map(float)
    return st.builds(complex, st.integers(-5, 5), st.integers(-5, 5))
