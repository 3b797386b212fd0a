"""Indexing: ``x[key]`` and ``x[key] = value`` by basic, advanced, point and along-axis keys."""
