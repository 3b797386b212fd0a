"""Every NumPy ufunc's ``__call__`` against NumPy, and the array API elementwise names.

The ufuncs are enumerated from ``numpy`` at test time (`UFUNCS`), so a ufunc NumPy adds is
tested (and `tests/core/test_registry.py` checks the list is complete).
"""

import inspect

import numpy as np
import pytest
from _backend_facts import ulps, without_kernel_differences
from _layouts import device, devices, dist_pairs, distinct, spread
from hypothesis import assume, example, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import mdarray
from mdarray import Layout
from mdarray._ops.elementwise import elementwise_functions
from mdarray.testing import (
    assert_chunks_hold,
    assert_dist_allclose,
    assert_dist_equal,
    strategies as mst,
)

UFUNCS = sorted({u for u in vars(np).values() if isinstance(u, np.ufunc)}, key=lambda u: u.__name__)
# The array API's elementwise functions, as their module defines them (``mdarray.<name>``).
ARRAY_API_NAMES = sorted(
    name
    for name, f in vars(elementwise_functions).items()
    if inspect.isfunction(f) and f.__module__ == "mdarray" and not name.startswith("_")
)
ELEMENTWISE = [u for u in UFUNCS if u.signature is None]
GUFUNCS = [u for u in UFUNCS if u.signature is not None]
# dtypes the tests draw: what NumPy and CuPy both have (no float16 on every op in CuPy).
TYPECODES = "?bBhHiIlLqQfdFD"


def small_elements(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind == "u":
        return st.integers(0, 9)
    if dtype.kind == "i":
        return st.integers(-9, 9)
    if dtype.kind == "f":
        return st.sampled_from([-2.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 7.0])
    return st.builds(complex, st.integers(-3, 3), st.integers(-3, 3))


def input_dtypes(ufunc):
    """Mostly one of the ufunc's own loops, sometimes any dtypes (NumPy may reject them)."""
    loops = [t.split("->")[0] for t in ufunc.types if all(c in TYPECODES for c in t[: ufunc.nin])]
    own = st.sampled_from(loops).map(lambda t: [np.dtype(c) for c in t]) if loops else st.nothing()
    anything = st.lists(mst.dtypes(), min_size=ufunc.nin, max_size=ufunc.nin)
    return st.one_of(own, own, own, anything)


@st.composite
def operand(draw, shape, dtype, *, dist=False):
    """An operand of `dtype` and `shape` and its NumPy value: a DistArray (any layout and
    mode), a NumPy array, or a Python or NumPy scalar (shape ())."""
    kind = (
        "dist" if dist else draw(st.sampled_from(["dist", "dist", "numpy", "python", "npscalar"]))
    )
    if kind == "dist":
        return draw(dist_pairs(shape=shape, dtype=dtype, elements=small_elements(dtype)))
    if kind == "numpy":
        value = draw(hnp.arrays(dtype, shape, elements=small_elements(dtype)))
        return value, value
    scalar = draw(small_elements(dtype))
    if kind == "npscalar":
        scalar = dtype.type(scalar)
        return scalar, scalar
    return scalar, scalar


@st.composite
def ufunc_calls(draw, ufunc):
    """``(operands, values, kwargs, expected_kwargs)`` for one call of `ufunc`."""
    dtypes = draw(input_dtypes(ufunc))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=ufunc.nin, max_dims=3, max_side=4))
    pairs = [
        draw(operand(shape, dtype, dist=k == 0))
        for k, (shape, dtype) in enumerate(zip(shapes.input_shapes, dtypes))
    ]
    order = draw(st.permutations(range(ufunc.nin)))
    operands = [pairs[k][0] for k in order]
    values = [pairs[k][1] for k in order]
    return operands, values


def numpy_result(ufunc, values, **kwargs):
    with np.errstate(all="ignore"):
        try:
            return ufunc(*values, **kwargs), None
        except Exception as error:  # NumPy rejects the combination: so must we
            return None, error


def as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


