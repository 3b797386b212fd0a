"""mdarray: one array over several devices, a NumPy-protocol duck array.

Importing mdarray imports every op module; importing a module registers its ops. Each
public name is defined once, in the module that owns it, and named here: the array API's
elementwise functions (`mdarray._ops.elementwise.elementwise_functions`) and NumPy's names
(`mdarray._namespace.numpy_functions`) as they are, since their ufunc's or function's
protocol keeps the device group; the op modules' functions wrapped once, below, by
`keeping_groups`.
"""

# The array API's extensions, as submodules: mdarray.linalg and mdarray.fft; NumPy's
# lib.stride_tricks, which array-agnostic code reaches through a namespace; and SciPy's
# elementwise special functions, which SciPy's array API layer looks up as ``xp.special``.
from . import (
    distributed as distributed,
    fft as fft,
    lib as lib,
    linalg as linalg,
    special as special,
)
from ._array import printing as _printing  # noqa: F401
from ._array.array import DistArray
from ._backends import backend as _backend
from ._backends.backend import DeviceSet
from ._core import debug as _debug, modes as _modes
from ._core.constants import e, inf, nan, newaxis, pi
from ._core.debug import TransferCount
from ._core.modes import MAX, MIN, PROD, REPLICA, SUM, Mode
from ._layouts import layout as _layout
from ._layouts.layout import Layout
from ._namespace import info as _info
from ._namespace.groups import keeping_groups as _keeping_groups
from ._namespace.numpy_functions import (
    allclose,
    array_equal,
    array_split,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    average,
    column_stack,
    corrcoef,
    cov,
    cumprod,
    cumsum,
    diag,
    diagonal,
    dot,
    einsum,
    hstack,
    isclose,
    median,
    nanargmax,
    nanargmin,
    nancumprod,
    nancumsum,
    nanmax,
    nanmean,
    nanmedian,
    nanmin,
    nanpercentile,
    nanprod,
    nanquantile,
    nanstd,
    nansum,
    nanvar,
    outer,
    pad,
    percentile,
    ptp,
    quantile,
    ravel,
    split,
    trace,
    transpose,
    vstack,
)

