"""Per-chunk kernels written once over an array module (NumPy or CuPy), and the array API standard's special values where a backend's kernel departs from them."""
