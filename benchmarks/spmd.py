"""Several processes: reshard and a reduction across MPI processes against raw mpi4py.

Launch with one process per device (here the cpu backend, one virtual device each):

    MDARRAY_CPU_DEVICES=1 mpiexec -n 4 python -m mpi4py -m benchmarks.spmd

Figures (names for --only):

- ``reshard``: a float64 array (256 MiB by default, ``--size`` MiB), row blocks -> column
  blocks (``Layout.block(shape, axis=0)`` -> ``axis=1``), one block per process, against
  one ``MPI.Alltoallv`` of the same pieces from and into contiguous buffers prepared
  before the clock starts (each process's row block already cut in its column pieces):
  the raw exchange with no packing or unpacking at all. A second raw row moves the same
  pieces with nonblocking sends and receives through derived datatypes straight into a
  new column block (what mdarray's transport does, without the library around it).
- ``sum``: ``mdarray.sum(x, axis=0)`` of the same array, a partial result in SUM mode, then
  ``change_mode("replica")``, against ``np.sum(block, axis=0)`` and ``comm.Allreduce``.
- ``scatter``: partial copies of the whole array (SUM mode, one per process) resharded to
  row blocks and to column blocks, against one ``comm.Reduce_scatter`` of a send buffer
  packed before the clock starts (throughput: the array's bytes over the time).

Each repeat starts at a ``comm.Barrier()`` and is timed by ``MPI.Wtime`` on every process;
a repeat's time is the slowest process's. The library's runs and the raw runs alternate,
after warm-up, and the table gives the medians. Throughput is the bytes that cross
processes (the same for both) over that time. The table is printed by rank 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import platform
import statistics
import sys
import traceback
from pathlib import Path

import numpy as np

import mdarray
from mdarray import distributed

from ._harness import ms


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=float, default=256, help="array size in MiB (256)")
    parser.add_argument("--repeat", type=int, default=10, help="timed runs per figure (10)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed runs first (2)")
    parser.add_argument("--json", help="also write the raw figures to this file (rank 0)")
    parser.add_argument("--only", nargs="*", help="run only the figures with these names")
    return parser.parse_args()


class Case:
    """What every figure shares: the communicator, the host array (the same on every
    process), the two layouts (one block per process) and the array in row blocks."""

    def __init__(self, comm, size_mib: float) -> None:
        self.comm = comm
        self.rank, self.procs = comm.Get_rank(), comm.Get_size()
        # (n, 2n) float64 of about size_mib MiB: 4096 x 8192 for 256 MiB.
        n = max(self.procs, int(math.sqrt(size_mib * 2**20 / 16)))
        self.shape = (n, 2 * n)
        # One device per process (the first of each), whatever MDARRAY_CPU_DEVICES says.
        self.devices = [int(d) for d in comm.allgather(distributed.local_devices()[0])]
        self.host = np.random.default_rng(0).standard_normal(self.shape)
        self.rows_layout = mdarray.Layout.block(self.shape, axis=0, devices=self.devices)
        self.cols_layout = mdarray.Layout.block(self.shape, axis=1, devices=self.devices)
        # The blocks' bounds, as Layout.block cuts them (checked against its chunks).
        self.row_cuts = _cuts(self.rows_layout, 0)
        self.col_cuts = _cuts(self.cols_layout, 1)
        self.x = mdarray.distributed_array(self.host, self.rows_layout)

    def rows(self, p: int) -> slice:
        return slice(self.row_cuts[p], self.row_cuts[p + 1])

    def cols(self, p: int) -> slice:
        return slice(self.col_cuts[p], self.col_cuts[p + 1])

    @property
    def label(self) -> str:
        return f"{self.shape[0]}x{self.shape[1]} float64 ({self.host.nbytes / 2**20:.0f} MiB)"

    def crossing_bytes(self) -> int:
        """Bytes of the reshard that change process: every piece but the diagonal ones."""
        total = 0
        for i in range(self.procs):
            for j in range(self.procs):
                if i != j:
                    rows = self.row_cuts[i + 1] - self.row_cuts[i]
                    cols = self.col_cuts[j + 1] - self.col_cuts[j]
                    total += rows * cols * self.host.itemsize
        return total

    def local_chunk(self, array) -> np.ndarray:
        """The chunk of `array` on this process's device (one block per process)."""
        return array.all_chunks()[self.devices[self.rank]][0]


