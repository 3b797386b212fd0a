"""The cpu backend's pool of large result buffers, reused once no array references them.

glibc serves an allocation of 32 MiB or more (its largest moving mmap threshold, which
`_cpu_backend.keep_freed_memory` sets) with a fresh mapping whose pages the kernel faults
and zeroes on first touch, and unmaps it when freed: a device slab of 4096x1024 float64
(exactly 32 MiB, a quarter of 4096x4096) is one. ``a + b`` over four such slabs took
16.7 ms with fresh results and 10.0 ms writing into existing ones on one thread (11.7
and 8.6 ms on the device threads), about 530 page faults per slab. So the elementwise
fast path takes such results from here: a block is handed out again only when the pool
holds the last reference to it (``sys.getrefcount``: every NumPy view of a block keeps
it alive through its ``base``), and a device's pool holds at most `limit` bytes (a
request past it gets a plain new array). `CpuBackend.pool_bytes` reports it to
`mdarray.memory_report` (used: blocks some array holds; total: all the pool's).
"""

from __future__ import annotations

import sys
import threading

import numpy as np

#: Results of fewer bytes come from NumPy's allocator (glibc keeps them warm).
MIN_BYTES = (32 << 20) - 64
_FREE = 3  # a free block's references in `take`'s loop (see there)
#: Bytes a device's pool may hold (``MDARRAY_CPU_POOL_BYTES``; 0: no pool).
LIMIT = 128 << 20


class ResultPool:
    """Per device, blocks of at least `MIN_BYTES` reused for results of the same size."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self._blocks: dict[int, list[np.ndarray]] = {}
        self._lock = threading.Lock()  # devices' threads take from their own lists

    def wants(self, nbytes: int) -> bool:
        """Whether a result of `nbytes` should come from `take`."""
        return self.limit >= nbytes >= MIN_BYTES

    def take(self, device: int, shape: tuple, dtype: np.dtype) -> np.ndarray:
        """An uninitialized C-contiguous array of `shape` and `dtype` for a result on
        `device`: a free block of its size where the pool has one, else a new block
        (kept where the device's pool has room, dropping free blocks of other sizes
        first), else a plain array."""
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        with self._lock:
            blocks = self._blocks.setdefault(device, [])
            held = 0
            for block in blocks:
                # References: the list's, `block`'s and getrefcount's argument: no array
                # holds it (each NumPy view of it holds one more, through its base).
                if block.nbytes == nbytes and sys.getrefcount(block) == _FREE:
                    return block.view(dtype).reshape(shape)
                held += block.nbytes
            for block in tuple(blocks):  # room made from free blocks of other sizes
                if held + nbytes <= self.limit:
                    break
                if sys.getrefcount(block) == _FREE + 1:  # and the tuple's
                    blocks.remove(block)
                    held -= block.nbytes
            if held + nbytes > self.limit:
                return np.empty(shape, dtype)
            block = np.empty(nbytes, np.uint8)
            blocks.append(block)
        return block.view(dtype).reshape(shape)

    def figures(self, device: int) -> tuple[int, int]:
        """``(used, total)`` bytes of `device`'s pool: blocks an array holds, all blocks."""
        used = total = 0
        with self._lock:
            for block in self._blocks.get(device, ()):
                total += block.nbytes
                if sys.getrefcount(block) > _FREE:
                    used += block.nbytes
        return used, total

    def clear(self) -> None:
        """Forget every block (those arrays hold stay theirs)."""
        with self._lock:
            self._blocks.clear()
