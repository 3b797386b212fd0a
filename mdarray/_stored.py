"""`Stored`: an array as the layers under DistArray see it, its storage and its mode."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ._backend import DeviceSet
from ._layout import Layout
from ._modes import Mode
from ._storage import Chunks

_S = TypeVar("_S", bound="Stored")


class Stored:
    """An array as the layers under DistArray see it: `storage` (a Chunks) and `mode`.

    DistArray is the one subclass; it adds the NumPy and array API protocols. The
    attributes here are what the movement and execution layers and the op modules read.
    """

    __slots__ = ("_mode", "_storage")
    # Set once by DistArray._new.
    _storage: Chunks
    _mode: Mode
    # DistArray's: its one constructor and its device group (None until first asked).
    _new: Callable[[Chunks, Mode], Any]
    _group: DeviceSet | None

    # Copies and pickles: of the value (storage and mode), never attribute by attribute.

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        # The storage pickles as its value, each allocation once (`Chunks.__reduce__`).
        group = self._storage.layout.devices if self._group is None else tuple(self._group)
        return (_unpickled, (type(self), self._storage, self._mode, group))

    def __copy__(self: _S) -> _S:
        # A copy, as NumPy's and CuPy's: writes through either never reach the other.
        return self.__deepcopy__(None)

    def __deepcopy__(self: _S, memo: dict[int, Any] | None) -> _S:
        out = self._new(self._storage.copied(memo), self._mode)
        out._group = self._group
        return out

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


def _unpickled(kind: type[Stored], storage: Chunks, mode: Mode, group: tuple[int, ...]) -> Any:
    """An unpickled array of `kind`: its device group keeps the pickled one's devices that
    exist here (its chunks' devices all do, or unpickling raised naming those missing)."""
    out = kind._new(storage, mode)
    backend = storage.backend
    present = tuple(d for d in group if d in backend.device_ids)
    if present != storage.layout.devices:
        out._group = DeviceSet(present, backend.name)
    return out
