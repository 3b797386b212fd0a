"""Helpers for tests that run on every process of an SPMD run.

Assertions here are collective: every process checks its own result, then all of them
learn every verdict and fail together, naming the processes that disagree. A test whose
assertion failed on one process only would otherwise go on into the next collective on the
others and hang until the run's timeout.
"""

import numpy as np
from mpi4py import MPI

import mdarray
from mdarray import distributed
from mdarray._spmd.processes import Remote

# The tests' own communicator: their messages never meet the library's.
COMM = MPI.COMM_WORLD.Dup()
_ON_CUDA = mdarray.default_backend() == "cuda"


def rng(seed: int = 0) -> np.random.Generator:
    """The same generator on every process: every process builds the same data."""
    return np.random.default_rng(seed)


def everywhere(ok: bool, message: str = "") -> None:
    """Assert `ok` on every process: raise on each one if it is false on any."""
    verdicts = COMM.allgather((bool(ok), message))
    failed = [f"process {r}: {m}" for r, (good, m) in enumerate(verdicts) if not good]
    assert not failed, "; ".join(failed)


def same_everywhere(value) -> None:
    """Assert every process holds an equal `value` (a string, number or tuple)."""
    values = COMM.allgather(value)
    everywhere(all(v == values[0] for v in values), f"values differ: {values!r}")


def _compare(got, expected, exact: bool) -> str:
    # A chunk of the cuda backend is a CuPy array: to the host by its .get().
    got = got.get() if hasattr(got, "get") and not isinstance(got, np.ndarray) else got
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        return f"shape {got.shape} != {expected.shape}"
    if got.dtype != expected.dtype:
        return f"dtype {got.dtype} != {expected.dtype}"
    try:
        if expected.dtype.kind not in "fc" or (exact and not _ON_CUDA):
            np.testing.assert_array_equal(got, expected, strict=True)
        elif exact:  # CuPy's math library rounds a few units in the last place apart
            eps = 8 * float(np.finfo(expected.dtype).eps)
            np.testing.assert_allclose(got, expected, rtol=eps, atol=eps, strict=True)
        else:
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9, strict=True)
    except AssertionError as error:
        return str(error)
    return ""


def run(compute, *, native: bool = False):
    """``compute()`` on every process, its result; if it raised on any process, an error
    on every one. (An operation not yet multi-process may raise on one process and return
    on another, which would then wait for it in the next collective.) With `native`, a
    function that takes the fallback (no multi-process implementation) raises."""
    error = None
    try:
        # What has no distributed implementation gathers (with a warning, an error in the
        # test run): these tests check values, wherever they were computed, unless they
        # check that the native path ran.
        with mdarray.options(fallback="raise" if native else "allow"):
            result = compute()
    except Exception as caught:  # reported on every process just below
        result, error = None, caught
    try:
        everywhere(error is None, f"{type(error).__name__}: {error}")
    except AssertionError as failure:
        raise failure from error  # the traceback shows where it raised, on that process
    return result


def check_value(x, expected, *, exact: bool = False, native: bool = False) -> None:
    """`x` (or ``x()``, run by `run`, natively with `native`) is a DistArray with
    `expected`'s value, shape and dtype on every process (its ``get()``, which is
    collective); floats within rounding unless `exact`."""
    if callable(x) and not isinstance(x, mdarray.DistArray):
        x = run(x, native=native)
    is_dist = isinstance(x, mdarray.DistArray)
    everywhere(is_dist, f"expected a DistArray, got {type(x).__name__}")
    problem = _compare(x.get(), expected, exact)
    everywhere(not problem, problem)


def check_local_chunks(x, expected) -> None:
    """Each chunk this process holds equals ``expected[index]`` (for a REPLICA array);
    the chunks of other processes' devices are not held here."""
    problems = []
    local = set(distributed.local_devices())
    for k, ((device, index), buffer) in enumerate(zip(x.layout.chunks, x.storage.buffers)):
        if device in local:
            problem = _compare(buffer, np.asarray(expected)[index], exact=True)
            if problem:
                problems.append(f"chunk {k} on device {device}: {problem}")
        elif not isinstance(buffer, Remote):
            problems.append(f"chunk {k} on device {device} (another process's) is held here")
    everywhere(not problems, "; ".join(problems))


def raises_everywhere(error_type, func, *args, **kwargs) -> None:
    """`func(*args, **kwargs)` raises `error_type` on every process (and returns on none:
    a process that went on would wait for the others in a collective)."""
    try:
        func(*args, **kwargs)
    except Exception as error:
        ok, detail = isinstance(error, error_type), f"{type(error).__name__}: {error}"
    else:
        ok, detail = False, "it returned"
    everywhere(ok, f"expected {error_type.__name__}, got {detail}")
