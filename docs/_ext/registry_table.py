"""The docs' native-vs-fallback table, written from mdarray's registry at build time.

A NumPy function called on a DistArray runs the implementation registered for it in
``mdarray._core.registry.FUNCTIONS`` (a ufunc method: ``UFUNC_METHODS`` or ``UFUNC_OVERRIDES``);
one with none takes the fallback (gather, compute with NumPy, distribute the result). In a
run of several processes only the implementations in ``SPMD`` run as they are; the rest
take the fallback too (``mdarray._spmd.processes.runs_here``). Where gathering is the operation itself
(``numpy.save``), ``_registry.GATHERED`` says why, and the row says it too.
`function_rows` and `ufunc_rows` read that from the registry, `markdown` writes the table, and the Sphinx hook puts it where
``interop.md`` includes it; ``tests/test_docs.py`` checks it against the registry.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import mdarray  # noqa: F401  (every op module registers its implementations)
from mdarray._core import registry as _registry

NATIVE = "native"
ONE_DEVICE = "one device"
FALLBACK = "fallback"
# The NumPy namespaces whose functions dispatch to DistArray (__array_function__).
NAMESPACES = (np, np.linalg, np.fft)
UFUNC_METHOD_NAMES = ("__call__", "reduce", "accumulate", "reduceat", "outer", "at")
# Where the page includes the table from; generated/ holds built files only (.gitignore).
TABLE_PATH = Path("generated") / "registry_table.inc"


def function_name(func) -> str:
    """The name a NumPy user calls `func` by (``numpy.linalg.solve``)."""
    return f"{func.__module__}.{func.__name__}"


def _dispatching_functions() -> list:
    """Every public function of `NAMESPACES` that dispatches to a duck array, and every
    other function the registry has an implementation for; each once, in name order."""
    found = {
        id(obj): obj
        for namespace in NAMESPACES
        for name, obj in vars(namespace).items()
        if not name.startswith("_") and hasattr(obj, "_implementation")
    }
    found.update((id(func), func) for func in _registry.FUNCTIONS)
    return sorted(found.values(), key=function_name)


def _status(impl) -> tuple[str, str]:
    if impl is None:
        return FALLBACK, FALLBACK
    own = ONE_DEVICE if impl in _registry.ONE_DEVICE else NATIVE
    return own, own if impl in _registry.SPMD else FALLBACK


def function_rows() -> list[tuple[str, str, str, str]]:
    """``(function name, in one process, in several processes, why it gathers)`` per
    function (the last empty but where gathering is the operation itself)."""
    return [
        (
            function_name(func),
            *_status(_registry.FUNCTIONS.get(func)),
            _registry.GATHERED.get(func, ""),
        )
        for func in _dispatching_functions()
    ]


def ufunc_rows() -> list[tuple[str, str, str, str]]:
    """``(ufunc method, in one process, in several processes)``: the general method of
    every ufunc, then each ufunc's own override of a method."""
    rows = [
        (f"ufunc.{method}", *_status(_registry.UFUNC_METHODS.get(method)), "")
        for method in UFUNC_METHOD_NAMES
    ]
    overrides = sorted(_registry.UFUNC_OVERRIDES.items(), key=lambda item: item[0][0].__name__)
    rows += [
        (f"numpy.{ufunc.__name__}.{method}", *_status(impl), "")
        for (ufunc, method), impl in overrides
    ]
    return rows


def _table(rows: list[tuple[str, str, str, str]], first: str) -> list[str]:
    lines = [f"| {first} | one process | several processes | gathered because |"]
    lines += ["|---|---|---|---|"]
    lines += [f"| `{name}` | {one} | {several} | {why} |" for name, one, several, why in rows]
    return lines


def markdown() -> str:
    """The table as MyST Markdown: counts, the ufunc methods, then every function."""
    functions = function_rows()
    native = [row for row in functions if row[1] == NATIVE]
    everywhere = [row for row in native if row[2] == NATIVE]
    one = [row for row in functions if row[1] == ONE_DEVICE]
    lines = [
        "Generated from mdarray's registry when these pages were built.",
        "",
        (
            f"Of {len(functions)} NumPy functions that dispatch to a DistArray, {len(native)} "
            f"run natively in one process ({len(everywhere)} of them across processes too), "
            f"{len(one)} run on one device and {len(functions) - len(native) - len(one)} "
            "take the fallback. The last column says why, where gathering to the host is "
            "the operation itself."
        ),
        "",
        "Ufunc methods (every ufunc of NumPy takes these paths):",
        "",
        *_table(ufunc_rows(), "ufunc method"),
        "",
        "Functions:",
        "",
        *_table(functions, "function"),
        "",
    ]
    return "\n".join(lines)


def write_table(app) -> None:
    """Write the table under the source directory, only when it changed (an unchanged
    file leaves the including page up to date)."""
    path = Path(app.srcdir) / TABLE_PATH
    text = markdown()
    if not path.is_file() or path.read_text() != text:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)


def setup(app):
    app.connect("builder-inited", write_table)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
