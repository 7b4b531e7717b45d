"""What a run of the prover may be asked, with every default written once (`prove`'s options read
them from here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ringproof.errors import BadInput
from ringproof.proofs.progress import silent
from ringproof.proofs.ring.budgets import Budget
from ringproof.proofs.results import DEFAULT_PROPERTIES, TIERS


@dataclass(frozen=True)
class Options:
    properties: tuple = DEFAULT_PROPERTIES   # balance and memory: when named
    tier: str = "parametric"
    max_n: int = 24          # bounded tier
    max_m: int = 8           # per-m tier
    timeout: float = 10.0    # seconds per query
    seed: int = 0
    jobs: int = 0            # 0: one per core
    cross_check: str | None = None   # 'cvc5': a second solver re-checks every unsat query
    cross_timeout: float = 60.0      # seconds per query for the second solver
    smt2_dir: str | None = None      # write every solver query there as SMT-LIB 2
    size: tuple | None = None  # bounded tier: this one (n, m) only
    progress: Callable = silent  # told what runs now (the CLI's stderr line)
    idle_pes: bool = False     # also the cycles of the machine where idle PEs do not wait (ring steps)
    exact_peak: bool = False   # also the exact memory peaks a schedule marks long to derive (stays["on_request"])

    def __post_init__(self):
        if self.tier not in TIERS:
            raise BadInput(f"unknown tier {self.tier!r}; known: {', '.join(TIERS)}")

    @property
    def budget(self) -> Budget:
        """The solvers' budget these options set."""
        return Budget(int(self.timeout * 1000), self.seed, second_solver=self.cross_check,
                      second_timeout_ms=int(self.cross_timeout * 1000), long_peaks=self.exact_peak)


DEFAULTS = Options()
