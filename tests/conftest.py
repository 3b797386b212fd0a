import os

# scipy reads this once, at its first import: its functions then take array API arrays
# (tests/test_libraries.py).
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import pytest
from _pytest.doctest import DoctestItem
from hypothesis import HealthCheck, settings

import mdarray

# The SPMD suite (tests/spmd/mpi) runs on every process of an MPI run (tests/spmd/test_spmd.py
# launches it): its conftest joins the run, which changes process-global state, so this run
# leaves it out.
collect_ignore = ["spmd/mpi", "typing_checks.py"]  # read by mypy (test_api_docstrings), never run

settings.register_profile(
    "default", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.register_profile(
    "thorough", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# The long run of the lockstep state machine (tests/test_lockstep.py): 600 sequences of up
# to 50 steps (about 24 on average: some 14,000 steps); run before resolving anything it
# covers.
settings.register_profile(
    "fuzz",
    max_examples=600,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


ONE_DEVICE_DOCTEST = (
    "docstring examples place chunks on devices 0 and 1; this backend has one device"
)


def pytest_collection_modifyitems(config, items):
    """Skip the docstring examples on a one-device backend: they name devices 0 and 1
    as documentation, and the docstrings stay as written. (A session hook, so it sees the
    doctests of ``mdarray/`` too.)"""
    if len(mdarray.devices()) >= 2:
        return
    skip = pytest.mark.skip(reason=ONE_DEVICE_DOCTEST)
    for item in items:
        if isinstance(item, DoctestItem):
            item.add_marker(skip)
            if item.dtest.lineno is None:
                # pytest reports a marked skip at the item's line and asserts there is one;
                # the generated elementwise functions' docstrings have none: say line 1.
                item.dtest.lineno = 0
