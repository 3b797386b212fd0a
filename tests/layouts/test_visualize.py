"""Pictures of layouts: visualize(), _repr_html_() and the summary in repr()."""

import itertools
import re
import types
import xml.etree.ElementTree as ET

import numpy as np
from _layouts import dist_pairs, two_chunks
from hypothesis import example, given, settings, strategies as st

import mdarray
from mdarray import Layout
from mdarray._layouts import svg as _svg, svg_canvas as _svg_canvas, visualize as _visualize
from mdarray.testing import strategies as mst

D = mdarray.devices()


def _grid_rows(text):
    """The symbol rows of a picture of a 2-D array, without their labels."""
    return [line.split()[1:] for line in text.splitlines() if re.fullmatch(r"\s*\d+( \S)+", line)]


def test_blocks_are_drawn_where_they_are():
    layout = Layout.grid((8, 12), (2, 3), devices=D)
    x = mdarray.distributed_array(np.zeros((8, 12), np.float32), layout, "sum")
    text = x.visualize()
    assert text.splitlines()[0].startswith("DistArray shape=(8, 12) dtype=float32 mode=sum")
    rows = _grid_rows(text)
    assert len(rows) == 8
    assert all(len(r) == 12 for r in rows)
    for device, box in zip(layout.chunk_devices, layout.boxes):
        for i in box[0]:
            for j in box[1]:
                assert rows[i][j] == str(device)
    for device in layout.devices:
        chunks = layout.chunk_devices.count(device)
        nbytes = 4 * sum(
            int(np.prod(s))
            for s, d in zip(layout.chunk_shapes, layout.chunk_devices)
            if d == device
        )
        assert f"device {device}: {chunks} chunk{'s' if chunks > 1 else ''}, {nbytes} B" in text
    assert "no overlaps" in text


def test_overlaps_and_replicas_are_named():
    x = mdarray.distributed_array(np.arange(10), two_chunks(slice(0, 6), slice(4, 10)), "max")
    text = x.visualize()
    if D[0] != D[-1]:
        assert f"a = devices [{D[0]}, {D[-1]}]" in text
        assert text.splitlines()[2].split() == [str(D[0])] * 4 + ["a"] * 2 + [str(D[-1])] * 4
    assert "overlaps: 2 of 10 elements" in text
    assert "up to 2 copies" in text
    assert "largest copy" in text
    replicated = mdarray.distributed_array(np.ones((3, 3)), Layout.replicated((3, 3)))
    assert f"up to {len(D)} copies" in replicated.visualize() or len(D) == 1
    assert "replicas" in replicated.visualize() or len(D) == 1


def test_large_and_high_dimensional_arrays_stay_small():
    x = mdarray.distributed_array(
        np.zeros((100, 1000, 2), np.int8), Layout.block((100, 1000, 2), axis=1)
    )
    text = x.visualize()
    rows = _grid_rows(text)
    assert len(rows) == 16
    assert all(len(r) == 32 for r in rows)
    assert "axis 2 is not drawn" in text
    assert max(len(line) for line in text.splitlines()) < 120
    assert "KiB" in text


@given(dist_pairs())
def test_any_array_has_pictures(pair):
    x, _ = pair
    text = x.visualize()
    assert f"shape={x.shape}" in text
    assert f"mode={x.mode}" in text
    for device in x.devices:
        assert f"device {device}:" in text
    assert ("no overlaps" in text) != x.layout.has_overlaps
    assert ("empty: no element to draw" in text) == (x.size == 0)
    summary = repr(x).splitlines()[-1]
    assert f"mode={x.mode}" in summary
    assert f"on devices {list(x.devices)}" in summary
    assert ("overlapping" in summary) == x.layout.has_overlaps


def test_repr_shows_values_and_a_layout_line():
    x = mdarray.distributed_array(np.arange(6).reshape(2, 3), two_chunks(0, 1), "sum")
    text = repr(x)
    assert text.startswith("DistArray([[0, 1, 2],")
    assert "[3, 4, 5]]" in text
    assert text.endswith(
        f"dtype=int64, mode=sum, 2 chunks on devices {list(dict.fromkeys([D[0], D[-1]]))})"
    )
    assert (
        repr(mdarray.distributed_array(2.5, {D[0]: ()}))
        == f"DistArray(2.5, dtype=float64, mode=replica, 1 chunk on devices [{D[0]}])"
    )


