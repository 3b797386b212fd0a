"""mdarray: one array over several devices, a NumPy-protocol duck array.

Importing mdarray imports every op module; importing a module registers its ops.
"""

from . import _elementwise_functions  # noqa: F401  (registers the ufunc methods)
from ._array import DistArray
from ._backend import DeviceSet, default_backend, devices
from ._config import PerformanceWarning, options
from ._creation_functions import distributed_array, empty, full, ones, zeros
from ._debug import count_transfers
from ._layout import Layout, make_2d_index_map
from ._modes import MAX, MIN, PROD, REPLICA, SUM, Mode, as_mode

__array_api_version__ = "2024.12"

__all__ = [
    "MAX",
    "MIN",
    "PROD",
    "REPLICA",
    "SUM",
    "DeviceSet",
    "DistArray",
    "Layout",
    "Mode",
    "PerformanceWarning",
    "as_mode",
    "count_transfers",
    "default_backend",
    "devices",
    "distributed_array",
    "empty",
    "full",
    "make_2d_index_map",
    "ones",
    "options",
    "zeros",
]
