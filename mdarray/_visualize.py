"""Pictures of layouts: a one-line summary, a text picture and an HTML picture."""

from __future__ import annotations

import html as _html

import numpy as np


def summary(x) -> str:
    """One line: chunk count, devices, overlaps."""
    layout = x.layout
    overlap = ", overlapping" if layout.has_overlaps else ""
    return f"{len(layout.chunks)} chunks on devices {list(layout.devices)}{overlap}"


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _owners_grid(x, rows: int, cols: int):
    """For a grid of rows x cols sample points over the first two axes, the devices
    holding some element at each point (any index on further axes)."""
    shape = x.shape + (1,) * max(0, 2 - x.ndim)
    n0, n1 = shape[0], shape[1]
    rows = min(rows, n0) or 1
    cols = min(cols, n1) or 1
    ys = [int(i * n0 / rows) for i in range(rows)]
    xs = [int(j * n1 / cols) for j in range(cols)]
    grid = [[[] for _ in xs] for _ in ys]
    for device, box in zip(x.layout.chunk_devices, x.layout.boxes):
        box = tuple(box) + (range(1),) * max(0, 2 - x.ndim)
        if any(not len(r) for r in box):
            continue
        for a, y in enumerate(ys):
            if y not in box[0]:
                continue
            for b, xx in enumerate(xs):
                if xx in box[1] and device not in grid[a][b]:
                    grid[a][b].append(device)
    return grid


def picture(x, rows: int = 8, cols: int = 32) -> str:
    """A text picture of which device holds which part of the first two axes."""
    layout = x.layout
    lines = [
        f"DistArray shape={x.shape} dtype={x.dtype} mode={x.mode} "
        f"chunks={len(layout.chunks)} devices={list(layout.devices)}"
    ]
    if x.size:
        grid = _owners_grid(x, rows, cols)
        width = max(len(",".join(map(str, cell))) for row in grid for cell in row) or 1
        for row in grid:
            lines.append(" ".join((",".join(map(str, cell)) or ".").rjust(width) for cell in row))
        if x.ndim > 2:
            lines.append(f"(first two axes shown; the picture samples {rows}x{cols} points)")
    per_device: dict = {}
    for device, shape in zip(layout.chunk_devices, layout.chunk_shapes):
        per_device[device] = (
            per_device.get(device, 0) + int(np.prod(shape, dtype=np.int64)) * x.itemsize
        )
    lines.append(
        "bytes per device: " + ", ".join(f"{d}: {_bytes(n)}" for d, n in per_device.items())
    )
    if layout.has_overlaps:
        lines.append(
            "overlapping chunks hold "
            + ("copies of one value" if not x.mode.is_partial else f"partial values ({x.mode})")
        )
    return "\n".join(lines)


def html(x) -> str:
    """The text picture in a <pre> block for notebooks."""
    return f"<pre>{_html.escape(picture(x))}</pre>"
