"""Layouts: which device holds which part of an array, as an immutable value, and their pictures (text and SVG)."""
