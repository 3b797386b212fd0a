"""``mdarray.special``: SciPy's elementwise special-function ufuncs on DistArrays, run on
each chunk where it lies (nothing gathered, nothing through NumPy), the result in the
operands' layout and device group; SciPy's array API layer finds them as ``xp.special``,
so ``scipy.stats`` keeps a DistArray on its devices. Values against SciPy's on the same
NumPy data."""

import numpy as np
import pytest
from _layouts import device, devices

import mdarray
from mdarray.testing import assert_dist_equal

special = pytest.importorskip("scipy.special")
stats = pytest.importorskip("scipy.stats")

HOST = np.linspace(-3.0, 3.0, 48).reshape(12, 4)
# SciPy's own ufuncs on the cpu backend give SciPy's values exactly; CuPy's twins
# (cupyx.scipy.special) on the cuda backend to a few units in the last place.
EXACT = mdarray.default_backend() == "cpu"


def _close(got, want):
    if EXACT:
        assert_dist_equal(got, want)
    else:
        assert got.dtype == want.dtype
        rtol = 1e-5 if want.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got.get(), want, rtol=rtol, atol=rtol)


def _spread(host):
    return mdarray.distributed_array(
        host, mdarray.Layout.block(host.shape, devices=devices(0, 1, 2))
    )


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("ndtr", (HOST,)),
        ("gammaln", (np.abs(HOST) + 0.5,)),
        ("xlogy", (np.abs(HOST), np.abs(HOST[::-1]) + 1)),
        ("expit", (HOST.astype(np.float32),)),
        ("erfinv", (HOST / 4,)),
    ],
)
def test_a_special_function_runs_on_the_chunks_as_scipy_computes_it(name, args):
    ours = [_spread(a) for a in args]
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = getattr(mdarray.special, name)(*ours)
    assert moved.total == 0
    want = getattr(special, name)(*args)
    _close(got, want)
    assert got.layout == ours[0].layout
    assert got.device == ours[0].device


def test_a_special_function_of_two_outputs_and_a_scalar_operand():
    positive = np.abs(HOST) + 0.25
    x = _spread(positive)
    with mdarray.options(fallback="raise"):
        si, ci = mdarray.special.sici(x)
        scaled = mdarray.special.xlogy(2, x)
    want_si, want_ci = special.sici(positive)
    _close(si, want_si)
    _close(ci, want_ci)
    _close(scaled, special.xlogy(2, positive))


def test_only_elementwise_ufuncs_are_names_of_the_module():
    names = dir(mdarray.special)
    assert {"ndtr", "gammaln", "xlogy", "erf", "expit"} <= set(names)
    for name in ("logsumexp", "softmax", "_ufuncs", "no_such_function"):
        assert name not in names
        with pytest.raises(AttributeError, match=f"no attribute '{name}'"):
            getattr(mdarray.special, name)
    assert mdarray.special.ndtr is special._ufuncs.ndtr  # SciPy's own ufunc


def test_scipy_stats_keeps_a_distarray_on_its_device():
    """``scipy.stats.entropy`` calls ``special.entr``, which SciPy's array API layer takes
    from ``mdarray.special``: the result stays on the operand's one device (through the
    host it came back on every device of the backend)."""
    host = np.linspace(0.1, 2.0, 30)
    x = mdarray.asarray(host, device=mdarray.DeviceSet([device(1)]))
    with mdarray.options(fallback="raise"):
        got = stats.entropy(x)
    assert got.device == x.device
    np.testing.assert_allclose(float(got), stats.entropy(host), rtol=1e-10)
