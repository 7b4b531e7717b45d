"""Whether Z3 proves a claim for every value of its free variables, under a deterministic resource
limit: the one way the search's lemmas (lower_bounds.py, bound.py, gaps.py) ask Z3."""

from __future__ import annotations

import z3

from ringproof.proofs.search import isolated


def valid(claim, hyps=(), *, rlimit: int, seconds: float = 60.0) -> bool:
    """`hyps ⇒ claim` for all values: Z3 finds its negation unsat within `rlimit` resource units (a
    query class's limit in proofs/ring/budgets.py, so the answer does not depend on the load). Sat
    or unknown (the limit reached) is not valid; `seconds` is a wall-clock backstop only.

    The query is asked as SMT-LIB text with its constants renamed in order of appearance, in a
    context of its own in a child process (isolated.py): what the process asked Z3 before (the
    shared context's terms, the counter behind FreshInt's names, which Z3 orders terms by) does
    not change the answer, and a query past its limits is ended there, not waited for."""
    s = z3.Solver()
    s.add(*_renamed([*hyps, z3.Not(claim)]))
    return isolated.check(s.sexpr(), rlimit=rlimit, seconds=seconds) == "unsat"


def _renamed(formulas: list) -> list:
    """`formulas` with each uninterpreted constant renamed base_i, i its order of first appearance
    (a bijection: every constant is renamed, each to its own i)."""
    seen, order, stack = set(), [], list(reversed(formulas))
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            order.append(e)
        stack.extend(reversed(e.children()))
    pairs = [(c, z3.Const(f"{c.decl().name().split('!')[0]}_{i}", c.sort())) for i, c in enumerate(order)]
    return [z3.substitute(f, *pairs) if pairs else f for f in formulas]