def _cuts(layout, axis: int) -> list[int]:
    """The block bounds along `axis` of `layout` (one chunk per device, in device order)."""
    starts = sorted((box[axis].start, box[axis].stop) for box in _boxes(layout))
    return [starts[0][0]] + [stop for _, stop in starts]


def _boxes(layout):
    return [index for indices in layout.index_map.values() for index in indices]


def alternating(comm, fns, repeat: int, warmup: int) -> list[float]:
    """Median seconds of each of `fns`, their runs alternating; a run is timed from a
    barrier on every process and counts as the slowest process's time."""
    from mpi4py import MPI

    for _ in range(warmup):
        for fn in fns:
            comm.Barrier()
            fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            comm.Barrier()
            start = MPI.Wtime()
            fn()
            elapsed = MPI.Wtime() - start
            times[k].append(comm.allreduce(elapsed, op=MPI.MAX))
    return [statistics.median(t) for t in times]


def agree(comm, ok: bool, what: str) -> None:
    """Raise on every process unless `ok` on every process."""
    if not all(comm.allgather(bool(ok))):
        raise AssertionError(f"{what} gave a wrong value")


def gbps(nbytes: int, seconds: float) -> str:
    return f"{nbytes / seconds / 1e9:.2f} GB/s"


class Table:
    """Rows of the table (rank 0 prints it); a failing figure records its error."""

    def __init__(self, comm) -> None:
        self.comm = comm
        self.rows: list[tuple[str, ...]] = []
        self.records: list[dict] = []

    def add(self, work, raw, ours, vs, **figures) -> None:
        self.rows.append((work, raw, ours, vs))
        self.records.append({"work": work, **figures})
        if self.comm.Get_rank() == 0:
            print(f"  {work}: {raw} | {ours} | {vs}", file=sys.stderr)

    def attempt(self, name: str, fn) -> None:
        try:
            fn(self)
        except Exception as error:  # a missing operation must not stop the other figure
            if self.comm.Get_rank() == 0:
                traceback.print_exc()
            reason = f"{type(error).__name__}: {error}".replace("|", "/").splitlines()[0][:120]
            self.add(name, "—", f"failed ({reason})", "—")

    def markdown(self, case: Case) -> str:
        import mpi4py
        from mpi4py import MPI

        library = " ".join(MPI.Get_library_version().splitlines()[0].split()).replace(
            " Version:", ""
        )
        setting = (
            f"{dt.date.today().isoformat()}, {case.procs} processes x 1 device "
            f"(backend `{mdarray.default_backend()}`), {library}, mpi4py {mpi4py.__version__}, "
            f"NumPy {np.__version__}, Python {platform.python_version()}."
        )
        head = [
            "### Several processes: reshard and sum against raw mpi4py",
            "",
            setting,
            "",
            "| work | raw mpi4py | mdarray | mdarray / raw (target) |",
            "|---|---|---|---|",
        ]
        return "\n".join(head + ["| " + " | ".join(r) + " |" for r in self.rows])


