"""The SPMD suite: every test here runs on every process of an MPI run.

Run it as ``tests/spmd/test_spmd.py`` does, one pytest per process::

    MDARRAY_CPU_DEVICES=2 mpiexec -n 2 python -m mpi4py -m pytest -p no:randomly tests/spmd/mpi

(``-m mpi4py``: an uncaught exception aborts every process instead of leaving the others
waiting.) The ordinary single-process run does not collect this directory (``collect_ignore``
in ``tests/conftest.py``): `initialize` changes process-global state (the backend's device
ids). Every process must run the same tests in the same order with the same data, since the
operations under test are collective: so no test reordering (``-p no:randomly``), no xdist,
and hypothesis draws the same examples everywhere (the ``spmd`` profile below).
"""

from hypothesis import HealthCheck, Phase, settings

import mdarray
from mdarray import distributed

from ._spmd import COMM

# The same examples on every process: derandomized (seeded by the test), no example
# database (each process would replay what it alone saw fail), no health check (they time
# the draws, and one process failing one would stop drawing while the others go on), and no
# shrinking or explaining (they follow the failures each process saw, which may differ: an
# assertion that fails on one process would send the processes into different examples and
# a collective that never completes).
settings.register_profile(
    "spmd",
    max_examples=15,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
settings.load_profile("spmd")


def pytest_configure(config):
    """Join the run before any test module is imported (they may read
    ``mdarray.devices()``, the global ids, at import); only process 0 reports test by test."""
    distributed.initialize()
    if distributed.rank() != 0 and config.option.verbose > 0:
        config.option.verbose = 0


def pytest_report_header(config):
    return (
        f"mdarray SPMD run: process {distributed.rank()} of {distributed.size()}, "
        f"devices {list(mdarray.devices())}, local {list(distributed.local_devices())}"
    )


def pytest_terminal_summary(terminalreporter):
    """Every process's tally, on process 0: a failure on one process shows in its output
    among the others', and here."""
    stats = terminalreporter.stats
    tally = ", ".join(
        f"{len(stats[key])} {key}"
        for key in ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
        if stats.get(key)
    )
    tallies = COMM.gather(tally or "no tests", root=0)
    if distributed.rank() == 0:
        terminalreporter.write_sep("=", "SPMD results by process")
        for rank, line in enumerate(tallies):
            terminalreporter.write_line(f"process {rank}: {line}")


def pytest_unconfigure(config):
    # Every process has reported before any exits: ``python -m mpi4py`` aborts the run when
    # one exits with failures, which would cut off another's report.
    COMM.Barrier()
    distributed.finalize()
