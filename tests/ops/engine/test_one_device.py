"""Whole-matrix linear algebra on one device (`mdarray._ops.engine.one_device`): a device
that holds every operand whole computes there and gathers nothing, so no fallback; where
the operands are split over devices they are gathered, a fallback under the policy. Values
against NumPy on the same data."""

import numpy as np
import pytest

import mdarray

RNG = np.random.default_rng(11)
DEVICES = mdarray.devices()
H = RNG.normal(size=(40, 5))
SPD = H.T @ H + 5 * np.eye(5)
RHS = RNG.normal(size=(5, 3))


def _replicated(value, devices=DEVICES):
    return mdarray.distributed_array(
        value, mdarray.Layout.replicated(value.shape, devices=list(devices))
    )


def _rows(value):
    return mdarray.distributed_array(value, mdarray.Layout.block(value.shape, devices=DEVICES))


CALLS = {
    "inv": (np.linalg.inv, [SPD]),
    "eigh": (lambda a: np.linalg.eigh(a).eigenvalues, [SPD]),
    "cholesky": (np.linalg.cholesky, [SPD]),
    "solve": (np.linalg.solve, [SPD, RHS]),
    "det": (np.linalg.det, [SPD]),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_a_matrix_held_whole_by_every_device_computes_without_a_fallback(name):
    call, arguments = CALLS[name]
    operands = [_replicated(a) for a in arguments]
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = call(*operands)
    np.testing.assert_allclose(np.asarray(got.get()), call(*arguments), rtol=1e-10)
    assert not moved.bytes
    assert got.devices == (DEVICES[0],)


def test_a_partial_reduction_is_combined_on_a_device_that_holds_it_whole():
    # x.T @ x of row chunks: a SUM of whole 5x5 copies, one per device.
    x = _rows(H)
    gram = x.T @ x
    with mdarray.options(fallback="raise"):
        got = mdarray.linalg.eigh(gram)
    expected = np.linalg.eigh(H.T @ H)
    np.testing.assert_allclose(got.eigenvalues.get(), expected.eigenvalues, rtol=1e-10)
    np.testing.assert_allclose(
        np.abs(got.eigenvectors.get()), np.abs(expected.eigenvectors), rtol=1e-8, atol=1e-12
    )


@pytest.mark.skipif(len(DEVICES) < 3, reason="needs operands on different device sets")
def test_the_device_that_holds_every_operand_whole_computes():
    a = _replicated(SPD, DEVICES[1:])
    b = _replicated(RHS, DEVICES[:])
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = mdarray.linalg.solve(a, b)
    np.testing.assert_allclose(got.get(), np.linalg.solve(SPD, RHS), rtol=1e-10)
    assert got.devices == (DEVICES[1],)
    assert not moved.bytes


@pytest.mark.skipif(len(DEVICES) < 2, reason="one device holds every piece")
def test_a_matrix_split_over_devices_is_a_gathering_fallback():
    x = _rows(SPD)
    with mdarray.options(fallback="raise"), pytest.raises(TypeError, match="inv"):
        mdarray.linalg.inv(x)
    with mdarray.options(fallback="allow"):
        got = mdarray.linalg.inv(x)
    np.testing.assert_allclose(got.get(), np.linalg.inv(SPD), rtol=1e-10)
    a = _replicated(SPD, DEVICES[:1])
    b = _replicated(RHS, DEVICES[1:])  # each whole, but on no common device
    with mdarray.options(fallback="raise"), pytest.raises(TypeError, match="solve"):
        mdarray.linalg.solve(a, b)


def test_row_chunks_on_one_device_are_joined_there_without_a_fallback():
    x = mdarray.distributed_array(SPD, mdarray.Layout.block(SPD.shape, devices=[DEVICES[0]] * 2))
    with mdarray.options(fallback="raise"):
        got = mdarray.linalg.inv(x)
    np.testing.assert_allclose(got.get(), np.linalg.inv(SPD), rtol=1e-10)
