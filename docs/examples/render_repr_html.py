"""Render ``DistArray._repr_html_`` in headless Chromium, to look at the pictures.

Writes one HTML page per example array into a folder and, where a ``chromium`` (or
``chromium-browser``, ``google-chrome``) executable is found, a PNG screenshot of each,
sized to its SVG. Nothing in the test suite needs Chromium; this is a tool for people.

    python docs/examples/render_repr_html.py [OUT_DIR]     # default: ./repr_html

docs/_static/repr_html.png is ``two_d.png`` from this script.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import mdarray
from mdarray import Layout

PAGE = '<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0">{}</body></html>'


def device(k: int) -> int:
    """Example device number `k` on this machine's devices (cycling when there are fewer)."""
    devices = mdarray.devices()
    return devices[k % len(devices)]


def merged(index_map: dict) -> dict:
    """An index map keyed by example device numbers, onto this machine's devices."""
    out: dict = {}
    for k, indices in index_map.items():
        out.setdefault(device(k), []).extend(indices if isinstance(indices, list) else [indices])
    return out


def examples() -> dict:
    one_d = mdarray.distributed_array(
        np.arange(24.0),
        merged({0: slice(0, 10), 1: slice(8, 18), 2: [slice(18, 24, 2), slice(19, 24, 2)]}),
        "sum",
    )
    # Four overlapping blocks (halos two wide) and a column strip held twice.
    two_d = mdarray.distributed_array(
        np.zeros((12, 16), np.float32),
        merged(
            {
                0: (slice(0, 7), slice(0, 9)),
                1: (slice(0, 7), slice(7, 16)),
                2: (slice(5, 12), slice(0, 9)),
                3: [(slice(5, 12), slice(7, 16)), (slice(0, 12), slice(13, 16))],
            }
        ),
        "sum",
    )
    cube = mdarray.distributed_array(
        np.zeros((6, 8, 6)),
        merged(
            {
                0: (slice(0, 4), slice(None), slice(0, 3)),
                1: (slice(2, 6), slice(None), slice(0, 3)),
                2: (slice(None), slice(0, 8, 2), slice(3, 6)),
                3: (slice(None), slice(1, 8, 2), slice(3, 6)),
            }
        ),
        "max",
    )
    uneven = mdarray.distributed_array(
        np.zeros((1000, 3000), np.int8),
        merged(
            {
                0: (slice(0, 100),),
                1: (slice(100, 700),),
                2: (slice(700, 1000),),
                3: (slice(0, 1000), slice(2990, 3000)),
            }
        ),
        "replica",
    )
    replicated = mdarray.distributed_array(
        np.ones((5, 7)), Layout.replicated((5, 7), mdarray.devices()[:2])
    )
    return {
        "one_d": one_d,
        "two_d": two_d,
        "three_d": cube,
        "uneven": uneven,
        "replicated": replicated,
    }


def browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot(chromium: str, page: Path, png: Path, width: int, height: int) -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                f"--screenshot={png}",
                f"--window-size={width},{height}",
                page.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    chromium = browser()
    for name, x in examples().items():
        markup = x._repr_html_()
        page = out / f"{name}.html"
        page.write_text(PAGE.format(markup), encoding="utf-8")
        size = re.search(r'<svg [^>]*width="(\d+)" height="(\d+)"', markup)
        assert size is not None
        if chromium:
            screenshot(chromium, page, out / f"{name}.png", int(size[1]), int(size[2]))
        done = f"{page}{' and .png' if chromium else ''}: {len(markup)} characters of HTML"
        sys.stdout.write(f"{done}\n{x.visualize()}\n\n")
    if not chromium:
        sys.stdout.write("no chromium found: wrote the HTML pages only\n")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "repr_html"))
