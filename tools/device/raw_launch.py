"""Host cost of one elementwise launch by each way CuPy offers, at 4096 and 2048x2048
float32: CuPy's ufunc, mdarray's launcher (`Elementwise`), a `RawKernel` call, and the
driver's ``launchKernel`` with its parameter block built once and the pointers written per
call; the output allocated by `cupy.empty`, by the pool and an `ndarray` over it, or
given. Loops of calls timed until they return, the device queue left to run behind,
median of 7; then a shifted in-place update of rows (CuPy's, mdarray's launcher with
``out``) and the views it takes, at 64x64 and 2048x2048: ``python
tools/device/raw_launch.py`` from the repository root."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tools" / "device")]

import cupy  # noqa: E402
import numpy as np  # noqa: E402
from launch_pieces import host  # noqa: E402  (beside this file)

from mdarray._backends.cuda.elementwise import Elementwise  # noqa: E402

SOURCE = r"""
extern "C" __global__ void add_f32(const float* a, const float* b, float* c, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        c[i] = a[i] + b[i];
    }
}
"""


class Launch:
    """``c = a + b`` by the driver's launchKernel: the parameter block (three pointers
    and the size) built once, the pointers written per call."""

    def __init__(self, function, n: int, grid: int) -> None:
        self.values = np.zeros(4, np.uint64)
        self.values[3] = n
        base = self.values.ctypes.data
        self.pointers = np.array([base + 8 * i for i in range(4)], np.uint64)
        self.address = self.pointers.ctypes.data
        self.function = function.kernel.ptr
        self.grid = grid
        self.launch = cupy.cuda.driver.launchKernel
        self.stream = cupy.cuda.get_current_stream
        self.empty = cupy.empty
        self.malloc = cupy.get_default_memory_pool().malloc
        self.ndarray = cupy.ndarray

    def into(self, a, b, c):
        values = self.values
        values[0], values[1], values[2] = a.data.ptr, b.data.ptr, c.data.ptr
        self.launch(self.function, self.grid, 1, 1, 256, 1, 1, 0, self.stream().ptr,
                    self.address, 0)  # fmt: skip
        return c

    def fresh(self, a, b):
        return self.into(a, b, self.empty(a.shape, a.dtype))

    def pooled(self, a, b):
        memory = self.malloc(a.nbytes)
        return self.into(a, b, self.ndarray(a.shape, a.dtype, memory))

    def listed(self, a, b):
        """The parameter block as one list of ints given to numpy per call."""
        c = self.empty(a.shape, a.dtype)
        self.values[:3] = [a.data.ptr, b.data.ptr, c.data.ptr]
        self.launch(self.function, self.grid, 1, 1, 256, 1, 1, 0, self.stream().ptr,
                    self.address, 0)  # fmt: skip
        return c


def rows(raw, own, n: int) -> list:
    """The ways of one ``c = a + b`` of `n` float32, as ``(name, call)``."""
    a = cupy.random.standard_normal(n, dtype=np.float32)
    b = cupy.random.standard_normal(n, dtype=np.float32)
    c = cupy.empty_like(a)
    grid = min(-(-n // 256), 1024)
    launch = Launch(raw, n, grid)
    size = np.int64(n)
    bound, scaled = (
        own.sized(1 << 40, (a, b)),
        Elementwise(cupy, np.multiply).sized(1 << 40, (a, 2.0)),
    )
    assert bool((bound(a, b) == a + b).all())
    assert bool((scaled(a, 2.0) == a * 2.0).all())
    assert bool((launch.fresh(a, b) == a + b).all())
    assert bool((launch.pooled(a, b) == a + b).all())
    return [
        ("cupy a + b", lambda: a + b),
        ("cupy.add(a, b, out=c)", lambda: cupy.add(a, b, out=c)),
        ("mdarray Elementwise._launch (new c)", lambda: own._launch((a, b), None)),
        ("mdarray Bound (new c)", lambda: bound(a, b)),
        ("mdarray Bound, a scalar (new c)", lambda: scaled(a, 2.0)),
        ("cupy a * 2.0", lambda: a * 2.0),
        ("RawKernel call (c given)", lambda: raw((grid,), (256,), (a, b, c, size))),
        ("launchKernel, c given", lambda: launch.into(a, b, c)),
        ("launchKernel, cupy.empty", lambda: launch.fresh(a, b)),
        ("launchKernel, pool malloc + ndarray", lambda: launch.pooled(a, b)),
        ("launchKernel, values[:3] = list", lambda: launch.listed(a, b)),
        ("cupy.empty alone", lambda: cupy.empty(a.shape, a.dtype)),
        ("get_current_stream().ptr", lambda: cupy.cuda.get_current_stream().ptr),
        ("a.data.ptr", lambda: a.data.ptr),
    ]


def shifted_rows(m: int) -> list:
    """The ways of a shifted in-place update ``y[1:, :] -= p[:-1, :]`` of m x m float32
    (a CG Laplacian's), and the views it takes, as ``(name, call)``."""
    y = cupy.random.standard_normal((m, m), dtype=np.float32)
    p = cupy.random.standard_normal((m, m), dtype=np.float32)
    flat = p.reshape(-1)
    yv, pv = y[1:, :], p[:-1, :]
    own = Elementwise(cupy, np.subtract)
    want = yv - pv
    assert own._launch((yv, pv), (yv,)) is yv
    assert bool((yv == want).all())

    def line():
        y[1:, :] -= p[:-1, :]

    return [
        ("cupy y[1:, :] -= p[:-1, :] (the line)", line),
        ("cupy.subtract(yv, pv, out=yv)", lambda: cupy.subtract(yv, pv, out=yv)),
        ("mdarray Elementwise._launch (out=yv)", lambda: own._launch((yv, pv), (yv,))),
        ("p[:-1, :] (a view)", lambda: p[:-1, :]),
        ("flat slab.reshape((m, m))", lambda: flat.reshape((m, m))),
    ]


def main() -> None:
    module = cupy.RawModule(code=SOURCE)
    raw = module.get_function("add_f32")
    own = Elementwise(cupy, np.add)
    for n in (4096, 2048 * 2048):
        print(f"n = {n}")
        for name, fn in rows(raw, own, n):
            print(f"  {name:40s} {host(fn, 20000 if n < 100000 else 2000):8.2f} us")
    for m in (64, 2048):
        print(f"{m}x{m}, shifted in place")
        for name, fn in shifted_rows(m):
            print(f"  {name:40s} {host(fn, 20000 if m < 1000 else 2000):8.2f} us")


if __name__ == "__main__":
    main()
