"""The array API's ``fft`` extension (`mdarray.fft`) and NumPy's `numpy.fft` on DistArrays.

The one-dimensional transforms (``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``,
``ihfft``) run chunk by chunk along an axis no chunk splits, and reshard first along a
split one (`_along_axis`); the n-dimensional ones are those one after another
(`_n_dimensional`). All return DistArrays; NumPy 2 keeps the precision, as the standard
asks (``fft`` of float32 is complex64, ``irfft`` of complex64 float32). ``fftshift`` and
``ifftshift`` are native (slices and a concatenation per axis), and ``fftfreq`` and
``rfftfreq`` create their arrays like the creation functions, laid out by ``device=``.
NumPy's own ``np.fft`` functions given a DistArray take the same paths.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple
from numpy.typing import DTypeLike

from mdarray._array.array import DistArray, in_mode, wrap
from mdarray._core.modes import REPLICA
from mdarray._core.registry import implements
from mdarray._layouts.layout import Device, Layout
from mdarray._ops.creation.creation_functions import asarray
from mdarray._ops.engine.fallback import fallback
from mdarray._ops.shape.manipulation_functions import concat
from mdarray._storage.chunks import Chunks

Norm = Literal["backward", "ortho", "forward"]


def _transform(func, x, **kwargs) -> DistArray:
    x = x if isinstance(x, DistArray) else asarray(x)
    return fallback(func, (x,), kwargs, f"numpy.fft.{func.__name__}")


# The length along the transformed axis of the result, from the input's `m` and `n`.
_OUT_LENGTH = {
    "fft": lambda m, n: n or m,
    "ifft": lambda m, n: n or m,
    "rfft": lambda m, n: (n or m) // 2 + 1,
    "ihfft": lambda m, n: (n or m) // 2 + 1,
    "irfft": lambda m, n: n or 2 * (m - 1),
    "hfft": lambda m, n: n or 2 * (m - 1),
}


def _along_axis(func, x, *, n, axis, norm) -> DistArray:
    """A one-dimensional transform along `axis`, chunk by chunk where no chunk splits the
    axis: nothing moves. Along a split axis the array is first resharded so the axis is
    whole (blocks along another axis: the pencil transpose; a 1-D array onto its first
    device), one movement between devices, and the result keeps that layout. Edge cases
    NumPy rejects (an empty axis, ``n < 1``) take the fallback, where NumPy raises."""
    x = x if isinstance(x, DistArray) else asarray(x)
    if x.ndim == 0 or isinstance(n, bool) or not isinstance(n, int | None):
        return _transform(func, x, n=n, axis=axis, norm=norm)
    axis = normalize_axis_index(axis, x.ndim)
    length = _OUT_LENGTH[func.__name__](x.shape[axis], n)
    if x.shape[axis] == 0 or (n is not None and n < 1) or length < 1 or norm not in _NORMS:
        return _transform(func, x, n=n, axis=axis, norm=norm)
    dtype = func(np.zeros(2, x.dtype)).dtype  # NumPy 2 keeps the precision
    x = in_mode(x, REPLICA)
    if x.layout.splits(axis):
        x = x.reshard(x.layout.whole_along(axis, longest=False))
    index_map: dict[int, list] = {}
    for device, index in x.layout.chunks:
        new = (*index[:axis], slice(0, length, 1), *index[axis + 1 :])
        index_map.setdefault(device, []).append(new)
    layout = Layout((*x.shape[:axis], length, *x.shape[axis + 1 :]), index_map)
    backend, buffers = x.storage.backend, x.storage.buffers
    kernel = getattr(backend.xp.fft, func.__name__)
    chunks = Chunks.generate(
        layout, backend, lambda k: kernel(buffers[k], n=n, axis=axis, norm=norm), dtype
    )
    return wrap(chunks, REPLICA)


_NORMS = ("backward", "ortho", "forward", None)


# Each n-dimensional transform as NumPy composes it of one-dimensional ones: (function,
# axis position) in order of application, for `n` axes.
_STEPS: dict[str, Callable[[int], list[tuple[Any, int]]]] = {
    "fftn": lambda n: [(np.fft.fft, i) for i in reversed(range(n))],
    "ifftn": lambda n: [(np.fft.ifft, i) for i in reversed(range(n))],
    "rfftn": lambda n: [(np.fft.rfft, n - 1)] + [(np.fft.fft, i) for i in reversed(range(n - 1))],
    "irfftn": lambda n: [(np.fft.ifft, i) for i in range(n - 1)] + [(np.fft.irfft, n - 1)],
}


def _n_dimensional(func, x, s, axes, norm) -> DistArray:
    """An n-dimensional transform as the one-dimensional ones it is made of, each along
    its axis by `_along_axis` (per chunk where no chunk splits the axis, else after one
    reshard that makes it whole: the pencil transposes of a distributed FFT). Lengths
    and axes are read as NumPy reads them (``s[i] == -1`` is the whole axis; without `s`
    the last axis of ``irfftn`` is ``2*(m-1)``); cases NumPy rejects or that transform
    no axis take the fallback, where NumPy decides."""
    x = x if isinstance(x, DistArray) else asarray(x)
    axes = _axes_for(s, axes)
    if axes is None:
        axes = range(x.ndim)
    lengths = None if s is None else list(s)
    if (
        x.ndim == 0
        or not axes
        or (lengths is not None and len(lengths) != len(axes))
        or any(isinstance(a, bool) or not isinstance(a, int) for a in axes)
        or any(not -x.ndim <= a < x.ndim for a in axes)
    ):
        return _transform(func, x, s=s, axes=axes, norm=norm)
    if lengths is None:
        lengths = [x.shape[a] for a in axes]
        if func is np.fft.irfftn:
            lengths[-1] = 2 * (x.shape[axes[-1]] - 1)
    lengths = [x.shape[a] if n == -1 else n for n, a in zip(lengths, axes)]
    for step, i in _STEPS[func.__name__](len(axes)):
        x = _along_axis(step, x, n=lengths[i], axis=axes[i], norm=norm)
    return x


def _axes_for(s, axes):
    """NumPy 2 deprecates `s` without `axes`: the standard's reading is the last axes."""
    if s is not None and axes is None:
        return tuple(range(-len(s), 0))
    return axes


