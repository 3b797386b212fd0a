"""Python's protocols on a DistArray: ``len``, iteration, ``in``, ``format``, ``round`` and
the conversions to Python objects (``bool``, ``int``, ``float``, ``complex``, ``index``,
``item``, ``tolist``), as NumPy arrays have them.

Each conversion observes the value, so it combines a partial array's copies and waits for
the work that makes them (in an SPMD run every process takes part, as in `DistArray.get`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from mdarray._spmd import processes as _processes

# NumPy's stubs do not know that a DistArray is array-like.
_np: Any = np

if TYPE_CHECKING:
    from mdarray._storage.chunks import Chunks

    from .array import DistArray


class PythonProtocols:
    """Python's protocols of a DistArray (a mixin: `self` is a DistArray)."""

    __slots__ = ()

    if TYPE_CHECKING:  # DistArray's

        @property
        def storage(self) -> Chunks: ...
        @property
        def shape(self) -> tuple[int, ...]: ...
        @property
        def ndim(self) -> int: ...
        @property
        def size(self) -> int: ...
        @property
        def dtype(self) -> np.dtype: ...
        def get(self) -> np.ndarray: ...
        def __getitem__(self, key: Any) -> DistArray: ...

    def __len__(self) -> int:
        """The length of the first axis, as ``len`` of a NumPy array (TypeError for 0-d)."""
        if not self.ndim:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[DistArray]:
        """The sub-arrays along the first axis, ``x[0], x[1], ...``: DistArrays that keep
        the layout of their part (a row of a row-split matrix lives on its device)."""
        # Not a generator: iter() of a 0-d array raises at once, so np.iterable(x[0]) is
        # False as for NumPy (matplotlib tells one dataset from many that way).
        if not self.ndim:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __contains__(self, value: object) -> bool:
        """``value in x``: whether any element equals `value` (``(x == value).any()``)."""
        return bool(np.any(self == value))

    def __format__(self, format_spec: str) -> str:
        """A 0-d array formats as its element (``f"{np.mean(x):.3f}"``); others take only
        the empty format, as NumPy arrays do."""
        if not self.ndim:
            return format(self.get()[()], format_spec)
        if format_spec:
            raise TypeError("unsupported format string passed to DistArray.__format__")
        return str(self)

    def __round__(self, ndigits: int | None = None) -> Any:
        """``round()`` of a 0-d array, as of a NumPy scalar: an int without `ndigits`, else
        a 0-d array rounded to `ndigits` decimals. NumPy arrays of more dimensions refuse."""
        if self.ndim:
            raise TypeError(f"type DistArray of {self.ndim} dimensions doesn't define __round__")
        if ndigits is None:
            return round(self.item())
        return _np.round(self, ndigits)

    def item(self, *args: Any) -> Any:
        """One element as a Python scalar, as ``ndarray.item``.

        Parameters
        ----------
        *args : int or tuple of ints, optional
            None for the one element of a size-1 array, a flat index, or one index per
            axis.

        Returns
        -------
        bool, int, float or complex
            The element's value (a partial array's copies combined).

        Examples
        --------
        >>> import mdarray, numpy as np
        >>> x = mdarray.distributed_array(np.arange(4.0), mdarray.Layout.block((4,), devices=[0, 1]))
        >>> x.sum().item(), x.item(3)
        (6.0, 3.0)
        """
        return self.get().item(*args)

    def tolist(self) -> Any:
        """The value as nested Python lists of Python scalars, as ``ndarray.tolist``
        (gathered to the host; a 0-d array gives its scalar)."""
        return self.get().tolist()

    def _scalar(self, kind: Callable[[Any], Any]) -> Any:
        if self.size != 1:
            raise TypeError("only arrays with one element can be converted to Python scalars")
        return kind(self._element())

    def _element(self) -> Any:
        # The one element, as a 0-d NumPy array. One chunk holds it in any mode: its copy
        # is read alone, without the general gather (a single process only: `get` is a
        # step all processes of an SPMD run take).
        storage = self.storage
        if _processes.current() is None and len(storage.layout.boxes) == 1:
            slabs = storage.slabs  # packed: the one chunk is its device's slab, no view made
            chunk = slabs[0] if slabs is not None else storage.buffers[0]
            return storage.backend.to_host(chunk, storage.layout.chunk_devices[0]).reshape(())
        return self.get().reshape(())

    def __bool__(self) -> bool:
        """The truth of the one element; ValueError for arrays of other sizes, as NumPy."""
        if self.size != 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()"
            )
        return bool(self._element())

    def __int__(self) -> int:
        """``int()`` of the one element (TypeError for arrays of other sizes)."""
        return self._scalar(int)

    def __float__(self) -> float:
        """``float()`` of the one element (TypeError for arrays of other sizes)."""
        return self._scalar(float)

    def __complex__(self) -> complex:
        """``complex()`` of the one element (TypeError for arrays of other sizes)."""
        return self._scalar(complex)

    def __index__(self) -> int:
        """The one element of an integer array as an index (``range(x)``, ``a[x]``)."""
        if self.dtype.kind not in "iu":
            raise TypeError("only integer arrays can be converted to an index")
        return operator.index(self._scalar(int))
