"""ndarray's methods on DistArray, each the NumPy function of the same meaning on `self`.

Every method here calls ``numpy.<function>(self, ...)``, so it takes the path the
function takes on a DistArray (a distributed implementation where the registry has one,
else the fallback policy) and lives beside, not inside, the core of `DistArray`;
``view``, which no NumPy function does, runs the registry's method of that name.
Methods that sort or fill in place (``sort``, ``partition``, ``fill``, ``put``) write
through the array's buffers, as ndarray's do. Left out, as they describe one block of
host memory: ``base ctypes data flags flat strides byteswap getfield setfield setflags
resize dump dumps tofile tobytes choose``.

Each result is a DistArray (a tuple of them for ``nonzero``) with the layout and mode the
function gives: the docstrings say what moves. A reduction along an axis that chunks
split moves nothing: each device reduces its own part and the result is partial (SUM,
PROD, MAX or MIN mode, combined when observed); along axes that no chunk splits each
chunk reduces where it lies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import DTypeLike

if TYPE_CHECKING:
    from .array import DistArray

from mdarray._core.registry import method

# NumPy's stubs do not know that a DistArray is array-like; the calls dispatch at run time.
_np: Any = np


_REDUCTION_PARAMETERS = """
    Parameters
    ----------
    axis : None, int or tuple of ints
        The axes to reduce; None reduces all of them.
    dtype, out, keepdims, **kwargs
        As for the NumPy function (``out`` a DistArray of the result's shape)."""


def _reduction(summary: str, partial: str) -> str:
    """The docstring of a reduction method: `summary`, its parameters, and what the
    result is along split axes (`partial`)."""
    return f"""{summary}

    {_REDUCTION_PARAMETERS.strip()}

    Returns
    -------
    DistArray
        0-d for ``axis=None``. {partial} No data moves: each device reduces
        the part it holds, and the result keeps the layout of the axes that remain.
    """


class NDArrayMethods:
    """The ndarray methods of a DistArray (a mixin: `self` is a DistArray)."""

    __slots__ = ()

    if TYPE_CHECKING:

        def __setitem__(self, key: Any, value: Any) -> None: ...  # DistArray's
        @property
        def ndim(self) -> int: ...  # Stored's

        storage: Any  # Stored's
        layout: Any

    # Conversions and shapes ---------------------------------------------------------

    def astype(self, dtype: DTypeLike, copy: bool = True) -> DistArray:
        """This array cast to `dtype`, as ``ndarray.astype`` (``mdarray.astype``).

        Each chunk is cast on its device, in the same layout. A partial array keeps its
        mode where casting each copy casts the value (MAX, MIN), else it is combined
        first (a SUM result is REPLICA). With ``copy=False`` an array already of `dtype`
        is returned itself.

        >>> import mdarray, numpy as np
        >>> x = mdarray.distributed_array([1.5, 2.5], {0: slice(0, 1), 1: slice(1, 2)})
        >>> x.astype(np.int32).get()
        array([1, 2], dtype=int32)
        """
        return _np.astype(self, dtype, copy=copy)

    def view(self, dtype: Any = None, type: Any = None) -> DistArray:
        """This array's bytes read as `dtype`, as ``ndarray.view``: a view (writes through
        either reach the other), each chunk's bytes reinterpreted where they lie. A dtype
        of another size scales the last axis (contiguous in each chunk, each chunk's part
        starting and ending on whole items of `dtype`); no `type` (a DistArray has no
        ndarray subclass).

        >>> import mdarray, numpy as np
        >>> z = mdarray.asarray(np.array([[1 + 2j, 3 - 4j]]))
        >>> z.view(np.float64).get()
        array([[ 1.,  2.,  3., -4.]])
        """
        return method("view")(self, dtype, type)

    def copy(self) -> DistArray:
        """A copy with the same layout and mode; each chunk is copied on its device."""
        return _np.copy(self)

    def reshape(self, *shape: Any, **kwargs: Any) -> DistArray:
        """This array with a new shape, as ``ndarray.reshape`` (the shape as one tuple or
        as separate ints; ``order=`` and ``copy=`` keywords as `mdarray.reshape`).

        Where every chunk stays a box under the new shape (merging or splitting axes
        inside chunks), each chunk is reshaped where it lies and nothing moves: the result
        is a view, writes to it reach this array, as NumPy's. Else the array is resharded
        first (to a layout that allows it) and the result is a new array.

        >>> import mdarray, numpy as np
        >>> x = mdarray.distributed_array(np.arange(12), mdarray.Layout.block((12,), devices=[0, 1]))
        >>> x.reshape(4, 3).index_map
        {0: [(slice(0, 2, 1), slice(0, 3, 1))], 1: [(slice(2, 4, 1), slice(0, 3, 1))]}
        """
        new_shape = (
            shape[0] if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)) else shape
        )
        return _np.reshape(self, new_shape, **kwargs)

    def transpose(self, *axes: Any) -> DistArray:
        """This array with its axes permuted (reversed without `axes`), as
        ``ndarray.transpose`` (the axes as one tuple or as separate ints).

        Each chunk is transposed where it lies, so no data moves: a row-split matrix
        becomes a column-split one. The result is a view, as NumPy's.
        """
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
            order = axes[0]
        else:
            order = axes or None
        return _np.transpose(self, order)

    @property
    def T(self) -> DistArray:
        """The transpose (axes reversed), as `transpose` with no axes; no data moves.

        >>> import mdarray, numpy as np
        >>> x = mdarray.distributed_array(np.ones((2, 3)), mdarray.Layout.block((2, 3), devices=[0, 1]))
        >>> x.T.shape, x.T.index_map[1]
        ((3, 2), [(slice(0, 3, 1), slice(1, 2, 1))])
        """
        return _np.transpose(self)

    @property
    def mT(self) -> DistArray:
        """The matrix transpose (the last two axes swapped), as the array API's ``mT``;
        each chunk is transposed where it lies. ValueError for fewer than 2 axes."""
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return _np.matrix_transpose(self)

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

    # Reductions -----------------------------------------------------------------------

    def sum(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        **kwargs: Any,
    ) -> DistArray:
        return _np.sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)

    sum.__doc__ = _reduction(
        """The sum over `axis`, as ``ndarray.sum`` (``numpy.sum(x, ...)``).

    >>> import mdarray, numpy as np
    >>> x = mdarray.distributed_array(np.arange(6.0).reshape(2, 3), mdarray.Layout.block((2, 3), devices=[0, 1]))
    >>> s = x.sum(axis=0)
    >>> s.mode, s.get()
    (mdarray.SUM, array([3., 5., 7.]))""",
        "Along an axis that chunks split it is a partial sum (SUM mode).",
    )

    def prod(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        **kwargs: Any,
    ) -> DistArray:
        return _np.prod(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)

    prod.__doc__ = _reduction(
        "The product over `axis`, as ``ndarray.prod`` (``numpy.prod(x, ...)``).",
        "Along an axis that chunks split it is a partial product (PROD mode).",
    )

    def max(
        self, axis: Any = None, out: Any = None, keepdims: bool = False, **kwargs: Any
    ) -> DistArray:
        return _np.max(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    max.__doc__ = _reduction(
        "The maximum over `axis`, as ``ndarray.max`` (``numpy.max(x, ...)``; no `dtype`).",
        "Along an axis that chunks split it is a partial maximum (MAX mode).",
    )

    def min(
        self, axis: Any = None, out: Any = None, keepdims: bool = False, **kwargs: Any
    ) -> DistArray:
        return _np.min(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    min.__doc__ = _reduction(
        "The minimum over `axis`, as ``ndarray.min`` (``numpy.min(x, ...)``; no `dtype`).",
        "Along an axis that chunks split it is a partial minimum (MIN mode).",
    )

    def mean(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        **kwargs: Any,
    ) -> DistArray:
        return _np.mean(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)

    mean.__doc__ = _reduction(
        "The arithmetic mean over `axis`, as ``ndarray.mean`` (``numpy.mean(x, ...)``).",
        "Along an axis that chunks split it is partial (SUM mode: each device's share "
        "of the mean).",
    )

    def var(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        ddof: float = 0,
        keepdims: bool = False,
        **kwargs: Any,
    ) -> DistArray:
        """The variance over `axis`, as ``ndarray.var`` (``numpy.var(x, ...)``).

        Parameters
        ----------
        axis : None, int or tuple of ints
            The axes to reduce; None reduces all of them.
        dtype, out, ddof, keepdims, **kwargs
            As for ``numpy.var`` (`ddof`: the divisor is ``N - ddof``).

        Returns
        -------
        DistArray
            Along an axis that chunks split, a partial result (SUM mode): as NumPy, two
            passes, the mean (combined: a result-sized array moves), then each device
            sums the squared deviations of its own part (a partial input is combined
            first).
        """
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
    ) -> DistArray:
        """The standard deviation over `axis`, as ``ndarray.std``: the square root of
        `var` (same parameters), so its partial result is combined first and the
        result is REPLICA."""
        return _np.std(
            self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, **kwargs
        )

    def all(
        self, axis: Any = None, out: Any = None, keepdims: bool = False, **kwargs: Any
    ) -> DistArray:
        return _np.all(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    all.__doc__ = _reduction(
        "Whether every element along `axis` is true, as ``ndarray.all``; a bool array.",
        "Along an axis that chunks split it is partial (MIN mode: false wins).",
    )

    def any(
        self, axis: Any = None, out: Any = None, keepdims: bool = False, **kwargs: Any
    ) -> DistArray:
        return _np.any(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    any.__doc__ = _reduction(
        "Whether any element along `axis` is true, as ``ndarray.any``; a bool array.",
        "Along an axis that chunks split it is partial (MAX mode: true wins).",
    )

    def argmax(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> DistArray:
        """The index of the first maximum along `axis` (of the flattened array for None),
        as ``ndarray.argmax``. Along a split axis the per-chunk candidates are combined:
        the result is REPLICA."""
        return _np.argmax(self, axis=axis, out=out, keepdims=keepdims)

    def argmin(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> DistArray:
        """The index of the first minimum along `axis`, as ``ndarray.argmin`` (see
        `argmax`)."""
        return _np.argmin(self, axis=axis, out=out, keepdims=keepdims)

    def cumsum(self, axis: Any = None, dtype: Any = None, out: Any = None) -> DistArray:
        """The running sum along `axis` (of the flattened array for None), as
        ``ndarray.cumsum``. Each chunk scans its part; along a split axis the totals of the
        chunks before it (their last slices) are gathered to the host once and carried
        in. The result is REPLICA."""
        return _np.cumsum(self, axis=axis, dtype=dtype, out=out)

    def cumprod(self, axis: Any = None, dtype: Any = None, out: Any = None) -> DistArray:
        """The running product along `axis`, as ``ndarray.cumprod`` (see `cumsum`)."""
        return _np.cumprod(self, axis=axis, dtype=dtype, out=out)

    def trace(
        self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: Any = None
    ) -> DistArray:
        """The sum of the diagonal (`diagonal` with these arguments), as ``ndarray.trace``:
        0-d for a matrix, partial (SUM) where the diagonal spans several chunks."""
        # The sum of the diagonal, as NumPy defines it: a 0-d DistArray for a matrix.
        return _np.sum(_np.diagonal(self, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)

    # Sorting and searching ----------------------------------------------------------

    def argsort(
        self, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None
    ) -> DistArray:
        """The indices that sort along `axis`, as ``ndarray.argsort``. Per chunk along an
        axis no chunk splits; by a distributed sample sort along a split one (each
        element moves once)."""
        return _np.argsort(self, axis=axis, kind=kind, order=order, stable=stable)

    def sort(
        self, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None
    ) -> None:
        """Sort in place along `axis`, as ``ndarray.sort``: the sorted value (see
        `argsort` for how it is found) is written through this array's buffers, in its
        layout and mode."""
        self[...] = _np.sort(self, axis=axis, kind=kind, order=order, stable=stable)

    def argpartition(
        self, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None
    ) -> DistArray:
        """Indices that partition along `axis` around the `kth` elements, as
        ``ndarray.argpartition`` (``numpy.argpartition(x, kth, ...)``)."""
        return _np.argpartition(self, kth, axis=axis, kind=kind, order=order)

    def partition(
        self, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None
    ) -> None:
        """Partition in place around the `kth` elements, as ``ndarray.partition`` (the
        result written through this array's buffers)."""
        self[...] = _np.partition(self, kth, axis=axis, kind=kind, order=order)

    def nonzero(self) -> tuple[DistArray, ...]:
        """The indices of the nonzero elements, one 1-D int64 DistArray per axis, as
        ``ndarray.nonzero``."""
        return _np.nonzero(self)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> DistArray:
        """Where `v` would be inserted to keep this sorted 1-D array sorted, as
        ``ndarray.searchsorted``; the result has the shape (and a DistArray `v`'s layout)
        of `v`."""
        return _np.searchsorted(self, v, side=side, sorter=sorter)

    # Elementwise and selection --------------------------------------------------------

    def clip(self, min: Any = None, max: Any = None, out: Any = None, **kwargs: Any) -> DistArray:
        """The values limited to ``[min, max]``, as ``ndarray.clip``: per chunk, nothing
        moves."""
        return _np.clip(self, min, max, out=out, **kwargs)

    def compress(self, condition: Any, axis: Any = None, out: Any = None) -> DistArray:
        """The slices along `axis` (of the flattened array for None) where the 1-D
        `condition` is true, as ``ndarray.compress``."""
        return _np.compress(condition, self, axis=axis, out=out)

    def conj(self) -> DistArray:
        """The complex conjugate, elementwise (per chunk), as ``ndarray.conj``."""
        return _np.conjugate(self)

    def conjugate(self) -> DistArray:
        """The complex conjugate, elementwise (per chunk), as ``ndarray.conjugate``."""
        return _np.conjugate(self)

    @property
    def real(self) -> DistArray:
        """The real part, a new array (writes to it do not reach this one)."""
        return _np.real(self)

    @property
    def imag(self) -> DistArray:
        """The imaginary part, a new array (writes to it do not reach this one)."""
        return _np.imag(self)

    def round(self, decimals: int = 0, out: Any = None) -> DistArray:
        """Each element rounded to `decimals` decimals (halves to even), as
        ``ndarray.round``: per chunk, nothing moves."""
        return _np.round(self, decimals, out=out)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> DistArray:
        """The diagonal of the `axis1`, `axis2` planes, as ``ndarray.diagonal``: each
        chunk gives the part of the diagonal it holds. Unlike NumPy's, not a read-only
        view: a new array."""
        return _np.diagonal(self, offset, axis1, axis2)

    def dot(self, b: Any, out: Any = None) -> DistArray:
        """The dot product with `b`, as ``ndarray.dot`` (``numpy.dot(x, b)``)."""
        return _np.dot(self, b, out=out)

    def take(
        self, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise"
    ) -> DistArray:
        """The elements at `indices` along `axis` (of the flattened array for None), as
        ``ndarray.take``; with 1-D indices only the requested rows move."""
        return _np.take(self, indices, axis=axis, out=out, mode=mode)

    def repeat(self, repeats: Any, axis: Any = None) -> DistArray:
        """Each element repeated `repeats` times along `axis` (flattened for None), as
        ``ndarray.repeat``."""
        return _np.repeat(self, repeats, axis=axis)

    # Writing in place -----------------------------------------------------------------

    def fill(self, value: Any) -> None:
        """Set every element to `value`, through the buffers (views see it)."""
        self[...] = value

    def put(self, indices: Any, values: Any, mode: str = "raise") -> None:
        """Set the elements at flat `indices` to `values`, as ``ndarray.put``. It takes the
        fallback policy (`mdarray.options`); the result is written back into this array,
        in its layout and mode."""
        _np.put(self, indices, values, mode=mode)

    # Shapes -------------------------------------------------------------------------

    def flatten(self, order: str = "C") -> DistArray:
        """A 1-D copy (`ravel`, then copied)."""
        return _np.ravel(self, order=order).copy()

    def ravel(self, order: str = "C") -> DistArray:
        """This array as 1-D, as ``ndarray.ravel`` (a `reshape` to ``(-1,)``: nothing
        moves where each chunk stays contiguous in the flat order)."""
        return _np.ravel(self, order=order)

    def squeeze(self, axis: Any = None) -> DistArray:
        """This array without its length-1 axes (or those of `axis`), as
        ``ndarray.squeeze``: each chunk is reshaped where it lies."""
        return _np.squeeze(self, axis=axis)

    def swapaxes(self, axis1: int, axis2: int) -> DistArray:
        """This array with `axis1` and `axis2` swapped, as ``ndarray.swapaxes``: each chunk
        is transposed where it lies."""
        return _np.swapaxes(self, axis1, axis2)
