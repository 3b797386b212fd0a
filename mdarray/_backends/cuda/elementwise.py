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
            call = self._calls[signature] = _Call.of(
                self._loops, self._ufunc._preamble, signature, target is not None
            )
        if call is None:
            return None
        params = []
        for a, kind, dtype in zip(args, call.kinds, call.dtypes):
            value = self._as_loop_type(dtype, a) if kind is SCALAR else a
            if value is None:
                return None
            params.append(value)
        if target is None:
            target = self._empty(call.shape, call.out_dtype)
        elif call.overlaps(target, params):
            return None
        return launch(call, params, target, self._device(), self._compile)

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
        return compile_call(self._cupy, f"mdarray_{self.__name__}", call, device, vector)


class Chain:
    """``mdarray.fuse(fn)``'s chunk kernel on generated kernels: `fn` traced on stand-ins
    of its operands into its ufuncs (CuPy's loops, as `Elementwise` takes them), all run
    in one kernel per call, with the values of the ufuncs called one by one.

    Called like the function on CuPy arrays; gives None where the call does not qualify
    (an operand smaller than the threshold or not an array of one shape in C order or
    rows, a step of mixed dtypes or a loop left to CuPy, anything but ufuncs and operators
    on the operands and Python scalars): the caller runs it its own way. `fn` is traced
    at every call, since the Python values it closes over may change."""

    __slots__ = ("_calls", "_cupy", "_fn", "_loops", "_name")

    def __init__(self, cupy, fn, name: str):
        self._cupy = cupy
        self._fn = fn
        self._name = name
        self._loops: dict = {}  # NumPy ufunc -> (CuPy's ufunc, its loops by dtype)
        self._calls: dict = {}  # (steps, signature) -> _Call, or None

    def __call__(self, *args):
        cupy = self._cupy
        ndarray = cupy.ndarray
        if not args or any(type(a) is not ndarray for a in args):
            return None
        if max(a.nbytes for a in args) < _MIN_BYTES:
            return None
        trace = _Trace(self, len(args))
        try:
            got = self._fn(*(_Traced(trace, f"a{i}", a.dtype) for i, a in enumerate(args)))
        except Exception:  # whatever fn does beyond ufuncs: not a chain
            return None
        if type(got) is not _Traced or got.trace is not trace or got.name[0] != "t":
            return None
        steps = tuple(trace.steps[: int(got.name[1:]) + 1])  # steps after the result are unused
        preamble = "\n".join(trace.preambles)
        if len(steps) > 1 and "_type" in preamble:
            return None  # a preamble naming its loop's types would see no one loop's
        constants = trace.constants
        signature = (
            *((a.dtype, a.shape, a.strides) for a in args),
            *(type(c) for c in constants),
        )
        key = (tuple(st.key() for st in steps), signature)
        call = self._calls.get(key, _UNSEEN)
        if call is _UNSEEN:
            if len(self._calls) > 256:
                self._calls.clear()
            dtypes = tuple(a.dtype for a in args) + tuple(c.dtype for c in constants)
            call = self._calls[key] = _Call.laid_out(steps, preamble, dtypes, signature, False)
        if call is None:
            return None
        target = cupy.empty(call.shape, call.out_dtype)
        device = cupy.cuda.runtime.getDevice()
        return launch(call, [*args, *constants], target, device, self._compile)

    def launches(self) -> int:
        """How many kernels this chain has compiled."""
        return sum(len(c.kernels) for c in self._calls.values() if c is not None)

    def _compile(self, call, device: int, vector: int) -> tuple:
        return compile_call(self._cupy, f"mdarray_fused_{self._name}", call, device, vector)

    def loops(self, ufunc) -> tuple:
        """CuPy's ufunc of NumPy's `ufunc` and the loops a generated kernel takes of it."""
        found = self._loops.get(ufunc)
        if found is None:
            own = getattr(self._cupy, getattr(ufunc, "__name__", ""), None)
            if isinstance(ufunc, np.ufunc) and isinstance(own, self._cupy.ufunc):
                found = (own, _homogeneous_loops(own, ufunc))
            else:
                found = (None, {})
            self._loops[ufunc] = found
        return found


class _Untraceable(Exception):
    """What a traced function did is not a chain of ufuncs."""