def check_same(got, want):
    for g, w in zip(as_tuple(got), as_tuple(want)):
        assert isinstance(g, mdarray.DistArray)
        expected = np.asarray(w)
        if ulps(expected.dtype)["rtol"]:
            assert_dist_allclose(g, expected, **ulps(expected.dtype))
        else:
            assert_dist_equal(g, expected)


def loop_values(ufunc, typecodes):
    """Fixed values for one loop: small, inside most domains, an exact float zero."""
    base = [
        np.array([[0.5, 1.0, 2.0], [3.0, 0.0, 0.25]]),
        np.array([2.0, 1.0, 0.5]),
        np.array([[1.0], [3.0]]),
    ]
    return [v.astype(np.dtype(c)) for v, c in zip(base, typecodes)]


LAYOUT = Layout((2, 3), spread({0: (0,), 1: [(1, slice(0, 2)), (slice(0, 2), slice(1, 3))]}))


@pytest.mark.parametrize("ufunc", ELEMENTWISE, ids=lambda u: u.__name__)
def test_every_ufunc_against_numpy(ufunc):
    """Each of the ufunc's loops (of the tested dtypes) on fixed values: a DistArray in a
    partial mode, one of another layout, a NumPy array; then into ``out`` under ``where``."""
    loops = {t[: ufunc.nin] for t in ufunc.types if all(c in TYPECODES for c in t[: ufunc.nin])}
    assert loops or ufunc is np.isnat  # isnat has only datetime loops
    for typecodes in sorted(loops):
        values = without_kernel_differences(ufunc, loop_values(ufunc, typecodes))
        mode = mdarray.SUM if values[0].dtype.kind != "b" else mdarray.MAX
        operands = [mdarray.distributed_array(values[0], LAYOUT, mode)]
        if ufunc.nin > 1:
            layout = Layout.block(values[1].shape, devices=devices(2, 3))
            operands.append(mdarray.distributed_array(values[1], layout))
        operands += values[2:]
        want, error = numpy_result(ufunc, values)
        with mdarray.options(fallback="raise"), np.errstate(all="ignore"):
            if error is not None:
                with pytest.raises(type(error)):
                    ufunc(*operands)
                continue
            check_same(ufunc(*operands), want)
            mask = np.array([True, False, True])
            outs = tuple(mdarray.zeros(w.shape, dtype=w.dtype) for w in as_tuple(want))
            twins = tuple(np.zeros(w.shape, w.dtype) for w in as_tuple(want))
            got = ufunc(*operands, out=outs, where=mask)
            numpy_result(ufunc, values, out=twins, where=mask)
            check_same(got, twins if ufunc.nout > 1 else twins[0])


@settings(max_examples=150)
@given(ufunc=st.sampled_from(ELEMENTWISE), data=st.data())
def test_ufuncs_match_numpy(ufunc, data):
    operands, values = data.draw(ufunc_calls(ufunc))
    kept = without_kernel_differences(ufunc, values)
    assume(all(a is b for a, b in zip(kept, values)))  # no input where CuPy differs by design
    want, error = numpy_result(ufunc, values)
    with mdarray.options(fallback="raise"), np.errstate(all="ignore"):
        if error is not None:
            with pytest.raises(type(error)):
                ufunc(*operands)
            return
        got = ufunc(*operands)
    check_same(got, want)


@st.composite
def outputs(draw, ufunc, shape, dtypes):
    """``out`` DistArrays of the result's shape: dtypes as NumPy's or another one (a cast
    NumPy may reject), any layout and mode; and their NumPy twins."""
    outs, twins = [], []
    for numpy_dtype in dtypes:
        dtype = draw(st.one_of(st.just(numpy_dtype), mst.dtypes(complex_=False)))
        x, value = draw(dist_pairs(shape=shape, dtype=dtype, elements=small_elements(dtype)))
        outs.append(x)
        twins.append(value.copy())
    return tuple(outs), tuple(twins)


