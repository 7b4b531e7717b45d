"""The optimal-schedule search on the bit-level machine: CNF encoding, SAT portfolio, lower-bound
lemmas, the staged search for minimum cycles (`minimum.search`) and the SAT check of a fixed run."""

from ringproof.proofs.search.minimum import search
from ringproof.proofs.search.sat_check import sat_check_run, to_run

__all__ = ["search", "sat_check_run", "to_run"]
