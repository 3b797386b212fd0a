"""mdarray: one array over several devices, a NumPy-protocol duck array.

Importing mdarray imports every op module; importing a module registers its ops.
"""

from types import FunctionType
from typing import TYPE_CHECKING

# Modules that only register implementations (ufunc calls, CuPy's hooks, the fallback).
from . import (  # noqa: F401
    _comparisons,
    _contractions,
    _cupy_hooks,
    _diagonals,
    _fallback,
    _histograms,
    _indexing,
    _moments,
    _nan_reductions,
    _numpy_linalg,
    _numpy_statistics,
    _padding,
    _selection,
    _stacking,
    _stencils,
    _ufuncs,
)

# The array API's extensions, as submodules: mdarray.linalg and mdarray.fft; and NumPy's
# lib.stride_tricks, which array-agnostic code reaches through a namespace.
from . import distributed as distributed
from . import fft as fft
from . import lib as lib
from . import linalg as linalg
from ._array import DistArray
from ._backend import DeviceSet, default_backend, devices
from ._config import PerformanceWarning, TransferError, options, set_options
from ._constants import e, inf, nan, newaxis, pi
from ._creation_functions import (
    arange,
    asarray,
    distributed_array,
    empty,
    empty_like,
    eye,
    from_dlpack,
    full,
    full_like,
    geomspace,
    linspace,
    logspace,
    meshgrid,
    ones,
    ones_like,
    tril,
    triu,
    zeros,
    zeros_like,
)
from ._data_type_functions import (
    astype,
    bool,
    can_cast,
    complex64,
    complex128,
    finfo,
    float16,
    float32,
    float64,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    isdtype,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._debug import TransferCount, count_transfers
from ._elementwise_functions import ARRAY_API_FUNCTIONS as _ELEMENTWISE_FUNCTIONS
from ._fusion import fuse
from ._groups import keeping_groups
from ._indexing_functions import take, take_along_axis
from ._info import __array_namespace_info__
from ._layout import Layout, make_2d_index_map
from ._linear_algebra_functions import matmul, tensordot, vecdot
from ._manipulation_functions import (
    broadcast_arrays,
    broadcast_to,
    concat,
    expand_dims,
    flip,
    matrix_transpose,
    moveaxis,
    permute_dims,
    reshape,
    squeeze,
    stack,
    swapaxes,
    unstack,
)
from ._modes import MAX, MIN, PROD, REPLICA, SUM, Mode, as_mode
from ._numpy_functions import FUNCTIONS as _NUMPY_FUNCTIONS
from ._rearranging_functions import repeat, roll, tile
from ._scans import cumulative_prod, cumulative_sum
from ._searching_functions import (
    argmax,
    argmin,
    count_nonzero,
    nonzero,
    searchsorted,
    where,
)
from ._set_functions import unique_all, unique_counts, unique_inverse, unique_values
from ._sorting_functions import argsort, sort
from ._statistical_functions import (
    all,
    any,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
)
from ._utility_functions import diff
from ._ways_in import from_callback, from_local_chunks

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
    "TransferCount",
    "TransferError",
    "__array_namespace_info__",
    "all",
    "any",
    "arange",
    "argmax",
    "argmin",
    "argsort",
    "as_mode",
    "asarray",
    "astype",
    "bool",
    "broadcast_arrays",
    "broadcast_to",
    "can_cast",
    "complex64",
    "complex128",
    "concat",
    "count_nonzero",
    "count_transfers",
    "cumulative_prod",
    "cumulative_sum",
    "default_backend",
    "devices",
    "diff",
    "distributed_array",
    "e",
    "empty",
    "empty_like",
    "expand_dims",
    "eye",
    "finfo",
    "flip",
    "float16",
    "float32",
    "float64",
    "from_callback",
    "from_dlpack",
    "from_local_chunks",
    "full",
    "full_like",
    "fuse",
    "geomspace",
    "iinfo",
    "inf",
    "int8",
    "int16",
    "int32",
    "int64",
    "isdtype",
    "linspace",
    "logspace",
    "make_2d_index_map",
    "matmul",
    "matrix_transpose",
    "max",
    "mean",
    "meshgrid",
    "min",
    "moveaxis",
    "nan",
    "newaxis",
    "nonzero",
    "ones",
    "ones_like",
    "options",
    "permute_dims",
    "pi",
    "prod",
    "repeat",
    "reshape",
    "result_type",
    "roll",
    "searchsorted",
    "set_options",
    "sort",
    "squeeze",
    "stack",
    "std",
    "sum",
    "swapaxes",
    "take",
    "take_along_axis",
    "tensordot",
    "tile",
    "tril",
    "triu",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "unstack",
    "var",
    "vecdot",
    "where",
    "zeros",
    "zeros_like",
]

