"""The notebook picture of a layout (``DistArray._repr_html_``): one inline SVG.

Cells of the first two axes (a strip for 1-D; for 3-D and up, small multiples: one panel
per slab of the further axes) are coloured by the devices holding some element in them,
striped where several devices do (stripes run along the split: row bands where chunks
are whole rows), and hatched with a count where some element in them has several copies;
dark lines are chunk edges. Devices take the colours of a colour-blind-safe palette; past
its nine colours a device's colour carries a pattern (dots, then a grid, then lines), so
up to 36 devices look different, and the legend and tooltips name every device. A legend
maps colours to devices with their chunks and bytes, the caption says what is drawn and
what the copies mean in the array's mode, and a table beside the picture gives the sizes.

Everything is bounded: cells per axis, panels, legend rows and stripes, and pixel sizes,
so a picture of a huge array or of 10,000 chunks stays small. Counts come from index
arithmetic on the chunks' ranges and from the layout's cover (classes of positions), never
from the data. No scripts, no external resources; all text is escaped.
"""

from __future__ import annotations

import itertools
import math
import textwrap

import numpy as np

from . import visualize as _visualize
from .svg_canvas import (
    CHAR,
    FONT,
    FONTS,
    MARGIN,
    Canvas,
    esc,
)

#: Cells per axis at most: a 1-D strip, a 2-D grid, each panel of a 3-D+ picture.
STRIP_CELLS = 64
GRID_CELLS = 32
PANEL_CELLS = 12
#: Panels (slabs of axes 2 and up) drawn at most; the caption counts the rest.
MAX_PANELS = 8
#: Legend rows (devices) at most; the others are summed in one row.
MAX_LEGEND = 16
#: Per-cell tooltips only up to this many cells in all (they cost bytes).
MAX_TOOLTIPS = 512

WIDE = 760.0  # panels wrap to the next row past this many pixels

MODE_WORDS = {
    "replica": "REPLICA: every copy of an element holds its value",
    "sum": "SUM, partial: an element's value is the sum of its copies",
    "prod": "PROD, partial: an element's value is the product of its copies",
    "max": "MAX, partial: an element's value is the largest of its copies",
    "min": "MIN, partial: an element's value is the smallest of its copies",
}


def html(x) -> str:
    """``x``'s layout as an SVG picture beside a table of its sizes, inside a ``<div>``
    (well-formed XML)."""
    style = "display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start"
    return f'<div class="mdarray-layout" style="{style}">{_size_table(x)}{svg(x)}</div>'


def _size_table(x) -> str:
    """The sizes, as dask and xarray show them: the array's and its largest chunk's."""
    layout = x.layout
    shapes = layout.chunk_shapes
    largest = max(shapes, key=lambda s: int(np.prod(s, dtype=np.int64)), default=x.shape)
    chunk_bytes = int(np.prod(largest, dtype=np.int64)) * x.itemsize
    n, devices = len(layout.chunks), len(layout.devices)
    rows = [
        ("", "Array", "Largest chunk"),
        (
            "Bytes",
            _visualize.format_bytes(x.size * x.itemsize),
            _visualize.format_bytes(chunk_bytes),
        ),
        ("Shape", str(tuple(x.shape)), str(tuple(largest))),
        ("Chunks", f"{n} on {devices} device{'s' if devices != 1 else ''}", ""),
        ("Type", str(x.dtype), f"mode {x.mode.name}"),
    ]
    cell = "padding:2px 8px;text-align:right;border-bottom:1px solid #dddddd"
    head = f"{cell};font-weight:bold"
    body = "".join(
        "<tr>"
        + "".join(
            f'<{"th" if r == 0 or c == 0 else "td"} style="{head if r == 0 or c == 0 else cell}">'
            f"{esc(text)}</{'th' if r == 0 or c == 0 else 'td'}>"
            for c, text in enumerate(row)
        )
        + "</tr>"
        for r, row in enumerate(rows)
    )
    font = f"font-family:{FONTS};font-size:{FONT}px;border-collapse:collapse"
    return f'<table style="{font}">{body}</table>'


