"""Memory: the inputs held per PE, the exact peak from checked stay hints, and the ring model's
measured peak."""
