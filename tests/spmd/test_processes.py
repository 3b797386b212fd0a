"""The SPMD layer's parts that run without MPI: how `MDARRAY_CHECK_COLLECTIVES` describes
a call (`_call_check.describe`, equal on two processes exactly where the call is the
same), its verdicts, and the rule that every message between processes goes through
the agreeing collective layer. The runs under MPI are tests/spmd/mpi (test_spmd_faults.py,
test_spmd_collective_check.py)."""

import ast
import gc
from pathlib import Path

import numpy as np
import pytest

import mdarray
from mdarray._spmd import call_check as _call_check, processes as _processes
from mdarray._spmd.call_check import Births, describe

PACKAGE = Path(mdarray.__file__).parent


def test_values_are_described_without_addresses():
    def fn(index):
        return index

    class Opaque:
        pass

    text = describe((fn, Opaque(), np.add, np.float64, mdarray.DistArray, slice(1), ..., None))
    assert "0x" not in text
    assert "fn" in text
    assert "Opaque" in text
    assert "ufunc add" in text


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (1, 2),
        (1, 1.0),
        ((0, slice(None)), (1, slice(None))),
        ({"axis": 0}, {"axis": 1}),
        (np.arange(4.0), np.arange(4.0) + 1),
        (np.arange(4.0), np.arange(4)),
        (np.zeros((2, 3)), np.zeros((3, 2))),
        (np.array([1, None], object), np.array([2, None], object)),
        ("a", "b"),
    ],
)
def test_different_arguments_are_described_differently(a, b):
    assert describe(a) != describe(b)
    assert describe(a) == describe(a.copy() if isinstance(a, np.ndarray) else a)


def test_an_array_is_described_by_the_call_that_made_it():
    layout = mdarray.Layout.block((4,), devices=mdarray.devices())
    x = mdarray.distributed_array(np.arange(4.0), layout)
    y = mdarray.distributed_array(np.arange(4.0), layout)
    births = Births()
    assert describe(x, births) == describe(y, births)  # neither named: "?"
    births.record((x, y), 7)
    assert "#7.0" in describe(x, births)
    assert "#7.1" in describe(y, births)
    births.record(x, 8)  # named once: an in-place call returns it again
    assert "#7.0" in describe(x, births)
    del x
    gc.collect()
    assert len(births._names) == 1  # the entry went with the array


def test_the_verdict_groups_the_processes_by_call():
    same = [1, "get", "d1", "(x)", "a.py:3"]
    other = [1, "get", "d2", "(y)", "a.py:4"]
    assert _call_check._verdict(same, {0: same, 1: list(same)}, set()) is None
    text = _call_check._verdict(same, {0: same, 1: other, 2: list(same)}, set())
    assert "processes 0, 2: call #1 get(x) at a.py:3" in text
    assert "process 1: call #1 get(y) at a.py:4" in text
    missing = _call_check._verdict(same, {0: same}, {2, 3})
    assert "process 2, 3 did not make call #1 (get at a.py:3)" in missing


def test_records_fit_their_messages():
    record = [3, "get", "0" * 16, "é" * 5000, "a.py:1"]
    data = _call_check._encode(record, 1024)
    assert len(data) == 1024
    decoded = _call_check._decode(data)
    assert decoded[:3] == record[:3]
    assert decoded[3].startswith("é")


def test_an_agreed_error_keeps_the_failing_process_class():
    notes = [None, ("builtins", "FloatingPointError", "FloatingPointError: overflow")]
    error = _processes._agreed_error(notes)
    assert type(error) is FloatingPointError
    assert str(error) == "process 1 failed: FloatingPointError: overflow"
    assert _call_check.is_agreed(error)
    unknown = _processes._agreed_error([("nowhere", "Missing", "Missing: x"), None])
    assert type(unknown) is RuntimeError
    odd = _processes._agreed_error([("builtins", "UnicodeDecodeError", "UnicodeDecodeError: x")])
    assert type(odd) is RuntimeError  # its constructor wants more than a message


def test_one_process_runs_no_agreement():
    assert _processes.current() is None
    assert _processes.entry() is None


def test_every_message_goes_through_the_agreeing_layer():
    """Only the SPMD layer (`_spmd`: processes, and call_check on a communicator of its own) calls the
    communicator; others reach it through `Group`'s collectives or `Exchange.run`, each
    after an agreement round, so a process whose call failed makes the others raise
    wherever they wait."""
    spmd = PACKAGE / "_spmd"
    found = [
        f"{path.name}:{node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.parent != spmd
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr == "comm"
    ]
    assert not found, f"use Group's collectives, not its communicator: {found}"
    transport = ast.parse((PACKAGE / "_spmd" / "transport.py").read_text())
    users = {
        function.name
        for function in ast.walk(transport)
        if isinstance(function, ast.FunctionDef)
        and any(isinstance(n, ast.Attribute) and n.attr == "comm" for n in ast.walk(function))
    }
    assert users == {"run"}, users  # Exchange.run, after group.ready()
