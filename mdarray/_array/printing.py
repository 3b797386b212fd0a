"""NumPy's ``array2string``, ``array_str`` and ``array_repr`` of a DistArray, moving only
what is printed.

NumPy prints a large array summarized: the first and last ``edgeitems`` of each long
axis, formatted from those elements alone. So these gather the whole array only where
it is printed whole (no more than ``threshold`` elements); else only the edges
(`_visualize.printed_part`, as ``repr(x)`` does), which NumPy prints with the same
"..." when told to summarize, and the text is NumPy's for the whole array. The one
thing the edges do not know, the shape that NumPy's repr of a summarized array names,
is put back.
"""

from __future__ import annotations

import numpy as np

from mdarray._core.registry import implements
from mdarray._layouts.visualize import printed_part


@implements(np.array2string, spmd=True)
def _array2string(
    a,
    max_line_width=None,
    precision=None,
    suppress_small=None,
    separator=" ",
    prefix="",
    *,
    formatter=None,
    threshold=None,
    edgeitems=None,
    sign=None,
    floatmode=None,
    suffix="",
    legacy=None,
):
    """``numpy.array2string``: NumPy's text, from the printed part of `a` only."""
    part, summarize = printed_part(a, threshold, edgeitems)
    return np.array2string(
        part,
        max_line_width,
        precision,
        suppress_small,
        separator,
        prefix,
        formatter=formatter,
        threshold=0 if summarize else threshold,
        edgeitems=edgeitems,
        sign=sign,
        floatmode=floatmode,
        suffix=suffix,
        legacy=legacy,
    )


@implements(np.array_str, spmd=True)
def _array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """``numpy.array_str``: NumPy's text, from the printed part of `a` only."""
    if a.ndim == 0:
        return np.array_str(a.get(), max_line_width, precision, suppress_small)
    part, summarize = printed_part(a)
    with np.printoptions(threshold=0 if summarize else np.get_printoptions()["threshold"]):
        return np.array_str(part, max_line_width, precision, suppress_small)


@implements(np.array_repr, spmd=True)
def _array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """``numpy.array_repr``: NumPy's text, from the printed part of `arr` only; a
    summarized array's ``shape=`` names arr's shape (placed as NumPy places it)."""
    part, summarize = printed_part(arr)
    if not summarize:
        return np.array_repr(part, max_line_width, precision, suppress_small)
    with np.printoptions(threshold=0):
        text = np.array_repr(part, max_line_width, precision, suppress_small)
    extras = f"shape={part.shape}"
    at = text.rfind(extras)
    if at < 0 or np.get_printoptions()["legacy"] is not False:
        return text
    # NumPy's text is ``values + "," + spacer + extras + ")"``; the spacer a new line
    # where the extras would pass the line width.
    tail = text[at + len(extras) :]
    values = text[:at].rstrip(" ").rstrip("\n").rstrip(" ")
    extras = f"shape={arr.shape}" + tail[:-1]
    width = np.get_printoptions()["linewidth"] if max_line_width is None else max_line_width
    last_line = len(values) - (values.rfind("\n") + 1)
    spacer = "\n" + " " * len("array(") if last_line + len(extras) + 1 > width else " "
    return values + spacer + extras + ")"
