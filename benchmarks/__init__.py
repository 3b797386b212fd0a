"""Benchmarks for mdarray: run one with ``python -m benchmarks.<name>`` (see README.md)."""
