"""The cuda backend's own launches of CuPy's elementwise ufuncs, alone (`Elementwise`) or
chained by ``mdarray.fuse`` (`Chain`), for the calls that dominate array code: operands
of one shape that are C-contiguous (vector loads and stores, a scalar tail) or rows of a
2-D view (each row contiguous), with Python scalars and one-element arrays broadcast.

Each kernel is generated (`generated`) from CuPy's own per-element routines (the ufunc's
loop for the operands' dtype, its preamble) and compiled with CuPy's headers and options
(``compile_with_cache``), so its values are CuPy's bit for bit. What it saves is CuPy's
general argument handling per call (broadcasting, type resolution, indexers: about a
third of a small call's host time) and the bandwidth a scalar-per-thread loop leaves.
Every other call (other dtypes mixed, broadcasting, options, overlapping ``out``, loops
with error handlers) goes to CuPy's ufunc as it is.

CuPy comes in as an argument; `generated` imports only CuPy's C type names, to compile.
"""

from __future__ import annotations

import os

import numpy as np

from .generated import ARRAY, LOAD_BYTES, SCALAR, Call, Launch, Step, compile_call, launch

# How far up bool < integer < float < complex a dtype's kind, or a Python scalar, is.
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_SCALAR_RANK = {bool: 0, int: 1, float: 2, complex: 3}
# ``MDARRAY_CUDA_OWN_KERNELS=0``: CuPy's own kernels and copies everywhere.
OWN_KERNELS = os.environ.get("MDARRAY_CUDA_OWN_KERNELS", "1") != "0"
# Operands smaller than this run on CuPy's ufunc: a launch from Python costs about as much
# host time as CuPy's whole call (an H200 host: 17.5 against 14.4 us for 4096 float32),
# so the generated kernels pay off where the device time dominates (16 MiB float32 add:
# 13.7 us against 22.8 us; 1 GiB: 0.78 ms against 1.27 ms).
_MIN_BYTES = 16 << 20
# Decided calls bound below that size too (a bound launch costs less host time than
# CuPy's call: 7.6 against 8.1 us for 4096 float32 ``a + b`` on an H100, 7.2 against 10.5
# with a Python scalar), and device blocks launched by pointer (`Bound.into`,
# `CudaBackend.block_launch`); ``MDARRAY_CUDA_POINTER_LAUNCHES=0``: neither.
POINTER_LAUNCHES = os.environ.get("MDARRAY_CUDA_POINTER_LAUNCHES", "1") != "0"
_UNSEEN = object()


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
        self._calls: dict = {}  # signature -> Call, or None: CuPy's ufunc
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

    def sized(self, nbytes: int, like=None):
        """What runs this ufunc on operands of at most `nbytes`: where `like` (arguments)
        is given, its `Bound` launch for calls like them (below the generated kernels'
        size only with `POINTER_LAUNCHES`); else CuPy's ufunc below that size (a call
        then skips this launcher's checks), else this."""
        small = nbytes < _MIN_BYTES
        bound = None if like is None or (small and not POINTER_LAUNCHES) else self.bound(like)
        if bound is not None:
            return bound
        return self._ufunc if small else self

    def bound(self, like, out=None) -> Bound | None:
        """The `Bound` launch for calls on arguments like `like` (and into arrays like
        `out`, a tuple of one), or None where a generated kernel does not take them."""
        if not self._loops:
            return None
        call = self._call(like, out)
        return None if call is None else Bound(self, call, like)

    def launches(self) -> int:
        """How many kernels this launcher has compiled (one per signature and device)."""
        return sum(len(c.kernels) for c in self._calls.values() if c is not None)

    def _launch(self, args, out):
        """The call on a generated kernel, or None where it does not qualify."""
        call = self._call(args, out)
        if call is None:
            return None
        params = []
        for a, kind, dtype in zip(args, call.kinds, call.dtypes):
            value = self._as_loop_type(dtype, a) if kind is SCALAR else a
            if value is None:
                return None
            params.append(value)
        if out is None:
            target = self._empty(call.shape, call.out_dtype)
        else:
            target = out[0]
            if call.overlaps(target, params):
                return None
        return launch(call, params, target, self._device(), self._compile)

    def _call(self, args, out) -> Call | None:
        """What the operands' signature decided (`Call`), or None: CuPy's ufunc."""
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
            call = self._calls[signature] = _one_ufunc(
                self._loops, self._ufunc._preamble, signature, target is not None
            )
        return call

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

    def _compile(self, call, device: int, vector: int) -> Launch:
        """The kernel of `call` on `device`, as its launch."""
        return compile_call(self._cupy, f"mdarray_{self.__name__}", call, device, vector)


