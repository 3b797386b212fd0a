"""Transposes of arrays of one layout repeated (``x.T`` each iteration, as k-means'
``onehot.T @ points``): what the first call decided runs again, with NumPy's values, a
view of the operand, and the operand's own chunks back for a transpose undoing it."""

import numpy as np
import pytest
from _call_counts import calls
from _layouts import rows

import mdarray


def _matrix(seed=0):
    host = np.random.default_rng(seed).standard_normal((12, 5))
    return mdarray.distributed_array(host, rows([0, 3, 6, 9, 12], [0, 0, 1, 1])), host


@pytest.mark.parametrize(
    "call",
    [lambda x: x.T, np.transpose, lambda x: mdarray.permute_dims(x, (1, 0)),
     lambda x: np.transpose(x, axes=(-1, 0))],
)  # fmt: skip
def test_a_repeated_transpose_is_a_view_with_numpy_values(call):
    for seed in range(3):  # new arrays of one layout: the decided call
        x, host = _matrix(seed)
        t = call(x)
        np.testing.assert_array_equal(t.get(), host.T)
        t[0, 1] = 100.0  # a view: the write reaches x
        assert x[1, 0].get() == 100.0


def test_a_transpose_undoing_one_gives_the_operand_back():
    x, host = _matrix()
    for _ in range(3):
        back = x.T.T
        np.testing.assert_array_equal(back.get(), host)
        assert back.storage is x.storage


def test_bad_axes_raise_as_numpy_does_each_time():
    x, _ = _matrix()
    for _ in range(2):
        with pytest.raises(ValueError, match="repeated axis"):
            np.transpose(x, (0, 0))
        with pytest.raises(ValueError, match="axes don't match"):
            np.transpose(x, (0,))


def test_a_repeated_transpose_makes_few_python_calls():
    x, _ = _matrix()
    # NumPy's dispatcher, the protocol, the decided runner, the late remap and the
    # result: 13 on CPython 3.11 (17 the whole way: the plan cache, the checks).
    assert calls(lambda: x.T) <= 15
