"""Stay hints of Algorithm 2 (`Schedule.stays`, each checked by the prover; docs/proofs.md "Balance
and memory"). Phases 2 and 3 are Algorithm 1's and carry its marks (x in the place of v). In phase 1
a running sum moved on (j < n) and a copy that a MOVE cycle (j > n) forwards end there: their use
is the last; the finished w1 (j = n) and the mirror stored by the last hop stay until phase 2b
reads them. The peak is at the first cycle of phase 2b on PE 1 (at n = 16, m = 4: 64 x, 64 w1,
4 s, 1 w).

Phase 1's loop j runs to n + extra(h), h mod m in the bound, and its sends arrive at iterations
whose conditions read h mod m over h ∈ [0, n div 2], not a whole number of periods of m: the
counter does not sum them. Its events are read over a ledger (`proofs/figures/memory/ledger.py`, six checks):
j padded to n + m − 1; a copy a MOVE cycle passes on held only in that cycle (transit, kept out of
the counts); the mirror stored by a block's last hop counted at the block's padded end, which no
iteration separates from that hop. The derivation takes a few seconds of CPU, so the registered
targets carry the hints on request (`prove algo2 --exact-peak`, `prove algo2-general --exact-peak`,
where phase 3's y sums over d columns may hold more: two more candidates)."""

from ringproof.schedules.expr import and_, eq, ge, gt, ite, lt, mod, ne, or_


def stays(hops, cols):
    """The hints, `hops(P, h)` Algorithm 2's (a parameter: this module is imported by it), `cols`
    phase 1's and phase 3's columns (`algo1.PAPER`: n, `GENERAL`: d)."""
    c = cols.size
    return {
        "last": {("phase1", "w1"): lambda P, ix: ne(ix.j, c(P)),          # a moved sum, a forwarded copy
                 ("phase2b", "w1"): lambda P, ix: True,
                 ("phase2b", "s"): lambda P, ix: True,
                 ("phase3", "w"): lambda P, ix: True,
                 ("phase3", "x"): lambda P, ix: eq(ix.h, P.n),
                 ("phase3", "y"): lambda P, ix: and_(eq(ix.i, P.k), eq(mod(ix.j, P.m), 0))},
        "alone": {("phase2b", "s"): lambda P, ix: eq(ix.j, P.n),
                  ("phase3", "w"): lambda P, ix: eq(ix.j, c(P))},
        "peak": [("phase2b", lambda P: {"i": 1, "j": 1, "l": 1})] + ([] if cols.extent == "n" else [
            # d columns: the y sums of phase 3 may hold more, at its last row (k = 1) or the row
            # before, where block 1 ends
            ("phase3", lambda P: {"h": P.n, "i": 1, "j": 1, "l": 1}),
            ("phase3", lambda P: {"h": P.n - 1, "i": 1, "j": P.d - P.m + 1, "l": 1, "when": ge(P.n, 2)})]),
        "ledger": {"phase1": {
            "loop": "j",
            "pad": lambda P, ix: c(P) + P.m - 1,                              # extra(h) ≤ m − 1
            "begin": lambda P, ix: eq(ix.j, 1),
            "end": lambda P, ix: lt(ix.j, c(P)),                              # the sum moved on
            "transit": lambda P, ix: gt(ix.j, c(P)),                          # a MOVE cycle passes a copy on
            "arrive": lambda P, ix: or_(lt(ix.j, c(P)),                       # the moved sum; the mirror
                                        and_(eq(ix.j, c(P) + P.m - 1), ge(ix.h, 1), ne(2 * ix.h, P.n))),
            "to": lambda P, ix: dict(h=ix.h, i=ix.i, j=ite(lt(ix.j, c(P)), ix.j, c(P) + P.m - 1), l=ix.l),
            "back": lambda P, ix: dict(h=ix.h, i=ix.i, j=ite(lt(ix.j, c(P)), ix.j, c(P) + hops(P, ix.h) - 1),
                                       l=ix.l)}},
        "on_request": True,
    }