@settings(max_examples=80)
@given(ufunc=st.sampled_from(ELEMENTWISE), data=st.data())
def test_ufuncs_out_and_where(ufunc, data):
    operands, values = data.draw(ufunc_calls(ufunc))
    kept = without_kernel_differences(ufunc, values)
    assume(all(a is b for a, b in zip(kept, values)))  # no input where CuPy differs by design
    want, error = numpy_result(ufunc, values)
    if error is not None:
        return
    want = as_tuple(want)
    shape = want[0].shape
    outs, twins = data.draw(outputs(ufunc, shape, [w.dtype for w in want]))
    kwargs, twin_kwargs = {}, {}
    if data.draw(st.booleans(), label="where"):
        mask_shape = data.draw(hnp.broadcastable_shapes(shape, max_dims=len(shape)))
        mask, mask_value = data.draw(operand(mask_shape, np.dtype(bool)))
        kwargs["where"], twin_kwargs["where"] = mask, mask_value
    before = [o.get() for o in outs]
    _expected, error = numpy_result(ufunc, values, out=twins, **twin_kwargs)
    with mdarray.options(fallback="raise"), np.errstate(all="ignore"):
        if error is not None:
            with pytest.raises(type(error)):
                ufunc(*operands, out=outs, **kwargs)
            for o, old in zip(outs, before):  # a failed op changes nothing
                assert_dist_equal(o, old)
            return
        got = ufunc(*operands, out=outs, **kwargs)
    layouts = [o.layout for o in outs]
    assert all(g is o for g, o in zip(as_tuple(got), outs))
    for o, layout in zip(outs, layouts):
        assert o.layout == layout
    # Inexact results within a few ulps on CUDA (CuPy's math library rounds differently,
    # e.g. arcsinh), as for the calls without ``out``; exact elsewhere.
    check_same(outs, twins)


@pytest.mark.parametrize("dtype", ["float32", "int16", "complex128", "bool"])
@given(data=st.data())
@settings(max_examples=10)
def test_dtype_and_casting_keywords(dtype, data):
    target = data.draw(mst.dtypes())
    elements = small_elements(dtype)
    if np.dtype(target).kind == "u" and np.dtype(dtype).kind in "fc":
        # A negative float cast to an unsigned int is undefined in C; NumPy and CuPy differ.
        elements = elements.map(abs)
    x, value = data.draw(dist_pairs(dtype=dtype, elements=elements))
    casting = data.draw(st.sampled_from(["no", "equiv", "safe", "same_kind", "unsafe"]))
    want, error = numpy_result(np.add, [value, value], dtype=target, casting=casting)
    with mdarray.options(fallback="raise"), np.errstate(all="ignore"):
        if error is not None:
            with pytest.raises(type(error)):
                np.add(x, x, dtype=target, casting=casting)
            return
        check_same(np.add(x, x, dtype=target, casting=casting), want)


def test_two_output_ufuncs():
    layout = Layout((2, 3), spread({0: (0,), 1: [(1, slice(0, 2)), (1, slice(2, 3))]}))
    value = np.array([[1.5, -2.25, 3.0], [7.0, -0.5, 10.0]])
    x = mdarray.distributed_array(value, layout)
    with mdarray.options(fallback="raise"):
        for ufunc in (np.divmod, np.modf, np.frexp):
            args = (x, 2.0) if ufunc.nin == 2 else (x,)
            check_same(ufunc(*args), ufunc(*(value, 2.0)[: ufunc.nin]))
        q, r = divmod(x, 2)
        check_same((q, r), divmod(value, 2))
        out = mdarray.zeros((2, 3))
        quotient, remainder = np.divmod(x, 2.0, out=(None, out))
        assert remainder is out
        check_same((quotient, out), np.divmod(value, 2.0))


def test_result_layout_is_the_first_operand_of_the_output_shape():
    a = mdarray.distributed_array(np.arange(4.0), Layout.block((4,), devices=devices(0, 1)))
    b = mdarray.distributed_array(np.ones((3, 4)), Layout.block((3, 4), axis=1, devices=devices(1)))
    c = mdarray.distributed_array(
        np.ones((3, 4)), Layout.replicated((3, 4), devices=distinct(0, 1))
    )
    with mdarray.options(fallback="raise"):
        assert (a + b).layout == b.layout
        assert np.add(a, c).layout == c.layout
        assert (c + b).layout == c.layout
        assert (a * 2).layout == a.layout
        scalar_only = np.add(mdarray.distributed_array(1.0, {0: ()}), a)
        assert scalar_only.layout == a.layout