@given(st.sampled_from([(30,), (9, 8), (4, 7, 9), (2, 3)]).flatmap(lambda s: dist_pairs(shape=s)))
def test_repr_prints_like_numpy_and_gathers_only_what_it_shows(pair):
    x, expected = pair
    with np.printoptions(threshold=10, edgeitems=2):
        with mdarray.count_transfers() as moved:
            text = repr(x)
        want = np.array2string(expected, separator=", ", prefix="DistArray(")
    assert text.startswith(f"DistArray({want}, dtype={x.dtype}, mode={x.mode}")
    if expected.size > 10 and x.mode is mdarray.REPLICA:
        # Edges only: 2 * edgeitems + 1 positions of each long axis reach the host, once.
        shown = int(np.prod([min(n, 5) for n in expected.shape]))
        assert moved.total == shown * x.itemsize


# Text pictures of any ndim ---------------------------------------------------------------


def _cuts_along(layout, axis):
    """Where chunks start or end inside `axis`, from the chunks' element positions."""
    cuts = set()
    for box in layout.boxes:
        if all(len(r) for r in box):
            positions = np.asarray(box[axis])
            cuts |= {int(positions.min()), int(positions.max()) + 1}
    return sorted(cuts - {0, layout.shape[axis]})


@settings(max_examples=25, deadline=None)
@given(mst.shapes(min_dims=0, max_dims=5, max_side=5).flatmap(mst.layouts))
def test_visualize_says_how_folded_axes_are_split(layout):
    x = mdarray.distributed_array(np.zeros(layout.shape, np.int16), layout)
    text = x.visualize()
    if not x.size:
        assert "empty: no element to draw" in text
        return
    for axis in range(2, x.ndim):
        line = next(line for line in text.splitlines() if f"axis {axis} (length " in line)
        cuts = _cuts_along(layout, axis)
        if cuts:
            assert f"chunk edges at {', '.join(map(str, cuts[:8]))}" in line
        else:
            assert "every chunk spans all of it" in line
        strided = any(
            len(box[axis]) > 1 and box[axis].step > 1 for box in layout.boxes if all(map(len, box))
        )
        assert ("strided chunks" in line) == strided
    assert ("not drawn" in text) == (x.ndim > 2)


def test_visualize_of_0d_1d_3d_and_5d_arrays():
    scalar = mdarray.distributed_array(np.float32(1.5), two_chunks((), ()))
    assert _grid_rows(scalar.visualize()) == []
    assert "one cell: the 0-d array" in scalar.visualize()
    strip = mdarray.distributed_array(np.arange(40), Layout.block((40,), devices=D))
    ruler, line = strip.visualize().splitlines()[1:3]
    assert ruler.split() == [str(k) for k in range(0, 40, 5)]  # blocks of 40 / 32 positions
    line = line.split()
    assert len(line) == 32
    assert line[0] == str(D[0])
    assert line[-1] == str(D[-1])
    cube = mdarray.distributed_array(np.zeros((4, 6, 8)), Layout.block((4, 6, 8), axis=2))
    assert (
        f"axis 2 (length 8): chunk edges at {', '.join(map(str, _cuts_along(cube.layout, 2)))}"
        in cube.visualize()
        or len(D) == 1
    )
    five = mdarray.distributed_array(
        np.zeros((2, 3, 4, 5, 6)), Layout.block((2, 3, 4, 5, 6), axis=4)
    )
    text = five.visualize()
    assert "axes 2..4 are not drawn" in text
    assert "axis 2 (length 4): every chunk spans all of it" in text
    assert "axis 3 (length 5): every chunk spans all of it" in text
    assert len(_grid_rows(text)) == 2


# The SVG picture --------------------------------------------------------------------------

SVG = "{http://www.w3.org/2000/svg}"