class _Trace:
    """The steps, constants and preambles one trace of a function records."""

    __slots__ = ("chain", "constants", "operands", "preambles", "steps")

    def __init__(self, chain: Chain, operands: int) -> None:
        self.chain = chain
        self.operands = operands
        self.steps: list = []
        self.constants: list = []  # Python scalars, each in its step's loop type
        self.preambles: list = []

    def record(self, ufunc, inputs) -> _Traced:
        own, loops = self.chain.loops(ufunc)
        arrays = [x for x in inputs if type(x) is _Traced]
        if not loops or not arrays or any(x.trace is not self for x in arrays):
            raise _Untraceable
        dtype = arrays[0].dtype
        loop = loops.get(dtype)
        if loop is None or any(x.dtype != dtype for x in arrays):
            raise _Untraceable
        rank = _KIND_RANK.get(dtype.kind, -1)
        names = []
        for x in inputs:
            if type(x) is _Traced:
                names.append(x.name)
                continue
            if _SCALAR_RANK.get(type(x), 99) > rank or (dtype.kind in "iu" and not _fits(x, dtype)):
                raise _Untraceable
            names.append(f"a{self.operands + len(self.constants)}")
            self.constants.append(dtype.type(x))
        preamble = own._preamble
        if preamble and preamble not in self.preambles:
            self.preambles.append(preamble)
        routine, out_dtype = loop
        self.steps.append(Step(routine, tuple(names), dtype, out_dtype))
        return _Traced(self, f"t{len(self.steps) - 1}", out_dtype)


class _Traced(np.lib.mixins.NDArrayOperatorsMixin):
    """A value of a traced function: an operand (``a<i>``) or a step's result (``t<j>``)."""

    __slots__ = ("dtype", "name", "trace")

    def __init__(self, trace: _Trace, name: str, dtype: np.dtype) -> None:
        self.trace, self.name, self.dtype = trace, name, dtype

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs:
            raise _Untraceable
        return self.trace.record(ufunc, inputs)

    def __array_function__(self, *args, **kwargs):
        raise _Untraceable

    def __array__(self, *args, **kwargs):
        raise _Untraceable

    def __bool__(self):
        raise _Untraceable


