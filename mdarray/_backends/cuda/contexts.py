"""What `CudaBackend.on` gives: per device a context issuing work on the device's stream
(with the device current where the process holds several GPUs), made once."""

from __future__ import annotations


class Contexts(dict):
    """Per device the context `CudaBackend.on` gives, made by `make` on first use."""

    __slots__ = ("_make",)

    def __init__(self, make) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, device: int):
        context = self[device] = self._make(device)
        return context


class DeviceStream:
    """Enter a CUDA device and its stream together (one reusable object per device)."""

    __slots__ = ("device", "stream")

    def __init__(self, device, stream) -> None:
        self.device = device
        self.stream = stream

    def __enter__(self):
        self.device.__enter__()
        self.stream.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.stream.__exit__(*exc)
        self.device.__exit__(*exc)
