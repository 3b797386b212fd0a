"""Every movement of data between layouts, modes, devices and the host: plans, the fetch of one step's pieces, partial copies combined."""
