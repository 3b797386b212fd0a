"""What an array may be: NumPy's limits on its size, and the byte order chunks hold.

- A shape's sides, and the product of its non-zero sides, must fit in a signed index
  (`extent`); times the item size, so must the bytes of an allocation (`allocatable`).
  NumPy's errors, so ``mdarray.zeros((2**32, 2**32))`` raises as ``numpy.zeros`` does
  instead of making an array whose element count wrapped around.
- Chunks hold the machine's byte order (`native`), as CuPy's arrays do, and as kernels
  give their results: big-endian data from a file format is converted on the way in,
  keeping its values.
"""

from __future__ import annotations

import numpy as np

#: The largest signed index (``numpy.intp``): no array has more elements or bytes.
MAX_INDEX = int(np.iinfo(np.intp).max)

_TOO_BIG = (
    "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size."
)


def extent(shape: tuple[int, ...]) -> int:
    """The product of the non-zero sides of `shape`, which must fit in a signed index, as
    must each side (NumPy's errors)."""
    product = 1
    for n in shape:
        if n > MAX_INDEX:
            raise ValueError("Maximum allowed dimension exceeded")
        product *= n or 1
    if product > MAX_INDEX:
        raise ValueError(_TOO_BIG)
    return product


def native(dtype) -> np.dtype:
    """`dtype` in the machine's byte order (structures' fields too)."""
    dtype = np.dtype(dtype)
    return dtype if dtype.isnative else dtype.newbyteorder("=")


def allocatable(shape_extent: int, dtype: np.dtype) -> np.dtype:
    """`dtype` as chunks hold it (`native`), after NumPy's limit on an array's bytes:
    `shape_extent` (see `extent`) times the item size must fit in a signed index."""
    if shape_extent * dtype.itemsize > MAX_INDEX:
        raise ValueError(_TOO_BIG)
    return native(dtype)
