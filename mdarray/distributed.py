"""Several processes, one array: SPMD over MPI, with NCCL for GPU buffers.

Every process runs the same program, launched with ``mpiexec -n N python -m mpi4py
script.py`` (``-m mpi4py`` makes an uncaught exception abort every process instead of
leaving the others waiting). After `initialize` each process's devices (its virtual CPU
devices, or its GPUs) have global ids, the same on every process: ``mdarray.devices()``
lists all of them, index maps name them, and each process allocates and computes only
the chunks of its own devices (`local_devices`).

Anything that can move data between processes is **collective**: every process calls it,
in the same order (``reshard``, ``change_mode``, reductions that combine, ``get``,
``repr``, indexing that moves data). ``if rank() == 0: print(x)`` therefore hangs: the
other processes never join the gather ``repr`` needs. Use `print` here, which every
process calls and one prints. Bad input is found from the metadata every process shares,
before any message moves, so it raises the same error on every process.
``MDARRAY_CHECK_COLLECTIVES=1`` makes each collective first check that every process is
making the same call.

>>> import mdarray
>>> mdarray.distributed.is_initialized(), mdarray.distributed.rank(), mdarray.distributed.size()
(False, 0, 1)
"""

from __future__ import annotations

import builtins
import os
from typing import TYPE_CHECKING, Any, cast

from ._backends.backend import backend as default_backend_object
from ._runtime.config import MPI_INSTALL, missing
from ._spmd import processes as _processes
from ._spmd.transport import NcclLinks

if TYPE_CHECKING:
    from ._backends.cuda.backend import CudaBackend

__all__ = [
    "finalize",
    "initialize",
    "is_initialized",
    "local_devices",
    "print",
    "rank",
    "size",
]


def initialize(comm: Any = None) -> None:
    """Join the SPMD run of `comm`'s processes (``MPI.COMM_WORLD`` by default).

    Collective: every process of `comm` calls it. Each brings the default backend's
    devices; their global ids run consecutively by rank. On the cuda backend a NCCL
    communicator over every GPU of the run carries GPU data (``MDARRAY_NCCL=0``: MPI
    through host buffers instead). Call it before making arrays: arrays made before it
    name the devices by their single-process ids.
    """
    if comm is None:
        try:
            from mpi4py import MPI  # noqa: PLC0415  (never at import: MPI starts here)
        except ImportError as error:
            raise missing("mpi4py", MPI_INSTALL, "mdarray.distributed") from error

        comm = MPI.COMM_WORLD
    backend = default_backend_object()
    group = _processes.join(comm, backend)
    if backend.name == "cuda" and os.environ.get("MDARRAY_NCCL", "1") != "0":
        backend.nccl = NcclLinks(cast("CudaBackend", backend), group)


def is_initialized() -> bool:
    """Whether `initialize` joined an SPMD run (and `finalize` has not left it)."""
    return _processes.current() is not None


def rank() -> int:
    """This process's rank in the run (0 without `initialize`)."""
    group = _processes.current()
    return 0 if group is None else group.rank


def size() -> int:
    """The number of processes in the run (1 without `initialize`)."""
    group = _processes.current()
    return 1 if group is None else group.size


def local_devices() -> tuple[int, ...]:
    """The global ids of this process's devices (every device without `initialize`)."""
    group = _processes.current()
    return default_backend_object().device_ids if group is None else group.local


def finalize() -> None:
    """Leave the run: the backend gets its own devices back. Collective. Arrays made in
    the run must not be used after it."""
    backend = default_backend_object()
    if getattr(backend, "nccl", None) is not None:
        backend.nccl = None
    _processes.leave(backend)


def print(*values: Any, root: int = 0, **kwargs: Any) -> None:
    """``print(*values)`` on process `root` only; collective.

    Every process formats `values` (a DistArray's ``str`` gathers its values, which every
    process must join), and `root` prints them: the one safe way to print a DistArray
    in an SPMD program.
    """
    text = [str(v) for v in values]
    if rank() == root:
        builtins.print(*text, **kwargs)  # noqa: T201 (its job)
