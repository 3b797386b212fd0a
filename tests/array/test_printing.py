"""``array2string``, ``array_str`` and ``array_repr`` of a DistArray (`mdarray._array.printing`)
give NumPy's text for the same values, under ``fallback="raise"``, and move only what
is printed."""

import numpy as np
import pytest
from _layouts import LAYOUT_NAMES, on_layout

import mdarray

ARRAYS = {
    "long": np.arange(10000.0),
    "tall": np.arange(3000).reshape(1000, 3),
    "small": np.arange(12.0).reshape(3, 4) / 7,
    "cube": np.arange(2000.0).reshape(2, 10, 100) * 1e-5,
    "float32": (np.arange(5000.0) - 2500).astype(np.float32),
    "empty": np.zeros((0, 3)),
    "scalar": np.array(3.5),
    "bools": np.arange(3000) % 3 == 0,
}
CALLS = {
    "array2string": np.array2string,
    "array2string options": lambda a: np.array2string(
        a, separator=",", threshold=20, edgeitems=2, precision=2
    ),
    "array2string positional": lambda a: np.array2string(a, 40, 3),
    "array_str": np.array_str,
    "array_repr": np.array_repr,
    "array_repr narrow": lambda a: np.array_repr(a, 30),
    "array_repr precision": lambda a: np.array_repr(a, 55, 2),
    "min_scalar_type": np.min_scalar_type,
}


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("name", list(ARRAYS))
def test_text_matches_numpy(name, call, layout):
    value = ARRAYS[name]
    x = on_layout(value, layout)
    with mdarray.options(fallback="raise"):
        assert CALLS[call](x) == CALLS[call](value)


def test_print_options_are_numpys():
    value = np.arange(100.0).reshape(10, 10)
    x = on_layout(value, "cols")
    with np.printoptions(threshold=5, edgeitems=1, linewidth=40), mdarray.options(fallback="raise"):
        assert np.array_repr(x) == np.array_repr(value)
        assert np.array_str(x) == np.array_str(value)
        assert np.array2string(x, edgeitems=3) == np.array2string(value, edgeitems=3)


def test_a_summarized_array_moves_only_its_edges():
    x = on_layout(np.arange(100000.0), "rows")
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        np.array_repr(x)
        np.array2string(x)
    assert moved.total < 1000
    assert np.min_scalar_type(mdarray.asarray(np.array(300))) == np.dtype(np.uint16)