def test_same_layout_moves_nothing_and_replicas_are_all_written():
    layout = Layout(
        (6, 4), spread({0: slice(0, 4), 1: slice(2, 6), 2: [(slice(0, 6), slice(0, 2))]})
    )
    value = np.arange(24.0).reshape(6, 4)
    x = mdarray.distributed_array(value, layout)
    y = mdarray.distributed_array(value * 2, layout)
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        z = x * y + 1
        x += y
        np.negative(y, out=y)
    assert moved.total == 0
    assert_chunks_hold(z, value * value * 2 + 1)
    assert_chunks_hold(x, value * 3)
    assert_chunks_hold(y, -value * 2)


def test_out_keeps_its_layout_and_mode():
    x = mdarray.distributed_array(np.arange(6.0), Layout.block((6,), devices=devices(0, 1)))
    out_layout = Layout((6,), spread({2: slice(0, 4), 3: slice(3, 6)}))
    out = mdarray.distributed_array(np.zeros(6), out_layout, mode="sum")
    with mdarray.options(fallback="raise"):
        result = np.multiply(x, 3, out=out)
    assert result is out
    assert out.layout == out_layout
    assert out.mode is mdarray.SUM
    assert_dist_equal(out, np.arange(6.0) * 3)
    host = np.zeros(6, np.float32)
    with mdarray.options(fallback="raise"):
        assert np.add(x, 1, out=host) is host
    np.testing.assert_array_equal(host, np.arange(6.0) + 1)


def test_in_place_cast_errors_leave_the_array_unchanged():
    layout = Layout((5,), spread({0: slice(0, 3), 1: slice(2, 5)}))
    x = mdarray.distributed_array(np.arange(5, dtype=np.int32), layout)
    chunks = [c.copy() for c in x.storage.buffers]
    host = np.arange(5, dtype=np.int32)
    with pytest.raises(TypeError) as numpy_error:
        host += 1.5
    with pytest.raises(type(numpy_error.value), match="Cannot cast ufunc 'add' output"):
        x += 1.5
    for old, new in zip(chunks, x.storage.buffers):
        assert (old == new).all()
    with pytest.raises(OverflowError):
        mdarray.distributed_array(np.arange(3, dtype=np.uint8), {0: ()}) + 300


def test_where_scalar_and_mask_kinds():
    x = mdarray.distributed_array(np.arange(6.0), Layout.block((6,), devices=devices(0, 1, 2)))
    out = mdarray.distributed_array(np.full(6, -1.0), Layout.block((6,), devices=devices(3)))
    with mdarray.options(fallback="raise"):
        np.add(x, 1, out=out, where=False)
        assert_dist_equal(out, np.full(6, -1.0))
        np.add(x, 1, out=out, where=np.True_)
        assert_dist_equal(out, np.arange(6.0) + 1)
        mask = mdarray.distributed_array(np.arange(6) % 2 == 0, {device(1): ()}, mode="max")
        np.subtract(x, 1, out=out, where=mask)
        assert_dist_equal(out, np.array([-1.0, 2, 1, 4, 3, 6]))
        with pytest.raises(TypeError):
            np.add(x, 1, out=out, where=np.arange(6))


def test_operands_of_every_kind():
    layout = Layout.block((2, 3), devices=devices(0, 1))
    value = np.arange(6.0).reshape(2, 3)
    x = mdarray.distributed_array(value, layout)
    with mdarray.options(fallback="raise"):
        check_same(np.add(x, [1, 2, 3]), np.add(value, [1, 2, 3]))
        check_same(np.add(np.float32(2), x), np.float32(2) + value)
        check_same(np.add(np.array(2, np.float32), x), np.array(2, np.float32) + value)
        check_same(np.arange(3) + x, np.arange(3) + value)
        check_same(np.float32(1) + x.astype(np.float32), np.float32(1) + value.astype(np.float32))
        with pytest.raises(ValueError, match="cannot be broadcast"):
            x + np.ones(4)
        with pytest.raises(ValueError, match="non-broadcastable output operand"):
            np.add(x, 1, out=mdarray.zeros((3,)))


