"""What entering mdarray's stream costs a call on the cuda backend: ``with stream`` (CuPy's
context), a context by ``Stream.use`` (the current stream put back on leaving), none; and
each workload's lines in their chain (`chain_lines`) with `CudaBackend.on` as it is and
with a context doing nothing (the work then runs on CuPy's current stream): what a call
would save. ``python tools/device/stream_probe.py [WORKLOAD ...]`` from the repository
root."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tools" / "device")]

import cupy  # noqa: E402
from chain_lines import LINES, datasets, per_line  # noqa: E402  (beside this file)
from launch_pieces import host  # noqa: E402

import mdarray  # noqa: E402
from mdarray._backends.backend import backend as default_backend  # noqa: E402


class Nothing:
    __slots__ = ()
    __enter__ = staticmethod("".format)
    __exit__ = staticmethod("".format)


class Use:
    """The stream made current by ``use``, the one before put back on leaving."""

    __slots__ = ("current", "prior", "stream")

    def __init__(self, stream) -> None:
        self.stream, self.current, self.prior = stream, cupy.cuda.get_current_stream, None

    def __enter__(self):
        self.prior = self.current()
        self.stream.use()

    def __exit__(self, *exc):
        self.prior.use()


def main() -> None:
    backend = default_backend()
    device = backend.device_ids[0]
    stream = backend.stream(device)
    on, use, nothing = backend.on(device), Use(stream), Nothing()
    for name, ctx in (("backend.on", on), ("with stream", stream), ("use", use),
                      ("nothing", nothing)):  # fmt: skip

        def enter(ctx=ctx):
            with ctx:
                pass

        print(f"{name:20s} {host(enter, 20000):6.2f} us")

    def sync():
        mdarray.synchronize()
        cupy.cuda.runtime.deviceSynchronize()

    contexts = backend._contexts
    for name in sys.argv[1:] or ["cg"]:
        _, ours = datasets(name)
        for round_ in range(2):
            kept = dict(contexts)
            as_is = per_line(name, mdarray, ours, sync)
            for d in kept:
                contexts[d] = nothing
            try:
                bare = per_line(name, mdarray, ours, sync)
            finally:
                contexts.update(kept)
            print(f"{name} round {round_}: on {as_is.sum():.1f} us, none {bare.sum():.1f} us")
            for line, a, b in zip(LINES[name], as_is, bare):
                print(f"  {line:28s} {a:7.2f} {b:7.2f} {b - a:+7.2f}")


if __name__ == "__main__":
    main()
