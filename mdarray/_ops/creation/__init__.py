"""Creation: ``distributed_array`` and the creation functions, the ways data gets in, ranges, data types and index arithmetic."""
