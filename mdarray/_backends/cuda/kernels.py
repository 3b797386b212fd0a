"""Kernels the cuda backend builds from CuPy's where CuPy's own do not do what NumPy
does: adapters for ufuncs CuPy lacks or loops it lacks (``spacing``, complex operands of
the logical ufuncs), the reduction kernel of argmin/argmax with NumPy's NaN rule, and
scalar fills bit for bit (CuPy's memset writes ``-0.0`` as ``+0.0``).
CuPy comes in as an argument: this module imports nothing of it.
"""

from __future__ import annotations

import sys

import numpy as np

from mdarray._core import regions as _regions
from mdarray._core.scipy_ufuncs import scipy_ufunc

from .elementwise import OWN_KERNELS


def _truth_of_complex(cupy, kernel):
    """CuPy's logical ufuncs have no complex loops; NumPy's read a complex as ``!= 0``."""

    def call(*args, **kwargs):
        truths = [a != 0 if np.dtype(_dtype_of(a)).kind == "c" else a for a in args]
        return kernel(*truths, **kwargs)

    return call


def _spacing(cupy, kernel):
    """CuPy has no ``spacing``: the step to the next float away from zero, computed in
    NumPy's loop dtype (float16 for int8, ...), as ``nextafter(x, +-inf) - x``."""

    def call(x, out=None, dtype=None, casting="same_kind"):
        loop = np.spacing.resolve_dtypes((np.dtype(_dtype_of(x)), None))[1]
        x = cupy.asarray(x).astype(loop, copy=False)
        result = cupy.nextafter(x, cupy.copysign(cupy.asarray(np.inf, loop), x)) - x
        if dtype is not None:
            result = result.astype(dtype)
        if out is None:
            return result
        target = out[0] if isinstance(out, tuple) else out
        cupy.copyto(target, result, casting=casting)
        return out

    return call


def _dtype_of(a):
    return a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype


# NumPy ufunc -> adapter(cupy, CuPy's ufunc of that name or None) -> kernel.
ADAPTERS = {
    np.logical_and: _truth_of_complex,
    np.logical_not: _truth_of_complex,
    np.logical_or: _truth_of_complex,
    np.logical_xor: _truth_of_complex,
    np.spacing: _spacing,
}


_PICK_PREAMBLE = """
template <typename T> struct mdarray_pick { T v; long long i; };
template <typename T, bool LARGEST>
__device__ mdarray_pick<T> mdarray_better(mdarray_pick<T> a, mdarray_pick<T> b) {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    bool a_nan = a.v != a.v, b_nan = b.v != b.v;
    if (a_nan || b_nan) {
        if (a_nan && b_nan) return a.i < b.i ? a : b;
        return a_nan ? a : b;
    }
    if (LARGEST ? a.v > b.v : a.v < b.v) return a;
    if (LARGEST ? b.v > a.v : b.v < a.v) return b;
    return a.i < b.i ? a : b;
}
"""
_PICKERS: dict = {}


def pick_kernel(cupy, largest: bool):
    """The reduction kernel of `CudaBackend.arg_pick` for real floats: over (value, index
    along the axis) pairs, a NaN beats any number, ties go to the lower index."""
    kernel = _PICKERS.get(largest)
    if kernel is None:
        kernel = _PICKERS[largest] = cupy.ReductionKernel(
            "T x",
            "int64 y",
            "mdarray_pick<T>{x, (long long)_J}",
            f"mdarray_better<T, {'true' if largest else 'false'}>(a, b)",
            "y = a.i",
            "mdarray_pick<T>{T(), -1LL}",
            "mdarray_argmax" if largest else "mdarray_argmin",
            reduce_type="mdarray_pick<T>",
            preamble=_PICK_PREAMBLE,
        )
    return kernel


def zero_bits(value, dtype) -> bool:
    """Whether `value` in `dtype` (a number type) is all zero bits: a memset writes it
    (``-0.0`` is not: its sign bit is set)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "biufc":
        return False
    try:
        return not any(np.asarray(value, dtype).tobytes())
    except (TypeError, ValueError, OverflowError):
        return False


def plain_fill(dtype, value) -> bool:
    """Whether CuPy's fill writes scalar `value` bit for bit (`write_scalar`)."""
    return (
        dtype.kind not in "fc" or not isinstance(value, (float, complex, np.inexact)) or value != 0
    )


def write_scalar(target, value) -> None:
    """``target[...] = value`` (a scalar) bit for bit. CuPy fills with a memset where the
    scalar equals zero, so ``-0.0`` (SUM's float identity) would land as ``+0.0``: a signed
    zero is written as its bit pattern through an unsigned view instead."""
    kind = target.dtype.kind
    if plain_fill(target.dtype, value):
        target[...] = value
    elif kind == "c":
        write_scalar(target.real, float(np.real(value)))
        write_scalar(target.imag, float(np.imag(value)))
    elif np.iscomplexobj(value) or not np.signbit(value):
        target[...] = value
    else:
        bits = np.dtype(f"u{target.dtype.itemsize}")
        target.view(bits)[...] = np.asarray(value, target.dtype).view(bits)[()]


