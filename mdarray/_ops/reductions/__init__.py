"""Reductions and statistics: the statistical functions, moments, scans, NaN-ignoring reductions, histograms, order statistics, NumPy's statistics."""
