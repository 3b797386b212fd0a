"""`Stored`: an array as the layers under DistArray see it, its storage and its mode."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ._layout import Layout
from ._modes import Mode
from ._storage import Chunks, reader


class Stored:
    """An array as the layers under DistArray see it: `storage` (a Chunks) and `mode`.

    DistArray is the one subclass; it adds the NumPy and array API protocols. The
    attributes here are what the movement and execution layers and the op modules read.
    """

    __slots__ = ("_mode", "_storage")
    # Set once by DistArray._new.
    _storage: Chunks
    _mode: Mode

    if TYPE_CHECKING:  # the readers below, typed

        @property
        def storage(self) -> Chunks: ...
        @property
        def mode(self) -> Mode: ...
        @property
        def layout(self) -> Layout: ...
        @property
        def dtype(self) -> np.dtype: ...
        @property
        def shape(self) -> tuple[int, ...]: ...

    else:
        storage = reader(
            "_storage", "The chunk buffers, their layout and backend (`mdarray._storage.Chunks`)."
        )
        mode = reader(
            "_mode", "How overlapping copies combine, REPLICA or a partial SUM/PROD/MAX/MIN."
        )
        layout = reader("_storage.layout", "Which device holds which part (an immutable `Layout`).")
        dtype = reader("_storage.dtype", "The data type of the elements.")
        shape = reader("_storage.layout.shape", "The array's dimensions.")

    def signature(self) -> tuple:
        """``(layout, mode, dtype, backend)``: all that a plan made for this array as an
        operand may depend on (`mdarray._ufunc_plans`); never its values."""
        storage = self._storage
        return (storage.layout, self._mode, storage.dtype, storage.backend)

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
