"""Decided elementwise calls on device blocks launched by pointer (`_ops.engine.ufunc_places`):
a CG Laplacian's shifted in-place updates and Jacobi's sums of shifted views give NumPy's
values call after call, and every case the launch by pointer must not take (memory shared
with ``out``, a source gone or repacked, another selection, a copy on write) still does.

On the cpu backend a stand-in launch by pointer (NumPy's ufunc over the memory at each
pointer, laid out as the blocks it was bound to) takes the cuda backend's place, so the
engine's side (the blocks' distances into their slabs, the keys, the fallbacks) is tested
on any machine; on a GPU the generated kernels run (`POINTER_LAUNCHES` on for these
tests).
"""

import ctypes
import importlib
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from _call_counts import outcomes
from _layouts import rows

import mdarray
from mdarray._backends.backend import backend as default_backend
from mdarray._backends.cuda import backend as cuda_backend, elementwise
from mdarray._core.decided import RUNNERS
from mdarray._ops.engine.ufunc_places import Placed

# The benchmarks package beside tests/: its workloads' Laplacian, as CG runs it.
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
workloads = importlib.import_module("benchmarks.workloads")
sys.path.pop(0)

#: Row edges of 40 rows and the test device of each chunk.
LAYOUTS = {
    "4 row chunks, one device": ([0, 10, 20, 30, 40], [0, 0, 0, 0]),
    "2 devices, 2 chunks each": ([0, 10, 20, 30, 40], [0, 0, 1, 1]),
    "uneven, an empty chunk": ([0, 7, 7, 25, 40], [0, 0, 0, 0]),
}
#: Where the operands are packed and their device blocks agree, so the calls bind (the
#: others take the blocks' way or another, and must give the same values).
BINDS = "4 row chunks, one device"


def _over(pointer: int, like: np.ndarray) -> np.ndarray:
    """An array over the memory at `pointer`, laid out as `like`."""
    if like.size == 0:
        return np.empty(like.shape, like.dtype)
    span = sum((n - 1) * s for n, s in zip(like.shape, like.strides)) + like.itemsize
    flat = np.frombuffer((ctypes.c_char * span).from_address(pointer), like.dtype)
    return np.lib.stride_tricks.as_strided(flat, like.shape, like.strides)


class _PointerUfunc:
    """A launch by pointer as `Backend.block_launch` gives one, over NumPy's ufunc."""

    def __init__(self, kernel, like, out):
        self.kernel = kernel
        self.like = [a if isinstance(a, np.ndarray) else None for a in like]  # their layouts
        self.dtype = kernel(*like).dtype
        self.shape = kernel(*like).shape
        self.out = None if out is None else out[0]
        self.launches = 0

    def slab(self):
        return np.empty(int(np.prod(self.shape)), self.dtype)

    def into(self, args, out: int) -> bool:
        arrays = [a if like is None else _over(a, like) for a, like in zip(args, self.like)]
        target = _over(out, self.out if self.out is not None else np.empty(self.shape, self.dtype))
        self.kernel(*arrays, out=target)
        self.launches += 1
        return True


@pytest.fixture
def placed(monkeypatch):
    """Per call of `Placed.call`, whether it ran; the cpu backend given a stand-in launch
    by pointer; decided runners made afresh."""
    # NumPy's kernels write in place only where no RuntimeWarning raises (test suites make
    # them errors: `CpuBackend.may_fail`), as a CuPy kernel always does.
    caught = warnings.catch_warnings()
    caught.__enter__()
    warnings.filterwarnings("default", category=RuntimeWarning)
    backend = default_backend()
    if backend.name == "cuda":  # the launches by pointer, whether or not on by default
        monkeypatch.setattr(cuda_backend, "POINTER_LAUNCHES", True)
        monkeypatch.setattr(elementwise, "POINTER_LAUNCHES", True)
    else:
        monkeypatch.setattr(
            type(backend),
            "block_launch",
            lambda self, kernel, like, out=None: _PointerUfunc(kernel, like, out),
        )
    RUNNERS.clear()
    yield outcomes(monkeypatch, Placed, "call")
    RUNNERS.clear()
    caught.__exit__(None, None, None)


