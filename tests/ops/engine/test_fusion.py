"""`mdarray.fuse` against the unfused function and NumPy, over drawn layouts and modes."""

from types import SimpleNamespace

import numpy as np
import pytest
from _layouts import dist_pairs, spread
from hypothesis import given, strategies as st

import mdarray
from mdarray import Layout
from mdarray._backends.cpu.backend import CpuBackend
from mdarray._backends.cuda.backend import _fused
from mdarray.testing import (
    assert_chunks_hold,
    assert_dist_allclose,
    assert_dist_equal,
    strategies as mst,
)


def sin_chain(x, y):
    return np.sin(x) * 2 + y


def comparisons(x, y):
    # ~ of an array: one of x and y may be a Python scalar, never both.
    return (x > y) | (x == 0) & ~((x < -1) | (y < -1))


def integer_arithmetic(x, y):
    return x * 3 - y + np.maximum(x, y) * 2


def mixed(x, y):
    return x * 0.5 + np.abs(y) - (x > y)


def floor_chain(x, y):
    return x // 2 + y % 3 - np.floor_divide(y, 4)


# Each chain with the dtypes of its operands (drawn from), and whether NumPy gives it
# exactly (sin: NumPy's whole-array loop against its chunk loops, compared with a tolerance).
CHAINS = [
    (sin_chain, "fd", "fdil", False),
    (comparisons, "bilfd", "ilfd", True),
    (integer_arithmetic, "bBhilq", "bBhilq", True),
    (mixed, "bilfd", "Bilf", True),
    (floor_chain, "ilfd", "ilfd", True),
]


