"""`Stored`: an array as the layers under DistArray see it, its storage and its mode."""

from __future__ import annotations

import math

import numpy as np

from ._layout import Layout
from ._modes import Mode
from ._storage import Chunks


class Stored:
    """An array as the layers under DistArray see it: `storage` (a Chunks) and `mode`.

    DistArray is the one subclass; it adds the NumPy and array API protocols. The
    attributes here are what the movement and execution layers and the op modules read.
    """

    __slots__ = ("_mode", "_storage")
    # Set once by DistArray._new.
    _storage: Chunks
    _mode: Mode

    @property
    def storage(self) -> Chunks:
        """The chunk buffers, their layout and backend (`mdarray._storage.Chunks`)."""
        return self._storage

    @property
    def mode(self) -> Mode:
        """How overlapping copies combine, REPLICA or a partial SUM/PROD/MAX/MIN."""
        return self._mode

    def signature(self) -> tuple:
        """``(layout, mode, dtype, backend)``: all that a plan made for this array as an
        operand may depend on (`mdarray._ufunc_plans`); never its values."""
        storage = self._storage
        return (storage.layout, self._mode, storage.dtype, storage.backend)

    @property
    def layout(self) -> Layout:
        """Which device holds which part (an immutable `Layout`)."""
        return self._storage.layout

    @property
    def dtype(self) -> np.dtype:
        return self._storage.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self._storage.layout.shape

    @property
    def ndim(self) -> int:
        return len(self._storage.layout.shape)

    @property
    def size(self) -> int:
        return math.prod(self._storage.layout.shape)

    @property
    def itemsize(self) -> int:
        return self._storage.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize
