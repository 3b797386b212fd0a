"""The operations, one folder per family, ordered: the engines, then indexing, then shape, then the families that build on them."""
