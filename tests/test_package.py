"""The package as installed: its version, license and declared requirements are true."""

import importlib.metadata
import sys

import numpy as np
import pytest

import mdarray


def _metadata():
    try:
        return importlib.metadata.metadata("mdarray")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("mdarray runs from a source tree that is not installed")


def test_version_is_the_installed_distributions():
    assert mdarray.__version__ == _metadata()["Version"]


def test_license_is_declared():
    assert _metadata()["License-Expression"] == "BSD-3-Clause"


def test_this_python_and_numpy_are_within_the_declared_requirements():
    meta = _metadata()
    python = meta["Requires-Python"]
    assert python.startswith(">=")
    assert sys.version_info[:2] >= tuple(int(p) for p in python[2:].split("."))
    (numpy,) = [r for r in meta.get_all("Requires-Dist") if r.startswith("numpy")]
    assert np.lib.NumpyVersion(np.__version__) >= numpy.split(">=")[1] + ".0"