# The op modules: those whose functions are public (wrapped at the end), and those that
# only register implementations (noqa F401: ufunc calls, CuPy's hooks, the fallback).
from ._ops.arranging import (
    applying as _applying,  # noqa: F401
    diagonals as _diagonals,  # noqa: F401
    indexing_functions as _indexing_functions,
    insertions as _insertions,  # noqa: F401
    numpy_compositions as _numpy_compositions,  # noqa: F401
    numpy_writes as _numpy_writes,  # noqa: F401
    padding as _padding,  # noqa: F401
    rearranging_functions as _rearranging,
)
from ._ops.creation import (
    creation_functions as _creation,
    data_type_functions as _data_types,
    index_arithmetic as _index_arithmetic,  # noqa: F401
    ranges as _ranges,
    ways_in as _ways_in,
)
from ._ops.creation.data_type_functions import (
    bool,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._ops.elementwise import (
    cupy_hooks as _cupy_hooks,  # noqa: F401
    numpy_formulas as _numpy_formulas,  # noqa: F401
)
from ._ops.elementwise.elementwise_functions import (
    abs,
    acos,
    acosh,
    add,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bitwise_and,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    ceil,
    clip,
    conj,
    copysign,
    cos,
    cosh,
    divide,
    equal,
    exp,
    expm1,
    floor,
    floor_divide,
    greater,
    greater_equal,
    hypot,
    imag,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    multiply,
    negative,
    nextafter,
    not_equal,
    positive,
    pow,
    real,
    reciprocal,
    remainder,
    round,
    sign,
    signbit,
    sin,
    sinh,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    trunc,
)
from ._ops.engine import (
    fallback as _fallback,  # noqa: F401
    fusion as _fusion,
    iteration as _iteration,
    ufuncs as _ufuncs,  # noqa: F401
)
from ._ops.indexing import indexing as _indexing  # noqa: F401
from ._ops.linalg import (
    contractions as _contractions,  # noqa: F401
    linalg_compositions as _linalg_compositions,  # noqa: F401
    numpy_linalg as _numpy_linalg,  # noqa: F401
    polynomials as _polynomials,  # noqa: F401
)
from ._ops.reductions import (
    histograms as _histograms,  # noqa: F401
    moments as _moments,  # noqa: F401
    nan_reductions as _nan_reductions,  # noqa: F401
    numpy_statistics as _numpy_statistics,  # noqa: F401
    scans as _scans,
    selection as _selection,  # noqa: F401
    statistical_functions as _statistical,
)
from ._ops.shape import (
    manipulation_functions as _manipulation,
    stacking as _stacking,  # noqa: F401
    transposes as _transposes,
    utility_functions as _utility,
)
from ._ops.sorting import (
    comparisons as _comparisons,  # noqa: F401
    searching_functions as _searching,
    set_functions as _set_functions,
    sorting_functions as _sorting,
    stencils as _stencils,  # noqa: F401
)
from ._runtime import config as _config, profile as _profile
from ._runtime.config import PerformanceWarning, TransferError
from ._runtime.profile import Profile
from ._storage import memory_report as _memory_report
from ._storage.memory_report import MemoryReport

# The standard's names that mdarray.linalg holds too: one object in both namespaces.
from .linalg import matmul, matrix_transpose, tensordot, vecdot

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
    "abs",
    "acos",
    "acosh",
    "add",
    "all",
    "allclose",
    "any",
    "arange",
    "argmax",
    "argmin",
    "argsort",
    "array_equal",
    "array_split",
    "as_mode",
    "asarray",
    "asin",
    "asinh",
    "astype",
    "atan",
    "atan2",
    "atanh",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "average",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "bool",
    "broadcast_arrays",
    "broadcast_to",
    "can_cast",
    "ceil",
    "clip",
    "column_stack",
    "complex64",
    "complex128",
    "concat",
    "conj",
    "copysign",
    "corrcoef",
    "cos",
    "cosh",
    "count_nonzero",
    "count_transfers",
    "cov",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "default_backend",
    "devices",
    "diag",
    "diagonal",
    "diff",
    "distributed_array",
    "divide",
    "dot",
    "e",
    "einsum",
    "empty",
    "empty_like",
    "equal",
    "exp",
    "expand_dims",
    "expm1",
    "eye",
    "finfo",
    "flip",
    "float16",
    "float32",
    "float64",
    "floor",
    "floor_divide",
    "from_callback",
    "from_dlpack",
    "from_local_chunks",
    "full",
    "full_like",
    "fuse",
    "geomspace",
    "greater",
    "greater_equal",
    "hstack",
    "hypot",
    "iinfo",
    "imag",
    "inf",
    "int8",
    "int16",
    "int32",
    "int64",
    "isclose",
    "isdtype",
    "isfinite",
    "isinf",
    "isnan",
    "iterate",
    "less",
    "less_equal",
    "linspace",
    "log",
    "log1p",
    "log2",
    "log10",
    "logaddexp",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "logspace",
    "make_2d_index_map",
    "matmul",
    "matrix_transpose",
    "max",
    "maximum",
    "mean",
    "median",
    "memory_report",
    "meshgrid",
    "min",
    "minimum",
    "moveaxis",
    "multiply",
    "nan",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmean",
    "nanmedian",
    "nanmin",
    "nanpercentile",
    "nanprod",
    "nanquantile",
    "nanstd",
    "nansum",
    "nanvar",
    "negative",
    "newaxis",
    "nextafter",
    "nonzero",
    "not_equal",
    "ones",
    "ones_like",
    "options",
    "outer",
    "pad",
    "percentile",
    "permute_dims",
    "pi",
    "positive",
    "pow",
    "prod",
    "profile",
    "ptp",
    "quantile",
    "ravel",
    "real",
    "reciprocal",
    "remainder",
    "repeat",
    "reshape",
    "result_type",
    "roll",
    "round",
    "searchsorted",
    "set_options",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "sort",
    "split",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "subtract",
    "sum",
    "swapaxes",
    "synchronize",
    "take",
    "take_along_axis",
    "tan",
    "tanh",
    "tensordot",
    "tile",
    "trace",
    "transpose",
    "tril",
    "triu",
    "trunc",
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
    "vstack",
    "where",
    "zeros",
    "zeros_like",
]