def _parse(x):
    """The SVG element of ``x._repr_html_()``, which must be well-formed XML."""
    page = x._repr_html_()
    root = ET.fromstring(page)
    assert root.tag == "div"
    table, svg = list(root)
    assert table.tag == "table"
    assert svg.tag == f"{SVG}svg"
    assert ET.tostring(svg) == ET.tostring(ET.fromstring(x.to_svg()))
    assert "<script" not in page
    assert "href" not in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    return svg


def _texts(svg):
    return [t.text or "" for t in svg.iter(f"{SVG}text")]


def _legend(svg):
    """``{device: ((fill, pattern), chunks, bytes text)}`` from the legend rows (a swatch:
    the colour and, past the palette's first round, a pattern over it; then the text)."""
    out = {}
    children = list(svg)
    for k, child in enumerate(children):
        match = re.fullmatch(r"device (\d+): (\d+) chunks?, (.+)", child.text or "")
        if child.tag == f"{SVG}text" and match:
            fills = [c.get("fill") for c in children[k - 2 : k] if c.tag == f"{SVG}rect"]
            look = (fills[-1], None)
            if fills[-1].startswith("url(#mdarray-device-"):
                look = (fills[-2], fills[-1][5:-1])
            out[int(match[1])] = (look, int(match[2]), match[3])
    return out


def _look(device):
    return (_svg_canvas.color(device), _svg_canvas.pattern(device))


def _oracle(layout):
    """Per element: which devices hold it, and how many chunks."""
    held = {d: np.zeros(layout.shape, bool) for d in layout.devices}
    copies = np.zeros(layout.shape, np.int64)
    for device, box in zip(layout.chunk_devices, layout.boxes):
        mask = np.zeros(layout.shape, bool)
        mask[np.ix_(*box)] = True
        held[device] |= mask
        copies += mask
    return held, copies


def _cell_index(name, ndim):
    """The NumPy index of a cell tooltip's ``x[0:2, 3]``."""
    inside = name[2:-1]
    if inside == "()":
        return ()
    parts = []
    for part in inside.split(", "):
        a, _, b = part.partition(":")
        parts.append(slice(int(a), int(b)) if b else slice(int(a), int(a) + 1))
    assert len(parts) == ndim
    return tuple(parts)


def _check_cells(svg, x):
    """Every cell's tooltip, stripes and count agree with the elements it covers."""
    held, copies = _oracle(x.layout)
    cells = 0
    for group in svg.iter(f"{SVG}g"):
        title = group.find(f"{SVG}title").text
        match = re.fullmatch(r"(x\[.*\]): devices \[(.*)\], up to (\d+) copies", title)
        index = _cell_index(match[1], x.ndim)
        devices = [int(d) for d in match[2].split(", ") if d]
        assert devices == [d for d in sorted(held) if held[d][index].any()]
        assert int(match[3]) == copies[index].max()
        rects = group.findall(f"{SVG}rect")
        fills = [r.get("fill") for r in rects if not r.get("fill").startswith("url(")]
        shown = devices[: len(fills)]
        assert fills == [_svg_canvas.color(d) for d in shown]
        overlays = [r.get("fill") for r in rects if r.get("fill").startswith("url(")]
        patterns = [f[5:-1] for f in overlays if f != _svg_canvas.HATCH]
        assert patterns == [_svg_canvas.pattern(d) for d in shown if _svg_canvas.pattern(d)]
        if len(shown) < len(devices):  # as many stripes as fit, each at least 1.5 px
            sides = [
                float(rects[-1 if copies[index].max() > 1 else 0].get(a))
                for a in ("width", "height")
            ]
            # (sides are written to 0.1 px: one read as 6.0 may be 5.96, room for 3)
            narrowest = min(sides) - 0.05
            assert len(shown) == _svg_canvas.MAX_STRIPES or narrowest / (len(shown) + 1) < 1.5
        hatched = any(r.get("fill") == _svg_canvas.HATCH for r in rects)
        assert hatched == (copies[index].max() > 1)
        cells += 1
    return cells


