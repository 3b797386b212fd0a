"""Benchmarks for mdarray: run one with ``python -m benchmarks.<name>`` (see README.md).

- ``movement``: get() to the host, distributed_array from the host, reshard, change_mode
- ``compute``: elementwise ``a + b``, dispatch overhead, sum(axis=0), matmul
- ``algorithms``: sort, median, percentile, mask getitem, where, nansum, matmul and einsum
  to a replicated result, QR of a tall matrix
- ``transfer_paths``: ceilings of the copy paths (GPU only)
- ``dispatch_profile``: where a tiny elementwise op's time goes
"""
