"""What an all-gather target's proof needs, shown by Z3 for a generic rank and a generic document.

The target's own formulas are evaluated on Z3 terms (the DSL's Z3 backend). The rank's range is
symbolic, a = lo and a + S (the `ranks` obligation shows lo = rS, hi = (r + 1)S, the collectives'
chunk), the document's c, c + L, so every query below is linear:
- ranks: rank r's range is the collectives' chunk r (gathered row t is token t; dK row t goes home);
- segment queries: q is in a segment of (rank, document) iff q is in both ranges (the segments of a
  rank partition its queries by document; no rank computes a query it does not hold);
- segment keys: for such a q the kernel's keys are exactly [c, q];
- gathered keys: a segment reads keys inside the gathered buffer [0, T);
- head groups: for every H = R·Hk query heads, Hk = G·s KV heads, each query head h is computed in
  exactly one head group, the one of its KV head h // R, and that KV head is one the group gathers
  (`rules.group_q`, `group_kv`, `kv_head`): the segments do not depend on the group, so each
  (query head, query, key) is computed once when each (query, key) is.
The composition lemma (`composition`) makes the packing of these per-segment facts.
"""

from __future__ import annotations

from types import SimpleNamespace

from ringproof.model.allgather import rules
from ringproof.proofs.varlen.obligations import Obligation, check, z3_backend
from ringproof.schedules.expr import extra_backend


def _segment(t, z3):
    a, S, T, c, L, r, i = z3.Ints("a S T c L r i")
    R, C = SimpleNamespace(r=r, lo=a, hi=a + S), SimpleNamespace(c=c, L=L, i=i)
    facts = [a >= 0, S >= 1, a + S <= T, c >= 0, L >= 1, c + L <= T, i >= 1, r >= 0]
    return R, C, facts, T


def ranks(t, timeout_ms: int = 10_000) -> Obligation:
    import z3

    with extra_backend(z3_backend()):
        m, S, r = z3.Ints("m S r")
        P = SimpleNamespace(T=m * S, m=m, S=S)
        lo, hi = rules.chunk(S, r)
        goal = z3.And(t.lo(P, r) == lo, t.hi(P, r) == hi)
    return check(t, "ranks", [m >= 1, S >= 1, r >= 0, r < m], goal, timeout_ms,
                  "rank r holds [rS, (r + 1)S), the chunk the all-gather and the reduce-scatter move")


def segment_queries(t, timeout_ms: int = 10_000) -> Obligation:
    import z3

    with extra_backend(z3_backend()):
        R, C, facts, _ = _segment(t, z3)
        q = z3.Int("q")
        got = z3.And(t.meets(R, C), t.q_lo(R, C) <= q, q < t.q_hi(R, C))
        goal = got == z3.And(R.lo <= q, q < R.hi, C.c <= q, q < C.c + C.L)
    return check(t, "segment queries", facts, goal, timeout_ms,
                  "a segment's queries are exactly the rank's tokens of its document")


def segment_keys(t, timeout_ms: int = 10_000) -> Obligation:
    import z3

    with extra_backend(z3_backend()):
        R, C, facts, _ = _segment(t, z3)
        q, k = z3.Ints("q k")
        facts += [R.lo <= q, q < R.hi, C.c <= q, q < C.c + C.L]
        got = rules.kernel_sees(t.q_lo(R, C), t.q_hi(R, C), t.k_lo(R, C), t.k_hi(R, C), q, k)
        goal = got == z3.And(C.c <= k, k <= q)
    return check(t, "segment keys", facts, goal, timeout_ms,
                  "each query of a segment sees exactly the keys [c, q] of its document")


def gathered_keys(t, timeout_ms: int = 10_000) -> Obligation:
    import z3

    with extra_backend(z3_backend()):
        R, C, facts, T = _segment(t, z3)
        facts.append(t.meets(R, C))
        goal = z3.And(0 <= t.k_lo(R, C), t.k_hi(R, C) <= T)
    return check(t, "gathered keys", facts, goal, timeout_ms,
                  "a segment reads keys inside the gathered buffer [0, T)")


def head_groups(t, timeout_ms: int = 10_000) -> Obligation:
    import z3

    with extra_backend(z3_backend()):
        Hk, R, s, G, h, j = z3.Ints("Hk R s G h j")
        Hd = SimpleNamespace(H=R * Hk, Hk=Hk, s=s, R=R, G=G)
        facts = [R >= 1, s >= 1, G >= 1, Hk == G * s, 0 <= h, h < R * Hk, 0 <= j, j < G]
        q_lo, q_hi = rules.group_q(Hd, j)
        kv_lo, kv_hi = rules.group_kv(Hd, j)
        kv = rules.kv_head(Hd, h)
        computed = z3.And(q_lo <= h, h < q_hi)
        goal = z3.And(computed == (j == kv / s), z3.Implies(computed, z3.And(kv_lo <= kv, kv < kv_hi)))
    return check(t, "head groups", facts, goal, timeout_ms,
                  "each query head in exactly one head group, its KV head gathered in that group")


def obligations(t) -> list[Obligation]:
    return [ranks(t), segment_queries(t), segment_keys(t), gathered_keys(t), head_groups(t)]