@settings(max_examples=40, deadline=None)
@given(
    mst.shapes(min_dims=0, max_dims=5, max_side=5).flatmap(
        lambda s: st.tuples(mst.layouts(s), mst.modes(np.float32))
    )
)
@example((Layout((6,), two_chunks([slice(0, 6, 2), slice(1, 6, 2)], slice(2, 5))), mdarray.MIN))
@example((Layout((3, 0, 2), {D[0]: (), D[-1]: ()}), mdarray.SUM))
def test_svg_shows_the_layout_it_draws(case):
    layout, mode = case
    data = np.arange(int(np.prod(layout.shape)), dtype=np.float32).reshape(layout.shape)
    x = mdarray.distributed_array(data, layout, mode)
    svg = _parse(x)
    texts = _texts(svg)
    assert f"DistArray shape={x.shape} dtype={x.dtype}" in texts
    assert any(t.startswith(f"mode {mode.name.upper()}") for t in texts)
    assert any("partial" in t for t in texts) == mode.is_partial
    legend = _legend(svg)
    assert sorted(legend) == sorted(x.devices)
    assert len({fill for fill, _, _ in legend.values()}) == len(legend)
    for device, chunks in x.all_chunks().items():
        look, count, nbytes = legend[device]
        assert look == _look(device)
        assert count == len(chunks)
        assert nbytes == _visualize.format_bytes(sum(int(c.nbytes) for c in chunks))
    hatches = [r for r in svg.iter(f"{SVG}rect") if (r.get("fill") or "").startswith("url(")]
    assert bool(hatches) == (x.layout.has_overlaps and x.size > 0)
    if x.size:
        _, copies = _oracle(layout)
        shared = int((copies > 1).sum())
        if shared:
            assert (
                f"{shared} of {x.size} elements held by several chunks (up to {copies.max()} copies)"
                in " ".join(texts)
            )
        assert _check_cells(svg, x) > 0
    else:
        assert f"empty: no element to draw (shape {x.shape})" in texts


def test_svg_of_3d_arrays_has_one_panel_per_slab():
    # At least two chunks along axis 2, also with one device.
    whole = slice(None)
    layout = Layout.block((4, 6, 8), axis=2, devices=D)
    if len(D) == 1:
        layout = Layout(
            (4, 6, 8), two_chunks((whole, whole, slice(0, 3)), (whole, whole, slice(3, 8)))
        )
    x = mdarray.distributed_array(np.zeros((4, 6, 8)), layout, "max")
    texts = _texts(_parse(x))
    slabs = [t for t in texts if t.startswith("x[:, :, ")]
    cuts = [0, *_cuts_along(layout, 2), 8]
    assert slabs == [f"x[:, :, {a}:{b}]" for a, b in itertools.pairwise(cuts)]
    assert any("One panel per slab of axis 2" in t for t in texts)


def test_svg_of_5d_arrays_keeps_panels_few_and_6d_says_what_it_leaves_out():
    shape = (2, 3, 6, 5, 4)
    layout = Layout.grid(shape, (1, 1, 6, 5, 4), devices=D)
    x = mdarray.distributed_array(np.zeros(shape, np.int8), layout)
    svg = _parse(x)
    slabs = [t for t in _texts(svg) if t.startswith("x[:, :, ")]
    assert len(slabs) == _svg.MAX_PANELS  # each split axis in two blocks: 2 * 2 * 2
    assert slabs[0] == "x[:, :, 0:3, 0:2, 0:2]"
    assert slabs[-1] == "x[:, :, 3:6, 2:5, 2:4]"
    _check_cells(svg, x)
    shape = (2, 2, 2, 2, 2, 2)
    x = mdarray.distributed_array(
        np.zeros(shape), Layout.grid(shape, (1, 1, 2, 2, 2, 2), devices=D)
    )
    svg = _parse(x)
    texts = _texts(svg)
    assert len([t for t in texts if t.startswith("x[:, :, ")]) == _svg.MAX_PANELS
    assert f"Showing {_svg.MAX_PANELS} of 16 slabs." in texts
    _check_cells(svg, x)


