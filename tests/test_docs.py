"""The docs tell the truth: the API reference lists exactly the public names, the
native-vs-fallback table matches the registry, and the pages' examples run."""

import importlib.util
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mdarray
from mdarray._core import registry as _registry

DOCS = Path(__file__).resolve().parent.parent / "docs"
API = DOCS / "api.rst"


def test_api_reference_lists_exactly_all():
    text = API.read_text()
    documented = re.findall(r"^   (?:\* ``)?([A-Za-z_]\w*)(?:``)?\s*$", text, re.MULTILINE)
    assert len(documented) == len(set(documented)), "a name is listed twice"
    assert set(documented) == set(mdarray.__all__)


def test_api_reference_lists_the_distributed_module():
    documented = re.findall(r"^   distributed\.(\w+)\s*$", API.read_text(), re.MULTILINE)
    assert sorted(documented) == sorted(mdarray.distributed.__all__)


def _registry_table():
    """docs/_ext/registry_table.py, the Sphinx extension that writes the table."""
    spec = importlib.util.spec_from_file_location(
        "registry_table", DOCS / "_ext" / "registry_table.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_ROW = r"^\| `([^`]+)` \| (\w[\w ]*) \| (\w[\w ]*) \| ?(.*?) ?\|$"


def _table_rows(markdown: str) -> dict[str, tuple[str, str]]:
    """The table's rows as the page shows them: name -> (one process, several)."""
    rows = re.findall(_ROW, markdown, re.MULTILINE)
    names = [name for name, _, _, _ in rows]
    assert len(names) == len(set(names)), "a row is listed twice"
    return {name: (one, several) for name, one, several, _ in rows}


def _reasons(markdown: str) -> dict[str, str]:
    """The table's last column: name -> why it gathers (empty for most)."""
    return {name: why for name, _, _, why in re.findall(_ROW, markdown, re.MULTILINE)}


def _name(func) -> str:
    return f"{func.__module__}.{func.__name__}"


def _expected(impl) -> tuple[str, str]:
    own = "one device" if impl in _registry.ONE_DEVICE else "native"
    return (own, own if impl in _registry.SPMD else "fallback")


def test_native_table_matches_the_registry():
    rows = _table_rows(_registry_table().markdown())
    for func, impl in _registry.FUNCTIONS.items():
        assert rows.get(_name(func)) == _expected(impl), _name(func)
    for method, impl in _registry.UFUNC_METHODS.items():
        assert rows.get(f"ufunc.{method}") == _expected(impl), method
    for (ufunc, method), impl in _registry.UFUNC_OVERRIDES.items():
        assert rows.get(f"numpy.{ufunc.__name__}.{method}") == _expected(impl), ufunc
    native = {name for name, (one, _) in rows.items() if one in ("native", "one device")}
    registered = len(_registry.FUNCTIONS) + len(_registry.UFUNC_METHODS)
    assert len(native) == registered + len(_registry.UFUNC_OVERRIDES)
    fallback = {name for name, (one, _) in rows.items() if one == "fallback"}
    assert "numpy.save" in fallback
    assert "ufunc.outer" in fallback
    assert all(several == "fallback" for name, (_, several) in rows.items() if name in fallback)


def test_native_table_counts_what_it_lists():
    markdown = _registry_table().markdown()
    counts = re.search(
        r"Of (\d+) NumPy functions .*?, (\d+) run natively .*?\((\d+) of.*?, (\d+) run on one",
        markdown,
        re.DOTALL,
    )
    assert counts is not None
    functions = _table_rows(markdown.split("\nFunctions:\n")[1]).values()
    assert len(functions) == int(counts.group(1))
    native = [several for one, several in functions if one == "native"]
    one_device = [one for one, _ in functions if one == "one device"]
    assert len(native) == int(counts.group(2))
    assert len(native) + len(one_device) == len(_registry.FUNCTIONS)
    assert len(one_device) == int(counts.group(4)) == len(_registry.ONE_DEVICE)
    assert native.count("native") == int(counts.group(3))


@pytest.mark.parametrize(
    ("func", "status"),
    [
        (np.save, "fallback"),
        (np.sum, "native"),
        (np.linalg.qr, "native"),
        (np.linalg.inv, "one device"),
    ],
    ids=["save", "sum", "linalg.qr", "linalg.inv"],
)
def test_native_table_says_what_a_call_does(func, status):
    """A row says whether the call runs without the fallback: under
    ``fallback="raise"`` a fallback row's function raises and a native one's runs; a
    one-device row's raises where data must move onto the device, and runs on an array
    that device holds alone."""
    rows = _table_rows(_registry_table().markdown())
    assert rows[_name(func)][0] == status
    shape = (2, 2) if status == "one device" else (6, 2)
    host = np.arange(4.0).reshape(2, 2) + 3 * np.eye(2) if status == "one device" else None
    host = np.arange(12.0).reshape(6, 2) if host is None else host
    x = mdarray.distributed_array(host, mdarray.Layout.block(shape))
    if status == "one device":
        alone = mdarray.distributed_array(host, mdarray.Layout.block(shape, devices=[0]))
        with mdarray.options(fallback="raise"):
            np.testing.assert_allclose(func(alone).get(), func(host))
        status = "fallback" if len(x.layout.devices) > 1 else "native"
    with mdarray.options(fallback="raise"):
        if status == "fallback":
            with pytest.raises(TypeError, match=func.__name__):
                func(io.BytesIO(), x) if func is np.save else func(x)
        else:
            assert isinstance(func(x), (mdarray.DistArray, tuple))


def test_gathering_by_design_says_why_in_the_table_and_the_warning():
    """A function whose work is gathering (``numpy.save``) has its reason in its row of
    the table, in the warning and in the error, from the one table of reasons."""
    assert _registry.GATHERED
    reasons = _reasons(_registry_table().markdown())
    for func, why in _registry.GATHERED.items():
        assert func not in _registry.FUNCTIONS
        assert reasons[_name(func)] == why
    gathered = {_name(func) for func in _registry.GATHERED}
    assert all(not why for name, why in reasons.items() if name not in gathered)
    x = mdarray.asarray(np.arange(6.0))
    why = _registry.GATHERED[np.save]
    with pytest.warns(mdarray.PerformanceWarning, match=re.escape(why)):
        np.save(io.BytesIO(), x)
    with mdarray.options(fallback="raise"), pytest.raises(TypeError, match=re.escape(why)):
        np.savetxt(io.StringIO(), x)
    with pytest.warns(mdarray.PerformanceWarning) as warned:  # a fallback of an option
        np.histogram(x, bins="auto")
    assert all("by design" not in str(w.message) for w in warned)


# Run in a fresh interpreter on the cpu backend with the four devices the pages show,
# whatever this run's backend and device count: the pages' ``pycon`` blocks, as doctests.
RUN_PAGE = """
import doctest, re, sys
from pathlib import Path
text = Path(sys.argv[1]).read_text()
blocks = re.findall(r"^```pycon\\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
test = doctest.DocTestParser().get_doctest("\\n".join(blocks), {}, sys.argv[1], None, 0)
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
runner.run(test)
print(f"{runner.tries} examples, {runner.failures} failed")
sys.exit(1 if runner.failures or not runner.tries else 0)
"""


@pytest.mark.parametrize(
    "page", ["getting_started.md", "concepts.md", "interop.md", "performance.md"]
)
def test_page_examples_run(page):
    package_root = str(Path(mdarray.__file__).resolve().parent.parent)
    env = {
        **os.environ,
        "MDARRAY_BACKEND": "cpu",
        "MDARRAY_CPU_DEVICES": "4",
        "PYTHONPATH": os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", RUN_PAGE, str(DOCS / page)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
