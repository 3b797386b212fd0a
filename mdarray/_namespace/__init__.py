"""The public namespace's own machinery: NumPy's names on it, device groups kept by public functions, and ``__array_namespace_info__``."""
