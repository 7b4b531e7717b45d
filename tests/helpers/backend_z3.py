"""The Z3 backend of the expression helpers (registered on import)."""

from __future__ import annotations

import z3

from ringproof.schedules.expr import Backend, register_backend

Z3 = Backend(
    "z3", lambda x: isinstance(x, z3.ExprRef),
    mod=lambda a, b: a % b, div=lambda a, b: a / b, ite=z3.If,
    eq=lambda a, b: a == b, lt=lambda a, b: a < b, le=lambda a, b: a <= b,
    and_=z3.And, or_=z3.Or, not_=z3.Not,
)
register_backend(Z3)
