"""The device time of each line of a workload's iteration (`chain_lines.LINES`), CuPy's
and mdarray's: each line run `REPS` times queued behind a kernel that spins for 20 ms, so
the events around them time the kernels alone, not the host that issues them (a line
that waits for the device inside shows the spin's rest). ``python
tools/device/line_device.py [WORKLOAD ...]`` from the repository root, on the cuda
backend."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tools" / "device")]

import cupy  # noqa: E402
import numpy as np  # noqa: E402
from chain_lines import LINES, datasets, state_of  # noqa: E402  (beside this file)

import mdarray  # noqa: E402
from benchmarks import workloads  # noqa: E402
from mdarray._backends.backend import backend as default_backend  # noqa: E402

REPS = 40
_SPIN = cupy.RawKernel(
    r"""
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}""",
    "spin",
)


def per_line(name: str, xp, data, stream) -> np.ndarray:
    """Device microseconds per run of each line of `name`, its work on `stream`."""
    codes = [compile(line, line, "exec") for line in LINES[name]]
    state = state_of(name, xp, data)
    for _ in range(3):
        for code in codes:
            exec(code, state)  # (warm)
    rate = cupy.cuda.Device().attributes["ClockRate"] * 1000  # cycles per second
    out = np.zeros(len(codes))
    for k, code in enumerate(codes):
        with stream:
            cupy.cuda.runtime.deviceSynchronize()
            _SPIN((1,), (1,), (np.int64(rate * 0.02),))
            start = stream.record()
            for _ in range(REPS):
                exec(code, state)  # (the line, queued behind the spin)
            end = stream.record()
        end.synchronize()
        out[k] = cupy.cuda.get_elapsed_time(start, end) * 1e3 / REPS
    return out


def main() -> None:
    ours = default_backend().stream(mdarray.devices()[0])
    for name in sys.argv[1:] or ["cg"]:
        host, mine = datasets(name)
        theirs = workloads.on_reference(workloads.Env(), host)
        ref = per_line(name, cupy, theirs, cupy.cuda.Stream.null)
        got = per_line(name, mdarray, mine, ours)
        print(f"{name}: CuPy {ref.sum():.1f} us, mdarray {got.sum():.1f} us of device time")
        for line, a, b in zip(LINES[name], ref, got):
            print(f"  {line:36s} {a:8.2f} {b:8.2f} {b - a:+8.2f}")


if __name__ == "__main__":
    main()