def test_gufuncs_without_an_implementation_fall_back():
    matrix, vector = np.arange(6.0).reshape(2, 3), np.arange(3.0)
    calls = {
        "matmul": (matrix, matrix.T),
        "matvec": (matrix, vector),
        "vecdot": (matrix, vector),
        "vecmat": (vector[:2], matrix),
    }
    assert set(calls) == {g.__name__ for g in GUFUNCS}
    for gufunc in GUFUNCS:
        if (gufunc, "__call__") in mdarray._core.registry.UFUNC_OVERRIDES:
            continue  # an implementation of its own, tested with its module
        values = calls[gufunc.__name__]
        args = [
            mdarray.distributed_array(v, Layout.block(v.shape, devices=devices(0, 1)))
            for v in values
        ]
        with mdarray.options(fallback="raise"), pytest.raises(TypeError):
            gufunc(*args)
        with mdarray.options(fallback="allow"):
            check_same(gufunc(*args), gufunc(*values))


def test_signature_keyword_falls_back():
    x = mdarray.distributed_array(np.arange(4.0), {0: ()})
    with mdarray.options(fallback="allow"):
        assert_dist_equal(np.add(x, x, signature=("d", "d", "d")), np.arange(4.0) * 2)
    with pytest.raises(TypeError):
        np.add(x, x, bogus=1)


# The array API's names -------------------------------------------------------------


def test_the_array_api_names_are_all_there():
    assert len(ARRAY_API_NAMES) == 67  # 63 ufuncs, and clip, imag, real, round


@pytest.mark.parametrize("name", ARRAY_API_NAMES)
def test_array_api_names(name):
    func = getattr(mdarray, name)
    assert name in mdarray.__all__
    assert func is getattr(elementwise_functions, name)  # no wrapper: the ufunc keeps groups
    # NumPy 2 has the array API's names too (``np.acos is np.arccos``): each calls that.
    reference = getattr(np, name)
    assert f"``numpy.{reference.__name__}``" in func.__doc__
    values = np.array([0.25, 0.5, 1.5, 2.0])
    if isinstance(reference, np.ufunc):
        if not any(t[0] in "fd" for t in reference.types):
            values = (
                np.array([1, 2, 3, 4]) if any(t[0] in "il" for t in reference.types) else values > 1
            )
        args = [values] * reference.nin
    else:
        args = [values, 0.3, 1.6] if name == "clip" else [values + 1j]
    x = mdarray.distributed_array(args[0], Layout.block((4,), devices=devices(0, 1)))
    with mdarray.options(fallback="raise"), np.errstate(all="ignore"):
        got = func(x, *args[1:]) if len(args) > 1 and name == "clip" else func(*[x] * len(args))
        want = reference(*args)
    check_same(got, want)


@example(mode="sum")
@given(mode=mst.modes(np.float64))
@settings(max_examples=10)
def test_round_clip_real_imag(mode):
    value = np.array([[0.26, -1.5, 3.75], [2.5, 0.0, -7.125]])
    x = mdarray.distributed_array(
        value, Layout((2, 3), spread({0: (0,), 1: (), 2: (1, slice(1, 3))})), mode
    )
    with mdarray.options(fallback="raise"):
        check_same(mdarray.round(x, 1), np.round(value, 1))
        check_same(np.around(x), np.around(value))
        check_same(mdarray.clip(x, -1, 1), np.clip(value, -1, 1))
        check_same(np.clip(x, None, 1), np.clip(value, None, 1))
        check_same(np.clip(x, min=0), np.clip(value, min=0))
        check_same(mdarray.real(x * 1j), np.zeros_like(value))
        check_same(mdarray.imag(x * 1j), value)
        check_same(np.imag(x), np.zeros_like(value))
        out = mdarray.zeros((2, 3))
        assert np.round(x, 0, out=out) is out
        check_same(out, np.round(value))


