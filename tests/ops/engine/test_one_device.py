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


# Stacks split along their stack axes: each device computes its own matrices -------------

STACK = RNG.normal(size=(2, 7, 3, 3))
SPD_STACK = STACK @ np.swapaxes(STACK, -1, -2) + 3 * np.eye(3)
PER_MATRIX = {
    "det": np.linalg.det,
    "inv": np.linalg.inv,
    "cholesky": np.linalg.cholesky,
    "eigvalsh": np.linalg.eigvalsh,
    "eigh values": lambda a: np.linalg.eigh(a).eigenvalues,
    "slogdet": lambda a: np.linalg.slogdet(a).logabsdet,
    "svd values": lambda a: np.linalg.svd(a).S,
    "matrix_rank": np.linalg.matrix_rank,
    "pinv": np.linalg.pinv,
    "matrix_power": lambda a: np.linalg.matrix_power(a, 3),
    "qr r": lambda a: np.abs(np.linalg.qr(a, mode="r")),
    "array API svdvals": lambda a: (mdarray.linalg if _is_dist(a) else np.linalg).svdvals(a),
}


def _is_dist(a):
    return isinstance(a, mdarray.DistArray)


def _split_stack(value, axis):
    """`value` in blocks along stack axis `axis` over the devices, matrices whole."""
    devices = DEVICES * 2  # more chunks than devices: several on one device
    cuts = np.linspace(0, value.shape[axis], len(devices) + 1).astype(int)
    index_map: dict = {}
    for device, start, stop in zip(devices, cuts[:-1], cuts[1:]):
        index = [slice(0, n) for n in value.shape]
        index[axis] = slice(int(start), int(stop))
        index_map.setdefault(device, []).append(tuple(index))
    return mdarray.distributed_array(value, mdarray.Layout(value.shape, index_map))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("name", list(PER_MATRIX))
def test_a_stack_split_along_its_stack_axes_computes_where_it_lies(name, axis):
    call = PER_MATRIX[name]
    x = _split_stack(SPD_STACK, axis)
    with mdarray.options(fallback="raise"), mdarray.count_transfers() as moved:
        got = call(x)
    expected = call(SPD_STACK)
    np.testing.assert_allclose(got.get(), expected, rtol=1e-12, atol=1e-12)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    assert not moved.bytes
    assert got.devices == x.devices


def test_per_matrix_results_keep_their_named_fields_and_layout():
    x = _split_stack(SPD_STACK, 1)
    got = mdarray.linalg.eigh(x)
    assert type(got).__name__ == "EighResult"
    assert got.eigenvalues.layout.chunk_shapes == tuple(s[:-1] for s in x.layout.chunk_shapes)
    vectors = got.eigenvectors.get()
    np.testing.assert_allclose(
        vectors @ (got.eigenvalues.get()[..., None] * np.swapaxes(vectors, -1, -2)),
        SPD_STACK,
        rtol=1e-10,
    )


@pytest.mark.parametrize("name", ["det", "eigh values", "slogdet", "inv"])
def test_a_stack_with_chunks_of_no_matrix(name):
    call = PER_MATRIX[name]
    few = SPD_STACK[0, :1]  # one matrix in blocks over the devices (empty chunks)
    x = _split_stack(few, 0)
    assert any(s[0] == 0 for s in x.layout.chunk_shapes)
    with mdarray.options(fallback="raise"):
        got = call(x)
    np.testing.assert_allclose(got.get(), call(few), rtol=1e-12)
    for host in (SPD_STACK[0, :0], SPD_STACK[:0, :0], np.zeros((2, 0, 0, 0))):
        expected = call(host)
        got = call(_split_stack(host, 0))
        assert (got.shape, got.dtype) == (expected.shape, expected.dtype), host.shape


@pytest.mark.parametrize("name", ["det", "slogdet", "inv", "eigvalsh", "matrix_power"])
def test_matrices_of_size_zero_are_matrices(name):
    """A chunk of 0x0 matrices holds matrices (their determinant is 1), not no matrix:
    each is computed, not left as uninitialized memory."""
    call = PER_MATRIX[name]
    host = np.zeros((3, 2, 0, 0))
    got = call(_split_stack(host, 1))
    expected = call(host)
    assert (got.shape, got.dtype) == (expected.shape, expected.dtype)
    np.testing.assert_array_equal(got.get(), expected)


def test_a_singular_matrix_in_one_chunk_raises_like_numpy():
    stack = SPD_STACK.copy()
    stack[1, 6] = 0.0  # in the last chunk
    x = _split_stack(stack, 1)
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.inv(stack)
    with pytest.raises(np.linalg.LinAlgError):
        mdarray.linalg.inv(x)


def test_stacks_that_split_a_matrix_or_decide_on_the_whole_stack_take_one_device():
    flat = SPD_STACK.reshape(14, 3, 3)
    split_rows = _split_stack(flat, 1)  # the matrices' rows over the devices
    with mdarray.options(fallback="allow"):
        np.testing.assert_allclose(np.linalg.det(split_rows).get(), np.linalg.det(flat), rtol=1e-12)
        # eig's eigenvalues are real only where the whole stack's are (NumPy < 2.5)
        got = np.linalg.eigvals(_split_stack(SPD_STACK, 0))
    assert got.devices == (DEVICES[0],)
    np.testing.assert_allclose(np.sort(got.get().real), np.sort(np.linalg.eigvals(SPD_STACK).real))
    if len(DEVICES) > 1:
        with mdarray.options(fallback="raise"), pytest.raises(TypeError, match="det"):
            np.linalg.det(split_rows)


RHS_STACK = RNG.normal(size=(2, 7, 3, 2))
SOLVE_RHS = {
    "a stack laid out alike": lambda: _split_stack(RHS_STACK, 1),
    "a stack split otherwise": lambda: mdarray.distributed_array(
        RHS_STACK, mdarray.Layout.block(RHS_STACK.shape, axis=2, devices=DEVICES)
    ),
    "a vector": lambda: mdarray.asarray(RHS_STACK[0, 0, :, 0]),
    "a NumPy stack broadcast": lambda: RHS_STACK[:1, :1],
    "a list": RHS_STACK[0, 0, :, 0].tolist,
}


@pytest.mark.parametrize("rhs", list(SOLVE_RHS))
def test_solve_of_a_split_stack_solves_each_matrix_where_it_lies(rhs):
    x = _split_stack(SPD_STACK, 1)
    b = SOLVE_RHS[rhs]()
    host = b.get() if _is_dist(b) else np.asarray(b)
    with mdarray.options(fallback="raise"):
        got = np.linalg.solve(x, b)
    expected = np.linalg.solve(SPD_STACK, host)
    np.testing.assert_allclose(got.get(), expected, rtol=1e-12, atol=1e-12)
    assert got.shape == expected.shape
    assert got.devices == x.devices


def test_solve_with_a_wider_stack_on_the_right_takes_one_device():
    x = _split_stack(SPD_STACK[0], 0)  # 7 matrices
    b = RNG.normal(size=(4, 7, 3, 1))  # broadcasts x's stack to 4 x 7
    with mdarray.options(fallback="allow"):
        got = np.linalg.solve(x, b)
    np.testing.assert_allclose(got.get(), np.linalg.solve(SPD_STACK[0], b), rtol=1e-12)
