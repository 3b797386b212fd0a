"""The cuda backend's column sums: ``sum(axis=0)`` of a large C-ordered array at memory
bandwidth.

CuPy reduces the leading axis of a C-ordered array with one thread per output column
walking every row, a few bytes in flight per thread (2.4 TB/s on an H200, where its row
sums reach 4.2). Here each thread sums a segment of rows of 16 bytes' worth of adjacent
columns (vector loads, so a warp reads whole rows' spans), the segments' partial sums
land in a small array, and a second launch sums those: two kernels, every byte read
once. The sums run in the result's dtype, row by row within a segment, then over the
segments: NumPy adds a C-ordered array's rows one after another too, so the rounding is
of the same kind (not bit for bit: floating-point sums depend on their order).

CuPy comes in as an argument; this module imports only CuPy's C type names, to compile.
"""

from __future__ import annotations

import numpy as np

from .elementwise import OWN_KERNELS

_THREADS = 256
# Arrays smaller than this take CuPy's reduction (see `_cuda_elementwise.MIN_BYTES`).
MIN_BYTES = 16 << 20
_SUMMED = frozenset("iuf")  # real numbers (complex and bool sums stay CuPy's)

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


_KERNELS: dict = {}  # (device, source dtype, result dtype, vector) -> compiled kernel
_COUNTS: dict = {}  # device -> its multiprocessor count


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
    count = _COUNTS.get(device)
    if count is None:
        count = cupy.cuda.Device(device).attributes["MultiProcessorCount"]
        _COUNTS[device] = count
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


def _kernel(cupy, device: int, source, result, vector: int):
    key = (device, source, result, vector)
    kernel = _KERNELS.get(key)
    if kernel is None:
        from cupy._core._scalar import get_typename  # noqa: PLC0415  (C type names)

        code = _SOURCE.format(
            source=get_typename(source), result=get_typename(result), vector=vector
        )
        module = cupy._core.core.compile_with_cache(code)
        kernel = _KERNELS[key] = module.get_function("mdarray_column_sum")
    return kernel
