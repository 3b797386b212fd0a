"""Chunkwise execution: operands converted and aligned to a layout, kernels run per chunk, and the one ``out=`` writer."""
