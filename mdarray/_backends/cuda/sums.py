"""The cuda backend's own sums: ``sum(axis=0)`` of a large C-ordered array at memory
bandwidth (`column_sum`), and the sum of a whole contiguous array in one launch
(`whole_sum`).

CuPy reduces the leading axis of a C-ordered array with one thread per output column
walking every row, a few bytes in flight per thread (2.4 TB/s on an H200, where its row
sums reach 4.2). Here each thread sums a segment of rows of 16 bytes' worth of adjacent
columns (vector loads, so a warp reads whole rows' spans), the segments' partial sums
land in a small array, and a second launch sums those: two kernels, every byte read
once. The sums run in the result's dtype, row by row within a segment, then over the
segments: NumPy adds a C-ordered array's rows one after another too, so the rounding is
of the same kind (not bit for bit: floating-point sums depend on their order).

A whole sum costs CuPy's reduction machinery 9-14 us of host time per call; here it is one
launch of a compiled kernel (about 4 us): each block sums a fixed stride of the elements
into a partial of its own, and the last block to finish (a ticket counter, which it
resets) sums the partials in block order, so the result is the same on every run.

CuPy comes in as an argument; this module imports only CuPy's C type names, to compile.
"""

from __future__ import annotations

import numpy as np

from .elementwise import OWN_KERNELS
from .generated import ARRAY, Launch

_THREADS = 256
# Arrays smaller than this take CuPy's reduction (see `_cuda_elementwise.MIN_BYTES`).
MIN_BYTES = 16 << 20
_SUMMED = frozenset("iuf")  # real numbers (complex and bool sums stay CuPy's)
_HALF = np.dtype(np.float16)  # (its C type needs CuPy's header: CuPy sums it)

_SOURCE = """
typedef {source} in_type;
typedef {result} out_type;
template <typename T, int N> struct alignas(sizeof(T) * N) mdarray_pack {{ T v[N]; }};
extern "C" __global__ void mdarray_column_sum(
    const in_type* __restrict__ x, out_type* __restrict__ out,
    const long long rows, const long long columns, const long long step) {{
  const long long group = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (group * {vector} >= columns) return;
  const long long first = (long long)blockIdx.y * step;
  const long long last = min(rows, first + step);
  out_type sums[{vector}];
  #pragma unroll
  for (int e = 0; e < {vector}; ++e) sums[e] = out_type(0);
  const mdarray_pack<in_type, {vector}>* rows_of =
      reinterpret_cast<const mdarray_pack<in_type, {vector}>*>(x);
  const long long width = columns / {vector};
  #pragma unroll 4
  for (long long r = first; r < last; ++r) {{
    const mdarray_pack<in_type, {vector}> v = rows_of[r * width + group];
    #pragma unroll
    for (int e = 0; e < {vector}; ++e) sums[e] += out_type(v.v[e]);
  }}
  #pragma unroll
  for (int e = 0; e < {vector}; ++e) out[blockIdx.y * columns + group * {vector} + e] = sums[e];
}}
"""


_WHOLE_SOURCE = """
typedef {source} in_type;
typedef {result} out_type;
__device__ void mdarray_block_sum(out_type* shared) {{
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half >>= 1) {{
    if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }}
}}
extern "C" __global__ void mdarray_whole_sum(
    const in_type* __restrict__ x, out_type* partial, unsigned int* ticket,
    out_type* __restrict__ out, const long long n) {{
  __shared__ out_type shared[{threads}];
  __shared__ bool last;
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  out_type s0 = out_type(0), s1 = out_type(0), s2 = out_type(0), s3 = out_type(0);
  for (; i + 3 * stride < n; i += 4 * stride) {{
    s0 += out_type(x[i]);
    s1 += out_type(x[i + stride]);
    s2 += out_type(x[i + 2 * stride]);
    s3 += out_type(x[i + 3 * stride]);
  }}
  for (; i < n; i += stride) s0 += out_type(x[i]);
  shared[threadIdx.x] = (s0 + s1) + (s2 + s3);
  mdarray_block_sum(shared);
  if (threadIdx.x == 0) {{
    partial[blockIdx.x] = shared[0];
    __threadfence();
    // The last block's ticket wraps the counter back to 0 for the next call.
    last = atomicInc(ticket, gridDim.x - 1) == gridDim.x - 1;
  }}
  __syncthreads();
  if (!last) return;
  out_type s = out_type(0);
  for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x) {{
    s += ((volatile out_type*)partial)[b];
  }}
  shared[threadIdx.x] = s;
  mdarray_block_sum(shared);
  if (threadIdx.x == 0) out[0] = shared[0];
}}
"""
_WHOLE_BLOCKS = 4  # blocks per multiprocessor, at most

_KERNELS: dict = {}  # (device, source dtype, result dtype, vector) -> compiled kernel
_WORKSPACES: dict = {}  # (device, stream) -> (partial sums, ticket) of `whole_sum`
_COUNTS: dict = {}  # device -> its multiprocessor count
_LAUNCHES: dict = {}  # (device, source dtype, result dtype, size) -> `whole_sum`'s launch