def test_svg_stays_bounded_for_huge_shapes_and_chunk_counts():
    layout = Layout.grid((200, 200), (100, 100), devices=D)  # 10,000 chunks
    x = mdarray.distributed_array(np.zeros((200, 200), np.int8), layout)
    page = x._repr_html_()
    svg = _parse(x)
    assert len(page) < 400_000
    assert int(svg.get("width")) <= 800
    assert int(svg.get("height")) <= 600
    assert f"10000 chunks on {len(D)} device" in " ".join(_texts(svg))
    long = mdarray.zeros((3, 2_000_000), dtype=np.int8)
    svg = _parse(long)
    assert int(svg.get("width")) <= 800
    assert int(svg.get("height")) <= 600
    assert len(long._repr_html_()) < 100_000


def test_svg_escapes_the_text_it_embeds():
    canvas = _svg_canvas.Canvas()
    nasty = "<script>alert('x')</script> & \"quotes\""
    canvas.text(nasty)
    svg = ET.fromstring(canvas.finish())
    assert [t.text for t in svg.iter(f"{SVG}text")] == [nasty]
    assert svg.find(f".//{SVG}script") is None


def test_several_chunks_per_device_and_many_devices_in_the_legend():
    index_map = two_chunks([slice(0, 2), slice(2, 4), slice(4, 6)], slice(3, 8))
    x = mdarray.distributed_array(np.zeros(8, np.complex64), index_map, "prod")
    legend = _legend(_parse(x))
    if D[0] != D[-1]:
        assert legend[D[0]][1:] == (3, "48 B")
        assert legend[D[-1]][1:] == (1, "40 B")
    else:
        assert legend[D[0]][1:] == (4, "88 B")
    assert len({_look(d) for d in range(36)}) == 36


def test_many_devices_cap_the_legend_and_the_stripes():
    # More devices than a machine here has: the picture needs only the layout, so a
    # stand-in with a DistArray's attributes draws it.
    layout = Layout((3, 4), {d: [()] for d in range(20)})
    x = types.SimpleNamespace(
        layout=layout, shape=(3, 4), ndim=2, size=12, itemsize=8, dtype=np.dtype(np.float64)
    )
    x.mode = mdarray.REPLICA
    svg = ET.fromstring(_svg.svg(x))
    legend = _legend(svg)
    assert sorted(legend) == list(range(_svg.MAX_LEGEND))
    assert "... 4 more devices: 4 chunks, 384 B" in _texts(svg)
    assert _check_cells(svg, x) == 12
    for group in svg.iter(f"{SVG}g"):
        fills = [r.get("fill") for r in group.findall(f"{SVG}rect")]
        assert [f for f in fills if f.startswith("#")] == [
            _svg_canvas.color(d) for d in range(_svg_canvas.MAX_STRIPES)
        ]


@settings(max_examples=20, deadline=None)
@given(
    mst.shapes(min_dims=1, max_dims=3, min_side=13, max_side=45).flatmap(
        lambda s: st.tuples(mst.layouts(s, max_blocks=4), mst.modes(np.int8))
    )
)
@example((Layout.grid((80, 10), (40, 5), devices=D), mdarray.SUM))  # blocks of 2.5 rows
def test_svg_cells_of_longer_axes_cover_blocks_or_chunk_edges(case):
    layout, mode = case
    x = mdarray.distributed_array(np.zeros(layout.shape, np.int8), layout, mode)
    svg = _parse(x)
    cells = _check_cells(svg, x)
    tiles = [g for g in svg.iter(f"{SVG}rect") if g.get("fill", "").startswith("#")]
    assert cells or len(tiles) > _svg.MAX_TOOLTIPS
    width, height = int(svg.get("width")), int(svg.get("height"))
    assert width <= 800
    assert height <= 900


