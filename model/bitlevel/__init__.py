"""The bit-level Boolean ring machine in the paper's encoding (docs/bitlevel.md): runs as data and
the independent cycle-by-cycle checker. Solvers over it live in `ringproof.proofs.search`."""

from ringproof.model.bitlevel.check import check_run
from ringproof.model.bitlevel.types import Attempt, BitOp, BitSend, CheckResult, Run, SatVerdict, SearchResult

Op, Send = BitOp, BitSend  # the names docs/bitlevel.md gave them before (CHANGELOG.md)

__all__ = ["BitOp", "BitSend", "Op", "Send", "Run", "CheckResult", "SearchResult", "Attempt", "SatVerdict",
           "check_run"]
