"""The SPMD fault suite: a failure on one process only (its data overflows, an allocation
fails) raises on every process, in the same call, and the run goes on in step.

Each case makes one process (`CULPRIT`, the last) fail where the others do not: its rows
of the array hold values that overflow under ``np.errstate(over="raise")`` (or NaN under
``invalid="raise"``), or its backend's allocations raise MemoryError. Every process's
outcome is checked: the culprit raises its own error, the others an error of the same
class naming the culprit; afterwards every process still reads the array's value (the
processes are in step). Each case runs under a watchdog: a process stuck longer than
`CASE_TIMEOUT` prints its stack and exits, which ends the whole run at once.
"""

import contextlib
import faulthandler
import warnings

import numpy as np
import pytest

import mdarray
from mdarray import distributed

from ._spmd import COMM, check_value, everywhere

CULPRIT = distributed.size() - 1
#: The data-dependent faults here are NumPy's kernels' (error state, warnings): CuPy's
#: kernels do not honour numpy.errstate and raise nothing midway.
numpy_kernels_only = pytest.mark.skipif(
    mdarray.default_backend() == "cuda", reason="CuPy's kernels do not honour numpy.errstate"
)
SHAPE = (8, 4)
# A case takes well under a second; one that waits this long is stuck.
CASE_TIMEOUT = 60


@pytest.fixture(autouse=True)
def watchdog():
    faulthandler.dump_traceback_later(CASE_TIMEOUT, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def _culprit_rows(layout) -> list[int]:
    """The rows of `layout`'s chunks that the culprit's devices hold."""
    theirs = set(COMM.allgather(distributed.local_devices())[CULPRIT])
    return sorted({r for d, index in layout.chunks if d in theirs for r in range(8)[index[0]]})


def array(fill: float, dtype=np.float64):
    """``(value, x)``: the rows of the culprit's chunks hold `fill`, the others small
    numbers, split by rows over every device of the run."""
    layout = mdarray.Layout.block(SHAPE, axis=0)
    value = (np.arange(np.prod(SHAPE)).reshape(SHAPE) % 5 + 1).astype(dtype)
    value[_culprit_rows(layout)] = fill
    return value, mdarray.distributed_array(value, layout)


def agreed(error_type: type[BaseException], compute) -> None:
    """``compute()`` raises `error_type` on every process: the culprit its own error, the
    others one that names the culprit."""
    try:
        compute()
    except Exception as error:
        got = error
    else:
        got = None
    ok = isinstance(got, error_type) and (
        distributed.rank() == CULPRIT or f"process {CULPRIT} failed" in str(got)
    )
    everywhere(ok, f"expected {error_type.__name__} naming process {CULPRIT}, got {got!r}")


OVERFLOWING = {
    "sum": lambda x: x.sum(),
    "float of sum": lambda x: float(x.sum()),
    "prod": lambda x: x.prod(),
    "mean along rows": lambda x: x.mean(axis=1),
    "sum along columns, gathered": lambda x: x.sum(axis=0).get(),
    "cumsum along the split axis": lambda x: np.cumsum(x, axis=0),
    "x.T @ x": lambda x: x.T @ x,
    "multiply": lambda x: x * x,
    "var": np.var,
}


@numpy_kernels_only
@pytest.mark.parametrize("name", sorted(OVERFLOWING))
def test_an_overflow_on_one_process_raises_on_every_process(name):
    value, x = array(1e308)
    with np.errstate(over="raise"):
        agreed(FloatingPointError, lambda: OVERFLOWING[name](x))
    check_value(x, value)  # in step again


@numpy_kernels_only
def test_a_cast_of_nan_on_one_process_raises_on_every_process():
    value, x = array(np.nan)
    with np.errstate(invalid="raise"):
        agreed(FloatingPointError, lambda: x.astype(int))
    check_value(x, value)


@numpy_kernels_only
def test_warnings_as_errors_on_one_process_raise_on_every_process():
    value, x = array(1e308)
    with warnings.catch_warnings(), np.errstate(over="warn"):
        warnings.simplefilter("error")
        agreed(RuntimeWarning, x.sum)
    check_value(x, value)


def _scale_view(x):
    x[...] *= 1e10


def _scale(x):
    x *= 1e10


IN_PLACE = {
    "x *= c": _scale,
    "x[...] *= c": _scale_view,
    "multiply(out=x)": lambda x: np.multiply(x, 1e10, out=x),
    "x[1:] = x[:-1] * c": lambda x: x.__setitem__(slice(1, None), x[:-1] * 1e10),
}


@numpy_kernels_only
@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_a_failed_in_place_write_changes_no_process(name):
    value, x = array(1e308)
    with np.errstate(over="raise"):
        agreed(FloatingPointError, lambda: IN_PLACE[name](x))
    check_value(x, value)


@numpy_kernels_only
def test_the_processes_agree_on_an_error_they_catch():
    """A program that catches the error goes on alike everywhere."""
    value, x = array(1e308)
    with np.errstate(over="raise"):
        try:
            total = float(x.sum())
        except FloatingPointError:
            total = None
    everywhere(total is None, f"got {total}")
    check_value(x, value)


@contextlib.contextmanager
def allocations_fail():
    """The culprit's backend raises MemoryError on every allocation, in the block."""
    backend = mdarray._backends.backend.backend()

    def refuse(*args, **kwargs):
        raise MemoryError("allocation refused (injected)")

    names = ("empty", "empty_slabs", "full", "host_empty") if distributed.rank() == CULPRIT else ()
    for name in names:
        setattr(backend, name, refuse)
    try:
        yield
    finally:
        for name in names:
            delattr(backend, name)  # the class's method again


ALLOCATING = {
    "zeros": lambda x: mdarray.zeros(SHAPE),
    "full over columns": lambda x: mdarray.full(
        SHAPE, 3.0, device=mdarray.Layout.block(SHAPE, axis=1)
    ),
    "reshard": lambda x: x.reshard(mdarray.Layout.block(SHAPE, axis=1)),
    "get": lambda x: x.get(),
}


@pytest.mark.parametrize("name", sorted(ALLOCATING))
def test_a_failed_allocation_on_one_process_raises_on_every_process(name):
    if name == "reshard" and mdarray.default_backend() == "cuda":
        pytest.skip("the cuda backend's moves allocate through CuPy, not Backend.empty")
    value, x = array(1.0)
    with allocations_fail():
        agreed(MemoryError, lambda: ALLOCATING[name](x))
    check_value(x, value)