@settings(max_examples=30, deadline=None)
@given(mst.shapes(min_dims=1, max_dims=4, min_side=1, max_side=40).flatmap(mst.layouts))
def test_text_cells_name_the_devices_holding_them(layout):
    x = mdarray.distributed_array(np.zeros(layout.shape, np.int8), layout)
    lines = x.visualize().splitlines()
    legend = {}
    for line in lines:
        for symbol, devices in re.findall(r"(\w) = devices \[([\d, ]*)\]", line):
            legend[symbol] = [int(d) for d in devices.split(", ")]
    rows = _grid_rows("\n".join(lines)) if x.ndim >= 2 else [lines[2].split()]
    held, _ = _oracle(layout)
    drawn = (1, *layout.shape[:1]) if x.ndim == 1 else layout.shape[:2]
    edges = [_visualize.block_edges(drawn[0], 16), _visualize.block_edges(drawn[1], 32)]
    assert [len(r) for r in rows] == [len(edges[1]) - 1] * (len(edges[0]) - 1)
    for (i, (a, b)), (j, (c, d)) in itertools.product(
        enumerate(itertools.pairwise(edges[0])), enumerate(itertools.pairwise(edges[1]))
    ):
        block = (slice(c, d),) if x.ndim == 1 else (slice(a, b), slice(c, d))
        want = [device for device in sorted(held) if held[device][block].any()]
        symbol = rows[i][j]
        assert legend.get(symbol, [int(symbol)] if symbol.isdigit() else None) == want


def _stand_in(layout, dtype=np.float64, mode=mdarray.REPLICA):
    """An object with a DistArray's attributes for a layout over more devices than this
    machine has: the picture needs only the layout."""
    size = int(np.prod(layout.shape))
    x = types.SimpleNamespace(layout=layout, shape=layout.shape, ndim=len(layout.shape))
    x.size, x.dtype, x.itemsize, x.mode = size, np.dtype(dtype), np.dtype(dtype).itemsize, mode
    return x


def test_rows_dealt_over_many_devices_show_as_row_bands():
    rows = 600
    layout = Layout((rows, 50), {d: [(slice(d, rows, 12),)] for d in range(12)})
    svg = ET.fromstring(_svg.svg(_stand_in(layout)))
    shared = 0
    for group in svg.iter(f"{SVG}g"):
        stripes = [r for r in group.findall(f"{SVG}rect") if r.get("fill").startswith("#")]
        assert len({r.get("x") for r in stripes}) == 1  # stacked: row bands
        assert len({r.get("y") for r in stripes}) == len(stripes)
        shared += len(stripes) > 4  # more than the four the picture used to stop at
    assert shared
    assert any("row stripes" in t for t in _texts(svg))
    columns = Layout((50, rows), {d: [(slice(None), slice(d, rows, 12))] for d in range(12)})
    svg = ET.fromstring(_svg.svg(_stand_in(columns)))
    group = next(svg.iter(f"{SVG}g"))
    stripes = [r for r in group.findall(f"{SVG}rect") if r.get("fill").startswith("#")]
    assert len({r.get("y") for r in stripes}) == 1  # side by side: column bands


def test_sixteen_devices_look_different_and_the_patterns_are_defined():
    layout = Layout.block((64, 8), devices=range(16))
    svg = ET.fromstring(_svg.svg(_stand_in(layout)))
    legend = _legend(svg)
    assert sorted(legend) == list(range(16))
    assert len({look for look, _, _ in legend.values()}) == 16
    defined = {p.get("id") for p in svg.iter(f"{SVG}pattern")}
    assert set(_svg_canvas.PATTERNS) <= defined
    assert _check_cells(svg, _stand_in(layout)) == 16 * 8  # a row of cells per chunk


def test_the_size_table_says_the_array_and_its_largest_chunk():
    index_map = two_chunks([slice(0, 6)], slice(6, 10))
    x = mdarray.distributed_array(np.zeros((10, 3), np.float32), index_map, "sum")
    table = ET.fromstring(x._repr_html_())[0]
    cells = [[c.text or "" for c in row] for row in table]
    assert cells[0] == ["", "Array", "Largest chunk"]
    assert cells[1] == ["Bytes", "120 B", "72 B"]
    assert cells[2] == ["Shape", "(10, 3)", "(6, 3)"]
    devices = len(x.layout.devices)
    assert cells[3] == ["Chunks", f"2 on {devices} device{'s' if devices != 1 else ''}", ""]
    assert cells[4] == ["Type", "float32", "mode sum"]
