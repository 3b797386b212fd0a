"""Functions that place elements anew: repeat, tile, roll, diagonals, pad, insert and delete, flips and splits, NumPy's writes, take, apply_along_axis."""
