"""Storage: the buffers of one layout on their devices (`chunks.Chunks`), the memory under them with copy on write, `Stored` (DistArray's base) and `memory_report`."""
