"""Pictures of layouts: visualize(), _repr_html_() and the summary in repr()."""

import re

import numpy as np
from _layouts import dist_pairs, two_chunks
from hypothesis import given
from hypothesis import strategies as st

import mdarray
from mdarray import Layout

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
        assert text.splitlines()[1].split() == [str(D[0])] * 4 + ["a"] * 2 + [str(D[-1])] * 4
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
    page = x._repr_html_()
    assert page.startswith("<div>")
    assert page.endswith("</div>")
    assert f"mode={x.mode}" in page
    if x.size:
        assert page.count("<tr>") == len(_grid_rows(text)) or x.ndim < 2
        assert "background:" in page
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
