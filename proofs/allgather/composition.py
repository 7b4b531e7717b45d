"""The composition over (rank, document) segments, proved once by Z3 with the ranks, documents
and segment counts uninterpreted: if cnt(r, j, q, k) is 1 exactly when q is in rank r's range and
document j's and c_j ≤ k ≤ q (the segment obligations), the ranges of the ranks partition [0, T)
(owner) and so do the documents' (doc), then cnt is 1 only at (owner(q), doc(q)) and there exactly
when (q, k) is document-causal: the sum over all segments computes each such pair once, on its
query's rank, whatever the number of ranks and documents and however documents cross ranks.
"""

from __future__ import annotations

from ringproof.proofs.varlen.composition import CompositionLemma, settle


def prove_segments(timeout_ms: int = 10_000) -> CompositionLemma:
    import z3

    I = z3.IntSort()
    lo, hi, c, L, owner, doc = (z3.Function(n, I, I) for n in ("lo", "hi", "c", "L", "owner", "doc"))
    r, j, q, k, T = z3.Ints("r j q k T")

    def in_rank(t, x):
        return z3.And(lo(x) <= t, t < hi(x))

    def in_doc(t, x):
        return z3.And(c(x) <= t, t < c(x) + L(x))

    def cnt(x, y):
        return z3.If(z3.And(in_rank(q, x), in_doc(q, y), c(y) <= k, k <= q), 1, 0)

    hyps = [0 <= q, q < T, 0 <= k, k < T]
    for t in (q, k):                        # the partitions, instantiated where the goal needs them
        for x in (r, owner(t), owner(q)):
            hyps.append(in_rank(t, x) == (owner(t) == x))
        for y in (j, doc(t), doc(q), doc(k)):
            hyps.append(in_doc(t, y) == (doc(t) == y))
    want = z3.And(r == owner(q), j == doc(q), doc(k) == doc(q), k <= q)
    return settle("segments", "all-gather composition: segments", hyps, cnt(r, j) == z3.If(want, 1, 0), timeout_ms,
                  "each document-causal pair in exactly one (rank, document) segment, its query's rank's")


def prove_balance(timeout_ms: int = 10_000) -> CompositionLemma:
    """The spread's bound for every packing: rank r's pairs (per query head) are Σ_u keys(rS + u)
    over u < S, keys(q) = q − c(q) + 1 with c(q) the start of q's document (the segment keys
    obligation: keys [c, q]), 0 ≤ c(q) ≤ q, starts nondecreasing in q. For two ranks a, b and the
    same u, keys(aS + u) − keys(bS + u) ≤ (m − 1)·S, so summed over the S values of u the pairs of
    any two ranks differ by at most (m − 1)·S²: spread ≤ (m − 1)·S², whatever the lengths."""
    import z3

    a, b, u, S, m, ca, cb = z3.Ints("a b u S m c_a c_b")
    qa, qb = a * S + u, b * S + u
    hyps = [m >= 1, S >= 1, 0 <= a, a < m, 0 <= b, b < m, 0 <= u, u < S, 0 <= ca, ca <= qa, 0 <= cb, cb <= qb,
            z3.Implies(qb <= qa, cb <= ca), z3.Implies(qa <= qb, ca <= cb)]
    goal = (qa - ca + 1) - (qb - cb + 1) <= (m - 1) * S
    return settle("balance", "all-gather composition: balance", hyps, goal, timeout_ms,
                  "two ranks' pairs differ by at most (m − 1)·S² for every lengths vector")


def lemma() -> list[CompositionLemma]:
    return [prove_segments(), prove_balance()]
