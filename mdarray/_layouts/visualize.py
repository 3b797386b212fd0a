"""Pictures of layouts: a one-line summary and a text picture (`_svg` draws the HTML one).

The pictures show the first two axes as a grid of cells, each cell a block of positions
labelled with the devices holding some element in it; further axes are folded into the
cells. Counts come from the layout's cover (per class of positions, not per element), so
a picture of a huge array costs no more than one of a small array.
"""

from __future__ import annotations

import string

import numpy as np

from mdarray._core import regions as _regions

#: What the copies of an element held by several chunks mean, per mode.
MODE_MEANINGS = {
    "replica": "each copy holds the value (replicas)",
    "sum": "the value is the sum of the copies",
    "prod": "the value is the product of the copies",
    "max": "the value is the largest copy",
    "min": "the value is the smallest copy",
}


def summary(x) -> str:
    """One line: chunks, devices and overlaps, e.g. ``4 chunks on devices [0, 1]``."""
    layout = x.layout
    n = len(layout.chunks)
    overlap = ", overlapping" if layout.has_overlaps else ""
    return f"{n} chunk{'s' if n != 1 else ''} on devices {list(layout.devices)}{overlap}"


def picture(x, rows: int = 16, cols: int = 32) -> str:
    """A text picture of which device holds which part of `x` (see `DistArray.visualize`)."""
    layout = x.layout
    lines = [f"DistArray shape={x.shape} dtype={x.dtype} mode={x.mode}: {summary(x)}"]
    if x.size:
        grid, edges = _cells(layout, rows, cols)
        lines += _text_grid(grid, edges, x.ndim)
        lines += axis_notes(layout)
    else:
        lines.append(f"empty: no element to draw (shape {x.shape})")
    lines += _device_lines(x)
    lines += _overlap_lines(x)
    return "\n".join(lines)


# Cells --------------------------------------------------------------------------------


def _cells(layout, rows: int, cols: int):
    """Devices holding some element of each cell of the first two axes, and cell edges.

    An axis longer than its cell count is cut into equal blocks; a 1-D array is one row.
    """
    lead = (range(1),) * (2 - min(layout.ndim, 2))  # a 1-D array is one row, 0-d one cell
    shape = _regions.box_shape(lead) + layout.shape[:2]
    edges = [block_edges(shape[0], rows), block_edges(shape[1], cols)]
    drawn = [lead + box[:2] for box in layout.boxes if all(map(len, box))]
    devices = np.array(
        [d for d, box in zip(layout.chunk_devices, layout.boxes) if all(map(len, box))]
    )
    across = [hits([box[axis] for box in drawn], edges[axis]).astype(np.int64) for axis in (0, 1)]
    held = {d: (across[0][devices == d].T @ across[1][devices == d]) > 0 for d in layout.devices}
    grid = [
        [sorted(d for d in held if held[d][i, j]) for j in range(len(edges[1]) - 1)]
        for i in range(len(edges[0]) - 1)
    ]
    return grid, edges