def small(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind == "u":
        return st.integers(0, 9)
    if dtype.kind == "i":
        return st.integers(-9, 9)
    return st.sampled_from([-2.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0])


@st.composite
def broadcast_shape(draw, shape):
    """A shape that broadcasts to `shape`: a suffix of it, some axes set to 1."""
    suffix = shape[draw(st.integers(0, len(shape))) :]
    return tuple(1 if draw(st.booleans()) else n for n in suffix)


@st.composite
def second_operand(draw, shape, dtypes):
    """A second operand and its NumPy value: a DistArray (broadcast shape, any layout and
    mode), a NumPy array, or a Python or NumPy scalar."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    kind = draw(st.sampled_from(["dist", "dist", "numpy", "python", "npscalar"]))
    if kind == "dist":
        other = draw(broadcast_shape(shape))
        return draw(dist_pairs(shape=other, dtype=dtype, elements=small(dtype)))
    if kind == "numpy":
        value = np.asarray(draw(st.lists(small(dtype), min_size=1, max_size=1))[0], dtype)
        value = np.broadcast_to(value, draw(broadcast_shape(shape))).copy()
        return value, value
    scalar = draw(small(dtype))
    if kind == "npscalar":
        scalar = dtype.type(scalar)
    return scalar, scalar


@given(data=st.data())
def test_fused_equals_unfused_and_numpy(data):
    fn, x_dtypes, y_dtypes, exact = data.draw(st.sampled_from(CHAINS))
    x_dtype = np.dtype(data.draw(st.sampled_from(x_dtypes)))
    x, x_value = data.draw(dist_pairs(dtype=x_dtype, elements=small(x_dtype)))
    y, y_value = data.draw(second_operand(x.shape, y_dtypes))
    if data.draw(st.booleans()):
        x, y, x_value, y_value = y, x, y_value, x_value  # the DistArray second, or only one
    fused = mdarray.fuse(fn)
    with mdarray.options(fallback="raise"):
        try:
            unfused = fn(x, y)
        except (OverflowError, TypeError) as error:  # NumPy's: -1 for a uint8, say
            with pytest.raises(type(error)):
                fused(x, y)
            return
        got = fused(x, y)
    assert got.mode is mdarray.REPLICA
    if exact or mdarray.default_backend() == "cpu":
        assert_dist_equal(got, unfused.get())
    else:
        # A GPU's fused kernel may contract a multiply and an add into one FMA, and computes
        # a host operand's sin on the device where the unfused chain used the host's.
        assert_dist_allclose(got, unfused.get(), rtol=1e-6)
    assert_chunks_hold(got, unfused.get())
    with np.errstate(over="ignore"):  # NumPy's 0-d results are scalars, which warn
        want = fn(x_value, y_value)
    if exact:
        assert_dist_equal(got, want)
    else:
        assert_dist_allclose(got, want, rtol=1e-6)


@given(data=st.data())
def test_partial_operands_are_made_replica_first(data):
    x, x_value = data.draw(dist_pairs(dtype=np.float64, mode=data.draw(mst.modes())))
    y, y_value = data.draw(dist_pairs(shape=x.shape, dtype=np.float64))
    with mdarray.options(fallback="raise"):
        got = mdarray.fuse(sin_chain)(x, y)
    assert got.mode is mdarray.REPLICA
    assert_dist_equal(got, sin_chain(x, y).get())
    assert_dist_allclose(got, sin_chain(x_value, y_value), rtol=1e-12)


def test_decorator_forms_and_wrapped():
    @mdarray.fuse
    def plain(x, y):
        return x + y

    @mdarray.fuse(kernel_name="named")
    def named(x, y):
        return x * y

    assert plain.__wrapped__(1, 2) == 3
    assert plain.__name__ == "plain"
    assert named.kernel_name == "named"
    x = mdarray.asarray(np.arange(6.0))
    assert_dist_equal(plain(x, 1.0), np.arange(6.0) + 1)
    assert_dist_equal(named(x, x), np.arange(6.0) ** 2)


def test_without_distarray_operands_the_function_is_called():
    fused = mdarray.fuse(sin_chain)
    np.testing.assert_array_equal(fused(np.zeros(3), 1.0), np.ones(3))
    assert fused(0.0, 1) == 1.0


def test_one_layout_moves_nothing():
    layout = Layout(
        (6, 4), spread({0: slice(0, 4), 1: slice(2, 6), 2: [(slice(0, 6), slice(0, 2))]})
    )
    value = np.arange(24.0).reshape(6, 4)
    x = mdarray.distributed_array(value, layout)
    y = mdarray.distributed_array(value * 2, layout)
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        z = mdarray.fuse(sin_chain)(x, y)
    assert moved.total == 0
    assert z.layout == layout
    assert_chunks_hold(z, sin_chain(x, y).get())  # the backend's sin (CuPy's differs by an ulp)
    assert_dist_allclose(z, np.sin(value) * 2 + value * 2, rtol=1e-15)


@pytest.mark.skipif(
    mdarray.default_backend() != "cpu", reason="cupy.fuse traces the function once per dtypes"
)
def test_the_function_runs_once_per_chunk_on_chunk_arrays():
    layout = Layout((8, 3), spread({0: [slice(0, 3), slice(3, 5)], 1: slice(4, 8)}))
    x = mdarray.distributed_array(np.arange(24.0).reshape(8, 3), layout)
    seen = []

    def chain(a, b):
        seen.append((isinstance(a, np.ndarray), a.shape))
        return np.sin(a) * 2 + b

    got = mdarray.fuse(chain)(x, 1.0)
    # Less the calls on empty stand-ins (dtype resolution; the cpu backend's kernel check).
    # In any order: a large call runs the chunks on the devices' threads.
    on_chunks = sorted(call for call in seen if 0 not in call[1])
    assert on_chunks == sorted((True, shape) for shape in layout.chunk_shapes)
    assert_dist_equal(got, np.sin(np.arange(24.0).reshape(8, 3)) * 2 + 1)


def test_special_values_are_the_unfused_ops():
    # The backends' kernels give the standard's special values where NumPy departs
    # (``inf // 2`` is inf): the fused chain runs the same kernels.
    value = np.array([np.inf, -np.inf, 5.0, -0.0, np.nan])
    x = mdarray.asarray(value)

    def chain(a):
        return a // 2 + a % 3 * 0

    with np.errstate(invalid="ignore"):
        got = mdarray.fuse(chain)(x)
        unfused = chain(x)
    assert_dist_equal(got, unfused.get())
    for buffer in got.storage.buffers:
        assert type(buffer) is type(x.storage.buffers[0])
    # A 0-d operand broadcast into each chunk keeps the backend's kernels too.
    scalar = mdarray.asarray(np.array(np.inf))
    zeros = mdarray.asarray(np.zeros(3))

    def after_an_op(a, b):
        return (b + a) // 2

    with np.errstate(invalid="ignore"):
        got = mdarray.fuse(after_an_op)(zeros, scalar)
        unfused = after_an_op(zeros, scalar)
    assert_dist_equal(got, unfused.get())
    np.testing.assert_array_equal(got.get(), [np.inf] * 3)


def test_identity_gives_a_fresh_array():
    x = mdarray.asarray(np.arange(4.0))
    y = mdarray.fuse(lambda a: a)(x)
    y[0] = 7.0
    assert_dist_equal(x, np.arange(4.0))


def test_functions_that_are_not_elementwise_are_refused_by_name():
    x = mdarray.asarray(np.arange(6.0))

    def total(a):
        return np.sum(a)

    with pytest.raises(TypeError, match=r"fuse\(.*total\).*elementwise"):
        mdarray.fuse(total)(x)

    def ignores_first(a, b):
        return b * 2

    y = mdarray.asarray(np.arange(6.0)[:, None] * np.ones((6, 2)))
    with pytest.raises(TypeError, match="ignores_first"):
        mdarray.fuse(ignores_first)(y, np.ones(2))
    with pytest.raises(TypeError, match="keyword"):
        mdarray.fuse(sin_chain)(x, y=1.0)


class _NumPyAsCuPy:
    """NumPy standing in for CuPy in the cuda backend's fused kernel (no GPU here):
    ``fuse`` records the function and name and returns it; other names are NumPy's."""

    def __init__(self):
        self.fused = []
        self.names = []

    def fuse(self, *, kernel_name=None):
        # As cupy.fuse: given only options, it returns the decorator.
        def decorator(fn):
            self.fused.append((fn, kernel_name))
            return fn

        return decorator

    def __getattr__(self, name):
        self.names.append(name)
        return getattr(np, name)


@pytest.mark.parametrize("fn", [sin_chain, comparisons, mixed, floor_chain])
def test_cuda_fused_kernel_runs_numpy_ufuncs_by_cupy_names(fn):
    # The cuda backend's kernel, with NumPy standing in for CuPy: CuPy's traced values take
    # only CuPy's names, so the kernel given to cupy.fuse must route np.sin and operators
    # there (`_kernels.UfuncsAs`); a chain with a fixed kernel (floor_divide) runs unfused
    # on the backend's own kernels.
    cupy = _NumPyAsCuPy()
    backend = SimpleNamespace(_cupy=cupy, ufunc_kernel=CpuBackend(1).ufunc_kernel)
    kernel = _fused(backend, fn, "named")
    assert cupy.fused[0][1] == "named"
    x = np.array([-np.inf, -2.5, 0.0, 1.0, 3.0, np.inf])
    y = np.array([1.0, 2.0, -1.0, 0.0, 3.0, 2.0])
    with np.errstate(all="ignore"):
        got = kernel(x, y)
        want = fn(mdarray.asarray(x), mdarray.asarray(y)).get()
        traced = cupy.fused[0][0](x, y)  # what cupy.fuse traces, by CuPy's names
    # On cuda `want` comes from CuPy's kernels, which may differ from NumPy's by an ulp.
    np.testing.assert_allclose(got, want, rtol=1e-15)
    assert type(traced) is np.ndarray
    assert cupy.names  # the traced call reached CuPy's names