def compile_call(cupy, name: str, call: _Call, device: int, vector: int) -> tuple:
    """`call`'s kernel, compiled as `name` on `device` (CuPy's kernel cache), and its grid."""
    from cupy._core._scalar import get_typename  # noqa: PLC0415  (CuPy's C type names)

    source = kernel_source(name, call, 0 if call.rows else vector, get_typename)
    kernel = cupy._core.core.compile_with_cache(source, _OPTIONS).get_function(name)
    count = cupy.cuda.Device(device).attributes["MultiProcessorCount"]
    units = call.size if call.rows else -(-call.size // vector)
    return kernel, (max(1, min(count * _BLOCKS_PER_SM, -(-units // _THREADS))),)


def launch(call: _Call, params: list, target, device: int, compile_for):
    """Run `call` on `params` into `target` on `device`; `compile_for(call, device, vector)`
    compiles a kernel the call has not yet had."""
    if call.size == 0:
        return target
    vector = call.vector
    if vector > 1 and not call.aligned(params, target):
        vector = 1
    found = call.kernels.get((device, vector))
    if found is None:
        found = call.kernels[(device, vector)] = compile_for(call, device, vector)
    kernel, grid = found
    kernel(grid, _BLOCK, (*params, *call.before, target, *call.after))
    return target


_UNSEEN = object()
_BLOCK = (_THREADS,)


class Step:
    """One ufunc of a kernel: CuPy's per-element `routine` (on ``in0`` ... and ``out0``)
    of the loop taking `dtype` to `out_dtype`, reading the values named `ins` (``a<i>``:
    the kernel's operand i; ``t<j>``: step j's result)."""

    __slots__ = ("dtype", "ins", "out_dtype", "routine")

    def __init__(self, routine: str, ins: tuple, dtype: np.dtype, out_dtype: np.dtype) -> None:
        self.routine, self.ins, self.dtype, self.out_dtype = routine, ins, dtype, out_dtype

    def key(self) -> tuple:
        return (self.routine, self.ins, self.dtype, self.out_dtype)


class _Call:
    """What one signature of operands decided: the steps, the operands' kinds and dtypes,
    and the kernel's constant arguments (``before`` and ``after`` the output)."""

    __slots__ = (
        "after",
        "before",
        "dtypes",
        "extents",
        "kernels",
        "kinds",
        "out_dtype",
        "preamble",
        "rows",
        "shape",
        "size",
        "steps",
        "vector",
    )

    steps: tuple  # of Step; the last one's value is the result
    preamble: str
    dtypes: tuple  # each operand's dtype in the kernel (a scalar's: its loop's)
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
    def of(cls, loops: dict, preamble: str, signature: tuple, has_out: bool) -> _Call | None:
        """One ufunc's call on the operands of `signature` (its `loops` by dtype)."""
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
        rank = _KIND_RANK.get(dtype.kind, -1)
        if any(type(s) is not tuple and _SCALAR_RANK.get(s, 99) > rank for s in ins):
            return None
        routine, out_dtype = loop
        names = tuple(f"a{i}" for i in range(len(ins)))
        step = Step(routine, names, dtype, out_dtype)
        return cls.laid_out((step,), preamble, (dtype,) * len(ins), signature, has_out)

    @classmethod
    def laid_out(
        cls, steps: tuple, preamble: str, dtypes: tuple, signature: tuple, has_out: bool
    ) -> _Call | None:
        """The call of `steps` on operands of `signature` (each array's ``(dtype, shape,
        strides)``, each scalar's type, then the output's where `has_out`), in `dtypes`;
        None where the arrays are not of one shape (or one element) in C order or rows."""
        ins = signature[:-1] if has_out else signature
        arrays = [s for s in ins if type(s) is tuple]
        if not arrays:
            return None
        shape = max(arrays, key=lambda s: _size(s[1]))[1]
        kinds = []
        rows = False
        extents = []
        for s in ins:
            if type(s) is not tuple:
                kinds.append(SCALAR)
                continue
            dtype, own, strides = s
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
        call.steps, call.preamble, call.dtypes = steps, preamble, dtypes
        call.out_dtype = steps[-1].out_dtype
        call.shape, call.size = shape, _size(shape)
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
            call.before = tuple(
                np.int64(_row_step(shape, s[2], s[0].itemsize))
                for s, k in zip(ins, kinds)
                if k is ARRAY
            )
            out_step = (
                shape[1]
                if out_strides is None
                else _row_step(shape, out_strides, call.out_dtype.itemsize)
            )
            call.after = (np.int64(out_step), np.int64(shape[0]), np.int64(shape[1]))
            call.vector = 0
        else:
            widest = max(
                [call.out_dtype.itemsize]
                + [d.itemsize for d in dtypes]
                + [st.out_dtype.itemsize for st in steps]
            )
            call.before = ()
            call.after = (np.int64(call.size),)
            call.vector = max(1, _VECTOR_BYTES // widest)
        if len(steps) > 1:
            call.after += (np.uint64(0),)  # the barriers' operand (`kernel_source`)
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


def kernel_source(name: str, call: _Call, vector: int, typename) -> str:
    """CUDA source of `call`'s kernel: its steps (CuPy's per-element routines) per element
    of its operands; `vector` elements per thread step with vector loads, or 0 for the
    rows kernel. Each step's result passes an optimization barrier on to the next, so
    the compiler contracts no multiply of one step into an add of the next (an FMA): a
    chain gives the values of its ufuncs called one by one."""
    kinds, dtypes, steps = call.kinds, call.dtypes, call.steps
    used = {d.kind for d in dtypes} | {st.out_dtype.kind for st in steps}
    sixteen = np.dtype(np.float16)
    lines = []
    if sixteen in dtypes or any(st.out_dtype == sixteen for st in steps):
        lines.append("#include <cupy/float16.cuh>")
    if "c" in used:
        lines.append("#include <cupy/complex.cuh>")
    if len(steps) == 1:  # a lone ufunc's preamble may name its loop's types
        step = steps[0]
        lines += [f"typedef {typename(step.dtype)} in{i}_type;" for i in range(len(step.ins))]
        lines.append(f"typedef {typename(step.out_dtype)} out0_type;")
    lines.append(call.preamble)
    lines.append(
        "template <typename T, int N> struct alignas(sizeof(T) * N) mdarray_pack { T v[N]; };"
    )
    if len(steps) > 1:
        lines.append(_BARRIERS)
        if "c" in used:
            lines.append(_COMPLEX_BARRIERS)
        if "#include <cupy/float16.cuh>" in lines:
            lines.append(_HALF_BARRIER)
    types = [typename(d) for d in dtypes]
    params = []
    for i, kind in enumerate(kinds):
        if kind == SCALAR:
            params.append(f"const {types[i]} _v{i}")
        else:
            params.append(f"const {types[i]}* __restrict__ _p{i}")
    out_type = typename(call.out_dtype)
    if vector:
        params += [f"{out_type}* __restrict__ _q", "const long long _n"]
    else:
        params += [
            *(f"const long long _s{i}" for i, k in enumerate(kinds) if k == ARRAY),
            f"{out_type}* __restrict__ _q",
            "const long long _sq",
            "const long long _rows",
            "const long long _cols",
        ]
    if len(steps) > 1:
        params.append("const unsigned long long _zero")
    body = [
        "const long long _step = (long long)blockDim.x * gridDim.x;",
        "const long long _first = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
    ]
    for i, kind in enumerate(kinds):
        if kind == ONE:
            body.append(f"const {types[i]} _v{i} = _p{i}[0];")

    def element(read, write):
        code = [
            f"const {types[i]} a{i} = {read(i) if k == ARRAY else f'_v{i}'};"
            for i, k in enumerate(kinds)
        ]
        last = len(steps) - 1
        for j, step in enumerate(steps):
            code.append(f"{typename(step.out_dtype)} t{j};")
            typedefs = [f"typedef {typename(step.dtype)} in{i}_type;" for i in range(len(step.ins))]
            typedefs.append(f"typedef {typename(step.out_dtype)} out0_type;")
            reads = [f"in{i}_type in{i} = {ref};" for i, ref in enumerate(step.ins)]
            code.append(
                f"{{ {' '.join(typedefs)} {' '.join(reads)} out0_type out0; "
                f"{{ {step.routine}; }} t{j} = out0; }}"
            )
            if j < last:
                code.append(f"mdarray_opaque(t{j}, _zero);")
        return f"{{ {' '.join(code)} {write} = t{last}; }}"

    if vector:
        packs = " ".join(
            f"const mdarray_pack<{types[i]}, {vector}> _a{i} = "
            f"reinterpret_cast<const mdarray_pack<{types[i]}, {vector}>*>(_p{i})[_j];"
            for i, k in enumerate(kinds)
            if k == ARRAY
        )
        body += [
            f"const long long _nv = _n / {vector};",
            "for (long long _j = _first; _j < _nv; _j += _step) {",
            f"  {packs}",
            f"  mdarray_pack<{out_type}, {vector}> _o;",
            "  #pragma unroll",
            f"  for (int _e = 0; _e < {vector}; ++_e) "
            + element(lambda i: f"_a{i}.v[_e]", "_o.v[_e]"),
            f"  reinterpret_cast<mdarray_pack<{out_type}, {vector}>*>(_q)[_j] = _o;",
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


# A value the compiler must take as unknown: its bits pass an exclusive or with a kernel
# argument that is always 0, so neither NVVM nor ptxas contracts a multiply of one step
# into an add of the next (an FMA); integers and booleans pass as they are.
_BARRIERS = """\
template <typename T> __device__ __forceinline__ void mdarray_opaque(T&, unsigned long long) {}
__device__ __forceinline__ void mdarray_opaque(float& v, unsigned long long z) {
  unsigned int b = __float_as_uint(v);
  asm volatile("xor.b32 %0, %0, %1;" : "+r"(b) : "r"((unsigned int)z));
  v = __uint_as_float(b);
}
__device__ __forceinline__ void mdarray_opaque(double& v, unsigned long long z) {
  long long b = __double_as_longlong(v);
  asm volatile("xor.b64 %0, %0, %1;" : "+l"(b) : "l"(z));
  v = __longlong_as_double(b);
}"""
_COMPLEX_BARRIERS = """\
template <typename T>
__device__ __forceinline__ void mdarray_opaque(complex<T>& v, unsigned long long z) {
  T* p = reinterpret_cast<T*>(&v);
  mdarray_opaque(p[0], z);
  mdarray_opaque(p[1], z);
}"""
_HALF_BARRIER = """\
__device__ __forceinline__ void mdarray_opaque(float16& v, unsigned long long z) {
  unsigned short* b = reinterpret_cast<unsigned short*>(&v);
  asm volatile("xor.b16 %0, %0, %1;" : "+h"(*b) : "h"((unsigned short)z));
}"""
