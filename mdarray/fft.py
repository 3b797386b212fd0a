"""The array API's ``fft`` extension: ``mdarray.fft.fft(x)``, ``.fftfreq(n)``, ...

The transforms gather their operand (fallbacks under the policy of `mdarray.options`) and
return DistArrays; the shifts run on the chunks (see `mdarray._ops.fft.fft`).
"""

from types import FunctionType

import numpy as np

from ._namespace.groups import keeping_groups
from ._ops.fft.fft import (
    fft,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    ifft,
    ifftn,
    ifftshift,
    ihfft,
    irfft,
    irfftn,
    rfft,
    rfftfreq,
    rfftn,
)

__all__ = [
    "fft",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfftn",
    "rfft",
    "rfftfreq",
    "rfftn",
]

# Every function keeps its operands' device group (DESIGN: ``x[:5].device == x.device``).
globals().update(
    {
        name: keeping_groups(value, np.fft)
        for name, value in globals().items()
        if name in __all__ and isinstance(value, FunctionType)
    }
)
