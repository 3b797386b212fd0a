"""FFTs and meshgrid across processes, on the native path: a transform along an axis no
chunk splits runs per chunk; along a split axis the array is resharded first (the pencil
transpose), one collective movement."""

import numpy as np
import pytest

import mdarray

from ._spmd import check_value, run
from .test_spmd_operations import LAYOUTS, layouts, value

TRANSFORMS = {
    "fft": np.fft.fft,
    "fft axis 0, n": lambda x: np.fft.fft(x, n=8, axis=0),
    "ifft": lambda x: np.fft.ifft(x, axis=0, norm="ortho"),
    "rfft": lambda x: np.fft.rfft(x, axis=0),
    "irfft": lambda x: np.fft.irfft(x, n=6),
    "hfft": np.fft.hfft,
    "fft2": np.fft.fft2,
    "fftn": lambda x: np.fft.fftn(x, s=(4, 6), axes=(1, 0)),
    "ifftn": np.fft.ifftn,
    "rfftn": np.fft.rfftn,
    "irfft2": np.fft.irfft2,
    "fftshift": np.fft.fftshift,
    "ifftshift axis": lambda x: np.fft.ifftshift(x, axes=1),
    "namespace fftn": lambda x: (
        mdarray.fft.fftn(x) if isinstance(x, mdarray.DistArray) else np.fft.fftn(x)
    ),
}


@pytest.mark.parametrize("case", list(TRANSFORMS))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_transforms(layout, case):
    a = value(70)
    x = mdarray.distributed_array(a, layouts()[layout])
    function = TRANSFORMS[case]
    check_value(lambda: function(x), function(a), native=True)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid(indexing):
    a, b = value(71, shape=(6,)), value(72, shape=(5,))
    x = mdarray.distributed_array(a, mdarray.Layout.block(a.shape))
    y = mdarray.distributed_array(b, {mdarray.devices()[-1]: ()})
    got = run(lambda: np.meshgrid(x, y, indexing=indexing), native=True)
    for g, w in zip(got, np.meshgrid(a, b, indexing=indexing)):
        check_value(g, w, exact=True)
