"""Pictures of layouts: a one-line summary, a text picture and an HTML picture.

The pictures show the first two axes as a grid of cells, each cell a block of positions
labelled with the devices holding some element in it; further axes are folded into the
cells. Counts come from the layout's cover (per class of positions, not per element), so
a picture of a huge array costs no more than one of a small array.
"""

from __future__ import annotations

import html as _html
import itertools
import string

import numpy as np

from . import _regions

#: Colors of devices 0, 1, ... in the HTML picture (cycled).
COLORS = (
    "#8dd3c7",
    "#ffffb3",
    "#bebada",
    "#fb8072",
    "#80b1d3",
    "#fdb462",
    "#b3de69",
    "#fccde5",
)


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
    lines += _device_lines(x)
    lines += _overlap_lines(x)
    return "\n".join(lines)


def html(x, rows: int = 16, cols: int = 32) -> str:
    """An HTML table of the first two axes, cells colored by the device holding them."""
    layout = x.layout
    title = _html.escape(f"DistArray shape={x.shape} dtype={x.dtype} mode={x.mode}: {summary(x)}")
    parts = [f"<div><p><b>{title}</b></p>"]
    if x.size:
        grid, _ = _cells(layout, rows, cols)
        parts.append('<table style="border-collapse:collapse;font-family:monospace">')
        for row in grid:
            parts.append("<tr>")
            for devices in row:
                color = COLORS[devices[0] % len(COLORS)] if devices else "#ffffff"
                border = "2px dashed #333" if len(devices) > 1 else "1px solid #999"
                label = ",".join(map(str, devices))
                parts.append(
                    f'<td style="background:{color};border:{border};padding:2px 4px" '
                    f'title="devices {label}">{label}</td>'
                )
            parts.append("</tr>")
        parts.append("</table>")
        if x.ndim > 2:
            parts.append(f"<p>{_html.escape(_fold_note(x.ndim))}</p>")
    items = "".join(f"<li>{_html.escape(line)}</li>" for line in _device_lines(x))
    parts.append(f"<ul>{items}</ul>")
    parts += [f"<p>{_html.escape(line)}</p>" for line in _overlap_lines(x)]
    parts.append("</div>")
    return "".join(parts)


# Cells --------------------------------------------------------------------------------


def _cells(layout, rows: int, cols: int):
    """Devices holding some element of each cell of the first two axes, and cell edges.

    An axis longer than its cell count is cut into equal blocks; a 1-D array is one row.
    """
    lead = (range(1),) * (2 - min(layout.ndim, 2))  # a 1-D array is one row, 0-d one cell
    shape = _regions.box_shape(lead) + layout.shape[:2]
    edges = [_edges(shape[0], rows), _edges(shape[1], cols)]
    grid: list[list[list[int]]] = [
        [[] for _ in range(len(edges[1]) - 1)] for _ in range(len(edges[0]) - 1)
    ]
    for device, box in zip(layout.chunk_devices, layout.boxes):
        if not _regions.box_size(box):
            continue
        drawn = lead + box[:2]
        hit = [
            [bool(len(_regions.intersect_range(r, range(a, b)))) for a, b in itertools.pairwise(e)]
            for r, e in zip(drawn[:2], edges)
        ]
        for i, row_hit in enumerate(hit[0]):
            if row_hit:
                for j, col_hit in enumerate(hit[1]):
                    if col_hit and device not in grid[i][j]:
                        grid[i][j].append(device)
    for row in grid:
        for devices in row:
            devices.sort()
    return grid, edges


def _edges(n: int, parts: int) -> list[int]:
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
    lines = [" " * (label_width + 1) + _ruler(edges[1])] if ndim >= 2 else []
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
    if ndim > 2:
        lines.append(_fold_note(ndim))
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


def _fold_note(ndim: int) -> str:
    axes = "axis 2 is" if ndim == 3 else f"axes 2..{ndim - 1} are"
    return f"{axes} not drawn: a cell lists the devices holding any element along them"


# Text lines ---------------------------------------------------------------------------


def _device_lines(x) -> list[str]:
    layout = x.layout
    chunks: dict = {}
    nbytes: dict = {}
    for device, shape in zip(layout.chunk_devices, layout.chunk_shapes):
        chunks[device] = chunks.get(device, 0) + 1
        nbytes[device] = nbytes.get(device, 0) + int(np.prod(shape, dtype=np.int64)) * x.itemsize
    return [
        f"device {d}: {chunks[d]} chunk{'s' if chunks[d] != 1 else ''}, {_bytes(nbytes[d])}"
        for d in layout.devices
    ]


def _overlap_lines(x) -> list[str]:
    """How many elements have several copies, and what the copies mean in x's mode."""
    shared, most = _copies(x.layout)
    if not shared:
        return ["no overlaps: each element is held by one chunk"]
    meaning = {
        "replica": "each copy holds the value (replicas)",
        "sum": "the value is the sum of the copies",
        "prod": "the value is the product of the copies",
        "max": "the value is the largest copy",
        "min": "the value is the smallest copy",
    }[x.mode.name]
    return [
        (
            f"overlaps: {shared} of {x.size} elements held by several chunks "
            f"(up to {most} copies); mode {x.mode}: {meaning}"
        )
    ]


def _copies(layout) -> tuple[int, int]:
    """(elements held by two or more chunks, most copies of one element)."""
    cover = layout.cover.cover
    if not cover.holds:
        return 0, 0
    count = sum(held.astype(np.int64) for held in cover.holds)
    sizes = np.ones(count.shape, dtype=np.int64)
    for axis, classes in enumerate(cover.classes):
        shape = [1] * count.ndim
        shape[axis] = len(classes)
        sizes = sizes * np.array([len(c) for c in classes], dtype=np.int64).reshape(shape)
    return int(sizes[count > 1].sum()), int(count.max(initial=0))


def _bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    scaled = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        scaled /= 1024
        if scaled < 1024 or unit == "TiB":
            return f"{scaled:.1f} {unit}"
    raise AssertionError("unreachable")


def printed_part(x) -> tuple:
    """``(values, summarize)``: what NumPy's printer shows of `x`, gathered. All of it when
    it is small; else only the edges of every long axis (``edgeitems`` each side), which
    NumPy prints with the same "..." when told to summarize (threshold 0), so the repr of
    a 1 GiB array moves kilobytes."""
    options = np.get_printoptions()
    if x.size <= options["threshold"]:
        return x.get(), False
    edge = options["edgeitems"]
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