def column_sum(cupy, ufunc, chunk, axes: tuple, result_dtype, skip_nan: bool):
    """``ufunc.reduce`` over `axes` of `chunk` where that is a sum over axis 0 (keeping
    it, of length 1), in `result_dtype`; None where this does not apply: another ufunc or
    axes, NaNs skipped, small, not C-ordered, fewer than two axes, or dtypes outside the
    real numbers; ``MDARRAY_CUDA_OWN_KERNELS=0``: always None (CuPy's reduction)."""
    result_dtype = np.dtype(result_dtype)
    if (
        not OWN_KERNELS
        or ufunc is not np.add
        or skip_nan
        or axes != (0,)
        or chunk.ndim < 2
        or chunk.nbytes < MIN_BYTES
        or not chunk.flags.c_contiguous
        or chunk.dtype.kind not in _SUMMED
        or chunk.dtype == _HALF
        or result_dtype.kind not in _SUMMED
        or result_dtype.itemsize < 4  # float16 sums round through float32 in NumPy
    ):
        return None
    rows = chunk.shape[0]
    columns = chunk.size // rows
    vector = max(1, 16 // max(chunk.dtype.itemsize, result_dtype.itemsize))
    while vector > 1 and (columns % vector or chunk.data.ptr % (vector * chunk.itemsize)):
        vector //= 2
    device = cupy.cuda.runtime.getDevice()
    count = _COUNTS.get(device) or _count(cupy, device)
    kernel = _kernel(cupy, device, chunk.dtype, result_dtype, vector)
    across = -(-(columns // vector) // _THREADS)
    # Enough blocks to fill the device several times over, each segment long enough
    # that its partial sums are a small part of the traffic.
    segments = max(1, min(rows // 64, -(-count * 8 // across)))
    step = -(-rows // segments)
    segments = -(-rows // step)
    partial = cupy.empty((segments, columns), result_dtype)
    kernel(
        (across, segments),
        (_THREADS,),
        (chunk, partial, np.int64(rows), np.int64(columns), np.int64(step)),
    )
    if segments == 1:
        out = partial
    else:
        out = cupy.empty((1, columns), result_dtype)
        last = _kernel(cupy, device, result_dtype, result_dtype, 1)
        last(
            (-(-columns // _THREADS), 1),
            (_THREADS,),
            (partial, out, np.int64(segments), np.int64(columns), np.int64(segments)),
        )
    return out.reshape((1, *chunk.shape[1:]))


def whole_sum(cupy, chunk, result_dtype, shape=None):
    """The sum of every element of `chunk` (C or Fortran contiguous, not empty, of real
    numbers but float16), keeping its dims (or in `shape` of one element), in
    `result_dtype` (of 4 bytes or more: float16 sums round through float32 in NumPy); None
    where this does not apply (and always with ``MDARRAY_CUDA_OWN_KERNELS=0``: CuPy's
    reduction). The result comes from the current allocator without `cupy.empty`'s
    checks."""
    if (
        not OWN_KERNELS
        or not chunk.size
        or chunk.dtype.kind not in _SUMMED
        or chunk.dtype == _HALF
        or result_dtype.kind not in _SUMMED
        or result_dtype.itemsize < 4
        or not (chunk.flags.c_contiguous or chunk.flags.f_contiguous)
    ):
        return None
    device = cupy.cuda.runtime.getDevice()
    key = (device, chunk.dtype, result_dtype, chunk.size)
    launch = _LAUNCHES.get(key)
    if launch is None:
        kernel = _kernel(cupy, device, chunk.dtype, result_dtype, 0)
        count = _COUNTS.get(device) or _count(cupy, device)
        blocks = min(-(-chunk.size // (_THREADS * 4)), count * _WHOLE_BLOCKS)
        if len(_LAUNCHES) > 256:
            _LAUNCHES.clear()
        launch = _LAUNCHES[key] = Launch(cupy, kernel, blocks, _WholeSum(chunk.size), _THREADS)
    stream = cupy.cuda.get_current_stream().ptr
    workspace = _WORKSPACES.get((device, stream))
    if workspace is None:  # partial sums of up to 8 bytes each, and the ticket at 0
        count = _COUNTS.get(device) or _count(cupy, device)
        workspace = (cupy.empty(count * _WHOLE_BLOCKS * 8, np.uint8), cupy.zeros(1, np.uint32))
        _WORKSPACES[(device, stream)] = workspace
    shape = (1,) * chunk.ndim if shape is None else shape
    out = cupy.ndarray(shape, result_dtype, cupy.cuda.alloc(result_dtype.itemsize))
    launch((chunk, *workspace), out)
    return out


class _WholeSum:
    """The parameters of `whole_sum`'s kernel for one size (`generated.Launch`): the
    chunk, the partial sums and the ticket, then the result and the size."""

    __slots__ = ("after", "before", "dtypes", "kinds")

    def __init__(self, size: int) -> None:
        self.kinds, self.dtypes = (ARRAY, ARRAY, ARRAY), (None, None, None)
        self.before, self.after = (), (np.int64(size),)


def _count(cupy, device: int) -> int:
    """`device`'s multiprocessor count, kept."""
    count = _COUNTS[device] = cupy.cuda.Device(device).attributes["MultiProcessorCount"]
    return count


def _kernel(cupy, device: int, source, result, vector: int):
    """The column sum of `vector` columns per thread, or (`vector` 0) the whole sum."""
    key = (device, source, result, vector)
    kernel = _KERNELS.get(key)
    if kernel is None:
        from cupy._core._scalar import get_typename  # noqa: PLC0415  (C type names)

        names = {"source": get_typename(source), "result": get_typename(result)}
        if vector:
            code, name = _SOURCE.format(vector=vector, **names), "mdarray_column_sum"
        else:
            code, name = _WHOLE_SOURCE.format(threads=_THREADS, **names), "mdarray_whole_sum"
        module = cupy._core.core.compile_with_cache(code)
        kernel = _KERNELS[key] = module.get_function(name)
    return kernel
