"""The ``fft`` extension and ``numpy.fft``."""