def bench_reshard(case: Case, table: Table, repeat: int, warmup: int) -> None:
    from mpi4py import MPI

    comm, r, procs = case.comm, case.rank, case.procs
    block = case.host[case.rows(r)]
    widths = [case.col_cuts[j + 1] - case.col_cuts[j] for j in range(procs)]
    heights = [case.row_cuts[i + 1] - case.row_cuts[i] for i in range(procs)]
    # Raw, contiguous: the row block already cut in its column pieces, and a receive
    # buffer, both made before the clock starts.
    send = np.concatenate(
        [np.ascontiguousarray(block[:, case.cols(j)]).ravel() for j in range(procs)]
    )
    send_counts = [heights[r] * w for w in widths]
    recv_counts = [h * widths[r] for h in heights]
    recv = np.empty(sum(recv_counts))
    send_spec = [send, (send_counts, _displacements(send_counts)), MPI.DOUBLE]
    recv_spec = [recv, (recv_counts, _displacements(recv_counts)), MPI.DOUBLE]

    def raw_contiguous():
        comm.Alltoallv(send_spec, recv_spec)

    # Raw, in place: derived datatypes read the pieces out of the row block and write
    # them into a new column block (made on the clock, as the library makes its result).
    def raw_in_place():
        out = np.empty((case.shape[0], widths[r]))
        types, requests = [], []
        for i in range(procs):
            if i != r:
                into = out[case.rows(i)]  # contiguous rows of the column block
                requests.append(comm.Irecv([into, MPI.DOUBLE], source=i, tag=11))
        for j in range(procs):
            if j != r:
                piece = MPI.DOUBLE.Create_subarray(
                    [heights[r], case.shape[1]], [heights[r], widths[j]], [0, case.col_cuts[j]]
                ).Commit()
                types.append(piece)
                requests.append(comm.Isend([block, 1, piece], dest=j, tag=11))
        out[case.rows(r)] = block[:, case.cols(r)]
        MPI.Request.Waitall(requests)
        for t in types:
            t.Free()
        return out

    def ours():
        return case.x.reshard(case.cols_layout)

    # Checks, once: every process's column block.
    raw_contiguous()
    pieces = np.split(recv, np.cumsum(recv_counts)[:-1])
    expected = case.host[:, case.cols(r)]
    ok = all(
        np.array_equal(p.reshape(heights[i], widths[r]), expected[case.rows(i)])
        for i, p in enumerate(pieces)
    )
    agree(comm, ok, "the raw Alltoallv")
    agree(comm, np.array_equal(raw_in_place(), expected), "the raw in-place exchange")
    with mdarray.count_transfers() as moved:
        y = ours()
    agree(comm, np.array_equal(case.local_chunk(y), expected), "mdarray's reshard")
    del y
    sent = comm.allreduce(sum(n for (s, d), n in moved.bytes.items() if s != d), op=MPI.SUM)
    crossing = case.crossing_bytes()

    t_raw, t_place, t_ours = alternating(comm, [raw_contiguous, raw_in_place, ours], repeat, warmup)
    moved_label = f"{crossing / 2**20:.0f} MiB cross processes"
    table.add(
        f"reshard row blocks -> column blocks, {case.label}, {moved_label}",
        f"{ms(t_raw)}, {gbps(crossing, t_raw)} (Alltoallv, contiguous buffers)",
        f"{ms(t_ours)}, {gbps(crossing, t_ours)} ({sent / 2**20:.0f} MiB sent)",
        f"{t_raw / t_ours:.2f}x the throughput (>= 0.7x)",
        raw_s=t_raw,
        mdarray_s=t_ours,
        crossing_bytes=crossing,
        mdarray_sent_bytes=sent,
    )
    table.add(
        "the same, raw exchange through derived datatypes into a new column block",
        f"{ms(t_place)}, {gbps(crossing, t_place)} (Isend/Irecv in place)",
        f"{ms(t_ours)}",
        f"{t_place / t_ours:.2f}x the throughput",
        raw_in_place_s=t_place,
        mdarray_s=t_ours,
    )


def _displacements(counts: list[int]) -> list[int]:
    return [0, *np.cumsum(counts)[:-1].tolist()]


