"""The cuda backend's launches by the driver (`mdarray._backends.cuda.generated.Launch`):
the parameter block a launch hands to ``cuLaunchKernel`` holds each operand's pointer,
each scalar's value in its loop's type and the kernel's constants, in the kernel's
order. Read here through a stand-in driver that records the block, so it runs without a
GPU; the kernels' values on a GPU are `test_cuda_elementwise`'s.
"""

import ctypes
import threading
from types import SimpleNamespace

import numpy as np
import pytest

from mdarray._backends.cuda.elementwise import Bound
from mdarray._backends.cuda.generated import SCALAR, Call, Launch, Step


class _Memory:
    def __init__(self, ptr):
        self.ptr = ptr


class _Array:
    """A device array as a launch reads it: its pointer."""

    def __init__(self, ptr):
        self.data = _Memory(ptr)


class _Driver:
    """``launchKernel`` that copies out each parameter it is handed, as the driver does
    when it queues a launch."""

    def __init__(self, sizes):
        self.sizes = sizes  # bytes per parameter, in the kernel's order
        self.launches = []

    def launchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        pointers = (ctypes.c_void_p * len(self.sizes)).from_address(params)
        values = [ctypes.string_at(p, n) for p, n in zip(pointers, self.sizes)]
        self.launches.append(((function, gx, gy, gz, bx, by, bz, shared, stream, extra), values))


def _cupy(driver):
    stream = SimpleNamespace(ptr=77)
    cuda = SimpleNamespace(driver=driver, get_current_stream=lambda: stream)
    return SimpleNamespace(cuda=cuda)


def _call(kinds, dtypes, before=(), after=()):
    call = Call()
    call.kinds, call.dtypes = tuple(kinds), tuple(np.dtype(d) for d in dtypes)
    call.before, call.after = tuple(before), tuple(after)
    call.steps = (Step("out0 = in0", ("a0",), call.dtypes[0], call.dtypes[0]),)
    return call


def _word(value: int) -> bytes:
    return int(value).to_bytes(8, "little")


def test_operands_output_and_size_take_their_slots_in_order():
    call = _call(["a", "a"], [np.float32, np.float32], after=(np.int64(1003),))
    driver = _Driver([8, 8, 8, 8])
    launch = Launch(_cupy(driver), SimpleNamespace(ptr=5), 4, call)
    launch([_Array(0x1000), _Array(0x2000)], _Array(0x3000))
    launch([_Array(0x4000), _Array(0x5000)], _Array(0x6000))
    (head, first), (_, second) = driver.launches
    assert head == (5, 4, 1, 1, 256, 1, 1, 0, 77, 0)
    assert first == [_word(0x1000), _word(0x2000), _word(0x3000), _word(1003)]
    assert second == [_word(0x4000), _word(0x5000), _word(0x6000), _word(1003)]


@pytest.mark.parametrize(
    ("dtype", "value"),
    [(np.float32, 2.5), (np.float64, -1.25), (np.int8, -3), (np.bool_, True),
     (np.complex128, 1 - 2j), (np.float16, 0.5)],
)  # fmt: skip
def test_scalars_are_passed_by_value_in_their_loop_type(dtype, value):
    call = _call(["a", SCALAR], [dtype, dtype], after=(np.int64(8),))
    size = np.dtype(dtype).itemsize
    driver = _Driver([8, size, 8, 8])
    launch = Launch(_cupy(driver), SimpleNamespace(ptr=1), 1, call)
    for v in (value, np.zeros((), dtype)[()]):
        launch([_Array(0x10), np.dtype(dtype).type(v)], _Array(0x20))
    (_, values), (_, zeros) = driver.launches
    assert values == [_word(0x10), np.dtype(dtype).type(value).tobytes(), _word(0x20), _word(8)]
    assert zeros[1] == bytes(size)


def test_a_rows_kernel_takes_its_steps_before_the_output_and_its_extents_after():
    call = _call(
        ["a", "p"],
        [np.float64, np.float64],
        before=(np.int64(70),),
        after=(np.int64(64), np.int64(9), np.int64(60), np.uint64(0)),
    )
    driver = _Driver([8] * 8)
    Launch(_cupy(driver), SimpleNamespace(ptr=1), 3, call)(
        [_Array(0x40), _Array(0x80)], _Array(0xC0)
    )
    values = driver.launches[0][1]
    assert values == [_word(v) for v in (0x40, 0x80, 70, 0xC0, 64, 9, 60, 0)]