def copy_rows(cupy, out, index: tuple, source) -> bool:
    """``out[index] = source`` as one 2-D copy on the current stream (`_COPY_ROWS` where
    addresses, pitches and the row width are multiples of 16 bytes, else
    ``cudaMemcpy2DAsync``) where `index` is basic and both sides are device arrays of one dtype and
    shape, laid out as rows contiguous within (a row or column block of a C-ordered
    array), apart in memory; False (nothing done) otherwise. CuPy's assignment runs an
    elementwise kernel with an indexer per element, at about 60% of the copy bandwidth.
    ``MDARRAY_CUDA_OWN_KERNELS=0`` leaves every copy to CuPy."""
    if (
        not OWN_KERNELS
        or type(source) is not type(out)
        or not _regions.is_basic(index)
        or source.dtype != out.dtype
        or not 1 <= source.ndim <= 2
        or not source.size
    ):
        return False
    key = (*index, Ellipsis)
    target = out[key]
    if target.shape != source.shape:
        return False
    itemsize = source.itemsize
    rows, width = (1, source.shape[0]) if source.ndim == 1 else source.shape
    steps = []
    for a in (source, target):
        if a.strides[-1] != itemsize or (
            a.ndim == 2 and rows > 1 and a.strides[0] < width * itemsize
        ):
            return False
        steps.append(a.strides[0] if a.ndim == 2 and rows > 1 else width * itemsize)
    low, high = source.data.ptr, source.data.ptr + (rows - 1) * steps[0] + width * itemsize
    start, stop = target.data.ptr, target.data.ptr + (rows - 1) * steps[1] + width * itemsize
    if start < high and low < stop:
        return False
    if not _copy_rows_by_kernel(
        cupy, target.data.ptr, steps[1], source.data.ptr, steps[0], width * itemsize, rows
    ):
        cupy.cuda.runtime.memcpy2DAsync(
            target.data.ptr,
            steps[1],
            source.data.ptr,
            steps[0],
            width * itemsize,
            rows,
            cupy.cuda.runtime.memcpyDeviceToDevice,
            cupy.cuda.get_current_stream().ptr,
        )
    return True


# Rows of 16-byte units copied by a kernel: each thread moves up to 4 units of a row
# (a block's 256 threads side by side, so a warp reads and writes whole spans), rows
# spread over the grid's second axis. The driver's 2-D copy between two places of one
# device runs well below the copy bandwidth for pitched rows.
_COPY_ROWS = r"""
extern "C" __global__ void mdarray_copy_rows(
        const int4* src, long long src_pitch, int4* dst, long long dst_pitch,
        long long units, long long rows) {
    for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
        const int4* s = src + r * src_pitch;
        int4* d = dst + r * dst_pitch;
        long long c = (long long)blockIdx.x * blockDim.x * 4 + threadIdx.x;
        int4 v[4];
        #pragma unroll
        for (int k = 0; k < 4; ++k) {
            long long i = c + (long long)k * blockDim.x;
            if (i < units) v[k] = s[i];
        }
        #pragma unroll
        for (int k = 0; k < 4; ++k) {
            long long i = c + (long long)k * blockDim.x;
            if (i < units) d[i] = v[k];
        }
    }
}
"""
_COPY_KERNELS: dict = {}  # device -> the compiled kernel


def _copy_rows_by_kernel(
    cupy, dst: int, dst_pitch: int, src: int, src_pitch: int, width: int, rows: int
) -> bool:
    """`rows` rows of `width` bytes from `src` to `dst` (device addresses, row pitches in
    bytes) on the current stream by `_COPY_ROWS`; False (nothing done) where an address,
    pitch or the width is not a multiple of 16 bytes."""
    if (dst | dst_pitch | src | src_pitch | width) % 16:
        return False
    device = cupy.cuda.runtime.getDevice()
    kernel = _COPY_KERNELS.get(device)
    if kernel is None:
        module = cupy._core.core.compile_with_cache(_COPY_ROWS)
        kernel = _COPY_KERNELS[device] = module.get_function("mdarray_copy_rows")
    units = width // 16
    grid = (-(-units // (256 * 4)), min(rows, 65535))
    kernel(
        grid,
        (256,),
        (
            np.uint64(src),  # a pointer, passed by value
            np.int64(src_pitch // 16),
            np.uint64(dst),
            np.int64(dst_pitch // 16),
            np.int64(units),
            np.int64(rows),
        ),
    )
    return True


def scipy_twin(ufunc):
    """CuPy's kernel for one of SciPy's special-function ufuncs (``mdarray.special``):
    ``cupyx.scipy.special``'s of its name, where `ufunc` is SciPy's own (imported already)
    and CuPy has one; else None."""
    name = ufunc.__name__
    if scipy_ufunc(sys.modules.get("scipy.special"), name) is not ufunc:
        return None
    try:
        from cupyx.scipy import special as twins  # noqa: PLC0415  (CuPy's SciPy, lazily)
    except ImportError:
        return None
    return getattr(twins, name, None)
