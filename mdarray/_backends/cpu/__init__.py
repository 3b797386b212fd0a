"""The cpu backend: NumPy chunks on virtual CPU devices, its device threads and its pool of large results."""