def hits(ranges, edges) -> np.ndarray:
    """``[k, i]``: True where ``ranges[k]`` holds a position in ``[edges[i], edges[i + 1])``.

    Arithmetic on the ranges' ends and steps, so long or strided ranges cost nothing extra.
    """
    starts = np.array([r.start for r in ranges], dtype=np.int64).reshape(-1, 1)
    steps = np.array([r.step for r in ranges], dtype=np.int64).reshape(-1, 1)
    lasts = np.array([r[-1] if len(r) else -1 for r in ranges], dtype=np.int64).reshape(-1, 1)
    lo = np.asarray(edges[:-1], dtype=np.int64).reshape(1, -1)
    hi = np.asarray(edges[1:], dtype=np.int64).reshape(1, -1)
    first = starts + -(-np.maximum(lo - starts, 0) // steps) * steps
    return (first < hi) & (first <= lasts)


def block_edges(n: int, parts: int) -> list[int]:
    """Edges of at most `parts` near-equal blocks of ``range(n)``."""
    parts = max(1, min(parts, n))
    return sorted({round(k * n / parts) for k in range(parts + 1)})


def _text_grid(grid, edges, ndim: int) -> list[str]:
    """Rows of one symbol per cell (a device id, or a letter from the legend below)."""
    symbols: dict = {}
    for row in grid:
        for devices in row:
            key = tuple(devices)
            if key not in symbols:
                single = len(key) == 1 and key[0] < 10
                symbols[key] = str(key[0]) if single else _letter(symbols)
    label_width = len(str(edges[0][-2])) if ndim >= 2 else 0
    lines = [" " * (label_width + 1) + _ruler(edges[1])] if ndim >= 1 else []
    for start, row in zip(edges[0], grid):
        label = str(start).rjust(label_width) if ndim >= 2 else ""
        lines.append(f"{label} " + " ".join(symbols[tuple(d)] for d in row))
    what = {
        0: "one cell: the 0-d array",
        1: "cells: blocks of axis 0",
    }.get(ndim, "cells: blocks of axis 0 (rows) x axis 1 (columns)")
    lines.append(f"{what}; a cell's symbol says which devices hold it")
    legend = [f"{s} = devices {list(k)}" for k, s in symbols.items() if len(k) != 1 or k[0] >= 10]
    if legend:
        lines.append("  " + "; ".join(legend))
    return lines


def _ruler(edges: list[int]) -> str:
    """Start positions of every fourth column of cells (two characters each)."""
    ruler = ""
    for j in range(0, len(edges) - 1, 4):
        ruler = ruler.ljust(2 * j) + str(edges[j]) + " "
    return ruler.rstrip()


def _letter(symbols: dict) -> str:
    used = len([s for s in symbols.values() if not s.isdigit()])
    letters = string.ascii_letters
    return letters[used] if used < len(letters) else "?"


def axis_notes(layout) -> list[str]:
    """How the chunks split each axis past the first two (which the pictures fold)."""
    if layout.ndim <= 2:
        return []
    axes = "axis 2 is" if layout.ndim == 3 else f"axes 2..{layout.ndim - 1} are"
    lines = [f"{axes} not drawn: a cell lists the devices holding any element along them"]
    boxes = [box for box in layout.boxes if all(map(len, box))]
    for axis in range(2, layout.ndim):
        n = layout.shape[axis]
        spans = [box[axis] for box in boxes]
        cuts = sorted(({r.start for r in spans} | {r[-1] + 1 for r in spans}) - {0, n})
        steps = sorted({r.step for r in spans if len(r) > 1 and r.step > 1})
        if cuts:
            shown = ", ".join(map(str, cuts[:8])) + (
                f", ... ({len(cuts)} in all)" if len(cuts) > 8 else ""
            )
            how = f"chunk edges at {shown}"
        else:
            how = "every chunk spans all of it"
        if steps:
            how += f"; strided chunks (steps {', '.join(map(str, steps[:8]))})"
        lines.append(f"  axis {axis} (length {n}): {how}")
    return lines


# Text lines ---------------------------------------------------------------------------


def device_stats(layout, itemsize: int) -> dict[int, tuple[int, int]]:
    """``{device: (chunks, bytes)}`` in the layout's device order."""
    stats = dict.fromkeys(layout.devices, (0, 0))
    for device, shape in zip(layout.chunk_devices, layout.chunk_shapes):
        chunks, nbytes = stats[device]
        stats[device] = (chunks + 1, nbytes + int(np.prod(shape, dtype=np.int64)) * itemsize)
    return stats


def _device_lines(x) -> list[str]:
    return [
        f"device {d}: {n} chunk{'s' if n != 1 else ''}, {format_bytes(nbytes)}"
        for d, (n, nbytes) in device_stats(x.layout, x.itemsize).items()
    ]


def _overlap_lines(x) -> list[str]:
    """How many elements have several copies, and what the copies mean in x's mode."""
    shared, most = copies(x.layout)
    if not shared:
        return ["no overlaps: each element is held by one chunk"]
    meaning = MODE_MEANINGS[x.mode.name]
    return [
        (
            f"overlaps: {shared} of {x.size} elements held by several chunks "
            f"(up to {most} copies); mode {x.mode}: {meaning}"
        )
    ]


def copies(layout) -> tuple[int, int]:
    """(elements held by two or more chunks, most copies of one element)."""
    cover = layout.cover
    count = cover.counts()
    sizes = np.ones(count.shape, dtype=np.int64)
    for axis, classes in enumerate(cover.classes):
        shape = [1] * count.ndim
        shape[axis] = len(classes)
        sizes = sizes * np.array([len(c) for c in classes], dtype=np.int64).reshape(shape)
    return int(sizes[count > 1].sum()), int(count.max(initial=0))


def format_bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    scaled = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        scaled /= 1024
        if scaled < 1024 or unit == "TiB":
            return f"{scaled:.1f} {unit}"
    raise AssertionError("unreachable")


def printed_part(x, threshold: int | None = None, edgeitems: int | None = None) -> tuple:
    """``(values, summarize)``: what NumPy's printer shows of `x`, gathered. All of it when
    it is small; else only the edges of every long axis (``edgeitems`` each side), which
    NumPy prints with the same "..." when told to summarize (threshold 0), so the repr of
    a 1 GiB array moves kilobytes. `threshold` and `edgeitems` default to NumPy's print
    options."""
    options = np.get_printoptions()
    threshold = options["threshold"] if threshold is None else threshold
    if x.size <= threshold:
        return x.get(), False
    edge = options["edgeitems"] if edgeitems is None else edgeitems
    sides = [
        # One element more than shown keeps the axis longer than 2 * edgeitems, so NumPy
        # prints "..." in its place.
        [slice(0, edge + 1), slice(n - edge, n)] if n > 2 * edge else [slice(None)]
        for n in x.shape
    ]

    def gather(axis: int, key: tuple) -> np.ndarray:
        if axis == x.ndim:
            return x[key].get()
        parts = [gather(axis + 1, (*key, side)) for side in sides[axis]]
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=axis)

    return gather(0, ()), True
