"""ndarray's methods on DistArray, each the NumPy function of the same meaning on `self`.

Every method here calls ``numpy.<function>(self, ...)``, so it takes the path the
function takes on a DistArray (a distributed implementation where the registry has one,
else the fallback policy) and lives beside, not inside, the core of `DistArray`.
Methods that sort or fill in place (``sort``, ``partition``, ``fill``, ``put``) write
through the array's buffers, as ndarray's do. Left out, as they describe one block of
host memory: ``base ctypes data flags flat strides byteswap getfield setfield setflags
view resize dump dumps tofile tobytes choose``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

# NumPy's stubs do not know that a DistArray is array-like; the calls dispatch at run time.
_np: Any = np


class NDArrayMethods:
    """The ndarray methods of a DistArray (a mixin: `self` is a DistArray)."""

    __slots__ = ()

    if TYPE_CHECKING:

        def __setitem__(self, key: Any, value: Any) -> None: ...  # DistArray's

        storage: Any  # Stored's
        layout: Any

    def block_until_ready(self) -> Any:
        """Wait until the work queued on this array's devices is done; return the array
        (as JAX's ``block_until_ready``), so ``t0 = time(); y = f(x).block_until_ready()``
        times the work, not its queueing. `mdarray.synchronize` waits for any devices.

        >>> import mdarray
        >>> x = mdarray.ones(4)
        >>> x.block_until_ready() is x
        True
        """
        self.storage.backend.synchronize(self.layout.devices)
        return self

    def sum(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        **kwargs: Any,
    ) -> Any:
        return _np.sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)

    def prod(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        **kwargs: Any,
    ) -> Any:
        return _np.prod(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)

    def max(self, axis: Any = None, out: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
        return _np.max(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    def min(self, axis: Any = None, out: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
        return _np.min(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    def mean(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        **kwargs: Any,
    ) -> Any:
        return _np.mean(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)

    def var(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        ddof: float = 0,
        keepdims: bool = False,
        **kwargs: Any,
    ) -> Any:
        return _np.var(
            self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, **kwargs
        )

    def std(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        ddof: float = 0,
        keepdims: bool = False,
        **kwargs: Any,
    ) -> Any:
        return _np.std(
            self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, **kwargs
        )

    def all(self, axis: Any = None, out: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
        return _np.all(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    def any(self, axis: Any = None, out: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
        return _np.any(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    def argmax(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
        return _np.argmax(self, axis=axis, out=out, keepdims=keepdims)

    def argmin(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
        return _np.argmin(self, axis=axis, out=out, keepdims=keepdims)

    def cumsum(self, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        return _np.cumsum(self, axis=axis, dtype=dtype, out=out)

    def cumprod(self, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        return _np.cumprod(self, axis=axis, dtype=dtype, out=out)

    def argsort(
        self, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None
    ) -> Any:
        return _np.argsort(self, axis=axis, kind=kind, order=order, stable=stable)

    def sort(
        self, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None
    ) -> None:
        """Sort in place, as ndarray.sort (the sorted value is written through)."""
        self[...] = _np.sort(self, axis=axis, kind=kind, order=order, stable=stable)

    def argpartition(
        self, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None
    ) -> Any:
        return _np.argpartition(self, kth, axis=axis, kind=kind, order=order)

    def partition(
        self, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None
    ) -> None:
        """Partition in place, as ndarray.partition."""
        self[...] = _np.partition(self, kth, axis=axis, kind=kind, order=order)

    def clip(self, min: Any = None, max: Any = None, out: Any = None, **kwargs: Any) -> Any:
        return _np.clip(self, min, max, out=out, **kwargs)

    def compress(self, condition: Any, axis: Any = None, out: Any = None) -> Any:
        return _np.compress(condition, self, axis=axis, out=out)

    def conj(self) -> Any:
        return _np.conjugate(self)

    def conjugate(self) -> Any:
        return _np.conjugate(self)

    @property
    def real(self) -> Any:
        """The real part, a new array (writes to it do not reach this one)."""
        return _np.real(self)

    @property
    def imag(self) -> Any:
        """The imaginary part, a new array (writes to it do not reach this one)."""
        return _np.imag(self)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        return _np.diagonal(self, offset, axis1, axis2)

    def trace(
        self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: Any = None
    ) -> Any:
        # The sum of the diagonal, as NumPy defines it: a 0-d DistArray for a matrix.
        return _np.sum(_np.diagonal(self, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)

    def dot(self, b: Any, out: Any = None) -> Any:
        return _np.dot(self, b, out=out)

    def fill(self, value: Any) -> None:
        """Set every element to `value`, through the buffers (views see it)."""
        self[...] = value

    def put(self, indices: Any, values: Any, mode: str = "raise") -> None:
        _np.put(self, indices, values, mode=mode)

    def flatten(self, order: str = "C") -> Any:
        """A 1-D copy."""
        return _np.ravel(self, order=order).copy()

    def ravel(self, order: str = "C") -> Any:
        return _np.ravel(self, order=order)

    def nonzero(self) -> Any:
        return _np.nonzero(self)

    def repeat(self, repeats: Any, axis: Any = None) -> Any:
        return _np.repeat(self, repeats, axis=axis)

    def round(self, decimals: int = 0, out: Any = None) -> Any:
        return _np.round(self, decimals, out=out)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> Any:
        return _np.searchsorted(self, v, side=side, sorter=sorter)

    def squeeze(self, axis: Any = None) -> Any:
        return _np.squeeze(self, axis=axis)

    def swapaxes(self, axis1: int, axis2: int) -> Any:
        return _np.swapaxes(self, axis1, axis2)

    def take(self, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
        return _np.take(self, indices, axis=axis, out=out, mode=mode)
