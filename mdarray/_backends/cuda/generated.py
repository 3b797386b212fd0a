"""The cuda backend's generated elementwise kernels: what a call's operands decide (`Call`:
the steps, each operand's kind and dtype, C order or rows), the kernel's CUDA source
(`kernel_source`: CuPy's per-element routines, vector loads and stores with a scalar tail,
or a row-by-row loop), its compilation and its launch. `elementwise` decides which calls
take them.
"""

from __future__ import annotations

from threading import get_ident

import numpy as np

# Kinds of an operand in a generated kernel.
ARRAY = "a"  # an array of the call's shape and dtype, read per element
ONE = "p"  # a one-element array, read once (a 0-d value, a packed 0-d slab)
SCALAR = "s"  # a Python scalar, passed by value in the loop's input type

_THREADS = 256
# A thread per vector step (the loop runs once): on an H100, 1 GiB float32 `add` took
# 1.055 ms so against 1.121 ms with 16 blocks per multiprocessor striding over the array.
_MAX_BLOCKS = (1 << 31) - 1  # the grid's limit; beyond it threads stride
_VECTOR_BYTES = 16  # bytes of each array operand a thread reads per step
LOAD_BYTES = 16  # the widest load, and the alignment vector steps need
_OPTIONS: tuple = ()  # NVRTC options past CuPy's own


def compile_call(cupy, name: str, call: Call, device: int, vector: int) -> Launch:
    """`call`'s kernel, compiled as `name` on `device` (CuPy's kernel cache), as its
    `Launch`."""
    from cupy._core._scalar import get_typename  # noqa: PLC0415  (CuPy's C type names)

    source = kernel_source(name, call, 0 if call.rows else vector, get_typename)
    kernel = cupy._core.core.compile_with_cache(source, _OPTIONS).get_function(name)
    units = call.size if call.rows else -(-call.size // vector)
    return Launch(cupy, kernel, max(1, min(_MAX_BLOCKS, -(-units // _THREADS))), call)


def launch(call: Call, params: list, target, device: int, compile_for):
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
    found(params, target)
    return target


class Launch:
    """One compiled kernel of a `Call` launched by the driver (``cuLaunchKernel``) on the
    current stream, its parameter block built once: a slot of 16 bytes per parameter,
    the constant ones (`Call.before`, `Call.after`) written at the start, the operands'
    pointers, the scalars' values and the output's pointer written per launch. A CuPy
    kernel call converts every argument on every launch; this writes a few words. Any
    kernel whose parameters are operands, constants, an output and constants takes it,
    given its `kinds`, `dtypes`, `before` and `after` as a `Call` has them.

    The driver copies the parameters when the launch is queued, so a block may be
    rewritten at once; each thread writes its own (`get_ident`). Arrays may be given by
    their pointers (a device block inside a slab, with no CuPy view made for it)."""

    __slots__ = (
        "_blocks",
        "_call",
        "_function",
        "_grid",
        "_launch",
        "_stream",
        "_threads",
        "kernel",
    )

    def __init__(self, cupy, kernel, grid: int, call, threads: int = _THREADS) -> None:
        self.kernel = kernel  # (it holds the module the function lives in)
        self._function = kernel.ptr
        self._grid, self._threads = grid, threads
        self._call = call
        self._launch = cupy.cuda.driver.launchKernel
        self._stream = cupy.cuda.get_current_stream
        self._blocks: dict = {}

    def _block(self) -> tuple:
        """This thread's parameter block: ``(words, scalar slots, address, kept)``."""
        call = self._call
        count = len(call.kinds) + len(call.before) + 1 + len(call.after)
        memory = np.zeros(16 * count, np.uint8)
        words = memory.view(np.uint64)
        slots = [
            memory[16 * i : 16 * i + dtype.itemsize].view(dtype) if kind is SCALAR else None
            for i, (kind, dtype) in enumerate(zip(call.kinds, call.dtypes))
        ]
        first = len(call.kinds)
        fixed = [*call.before, None, *call.after]
        for i, value in enumerate(fixed, first):
            if value is not None:
                memory[16 * i : 16 * i + value.dtype.itemsize].view(value.dtype)[0] = value
        base = memory.ctypes.data
        pointers = np.array([base + 16 * i for i in range(count)], np.uint64)
        block = (words, slots, pointers.ctypes.data, (memory, pointers), first + len(call.before))
        self._blocks[get_ident()] = block
        return block

    def __call__(self, params, target) -> None:
        """Launch on `params` (arrays, or their pointers; scalars) into `target` (an
        array or its pointer)."""
        block = self._blocks.get(get_ident()) or self._block()
        words, slots, address, _, out = block
        for i, value in enumerate(params):
            slot = slots[i]
            if slot is None:
                words[2 * i] = value if type(value) is int else value.data.ptr
            else:
                slot[0] = value
        words[2 * out] = target if type(target) is int else target.data.ptr
        self._launch(self._function, self._grid, 1, 1, self._threads, 1, 1, 0, self._stream().ptr,
                     address, 0)  # fmt: skip


class Step:
    """One ufunc of a kernel: CuPy's per-element `routine` (on ``in0`` ... and ``out0``)
    of the loop taking `dtype` to `out_dtype`, reading the values named `ins` (``a<i>``:
    the kernel's operand i; ``t<j>``: step j's result)."""

    __slots__ = ("dtype", "ins", "out_dtype", "routine")

    def __init__(self, routine: str, ins: tuple, dtype: np.dtype, out_dtype: np.dtype) -> None:
        self.routine, self.ins, self.dtype, self.out_dtype = routine, ins, dtype, out_dtype

    def key(self) -> tuple:
        return (self.routine, self.ins, self.dtype, self.out_dtype)


class Call:
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
    def laid_out(
        cls, steps: tuple, preamble: str, dtypes: tuple, signature: tuple, has_out: bool
    ) -> Call | None:
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
            if kind is ARRAY and a.data.ptr % min(LOAD_BYTES, a.itemsize * width):
                return False
        return not target.data.ptr % min(LOAD_BYTES, target.itemsize * width)

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


def kernel_source(name: str, call: Call, vector: int, typename) -> str:
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
        "template <typename T, int N> struct alignas(sizeof(T) * N < "
        f"{LOAD_BYTES} ? sizeof(T) * N : {LOAD_BYTES}) mdarray_pack {{ T v[N]; }};"
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
