"""The SPMD suite (``tests/spmd/mpi``) run under MPI: each module as its own ``mpiexec`` run of
2 and 4 processes on the cpu backend, with 1 and 2 virtual devices per process (and one
process with 4), every process running the same pytest; on the cuda backend also one
process with the machine's GPUs. A hang fails the test at its timeout (the run's processes
are killed) instead of stalling the suite, and a failure shows the inner run's output.

The inner runs set ``MDARRAY_CPU_DEVICES`` themselves, so the outer run with one device
(``.ci/run`` runs the suite twice) skips them: they would repeat the other run's work.
"""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import mdarray

SPMD = Path(__file__).parent / "mpi"
# Each run takes under a minute, 4 processes on 2 cores included; a hang fails after this
# (MDARRAY_SPMD_TIMEOUT).
TIMEOUT = float(os.environ.get("MDARRAY_SPMD_TIMEOUT", "180"))
# (processes, devices per process). One process with four devices runs the same tests
# without any data crossing processes: a test failing only in the others is the library's
# multi-process code at fault, not the test. The fast suite (the README's command) runs
# each module in one configuration, processes that each hold several devices;
# MDARRAY_SPMD_RUNS=all (CI, `nox -s tests_full`) runs all four.
ALL_RUNS = [(1, 4), (2, 1), (2, 2), (4, 1)]
_RUNS_SETTING = os.environ.get("MDARRAY_SPMD_RUNS", "few")
if _RUNS_SETTING not in ("few", "all"):
    raise ValueError(f"MDARRAY_SPMD_RUNS={_RUNS_SETTING!r}: expected 'few' or 'all'")
RUNS = ALL_RUNS if _RUNS_SETTING == "all" else [(2, 2)]
CHECK_MODULE = "test_spmd_collective_check.py"
# One mpiexec run per module: a hang in one leaves the others' results.
MODULES = sorted(p.name for p in SPMD.glob("test_*.py") if p.name != CHECK_MODULE)


def _mpiexec() -> str | None:
    """The mpiexec beside this Python (the mpich wheel installs it into the environment,
    which need not be on PATH), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.is_file() else shutil.which("mpiexec")


def _why_not() -> str | None:
    try:
        import mpi4py  # noqa: F401, PLC0415 (only to see that it is installed)
    except ImportError:
        return "mpi4py is not installed (pip install 'mdarray[mpi]')"
    if _mpiexec() is None:
        return "no mpiexec (pip install mpich, or an MPI on PATH)"
    if os.environ.get("MDARRAY_CPU_DEVICES") == "1":
        return "the SPMD runs set their own MDARRAY_CPU_DEVICES: run in the default-device run"
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))


def run_spmd(processes: int, devices: int, module: str, **env: str) -> None:
    """Run `module` of tests/spmd/mpi on `processes` processes; fail with its output unless
    every process passed within `TIMEOUT`."""
    environment = {
        **os.environ,
        "MDARRAY_BACKEND": "cpu",
        "MDARRAY_CPU_DEVICES": str(devices),
        # Open MPI's mpiexec (the GPU machine's) refuses root without these; MPICH ignores them.
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        # The mdarray this run imports (the source tree or the installed copy), first.
        "PYTHONPATH": os.pathsep.join(
            [str(Path(mdarray.__file__).parent.parent), os.environ.get("PYTHONPATH", "")]
        ),
        **env,
    }
    root = SPMD.parents[2]  # the repository: tests/spmd/mpi is three folders down
    command = [
        _mpiexec(), "-n", str(processes),
        sys.executable, "-m", "mpi4py", "-m", "pytest",
        "--rootdir", str(root), "-c", str(root / "pyproject.toml"),
        # Every process runs the same tests in the same order: no reordering plugin.
        "-p", "no:randomly", "-p", "no:cacheprovider",
        # No xdist inside (one pytest per process), and so no pytest-benchmark warning
        # that xdist is on, which the warnings-as-errors setting makes an internal error.
        "-p", "no:xdist", "-p", "no:benchmark",
        # Process 0 names each test as it ends (tests/spmd/mpi/conftest.py quiets the
        # others): a hang's output ends at the test that hung.
        "-v",
        # A test stuck in a collective prints every process's stack before the kill.
        "-o", f"faulthandler_timeout={TIMEOUT / 3:.0f}",
        str(SPMD / module),
    ]  # fmt: skip
    # A session of its own, so a hang is ended by killing mpiexec and every process it
    # started.
    process = subprocess.Popen(
        command,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            output, _ = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
        pytest.fail(
            f"mpiexec -n {processes} ({devices} devices each) {module} hung: killed after "
            f"{TIMEOUT:.0f} s\n{output}",
            pytrace=False,
        )
    if process.returncode != 0:
        pytest.fail(
            f"mpiexec -n {processes} ({devices} devices each) {module} failed "
            f"(exit status {process.returncode})\n{output}",
            pytrace=False,
        )


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize(("processes", "devices"), RUNS, ids=[f"n{n}-d{d}" for n, d in RUNS])
def test_spmd(processes, devices, module):
    run_spmd(processes, devices, module)


@pytest.mark.cuda
@pytest.mark.skipif(mdarray.default_backend() != "cuda", reason="needs MDARRAY_BACKEND=cuda")
@pytest.mark.parametrize("module", MODULES)
def test_spmd_on_this_machines_gpus(module):
    """One process on the cuda backend, with every GPU it sees: the NCCL transport and
    collectives under the same tests (a communicator of one on a one-GPU machine)."""
    run_spmd(1, 1, module, MDARRAY_BACKEND="cuda")


@pytest.mark.parametrize("processes", [2, 4])
def test_mismatched_collectives_raise_with_the_check_on(processes):
    """Its last test waits for a process that left: a short timeout (each process still
    has several seconds to reach a call the others made)."""
    run_spmd(processes, 1, CHECK_MODULE, MDARRAY_CHECK_COLLECTIVES="1", MDARRAY_CHECK_TIMEOUT="6")


@pytest.mark.parametrize("module", ["test_spmd_movement.py", "test_spmd_faults.py"])
def test_correct_collectives_pass_the_check(module):
    """The check raises only on a real mismatch: the movement tests pass with it on, and
    failures on one process are agreed with it on as with it off."""
    run_spmd(2, 2, module, MDARRAY_CHECK_COLLECTIVES="1")
