"""mdarray: one array over several devices, a NumPy-protocol duck array.

Importing mdarray imports every op module; importing a module registers its ops.
"""

from types import FunctionType
from typing import TYPE_CHECKING

# The array API's extensions, as submodules: mdarray.linalg and mdarray.fft; and NumPy's
# lib.stride_tricks, which array-agnostic code reaches through a namespace.
from . import distributed as distributed, fft as fft, lib as lib, linalg as linalg
from ._array import printing as _printing  # noqa: F401
from ._array.array import DistArray
from ._backends.backend import DeviceSet, default_backend, devices, synchronize
from ._core.constants import e, inf, nan, newaxis, pi
from ._core.debug import TransferCount, count_transfers
from ._core.modes import MAX, MIN, PROD, REPLICA, SUM, Mode, as_mode
from ._layouts.layout import Layout, make_2d_index_map
from ._namespace.groups import keeping_groups
from ._namespace.info import __array_namespace_info__
from ._namespace.numpy_functions import FUNCTIONS as _NUMPY_FUNCTIONS

# Modules that only register implementations (ufunc calls, CuPy's hooks, the fallback).
from ._ops.arranging import (
    applying as _applying,  # noqa: F401
    diagonals as _diagonals,  # noqa: F401
    insertions as _insertions,  # noqa: F401
    numpy_compositions as _numpy_compositions,  # noqa: F401
    numpy_writes as _numpy_writes,  # noqa: F401
    padding as _padding,  # noqa: F401
)
from ._ops.arranging.indexing_functions import take, take_along_axis
from ._ops.arranging.rearranging_functions import repeat, roll, tile
from ._ops.creation import (
    index_arithmetic as _index_arithmetic,  # noqa: F401
    ranges as _ranges,  # noqa: F401
)
from ._ops.creation.creation_functions import (
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
from ._ops.creation.data_type_functions import (
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
from ._ops.creation.ways_in import from_callback, from_local_chunks
from ._ops.elementwise import (
    cupy_hooks as _cupy_hooks,  # noqa: F401
    numpy_formulas as _numpy_formulas,  # noqa: F401
)
from ._ops.elementwise.elementwise_functions import ARRAY_API_FUNCTIONS as _ELEMENTWISE_FUNCTIONS
from ._ops.engine import (
    fallback as _fallback,  # noqa: F401
    ufuncs as _ufuncs,  # noqa: F401
)
from ._ops.engine.fusion import fuse
from ._ops.indexing import indexing as _indexing  # noqa: F401
from ._ops.linalg import (
    contractions as _contractions,  # noqa: F401
    linalg_compositions as _linalg_compositions,  # noqa: F401
    numpy_linalg as _numpy_linalg,  # noqa: F401
    polynomials as _polynomials,  # noqa: F401
)
from ._ops.linalg.linear_algebra_functions import matmul, tensordot, vecdot
from ._ops.reductions import (
    histograms as _histograms,  # noqa: F401
    moments as _moments,  # noqa: F401
    nan_reductions as _nan_reductions,  # noqa: F401
    numpy_statistics as _numpy_statistics,  # noqa: F401
    selection as _selection,  # noqa: F401
)
from ._ops.reductions.scans import cumulative_prod, cumulative_sum
from ._ops.reductions.statistical_functions import (
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
from ._ops.shape import stacking as _stacking  # noqa: F401
from ._ops.shape.manipulation_functions import (
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
from ._ops.shape.utility_functions import diff
from ._ops.sorting import (
    comparisons as _comparisons,  # noqa: F401
    stencils as _stencils,  # noqa: F401
)
from ._ops.sorting.searching_functions import (
    argmax,
    argmin,
    count_nonzero,
    nonzero,
    searchsorted,
    where,
)
from ._ops.sorting.set_functions import unique_all, unique_counts, unique_inverse, unique_values
from ._ops.sorting.sorting_functions import argsort, sort
from ._runtime.config import PerformanceWarning, TransferError, options, set_options
from ._runtime.profile import Profile, profile
from ._storage.memory_report import MemoryReport, memory_report

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
