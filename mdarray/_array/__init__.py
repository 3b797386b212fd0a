"""DistArray, the facade: its protocols, ndarray's methods, Python's protocols and printing."""
