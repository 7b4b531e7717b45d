"""The bit-level Boolean ring machine in the paper's encoding (docs/bitlevel.md): runs as data and
the independent cycle-by-cycle checker. Solvers over it live in `ringproof.proofs.search`."""

from ringproof.model.bitlevel.check import check_run
from ringproof.model.bitlevel.types import Attempt, CheckResult, Op, Run, SearchResult, Send, SatVerdict

__all__ = ["Op", "Send", "Run", "CheckResult", "SearchResult", "Attempt", "SatVerdict", "check_run"]
