"""Sorting, searching and sets: sort, argsort, argmin/argmax, where, searchsorted, unique, isin and comparisons, partitions."""