def bench_sum(case: Case, table: Table, repeat: int, warmup: int) -> None:
    from mpi4py import MPI

    comm = case.comm
    block = case.host[case.rows(case.rank)]
    total = np.empty(case.shape[1])

    def raw():
        comm.Allreduce(np.sum(block, axis=0), total, op=MPI.SUM)

    def raw_local():
        return np.sum(block, axis=0)

    def partial():
        return mdarray.sum(case.x, axis=0)

    def ours():
        return mdarray.sum(case.x, axis=0).change_mode("replica")

    raw()
    expected = case.host.sum(axis=0)
    agree(comm, np.allclose(total, expected), "the raw Allreduce")
    s = partial()
    if s.mode is not mdarray.SUM:
        raise AssertionError(f"sum(axis=0) left mode {s.mode}, not SUM")
    y = ours()
    agree(comm, np.allclose(case.local_chunk(y), expected), "mdarray's sum")
    del s, y

    t_raw, t_ours, t_local, t_partial = alternating(
        comm, [raw, ours, raw_local, partial], repeat, warmup
    )
    table.add(
        f"`sum(x, axis=0)` then `change_mode('replica')`, {case.label} in row blocks",
        f"{ms(t_raw)} (`np.sum(block, axis=0)` + `Allreduce`)",
        ms(t_ours),
        f"{t_raw / t_ours:.2f}x the throughput (>= 0.7x)",
        raw_s=t_raw,
        mdarray_s=t_ours,
    )
    table.add(
        "the local part: `sum(x, axis=0)` left in SUM mode",
        f"{ms(t_local)} (`np.sum(block, axis=0)`)",
        ms(t_partial),
        f"{t_local / t_partial:.2f}x",
        raw_s=t_local,
        mdarray_s=t_partial,
    )


def bench_scatter(case: Case, table: Table, repeat: int, warmup: int) -> None:
    """Partial copies of the whole array (SUM mode, one per process) resharded to one
    block per process, against one `Reduce_scatter` of a send buffer packed before the
    clock starts: row blocks need no packing, column blocks are packed on the clock."""
    from mpi4py import MPI

    comm, r, procs = case.comm, case.rank, case.procs
    replicated = mdarray.Layout.replicated(case.shape, devices=case.devices)
    x = mdarray.distributed_array(case.host, replicated, "sum")
    partial = case.local_chunk(x)
    for name, target, cut in [
        ("row", case.rows_layout, case.rows),
        ("column", case.cols_layout, case.cols),
    ]:
        parts = [
            np.ascontiguousarray(partial[cut(p)] if name == "row" else partial[:, cut(p)])
            for p in range(procs)
        ]
        send = np.concatenate([part.ravel() for part in parts])
        counts = [part.size for part in parts]
        recv = np.empty(counts[r])

        def raw(send=send, recv=recv, counts=counts):
            comm.Reduce_scatter(send, recv, recvcounts=counts, op=MPI.SUM)

        def ours(target=target):
            return x.reshard(target)

        raw()
        mine = case.host[cut(r)] if name == "row" else case.host[:, cut(r)]
        agree(comm, np.allclose(recv.reshape(mine.shape), mine), "the raw Reduce_scatter")
        agree(comm, np.allclose(case.local_chunk(ours()), mine), "mdarray's reshard")
        t_raw, t_ours = alternating(comm, [raw, ours], repeat, warmup)
        nbytes = case.host.nbytes
        table.add(
            f"SUM partials of the whole {case.label} -> {name} blocks",
            f"{ms(t_raw)}, {gbps(nbytes, t_raw)} (`Reduce_scatter`, packed before)",
            f"{ms(t_ours)}, {gbps(nbytes, t_ours)}",
            f"{t_raw / t_ours:.2f}x the throughput",
            raw_s=t_raw,
            mdarray_s=t_ours,
        )


FIGURES = [("reshard", bench_reshard), ("sum", bench_sum), ("scatter", bench_scatter)]


def main() -> None:
    args = parse_args()
    distributed.initialize()
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    case = Case(comm, args.size)
    table = Table(comm)
    for name, bench in FIGURES:
        if not args.only or name in args.only:
            table.attempt(name, lambda t, bench=bench: bench(case, t, args.repeat, args.warmup))
    if comm.Get_rank() == 0:
        print(table.markdown(case))
        if args.json:
            with Path(args.json).open("w") as f:
                json.dump({"shape": case.shape, "rows": table.records}, f, indent=1)
    distributed.finalize()


if __name__ == "__main__":
    main()