def fft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> DistArray:
    """One-dimensional discrete Fourier transform along `axis` (see `_along_axis`).

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="allow"):
    ...     mdarray.fft.fft(mdarray.asarray(np.ones(4))).get()
    array([4.+0.j, 0.+0.j, 0.+0.j, 0.+0.j])
    """
    return _along_axis(np.fft.fft, x, n=n, axis=axis, norm=norm)


def ifft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> DistArray:
    """One-dimensional inverse discrete Fourier transform along `axis`.
    Runs per chunk (see `_along_axis`).

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     mdarray.fft.ifft(mdarray.asarray(np.full(4, 4.0 + 0j))).get()
    array([4.+0.j, 0.+0.j, 0.+0.j, 0.+0.j])
    """
    return _along_axis(np.fft.ifft, x, n=n, axis=axis, norm=norm)


def fftn(
    x: Any,
    /,
    *,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: Norm = "backward",
) -> DistArray:
    """N-dimensional discrete Fourier transform over `axes` (all when None).
    Runs per chunk (see `_n_dimensional`).

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     mdarray.fft.fftn(mdarray.asarray(np.ones((2, 2)))).get()
    array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]])
    """
    return _n_dimensional(np.fft.fftn, x, s, axes, norm)


def ifftn(
    x: Any,
    /,
    *,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: Norm = "backward",
) -> DistArray:
    """N-dimensional inverse discrete Fourier transform over `axes`.
    Runs per chunk (see `_n_dimensional`).

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     mdarray.fft.ifftn(mdarray.asarray(np.full((2, 2), 4.0 + 0j))).get()
    array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]])
    """
    return _n_dimensional(np.fft.ifftn, x, s, axes, norm)


def rfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> DistArray:
    """Discrete Fourier transform of real input along `axis`: ``n//2 + 1`` frequencies.
    Runs per chunk (see `_along_axis`).

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     mdarray.fft.rfft(mdarray.asarray(np.ones(4))).get()
    array([4.+0.j, 0.+0.j, 0.+0.j])
    """
    return _along_axis(np.fft.rfft, x, n=n, axis=axis, norm=norm)


def irfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> DistArray:
    """Inverse of `rfft`: `n` real values (``2*(m-1)`` by default) along `axis`.
    Runs per chunk (see `_along_axis`).

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     mdarray.fft.irfft(mdarray.asarray(np.array([4.0 + 0j, 0, 0]))).get()
    array([1., 1., 1., 1.])
    """
    return _along_axis(np.fft.irfft, x, n=n, axis=axis, norm=norm)


def rfftn(
    x: Any,
    /,
    *,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: Norm = "backward",
) -> DistArray:
    """N-dimensional discrete Fourier transform of real input (the last axis halved).
    Runs per chunk (see `_n_dimensional`).

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     mdarray.fft.rfftn(mdarray.asarray(np.ones((2, 2)))).get()
    array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]])
    """
    return _n_dimensional(np.fft.rfftn, x, s, axes, norm)


def irfftn(
    x: Any,
    /,
    *,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: Norm = "backward",
) -> DistArray:
    """Inverse of `rfftn`: real output of shape `s` over `axes`.
    Runs per chunk (see `_n_dimensional`).

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     mdarray.fft.irfftn(mdarray.asarray(np.array([[4.0 + 0j, 0], [0, 0]]))).get()
    array([[1., 1.],
           [1., 1.]])
    """
    return _n_dimensional(np.fft.irfftn, x, s, axes, norm)


def hfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> DistArray:
    """Discrete Fourier transform of a Hermitian-symmetric signal: `n` real values.
    Runs per chunk (see `_along_axis`).

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     mdarray.fft.hfft(mdarray.asarray(np.array([1.0 + 0j, 0, 0]))).get()
    array([1., 1., 1., 1.])
    """
    return _along_axis(np.fft.hfft, x, n=n, axis=axis, norm=norm)


def ihfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> DistArray:
    """Inverse of `hfft`: ``n//2 + 1`` complex values of a real signal.
    Runs per chunk (see `_along_axis`).

    >>> import mdarray, numpy as np
    >>> with mdarray.options(fallback="raise"):
    ...     mdarray.fft.ihfft(mdarray.asarray(np.ones(4))).get()
    array([1.-0.j, 0.-0.j, 0.-0.j])
    """
    return _along_axis(np.fft.ihfft, x, n=n, axis=axis, norm=norm)


def _frequencies(func, n, d, dtype, device) -> DistArray:
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    if dtype.kind != "f":
        raise ValueError(
            f"{func.__name__}: dtype must be a real floating-point data type, got {dtype}"
        )
    return asarray(func(n, d).astype(dtype, copy=False), device=device)


def fftfreq(
    n: int, /, *, d: float = 1.0, dtype: DTypeLike | None = None, device: Device = None
) -> DistArray:
    """Sample frequencies of a transform of length `n` and sample spacing `d`, laid out
    by `device` as the creation functions do.

    >>> import mdarray
    >>> mdarray.fft.fftfreq(4).get()
    array([ 0.  ,  0.25, -0.5 , -0.25])
    """
    return _frequencies(np.fft.fftfreq, n, d, dtype, device)


