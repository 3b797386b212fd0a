"""mdarray: one array over several devices, a NumPy-protocol duck array.

Importing mdarray imports every op module; importing a module registers its ops.
"""

from types import FunctionType
from typing import TYPE_CHECKING

# Modules that only register implementations (ufunc calls, CuPy's hooks, the fallback).
from . import (  # noqa: F401
    _applying,
    _comparisons,
    _contractions,
    _cupy_hooks,
    _diagonals,
    _fallback,
    _histograms,
    _index_arithmetic,
    _indexing,
    _insertions,
    _linalg_compositions,
    _moments,
    _nan_reductions,
    _numpy_compositions,
    _numpy_formulas,
    _numpy_linalg,
    _numpy_statistics,
    _numpy_writes,
    _padding,
    _polynomials,
    _printing,
    _ranges,
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
from ._backend import DeviceSet, default_backend, devices, synchronize
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
from ._memory_report import MemoryReport, memory_report
from ._modes import MAX, MIN, PROD, REPLICA, SUM, Mode, as_mode
from ._numpy_functions import FUNCTIONS as _NUMPY_FUNCTIONS
from ._profile import Profile, profile
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

__version__ = "0.1.0"  # the package version (pyproject.toml reads it from here)
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
    "MemoryReport",
    "Mode",
    "PerformanceWarning",
    "Profile",
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
    "memory_report",
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
    "profile",
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
    "synchronize",
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
# The elementwise ones call a NumPy ufunc or function, whose protocol method
# (``__array_ufunc__``, ``__array_function__``) keeps the group and joins an SPMD run
# already: wrapped again, a call would do that bookkeeping twice.
globals().update(
    {
        name: keeping_groups(value)
        for name, value in globals().items()
        if name in __all__
        and isinstance(value, FunctionType)
        and name not in _ELEMENTWISE_FUNCTIONS
    }
)

if TYPE_CHECKING:
    # The same names for type checkers, which do not run the update above: each takes what
    # its NumPy function takes (tests/test_registry.py keeps this list equal to the tables)
    # and returns a DistArray for DistArray operands, except where said.
    import builtins
    from collections.abc import Callable
    from typing import Any

    abs: Callable[..., DistArray]
    acos: Callable[..., DistArray]
    acosh: Callable[..., DistArray]
    add: Callable[..., DistArray]
    allclose: Callable[..., builtins.bool]  # mdarray.bool is the dtype
    array_equal: Callable[..., builtins.bool]
    array_split: Callable[..., list[DistArray]]
    asin: Callable[..., DistArray]
    asinh: Callable[..., DistArray]
    atan: Callable[..., DistArray]
    atan2: Callable[..., DistArray]
    atanh: Callable[..., DistArray]
    atleast_1d: Callable[..., Any]  # a DistArray, or a tuple of several
    atleast_2d: Callable[..., Any]
    atleast_3d: Callable[..., Any]
    average: Callable[..., Any]  # a DistArray, or a tuple with returned=True
    bitwise_and: Callable[..., DistArray]
    bitwise_invert: Callable[..., DistArray]
    bitwise_left_shift: Callable[..., DistArray]
    bitwise_or: Callable[..., DistArray]
    bitwise_right_shift: Callable[..., DistArray]
    bitwise_xor: Callable[..., DistArray]
    ceil: Callable[..., DistArray]
    clip: Callable[..., DistArray]
    column_stack: Callable[..., DistArray]
    conj: Callable[..., DistArray]
    copysign: Callable[..., DistArray]
    corrcoef: Callable[..., DistArray]
    cos: Callable[..., DistArray]
    cosh: Callable[..., DistArray]
    cov: Callable[..., DistArray]
    cumprod: Callable[..., DistArray]
    cumsum: Callable[..., DistArray]
    diag: Callable[..., DistArray]
    diagonal: Callable[..., DistArray]
    divide: Callable[..., DistArray]
    dot: Callable[..., DistArray]
    einsum: Callable[..., DistArray]
    equal: Callable[..., DistArray]
    exp: Callable[..., DistArray]
    expm1: Callable[..., DistArray]
    floor: Callable[..., DistArray]
    floor_divide: Callable[..., DistArray]
    greater: Callable[..., DistArray]
    greater_equal: Callable[..., DistArray]
    hstack: Callable[..., DistArray]
    hypot: Callable[..., DistArray]
    imag: Callable[..., DistArray]
    isclose: Callable[..., DistArray]
    isfinite: Callable[..., DistArray]
    isinf: Callable[..., DistArray]
    isnan: Callable[..., DistArray]
    less: Callable[..., DistArray]
    less_equal: Callable[..., DistArray]
    log: Callable[..., DistArray]
    log10: Callable[..., DistArray]
    log1p: Callable[..., DistArray]
    log2: Callable[..., DistArray]
    logaddexp: Callable[..., DistArray]
    logical_and: Callable[..., DistArray]
    logical_not: Callable[..., DistArray]
    logical_or: Callable[..., DistArray]
    logical_xor: Callable[..., DistArray]
    maximum: Callable[..., DistArray]
    median: Callable[..., DistArray]
    minimum: Callable[..., DistArray]
    multiply: Callable[..., DistArray]
    nanargmax: Callable[..., DistArray]
    nanargmin: Callable[..., DistArray]
    nancumprod: Callable[..., DistArray]
    nancumsum: Callable[..., DistArray]
    nanmax: Callable[..., DistArray]
    nanmean: Callable[..., DistArray]
    nanmedian: Callable[..., DistArray]
    nanmin: Callable[..., DistArray]
    nanpercentile: Callable[..., DistArray]
    nanprod: Callable[..., DistArray]
    nanquantile: Callable[..., DistArray]
    nanstd: Callable[..., DistArray]
    nansum: Callable[..., DistArray]
    nanvar: Callable[..., DistArray]
    negative: Callable[..., DistArray]
    nextafter: Callable[..., DistArray]
    not_equal: Callable[..., DistArray]
    outer: Callable[..., DistArray]
    pad: Callable[..., DistArray]
    percentile: Callable[..., DistArray]
    positive: Callable[..., DistArray]
    pow: Callable[..., DistArray]
    ptp: Callable[..., DistArray]
    quantile: Callable[..., DistArray]
    ravel: Callable[..., DistArray]
    real: Callable[..., DistArray]
    reciprocal: Callable[..., DistArray]
    remainder: Callable[..., DistArray]
    round: Callable[..., DistArray]
    sign: Callable[..., DistArray]
    signbit: Callable[..., DistArray]
    sin: Callable[..., DistArray]
    sinh: Callable[..., DistArray]
    split: Callable[..., list[DistArray]]
    sqrt: Callable[..., DistArray]
    square: Callable[..., DistArray]
    subtract: Callable[..., DistArray]
    tan: Callable[..., DistArray]
    tanh: Callable[..., DistArray]
    trace: Callable[..., DistArray]
    transpose: Callable[..., DistArray]
    trunc: Callable[..., DistArray]
    vstack: Callable[..., DistArray]
