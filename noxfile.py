"""Nox sessions: ``nox`` runs tests, lint, typecheck and docs; ``nox -s tests_gpu`` on a GPU.

Every session installs its tools from the PEP 735 dependency groups in ``pyproject.toml``. The
test sessions install mdarray itself (not editable) and run pytest against that installed
copy, so a file the package forgets to ship fails here rather than for users.
"""

import shutil
from pathlib import Path

import nox

nox.needs_version = ">=2025.2.9"  # nox.project.dependency_groups
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["tests", "lint", "typecheck", "docs"]

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
LINT_PATHS = ["mdarray", "tests", "benchmarks", "docs", "tools", "noxfile.py"]


def _install_checkout(session: nox.Session, group: str, extras: str = "") -> None:
    """Install mdarray from this checkout, not editable, with ``extras`` and a dependency group."""
    # setuptools builds in ./build and never empties it: a module deleted or renamed in the
    # source would still be shipped from a previous build's copy.
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    target = f".[{extras}]" if extras else "."
    session.install(target, *nox.project.dependency_groups(PYPROJECT, group))


def _pytest(session: nox.Session, backend: str) -> None:
    # The `pytest` script, not `python -m pytest`: the latter puts the working directory (the
    # source tree) first on sys.path. With `--pyargs` (pyproject's addopts) the docstring
    # examples are collected from the package that `import mdarray` finds: the installed one.
    session.run("pytest", *session.posargs, env={"MDARRAY_BACKEND": backend})


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite on the cpu backend (virtual CPU devices); posargs go to pytest."""
    _install_checkout(session, "test")
    _pytest(session, "cpu")


def _oldest_numpy() -> str:
    """``numpy==X.Y.0`` for the package's ``numpy>=X.Y`` requirement."""
    (requirement,) = (d for d in PYPROJECT["project"]["dependencies"] if d.startswith("numpy"))
    return f"numpy=={requirement.split('>=')[1]}.0"


@nox.session(python="3.11")
def tests_oldest(session: nox.Session) -> None:
    """The test suite on the oldest declared Python and NumPy (the lower bounds in
    pyproject.toml); posargs go to pytest."""
    _install_checkout(session, "test")
    session.install(_oldest_numpy())
    _pytest(session, "cpu")


@nox.session(python="3.13")
def tests_newest(session: nox.Session) -> None:
    """The test suite on the newest Python the package declares, with the newest NumPy."""
    _install_checkout(session, "test")
    session.install("--upgrade", "numpy")
    _pytest(session, "cpu")


@nox.session
def tests_full(session: nox.Session) -> None:
    """The full suite: every SPMD configuration (``MDARRAY_SPMD_RUNS=all``) and hypothesis's
    thorough profile (500 examples a test). Long: not a default session."""
    _install_checkout(session, "test")
    session.env.update({"MDARRAY_SPMD_RUNS": "all", "HYPOTHESIS_PROFILE": "thorough"})
    _pytest(session, "cpu")


@nox.session
def lint(session: nox.Session) -> None:
    """Check lint rules and formatting with ruff (the ``lint`` group)."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"))
    session.run("ruff", "check", *LINT_PATHS)
    session.run("ruff", "format", "--check", *LINT_PATHS)


@nox.session
def typecheck(session: nox.Session) -> None:
    """Type-check the package with mypy (``[tool.mypy]`` in pyproject); posargs go to mypy."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "typecheck"))
    session.run("mypy", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the HTML docs into docs/_build/html: warnings are errors, references are
    checked (nitpicky), and nothing is fetched from the web."""
    _install_checkout(session, "docs")
    session.run(
        "sphinx-build", "-W", "-n", "-b", "html", "docs", "docs/_build/html", *session.posargs
    )


@nox.session
def tests_gpu(session: nox.Session) -> None:
    """Run the test suite on the cuda backend; posargs go to pytest.

    Needs a machine with at least one CUDA GPU and a CUDA 12 driver: it installs CuPy from
    the ``cuda12`` extra (use the ``cuda13`` extra by hand for CUDA 13) and sets
    ``MDARRAY_BACKEND=cuda``, so the chunks live on real GPUs and tests marked ``cuda`` run.
    It is not in the default sessions, so a plain ``nox`` on a machine without a GPU skips it.
    """
    _install_checkout(session, "test", extras="cuda12")
    _pytest(session, "cuda")


@nox.session
def conformance(session: nox.Session) -> None:
    """Run the array API conformance suite (data-apis/array-api-tests) against ``mdarray``.

    The suite and its runner live beside the project (``../shared/array-api-tests`` and
    ``../shared/tools/array-api-tests.sh``, or ``ARRAY_API_TESTS_DIR`` / ``AAT_RUNNER``); the
    session skips with a message where they are absent. posargs go to the runner (for
    example a test file, ``--tb=short``). ``MDARRAY_BACKEND`` passes through.
    """
    suite = Path(session.env.get("ARRAY_API_TESTS_DIR", ROOT.parent / "shared" / "array-api-tests"))
    runner = Path(
        session.env.get("AAT_RUNNER", ROOT.parent / "shared" / "tools" / "array-api-tests.sh")
    )
    if not suite.is_dir() or not runner.is_file():
        session.skip(f"the conformance suite is not at {suite} (or its runner at {runner})")
    _install_checkout(session, "test")
    session.install("pytest-json-report", "pytest-timeout")
    python = Path(session.virtualenv.location) / "bin" / "python"
    session.run(
        "bash", str(runner), str(suite), "mdarray", *session.posargs,
        env={"AAT_PYTHON": str(python), "AAT_JOBS": session.env.get("AAT_JOBS", "2")},
        external=True,
    )  # fmt: skip


@nox.session
def ecosystem(session: nox.Session) -> None:
    """Run scikit-learn's, SciPy's and array-api-extra's own array API tests with mdarray
    beside array_api_strict, and print both sides' counts (``tools/ecosystem/run.py``;
    posargs go to it, for example ``--suites sklearn``). Long: not a default session."""
    _install_checkout(session, "test")
    session.install(
        "scikit-learn",
        "scipy",
        "array-api-extra",
        "array-api-strict",
        "pytest-xdist",
        "pytest-timeout",
    )
    session.run("python", "tools/ecosystem/run.py", *session.posargs)
