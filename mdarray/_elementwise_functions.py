"""Elementwise functions: every ufunc's ``__call__`` runs per chunk."""

from __future__ import annotations

import numpy as np

from . import _dispatch
from ._registry import implements_ufunc_method


@implements_ufunc_method("__call__")
def ufunc_call(ufunc, inputs, kwargs):
    """Run `ufunc` on each chunk of the result layout, operands aligned to it."""
    unsupported = set(kwargs) - {"dtype", "casting"}
    if unsupported:
        return _dispatch.fallback(ufunc, inputs, kwargs, f"numpy.{ufunc.__name__}")
    shape = np.broadcast_shapes(*(_dispatch.shape_of(x) for x in inputs))
    layout = _dispatch.result_layout(shape, inputs)
    backend = _dispatch.backend_of(inputs)
    kernel = getattr(backend.xp, ufunc.__name__)
    operands = [_dispatch.aligned_chunks(x, layout, backend) for x in inputs]
    results = []
    for k, device in enumerate(layout.chunk_devices):
        with backend.on(device):
            results.append(kernel(*(chunks[k] for chunks in operands), **kwargs))
    if ufunc.nout == 1:
        return _dispatch.wrap(layout, results, backend)
    return tuple(
        _dispatch.wrap(layout, [r[i] for r in results], backend) for i in range(ufunc.nout)
    )
