"""The drawing side of the notebook picture (`mdarray._layouts.svg`): SVG elements, escaped and
well-formed, stacked on a canvas; the devices' colours and patterns. No scripts, no
external resources.
"""

from __future__ import annotations

import html as _html
import math

#: Devices striped in one cell at most (fewer where stripes would be under 1.5 px).
MAX_STRIPES = 16
#: Paul Tol's "light" qualitative scheme: told apart under the common colour-vision
#: deficiencies, and light enough for the black text, hatching and chunk edges drawn on it.
PALETTE = (
    "#77aadd",
    "#ee8866",
    "#eedd88",
    "#ffaabb",
    "#99ddff",
    "#44bb99",
    "#bbcc33",
    "#aaaa00",
    "#dddddd",
)
#: What the second, third and fourth rounds of the palette carry over their colour.
PATTERNS = ("mdarray-device-dots", "mdarray-device-grid", "mdarray-device-lines")
FONT = 12
TIMES = "\u00d7"
CHAR = 7.0  # an upper estimate of one character's width at FONT px, for the layout
MARGIN = 10
HATCH_ID = "mdarray-overlap-hatch"  # the same pattern in every picture, so ids may repeat
HATCH = f"url(#{HATCH_ID})"
SVG_NAMESPACE = "http://www.w3.org/2000/svg"
FONTS = "DejaVu Sans, Helvetica, Arial, sans-serif"


def color(device: int) -> str:
    """Device `device`'s colour in the palette (it repeats every ``len(PALETTE)`` devices;
    `pattern` tells the rounds apart)."""
    return PALETTE[device % len(PALETTE)]


def pattern(device: int) -> str | None:
    """The id of the pattern over device `device`'s colour: none in the palette's first
    round, then dots, a grid and lines; past those the looks repeat (the legend and the
    tooltips still name each device)."""
    round_ = device // len(PALETTE) % (len(PATTERNS) + 1)
    return PATTERNS[round_ - 1] if round_ else None


def paint(x: float, y: float, w: float, h: float, device: int, **line: object) -> list[str]:
    """Rectangles filling a box in device `device`'s look: its colour, then its pattern."""
    out = [element("rect", x=x, y=y, width=w, height=h, fill=color(device), **line)]
    overlay = pattern(device)
    if overlay is not None:
        out.append(element("rect", x=x, y=y, width=w, height=h, fill=f"url(#{overlay})"))
    return out


