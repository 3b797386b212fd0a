"""Elementwise functions of the namespace, NumPy's non-ufunc formulas, and CuPy's override hooks."""
