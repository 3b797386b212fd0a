"""The dispatch tables and the decorators that fill them; nothing else.

- `FUNCTIONS`: NumPy (or CuPy) function -> implementation over DistArrays, used by
  ``__array_function__``.
- `UFUNC_METHODS`: ufunc method name (``"__call__"``, ``"reduce"``, ...) -> implementation
  ``impl(ufunc, inputs, kwargs)``, used by ``__array_ufunc__``; every ufunc goes through it.
- `UFUNC_OVERRIDES`: ``(ufunc, method)`` -> implementation, for ufuncs whose method needs
  more than the general one.
"""

from __future__ import annotations

FUNCTIONS: dict = {}
UFUNC_METHODS: dict = {}
UFUNC_OVERRIDES: dict = {}


def implements(*funcs):
    """Register the decorated function as the DistArray implementation of `funcs`."""

    def register(impl):
        for func in funcs:
            if func in FUNCTIONS:
                raise ValueError(f"{func!r} is registered twice")
            FUNCTIONS[func] = impl
        return impl

    return register


def implements_ufunc_method(method: str, ufuncs=None):
    """Register the decorated ``impl(ufunc, inputs, kwargs)`` for a ufunc method.

    With `ufuncs`, only for those ufuncs (an override); without, for every ufunc.
    """

    def register(impl):
        if ufuncs is None:
            if method in UFUNC_METHODS:
                raise ValueError(f"ufunc method {method!r} is registered twice")
            UFUNC_METHODS[method] = impl
        else:
            for ufunc in ufuncs:
                if (ufunc, method) in UFUNC_OVERRIDES:
                    raise ValueError(f"{ufunc.__name__}.{method} is registered twice")
                UFUNC_OVERRIDES[(ufunc, method)] = impl
        return impl

    return register
