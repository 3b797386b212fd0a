"""Nox sessions for mdarray: ``nox`` runs tests, lint and docs; ``nox -s tests_gpu`` on a GPU."""

import nox

nox.options.sessions = ["tests", "lint", "docs"]

LINT_PATHS = ["mdarray", "tests", "benchmarks", "noxfile.py"]


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite on the cpu backend (virtual CPU devices); posargs go to pytest."""
    session.install(".[test]")
    session.run("pytest", *session.posargs, env={"MDARRAY_BACKEND": "cpu"})


@nox.session
def lint(session: nox.Session) -> None:
    """Check lint rules and formatting with ruff (the ``lint`` extra)."""
    session.install("ruff")
    session.run("ruff", "check", *LINT_PATHS)
    session.run("ruff", "format", "--check", *LINT_PATHS)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the HTML docs; Sphinx warnings are errors."""
    session.install(".[docs]")
    session.run("sphinx-build", "-W", "-b", "html", "docs", "docs/_build/html", *session.posargs)


@nox.session
def tests_gpu(session: nox.Session) -> None:
    """Run the test suite on the cuda backend; posargs go to pytest.

    Needs a machine with at least one CUDA GPU and a CUDA 12 driver: it installs CuPy from
    the ``cuda12`` extra (use the ``cuda13`` extra by hand for CUDA 13) and sets
    ``MDARRAY_BACKEND=cuda``, so the chunks live on real GPUs and tests marked ``cuda`` run.
    It is not in the default sessions, so a plain ``nox`` on a machine without a GPU skips it.
    """
    session.install(".[test,cuda12]")
    session.run("pytest", *session.posargs, env={"MDARRAY_BACKEND": "cuda"})
