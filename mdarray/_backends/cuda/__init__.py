"""The cuda backend: CuPy chunks on GPUs, one stream per device; its host copies, clock, kernels and own launches."""
