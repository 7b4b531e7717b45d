"""The optimal-schedule search on the bit-level machine: CNF encoding, SAT portfolio, lower-bound
lemmas, the staged search for minimum cycles (`minimum.search`) and the SAT check of a fixed run."""