class Canvas:
    """SVG elements stacked top to bottom; `y` is where the next line of text goes."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.y = float(MARGIN)
        self.w = 0.0

    def width(self, w: float) -> None:
        self.w = max(self.w, w)

    def text(self, text: str, bold: bool = False, small: bool = False) -> None:
        size = FONT - 1 if small else FONT
        self.y += size + 4
        self.label(MARGIN, self.y, text, bold=bold, small=small)
        self.width(2 * MARGIN + len(text) * CHAR * size / FONT)

    def label(
        self,
        x: float,
        y: float,
        text: str,
        bold: bool = False,
        small: bool = False,
        anchor: str = "start",
    ) -> None:
        style: dict = {"font_weight": "bold"} if bold else {}
        style |= {"font_size": FONT - 2} if small else {}
        style |= {"text_anchor": anchor} if anchor != "start" else {}
        self.parts.append(element("text", text, x=x, y=y, **style))

    def cell(
        self, box: tuple, devices: list[int], copies: int, name: str | None, across: bool = True
    ) -> None:
        """One cell at ``box = (x, y, w, h)``: a stripe per device (side by side `across`,
        else stacked), hatched if `copies` > 1, grouped with a tooltip when `name` is given."""
        x, y, w, h = box
        out = (
            [element("title", f"{name}: devices {devices}, up to {copies} copies")] if name else []
        )
        room = max(1, int((w if across else h) / 1.5))
        stripes = devices[: min(MAX_STRIPES, room)]  # every element has a chunk: never empty
        for k, device in enumerate(stripes):
            if across:
                out += paint(x + w * k / len(stripes), y, w / len(stripes), h, device)
            else:
                out += paint(x, y + h * k / len(stripes), w, h / len(stripes), device)
        if copies > 1:
            out.append(element("rect", x=x, y=y, width=w, height=h, fill=HATCH))
            if w >= 22 and h >= 13:
                count = {"font_size": FONT - 2, "text_anchor": "middle", "font_weight": "bold"}
                out.append(
                    element("text", f"{TIMES}{copies}", x=x + w / 2, y=y + h / 2 + 4, **count)
                )
        self.parts.append(f"<g>{''.join(out)}</g>" if name else "".join(out))

    def path(self, d: str, stroke: str, width: float) -> None:
        if d:
            self.parts.append(element("path", d=d, fill="none", stroke=stroke, stroke_width=width))

    def rect_outline(self, x: float, y: float, w: float, h: float) -> None:
        line = {"fill": "none", "stroke": "#222222", "stroke_width": 1.6}
        self.parts.append(element("rect", x=x, y=y, width=w, height=h, **line))

    def swatch(self, device: int | None, text: str) -> None:
        """A legend row: a square in `device`'s look (None: the overlap hatching), then
        `text`."""
        self.y += FONT + 6
        line = {"stroke": "#555555", "stroke_width": 0.6}
        top = self.y - FONT + 1
        if device is None:
            square = {"x": MARGIN, "y": top, "width": FONT, "height": FONT}
            self.parts.append(element("rect", fill="#ffffff", **square, **line))
            self.parts.append(element("rect", fill=HATCH, **square))
        else:
            self.parts += paint(MARGIN, top, FONT, FONT, device, **line)
        self.label(MARGIN + FONT + 6, self.y, text)
        self.width(2 * MARGIN + FONT + 6 + len(text) * CHAR)

    def finish(self) -> str:
        w = math.ceil(self.w + MARGIN)
        h = math.ceil(self.y + MARGIN)
        shade = element("rect", width=6, height=6, fill="#000000", fill_opacity="0.12")
        stroke = {"stroke": "#000000", "stroke_opacity": "0.5", "stroke_width": 2}
        line = element("line", x1=0, y1=0, x2=0, y2=6, **stroke)
        tile = {"width": 6, "height": 6, "patternUnits": "userSpaceOnUse"}
        pattern = _open("pattern", id=HATCH_ID, **tile, patternTransform="rotate(45)")
        page = {"width": w, "height": h, "viewBox": f"0 0 {w} {h}", "font_size": FONT}
        svg = _open("svg", xmlns=SVG_NAMESPACE, **page, font_family=FONTS, role="img")
        background = element("rect", width=w, height=h, fill="#ffffff")
        defs = f"<defs>{pattern}{shade}{line}</pattern>{_device_patterns()}</defs>"
        return f"{svg}{background}{defs}{''.join(self.parts)}</svg>"


def _device_patterns() -> str:
    """The patterns of `PATTERNS`: dots, a grid, and lines at 135 degrees, in dark grey."""
    ink = {"fill": "#333333", "fill_opacity": "0.55"}
    tile = {"width": 5, "height": 5, "patternUnits": "userSpaceOnUse"}
    stroke = {"stroke": "#333333", "stroke_opacity": "0.55", "stroke_width": 1}
    dots = element("circle", cx=2.5, cy=2.5, r=1.1, **ink)
    grid = element("path", d="M0 0H5M0 0V5", fill="none", **stroke)
    lines = element("line", x1=0, y1=0, x2=0, y2=5, **stroke)
    ids = dict(zip(PATTERNS, (dots, grid, lines)))
    turn = {PATTERNS[2]: {"patternTransform": "rotate(-45)"}}
    return "".join(
        f"{_open('pattern', id=i, **tile, **turn.get(i, {}))}{body}</pattern>"
        for i, body in ids.items()
    )


def _attributes(attributes: dict) -> str:
    """`` name="value"`` pairs, escaped; ``_`` in a name is ``-``, floats to 0.1 px."""
    out = []
    for name, value in attributes.items():
        text = f"{value:.1f}" if isinstance(value, float) else str(value)
        out.append(f' {name.replace("_", "-")}="{esc(text)}"')
    return "".join(out)


def _open(tag: str, /, **attributes: object) -> str:
    return f"<{tag}{_attributes(attributes)}>"


def element(tag: str, text: str | None = None, /, **attributes: object) -> str:
    """``<tag .../>``, or ``<tag ...>text</tag>`` with `text` escaped."""
    if text is None:
        return f"<{tag}{_attributes(attributes)}/>"
    return f"<{tag}{_attributes(attributes)}>{esc(text)}</{tag}>"


def esc(text: str) -> str:
    return _html.escape(text, quote=True)
