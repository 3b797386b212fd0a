"""Shape: transposes, reshapes, broadcasting, joins, stacking and ``diff``."""
