"""options(): the settings, scoped to a with block or process-wide (set_options, the
environment), checked on entry; warnings at the caller's line; install hints."""

import dataclasses
import importlib
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import mdarray
from mdarray._runtime import config as _config
from mdarray._runtime.config import get_options


def test_defaults_and_scoping():
    assert get_options().fallback == "warn"
    assert get_options().fallback_limit == 1 << 30
    with mdarray.options(fallback="raise") as opts:
        assert opts.fallback == "raise"
        assert get_options().fallback == "raise"
        with mdarray.options(fallback_limit=10):
            assert get_options().fallback == "raise"
            assert get_options().fallback_limit == 10
        assert get_options().fallback_limit == 1 << 30
    assert get_options().fallback == "warn"


def test_restored_after_an_error():
    with pytest.raises(KeyError), mdarray.options(fallback="allow"):
        raise KeyError
    assert get_options().fallback == "warn"


@pytest.mark.parametrize(
    ("changes", "error", "words"),
    [
        ({"fallback": "never"}, ValueError, ["fallback", "'never'"]),
        ({"fallback": None}, ValueError, ["fallback"]),
        ({"fallback_limit": -1}, ValueError, ["fallback_limit", "-1"]),
        ({"fallback_limit": 1.5}, ValueError, ["fallback_limit", "1.5"]),
        ({"fallback_limit": True}, ValueError, ["fallback_limit", "True"]),
        ({"fallbak": "raise"}, TypeError, ["fallbak"]),
    ],
)
def test_bad_values(changes, error, words):
    with pytest.raises(error) as info, mdarray.options(**changes):
        pass
    for word in words:
        assert word in str(info.value)
    assert get_options().fallback == "warn"
    assert get_options().fallback_limit == 1 << 30


def test_performance_warning_is_a_user_warning():
    assert issubclass(mdarray.PerformanceWarning, UserWarning)


# Process-wide options and the environment ---------------------------------------------


@pytest.fixture
def restored():
    """The process-wide options as they were, after the test."""
    before = _config._defaults
    yield
    mdarray.set_options(**dataclasses.asdict(before))


def test_set_options_applies_outside_blocks_and_blocks_override_it(restored):
    mdarray.set_options(fallback="raise", fallback_limit=10)
    assert get_options().fallback == "raise"
    assert get_options().fallback_limit == 10
    with mdarray.options(fallback="allow"):
        assert get_options().fallback == "allow"
        assert get_options().fallback_limit == 10
    assert get_options().fallback == "raise"


def test_set_options_reaches_other_threads(restored):
    mdarray.set_options(transfer_guard="log")
    seen = []
    thread = threading.Thread(target=lambda: seen.append(get_options().transfer_guard))
    thread.start()
    thread.join()
    assert seen == ["log"]


def test_a_block_is_its_own_threads(restored):
    seen = []
    with mdarray.options(fallback="raise"):
        thread = threading.Thread(target=lambda: seen.append(get_options().fallback))
        thread.start()
        thread.join()
    assert seen == ["warn"]


@pytest.mark.parametrize(
    ("changes", "error", "words"),
    [
        ({"fallback": "never"}, ValueError, ["fallback", "'never'"]),
        ({"transfer_guard": "warn"}, ValueError, ["transfer_guard", "'warn'", "'log'"]),
        ({"fallback_limit": -1}, ValueError, ["fallback_limit", "-1"]),
        ({"fallbak": "raise"}, TypeError, ["fallbak"]),
    ],
)
def test_set_options_checks_and_changes_nothing_on_error(restored, changes, error, words):
    with pytest.raises(error) as info:
        mdarray.set_options(**{"fallback": "allow", **changes})
    for word in words:
        assert word in str(info.value)
    assert get_options() == _config.Options()


