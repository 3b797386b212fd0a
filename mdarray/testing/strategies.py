"""Hypothesis strategies for DistArrays, their layouts, index maps and modes.

They read like ``hypothesis.extra.numpy``: `dist_arrays` draws DistArrays as `arrays`
draws ndarrays, taking a dtype and a shape (values or strategies), and also draws where
the chunks live (`layouts`) and what the copies mean (`modes`). Write a property once and
hypothesis runs it over uneven, strided, overlapping and empty chunks, several chunks per
device and every mode; a failure shrinks toward one chunk on one device in REPLICA mode,
so the smallest example says whether distribution matters at all.

>>> import numpy as np
>>> from hypothesis import given
>>> from mdarray.testing import assert_array_equal, strategies as mst
>>> @given(mst.dist_arrays(np.int64, mst.shapes(max_dims=2)))
... def test_negate(x):
...     assert_array_equal(-x, -np.asarray(x))
>>> test_negate()

`spread` puts arrays drawn by any other strategy, such as those of
``hypothesis.extra.array_api.make_strategies_namespace(mdarray)``, on drawn layouts;
``spread(st.just(value))`` runs a test over many layouts and modes of one value. Every
strategy draws devices from the default backend (``mdarray.devices()``) unless given
``devices=``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .._runtime.config import missing

try:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError as error:
    raise missing("hypothesis", "pip install hypothesis", "mdarray.testing.strategies") from error

from .._array.array import DistArray
from .._backends.backend import devices as backend_devices
from .._core.modes import MAX, MIN, PROD, REPLICA, SUM, Mode, as_mode
from .._layouts.layout import Layout
from .._ops.creation.creation_functions import distributed_array

__all__ = [
    "dist_arrays",
    "dtypes",
    "index_maps",
    "layouts",
    "modes",
    "shapes",
    "small_elements",
    "spread",
]

#: What ``layouts=`` of `dist_arrays` and `spread` takes: a Layout, a strategy of Layouts
#: (for a fixed shape), or a function from the drawn shape to a strategy of Layouts.
LayoutsLike = Layout | st.SearchStrategy[Layout] | Callable[[tuple[int, ...]], Any]
#: What ``modes=`` takes: a Mode or its name, or a strategy of them.
ModesLike = Mode | str | st.SearchStrategy[Any]


def shapes(
    *, min_dims: int = 0, max_dims: int = 3, min_side: int = 0, max_side: int = 7
) -> st.SearchStrategy[tuple[int, ...]]:
    """Array shapes, empty and 0-d ones included by default (shrinking toward ``()``).

    >>> from hypothesis import find
    >>> from mdarray.testing import strategies as mst
    >>> find(mst.shapes(), lambda shape: len(shape) == 2)
    (0, 0)
    """
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


def dtypes(*, bool_: bool = True, complex_: bool = True) -> st.SearchStrategy[np.dtype[Any]]:
    """Numeric dtypes: signed and unsigned ints, float32/64, optionally bool and complex.

    >>> from hypothesis import find
    >>> from mdarray.testing import strategies as mst
    >>> find(mst.dtypes(), lambda dtype: dtype.kind == "f")
    dtype('float32')
    """
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
    """Modes a `dtype` can hold, REPLICA first so that it is what a failure shrinks to.

    MAX and MIN are left out for complex dtypes, every partial mode for non-numeric ones.

    >>> from hypothesis import find
    >>> from mdarray.testing import strategies as mst
    >>> find(mst.modes("complex128"), lambda mode: True)
    mdarray.REPLICA
    """
    if dtype is None:
        return st.sampled_from([REPLICA, SUM, PROD, MAX, MIN])
    kind = np.dtype(dtype).kind
    if kind not in "biufc":
        return st.just(REPLICA)
    if kind == "c":
        return st.sampled_from([REPLICA, SUM, PROD])
    return st.sampled_from([REPLICA, SUM, PROD, MAX, MIN])


def _as_shape(shape: int | Sequence[int], culprit: str) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        result = tuple(int(n) for n in shape)
    except TypeError:
        message = f"{culprit}: shape must be an int or a sequence of ints, got {shape!r}"
        raise TypeError(message) from None
    if any(n < 0 for n in result):
        raise ValueError(f"{culprit}: shape {result} has a negative side")
    return result


def _cuts(n: int, parts: int, uneven: bool) -> st.SearchStrategy[list[int]]:
    """Cut points 0 = c0 <= c1 <= ... <= c_parts = n: drawn (empty parts allowed) when
    `uneven`, otherwise as even as the sizes allow (parts differ by at most one)."""
    if not uneven:
        return st.just([n * i // parts for i in range(parts + 1)])
    return st.lists(st.integers(0, n), min_size=parts - 1, max_size=parts - 1).map(
        lambda inner: [0, *sorted(inner), n]
    )


@st.composite
def index_maps(
    draw: st.DrawFn,
    /,
    shape: int | Sequence[int],
    *,
    devices: Iterable[int] | None = None,
    overlapping: bool = True,
    strided: bool = True,
    uneven: bool = True,
    max_chunks_per_device: int | None = None,
    max_blocks: int = 4,
    max_extra: int = 2,
) -> dict[int, Any]:
    """Index maps ``{device: index or [index, ...]}`` that cover an array of `shape`.

    A grid of at most `max_blocks` blocks per axis, cut unevenly (empty blocks too) unless
    ``uneven=False``; with `strided` a block may become two interleaved strided chunks;
    with `overlapping` up to `max_extra` extra chunks overlap the others. Each chunk goes
    to one of `devices`, at most `max_chunks_per_device` to each. Indices are spelled as
    users write them: ints, negative bounds, None, trailing axes left out.

    Every choice shrinks toward one chunk on the first device, spelled plainly.

    >>> from hypothesis import find
    >>> from mdarray.testing import strategies as mst
    >>> find(mst.index_maps((4, 3), devices=[2, 3]), lambda index_map: True)
    {2: [(slice(0, 4, 1), slice(0, 3, 1))]}
    """
    shape = _as_shape(shape, "index_maps")
    devices = tuple(backend_devices() if devices is None else devices)
    if not devices:
        raise ValueError("index_maps: devices= is empty")
    if max_chunks_per_device is not None and max_chunks_per_device < 1:
        raise ValueError(f"index_maps: max_chunks_per_device={max_chunks_per_device} is below 1")
    # Without a bound, room for every chunk the grid, its strided halves and the extras
    # can make, on any one device.
    per_device = max_chunks_per_device or 2 * max_blocks ** len(shape) + max_extra
    capacity = per_device * len(devices)
    # Grid blocks first, each axis's count bounded by the room left, so that the chunks
    # always fit on the devices.
    parts: list[int] = []
    for n in shape:
        room = capacity // int(np.prod(parts, dtype=np.int64))
        parts.append(draw(st.integers(1, max(1, min(max_blocks, n or 1, room)))))
    cuts = [draw(_cuts(n, p, uneven)) for n, p in zip(shape, parts)]
    chunks: list[tuple[slice, ...]] = []
    blocks = list(_blocks(cuts))
    for k, block in enumerate(blocks):
        wide = [axis for axis, s in enumerate(block) if s.stop - s.start > 1]
        fits = len(chunks) + 2 + (len(blocks) - k - 1) <= capacity
        if strided and wide and fits and draw(st.booleans()):
            s = block[wide[0]]
            for offset in (0, 1):
                part = list(block)
                part[wide[0]] = slice(s.start + offset, s.stop, 2)
                chunks.append(tuple(part))
        else:
            chunks.append(block)
    extras = draw(st.integers(0, min(max_extra, capacity - len(chunks)))) if overlapping else 0
    for _ in range(extras):
        extra = []
        for n in shape:
            start = draw(st.integers(0, n))
            stop = draw(st.integers(start, n))
            step = draw(st.integers(1, 3)) if strided else 1
            extra.append(slice(start, stop, step))
        chunks.append(tuple(extra))
    index_map: dict[int, list[Any]] = {}
    for chunk in chunks:
        free = [d for d in devices if len(index_map.get(d, ())) < per_device]
        index_map.setdefault(draw(st.sampled_from(free)), []).append(_respell(chunk, shape, draw))
    return {
        d: (idx[0] if len(idx) == 1 and draw(st.booleans()) else idx)
        for d, idx in index_map.items()
    }


def _blocks(cuts: list[list[int]], prefix: tuple[slice, ...] = ()):
    if len(prefix) == len(cuts):
        yield prefix
        return
    axis_cuts = cuts[len(prefix)]
    for a, b in itertools.pairwise(axis_cuts):
        yield from _blocks(cuts, (*prefix, slice(a, b, 1)))


def _respell(chunk: tuple, shape: tuple, draw):
    """An equivalent spelling of a chunk's index, as users write them: ints (negative
    too), None for whole ends and unit steps, negative bounds, trailing whole axes left
    out, and a bare int or slice for a one-axis index.

    Each choice is one draw whose every outcome draws no more, so that hypothesis, which
    prefers fewer draws, shrinks to the plain spelling (all zeros)."""
    chunk = tuple(_respell_slice(s, n, draw(st.integers(0, 255))) for s, n in zip(chunk, shape))
    drop = draw(st.integers(0, len(chunk)))
    while drop and chunk and chunk[-1] == slice(None):
        chunk, drop = chunk[:-1], drop - 1
    if len(chunk) == 1 and draw(st.booleans()):
        return chunk[0]
    return chunk


def _respell_slice(s: slice, n: int, flags: int) -> Any:
    if s.step == 1 and s.stop - s.start == 1 and flags & 1:
        return (s.start, s.start - n, np.intp(s.start))[(flags >> 1) % 3]
    start, stop, step = s.start, s.stop, s.step
    if start == 0 and flags & 8:
        start = None
    elif start < n and flags & 16:
        start -= n
    if range(s.start, n, s.step) == range(s.start, s.stop, s.step) and flags & 32:
        stop = None
    elif stop < n and flags & 64:
        stop -= n
    if step == 1 and flags & 128:
        step = None
    return slice(start, stop, step)


@st.composite
def layouts(
    draw: st.DrawFn,
    /,
    shape: int | Sequence[int] | st.SearchStrategy[Any] | None = None,
    **kwargs: Any,
) -> Layout:
    """Layouts over `shape` (a value or a strategy; drawn by `shapes` when not given).

    Keyword arguments (`devices`, `overlapping`, `strided`, `uneven`,
    `max_chunks_per_device`, `max_blocks`, `max_extra`) are those of `index_maps`.

    >>> from hypothesis import find
    >>> from mdarray.testing import strategies as mst
    >>> two = mst.layouts((6, 5), devices=[0, 1], max_chunks_per_device=1)
    >>> layout = find(two, lambda layout: len(layout.chunks) == 2)
    >>> sorted(len(indices) for indices in layout.index_map.values())
    [1, 1]
    """
    resolved = _as_shape(_drawn(draw, shape, shapes()), "layouts")
    return Layout(resolved, draw(index_maps(resolved, **kwargs)))


def _drawn(draw: st.DrawFn, choice: Any, default: st.SearchStrategy[Any]) -> Any:
    """`choice`, or what it draws when it is a strategy, or what `default` draws when it
    is None."""
    if choice is None:
        return draw(default)
    return draw(choice) if isinstance(choice, st.SearchStrategy) else choice


def _draw_layout(draw: st.DrawFn, shape: tuple[int, ...], choice: LayoutsLike | None) -> Layout:
    layout: Any
    if choice is None:
        return draw(layouts(shape))
    if isinstance(choice, Layout):
        layout = choice
    elif isinstance(choice, st.SearchStrategy):
        layout = draw(choice)
    elif callable(choice):
        layout = draw(choice(shape))
    else:
        raise TypeError(
            f"layouts= must be a Layout, a strategy or a function of the shape, got {choice!r}"
        )
    if not isinstance(layout, Layout) or layout.shape != shape:
        raise ValueError(f"layouts= gave {layout!r}, not a Layout of shape {shape}")
    return layout


def _draw_mode(draw: st.DrawFn, dtype: np.dtype, choice: ModesLike | None) -> Mode:
    if choice is None:
        return draw(modes(dtype))
    return as_mode(draw(choice) if isinstance(choice, st.SearchStrategy) else choice)


@st.composite
def dist_arrays(
    draw: st.DrawFn,
    /,
    dtype: DTypeLike | st.SearchStrategy[Any] | None = None,
    shape: int | Sequence[int] | st.SearchStrategy[Any] | None = None,
    *,
    layouts: LayoutsLike | None = None,
    modes: ModesLike | None = None,
    elements: st.SearchStrategy[Any] | Mapping[str, Any] | None = None,
) -> DistArray:
    """DistArrays of `dtype` and `shape` on drawn layouts, in drawn modes.

    `dtype` and `shape` are values or strategies, as for ``hypothesis.extra.numpy.arrays``;
    when not given they are drawn by `dtypes` and `shapes`. The value (``np.asarray(x)``)
    is drawn by ``arrays(dtype, shape, elements=elements)``; `elements` defaults to small
    integral values (-20 to 20, 0 to 20 unsigned), so that sums and products stay exact
    in every dtype and mode; pass a strategy (or ``{}`` for NumPy's whole range) to change
    that. `layouts` is a Layout, a strategy of Layouts, or a function from the shape to one
    (``lambda shape: mst.layouts(shape, overlapping=False)``); by default `layouts`
    draws it. `modes` is a Mode or a strategy of Modes; by default ``modes(dtype)``.

    >>> import numpy as np
    >>> from hypothesis import find
    >>> from mdarray.testing import strategies as mst
    >>> import mdarray
    >>> x = find(mst.dist_arrays(np.float64, (4, 3)), lambda x: x.mode == mdarray.SUM)
    >>> x.shape, x.dtype, x.mode, len(x.layout.chunks)
    ((4, 3), dtype('float64'), mdarray.SUM, 1)
    """
    resolved_dtype = np.dtype(_drawn(draw, dtype, dtypes()))
    resolved_shape = _as_shape(_drawn(draw, shape, shapes()), "dist_arrays")
    if elements is None:
        elements = small_elements(resolved_dtype)
    value = draw(hnp.arrays(resolved_dtype, resolved_shape, elements=elements))
    layout = _draw_layout(draw, resolved_shape, layouts)
    return distributed_array(value, layout, _draw_mode(draw, resolved_dtype, modes))


@st.composite
def spread(
    draw: st.DrawFn,
    /,
    arrays: st.SearchStrategy[Any],
    *,
    layouts: LayoutsLike | None = None,
    modes: ModesLike | None = None,
) -> DistArray:
    """The arrays `arrays` draws (NumPy, CuPy or DistArrays), each on a drawn layout in a
    drawn mode; `layouts` and `modes` as for `dist_arrays`.

    With ``xps = hypothesis.extra.array_api.make_strategies_namespace(mdarray)``,
    ``spread(xps.arrays(dtype, shape))`` draws array API arrays and spreads them; with
    ``spread(st.just(value))`` a test runs over many layouts and modes of one value. A
    partial mode splits each element's value over its copies exactly (the others hold the
    mode's identity), so ``np.asarray(x)`` is the drawn value in every mode.

    >>> import numpy as np
    >>> from hypothesis import find, strategies as st
    >>> from mdarray.testing import strategies as mst
    >>> value = np.arange(6.0).reshape(2, 3)
    >>> x = find(mst.spread(st.just(value)), lambda x: len(x.layout.chunks) > 1)
    >>> len(x.layout.chunks), bool((np.asarray(x) == value).all())
    (2, True)
    """
    value = draw(arrays)
    shape = tuple(int(n) for n in value.shape)
    dtype = np.dtype(value.dtype)
    layout = _draw_layout(draw, shape, layouts)
    return distributed_array(value, layout, _draw_mode(draw, dtype, modes))


def small_elements(dtype: DTypeLike) -> st.SearchStrategy[Any]:
    """The default elements of `dist_arrays`: small integral values of `dtype`'s kind, so
    that sums and products of a few of them are exact.

    >>> from hypothesis import find
    >>> from mdarray.testing import strategies as mst
    >>> find(mst.small_elements("float32"), lambda v: v < 0)
    -1.0
    """
    kind = np.dtype(dtype).kind
    if kind == "b":
        return st.booleans()
    if kind == "u":
        return st.integers(0, 20)
    if kind == "i":
        return st.integers(-20, 20)
    if kind == "f":
        return st.integers(-20, 20).map(float)
    if kind == "c":
        return st.builds(complex, st.integers(-5, 5), st.integers(-5, 5))
    raise TypeError(f"small_elements: no default elements for dtype {np.dtype(dtype)}")