def svg(x) -> str:
    """``x``'s layout as one ``<svg>`` element (``DistArray.to_svg``)."""
    layout = x.layout
    svg = Canvas()
    svg.text(f"DistArray shape={x.shape} dtype={x.dtype}", bold=True)
    svg.text(f"mode {MODE_WORDS[x.mode.name]}")
    shared, most = _visualize.copies(layout) if x.size else (0, 0)
    n = len(layout.chunks)
    held = f"{n} chunk{'s' if n != 1 else ''} on {len(layout.devices)} device"
    held += "s" if len(layout.devices) != 1 else ""
    if shared:
        svg.text(
            f"{held}; {shared} of {x.size} elements held by several chunks (up to {most} copies)"
        )
    else:
        svg.text(f"{held}; no overlaps: each element is held by one chunk")
    if x.size:
        picture = _Picture(layout)
        picture.draw(svg)
        caption = picture.caption()
        if shared and x.mode.is_partial:
            caption.append(
                f"Hatched cells hold partial values: {_visualize.MODE_MEANINGS[x.mode.name]}."
            )
        elif shared:
            caption.append("Hatched cells hold replicas: every copy there has the value.")
        for line in caption:
            for part in textwrap.wrap(line, 88):
                svg.text(part, small=True)
    else:
        svg.text(f"empty: no element to draw (shape {x.shape})", small=True)
    _legend(svg, layout, x.itemsize, shared > 0, x.size > 0)
    return svg.finish()


# Cells and panels ---------------------------------------------------------------------


def axis_edges(n: int, spans: list, cap: int, prefer_chunks: bool) -> list[int]:
    """Cell edges along one axis of length `n` (at most `cap` cells).

    Every position when that fits (exact for strided chunks too); else the chunks' own
    edges when few enough and no chunk is strided (each cell then lies in the same chunks
    throughout); else equal blocks. `prefer_chunks` tries the chunk edges first where no chunk is strided.
    """
    cuts = sorted({0, n} | {r.start for r in spans} | {r[-1] + 1 for r in spans})
    strided = any(len(r) > 1 and r.step > 1 for r in spans)
    if prefer_chunks and not strided and len(cuts) - 1 <= cap:
        return cuts
    if n <= cap:
        return list(range(n + 1))
    if not strided and len(cuts) - 1 <= cap:
        return cuts
    return _visualize.block_edges(n, cap)