def test_environment_sets_the_options():
    changes = _config.from_environment(
        {"MDARRAY_FALLBACK": "raise", "MDARRAY_FALLBACK_LIMIT": "4096", "PATH": "/bin"}
    )
    assert changes == {"fallback": "raise", "fallback_limit": 4096}
    assert _config.from_environment({"MDARRAY_TRANSFER_GUARD": "log"}) == {"transfer_guard": "log"}
    assert _config.from_environment({}) == {}


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        ("MDARRAY_FALLBACK", "sometimes", ["MDARRAY_FALLBACK", "'warn'", "'raise'", "'allow'"]),
        ("MDARRAY_FALLBACK_LIMIT", "1GB", ["MDARRAY_FALLBACK_LIMIT", "'1GB'", "int"]),
        ("MDARRAY_FALLBACK_LIMIT", "-5", ["MDARRAY_FALLBACK_LIMIT", "-5"]),
        ("MDARRAY_TRANSFER_GUARD", "on", ["MDARRAY_TRANSFER_GUARD", "'allow'", "'raise'"]),
    ],
)
def test_bad_environment_values_name_the_variable(variable, value, words):
    with pytest.raises(ValueError, match=variable) as info:
        _config.from_environment({variable: value})
    for word in words:
        assert word in str(info.value)


def _run(code, env):
    root = Path(mdarray.__file__).parent.parent  # this checkout's mdarray
    return subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, check=False
    )


def test_environment_is_read_at_import():
    code = "import mdarray; o = mdarray._runtime.config.get_options(); print(o.fallback, o.transfer_guard)"
    env = {**os.environ, "MDARRAY_FALLBACK": "allow", "MDARRAY_TRANSFER_GUARD": "raise"}
    done = _run(code, env)
    assert done.stdout.split() == ["allow", "raise"], done.stderr
    env["MDARRAY_FALLBACK"] = "loud"
    done = _run(code, env)
    assert done.returncode != 0
    assert "MDARRAY_FALLBACK must be one of" in done.stderr


# Warnings point at the caller's line --------------------------------------------------


def _blocks(value):
    return mdarray.distributed_array(
        value, mdarray.Layout.block(value.shape, devices=mdarray.devices())
    )


def _where(caught, category):
    found = [(Path(w.filename), w.lineno) for w in caught if w.category is category]
    assert len(found) == 1, [str(w.message) for w in caught]
    return found[0]


def _here(offset=0):
    frame = sys._getframe(1)
    return Path(frame.f_code.co_filename), frame.f_lineno + offset


def test_fallback_warning_of_a_numpy_function_points_here():
    x = _blocks(np.arange(12.0).reshape(3, 4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        here = _here(1)
        np.take(x, [0, 9], axis=1, mode="clip")
    assert _where(caught, mdarray.PerformanceWarning) == here


def test_fallback_warning_of_a_method_points_here():
    x = _blocks(np.arange(12.0).reshape(3, 4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        here = _here(1)
        got = x.take([0, 9], axis=1, mode="clip")
    assert _where(caught, mdarray.PerformanceWarning) == here
    np.testing.assert_array_equal(got.get(), np.arange(12.0).reshape(3, 4)[:, [0, 3]])


def test_fallback_warning_of_an_operator_points_here():
    x = _blocks(np.arange(12.0).reshape(3, 4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        here = _here(1)
        x[np.array([0, 2]), 1:3] = -1.0
    assert _where(caught, mdarray.PerformanceWarning) == here


def test_runtime_warnings_of_a_direct_call_and_a_numpy_function_point_here():
    x = _blocks(np.full(8, np.nan))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        here = _here(1)
        np.nanmean(x)
    assert _where(caught, RuntimeWarning) == here
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        here = _here(1)
        mdarray.nanmean(x)
    assert _where(caught, RuntimeWarning) == here


def test_one_call_warns_once_and_default_filters_once_per_line():
    x = _blocks(np.arange(12.0).reshape(3, 4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.lib.stride_tricks.sliding_window_view(x, 2, axis=0)
    assert len(caught) == 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("default")
        for _ in range(3):
            np.lib.stride_tricks.sliding_window_view(x, 2, axis=0)
    assert len(caught) == 1


# Optional dependencies say what installs them -----------------------------------------


def test_missing_mpi4py_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'mdarray\[mpi\]'") as info:
        mdarray.distributed.initialize()
    assert info.value.name == "mpi4py"
    assert not mdarray.distributed.is_initialized()


def test_missing_hypothesis_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    monkeypatch.delitem(sys.modules, "mdarray.testing.strategies", raising=False)
    with pytest.raises(ModuleNotFoundError, match="pip install hypothesis") as info:
        importlib.import_module("mdarray.testing.strategies")
    assert info.value.name == "hypothesis"
