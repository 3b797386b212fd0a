"""Public functions keep their operands' device group (DESIGN.md: ``x[:5].device ==
x.device``): the namespaces wrap each of their functions with `keeping_groups`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ._array import in_group


def keeping_groups(func: Callable[..., Any]) -> Callable[..., Any]:
    """`func` (a public function) whose results keep its DistArray operands' device group
    (`in_group`), unless a ``device=`` argument places them. One wrapper per function, so
    a name exported by two modules (``mdarray.matmul``, ``mdarray.linalg.matmul``) is one
    object."""
    known = _KEEPING_GROUPS.get(func)
    if known is not None:
        return known

    @functools.wraps(func)
    def function(*args: Any, **kwargs: Any) -> Any:
        result = func(*args, **kwargs)
        if kwargs.get("device") is not None:
            return result
        return in_group(result, (*args, *kwargs.values()))

    _KEEPING_GROUPS[func] = function
    return function


_KEEPING_GROUPS: dict[Callable[..., Any], Callable[..., Any]] = {}
