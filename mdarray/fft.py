"""The array API's ``fft`` extension: ``mdarray.fft.fft(x)``, ``.fftfreq(n)``, ...

The transforms gather their operand (fallbacks under the policy of `mdarray.options`) and
return DistArrays; the shifts run on the chunks (see `mdarray._fft`).
"""

from ._fft import (
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
