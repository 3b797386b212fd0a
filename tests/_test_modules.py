"""Another folder's test module, for a test that reuses its cases (``load("exec/
test_whole_writes.py")``).

The test folders mirror the package's and are not packages (docs/design.md): pytest imports
each test module by its file's name, with its folder first on ``sys.path``. `load` imports
it the same way, so the module is imported once, under the name pytest gives it, and through
pytest's assertion rewriting, whichever of the two comes first.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

TESTS = Path(__file__).resolve().parent


def load(path: str) -> ModuleType:
    """The test module at `path` (relative to ``tests/``)."""
    file = TESTS / path
    if not file.is_file():
        raise FileNotFoundError(file)
    folder = str(file.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module(file.stem)
