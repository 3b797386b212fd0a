"""Ceilings of the copy paths mdarray's cuda backend can use (GPU only).

Device-to-device copy bandwidth, a reshard's strided block copies done by a CuPy
assignment and by ``cudaMemcpy2DAsync``, and the ways to bring 1 GiB to the host:
pageable ``.get()``, ``memcpyAsync`` into pinned memory (cold and pooled), and pinned
staging into pageable memory with host copies in threads.

    MDARRAY_BACKEND=cuda python -m benchmarks.transfer_paths
"""

from __future__ import annotations

import concurrent.futures
import time

import numpy as np

from ._harness import Env, median_time, once_time


def _row(name: str, seconds: float, nbytes: int | None = None) -> None:
    rate = f" | {nbytes / seconds / 1e9:.1f} GB/s" if nbytes else " | "
    print(f"| {name} | {seconds * 1e3:.3f} ms{rate} |", flush=True)


def staged_get(cupy, a, out: np.ndarray, buffers, pool) -> np.ndarray:
    """`a` into pageable `out` through pinned `buffers` (D2H overlapped with host copies)."""
    runtime = cupy.cuda.runtime
    stream = cupy.cuda.get_current_stream()
    flat_out = out.reshape(-1).view(np.uint8)
    size = buffers[0].nbytes
    pending = [None] * len(buffers)
    start = 0
    k = 0
    while start < a.nbytes:
        b = k % len(buffers)
        if pending[b] is not None:
            pending[b].result()  # the host copy out of this buffer is done
        count = min(size, a.nbytes - start)
        runtime.memcpyAsync(
            buffers[b].ctypes.data,
            a.data.ptr + start,
            count,
            runtime.memcpyDeviceToHost,
            stream.ptr,
        )
        event = stream.record()

        def copy(b=b, start=start, count=count, event=event):
            event.synchronize()
            flat_out[start : start + count] = buffers[b][:count]

        pending[b] = pool.submit(copy)
        start += count
        k += 1
    for p in pending:
        if p is not None:
            p.result()
    return out


