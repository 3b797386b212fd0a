"""The package's layers, held in code: imports point down, never in a cycle.

Each module of `mdarray` belongs to one layer (docs/design.md says what each owns). A
module imports modules of its own layer or of layers below it; the import graph has no
cycle; no function imports a module (CuPy, imported lazily so mdarray works without it,
is the one exception); no module outside DistArray's own reads its private attributes;
no module grows past 600 lines. A new module must be given a layer here.
"""

import ast
from pathlib import Path

import pytest

import mdarray
from mdarray._array import DistArray
from mdarray._stored import Stored

PACKAGE = Path(mdarray.__file__).parent

# From the ground up.
LAYERS = (
    (
        "values and backends",
        {
            "_config",
            "_constants",
            "_plan_cache",
            "_decided",
            "_debug",
            "_profile",
            "_regions",
            "_modes",
            "_mode_rules",
            "_registry",
            "_kernels",
            "_special_values",
            "_staging",
            "_cpu_threads",
            "_cpu_pool",
            "_cpu_backend",
            "_cuda_kernels",
            "_cuda_elementwise",
            "_cuda_clock",
            "_cuda_host",
            "_cuda_columns",
            "_cuda_backend",
            "_backend",
            "_processes",
            "_call_check",
            "_transport",
            "_layout",
            "_limits",
            "_visualize",
            "_svg",
            "_svg_canvas",
        },
    ),
    ("storage", {"_memory", "_memory_report", "_storage", "_stored"}),
    ("movement", {"_fetch", "_dense_partials", "_movement_plans", "_redistribute"}),
    ("chunkwise execution", {"_chunkwise", "_operands"}),
    ("DistArray", {"_array", "_ndarray_methods", "_python_protocols"}),
    (
        "op modules",
        {
            "_fallback",
            "_groups",
            "_numpy_functions",
            "_ufuncs",
            "_ufunc_plans",
            "_ufunc_fast",
            "_ufunc_cells",
            "_fusion",
            "_elementwise_functions",
            "_creation_functions",
            "_ways_in",
            "_data_type_functions",
            "_index_plans",
            "_indexing",
            "_advanced_indexing",
            "_point_indexing",
            "_index_writes",
            "_along_axis",
            "_manipulation_functions",
            "_reduction",
            "_statistical_functions",
            "_moments",
            "_scans",
            "_nan_reductions",
            "_selection",
            "_histograms",
            "_searching_functions",
            "_sorting_functions",
            "_set_functions",
            "_indexing_functions",
            "_rearranging_functions",
            "_stacking",
            "_numpy_compositions",
            "_numpy_writes",
            "_numpy_formulas",
            "_polynomials",
            "_index_arithmetic",
            "_insertions",
            "_ranges",
            "_applying",
            "_printing",
            "_diagonals",
            "_padding",
            "_utility_functions",
            "_stencils",
            "_linear_algebra_functions",
            "_contraction_blocks",
            "_product_operands",
            "_product_runs",
            "_contractions",
            "_comparisons",
            "_numpy_statistics",
            "_linalg",
            "_numpy_linalg",
            "_linalg_compositions",
            "_one_device",
            "_tsqr",
            "_fft",
            "_cupy_hooks",
            "_info",
        },
    ),
    (
        "public namespace",
        {
            "__init__",
            "__main__",
            "linalg",
            "fft",
            "distributed",
            "lib",
            "lib.stride_tricks",
            "testing",
            "testing.strategies",
        },
    ),
)
LAYER = {module: level for level, (_, modules) in enumerate(LAYERS) for module in modules}
LAZY = {"cupy", "cupyx", "mpi4py"}
MAX_LINES = 600


def _modules() -> dict:
    """``{module name relative to mdarray: parsed source}``."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        name = name.removesuffix(".__init__") if name != "__init__" else name
        out[name] = (path, ast.parse(path.read_text(), str(path)))
    return out


MODULES = _modules()
MODULES_FOUND = set(MODULES)


PACKAGES = {"__init__", "testing"}  # modules that are a package's __init__


def _imports(name: str, tree) -> list:
    """``(imported mdarray module or None, line, at module level)`` for every import."""
    parts = [] if name == "__init__" else name.split(".")
    package = parts if name in PACKAGES else parts[:-1]
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
                targets = [node.module.removeprefix("mdarray.")]
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


def test_every_module_has_a_layer():
    missing = sorted(set(MODULES) - set(LAYER))
    assert not missing, f"give these modules a layer in tests/test_layers.py: {missing}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down(name):
    path, tree = MODULES[name]
    for imported, line, _ in _imports(name, tree):
        if imported is None or imported not in LAYER:
            continue
        assert LAYER[imported] <= LAYER[name], (
            f"{path.name}:{line} imports {imported} ({LAYERS[LAYER[imported]][0]}) from "
            f"{name} ({LAYERS[LAYER[name]][0]}): imports must point down"
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


def _private_attributes(cls) -> set:
    names = set()
    for klass in cls.__mro__:
        if klass in (DistArray, Stored):
            names |= {n for n in vars(klass) if n.startswith("_") and not n.startswith("__")}
            names |= {n for n in getattr(klass, "__slots__", ()) if not n.startswith("__")}
    return names


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_attribute_of_distarray_read_outside(name):
    if name in ("_array", "_storage", "_stored"):
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
