"""The cuda backend's own launches of CuPy's elementwise ufuncs, for the calls that
dominate array code: operands of one shape that are C-contiguous (vector loads and
stores, a scalar tail) or rows of a 2-D view (each row contiguous), with Python scalars
and one-element arrays broadcast.

Each kernel is generated from CuPy's own per-element routine (the ufunc's loop for the
operands' dtype, its preamble) and compiled with CuPy's headers and options
(``compile_with_cache``), so its values are CuPy's bit for bit. What it saves is CuPy's
general argument handling per call (broadcasting, type resolution, indexers: about a
third of a small call's host time) and the bandwidth a scalar-per-thread loop leaves.
Every other call (other dtypes mixed, broadcasting, options, overlapping ``out``, loops
with error handlers) goes to CuPy's ufunc as it is.

CuPy comes in as an argument; this module imports only CuPy's C type names, to compile.
"""

from __future__ import annotations

import os

import numpy as np

# Kinds of an operand in a generated kernel.
ARRAY = "a"  # an array of the call's shape and dtype, read per element
ONE = "p"  # a one-element array, read once (a 0-d value, a packed 0-d slab)
SCALAR = "s"  # a Python scalar, passed by value in the loop's input type

_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_SCALAR_RANK = {bool: 0, int: 1, float: 2, complex: 3}
_THREADS = 256
_BLOCKS_PER_SM = 16  # the most blocks a launch uses, per multiprocessor
_VECTOR_BYTES = 16
# ``MDARRAY_CUDA_OWN_KERNELS=0``: CuPy's own kernels and copies everywhere.
OWN_KERNELS = os.environ.get("MDARRAY_CUDA_OWN_KERNELS", "1") != "0"
_OPTIONS: tuple = ()  # NVRTC options past CuPy's own
# Operands smaller than this run on CuPy's ufunc: a launch from Python costs about as much
# host time as CuPy's whole call (an H200 host: 17.5 against 14.4 us for 4096 float32),
# so the generated kernels pay off where the device time dominates (16 MiB float32 add:
# 13.7 us against 22.8 us; 1 GiB: 0.78 ms against 1.27 ms).
_MIN_BYTES = 16 << 20


def launcher(cupy, ufunc, own):
    """What runs NumPy's `ufunc` on the cuda backend, given `own`, CuPy's ufunc of that
    name: an `Elementwise` over it where it is one of CuPy's ufuncs, else `own` as it
    is (``MDARRAY_CUDA_OWN_KERNELS=0``: CuPy's own ufuncs always)."""
    if not OWN_KERNELS:
        return own
    return Elementwise(cupy, ufunc) if isinstance(own, cupy.ufunc) else own


