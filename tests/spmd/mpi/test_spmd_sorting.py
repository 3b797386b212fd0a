"""sort and argsort across processes, on the native path: the sample sort of a split 1-D
array (samples and cut points shared between the processes, each piece's parts moved in
one step), and N-D arrays sorted per chunk along a whole axis."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import mdarray
from mdarray.testing import strategies as mst

from ._spmd import check_value
from .test_spmd_operations import LAYOUTS, layouts, value

N = 40


def layouts_1d():
    """1-D layouts over the run's devices: blocks, uneven blocks in reverse device order,
    strided chunks, and overlapping ones."""
    devices = mdarray.devices()
    count = len(devices)
    bounds = [0, *(N * i * i // count**2 for i in range(1, count)), N]
    uneven = {devices[count - 1 - i]: [slice(bounds[i], bounds[i + 1])] for i in range(count)}
    overlapping: dict = {devices[0]: [slice(0, N // 2 + 3)]}
    for d in devices[1:] or devices[:1]:
        overlapping.setdefault(d, []).append(slice(N // 3, N))
    return {
        "blocks": mdarray.Layout.block((N,)),
        "uneven": mdarray.Layout((N,), uneven),
        "strided": mdarray.Layout((N,), {d: [slice(i, N, count)] for i, d in enumerate(devices)}),
        "overlapping": mdarray.Layout((N,), overlapping),
    }


def data(kind: str) -> np.ndarray:
    generator = np.random.default_rng(50)
    if kind == "ties":
        return generator.integers(0, 4, N).astype(np.float64)
    if kind == "nans and zeros":
        a = generator.integers(-3, 3, N).astype(np.float64)
        a[::7] = np.nan
        a[a == 0] = -0.0
        a[::5] = 0.0
        return a
    return generator.permutation(N).astype(np.int64)


@pytest.mark.parametrize("kind", ["distinct", "ties", "nans and zeros"])
@pytest.mark.parametrize("layout", ["blocks", "uneven", "strided", "overlapping"])
def test_sample_sort_of_a_split_vector(layout, kind):
    a = data(kind)
    x = mdarray.distributed_array(a, layouts_1d()[layout])
    check_value(lambda: np.sort(x), np.sort(a, stable=True), exact=True, native=True)
    check_value(lambda: np.argsort(x), np.argsort(a, stable=True), exact=True, native=True)
    want = np.flip(np.sort(np.flip(a), stable=True))
    check_value(lambda: mdarray.sort(x, descending=True), want, exact=True, native=True)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_sort_of_a_matrix(layout, axis):
    a = value(51)
    x = mdarray.distributed_array(a, layouts()[layout])
    check_value(lambda: np.sort(x, axis=axis), np.sort(a, axis=axis, stable=True), native=True)
    check_value(
        lambda: np.argsort(x, axis=axis), np.argsort(a, axis=axis, stable=True), native=True
    )


@given(st.data())
def test_drawn_vectors(data):
    n = data.draw(st.integers(0, 30))
    a = data.draw(hnp.arrays(np.int64, (n,), elements=st.integers(-5, 5)))
    x = mdarray.distributed_array(a, data.draw(mst.layouts((n,))), data.draw(mst.modes()))
    check_value(lambda: np.sort(x), np.sort(a), exact=True, native=True)
    check_value(lambda: np.argsort(x), np.argsort(a, stable=True), exact=True, native=True)