def test_each_thread_writes_its_own_block():
    call = _call(["a"], [np.float32], after=(np.int64(4),))
    driver = _Driver([8, 8, 8])
    launch = Launch(_cupy(driver), SimpleNamespace(ptr=1), 1, call)
    launch([_Array(0x100)], _Array(0x200))
    other = threading.Thread(target=launch, args=([_Array(0x300)], _Array(0x400)))
    other.start()
    other.join()
    launch([_Array(0x500)], _Array(0x600))
    assert [v for _, v in driver.launches] == [
        [_word(0x100), _word(0x200), _word(4)],
        [_word(0x300), _word(0x400), _word(4)],
        [_word(0x500), _word(0x600), _word(4)],
    ]
    assert len(launch._blocks) == 2


class _Slab(_Array):
    def __init__(self, ptr, shape=(1003,), strides=(4,)):
        super().__init__(ptr)
        self.shape, self.strides, self.itemsize = shape, strides, 4


class _Owner:
    """An `Elementwise` as a `Bound` uses it: its own way of calling (recorded), its
    scalars' loop type, CuPy's allocation and arrays, and its compiled launches
    (recorded)."""

    def __init__(self):
        self.own, self.launched, self.allocated = [], [], 0
        self._cupy = SimpleNamespace(cuda=SimpleNamespace(alloc=self._alloc))

    def _alloc(self, nbytes):
        self.allocated += 1
        return _Memory(0x9000 + 0x1000 * self.allocated)

    def _ndarray(self, shape, dtype, memory):
        out = _Slab(memory.ptr, shape)
        out.data = memory
        return out

    def __call__(self, *args, out=None):
        self.own.append(args)
        return "own"

    def _as_loop_type(self, dtype, value):
        return None if value > 100 else dtype.type(value)

    def _device(self):
        return 0

    def _compile(self, call, device, vector):
        return lambda params, target: self.launched.append((vector, params, target))


def _binary(routine: str, dtype, signature: tuple, has_out: bool) -> Call:
    """The laid-out call of one binary `routine` on operands of `dtype` and `signature`."""
    dtype = np.dtype(dtype)
    step = Step(routine, ("a0", "a1"), dtype, dtype)
    return Call.laid_out((step,), "", (dtype, dtype), signature, has_out)


def test_a_bound_launch_checks_its_arrays_and_scalars():
    call = _binary(
        "out0 = in0 * in1", np.float32, ((np.dtype(np.float32), (1003,), (4,)), float), False
    )
    owner = _Owner()
    bound = Bound(owner, call, (_Slab(0x100), 2.0))
    got = bound(_Slab(0x200), 3.0)
    vector, params, target = owner.launched[-1]
    assert (vector, params, target) == (4, [0x200, np.float32(3.0)], got.data.ptr)
    bound(_Slab(0x204), 3.0)  # not on a 16-byte boundary: one element per step
    assert owner.launched[-1][0] == 1
    for args in [
        (_Slab(0x300, (500,)), 3.0),
        (_Slab(0x300, strides=(8,)), 3.0),
        (_Slab(0x300), 500),
    ]:
        assert bound(*args) == "own"
        assert owner.own[-1] == args
    assert len(owner.launched) == 2


def test_a_bound_launch_into_memory_by_pointer():
    f32 = np.dtype(np.float32)
    rows = ((f32, (7, 8), (40, 4)), (f32, (7, 8), (32, 4)), (f32, (7, 8), (40, 4)))
    call = _binary("out0 = in0 - in1", f32, rows, True)  # rows of wider slabs, into rows
    owner = _Owner()
    bound = Bound(owner, call, (_Slab(0x100, (7, 8), (40, 4)), _Slab(0x400, (7, 8), (32, 4))))
    assert bound.into([0x1028, 0x2000], 0x1028)
    assert owner.launched[-1] == (0, [0x1028, 0x2000], 0x1028)  # rows: the rows kernel
    assert bound.dtype == np.float32
    flat = bound.slab()
    assert flat.shape == (56,)
    assert owner.allocated == 1


def test_a_bound_launch_by_pointer_checks_its_scalars():
    call = _binary("out0 = in0 + in1", np.int8, ((np.dtype(np.int8), (64,), (1,)), int), False)
    owner = _Owner()
    bound = Bound(owner, call, (_Slab(0x100, (64,), (1,)), 3))
    assert not bound.into([0x200, 500], 0x300)  # the stand-in's loop type holds up to 100
    assert owner.launched == []
    assert bound.into([0x200, 7], 0x300)
    assert owner.launched[-1] == (16, [0x200, np.int8(7)], 0x300)


def test_a_launch_takes_pointers_as_well_as_arrays():
    call = _call(["a", "a"], [np.float32, np.float32], after=(np.int64(9),))
    driver = _Driver([8, 8, 8, 8])
    launch = Launch(_cupy(driver), SimpleNamespace(ptr=5), 1, call)
    launch([0x1000, _Array(0x2000)], 0x3000)
    assert driver.launches[0][1] == [_word(0x1000), _word(0x2000), _word(0x3000), _word(9)]
