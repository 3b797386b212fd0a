"""Device blocks launched in place: a decided elementwise call over operands whose device
blocks agree (`ufunc_fast.block_call`), run again with no view made of any block.

A device block of a packed array, or of a selection of one (``p[:-1, :]``, ``y[1:, :]``),
lies in a slab at a fixed distance from the slab's start, with fixed strides: the
selection's plan (its block keys) decides both. Where the backend launches its kernels on
memory by pointer (`Backend.block_launch`), the first call binds a kernel per device to
its blocks and notes each block's distance into its slab; a repeated call reads the slabs'
pointers and launches. CuPy's views of the blocks and its ufunc's argument handling cost
more host time than the kernel they feed (a CG iteration's shifted updates). Whatever does
not hold as it did at the first call (another selection's keys, a source gone, memory
shared with ``out``) goes the blocks' way, which answers every case.
"""

from __future__ import annotations

from mdarray._array.array import wrap
from mdarray._backends.backend import Backend
from mdarray._exec.chunkwise import blocks
from mdarray._storage import local as _this_process
from mdarray._storage.chunks import Chunks


class Placed:
    """A decided call's launches on its device blocks by pointer (see the module
    docstring); `call` gives None where the blocks' way must run instead."""

    __slots__ = ("_backend", "_dtype", "_kernel", "_layout", "bound")

    def __init__(self, kernel, layout, backend: Backend, dtype) -> None:
        self._kernel, self._layout, self._backend, self._dtype = kernel, layout, backend, dtype
        # What `bind` made, set at once (threads share runners): per device the kernel
        # bound to its blocks; per operand (then per out) its keys, None for a scalar; per
        # device per operand the block's bytes into its slab.
        self.bound: tuple | None = None

    def call(self, operands: list, out) -> object | None:
        """The call on `operands` (Chunks and scalars) into `out` (DistArrays, written in
        place: the caller decided so) or a new result; None where it did not run."""
        state = self.bound
        if state is None or not _this_process.ALL_HERE:
            return None
        launches, all_keys, all_offsets = state
        for o in out or ():
            o.storage.make_writable()  # (copies first where others share the memory)
        storages = list(operands)
        if out is not None:
            written = [o.storage for o in out]
            for x in operands:  # memory meeting out's other than out itself: the blocks' way
                if type(x) is Chunks:
                    for w in written:
                        if x is not w and not x.apart_from(w):
                            return None
            storages += written
        slabs: list = []
        for x, keys in zip(storages, all_keys):
            if keys is None:
                slabs.append(None)
                continue
            got = x.slab_source()
            if got is None or got[1] is not keys:
                return None
            slabs.append(got[0].slabs)
        count = len(operands)
        on, pointer, results = self._backend.on, self._backend.pointer, []
        for d, (device, bound, offsets) in enumerate(
            zip(self._layout.devices, launches, all_offsets)
        ):
            args = [
                x if s is None else pointer(s[keys[d][0]]) + offset
                for x, s, keys, offset in zip(storages, slabs, all_keys, offsets)
            ]
            with on(device):
                if out is None:
                    result = bound.slab()
                    target = pointer(result)
                    results.append(result)
                else:
                    target = args[count]
                if not bound.into(args[:count], target):
                    # A scalar the loop's type cannot hold: the same on every device, so
                    # the first refused before anything ran.
                    return None
        if out is not None:
            return out[0]
        return wrap(Chunks.packed(self._layout, results, self._backend, self._dtype, check=False))

    def bind(self, operands: list, out) -> bool:
        """Bind a kernel per device to the blocks of `operands` (and `out`), as they are
        now (a call that ran the blocks' way); False where some device's blocks do not
        take a launch by pointer."""
        if not _this_process.ALL_HERE or (out is not None and len(out) != 1):
            return False
        storages = list(operands) + [o.storage for o in out or ()]
        columns: list = []
        keys: list = []
        for x in storages:
            if type(x) is not Chunks:
                columns.append(None)
                keys.append(None)
                continue
            got = x.slab_source()
            column = blocks(x)
            if got is None or column is None:
                return False
            columns.append((column, got[0].slabs, got[1]))
            keys.append(got[1])
        count, pointer = len(operands), self._backend.pointer
        bound, offsets = [], []
        for d, device in enumerate(self._layout.devices):
            args = [x if c is None else c[0][d] for x, c in zip(storages, columns)]
            with self._backend.on(device):
                launch = self._backend.block_launch(
                    self._kernel, args[:count], None if out is None else tuple(args[count:])
                )
            if launch is None or (out is None and launch.dtype != self._dtype):
                return False
            bound.append(launch)
            offsets.append(
                tuple(
                    0 if c is None else pointer(c[0][d]) - pointer(c[1][c[2][d][0]])
                    for c in columns
                )
            )
        self.bound = (tuple(bound), tuple(keys), tuple(offsets))
        return True
