"""Facts about the spatial-unrolling model proved with Z3 (`facts`)."""