class Bound:
    """An `Elementwise` launch for repeated calls on arguments like the ones it was made
    for (a decided call's slabs or device blocks on one device): the same shapes,
    strides and dtypes of arrays and types of scalars. Its `Call` is decided once. A call
    (a new result each) checks its arrays' shapes and strides and runs the launcher's own
    way where they differ (or a scalar does not fit the loop's type); `into` takes arrays
    by pointer, laid out as the ones it was made for, and writes where it is told. The
    result comes from the current allocator (``cupy.cuda.alloc``) without `cupy.empty`'s
    checks."""

    __slots__ = (
        "_alloc", "_arrays", "_call", "_in_mask", "_layouts", "_nbytes", "_ndarray",
        "_out_mask", "_owner", "_scalars",
    )  # fmt: skip

    def __init__(self, owner: Elementwise, call: Call, like) -> None:
        self._owner, self._call = owner, call
        kinds, dtypes = call.kinds, call.dtypes
        self._scalars = tuple((i, d) for i, (k, d) in enumerate(zip(kinds, dtypes)) if k is SCALAR)
        self._layouts = tuple(
            (i, like[i].shape, like[i].strides) for i, k in enumerate(kinds) if k is not SCALAR
        )
        self._arrays = tuple(i for i, k in enumerate(kinds) if k is ARRAY)
        # Vector steps need these low bits of the pointers clear (`Call.aligned`); the
        # array operands of one ufunc's call share a dtype.
        width = max(call.vector, 1)
        size = dtypes[self._arrays[0]].itemsize if self._arrays else 1
        self._in_mask = min(LOAD_BYTES, size * width) - 1
        self._out_mask = min(LOAD_BYTES, call.out_dtype.itemsize * width) - 1
        self._nbytes = call.size * call.out_dtype.itemsize
        self._alloc, self._ndarray = owner._cupy.cuda.alloc, owner._ndarray

    def __call__(self, *args):
        for i, shape, strides in self._layouts:
            a = args[i]
            if a.shape != shape or a.strides != strides:
                return self._owner(*args)
        params = self._params(args) if self._scalars else list(args)
        if params is None:
            return self._owner(*args)
        call = self._call
        target = self._ndarray(call.shape, call.out_dtype, self._alloc(self._nbytes))
        for i, _, _ in self._layouts:
            params[i] = args[i].data.ptr
        self._launch(params, target.data.ptr)
        return target

    def into(self, args, out: int) -> bool:
        """The launch on `args` whose arrays are given by their pointers, into `out` (a
        pointer): memory laid out as the arrays this was made for (the caller answers for
        it); False where a scalar does not fit the loop's type (nothing ran)."""
        params = self._params(args) if self._scalars else args
        if params is None:
            return False
        self._launch(params, out)
        return True

    @property
    def dtype(self):
        """The dtype of the results."""
        return self._call.out_dtype

    def slab(self):
        """A new flat array for one result (the call's shape in C order)."""
        call = self._call
        return self._ndarray((call.size,), call.out_dtype, self._alloc(self._nbytes))

    def _params(self, args) -> list | None:
        """`args` as a list, each scalar in its loop's type (None: one does not fit)."""
        params = list(args)
        for i, dtype in self._scalars:
            value = self._owner._as_loop_type(dtype, params[i])
            if value is None:
                return None
            params[i] = value
        return params

    def _launch(self, params, out: int) -> None:
        """The kernel on `params` (arrays by pointer) into `out`, vector steps where every
        pointer is aligned for them."""
        call = self._call
        if not call.size:
            return
        vector = call.vector
        if vector > 1:
            low = 0
            for i in self._arrays:
                low |= params[i]
            if low & self._in_mask or out & self._out_mask:
                vector = 1
        owner = self._owner
        device = owner._device()
        found = call.kernels.get((device, vector))
        if found is None:
            found = call.kernels[(device, vector)] = owner._compile(call, device, vector)
        found(params, out)


class Chain:
    """``mdarray.fuse(fn)``'s chunk kernel on generated kernels: `fn` traced on stand-ins
    of its operands into its ufuncs (CuPy's loops, as `Elementwise` takes them), all run
    in one kernel per call, with the values of the ufuncs called one by one.

    Called like the function on CuPy arrays, at every size (``cupy.fuse``'s compiler may
    contract a multiply and an add into one FMA, so a small call on it would give other
    values than a large one here); gives None where the call does not qualify (an operand
    not an array of one shape in C order or rows, a step of mixed dtypes or a loop left
    to CuPy, anything but ufuncs and operators on the operands and Python scalars): the
    caller runs it its own way. `fn` is traced at every call, since the Python values it
    closes over may change."""

    __slots__ = ("_calls", "_cupy", "_fn", "_loops", "_name")

    def __init__(self, cupy, fn, name: str):
        self._cupy = cupy
        self._fn = fn
        self._name = name
        self._loops: dict = {}  # NumPy ufunc -> (CuPy's ufunc, its loops by dtype)
        self._calls: dict = {}  # (steps, signature) -> Call, or None

    def __call__(self, *args):
        cupy = self._cupy
        ndarray = cupy.ndarray
        if not args or any(type(a) is not ndarray for a in args):
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
            call = self._calls[key] = Call.laid_out(steps, preamble, dtypes, signature, False)
        if call is None:
            return None
        target = cupy.empty(call.shape, call.out_dtype)
        device = cupy.cuda.runtime.getDevice()
        return launch(call, [*args, *constants], target, device, self._compile)

    def launches(self) -> int:
        """How many kernels this chain has compiled."""
        return sum(len(c.kernels) for c in self._calls.values() if c is not None)

    def _compile(self, call, device: int, vector: int) -> Launch:
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


def _one_ufunc(loops: dict, preamble: str, signature: tuple, has_out: bool) -> Call | None:
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
    return Call.laid_out((step,), preamble, (dtype,) * len(ins), signature, has_out)


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