def rfftfreq(
    n: int, /, *, d: float = 1.0, dtype: DTypeLike | None = None, device: Device = None
) -> DistArray:
    """Sample frequencies of `rfft` of length `n` (``n//2 + 1`` of them).

    >>> import mdarray
    >>> mdarray.fft.rfftfreq(4).get()
    array([0.  , 0.25, 0.5 ])
    """
    return _frequencies(np.fft.rfftfreq, n, d, dtype, device)


def _rolled(x: Any, axes, half) -> DistArray:
    """`x` rolled by ``half(length)`` along each of `axes` (all when None), as NumPy's
    shifts roll it: one slice-and-concatenate per axis, moving only the halves."""
    x = x if isinstance(x, DistArray) else asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    axes = normalize_axis_tuple(axes, x.ndim, allow_duplicate=True)
    result = x
    for axis in axes:
        length = x.shape[axis]
        shift = half(length) % length if length else 0
        if shift:
            before = (slice(None),) * axis
            head_index = (*before, slice(length - shift, None))
            tail_index = (*before, slice(0, length - shift))
            result = concat([result[head_index], result[tail_index]], axis=axis)
    return result.copy() if result is x else result


def fftshift(x: Any, /, *, axes: int | Sequence[int] | None = None) -> DistArray:
    """The zero frequency moved to the centre: each of `axes` rolled by half its length.
    Native.

    >>> import mdarray, numpy as np
    >>> mdarray.fft.fftshift(mdarray.asarray(np.arange(5))).get()
    array([3, 4, 0, 1, 2])
    """
    return _rolled(x, axes, lambda n: n // 2)


def ifftshift(x: Any, /, *, axes: int | Sequence[int] | None = None) -> DistArray:
    """Inverse of `fftshift`: each of `axes` rolled back by half its length. Native.

    >>> import mdarray, numpy as np
    >>> mdarray.fft.ifftshift(mdarray.asarray(np.arange(5))).get()
    array([2, 3, 4, 0, 1])
    """
    return _rolled(x, axes, lambda n: -(n // 2))


@implements(np.fft.fftshift, spmd=True)
def _numpy_fftshift(x, axes=None):
    return fftshift(x, axes=axes)


@implements(np.fft.ifftshift, spmd=True)
def _numpy_ifftshift(x, axes=None):
    return ifftshift(x, axes=axes)


# NumPy's transforms take the same paths; with ``out=`` they take the fallback policy
# (`fallback` writes the result into the DistArray `out`).


def _numpy_one_dimensional(func):
    @implements(func, spmd=True)
    def impl(a, n=None, axis=-1, norm=None, out=None):
        if out is not None:
            return fallback(func, (a,), {"n": n, "axis": axis, "norm": norm, "out": out}, name)
        return _along_axis(func, a, n=n, axis=axis, norm=norm)

    name = f"numpy.fft.{func.__name__}"
    return impl


def _numpy_n_dimensional(func, default_axes=None):
    nd = getattr(np.fft, func.__name__.removesuffix("n").removesuffix("2") + "n")

    @implements(func, spmd=True)
    def impl(a, s=None, axes=default_axes, norm=None, out=None):
        if out is not None:
            return fallback(func, (a,), {"s": s, "axes": axes, "norm": norm, "out": out}, name)
        return _n_dimensional(nd, a, s, axes, norm)

    name = f"numpy.fft.{func.__name__}"
    return impl


_NUMPY_ONE_D: tuple[Any, ...] = (np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft)
_NUMPY_N_D: tuple[Any, ...] = (np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn)
_NUMPY_2_D: tuple[Any, ...] = (np.fft.fft2, np.fft.ifft2, np.fft.rfft2, np.fft.irfft2)
for _func in (*_NUMPY_ONE_D, np.fft.hfft, np.fft.ihfft):
    _numpy_one_dimensional(_func)
for _func in _NUMPY_N_D:
    _numpy_n_dimensional(_func)
for _func in _NUMPY_2_D:
    _numpy_n_dimensional(_func, (-2, -1))