def main() -> None:
    env = Env()
    if not env.cuda:
        raise SystemExit("transfer_paths measures GPU copy paths: run with MDARRAY_BACKEND=cuda")
    cupy = env.xp
    runtime = cupy.cuda.runtime
    n = 16384
    a = cupy.random.default_rng(0).standard_normal((n, n), np.float32)
    nbytes = a.nbytes
    print(f"{env.device}, {env.versions}\n")
    print("| path | time | rate |\n|---|---|---|")
    b = cupy.empty_like(a)
    _row(
        "D2D copy 1 GiB (read + write counted)",
        median_time(env, lambda: b.__setitem__(Ellipsis, a)),
        2 * nbytes,
    )

    q = n // 4
    rows = [a[k * q : (k + 1) * q] for k in range(4)]
    cols = [cupy.empty((n, q), np.float32) for _ in range(4)]

    def by_assign():
        for t in range(4):
            for k in range(4):
                cols[t][k * q : (k + 1) * q] = rows[k][:, t * q : (t + 1) * q]

    def by_memcpy2d():
        stream = cupy.cuda.get_current_stream().ptr
        for t in range(4):
            for k in range(4):
                runtime.memcpy2DAsync(
                    cols[t].data.ptr + k * q * q * 4,
                    q * 4,
                    rows[k].data.ptr + t * q * 4,
                    n * 4,
                    q * 4,
                    q,
                    runtime.memcpyDeviceToDevice,
                    stream,
                )

    _row("reshard blocks by CuPy assignment (16 copies)", median_time(env, by_assign), 2 * nbytes)
    _row("reshard blocks by memcpy2DAsync (16 copies)", median_time(env, by_memcpy2d), 2 * nbytes)
    by_assign()
    ok = all(bool(cupy.array_equal(cols[t], a[:, t * q : (t + 1) * q])) for t in range(4))
    print(f"| (memcpy2D result correct: {ok}) | | |")

    _row(
        "CuPy .get() 1 GiB (pageable, new array each time)",
        median_time(env, a.get, repeat=3, warmup=1),
        nbytes,
    )

    def pinned_alloc():
        return cupy.cuda.alloc_pinned_memory(nbytes)

    cold = time.perf_counter()
    mem = pinned_alloc()
    _row("alloc_pinned_memory 1 GiB, cold", time.perf_counter() - cold)
    del mem
    _row("alloc_pinned_memory 1 GiB, from the pool", once_time(env, pinned_alloc))
    pinned = np.ndarray((n, n), np.float32, buffer=cupy.cuda.alloc_pinned_memory(nbytes))

    def to_pinned():
        runtime.memcpyAsync(pinned.ctypes.data, a.data.ptr, nbytes, runtime.memcpyDeviceToHost, 0)

    _row("memcpyAsync 1 GiB into pinned memory", median_time(env, to_pinned, repeat=10), nbytes)
    cold = time.perf_counter()
    fresh = np.empty((n, n), np.float32)
    fresh.fill(0)
    _row("np.empty 1 GiB + first touch (page faults)", time.perf_counter() - cold, nbytes)
    _row(
        "host memcpy 1 GiB, touched pages",
        median_time(env, lambda: np.copyto(fresh, pinned), repeat=5),
        nbytes,
    )
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        for size_mib, count in [(32, 4), (64, 4)]:
            buffers = [
                np.ndarray(
                    size_mib << 20, np.uint8, buffer=cupy.cuda.alloc_pinned_memory(size_mib << 20)
                )
                for _ in range(count)
            ]
            staged_get(cupy, a, np.empty((n, n), np.float32), buffers, pool)
            first = once_time(
                env,
                lambda buffers=buffers: staged_get(
                    cupy, a, np.empty((n, n), np.float32), buffers, pool
                ),
            )
            _row(
                f"staged get into new pageable, {count}x{size_mib} MiB pinned, 8 threads",
                first,
                nbytes,
            )
            out = staged_get(cupy, a, np.empty((n, n), np.float32), buffers, pool)
            print(f"| (staged result correct: {np.array_equal(out, a.get())}) | | |")
    big = np.empty((n, n), np.float32)

    def touch_threads():
        flat = big.reshape(-1)
        parts = np.array_split(np.arange(flat.size, step=1 << 20), 16)
        with concurrent.futures.ThreadPoolExecutor(16) as pool2:
            list(
                pool2.map(
                    lambda p: flat[p[0] : p[-1] + (1 << 20)].fill(0) if len(p) else None, parts
                )
            )

    _row("np.empty 1 GiB + first touch in 16 threads", once_time(env, touch_threads), nbytes)
    registered = time.perf_counter()
    runtime.hostRegister(big.ctypes.data, big.nbytes, 0)
    _row("cudaHostRegister of 1 GiB touched pages", time.perf_counter() - registered)
    runtime.hostUnregister(big.ctypes.data)
    ring_variants(env, a)


def ring_variants(env: Env, a) -> None:
    """mdarray's get() of 1 GiB through the staging ring, per ring shape."""
    import mdarray
    from mdarray._backends import backend as _backend

    backend = _backend.backend()
    x = mdarray.distributed_array(a, {0: [(slice(k * 4096, (k + 1) * 4096),) for k in range(4)]})
    expected = a.get()
    for buffer_mib, buffers, threads in [
        (16, 6, 8),
        (8, 8, 8),
        (32, 4, 8),
        (16, 8, 16),
        (4, 16, 16),
    ]:
        backend._ring = None  # a new ring of this shape on the next copy
        backend.staging_buffer_bytes = buffer_mib << 20
        backend.staging_buffers = buffers
        backend.host_copy_threads = threads
        first = once_time(env, x.get)
        warm = median_time(env, x.get, repeat=7, warmup=1)
        ok = np.array_equal(x.get(), expected)
        name = f"mdarray get() 1 GiB, ring {buffers}x{buffer_mib} MiB, {threads} threads"
        _row(name + f", first (ring cold, correct: {ok})", first, a.nbytes)
        _row(name + ", warm median", warm, a.nbytes)


if __name__ == "__main__":
    main()
