"""Small index maps shared by the tests."""

import mdarray

D = mdarray.devices()


def two_chunks(first, second) -> dict:
    """An index map with `first` on the first device and `second` on the last one
    (both on one device when there is only one)."""
    if D[0] == D[-1]:
        return {D[0]: [first, second]}
    return {D[0]: first, D[-1]: second}
