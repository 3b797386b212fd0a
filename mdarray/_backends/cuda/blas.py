"""The cuda backend's matrix products by one cuBLAS call (`Blas.matmul`): a matrix times a
vector (``gemv``), a vector times a matrix, a matrix times a matrix (``gemm``), of one
floating or complex dtype, each operand in C or Fortran order (so a transposed view
``x.T`` is read where it lies), the result new and in C order.

CuPy's ``matmul`` takes any operands (stacks, broadcasting, mixed dtypes, ``out=``), and
its general argument handling is Python around the BLAS call: about 15 us of host time
for a 2048x2048 by 2048 product on an H100 host, where the call alone is 8.4 us. The
products an iteration repeats (``A @ x``, a gradient ``x.T @ r``, k-means' distances)
are these shapes; every other product goes to CuPy as it is.

cuBLAS reads matrices in column order: a C-order ``r x c`` matrix is, in place, the
column-order ``c x r`` matrix that is its transpose. So ``C = A @ B`` is computed as
``C.T = B.T @ A.T`` with each operand taken as it lies, transposed or not.
"""

from __future__ import annotations

import numpy as np

#: cuBLAS's routine prefix per dtype.
_PREFIX = {
    np.dtype(np.float32): "s",
    np.dtype(np.float64): "d",
    np.dtype(np.complex64): "c",
    np.dtype(np.complex128): "z",
}
#: The largest extent cuBLAS's 32-bit sizes take.
_INT_MAX = (1 << 31) - 1


class Blas:
    """cuBLAS's products of `cupy`'s arrays (see the module)."""

    __slots__ = ("_alloc", "_device", "_gemm", "_gemv", "_handle", "_kept", "_ndarray",
                 "_scalars", "_set_stream", "_stream", "_trans")  # fmt: skip

    def __init__(self, cupy) -> None:
        cublas, device = cupy.cuda.cublas, cupy.cuda.device
        self._ndarray = cupy.ndarray
        self._alloc = cupy.cuda.alloc  # (the current allocator, without cupy.empty's checks)
        self._device = cupy.cuda.runtime.getDevice
        self._handle = device.get_cublas_handle
        self._stream = cupy.cuda.get_current_stream
        self._set_stream = cublas.setStream
        self._trans = (cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_T)
        self._gemv = {d: getattr(cublas, p + "gemv") for d, p in _PREFIX.items()}
        self._gemm = {d: getattr(cublas, p + "gemm") for d, p in _PREFIX.items()}
        # alpha = 1 and beta = 0 in each dtype, read from the host at each call: the
        # arrays kept, their addresses given.
        self._kept = [(np.ones(1, d), np.zeros(1, d)) for d in _PREFIX]
        self._scalars = {
            d: (one.ctypes.data, zero.ctypes.data) for d, (one, zero) in zip(_PREFIX, self._kept)
        }

    def matmul(self, a, b):
        """``a @ b`` by one cuBLAS call on the current device and stream, or None where
        the operands are not of the kinds above (the caller then asks CuPy)."""
        ndarray = self._ndarray
        if type(a) is not ndarray or type(b) is not ndarray:
            return None
        dtype = a.dtype
        if b.dtype != dtype or dtype not in _PREFIX:
            return None
        device = a.data.device_id
        if b.data.device_id != device or device != self._device():
            return None  # CuPy's own handling of operands on other devices
        dims = (a.ndim, b.ndim)
        if dims == (2, 1):
            return self._matrix_vector(a, b, dtype, False)
        if dims == (1, 2):
            return self._matrix_vector(b, a, dtype, True)
        return self._matrix_matrix(a, b, dtype) if dims == (2, 2) else None

    def _matrix_vector(self, m, x, dtype, vector_first: bool):
        """``m @ x`` (or ``x @ m`` where `vector_first`) of a matrix and a contiguous
        vector, by ``gemv`` on m as it lies."""
        rows, cols = m.shape
        size = m.itemsize
        if x.strides != (size,) or not rows or not cols or max(rows, cols) > _INT_MAX:
            return None
        strides = m.strides  # (`_order` inline: the commonest product, a call fewer)
        c_order = strides == (cols * size, size)
        if not (c_order or strides == (size, rows * size)):
            return None  # (a matrix of one row or column in both orders is taken as C's)
        if x.shape[0] != (rows if vector_first else cols):
            return None
        # In column order m lies as m.T (C order) or as m (Fortran order); ``m @ x`` is
        # its transpose times x in the first case, itself times x in the second, and
        # ``x @ m`` = ``m.T @ x`` the other way round.
        stored = (cols, rows) if c_order else (rows, cols)
        count = cols if vector_first else rows
        out = self._ndarray((count,), dtype, self._alloc(count * size))
        handle = self._handle()
        self._set_stream(handle, self._stream().ptr)
        one, zero = self._scalars[dtype]
        self._gemv[dtype](handle, self._trans[c_order != vector_first], stored[0], stored[1],
                          one, m.data.ptr, stored[0], x.data.ptr, 1, zero, out.data.ptr,
                          1)  # fmt: skip
        return out

    def _matrix_matrix(self, a, b, dtype):
        """``a @ b`` of two matrices, by ``gemm`` on each as it lies."""
        m, k = a.shape
        n = b.shape[1]
        if b.shape[0] != k or not (m and k and n) or max(m, k, n) > _INT_MAX:
            return None
        size = a.itemsize
        order_a, order_b = _order(a, m, k, size), _order(b, k, n, size)
        if order_a is None or order_b is None:
            return None
        # C.T (n x m, C in C order) = B.T @ A.T in column order: an operand in C order
        # lies as its transpose (no op), one in Fortran order as itself (transposed).
        out = self._ndarray((m, n), dtype, self._alloc(m * n * size))
        handle = self._handle()
        self._set_stream(handle, self._stream().ptr)
        one, zero = self._scalars[dtype]
        trans = self._trans
        self._gemm[dtype](handle, trans[order_b == "F"], trans[order_a == "F"], n, m, k,
                          one, b.data.ptr, n if order_b == "C" else k,
                          a.data.ptr, k if order_a == "C" else m, zero, out.data.ptr,
                          n)  # fmt: skip
        return out


def _order(m, rows: int, cols: int, size: int) -> str | None:
    """The order of matrix `m` (`rows` x `cols`, items of `size` bytes), "C" or "F",
    where it lies so with no gaps; else None."""
    strides = m.strides
    if strides == (cols * size, size):
        return "C"
    if strides == (size, rows * size):
        return "F"
    return None
