"""Stay hints of the causal forwards (`ring-attention-causal`, `striped`, `zigzag`; `Schedule.stays`),
kept for the tests: every one is proved (24 checks each), but the occupancy they give is not
counted (the mask compares the key ((l − s) mod m)·k + b, or its striped or zigzag reading, with
the row, and the counter splits that, with the iteration kept, into more than its cases), so no
peak is derived and the registered targets carry none (docs/proofs.md, "Balance and memory")."""

from types import SimpleNamespace

from ringproof.schedules.context_parallel import FORMS, SCHEDULES, _key, _keys_at, _last_step, _row
from ringproof.schedules.expr import and_, div, eq, gt, or_


def _sized(fn):
    """fn with the sizes the prover passes completed by zigzag's h = n/(2m)."""
    return lambda P, ix: fn(P if hasattr(P, "h") else SimpleNamespace(**vars(P), h=div(P.n, 2 * P.m)), ix)


def stays(name: str) -> dict:
    """The hints of the causal forward `name`: a K or V block's last use on a PE is its last row, or,
    where no row of the PE takes it (its keys all after the rows), the copy passed on at the first
    row; q's and the running max's at the query's last key (the last step with one, its last key
    there); the copies sent at the last step arrive home unused (but for m = 1, k ≥ 2)."""
    cp = SCHEDULES[name]

    def block(P, ix):
        untaken = gt(_key(cp, P, ix), _row(cp, P, ix.l, P.k))
        return or_(eq(ix.i, P.k), and_(eq(ix.i, 1), untaken), and_(eq(P.m, 1), eq(ix.i, 1)))

    def query(P, ix):
        A = _row(cp, P, ix.l, ix.i)
        S = _last_step(cp, P, A)
        return and_(eq(ix.s, S), eq(ix.b, _keys_at(cp, P, ix.l, S, A)))

    def received(P, ix):
        return and_(eq(ix.s, P.m), or_(gt(P.m, 1), eq(P.k, 1)))

    return {"last": {(FORMS["scores"], "q"): _sized(query), (FORMS["scores"], "k"): _sized(block),
                     (FORMS["o"], "v"): _sized(block), (FORMS["l"], "w1"): lambda P, ix: True,
                     (FORMS["l"], "mx"): _sized(query), ("out", "o"): lambda P, ix: True,
                     ("out", "l"): lambda P, ix: eq(ix.c, P.d), ("out", "y"): lambda P, ix: True},
            "alone": {(FORMS["scores"], "k"): received, (FORMS["o"], "v"): received}}
