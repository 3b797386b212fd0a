"""The array API's ``fft`` extension: ``mdarray.fft.fft(x)``, ``.fftfreq(n)``, ...

The transforms gather their operand (fallbacks under the policy of `mdarray.options`) and
return DistArrays; the shifts run on the chunks (see `mdarray._ops.fft.fft`).
"""

import numpy as np

from ._namespace.groups import keeping_groups as _keeping_groups
from ._ops.fft import fft as _fft

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

# Each function wrapped once: its results keep its operands' device group (DESIGN:
# ``x[:5].device == x.device``), and in an SPMD run one without a multi-process
# implementation takes the fallback with its ``numpy.fft`` twin (`_namespace.groups`).
fft = _keeping_groups(_fft.fft, np.fft)
fftfreq = _keeping_groups(_fft.fftfreq, np.fft)
fftn = _keeping_groups(_fft.fftn, np.fft)
fftshift = _keeping_groups(_fft.fftshift, np.fft)
hfft = _keeping_groups(_fft.hfft, np.fft)
ifft = _keeping_groups(_fft.ifft, np.fft)
ifftn = _keeping_groups(_fft.ifftn, np.fft)
ifftshift = _keeping_groups(_fft.ifftshift, np.fft)
ihfft = _keeping_groups(_fft.ihfft, np.fft)
irfft = _keeping_groups(_fft.irfft, np.fft)
irfftn = _keeping_groups(_fft.irfftn, np.fft)
rfft = _keeping_groups(_fft.rfft, np.fft)
rfftfreq = _keeping_groups(_fft.rfftfreq, np.fft)
rfftn = _keeping_groups(_fft.rfftn, np.fft)
