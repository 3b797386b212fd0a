"""The package's layers, held in code: one folder per layer, imports point down, never in
a cycle.

Each module of `mdarray` lies in a folder (a subpackage) that `FOLDERS` places in order,
from the ground up; the public modules (``mdarray``, ``mdarray.linalg``, ``mdarray.fft``,
``mdarray.distributed``, ``mdarray.lib``, ``mdarray.testing``) are the top. A module
imports modules of its own folder or of folders below it; nothing above the array layer
imports the SPMD layer (op code reaches processes through storage and movement); the
import graph has no cycle; no function imports a module (CuPy, imported lazily so mdarray works without it,
is the one exception); no module outside DistArray's own reads its private attributes;
no module grows past 600 lines and no folder past 12 modules. A new folder must be
placed here (docs/design.md draws the same map).
"""

import ast
from pathlib import Path

import pytest

import mdarray
from mdarray._array.array import DistArray
from mdarray._storage.stored import Stored

PACKAGE = Path(mdarray.__file__).parent

# From the ground up: (folder, what it owns).
FOLDERS = (
    ("_core", "values and tables: boxes, modes and their rules, caches, dispatch tables"),
    ("_kernels", "per-chunk kernels written once over an array module"),
    ("_backends.cpu", "the cpu backend"),
    ("_backends.cuda", "the cuda backend"),
    ("_backends", "the Backend protocol and the choice of backend"),
    ("_runtime", "options and profile"),
    ("_spmd", "processes, the collective-call check, the transport between processes"),
    ("_layouts", "layouts and their pictures"),
    ("_storage", "chunks, their memory, Stored"),
    ("_movement", "movement plans, fetches, combines"),
    ("_exec", "chunkwise execution, operands, the out= writer"),
    ("_array", "DistArray and its protocols"),
    ("_ops", "the operations, one folder per family (the package holds no code)"),
    ("_ops.engine", "the engines: fallback, elementwise, reductions, one device"),
    ("_ops.indexing", "indexing"),
    ("_ops.shape", "shape"),
    ("_ops.creation", "creation"),
    ("_ops.elementwise", "elementwise functions"),
    ("_ops.arranging", "functions that place elements anew"),
    ("_ops.linalg", "linear algebra"),
    ("_ops.reductions", "reductions and statistics"),
    ("_ops.sorting", "sorting, searching, sets"),
    ("_ops.fft", "fft"),
    ("_namespace", "the public namespace's machinery"),
    ("", "the public modules"),
)
RANK = {folder: rank for rank, (folder, _) in enumerate(FOLDERS)}
ARRAY = RANK["_array"]
LAZY = {"cupy", "cupyx", "mpi4py"}
MAX_LINES = 600
MAX_MODULES = 12


