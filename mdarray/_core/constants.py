"""The constants of the array API standard: Python floats (and None for `newaxis`), as in
NumPy's namespace, so ``x * mdarray.pi`` promotes as a Python scalar does; and `NO_VALUE`,
NumPy's mark of an argument not given, which every signature mirroring NumPy's uses."""

import math
from typing import Any

import numpy as np

e = math.e
inf = math.inf
nan = math.nan
newaxis = None
pi = math.pi

#: NumPy's default for an argument whose absence means something (``keepdims``,
#: ``initial``, ``where`` ...): a signature that mirrors NumPy's takes it as its default,
#: and forwards the argument only where it is not this.
NO_VALUE: Any = np._NoValue
