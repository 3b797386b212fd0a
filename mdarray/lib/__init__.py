"""NumPy's ``lib`` names that array-agnostic code reaches through a namespace
(``xp.lib.stride_tricks.sliding_window_view``, as xarray's ``rolling`` does)."""

from . import stride_tricks as stride_tricks

__all__ = ["stride_tricks"]
