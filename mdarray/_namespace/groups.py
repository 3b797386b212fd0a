"""Public functions keep their operands' device group (DESIGN.md: ``x[:5].device ==
x.device``), and in an SPMD run of several processes those without a multi-process
implementation take the fallback: each public module wraps each op function it makes
public with `keeping_groups`, once, where it names it (``sum = keeping_groups(...)``).

The elementwise functions (`mdarray._ops.elementwise.elementwise_functions`) and NumPy's
names (`numpy_functions`) are not wrapped: each calls a NumPy ufunc or function, whose
protocol method (``__array_ufunc__``, ``__array_function__``) keeps the group and joins
an SPMD run, so that bookkeeping happens once per call there."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from types import ModuleType
from typing import Any, ParamSpec, TypeVar

import numpy as np

from mdarray._array.array import in_group, placed_in
from mdarray._array.calls import entry, runs_here
from mdarray._backends.backend import DeviceSet, default_backend, devices, synchronize
from mdarray._core.debug import count_transfers
from mdarray._core.modes import as_mode
from mdarray._core.registry import FUNCTIONS, LOCAL, local
from mdarray._layouts.layout import make_2d_index_map
from mdarray._ops.engine.fallback import distarrays_in, fallback, numpy_twin
from mdarray._ops.engine.fusion import fuse
from mdarray._runtime import profile as _profile
from mdarray._runtime.config import options, transparent
from mdarray._runtime.profile import profile
from mdarray._storage.memory_report import memory_report
from mdarray._storage.stored import decided_function

from .info import __array_namespace_info__

P = ParamSpec("P")
R = TypeVar("R")


def keeping_groups(func: Callable[P, R], numpy: ModuleType = np) -> Callable[P, R]:
    """`func` (a public function) whose results keep its DistArray operands' device group
    (`in_group`), unless a ``device=`` argument places them; its signature, docstring and
    type are `func`'s. A name two modules export (``mdarray.matmul``,
    ``mdarray.linalg.matmul``) is wrapped by one and imported by the other: one object.

    In a run of several processes a `func` not marked to run across them
    (`_array.calls.runs_here`) takes the fallback with its NumPy twin (the function it
    implements, or the one of its name in `numpy`, the module its namespace mirrors),
    unless the twin's own implementation is marked (`func` then reaches it).
    """
    try:
        creates = "device" in inspect.signature(func).parameters
    except (TypeError, ValueError):  # no signature to read
        creates = False

    @functools.wraps(func)
    @transparent
    def function(*args: P.args, **kwargs: P.kwargs) -> R:
        if _profile.recording and _profile.open_here() and func not in LOCAL:  # profiled
            return _profile.recorded(func.__name__, function, args, kwargs)
        if (done := decided_function(func, args, kwargs)) is not None:
            if creates or "device" in kwargs:
                return _grouped(done, args, kwargs, creates)
            return in_group(done, (*args, *kwargs.values()))  # `_grouped`'s, in short
        group = entry()
        if group is not None and func not in LOCAL:  # an outermost call of an SPMD run
            return group.call(func.__name__, function, args, kwargs)
        twin = None if runs_here(func) else numpy_twin(func, numpy)
        if (
            twin is not None
            and not runs_here(FUNCTIONS.get(twin))
            and distarrays_in((args, kwargs))
        ):
            result = fallback(twin, args, kwargs, f"mdarray.{func.__name__}")
        else:
            result = func(*args, **kwargs)
        return _grouped(result, args, kwargs, creates)

    return function


def _grouped(result: Any, args: tuple, kwargs: dict, creates: bool) -> Any:
    """`result` in its device group: the DeviceSet that ``device=`` names, else its
    operands' group (`in_group`); what a function that `creates` arrays (it takes
    ``device=``) makes of no DistArray operand is in the default group, every device of
    its backend (DESIGN.md). So a 0-d array
    made with ``device=x.device``, which lives on one of those devices, has ``.device ==
    x.device``, the idiom array-API libraries use for a scalar beside x."""
    device = kwargs.get("device")
    if device is None:
        result = in_group(result, (*args, *kwargs.values()))
        return placed_in(result, None) if creates else result
    return placed_in(result, device) if isinstance(device, DeviceSet) else result


# The namespace's functions of metadata alone, besides those of NumPy's functions
# (`_data_type_functions`): no step of an SPMD run, so one process may call them alone.
for _function in (
    devices,
    default_backend,
    as_mode,
    count_transfers,
    memory_report,
    options,
    profile,
    synchronize,
    make_2d_index_map,
    fuse,
    __array_namespace_info__,
):
    local(_function)
