"""`fuse`: an elementwise chain run as one call per chunk.

``mdarray.fuse(fn)`` is ``cupy.fuse`` for DistArrays. Where the unfused ``fn(a, b)`` runs
each of its ufuncs as a DistArray op (dtype resolution, layout, mode rules and a kernel per
chunk, an intermediate DistArray per step), the fused call aligns the operands to the
result's layout once and runs ``fn`` itself once per chunk: the backend's
``fused_kernel(fn)`` is ``fn`` on the cpu backend (on the chunk's NumPy arrays)
and one GPU kernel per chunk on the cuda backend (`_backends.cuda.elementwise.Chain`,
else ``cupy.fuse(fn)``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from mdarray._array.array import DistArray, in_group, in_mode, wrap
from mdarray._array.calls import collective
from mdarray._backends.backend import Backend
from mdarray._core.modes import REPLICA
from mdarray._exec.chunkwise import aligned, backend_of, result_layout, shape_of
from mdarray._exec.operands import as_operand, stand_in, verdict
from mdarray._storage.chunks import Chunks


class Fused:
    """A function fused by `fuse`: called with DistArrays, it runs once per chunk."""

    def __init__(self, fn: Callable[..., Any], kernel_name: str | None = None) -> None:
        functools.update_wrapper(self, fn)
        self.__wrapped__ = fn
        self.kernel_name = kernel_name
        # Per backend, its kernel for fn (cupy.fuse's object compiles once per dtypes).
        self._kernels: dict[Any, Callable[..., Any]] = {}

    def __repr__(self) -> str:
        return f"<mdarray.fuse of {_name(self.__wrapped__)}>"

    @collective(lambda self, *_: f"fuse({_name(self.__wrapped__)})")
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fn = self.__wrapped__
        if kwargs:
            raise TypeError(f"mdarray.fuse({_name(fn)}): takes no keyword arguments, only operands")
        if not any(isinstance(x, DistArray) for x in args):
            return fn(*args)
        if verdict(map(type, args), "__array_ufunc__") is not None:
            return fn(*args)  # another library's array: the unfused chain decides
        operands = tuple(as_operand(x) for x in args)
        shape = np.broadcast_shapes(*(shape_of(x) for x in operands))
        dtype, returned = _result_dtype(fn, operands, shape)
        if returned is not None:  # fn returns an operand as it is: no kernel to run
            copy = in_mode(operands[returned], REPLICA).copy()
            return in_group(copy, args)
        layout = result_layout(shape, operands)
        backend = backend_of(operands)
        # fn is arbitrary: it need not commute with combining partial copies.
        operands = tuple(in_mode(x, REPLICA) if isinstance(x, DistArray) else x for x in operands)
        columns = [aligned(x, layout, backend) for x in operands]
        kernel = self._kernels.get(backend)
        if kernel is None:
            kernel = self._kernels[backend] = backend.fused_kernel(fn, self.kernel_name)
        chunks = enumerate(zip(layout.chunk_devices, layout.chunk_shapes, zip(*columns)))
        if layout.extent * dtype.itemsize >= backend.parallel_bytes:
            # A large call: the chunks' kernels at once, on the devices' threads (each
            # elementwise over its pieces: the cpu backend may run it in lanes).
            rows = [(d, (fn, kernel, k, dtype, backend, *pieces)) for k, (d, _, pieces) in chunks]
            buffers = backend.each(_run_lane, rows, dtype, elementwise=True)
        else:
            buffers = []
            for k, (device, chunk_shape, pieces) in chunks:
                with backend.on(device):
                    buffers.append(_run_chunk(fn, kernel, pieces, k, chunk_shape, dtype, backend))
        result = wrap(Chunks.of(layout, buffers, backend, dtype), REPLICA)
        return in_group(result, args)


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def _result_dtype(fn, operands, shape) -> tuple[np.dtype, int | None]:
    """The dtype of ``fn(*operands)`` as NumPy's promotion gives it, computed on empty
    stand-ins, and the position of the operand `fn` returns as it is (None where it
    computes a new array); a TypeError where ``fn`` is not elementwise over the operands."""
    stand_ins = [stand_in(x) for x in operands]
    with np.errstate(all="ignore"):
        got = fn(*stand_ins)
    expected = tuple(0 if n != 1 else 1 for n in shape)
    if not hasattr(got, "dtype") or np.shape(got) != expected:
        raise TypeError(
            f"mdarray.fuse({_name(fn)}): the function must be elementwise (NumPy ufuncs and "
            f"operators on its operands, one array result of their broadcast shape); on "
            f"empty stand-ins of shape {expected} it gave {_describe(got)}"
        )
    returned = next(
        (k for k, x in enumerate(operands) if got is stand_ins[k] and isinstance(x, DistArray)),
        None,
    )
    return np.dtype(got.dtype), returned


def _describe(got) -> str:
    if hasattr(got, "shape"):
        return f"shape {tuple(got.shape)}"
    return f"a {type(got).__name__}"


def _run_lane(fn, kernel, k, dtype, backend: Backend, *pieces):
    """`_run_chunk` over `pieces`, of their broadcast shape (a chunk's, or a lane's run of
    its elements)."""
    shape = np.broadcast_shapes(*(p.shape for p in pieces if hasattr(p, "shape")))
    return _run_chunk(fn, kernel, pieces, k, shape, dtype, backend)


def _run_chunk(fn, kernel, pieces, k, chunk_shape, dtype, backend: Backend):
    """``kernel(*pieces)`` for chunk `k`: a fresh array of `chunk_shape` and `dtype`."""
    chunk_shape = tuple(chunk_shape)
    # 0-d pieces run as one element: NumPy turns 0-d results into scalars, whose arithmetic
    # warns (on overflow) where the unfused ops on arrays do not, and which leave the
    # backend's kernels (`CpuBackend.fused_kernel`).
    pieces = tuple(p.reshape(1) if backend.is_native(p) and p.ndim == 0 else p for p in pieces)
    try:
        got = kernel(*pieces)
    except Exception as error:
        # The error keeps its type (NumPy's, as the unfused ops raise); a note names the
        # function where Python has notes (3.11 on).
        add_note = getattr(error, "add_note", None)
        if add_note is not None:
            add_note(f"in mdarray.fuse({_name(fn)}), on chunk {k}")
        raise
    run_shape = chunk_shape or (1,)
    if not hasattr(got, "shape") or tuple(got.shape) != run_shape:
        raise ValueError(
            f"mdarray.fuse({_name(fn)}): on chunk {k} of shape {chunk_shape} the function "
            f"gave {_describe(got)}; it must be elementwise over all its operands"
        )
    if any(got is piece for piece in pieces):
        got = got.copy()  # the operand's own buffer (``lambda x: x``): results are fresh
    if got.dtype != dtype:
        # A backend whose kernels promote differently from NumPy: NumPy's dtype is the
        # contract, as for the unfused chain.
        got = got.astype(dtype)
    return got.reshape(chunk_shape) if chunk_shape == () else got


def fuse(fn: Callable[..., Any] | None = None, *, kernel_name: str | None = None) -> Any:
    """Fuse an elementwise function into one call per chunk, as ``cupy.fuse`` does.

    ``fuse(fn)(a, b)`` equals ``fn(a, b)`` (value, dtype and broadcast shape) but, with
    DistArray operands, runs ``fn`` once per chunk of the result on the chunks' own arrays
    instead of once per op on DistArrays: no intermediate DistArrays and no dispatch per
    op. On the cpu backend each chunk runs ``fn`` on its NumPy arrays, with the kernels
    the unfused ops use (NumPy's, with the array API's special values); on the cuda
    backend it runs one GPU kernel per chunk, with ``fn``'s NumPy ufuncs run as CuPy's:
    mdarray's generated kernel of their per-element routines (the unfused values bit for
    bit) where every step is a ufunc or operator of one dtype on operands of one shape in
    C order or rows, else ``cupy.fuse(fn)``, whose compiler may contract a multiply and
    the add after it into one FMA (a value may then differ from the unfused one in its
    last place). Where ``fn`` calls a ufunc whose special values
    mdarray fixes (``floor_divide``, ``remainder``, complex ``log``, ...), the cuda
    backend runs it per op on its own kernels instead, so the value stays the unfused one.

    Parameters
    ----------
    fn : callable
        A function of arrays and scalars built from NumPy ufuncs (``np.sin``,
        ``np.maximum``, ...) and operators only, like the functions ``cupy.fuse`` takes.
        Usable as ``fuse(fn)``, ``@fuse`` or ``@fuse(kernel_name=...)``.
    kernel_name : str, optional
        The name of the GPU kernel (``cupy.fuse``'s ``kernel_name``); unused on the cpu
        backend.

    Returns
    -------
    callable
        The fused function; ``__wrapped__`` is `fn`. Called without a DistArray operand it
        just calls `fn`. Its result is a REPLICA DistArray in the layout of the first
        DistArray operand of the result's shape (as for any elementwise op).

    Notes
    -----
    What moves: nothing for DistArray operands of one layout in REPLICA mode; other
    operands are aligned to the result's layout first, as for any elementwise op. Operands
    in a partial mode (SUM, PROD, MAX, MIN) are made REPLICA first, since an arbitrary
    function does not commute with combining the copies. The result's dtype is NumPy's,
    found by calling `fn` on empty stand-ins of the operands; a function that is not
    elementwise raises a TypeError or ValueError naming it.

    Examples
    --------
    >>> import numpy as np, mdarray
    >>> f = mdarray.fuse(lambda x, y: np.sin(x) * 2 + y)
    >>> x = mdarray.asarray(np.zeros(4, np.float32))
    >>> f(x, 1.0).get()
    array([1., 1., 1., 1.], dtype=float32)
    """
    if fn is None:
        return functools.partial(Fused, kernel_name=kernel_name)
    return Fused(fn, kernel_name)
