"""Scattering host data from one process: each chunk's box of an array that only process
`src` holds goes to the process of the chunk's device, in one grouped exchange."""

from __future__ import annotations

from typing import Any

import numpy as np

from mdarray._backends.backend import Backend
from mdarray._core import regions as _regions
from mdarray._spmd.processes import owner
from mdarray._spmd.transport import Exchange
from mdarray._storage.chunks import Chunks


def scatter_from(storage: Chunks, src: int, rank: int, native: Any, host: Any) -> None:
    """Fill this process's chunks of `storage` (fresh, of a run's layout) from the array
    of process `src`: there `host` (a host array), or `native` (the backend's own array,
    written device to device where the chunk is `src`'s own); on every other process
    `native` and `host` are None. Collective: every process calls it."""
    backend: Backend = storage.backend
    layout = storage.layout
    exchange = Exchange(backend, host=True)
    # The cpu backend's chunks are host memory: MPI writes them where they are.
    direct = backend.name == "cpu"
    landed = []
    for box, device, buffer in zip(layout.boxes, layout.chunk_devices, storage.buffers):
        holder = owner(device)
        if rank == src:
            part = (*(_regions.to_slice(r) for r in box), ...)  # a view, 0-d ones too
            if holder == rank:
                if native is not None:
                    backend.adopt(native[part], device, out=buffer)
                else:
                    backend.from_host(host[part], device, out=buffer)
            else:
                exchange.send(host[part], holder)
        elif holder == rank:
            if direct:
                exchange.receive(buffer, src)
            else:
                into = np.empty(buffer.shape, storage.dtype)
                exchange.receive(into, src)
                landed.append((into, device, buffer))
    exchange.run()
    for into, device, buffer in landed:
        backend.from_host(into, device, out=buffer)
