"""One array over several processes: the example of docs/distributed.md.

    MDARRAY_CPU_DEVICES=1 mpiexec -n 4 python -m mpi4py docs/examples/spmd_demo.py

Every process runs this whole script. It works with any number of processes and with
any number of devices per process (``MDARRAY_CPU_DEVICES`` virtual CPU devices each, or
the GPUs a process sees on the cuda backend).
"""

import numpy as np
from mpi4py import MPI

import mdarray
from mdarray import distributed

distributed.initialize()  # collective: every process joins, devices get global ids
rank, size = distributed.rank(), distributed.size()

# The same host array on every process; each keeps only its own devices' rows of it.
a = np.arange(8 * 6, dtype=np.float64).reshape(8, 6)
x = mdarray.distributed_array(a, mdarray.Layout.block(a.shape, axis=0))

# Local facts: this process's devices and the shapes of its chunks. Plain mpi4py works
# alongside (the library talks on its own duplicate of the communicator).
mine = distributed.local_devices()
shapes = [c.shape for d in mine for c in x.all_chunks()[d]]
line = f"process {rank} of {size}: devices {mine} of {mdarray.devices()}, chunks {shapes}"
lines = MPI.COMM_WORLD.gather(line, root=0)
if rank == 0:
    print("\n".join(lines))  # noqa: T201 (plain strings: no collective)

# Collective calls: every process makes them, in the same order.
y = x.reshard(mdarray.Layout.block(a.shape, axis=1))  # rows -> columns, one exchange
s = mdarray.sum(x, axis=0)  # a partial result in SUM mode: nothing moved yet
total = s.change_mode("replica")  # the partial sums combined on every device
distributed.print("mode of sum(x, axis=0):", s.mode)
distributed.print("column sums:", total)  # formats on every process, prints on rank 0
assert np.array_equal(total.get(), a.sum(axis=0))

whole = y.get(root=0)  # the values on process 0; None on the others
if rank == 0:
    print("y.get(root=0) equals a:", np.array_equal(whole, a))  # noqa: T201 (plain NumPy)
else:
    assert whole is None

distributed.finalize()
