"""`__array_namespace_info__`: what the mdarray namespace supports (array API 2024.12)."""

from __future__ import annotations

import numpy as np

from mdarray._backends.backend import DeviceSet, backend as default_backend_object
from mdarray._layouts.layout import Device
from mdarray._ops.creation.data_type_functions import DTYPES

_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "integral": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
    "numeric": tuple(name for name in DTYPES if name != "bool"),
}


class Info:
    """The inspection object `__array_namespace_info__` returns.

    Devices are what ``device=`` accepts: the default is the DeviceSet of every device
    (blocks along axis 0 over them); each device id puts all data on that device.
    """

    __module__ = "mdarray"

    def capabilities(self) -> dict[str, bool | int]:
        # Boolean-mask indexing and data-dependent shapes work, through the gathered
        # fallback path where no distributed implementation exists.
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> DeviceSet:
        backend = default_backend_object()
        return DeviceSet(backend.device_ids, backend.name)

    def devices(self) -> list[DeviceSet | int]:
        return [self.default_device(), *default_backend_object().device_ids]

    def default_dtypes(self, *, device: Device = None) -> dict[str, np.dtype]:
        return {
            "real floating": DTYPES["float64"],
            "complex floating": DTYPES["complex128"],
            "integral": DTYPES["int64"],
            "indexing": DTYPES["int64"],
        }

    def dtypes(
        self, *, device: Device = None, kind: str | tuple[str, ...] | None = None
    ) -> dict[str, np.dtype]:
        if kind is None:
            return dict(DTYPES)
        kinds = kind if isinstance(kind, tuple) else (kind,)
        out = {}
        for k in kinds:
            if k not in _KINDS:
                raise ValueError(f"unsupported dtype kind {k!r}; expected one of {sorted(_KINDS)}")
            out.update({name: DTYPES[name] for name in _KINDS[k]})
        return out


def __array_namespace_info__() -> Info:
    """The array API inspection object of the mdarray namespace.

    >>> import mdarray
    >>> info = mdarray.__array_namespace_info__()
    >>> info.default_dtypes()["real floating"], info.capabilities()["boolean indexing"]
    (dtype('float64'), True)
    """
    return Info()