def _grid(name, seed=0):
    edges, on = LAYOUTS[name]
    host = np.random.default_rng(seed).standard_normal((40, 24)).astype(np.float32)
    return mdarray.distributed_array(host, rows(edges, on)), host


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_shifted_updates_in_place_give_numpy_values_call_after_call(name, placed):
    u, host = _grid(name)
    for _ in range(4):
        got = workloads.laplacian(mdarray, u)
        want = workloads.laplacian(np, host)
        np.testing.assert_array_equal(got.get(), want)
        u, host = got * np.float32(0.25), want * np.float32(0.25)  # new memory each time
    assert any(placed) or name != BINDS, "the launches by pointer never ran"


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_sums_of_shifted_views_give_numpy_values(name, placed):
    u, host = _grid(name, seed=1)
    f, hf = _grid(name, seed=2)
    for _ in range(3):
        t = u[:-2, 1:-1] + u[2:, 1:-1]
        t = t + u[1:-1, :-2]
        t = t + f[1:-1, 1:-1]
        want = host[:-2, 1:-1] + host[2:, 1:-1] + host[1:-1, :-2] + hf[1:-1, 1:-1]
        np.testing.assert_array_equal(t.get(), want)
        new = mdarray.zeros_like(u)
        new[1:-1, 1:-1] = 0.25 * t
        u, host = new, np.zeros_like(host)
        host[1:-1, 1:-1] = np.float32(0.25) * want
    assert any(placed) or name != BINDS


def test_an_operand_sharing_memory_with_out_takes_the_blocks_way(placed):
    u, host = _grid("4 row chunks, one device")
    for _ in range(3):
        y, hy = u * 2, host * 2
        y[1:, :] -= y[:-1, :]  # out's own memory, shifted: NumPy buffers the overlap
        hy[1:, :] -= hy[:-1, :].copy()
        np.testing.assert_array_equal(y.get(), hy)
        y, hy = u * 2, host * 2
        y[1:, :] -= u[:-1, :]
        hy[1:, :] -= host[:-1, :]
        np.testing.assert_array_equal(y.get(), hy)


def test_a_write_in_place_leaves_an_array_sharing_the_memory_as_it_was(placed):
    u, host = _grid("2 devices, 2 chunks each")
    for _ in range(3):
        y = u * 3
        kept = y.reshard(y.layout)  # the same chunks, shared until one is written
        y[1:, :] -= u[:-1, :]
        np.testing.assert_array_equal(kept.get(), host * 3)
        np.testing.assert_array_equal(y.get()[1:], host[1:] * 3 - host[:-1])
        np.testing.assert_array_equal(y.get()[:1], host[:1] * 3)


def test_a_scalar_the_loop_cannot_hold_leaves_the_launch_unrun(placed):
    edges, on = LAYOUTS["4 row chunks, one device"]
    host = np.arange(40 * 6, dtype=np.int8).reshape(40, 6) % 50
    x = mdarray.distributed_array(host, rows(edges, on))
    for value in (3, 3, 1000, 3):
        got = x[1:, :] + value if value < 128 else None
        if got is None:
            with pytest.raises(OverflowError):
                _ = x[1:, :] + value  # (NumPy 2 refuses an int8 of 1000 too)
            continue
        np.testing.assert_array_equal(got.get(), host[1:] + np.int8(value))
    assert any(placed)


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_views_of_new_sources_and_other_selections_are_read_afresh(name, placed):
    u, host = _grid(name)
    for k in range(4):
        a, ha = u + k, host + np.float32(k)
        for got, want in (
            (a[1:, :] - a[:-1, :], ha[1:, :] - ha[:-1, :]),
            (a[2:, :] - a[:-2, :], ha[2:, :] - ha[:-2, :]),
            (a[1:, 2:] * a[:-1, :-2], ha[1:, 2:] * ha[:-1, :-2]),
        ):
            np.testing.assert_array_equal(got.get(), want)