# CuPy entry points: real CuPy on the cuda backend, fake kernels everywhere -------------


class ufunc:  # CuPy's class name, which the hook recognizes
    """A stand-in for a CuPy ufunc: named ``cupy_<numpy name>``."""

    def __init__(self, name, nin, nout=1):
        self.name, self.nin, self.nout = f"cupy_{name}", nin, nout


class AxpyKernel:
    """A stand-in for a user's ElementwiseKernel ``z = 2 * x + y``."""

    name, nin, nout, params = "axpy", 2, 1, ()

    def __call__(self, x, y, z=None):
        result = 2 * x + y
        if z is None:
            return result
        z[...] = result
        return z


def test_cupy_hook_with_stand_in_kernels():
    layout = Layout((5,), spread({0: slice(0, 3), 1: slice(2, 5)}))
    x = mdarray.distributed_array(np.arange(5.0), layout)
    y = mdarray.distributed_array(np.ones(5), Layout.block((5,), devices=devices(2, 3)))
    with mdarray.options(fallback="raise"):
        check_same(
            x.__cupy_override_elementwise_kernel__(ufunc("cos", 1), x), np.cos(np.arange(5.0))
        )
        out = mdarray.zeros(5)
        got = x.__cupy_override_elementwise_kernel__(ufunc("add", 2), x, 1, out)
        assert got is out
        check_same(out, np.arange(5.0) + 1)
        check_same(
            x.__cupy_override_elementwise_kernel__(AxpyKernel(), x, y), 2 * np.arange(5.0) + 1
        )
        z = mdarray.distributed_array(np.zeros(5), layout)
        assert x.__cupy_override_elementwise_kernel__(AxpyKernel(), x, y, z) is z
        assert_chunks_hold(z, 2 * np.arange(5.0) + 1)
        with pytest.raises(TypeError):
            x.__cupy_override_elementwise_kernel__(AxpyKernel(), x, y, size=5)


@pytest.fixture
def cupy():
    cupy = pytest.importorskip("cupy")
    if mdarray.default_backend() != "cuda":
        pytest.skip("needs MDARRAY_BACKEND=cuda")
    return cupy


def test_cupy_functions_and_kernels_return_distarrays(cupy):
    devices = mdarray.devices()
    value = np.arange(12.0).reshape(3, 4)
    x = mdarray.distributed_array(value, Layout.block((3, 4), devices=devices))
    with mdarray.options(fallback="raise"):
        check_same(cupy.cos(x), np.cos(value))
        check_same(cupy.add(x, 1), value + 1)
        check_same(x + cupy.arange(4.0), value + np.arange(4.0))
        check_same(cupy.arange(4.0) + x, value + np.arange(4.0))
        check_same(cupy.divmod(x, 3.0), np.divmod(value, 3.0))
        kernel = cupy.ElementwiseKernel("T x, T y", "T z", "z = 2 * x + y", "axpy")
        check_same(kernel(x, x), 3 * value)
        out = mdarray.zeros((3, 4))
        assert kernel(x, x, out) is out
        check_same(out, 3 * value)
        device_out = cupy.zeros((3, 4))
        np.add(x, 1, out=device_out)
        np.testing.assert_array_equal(device_out.get(), value + 1)


def test_clip_has_the_standards_signature():
    import inspect  # noqa: PLC0415

    params = inspect.signature(mdarray.clip).parameters
    assert [(p.name, p.kind) for p in params.values()] == [
        ("x", inspect.Parameter.POSITIONAL_ONLY),
        ("min", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        ("max", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    ]
    x = mdarray.asarray(np.arange(5.0))
    np.testing.assert_array_equal(
        mdarray.clip(x, min=1, max=3).get(), np.clip(np.arange(5.0), 1, 3)
    )
