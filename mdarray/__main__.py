"""A short demo: ``python -m mdarray``."""

import numpy as np

import mdarray


def main() -> None:
    devices = mdarray.devices()
    print(f"backend: {mdarray.default_backend()}, devices: {list(devices)}")
    host = np.arange(8 * 12, dtype=np.float64).reshape(8, 12)
    x = mdarray.distributed_array(host, mdarray.Layout.block(host.shape, axis=0, devices=devices))
    print("\nx: rows in blocks over the devices")
    print(x.visualize())
    y = x.reshard(mdarray.Layout.grid(host.shape, (2, 2), devices=devices))
    print("\ny = x resharded onto a 2x2 grid of blocks")
    print(y.visualize())
    z = np.sqrt(x) * 2 + y
    print("\nz = np.sqrt(x) * 2 + y, computed chunk by chunk:")
    print(z)
    print("matches NumPy:", np.allclose(z.get(), np.sqrt(host) * 2 + host))
    partial = x.change_mode("sum")
    print(
        f"\nx in SUM mode: {partial.mode}, value unchanged: {np.array_equal(partial.get(), host)}"
    )


if __name__ == "__main__":
    main()
