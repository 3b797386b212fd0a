"""Moving array pieces between processes: one grouped exchange per movement step.

A movement step (a reshard, a combine, a gather to the host) walks its plan in the same
order on every process. Where a piece crosses processes, the holder calls `Exchange.send`
and the receiver `Exchange.receive` (with the view to fill), so both list the pieces of a
pair of processes in the same order; `Exchange.run` then moves them all at once:

- **MPI** (host memory and the cpu backend's NumPy chunks): one message per pair of
  processes and direction, whatever the number of pieces. The pieces, strided views
  included, are described to MPI as one derived datatype at their own addresses, so MPI
  reads and writes them in place: no packing copy on either side. Runs longer than MPI's
  count limit are split.
- **NCCL** (the cuda backend's CuPy chunks): one NCCL group of sends and receives on the
  chunks' streams, over a communicator of every GPU of the run (`NcclLinks`), whose
  unique id is broadcast over MPI when the run starts.
- CuPy chunks without NCCL go through host buffers and MPI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from mdarray._backends.backend import Backend
from mdarray._core import debug as _debug

from . import processes as _processes

if TYPE_CHECKING:  # NCCL links exist only on the cuda backend, whose own members they use
    from mdarray._backends.cuda.backend import CudaBackend

# MPI counts are C ints: a contiguous run of more bytes is described in parts.
COUNT_LIMIT = (1 << 31) - 1
# One tag for the library's messages: its communicator is its own, and MPI keeps the
# order of the messages of one pair, which is the order both sides listed the pieces.
_TAG = 7


class Exchange:
    """The pieces one movement step moves between processes (see the module docstring).

    `host`: the pieces are host (NumPy) arrays whatever the backend; else they are chunk
    arrays of `backend` on the devices named in each call.
    """

    def __init__(self, backend: Backend, host: bool = False) -> None:
        self.backend = backend
        self.host = host
        # Per peer rank: (array, device, the device at the other end), in listing order.
        self.sends: dict[int, list[tuple[Any, Any, Any]]] = {}
        self.receives: dict[int, list[tuple[Any, Any, Any]]] = {}

    def send(self, piece, rank: int, device: int | None = None, to_device: int | None = None):
        """Send `piece` (on `device`, or host memory) to process `rank` (to `to_device`
        there, for NCCL)."""
        if piece.size:
            self.sends.setdefault(rank, []).append((piece, device, to_device))
            if device is not None and to_device is not None:
                _debug.record_transfer(device, to_device, piece.nbytes)

    def receive(self, into, rank: int, device: int | None = None, from_device: int | None = None):
        """Fill `into` (an array or view on `device`, or host memory) with the piece that
        process `rank` sends (from `from_device` there, for NCCL)."""
        if into.size:
            self.receives.setdefault(rank, []).append((into, device, from_device))

    def run(self) -> None:
        """Move every piece listed; returns when the received ones are in place and the
        sent ones may be reused. In an SPMD run every process runs each step's exchange,
        with pieces or without: it starts with an agreement round (`Group.ready`), so a
        process whose call failed before the step makes the others raise here instead of
        leaving them waiting for its pieces."""
        group = _processes.current()
        if group is None:
            assert not self.sends, "pieces cross processes only in an SPMD run"
            assert not self.receives, "pieces cross processes only in an SPMD run"
            return
        group.ready()
        if not self.sends and not self.receives:
            return
        if self.host or self.backend.name == "cpu":
            _mpi_exchange(group.comm, self.sends, self.receives)
        elif getattr(self.backend, "nccl", None) is not None:
            self.backend.nccl.exchange(self.backend, self.sends, self.receives)
        else:
            _staged_exchange(self.backend, group.comm, self.sends, self.receives)


def _mpi_exchange(comm, sends: dict, receives: dict) -> None:
    """One nonblocking message per peer and direction, each piece read or written in
    place through a derived datatype."""
    from mpi4py import MPI  # noqa: PLC0415  (lazy: MPI only in an SPMD run)

    types: list = []
    requests = []
    for rank in sorted(receives):
        message = _message(MPI, [p for p, _, _ in receives[rank]], types)
        requests.append(comm.Irecv(message, source=rank, tag=_TAG))
    for rank in sorted(sends):
        message = _message(MPI, [p for p, _, _ in sends[rank]], types)
        requests.append(comm.Isend(message, dest=rank, tag=_TAG))
    try:
        MPI.Request.Waitall(requests)
    finally:
        for datatype in types:
            datatype.Free()


def _message(MPI, arrays: list, types: list) -> list:
    """One MPI message spec covering `arrays` (NumPy arrays, any strides): a committed
    struct datatype of their places relative to the first, over a buffer at that
    address; every datatype made is added to `types`, to be freed. (Relative, not from
    ``MPI.BOTTOM``: MPICH moves the same strided datatype 3-6x slower from BOTTOM.)"""
    base = arrays[0].ctypes.data
    parts = [_layout_type(MPI, a, types) for a in arrays]
    struct = MPI.Datatype.Create_struct(
        [1] * len(arrays), [a.ctypes.data - base for a in arrays], parts
    ).Commit()
    types.append(struct)
    return [MPI.buffer.fromaddress(base, 0), 1, struct]


def _layout_type(MPI, array: np.ndarray, types: list):
    """A datatype for the bytes of `array` from its first element: the contiguous
    trailing axes as one run of bytes, each other axis an hvector of its stride."""
    axes = list(zip(array.shape, array.strides))
    run = array.itemsize
    while axes and (axes[-1][0] == 1 or axes[-1][1] == run):
        n, _ = axes.pop()
        run *= n
    datatype = _bytes_type(MPI, run, types)
    for n, stride in reversed(axes):
        if n == 1:
            continue
        datatype = datatype.Create_hvector(n, 1, stride)
        types.append(datatype)
    return datatype


def _bytes_type(MPI, n: int, types: list):
    """`n` contiguous bytes as one datatype, in parts of at most `COUNT_LIMIT` bytes."""
    if n <= COUNT_LIMIT:
        datatype = MPI.BYTE.Create_contiguous(n)
        types.append(datatype)
        return datatype
    blocks, rest = divmod(n, COUNT_LIMIT)
    block = MPI.BYTE.Create_contiguous(COUNT_LIMIT)
    whole = block.Create_contiguous(blocks)
    types.extend((block, whole))
    if not rest:
        return whole
    tail = MPI.BYTE.Create_contiguous(rest)
    datatype = MPI.Datatype.Create_struct([1, 1], [0, blocks * COUNT_LIMIT], [whole, tail])
    types.extend((tail, datatype))
    return datatype


def _staged_exchange(backend: Backend, comm, sends: dict, receives: dict) -> None:
    """Device pieces through host buffers and MPI (CuPy chunks without NCCL)."""
    host_sends: dict = {}
    for rank, pieces in sends.items():
        staged = []
        for piece, device, to_device in pieces:
            host = backend.host_empty(piece.shape, piece.dtype)
            backend.to_host_into(host, piece, device)
            staged.append((host, None, to_device))
        host_sends[rank] = staged
    backend.synchronize()
    host_receives = {
        rank: [(np.empty(into.shape, into.dtype), None, None) for into, _, _ in pieces]
        for rank, pieces in receives.items()
    }
    _mpi_exchange(comm, host_sends, host_receives)
    for rank, pieces in receives.items():
        for (into, device, _), (host, _, _) in zip(pieces, host_receives[rank]):
            with backend.on(device):
                into[...] = backend.from_host(host, device)


class NcclLinks:
    """One NCCL communicator per local GPU, over every GPU of the run (rank = global
    device id), bootstrapped by broadcasting NCCL's unique id over MPI."""

    def __init__(self, backend: CudaBackend, group) -> None:
        from cupy.cuda import nccl  # noqa: PLC0415  (lazy: CuPy is optional)

        self._nccl = nccl
        uid = nccl.get_unique_id() if group.rank == 0 else None
        uid = group.bcast(uid, root=0)
        self.comms: dict[int, Any] = {}
        nccl.groupStart()
        for device in group.local:
            with backend._cupy.cuda.Device(backend.ordinal(device)):
                self.comms[device] = nccl.NcclCommunicator(len(group.device_ids), uid, device)
        nccl.groupEnd()

    def allreduce(self, backend: CudaBackend, pairs: dict, combine, dtype) -> None:
        """One NCCL all-reduce over ``{local device: (send, receive)}`` (contiguous CuPy
        arrays of one size, every GPU of the run taking part), on the devices' streams:
        every `receive` gets the sends combined."""
        self._reduce("allReduce", backend, pairs, combine, dtype)

    def reduce_scatter(self, backend: CudaBackend, pairs: dict, combine, dtype) -> None:
        """One NCCL reduce-scatter over ``{local device: (send, receive)}`` (contiguous
        CuPy arrays, every GPU of the run taking part): GPU r's `receive` gets part r of
        the sends combined, each send holding one part of ``receive.size`` items per GPU."""
        self._reduce("reduceScatter", backend, pairs, combine, dtype)

    def _reduce(self, call: str, backend: CudaBackend, pairs: dict, combine, dtype) -> None:
        nccl = self._nccl
        found = nccl_op(combine, dtype)
        assert found is not None, "the caller checks nccl_op first"
        op, kind, per_item = found
        group = _processes.current()
        assert group is not None, "NCCL links exist only in an SPMD run"
        group.ready()
        nccl.groupStart()
        try:
            for device, (send, receive) in pairs.items():
                getattr(self.comms[device], call)(
                    send.data.ptr, receive.data.ptr, receive.size * per_item,
                    getattr(nccl, kind), getattr(nccl, op), backend.stream(device).ptr,
                )  # fmt: skip
        finally:
            nccl.groupEnd()

    def exchange(self, backend: CudaBackend, sends: dict, receives: dict) -> None:
        """Every piece as one NCCL send or receive, all in one group, on the streams of
        the pieces' devices; non-contiguous receives land in a buffer first."""
        cupy = backend._cupy
        nccl = self._nccl
        landing = []
        keep = []
        nccl.groupStart()
        try:
            for pieces in sends.values():
                for piece, device, to_device in pieces:
                    with backend.on(device):
                        data = cupy.ascontiguousarray(piece)
                    keep.append(data)
                    self.comms[device].send(
                        data.data.ptr, data.nbytes, nccl.NCCL_UINT8, to_device,
                        backend.stream(device).ptr,
                    )  # fmt: skip
            for pieces in receives.values():
                for into, device, from_device in pieces:
                    target = into
                    if not into.flags.c_contiguous:
                        with backend.on(device):
                            target = cupy.empty(into.shape, into.dtype)
                        landing.append((into, target, device))
                    self.comms[device].recv(
                        target.data.ptr, target.nbytes, nccl.NCCL_UINT8, from_device,
                        backend.stream(device).ptr,
                    )  # fmt: skip
        finally:
            nccl.groupEnd()
        for into, target, device in landing:
            with backend.on(device):
                into[...] = target
        # The sent copies must live until their sends finish.
        backend.synchronize({d for pieces in sends.values() for _, d, _ in pieces})