class Elementwise:
    """A CuPy ufunc, called like one; calls the generated kernels take run on them.

    What a call's operands decide (the loop, the kernel, its constant arguments) is kept
    per signature, the operands' dtypes, shapes and strides and the scalars' types, so a
    repeated call only reads its operands' pointers."""

    __slots__ = (
        "__name__",
        "_calls",
        "_cupy",
        "_device",
        "_empty",
        "_loops",
        "_ndarray",
        "_scalars",
        "_ufunc",
    )

    def __init__(self, cupy, ufunc):
        own = getattr(cupy, ufunc.__name__)
        self._ufunc = own
        self._cupy = cupy
        self._ndarray = cupy.ndarray
        self._empty = cupy.empty
        self._device = cupy.cuda.runtime.getDevice
        self.__name__ = ufunc.__name__
        self._loops = _homogeneous_loops(own, ufunc)
        self._calls: dict = {}  # signature -> _Call, or None: CuPy's ufunc
        self._scalars: dict = {}  # (dtype, type, value) -> the value in the loop's type

    def __getattr__(self, name):
        return getattr(self._ufunc, name)

    def __repr__(self) -> str:
        return f"<mdarray launcher of {self._ufunc!r}>"

    def __call__(self, *args, out=None, **options):
        if not options and self._loops:
            ndarray = self._ndarray
            for a in args:
                if type(a) is ndarray:
                    if a.nbytes >= _MIN_BYTES:
                        got = self._launch(args, out)
                        if got is not None:
                            return got
                    break
        if out is not None:
            options["out"] = out
        return self._ufunc(*args, **options)

    def launches(self) -> int:
        """How many kernels this launcher has compiled (one per signature and device)."""
        return sum(len(c.kernels) for c in self._calls.values() if c is not None)

    def _launch(self, args, out):
        """The call on a generated kernel, or None where it does not qualify."""
        ndarray = self._ndarray
        key: list = []
        for a in args:
            if type(a) is ndarray:
                key.append((a.dtype, a.shape, a.strides))
            else:
                key.append(type(a))
        target = None
        if out is not None:
            if len(out) != 1 or type(out[0]) is not ndarray:
                return None
            target = out[0]
            key.append((target.dtype, target.shape, target.strides))
        signature = tuple(key)
        call = self._calls.get(signature, _UNSEEN)
        if call is _UNSEEN:
            if len(self._calls) > 4096:
                self._calls.clear()
            call = self._calls[signature] = _Call.of(self._loops, signature, target is not None)
        if call is None:
            return None
        params = []
        for a, kind in zip(args, call.kinds):
            value = self._as_loop_type(call.dtype, a) if kind is SCALAR else a
            if value is None:
                return None
            params.append(value)
        if target is None:
            target = self._empty(call.shape, call.out_dtype)
        elif call.overlaps(target, params):
            return None
        if call.size == 0:
            return target
        device = self._device()
        vector = call.vector
        if vector > 1 and not call.aligned(params, target):
            vector = 1
        found = call.kernels.get((device, vector))
        if found is None:
            found = call.kernels[(device, vector)] = self._compile(call, device, vector)
        kernel, grid = found
        kernel(grid, _BLOCK, (*params, *call.before, target, *call.after))
        return target

    def _as_loop_type(self, dtype, value):
        """`value` in the loop's input `dtype` (as CuPy passes a Python scalar), or None
        where an integer loop cannot hold it."""
        key = (dtype, type(value), value)
        got = self._scalars.get(key)
        if got is None:
            if dtype.kind in "iu" and not _fits(value, dtype):
                return None
            if len(self._scalars) > 1024:
                self._scalars.clear()
            got = self._scalars[key] = dtype.type(value)
        return got

    def _compile(self, call, device: int, vector: int) -> tuple:
        """The kernel of `call` on `device` and its grid."""
        from cupy._core._scalar import get_typename  # noqa: PLC0415  (CuPy's C type names)

        cupy = self._cupy
        name = f"mdarray_{self.__name__}"
        source = kernel_source(
            name,
            call.routine,
            self._ufunc._preamble,
            call.dtype,
            call.out_dtype,
            call.kinds,
            0 if call.rows else vector,
            get_typename,
        )
        kernel = cupy._core.core.compile_with_cache(source, _OPTIONS).get_function(name)
        count = cupy.cuda.Device(device).attributes["MultiProcessorCount"]
        units = call.size if call.rows else -(-call.size // vector)
        return kernel, (max(1, min(count * _BLOCKS_PER_SM, -(-units // _THREADS))),)


_UNSEEN = object()
_BLOCK = (_THREADS,)


class _Call:
    """What one signature of operands decided: the loop, the operands' kinds, and the
    kernel's constant arguments (``before`` and ``after`` the output)."""

    __slots__ = (
        "after",
        "before",
        "dtype",
        "extents",
        "kernels",
        "kinds",
        "out_dtype",
        "routine",
        "rows",
        "shape",
        "size",
        "vector",
    )

    routine: str
    dtype: np.dtype
    out_dtype: np.dtype
    shape: tuple
    size: int
    kinds: tuple
    rows: bool
    vector: int  # elements per vector load; 0: the rows kernel
    before: tuple
    after: tuple
    extents: tuple  # bytes each array operand spans
    kernels: dict  # (device, vector) -> (compiled kernel, grid)

    @classmethod
    def of(cls, loops: dict, signature: tuple, has_out: bool) -> _Call | None:
        ins = signature[:-1] if has_out else signature
        arrays = [s for s in ins if type(s) is tuple]
        if not arrays:
            return None
        dtype = arrays[0][0]
        if any(d != dtype for d, _, _ in arrays):
            return None
        loop = loops.get(dtype)
        if loop is None:
            return None
        shape = max(arrays, key=lambda s: _size(s[1]))[1]
        rank = _KIND_RANK.get(dtype.kind, -1)
        kinds = []
        rows = False
        extents = []
        for s in ins:
            if type(s) is not tuple:
                if _SCALAR_RANK.get(s, 99) > rank:
                    return None
                kinds.append(SCALAR)
                continue
            _, own, strides = s
            if own == shape:
                if not _c_order(own, strides, dtype.itemsize):
                    if not _rows_of(own, strides, dtype.itemsize):
                        return None
                    rows = True
                kinds.append(ARRAY)
            elif _size(own) == 1 and len(own) <= len(shape):
                kinds.append(ONE)
            else:
                return None
            extents.append(_extent(own, strides, dtype.itemsize))
        call = cls()
        call.routine, call.out_dtype = loop
        call.dtype, call.shape, call.size = dtype, shape, _size(shape)
        call.kinds, call.extents, call.kernels = tuple(kinds), tuple(extents), {}
        out_strides = None
        if has_out:
            out_dtype, out_shape, out_strides = signature[-1]
            if out_dtype != call.out_dtype or out_shape != shape:
                return None
            if not _c_order(shape, out_strides, out_dtype.itemsize):
                if not _rows_of(shape, out_strides, out_dtype.itemsize):
                    return None
                rows = True
        call.rows = rows
        if rows:
            strides = [s[2] for s, k in zip(ins, kinds) if k is ARRAY]
            call.before = tuple(np.int64(_row_step(shape, st, dtype.itemsize)) for st in strides)
            out_step = (
                shape[1]
                if out_strides is None
                else _row_step(shape, out_strides, call.out_dtype.itemsize)
            )
            call.after = (np.int64(out_step), np.int64(shape[0]), np.int64(shape[1]))
            call.vector = 0
        else:
            call.before = ()
            call.after = (np.int64(call.size),)
            call.vector = max(1, _VECTOR_BYTES // max(dtype.itemsize, call.out_dtype.itemsize))
        return call

    def aligned(self, params, target) -> bool:
        """Whether every array operand and `target` take vector loads."""
        width = self.vector
        for a, kind in zip(params, self.kinds):
            if kind is ARRAY and a.data.ptr % (a.itemsize * width):
                return False
        return not target.data.ptr % (target.itemsize * width)

    def overlaps(self, target, params) -> bool:
        """Whether an array operand's memory meets `target`'s other than as the very
        same elements (an in-place ``a += b`` reads and writes one element per thread)."""
        low = target.data.ptr
        high = low + _extent(target.shape, target.strides, target.itemsize)
        arrays = (a for a, kind in zip(params, self.kinds) if kind is not SCALAR)
        for a, extent in zip(arrays, self.extents):
            start = a.data.ptr
            if start + extent <= low or start >= high:
                continue
            if start == low and a.strides == target.strides and a.shape == target.shape:
                continue
            return True
        return False


def _size(shape: tuple) -> int:
    size = 1
    for n in shape:
        size *= n
    return size


def _c_order(shape: tuple, strides: tuple, itemsize: int) -> bool:
    """Whether `strides` lay `shape` out in C order without gaps (axes of one element
    may step anyhow)."""
    step = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != step:
            return False
        step *= n
    return True


def _rows_of(shape: tuple, strides: tuple, itemsize: int) -> bool:
    """Whether a 2-D array has contiguous rows at a non-negative row step."""
    return (
        len(shape) == 2
        and strides[1] == itemsize
        and strides[0] >= 0
        and strides[0] % itemsize == 0
    )


def _row_step(shape: tuple, strides: tuple, itemsize: int) -> int:
    """The elements between the starts of two rows (a C-ordered array's row length)."""
    return strides[0] // itemsize if shape[0] > 1 else shape[1]


def _extent(shape: tuple, strides: tuple, itemsize: int) -> int:
    """The bytes an array of non-negative strides spans from its first element."""
    if _size(shape) == 0:
        return 0
    return sum((n - 1) * abs(s) for n, s in zip(shape, strides)) + itemsize


def _homogeneous_loops(own, ufunc) -> dict:
    """Per dtype, the loop CuPy picks for its ufunc `own` on arrays all of that dtype
    (its first loop taking them by a safe cast), where that loop takes them as they are
    and NumPy's `ufunc` has the same loop: ``(routine, output dtype)``.

    Loops whose routine is not a plain string (error handlers) or reads CuPy's indexer
    stay CuPy's, as do ufuncs with a loop preamble, several outputs, or a routine CuPy's
    own call does not run as listed (`_NOT_AS_LISTED`)."""
    if own.nout != 1 or getattr(own, "_loop_prep", "") or ufunc.__name__ in _NOT_AS_LISTED:
        return {}
    loops: dict = {}
    for code in "?bBhHiIlLqQefdFD":
        dtype = np.dtype(code)
        try:
            numpys = ufunc.resolve_dtypes((dtype,) * ufunc.nin + (None,))
        except (TypeError, ValueError):
            continue
        if any(t != dtype for t in numpys[: ufunc.nin]):
            continue
        for op in own._ops.ops:
            if all(np.can_cast(dtype, t) for t in op.in_types):
                routine = op.routine
                if (
                    all(t == dtype for t in op.in_types)
                    and len(op.out_types) == 1
                    and op.out_types[0] == numpys[-1]
                    and isinstance(routine, str)
                    and "_ind" not in routine
                    and "_raw" not in routine
                ):
                    loops[dtype] = (routine, np.dtype(op.out_types[0]))
                break
    return loops


# CuPy's float `remainder` gives NumPy's values, not its listed routine's (``in0 -
# _floor_divide(in0, in1) * in1`` differs in the last bit): left to CuPy.
_NOT_AS_LISTED = frozenset({"remainder"})


def _fits(value, dtype) -> bool:
    """Whether the Python int (or bool) `value` is a value of the integer `dtype`."""
    info = np.iinfo(dtype)
    return info.min <= value <= info.max


def kernel_source(name, routine, preamble, dtype, out_dtype, kinds, vector, typename) -> str:
    """CUDA source of one generated kernel: `routine` (CuPy's per-element code on ``in0``
    ... and ``out0``) over operands of `kinds` in the loop's input `dtype`; `vector`
    elements per thread step with vector loads, or 0 for the rows kernel."""
    kinds_used = {dtype.kind, out_dtype.kind}
    lines = []
    if np.dtype(np.float16) in (dtype, out_dtype):
        lines.append("#include <cupy/float16.cuh>")
    if "c" in kinds_used:
        lines.append("#include <cupy/complex.cuh>")
    lines += [f"typedef {typename(dtype)} in{i}_type;" for i in range(len(kinds))]
    lines.append(f"typedef {typename(out_dtype)} out0_type;")
    lines.append(preamble or "")
    lines.append(
        "template <typename T, int N> struct alignas(sizeof(T) * N) mdarray_pack { T v[N]; };"
    )
    params = []
    for i, kind in enumerate(kinds):
        if kind == SCALAR:
            params.append(f"const in{i}_type _v{i}")
        else:
            params.append(f"const in{i}_type* __restrict__ _p{i}")
    strides = [f"const long long _s{i}" for i, k in enumerate(kinds) if k == ARRAY]
    if vector:
        params += ["out0_type* __restrict__ _q", "const long long _n"]
    else:
        params += [
            *strides,
            "out0_type* __restrict__ _q",
            "const long long _sq",
            "const long long _rows",
            "const long long _cols",
        ]
    body = [
        "const long long _step = (long long)blockDim.x * gridDim.x;",
        "const long long _first = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
    ]
    for i, kind in enumerate(kinds):
        if kind == ONE:
            body.append(f"const in{i}_type _v{i} = _p{i}[0];")

    def element(read, write):
        ins = " ".join(
            f"in{i}_type in{i} = {read(i) if k == ARRAY else f'_v{i}'};"
            for i, k in enumerate(kinds)
        )
        return f"{{ {ins} out0_type out0; {{ {routine}; }} {write} = out0; }}"

    if vector:
        packs = " ".join(
            f"const mdarray_pack<in{i}_type, {vector}> _a{i} = "
            f"reinterpret_cast<const mdarray_pack<in{i}_type, {vector}>*>(_p{i})[_j];"
            for i, k in enumerate(kinds)
            if k == ARRAY
        )
        body += [
            f"const long long _nv = _n / {vector};",
            "for (long long _j = _first; _j < _nv; _j += _step) {",
            f"  {packs}",
            f"  mdarray_pack<out0_type, {vector}> _o;",
            "  #pragma unroll",
            f"  for (int _e = 0; _e < {vector}; ++_e) "
            + element(lambda i: f"_a{i}.v[_e]", "_o.v[_e]"),
            f"  reinterpret_cast<mdarray_pack<out0_type, {vector}>*>(_q)[_j] = _o;",
            "}",
            f"for (long long _i = _nv * {vector} + _first; _i < _n; _i += _step) "
            + element(lambda i: f"_p{i}[_i]", "_q[_i]"),
        ]
    else:
        body += [
            "const long long _n = _rows * _cols;",
            "for (long long _i = _first; _i < _n; _i += _step) {",
            "  const long long _r = _i / _cols, _c = _i - _r * _cols;",
            "  " + element(lambda i: f"_p{i}[_r * _s{i} + _c]", "_q[_r * _sq + _c]"),
            "}",
        ]
    lines.append(f'extern "C" __global__ void {name}({", ".join(params)}) {{')
    lines += ["  " + line for line in body]
    lines.append("}")
    return "\n".join(lines) + "\n"
