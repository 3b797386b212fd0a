"""Storage: the buffers of one layout on their devices, and who else holds them.

`Chunks` is what a DistArray stores: a `Layout`, a backend, a dtype and one buffer (a
contiguous NumPy or CuPy array) per chunk of the layout, on the chunk's device. It
validates what it is given, keeps *packed* storage (one flat slab per device, the chunks
views into it, so an elementwise op runs one kernel per device), and counts who shares
each buffer, for copy on write:

- Movement hands unchanged buffers to its result instead of copying them (a reshard that
  keeps a chunk in place, a mode change that needs no change). `derive` makes such a
  result and links every buffer it shares with its source to one *share* (a weak set of
  the `Chunks` holding the buffer), so the count follows the holders' lifetimes.
- `writable` copies a buffer another live `Chunks` shares before handing it out, so an
  in-place write never shows through another array. A `Chunks` belongs to one array.

`Stored` is what the layers under DistArray see of an array: its storage and its mode.
DistArray is its one subclass; the execution layer recognizes operands by it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import _regions
from ._layout import Layout, check_devices
from ._modes import Mode


class Chunks:
    """The buffers of `layout` on its devices (see the module docstring).

    Build with `of` (checked buffers), `packed` (slabs), `empty`, `full`, `from_host` or
    `derive` (buffers shared with another Chunks); never mutate `buffers` from outside
    except through `writable`.
    """

    __slots__ = ("__weakref__", "_buffers", "_shares", "_slabs", "backend", "dtype", "layout")

    def __init__(self, layout: Layout, backend, dtype, buffers=None, slabs=None) -> None:
        # Unchecked: the classmethods check what they are given.
        self.layout = layout
        self.backend = backend
        self.dtype = dtype
        self._buffers = buffers
        self._slabs = slabs
        # Per buffer, the weak set of Chunks sharing it, or None where this one alone
        # holds it; None for all when nothing is shared (the common case costs nothing).
        self._shares: list | None = None

    # Construction ---------------------------------------------------------------------

    @classmethod
    def of(cls, layout: Layout, buffers: Sequence, backend, dtype=None) -> Chunks:
        """Chunks holding `buffers` (one per chunk, in layout order), checked: count,
        shapes, dtypes (`dtype` or the first buffer's) and devices."""
        buffers = tuple(buffers)
        if len(buffers) != len(layout.chunks):
            raise ValueError(
                f"layout has {len(layout.chunks)} chunks but {len(buffers)} arrays were given"
            )
        dtype = np.dtype(buffers[0].dtype if dtype is None else dtype)
        check_devices(layout, backend)
        for k, (array, shape, device) in enumerate(
            zip(buffers, layout.chunk_shapes, layout.chunk_devices)
        ):
            if tuple(array.shape) != shape:
                raise ValueError(
                    f"chunk {k} on device {device} has shape {array.shape}, its index needs {shape}"
                )
            if array.dtype != dtype:
                raise TypeError(
                    f"chunk {k} on device {device} has dtype {array.dtype}, the array's is {dtype}"
                )
            where = backend.device_of(array)
            if where is not None and where != device:
                raise ValueError(
                    f"chunk {k} is on device {where}, its index map puts it on device {device}"
                )
        return cls(layout, backend, dtype, buffers)

    @classmethod
    def packed(cls, layout: Layout, slabs: Sequence, backend, dtype, *, check=True) -> Chunks:
        """Packed chunks: one flat slab per device of `layout` (`Layout.packing`), owned by
        the result alone.

        ``check=False`` is for slabs a kernel just made from checked operands of the same
        layout (the elementwise fast path, where the checks would cost a third of a call).
        """
        slabs = tuple(slabs)
        dtype = np.dtype(dtype)
        if check:
            _check_slabs(layout, slabs, dtype, backend)
        return cls(layout, backend, dtype, None, slabs)

    @classmethod
    def empty(cls, layout: Layout, dtype, backend) -> Chunks:
        """Fresh packed chunks with unspecified values."""
        check_devices(layout, backend)
        slabs = tuple(
            backend.empty((total,), dtype, device)
            for device, (_, total) in zip(layout.devices, layout.packing)
        )
        return cls(layout, backend, np.dtype(dtype), None, slabs)

    @classmethod
    def full(cls, layout: Layout, value, dtype, backend) -> Chunks:
        """Fresh packed chunks filled with `value`."""
        check_devices(layout, backend)
        slabs = tuple(
            backend.full((total,), value, dtype, device)
            for device, (_, total) in zip(layout.devices, layout.packing)
        )
        return cls(layout, backend, np.dtype(dtype), None, slabs)

    @classmethod
    def from_host(cls, array, layout: Layout, backend) -> Chunks:
        """Packed chunks holding the parts of `array` (an array native to `backend`, or
        anything `numpy.asarray` takes) that `layout` gives each chunk, copied onto the
        chunks' devices."""
        if not backend.is_native(array):
            array = np.asarray(array)
        out = cls.empty(layout, array.dtype, backend)
        copy_in = backend.from_host if isinstance(array, np.ndarray) else backend.adopt
        for box, device, buffer in zip(layout.boxes, layout.chunk_devices, out.buffers):
            copy_in(array[tuple(_regions.to_slice(r) for r in box)], device, out=buffer)
        return out

    @classmethod
    def generate(cls, layout: Layout, backend, make: Callable[[int], Any], dtype) -> Chunks:
        """Chunks whose buffer `k` is ``make(k)`` (run on chunk k's device), cast to
        `dtype` where given."""
        dtype = None if dtype is None else np.dtype(dtype)
        buffers = []
        for k, device in enumerate(layout.chunk_devices):
            with backend.on(device):
                buffer = make(k)
                if dtype is not None and buffer.dtype != dtype:
                    buffer = buffer.astype(dtype)
                buffers.append(buffer)
        return cls.of(layout, buffers, backend, dtype)

    def derive(self, layout: Layout | None = None, buffers=None, dtype=None) -> Chunks:
        """New Chunks (checked) of `buffers` in `layout` (both default to this one's);
        every buffer that is one of this one's is shared with it (copy on write)."""
        layout = self.layout if layout is None else layout
        buffers = self.buffers if buffers is None else tuple(buffers)
        out = Chunks.of(layout, buffers, self.backend, self.dtype if dtype is None else dtype)
        mine = {id(b): k for k, b in enumerate(self.buffers)}
        for t, buffer in enumerate(out.buffers):
            k = mine.get(id(buffer))
            if k is not None:
                out._join(t, self._share(k))
        return out

    def map(self, fn: Callable, *columns: Sequence, dtype=None) -> Chunks:
        """Fresh Chunks of this layout: buffer k is ``fn(buffer k, *(c[k] for c in
        columns))`` on chunk k's device (cast to `dtype` where the kernel gave another)."""
        on = self.backend.on
        out = []
        for k, (buffer, device) in enumerate(zip(self.buffers, self.layout.chunk_devices)):
            with on(device):
                result = fn(buffer, *(c[k] for c in columns))
                if dtype is not None and result.dtype != dtype:
                    result = result.astype(dtype)
            out.append(result)
        return Chunks.of(self.layout, out, self.backend, dtype)

    # Reading --------------------------------------------------------------------------

    @property
    def buffers(self) -> tuple:
        """The chunk buffers in layout order (views into the slabs of packed chunks)."""
        buffers = self._buffers
        if buffers is None:
            buffers = self._buffers = _unpack(self.layout, self._slabs, self.backend)
        return buffers

    @property
    def slabs(self) -> tuple | None:
        """One flat slab per device of the layout, when packed; else None."""
        return self._slabs

    def shared(self, k: int) -> bool:
        """Whether buffer `k` is held by another live Chunks too."""
        shares = self._shares
        return shares is not None and shares[k] is not None and len(shares[k]) > 1

    # Writing --------------------------------------------------------------------------

    def writable(self, chunks: Sequence[int] | None = None) -> tuple:
        """The buffers, ready to be written in place: each of `chunks` (all by default)
        that another Chunks shares is copied first and stops being shared."""
        shares = self._shares
        if shares is None:
            return self.buffers
        buffers = list(self.buffers)
        copied = False
        for k in range(len(buffers)) if chunks is None else chunks:
            share = shares[k]
            if share is None:
                continue
            share.discard(self)
            shares[k] = None
            if len(share):
                buffers[k] = self.backend.copy(buffers[k], self.layout.chunk_devices[k])
                copied = True
        if copied:
            self._buffers = tuple(buffers)
            self._slabs = None
        if all(s is None for s in shares):
            self._shares = None
        return self.buffers

    def own_slabs(self) -> tuple | None:
        """The slabs of packed chunks when no other Chunks shares a buffer (so they may
        be written in place as a whole); else None."""
        if self._slabs is None:
            return None
        if self._shares is not None and any(self.shared(k) for k in range(len(self._shares))):
            return None
        return self._slabs

    # Sharing --------------------------------------------------------------------------

    def _share(self, k: int) -> weakref.WeakSet:
        if self._shares is None:
            self._shares = [None] * len(self.layout.chunks)
        share = self._shares[k]
        if share is None:
            share = self._shares[k] = weakref.WeakSet([self])
        return share

    def _join(self, k: int, share: weakref.WeakSet) -> None:
        if self._shares is None:
            self._shares = [None] * len(self.layout.chunks)
        share.add(self)
        self._shares[k] = share


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
        """How overlapping copies combine: REPLICA or a partial SUM/PROD/MAX/MIN."""
        return self._mode

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
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return self._storage.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize


def _unpack(layout: Layout, slabs, backend) -> tuple:
    """The chunk views of packed slabs."""
    buffers: list = [None] * len(layout.chunks)
    for slab, device, (entries, _) in zip(slabs, layout.devices, layout.packing):
        with backend.on(device):
            for k, offset, size in entries:
                buffers[k] = slab[offset : offset + size].reshape(layout.chunk_shapes[k])
    return tuple(buffers)


def _check_slabs(layout: Layout, slabs: tuple, dtype, backend) -> None:
    if len(slabs) != len(layout.devices):
        raise ValueError(f"layout has {len(layout.devices)} devices but {len(slabs)} slabs")
    check_devices(layout, backend)
    for slab, device, (_, total) in zip(slabs, layout.devices, layout.packing):
        if slab.shape != (total,) or slab.dtype != dtype:
            raise ValueError(
                f"the slab of device {device} is {slab.dtype}{list(slab.shape)}, "
                f"the layout needs {dtype}[{total}]"
            )
        where = backend.device_of(slab)
        if where is not None and where != device:
            raise ValueError(f"the slab of device {device} is on device {where}")