def _modules() -> dict:
    """``{module name relative to mdarray: (path, parsed source)}``; a package by its
    folder's name (``_core``), the top package as ``__init__``."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        name = name.removesuffix(".__init__") if name != "__init__" else name
        out[name] = (path, ast.parse(path.read_text(), str(path)))
    return out


def folder(name: str) -> str | None:
    """The folder of `FOLDERS` that module `name` lies in ("" for the public modules), or
    None where none is listed."""
    if name in ("__init__", "__main__") or name.split(".", maxsplit=1)[0] in (
        "linalg",
        "fft",
        "distributed",
        "lib",
        "testing",
    ):
        return ""
    path, _ = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return package if package in RANK else None


MODULES = _modules()
MODULES_FOUND = set(MODULES)


def _imports(name: str, tree) -> list:
    """``(imported mdarray module or None, line, at module level)`` for every import."""
    parts = [] if name == "__init__" else name.split(".")
    package = parts if MODULES[name][0].name == "__init__.py" else parts[:-1]
    top_level = {id(node) for node in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                if node.module:
                    targets = [".".join([*base, *node.module.split(".")])]
                else:
                    targets = [".".join([*base, alias.name]) for alias in node.names]
            elif node.module == "mdarray":
                targets = [a.name if a.name in MODULES_FOUND else "__init__" for a in node.names]
            elif (node.module or "").startswith("mdarray."):
                base = node.module.removeprefix("mdarray.")
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES_FOUND else base
                    for a in node.names
                ]
            else:
                targets = [None]
        elif isinstance(node, ast.Import):
            targets = [
                (alias.name.removeprefix("mdarray").removeprefix(".") or "__init__")
                if alias.name.split(".")[0] == "mdarray"
                else None
                for alias in node.names
            ]
        else:
            continue
        out.extend((target, node.lineno, id(node) in top_level) for target in targets)
    return out


def test_every_module_lies_in_a_listed_folder():
    missing = sorted(name for name in MODULES if folder(name) is None)
    assert not missing, f"place these modules' folders in FOLDERS (tests/test_layers.py): {missing}"


def test_folders_stay_small():
    counts: dict = {}
    for name, (path, _) in MODULES.items():
        if path.name != "__init__.py" and folder(name):
            counts[folder(name)] = counts.get(folder(name), 0) + 1
    large = {f: n for f, n in counts.items() if n > MAX_MODULES}
    assert not large, f"split these folders by concern: {large}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down(name):
    path, tree = MODULES[name]
    here = folder(name)
    for imported, line, _ in _imports(name, tree):
        if imported is None or imported not in MODULES:
            continue
        there = folder(imported)
        assert RANK[there] <= RANK[here], (
            f"{path.name}:{line} imports {imported} ({there}) from {name} ({here}): "
            "a folder imports only itself and the folders below it"
        )


def test_nothing_above_the_array_layer_imports_the_spmd_layer():
    importers = {
        name
        for name, (_, tree) in MODULES.items()
        if RANK[folder(name)] > ARRAY
        and folder(name) != ""
        and any(
            imported is not None and imported.startswith("_spmd")
            for imported, _, _ in _imports(name, tree)
        )
    }
    assert not importers, (
        f"{sorted(importers)} import _spmd: op code reaches processes through storage "
        "(_storage.local) and movement (_movement.collectives, scatter)"
    )


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_function_level_imports(name):
    path, tree = MODULES[name]
    functions = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    for function in functions:
        for node in ast.walk(function):
            if isinstance(node, ast.Import):
                modules = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                modules = [(node.module or "").split(".")[0] if not node.level else "mdarray"]
            else:
                continue
            assert set(modules) <= LAZY, (
                f"{path.name}:{node.lineno} imports {modules} inside {function.name}: a "
                "function-level import is a layer in the wrong place (only CuPy is lazy)"
            )


def test_import_graph_has_no_cycle():
    graph = {
        name: {
            imported
            for imported, _, top in _imports(name, tree)
            if imported in MODULES and imported != name and top
        }
        for name, (_, tree) in MODULES.items()
    }
    state: dict = {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycle = [*stack[stack.index(nxt) :], nxt]
                raise AssertionError(f"import cycle: {' -> '.join(cycle)}")
            if nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])


def test_backend_parameters_name_the_protocol():
    """Types reach the interfaces: every parameter named ``backend`` is annotated with the
    `Backend` protocol (or `CudaBackend`, where code uses that backend's own members: its
    fused kernels, the NCCL links); DeviceSet's is a backend's name (``str | None``)."""
    untyped = []
    for name, (path, tree) in MODULES.items():
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            args = node.args
            for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                if arg.arg != "backend":
                    continue
                words = {n.id for n in ast.walk(arg.annotation or ast.Constant(None))
                         if isinstance(n, ast.Name)}  # fmt: skip
                if (name, node.name) == ("_backends.backend", "__init__"):
                    assert words == {"str"}, "DeviceSet(backend=) is a backend's name"
                elif not words & {"Backend", "CudaBackend"}:
                    untyped.append(f"{path.name}:{node.lineno} {node.name}")
    assert not untyped, f"annotate these backend parameters with Backend: {untyped}"


def _private_attributes(cls) -> set:
    names = set()
    for klass in cls.__mro__:
        if klass in (DistArray, Stored):
            names |= {n for n in vars(klass) if n.startswith("_") and not n.startswith("__")}
            names |= {n for n in getattr(klass, "__slots__", ()) if not n.startswith("__")}
    return names


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_attribute_of_distarray_read_outside(name):
    if name in ("_array.array", "_storage.chunks", "_storage.stored"):
        return
    path, tree = MODULES[name]
    private = _private_attributes(DistArray)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in private:
            raise AssertionError(
                f"{path.name}:{node.lineno} reads DistArray's private .{node.attr}: use its "
                "public attributes (storage, mode, layout, ...) or the storage layer"
            )


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_stay_small(name):
    path, _ = MODULES[name]
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.name} has {lines} lines: split it by concern"
