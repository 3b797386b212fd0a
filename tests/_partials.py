"""Partial results with a copy per chunk, for tests of partials on any number of devices.

A reduction runs one kernel per device over a device's block of chunks
(`mdarray._exec.chunkwise.blocks`), so the chunks of one device give one partial, and on one
device a whole result. Tests of how partial copies combine switch that off to get a copy
per chunk, as several devices would give.
"""

from contextlib import contextmanager

import pytest

from mdarray._ops.engine import reduction as _reduction
from mdarray._ops.sorting import searching_functions as _searching_functions


@contextmanager
def per_chunk():
    """Reductions (and argmin/argmax) run per chunk inside the block."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(_reduction, "blocks", lambda storage: None)
        monkeypatch.setattr(_searching_functions, "blocks", lambda storage: None)
        yield
