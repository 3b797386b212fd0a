"""The engines the families share: the host fallback, elementwise calls (plans, fast path, cells, fusion), reductions, and work on one device."""
