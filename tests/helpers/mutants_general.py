"""Mutants of the general-shape schedules that break only when n ≠ d: one loop bounded by n where d
is meant, and the reverse."""

from ringproof.schedules.algo1 import ALGO1_GENERAL
from ringproof.schedules.dsl import Loop


def _bound(schedule, phase, loop, hi, name):
    """`schedule` with one loop's upper bound changed (a one-line edit of the phase)."""
    return schedule.derive(name, {phase: dict(bounds={loop: (1, hi)})})


N_FOR_D = _bound(ALGO1_GENERAL, "phase1", "j", "n", "algo1-general-j-to-n")      # columns walked to n
D_FOR_N = _bound(ALGO1_GENERAL, "phase2a", "j", "d", "algo1-general-2a-j-to-d")  # a row walked to d

MUTANTS = {"n for d": N_FOR_D, "d for n": D_FOR_N}
