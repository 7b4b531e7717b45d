"""ringproof: proofs with Z3 that ring schedules of self-attention are correct for every size n.

One import gives a schedule author everything:

    from ringproof import Schedule, Phase, Loop, Step, MAC, At, HOME, mod, div, eq, PLAIN

The DSL (`ringproof.schedules`, with `computation` to declare a problem of one's own) is imported at
once; the prover (`verify`, `Options`, `Result`, `Verdict`) and the ring model (`run`, `execute`)
only when first used, so that `import ringproof` stays light.
"""

from __future__ import annotations

from ringproof.errors import BadInput, InternalError, Interrupted, OutsideFragment, RingproofError
from ringproof.schedules.computation import computation
from ringproof.schedules.dsl import (DIV, EAC, HOME, MAC, MAX, MOVE, NORM, Array, At, Copy, Either, Equation,
                                     Loop, Move, Op, Phase, Problem, Ref, Schedule, Send, Step, check_size,
                                     params, variant_name)
from ringproof.schedules.expr import (and_, between, div, eq, ge, gt, ite, le, lt, mod, ne, not_, or_,
                                      same, var, wrap)
from ringproof.schedules.problems import MASKED, PLAIN, PROBLEMS, SYMMETRIC
from ringproof.schedules.shape import ANY_D, D_IS_N, Least, Shape

# name -> module, imported on first access (PEP 562)
_LAZY = {
    "verify": "ringproof.proofs.ring.prover",
    "Options": "ringproof.proofs.ring.prover",
    "Result": "ringproof.proofs.results",
    "Verdict": "ringproof.proofs.results",
    "Counterexample": "ringproof.proofs.results",
    "ALGO1": "ringproof.schedules.algo1",
    "ALGO2": "ringproof.schedules.algo2",
    "ALGO3": "ringproof.schedules.algo3",
    "ALGO1_GENERAL": "ringproof.schedules.algo1",
    "ALGO2_GENERAL": "ringproof.schedules.algo2",
    "ALGO3_GENERAL": "ringproof.schedules.algo3",
    "run": "ringproof.model.ring.machine",
    "execute": "ringproof.model.ring.numerics",
    "check_layout": "ringproof.proofs.cp.layout",
    "Varlen": "ringproof.schedules.documents",
    "VARLEN": "ringproof.schedules.documents",
    "document": "ringproof.schedules.documents",
    "check_varlen_layout": "ringproof.proofs.cp.layout",
    "check_permutation": "ringproof.proofs.cp.layout",
    "check_permutation_varlen": "ringproof.proofs.cp.layout",
    "AllGather": "ringproof.schedules.allgather",
}

__all__ = [
    "RingproofError", "BadInput", "OutsideFragment", "InternalError", "Interrupted",
    "Schedule", "Phase", "Loop", "Step", "Op", "MAC", "EAC", "DIV", "MAX", "NORM", "MOVE", "At", "HOME", "Either", "Send",
    "Move", "Copy", "Ref", "Array", "Equation", "Problem", "check_size", "params", "variant_name",
    "mod", "div", "ite", "eq", "ne", "lt", "le", "gt", "ge", "and_", "or_", "not_", "between", "wrap",
    "var", "same",
    "PLAIN", "SYMMETRIC", "MASKED", "PROBLEMS", "computation", "Shape", "D_IS_N", "ANY_D", "Least",
    *_LAZY,
]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ringproof' has no attribute {name!r}")
