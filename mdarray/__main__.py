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
    print("matches NumPy:", np.allclose(np.asarray(z), np.sqrt(host) * 2 + host))
    with mdarray.count_transfers() as moved:
        column_sums = z.sum(axis=0)
    print(
        f"\nz.sum(axis=0) over row blocks: a partial result in {column_sums.mode} mode, "
        f"{moved.total} bytes moved to make it"
    )
    print("its value:", column_sums.get())
    print("matches NumPy:", np.allclose(column_sums.get(), (np.sqrt(host) * 2 + host).sum(axis=0)))


if __name__ == "__main__":
    main()