class _Picture:
    """What each cell shows: the devices holding it, most copies, chunk edges."""

    def __init__(self, layout) -> None:
        self.layout = layout
        ndim = layout.ndim
        boxes = [(d, box) for d, box in zip(layout.chunk_devices, layout.boxes)]
        boxes = [(d, box) for d, box in boxes if all(map(len, box))]
        spans = [[box[a] for _, box in boxes] for a in range(ndim)]
        cap = {0: 1, 1: STRIP_CELLS}.get(ndim, GRID_CELLS if ndim == 2 else PANEL_CELLS)
        self.edges = [
            axis_edges(layout.shape[a], spans[a], cap, False) for a in range(min(ndim, 2))
        ]
        split = [
            a for a in range(2, ndim) if len(axis_edges(layout.shape[a], spans[a], 2, True)) > 2
        ]
        per_axis = max(2, int(MAX_PANELS ** (1 / len(split)) + 1e-9)) if split else 1
        for a in range(2, ndim):
            self.edges.append(
                axis_edges(layout.shape[a], spans[a], per_axis, True)
                if a in split
                else [0, layout.shape[a]]
            )
        # Which chunk reaches which cell, axis by axis (a chunk is a box, so a cell holds
        # some of it exactly when every axis does).
        self.hits = [_visualize.hits(spans[a], self.edges[a]).astype(np.int64) for a in range(ndim)]
        self.chunk_devices = np.array([d for d, _ in boxes], dtype=np.int64)
        # Row bands where no chunk splits axis 1 (chunks of whole rows), else column bands.
        self.across = ndim < 2 or any(len(box[1]) < layout.shape[1] for _, box in boxes)
        self.devices = sorted(layout.devices)
        self.copies = self._copies()
        panel_axes = [len(e) - 1 for e in self.edges[2:]]
        self.panels = list(itertools.product(*[range(k) for k in panel_axes]))

    def _copies(self) -> np.ndarray:
        """Most copies of one element, per cell (axes as in `edges`)."""
        cover = self.layout.cover
        count = cover.counts()
        for axis, classes in enumerate(cover.classes):
            inside = _class_cells(classes, self.edges[axis])
            count = np.stack(
                [
                    np.compress(inside[:, c], count, axis=axis).max(axis=axis, initial=0)
                    for c in range(inside.shape[1])
                ],
                axis=axis,
            )
        return count

    def _panel_hits(self, panel: tuple) -> np.ndarray:
        """Per chunk: 1 if it reaches the slab `panel` of axes 2 and up."""
        reach = np.ones(len(self.chunk_devices), dtype=np.int64)
        for axis, k in enumerate(panel, start=2):
            reach = reach * self.hits[axis][:, k]
        return reach

    def _grid_hits(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-chunk hits of the drawn rows and columns (a 1-D array is one row)."""
        ones = np.ones((len(self.chunk_devices), 1), dtype=np.int64)
        if self.layout.ndim == 0:
            return ones, ones
        if self.layout.ndim == 1:
            return ones, self.hits[0]
        return self.hits[0], self.hits[1]

    def draw(self, svg: Canvas) -> None:
        """Draw the panels (one for 0-d to 2-D), wrapping them into rows."""
        ndim = self.layout.ndim
        if ndim == 1:
            shape, edges = [1, self.layout.shape[0]], [[0, 1], self.edges[0]]
        elif ndim == 0:
            shape, edges = [1, 1], [[0, 1], [0, 1]]
        else:
            shape, edges = list(self.layout.shape[:2]), self.edges[:2]
        size = _panel_size(ndim, shape)
        xs = _pixels(edges[1], size[0])
        ys = _pixels(edges[0], size[1])
        shown = self.panels[:MAX_PANELS]
        tooltips = len(shown) * (len(xs) - 1) * (len(ys) - 1) <= MAX_TOOLTIPS
        top = svg.y + 6
        label_w = (len(str(shape[0])) + 1) * CHAR if ndim >= 2 else 0
        panel_h = size[1] + (2 * FONT + 14 if ndim > 2 else FONT + 10)
        panel_w = size[0] + label_w + (9 * CHAR if ndim <= 2 else 2 * CHAR)
        per_row = max(1, min(len(shown), int(WIDE // panel_w)))
        for p, panel in enumerate(shown):
            x0 = MARGIN + label_w + (p % per_row) * panel_w
            y0 = top + (p // per_row) * panel_h
            if ndim > 2:
                svg.label(x0, y0 + FONT, _slab_name(panel, self.edges, ndim), bold=True)
                y0 += FONT + 4
            self._panel(svg, x0, y0 + FONT + 4, (xs, ys), edges, p, tooltips)
        svg.y = top + math.ceil(len(shown) / per_row) * panel_h + 4
        svg.width(MARGIN + label_w + min(len(shown), per_row) * panel_w)

    def _panel(self, svg, x0, y0, pixels, edges, p: int, tooltips: bool) -> None:
        """Panel `p`: its cells, cell sides, chunk edges, outline and ticks."""
        ndim = self.layout.ndim
        xs, ys = pixels
        panel = self.panels[p]
        rows, cols = self._grid_hits()
        rows = rows * self._panel_hits(panel)[:, None]
        held = {}
        for d in self.devices:
            mine = self.chunk_devices == d
            held[d] = (rows[mine].T @ cols[mine]) > 0
        if ndim >= 2:
            copies = self.copies.reshape((*self.copies.shape[:2], -1))[..., p]
        else:
            copies = self.copies.reshape(1, -1)
        self._ticks(svg, x0, y0, xs, edges[1], ndim)
        for i, j in itertools.product(range(len(ys) - 1), range(len(xs) - 1)):
            svg.cell(
                (x0 + xs[j], y0 + ys[i], xs[j + 1] - xs[j], ys[i + 1] - ys[i]),
                [d for d in self.devices if held[d][i, j]],
                int(copies[i, j]),
                _cell_name(i, j, edges, ndim, panel, self.edges) if tooltips else None,
                self.across,
            )
        svg.path(_cell_sides(x0, y0, xs, ys), "#ffffff", 0.6)
        svg.path(_chunk_edges(x0, y0, xs, ys, rows, cols), "#222222", 1.6)
        svg.rect_outline(x0, y0, xs[-1], ys[-1])
        if ndim >= 2:
            self._row_ticks(svg, x0, y0, ys, edges[0])

    def _ticks(self, svg, x0, y0, xs, edges, ndim) -> None:
        if ndim == 0:
            return
        last = -1e9
        for k, e in enumerate(edges):
            text = str(e)
            x = x0 + xs[k]
            if x - last >= (len(text) + 1) * CHAR and (k < len(edges) - 1 or x - last >= 2 * CHAR):
                svg.label(
                    x,
                    y0 - 3,
                    text,
                    small=True,
                    anchor="middle" if 0 < k < len(edges) - 1 else ("start" if k == 0 else "end"),
                )
                last = x
        if ndim <= 2:  # panels say it once, in the caption
            svg.label(x0 + xs[-1] + 4, y0 + 10, f"\u2192 axis {min(ndim, 2) - 1}", small=True)

    def _row_ticks(self, svg, x0, y0, ys, edges) -> None:
        last = -1e9
        for k, e in enumerate(edges[:-1]):
            y = y0 + ys[k] + FONT - 2
            if y - last >= FONT:
                svg.label(x0 - 3, y, str(e), small=True, anchor="end")
                last = y
        if self.layout.ndim == 2:
            svg.label(x0, y0 + ys[-1] + FONT, "\u2193 axis 0", small=True)

    def caption(self) -> list[str]:
        ndim = self.layout.ndim
        lines = []
        if ndim == 0:
            lines.append("The 0-d array is one cell.")
        else:
            exact = all(len(e) - 1 == n for e, n in zip(self.edges[:2], self.layout.shape))
            what = "axis 0 across" if ndim == 1 else "axis 1 across, axis 0 down"
            cells = (
                "one cell per element"
                if exact
                else "each cell a block of positions (ticks: first position of a block)"
            )
            lines.append(f"Drawn: {what}; {cells}.")
        if ndim > 2:
            axes = "axis 2" if ndim == 3 else f"axes 2..{ndim - 1}"
            lines.append(
                f"One panel per slab of {axes} (the index above it); a cell shows the devices "
                "holding any element of the slab there."
            )
            if len(self.panels) > MAX_PANELS:
                lines.append(f"Showing {MAX_PANELS} of {len(self.panels)} slabs.")
            lines += [note.strip() for note in _visualize.axis_notes(self.layout)[1:]]
        bands = "column" if self.across else "row"
        lines.append(
            f"Colour: the device holding a cell; {bands} stripes: several devices "
            "(the tooltip names them all); dark lines: chunk edges."
        )
        return lines


def _class_cells(classes: list, edges: list[int]) -> np.ndarray:
    """``[class, cell]``: True where a class of positions has one in the cell."""
    ranges = [c for c in classes if isinstance(c, range)]
    out = np.zeros((len(classes), len(edges) - 1), dtype=bool)
    if ranges:
        which = [k for k, c in enumerate(classes) if isinstance(c, range)]
        out[which] = _visualize.hits(ranges, edges)
    for k, c in enumerate(classes):
        if not isinstance(c, range):
            out[k, np.searchsorted(edges, np.asarray(c), side="right") - 1] = True
    return out


def _panel_size(ndim: int, shape: list[int]) -> tuple[float, float]:
    """Pixels of one panel: bounded, roughly in proportion to the drawn axes."""
    if ndim == 0:
        return 48.0, 48.0
    if ndim == 1:
        return 560.0, 40.0
    most_w, most_h = (480.0, 320.0) if ndim == 2 else (200.0, 140.0)
    scale = min(most_w / shape[1], most_h / shape[0])
    return min(most_w, max(shape[1] * scale, most_w / 4)), min(
        most_h, max(shape[0] * scale, most_h / 4)
    )


def _pixels(edges: list[int], total: float) -> list[float]:
    """Pixel offsets of cell edges: in proportion to positions, each cell at least 3 px."""
    k = len(edges) - 1
    least = min(3.0, total / k)
    spare = total - least * k
    n = edges[-1] - edges[0] or 1
    return [least * i + spare * (e - edges[0]) / n for i, e in enumerate(edges)]


def _slab_name(panel: tuple, edges: list, ndim: int) -> str:
    """The NumPy index of one slab, ``x[:, :, 0:4, :]`` (``:`` where an axis is whole)."""
    parts = [":", ":"] + [
        ":" if len(edges[a]) == 2 else _span(edges[a][k], edges[a][k + 1])
        for a, k in enumerate(panel, start=2)
    ]
    return f"x[{', '.join(parts[:ndim])}]"


def _cell_name(i: int, j: int, edges: list, ndim: int, panel: tuple, all_edges: list) -> str:
    if ndim == 0:
        return "x[()]"
    if ndim == 1:
        return f"x[{_span(edges[1][j], edges[1][j + 1])}]"
    parts = [_span(edges[0][i], edges[0][i + 1]), _span(edges[1][j], edges[1][j + 1])]
    parts += [_span(all_edges[a][k], all_edges[a][k + 1]) for a, k in enumerate(panel, start=2)]
    return f"x[{', '.join(parts)}]"


def _span(a: int, b: int) -> str:
    return str(a) if b == a + 1 else f"{a}:{b}"


def _cell_sides(x0: float, y0: float, xs: list, ys: list) -> str:
    """An SVG path of the thin lines between cells, where cells are wide enough to show them."""
    steps = []
    if (xs[-1] - xs[0]) / (len(xs) - 1) >= 4:
        steps += [f"M{x0 + x:.1f} {y0 + ys[0]:.1f}V{y0 + ys[-1]:.1f}" for x in xs[1:-1]]
    if (ys[-1] - ys[0]) / (len(ys) - 1) >= 4:
        steps += [f"M{x0 + xs[0]:.1f} {y0 + y:.1f}H{x0 + xs[-1]:.1f}" for y in ys[1:-1]]
    return "".join(steps)


def _chunk_edges(
    x0: float, y0: float, xs: list, ys: list, rows: np.ndarray, cols: np.ndarray
) -> str:
    """An SVG path of the cell sides where some chunk in the panel starts or ends."""
    steps = []
    if cols.shape[1] > 1:  # vertical sides between columns j - 1 and j, per row
        change = (cols[:, 1:] != cols[:, :-1]).astype(np.int64)
        vertical = (rows.T @ change) > 0
        for i, j in zip(*np.nonzero(vertical)):
            x = x0 + xs[j + 1]
            steps.append(f"M{x:.1f} {y0 + ys[i]:.1f}V{y0 + ys[i + 1]:.1f}")
    if rows.shape[1] > 1:
        change = (rows[:, 1:] != rows[:, :-1]).astype(np.int64)
        horizontal = (change.T @ cols) > 0
        for i, j in zip(*np.nonzero(horizontal)):
            y = y0 + ys[i + 1]
            steps.append(f"M{x0 + xs[j]:.1f} {y:.1f}H{x0 + xs[j + 1]:.1f}")
    return "".join(steps)


# The legend ---------------------------------------------------------------------------


def _legend(svg: Canvas, layout, itemsize: int, overlaps: bool, drawn: bool) -> None:
    stats = _visualize.device_stats(layout, itemsize)
    svg.y += 4
    for k, (device, (chunks, nbytes)) in enumerate(sorted(stats.items())):
        if k == MAX_LEGEND:
            rest = sorted(stats.items())[MAX_LEGEND:]
            more_chunks = sum(c for _, (c, _) in rest)
            more_bytes = _visualize.format_bytes(sum(b for _, (_, b) in rest))
            svg.text(f"... {len(rest)} more devices: {more_chunks} chunks, {more_bytes}")
            break
        plural = "s" if chunks != 1 else ""
        nbytes_text = _visualize.format_bytes(nbytes)
        svg.swatch(device, f"device {device}: {chunks} chunk{plural}, {nbytes_text}")
    if overlaps and drawn:
        svg.swatch(None, "hatched, \u00d7k: an element there has k copies (chunks overlap)")