def allreduce_op(combine, dtype):
    """The MPI operation that combines NumPy arrays of `dtype` as the ufunc `combine`
    does, or None: sums and products of numbers MPI has a type for (not float16), and
    the maximum and minimum of integers (of floats MPI's leave NaN unspecified)."""
    from mpi4py import MPI  # noqa: PLC0415  (lazy: MPI only in an SPMD run)

    dtype = np.dtype(dtype)
    if dtype.kind not in "iufc" or dtype == np.float16 or dtype.itemsize > 16:
        return None
    if dtype.kind in "fc" and dtype.itemsize > (16 if dtype.kind == "c" else 8):
        return None  # long double
    ops = {"add": MPI.SUM, "multiply": MPI.PROD}
    if dtype.kind in "iu":
        ops |= {"maximum": MPI.MAX, "minimum": MPI.MIN}
    return ops.get(_ufunc_name(combine))


def _ufunc_name(ufunc) -> str:
    """NumPy's name of a NumPy or CuPy ufunc (CuPy's are ``cupy_add`` ...)."""
    return getattr(ufunc, "__name__", "").removeprefix("cupy_")


# NCCL's element types by NumPy dtype (complex as pairs of its real type, for sums).
_NCCL_TYPES = {
    "int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32",
    "uint32": "NCCL_UINT32", "int64": "NCCL_INT64", "uint64": "NCCL_UINT64",
    "float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64",
}  # fmt: skip


def nccl_op(combine, dtype) -> tuple[str, str, int] | None:
    """``(operation, element type, elements per item)`` of the NCCL all-reduce that
    combines arrays of `dtype` as the ufunc `combine` does, or None: sums and products
    of real numbers, sums of complex ones (pairs of reals), maxima and minima of integers
    (NCCL's leave NaN unspecified). Names of `cupy.cuda.nccl`'s constants."""
    dtype = np.dtype(dtype)
    name = _ufunc_name(combine)
    if dtype.kind == "c":
        real = np.dtype(dtype.char.lower()).name
        return ("NCCL_SUM", _NCCL_TYPES[real], 2) if name == "add" and real in _NCCL_TYPES else None
    kind = _NCCL_TYPES.get(dtype.name)
    ops = {"add": "NCCL_SUM", "multiply": "NCCL_PROD"}
    if dtype.kind in "iu":
        ops |= {"maximum": "NCCL_MAX", "minimum": "NCCL_MIN"}
    op = ops.get(name)
    return None if kind is None or op is None else (op, kind, 1)
