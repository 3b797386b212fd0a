"""Products, norms, statistics and comparisons across processes, on the native path:
``tensordot``, ``dot``, ``inner``, ``vdot``, ``outer``, ``einsum``, ``vecdot``/``matvec``/
``vecmat``, the ``linalg`` products and norms, ``round``/``real``/``imag``, ``average``,
``ptp``, ``cov``, ``corrcoef``, ``isclose``, ``allclose``, ``array_equal``,
``array_equiv`` and ``isin``. Each case is one function of two arrays that NumPy and
DistArrays both take, run with ``fallback="raise"`` and compared with NumPy."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import mdarray
from mdarray.testing import strategies as mst

from ._spmd import check_value, everywhere, run
from .test_spmd_operations import layouts, value

# name -> function of two arrays of shape (6, 5), the same code for NumPy and DistArrays.
CASES = {
    "tensordot": lambda x, y: np.tensordot(x, y, axes=([0], [0])),
    "tensordot 2": np.tensordot,
    "dot": lambda x, y: np.dot(x, y.T),
    "dot vectors": lambda x, y: np.dot(x[0], y[1]),
    "dot matrix vector": lambda x, y: np.dot(x, y[2]),
    "inner": np.inner,
    "vdot": np.vdot,
    "outer": lambda x, y: np.outer(x[:, 0], y[1]),
    "einsum rows": lambda x, y: np.einsum("ij,ij->i", x, y),
    "einsum product": lambda x, y: np.einsum("ij,kj->ik", x, y),
    "einsum sum": lambda x, y: np.einsum("ij->j", x + y),
    "einsum chain": lambda x, y: np.einsum("ij,kj,kl->il", x, y, x),
    "vecdot": np.vecdot,
    "matvec": lambda x, y: np.matvec(x, y[0]),
    "vecmat": lambda x, y: np.vecmat(x[:, 0], y),
    "linalg.matmul": lambda x, y: np.linalg.matmul(x, y.T),
    "linalg.tensordot": lambda x, y: np.linalg.tensordot(x, y.T, axes=1),
    "linalg.outer": lambda x, y: np.linalg.outer(x[0], y[0]),
    "linalg.vecdot": lambda x, y: np.linalg.vecdot(x, y, axis=0),
    "vector_norm": lambda x, y: np.linalg.vector_norm(x - y, axis=1, ord=1),
    "matrix_norm": lambda x, y: np.linalg.matrix_norm(x, ord=np.inf),
    "norm": lambda x, y: np.linalg.norm(x + y),
    "round": lambda x, y: np.round(x / y, 2),
    "real": lambda x, y: np.real(x + 1j * y),
    "imag": lambda x, y: np.imag(x + 1j * y),
    "average": lambda x, y: np.average(x, axis=0, weights=np.abs(y[:, 0])),
    "average returned": lambda x, y: np.average(x * y, axis=1, returned=True),
    "ptp": lambda x, y: np.ptp(x * y, axis=1),
    "cov": np.cov,
    "corrcoef": lambda x, y: np.corrcoef(x.T),
    "isclose": lambda x, y: np.isclose(x, y + 1e-9),
    "allclose": lambda x, y: np.allclose(x, x + 1e-10),
    "not allclose": np.allclose,
    "array_equal": lambda x, y: np.array_equal(x, y + 0),
    "array_equiv": lambda x, y: np.array_equiv(x[:1], x[:1] + y[:, :1] * 0),
    "isin": lambda x, y: np.isin(x, [1.0, -2.0]),
    "isin of a distarray": lambda x, y: np.isin(x, y[0]),
}


def check_result(got, want) -> None:
    """A DistArray result (or a tuple of them, or a Python bool) equals NumPy's."""
    if isinstance(want, bool):
        everywhere(got is want, f"{got!r} != {want!r}")
    elif isinstance(want, tuple):
        everywhere(isinstance(got, tuple) and len(got) == len(want), repr(type(got)))
        for g, w in zip(got, want):
            check_value(g, w)
    else:
        check_value(got, want)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize(("first", "second"), [("rows", "cols"), ("grid", "overlapping")])
def test_native_against_numpy(first, second, case):
    a, b = value(30), value(31)
    function = CASES[case]
    x = mdarray.distributed_array(a, layouts()[first])
    y = mdarray.distributed_array(b, layouts()[second], "sum")
    check_result(run(lambda: function(x, y), native=True), function(a, b))


def test_a_spectral_norm_gathers_where_tsqr_cannot_run():
    """TSQR is not multi-process yet: ``matrix_norm(ord=2)`` is right, by the fallback."""
    a = value(32)
    x = mdarray.distributed_array(a, layouts()["grid"])
    check_value(lambda: np.linalg.matrix_norm(x, ord=2), np.linalg.matrix_norm(a, ord=2))


@given(st.data())
def test_drawn_tensordot_and_einsum(data):
    shape = data.draw(mst.shapes(min_dims=2, max_dims=3, min_side=1, max_side=4))
    a = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(-9, 9)))
    b = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(-9, 9)))
    x = mdarray.distributed_array(a, data.draw(mst.layouts(shape)), data.draw(mst.modes()))
    y = mdarray.distributed_array(b, data.draw(mst.layouts(shape)), data.draw(mst.modes()))
    axis = data.draw(st.integers(0, len(shape) - 1))
    check_value(
        lambda: np.tensordot(x, y, axes=([axis], [axis])),
        np.tensordot(a, b, axes=([axis], [axis])),
        exact=True,
        native=True,
    )
    letters = "ijk"[: len(shape)]
    subscripts = f"{letters},{letters}->{letters[axis]}"
    check_value(
        lambda: np.einsum(subscripts, x, y), np.einsum(subscripts, a, b), exact=True, native=True
    )
    check_value(lambda: np.vdot(x, y), np.vdot(a, b), exact=True, native=True)