# The array API's elementwise functions (add, acos, pow, ...), generated from one table,
# and NumPy's names that array-agnostic code calls on a namespace (cumsum, nanmean, ...).
globals().update(_ELEMENTWISE_FUNCTIONS)
globals().update(_NUMPY_FUNCTIONS)
__all__.extend(sorted(_ELEMENTWISE_FUNCTIONS))
__all__.extend(sorted(_NUMPY_FUNCTIONS))

# Every function keeps its operands' device group (DESIGN: ``x[:5].device == x.device``).
globals().update(
    {
        name: keeping_groups(value)
        for name, value in globals().items()
        if name in __all__ and isinstance(value, FunctionType)
    }
)

if TYPE_CHECKING:
    # The same names for type checkers, which do not run the update above: each takes what
    # its NumPy function takes (tests/test_registry.py keeps this list equal to the tables).
    from collections.abc import Callable
    from typing import Any

    abs: Callable[..., Any]
    acos: Callable[..., Any]
    acosh: Callable[..., Any]
    add: Callable[..., Any]
    allclose: Callable[..., Any]
    array_equal: Callable[..., Any]
    array_split: Callable[..., Any]
    asin: Callable[..., Any]
    asinh: Callable[..., Any]
    atan: Callable[..., Any]
    atan2: Callable[..., Any]
    atanh: Callable[..., Any]
    atleast_1d: Callable[..., Any]
    atleast_2d: Callable[..., Any]
    atleast_3d: Callable[..., Any]
    average: Callable[..., Any]
    bitwise_and: Callable[..., Any]
    bitwise_invert: Callable[..., Any]
    bitwise_left_shift: Callable[..., Any]
    bitwise_or: Callable[..., Any]
    bitwise_right_shift: Callable[..., Any]
    bitwise_xor: Callable[..., Any]
    ceil: Callable[..., Any]
    clip: Callable[..., Any]
    column_stack: Callable[..., Any]
    conj: Callable[..., Any]
    copysign: Callable[..., Any]
    corrcoef: Callable[..., Any]
    cos: Callable[..., Any]
    cosh: Callable[..., Any]
    cov: Callable[..., Any]
    cumprod: Callable[..., Any]
    cumsum: Callable[..., Any]
    divide: Callable[..., Any]
    dot: Callable[..., Any]
    einsum: Callable[..., Any]
    equal: Callable[..., Any]
    exp: Callable[..., Any]
    expm1: Callable[..., Any]
    floor: Callable[..., Any]
    floor_divide: Callable[..., Any]
    greater: Callable[..., Any]
    greater_equal: Callable[..., Any]
    hstack: Callable[..., Any]
    hypot: Callable[..., Any]
    imag: Callable[..., Any]
    isclose: Callable[..., Any]
    isfinite: Callable[..., Any]
    isinf: Callable[..., Any]
    isnan: Callable[..., Any]
    less: Callable[..., Any]
    less_equal: Callable[..., Any]
    log: Callable[..., Any]
    log10: Callable[..., Any]
    log1p: Callable[..., Any]
    log2: Callable[..., Any]
    logaddexp: Callable[..., Any]
    logical_and: Callable[..., Any]
    logical_not: Callable[..., Any]
    logical_or: Callable[..., Any]
    logical_xor: Callable[..., Any]
    maximum: Callable[..., Any]
    median: Callable[..., Any]
    minimum: Callable[..., Any]
    multiply: Callable[..., Any]
    nanargmax: Callable[..., Any]
    nanargmin: Callable[..., Any]
    nancumprod: Callable[..., Any]
    nancumsum: Callable[..., Any]
    nanmax: Callable[..., Any]
    nanmean: Callable[..., Any]
    nanmedian: Callable[..., Any]
    nanmin: Callable[..., Any]
    nanpercentile: Callable[..., Any]
    nanprod: Callable[..., Any]
    nanquantile: Callable[..., Any]
    nanstd: Callable[..., Any]
    nansum: Callable[..., Any]
    nanvar: Callable[..., Any]
    negative: Callable[..., Any]
    nextafter: Callable[..., Any]
    not_equal: Callable[..., Any]
    pad: Callable[..., Any]
    percentile: Callable[..., Any]
    positive: Callable[..., Any]
    pow: Callable[..., Any]
    ptp: Callable[..., Any]
    quantile: Callable[..., Any]
    ravel: Callable[..., Any]
    real: Callable[..., Any]
    reciprocal: Callable[..., Any]
    remainder: Callable[..., Any]
    round: Callable[..., Any]
    sign: Callable[..., Any]
    signbit: Callable[..., Any]
    sin: Callable[..., Any]
    sinh: Callable[..., Any]
    split: Callable[..., Any]
    sqrt: Callable[..., Any]
    square: Callable[..., Any]
    subtract: Callable[..., Any]
    tan: Callable[..., Any]
    tanh: Callable[..., Any]
    transpose: Callable[..., Any]
    trunc: Callable[..., Any]
    vstack: Callable[..., Any]
