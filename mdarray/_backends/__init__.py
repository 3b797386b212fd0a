"""Backends: where chunks live, how work on a device is ordered, and how bytes move (`backend.Backend`, the protocol; `cpu` and `cuda` implement it)."""
