"""Benchmarks for mdarray: run one with ``python -m benchmarks.<name>`` (see README.md).

- ``movement``: get() to the host, distributed_array from the host, reshard, change_mode
- ``compute``: elementwise ``a + b``, dispatch overhead, sum(axis=0), matmul
- ``transfer_paths``: ceilings of the copy paths (GPU only)
- ``dispatch_profile``: where a tiny elementwise op's time goes
"""