# The op modules' public functions, each wrapped once here: its results keep its
# operands' device group (DESIGN: ``x[:5].device == x.device``), and in an SPMD run it is
# one agreed step, or the fallback where it has no multi-process implementation
# (`_namespace.groups`). Op code calls the functions themselves, unwrapped: that
# bookkeeping is the public call's, once.
arange = _keeping_groups(_creation.arange)
asarray = _keeping_groups(_creation.asarray)
distributed_array = _keeping_groups(_creation.distributed_array)
empty = _keeping_groups(_creation.empty)
empty_like = _keeping_groups(_creation.empty_like)
eye = _keeping_groups(_creation.eye)
from_dlpack = _keeping_groups(_creation.from_dlpack)
full = _keeping_groups(_creation.full)
full_like = _keeping_groups(_creation.full_like)
geomspace = _keeping_groups(_ranges.geomspace)
linspace = _keeping_groups(_creation.linspace)
logspace = _keeping_groups(_ranges.logspace)
meshgrid = _keeping_groups(_creation.meshgrid)
ones = _keeping_groups(_creation.ones)
ones_like = _keeping_groups(_creation.ones_like)
tril = _keeping_groups(_creation.tril)
triu = _keeping_groups(_creation.triu)
zeros = _keeping_groups(_creation.zeros)
zeros_like = _keeping_groups(_creation.zeros_like)

astype = _keeping_groups(_data_types.astype)
can_cast = _keeping_groups(_data_types.can_cast)
finfo = _keeping_groups(_data_types.finfo)
iinfo = _keeping_groups(_data_types.iinfo)
isdtype = _keeping_groups(_data_types.isdtype)
result_type = _keeping_groups(_data_types.result_type)

broadcast_arrays = _keeping_groups(_manipulation.broadcast_arrays)
broadcast_to = _keeping_groups(_manipulation.broadcast_to)
concat = _keeping_groups(_manipulation.concat)
expand_dims = _keeping_groups(_manipulation.expand_dims)
flip = _keeping_groups(_manipulation.flip)
moveaxis = _keeping_groups(_transposes.moveaxis)
permute_dims = _keeping_groups(_transposes.permute_dims)
reshape = _keeping_groups(_manipulation.reshape)
squeeze = _keeping_groups(_manipulation.squeeze)
stack = _keeping_groups(_manipulation.stack)
swapaxes = _keeping_groups(_transposes.swapaxes)
unstack = _keeping_groups(_manipulation.unstack)

repeat = _keeping_groups(_rearranging.repeat)
roll = _keeping_groups(_rearranging.roll)
tile = _keeping_groups(_rearranging.tile)

take = _keeping_groups(_indexing_functions.take)
take_along_axis = _keeping_groups(_indexing_functions.take_along_axis)

diff = _keeping_groups(_utility.diff)

all = _keeping_groups(_statistical.all)
any = _keeping_groups(_statistical.any)
max = _keeping_groups(_statistical.max)
mean = _keeping_groups(_statistical.mean)
min = _keeping_groups(_statistical.min)
prod = _keeping_groups(_statistical.prod)
std = _keeping_groups(_statistical.std)
sum = _keeping_groups(_statistical.sum)
var = _keeping_groups(_statistical.var)

cumulative_prod = _keeping_groups(_scans.cumulative_prod)
cumulative_sum = _keeping_groups(_scans.cumulative_sum)

argmax = _keeping_groups(_searching.argmax)
argmin = _keeping_groups(_searching.argmin)
count_nonzero = _keeping_groups(_searching.count_nonzero)
nonzero = _keeping_groups(_searching.nonzero)
searchsorted = _keeping_groups(_searching.searchsorted)
where = _keeping_groups(_searching.where)

argsort = _keeping_groups(_sorting.argsort)
sort = _keeping_groups(_sorting.sort)

unique_all = _keeping_groups(_set_functions.unique_all)
unique_counts = _keeping_groups(_set_functions.unique_counts)
unique_inverse = _keeping_groups(_set_functions.unique_inverse)
unique_values = _keeping_groups(_set_functions.unique_values)

__array_namespace_info__ = _keeping_groups(_info.__array_namespace_info__)

from_callback = _keeping_groups(_ways_in.from_callback)
from_local_chunks = _keeping_groups(_ways_in.from_local_chunks)

fuse = _keeping_groups(_fusion.fuse)
iterate = _keeping_groups(_iteration.iterate)

make_2d_index_map = _keeping_groups(_layout.make_2d_index_map)

as_mode = _keeping_groups(_modes.as_mode)

default_backend = _keeping_groups(_backend.default_backend)
devices = _keeping_groups(_backend.devices)
synchronize = _keeping_groups(_backend.synchronize)

options = _keeping_groups(_config.options)
set_options = _keeping_groups(_config.set_options)

count_transfers = _keeping_groups(_debug.count_transfers)

profile = _keeping_groups(_profile.profile)

memory_report = _keeping_groups(_memory_report.memory_report)
