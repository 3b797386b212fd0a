"""The constants of the array API standard: Python floats (and None for `newaxis`), as in
NumPy's namespace, so ``x * mdarray.pi`` promotes as a Python scalar does."""

import math

e = math.e
inf = math.inf
nan = math.nan
newaxis = None
pi = math.pi
