"""The online-softmax lemma, proved once: folding key blocks into a running (max, sum, accumulator)
with the accumulator rescaled, then dividing, gives softmax·V.

One query row and one value column suffice (the columns are independent and the fold is linear
in V). After some blocks are folded, the state (M, L, O) stands for the keys j folded so far through

    L·e(M) = S = Σ_j e(s_j)      O·e(M) = T = Σ_j e(s_j)·v_j          (the invariant)

with e = exp. A block b comes from the kernel with its own (m_b, l_b, o_b) satisfying the same for
its keys (l_b·e(m_b) = S_b, o_b·e(m_b) = T_b). The fold is

    M' = max(M, m_b)    L' = L·e(M − M') + l_b·e(m_b − M')    O' = O·e(M − M') + o_b·e(m_b − M')

Induction over the number of folded blocks: the base (the first block's state is the block's) holds
by the block's contract; the step (the invariant holds for S + S_b, T + T_b after a fold) is proved
by Z3 below; then O/L = T/S = Σ_j softmax(s)_j·v_j, since e(M) > 0 (and, for a numerator and a
denominator kept relative to references of their own, O·e(M_o − M_l)/L = T/S). The ring model's
online terms (`computation`'s exp(a − b) forms: each term rescales its accumulator to the reference
it reads, then adds e(s − M)·v) are folds of blocks of the keys that read one reference, so every
proof of a schedule with such terms cites these two parts (`cited`). The max is not needed for
the identity (any reference M' gives it); it keeps every exponent the fold takes ≤ 0, which is also
proved.

Help given to Z3, explicit: e is an uninterpreted function, and only two instances of
e(a + b) = e(a)·e(b) are given, e(M − M')·e(M') = e(M) and e(m_b − M')·e(M') = e(m_b), with e > 0
at the points used. A fold that forgets a rescale (`rescale=False`: O' = O + o_b·e(m_b − M')) is
refuted: Z3's model, and `concrete_counterexample`, the smallest concrete one (two blocks of one
key each) replayed with floats.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class SoftmaxLemma:
    name: str
    proved: bool
    seconds: float
    detail: str


def prove_step(rescale: bool = True, timeout_ms: int = 10_000) -> SoftmaxLemma:
    """The inductive step (and the exponents ≤ 0) for the fold; `rescale=False`: the mutant."""
    import z3

    e = z3.Function("e", z3.RealSort(), z3.RealSort())
    M, mb, L, O, lb, ob, S, T, Sb, Tb = z3.Reals("M m_b L O l_b o_b S T S_b T_b")
    M2 = z3.If(M >= mb, M, mb)
    keep, gain = e(M - M2), e(mb - M2)
    L2 = L * keep + lb * gain
    O2 = O * keep + ob * gain if rescale else O + ob * gain
    hyps = [L * e(M) == S, O * e(M) == T, lb * e(mb) == Sb, ob * e(mb) == Tb,     # invariant, block
            keep * e(M2) == e(M), gain * e(M2) == e(mb),                          # the two instances
            e(M) > 0, e(mb) > 0, e(M2) > 0, S > 0, Sb > 0]                     # sums of e(·) > 0
    goal = z3.And(L2 * e(M2) == S + Sb, O2 * e(M2) == T + Tb, M - M2 <= 0, mb - M2 <= 0)
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(*hyps, z3.Not(goal))
    t0 = time.perf_counter()
    answer = s.check()
    seconds = time.perf_counter() - t0
    name = "online softmax: fold step" + ("" if rescale else " without the rescale")
    if answer == z3.unsat:
        return SoftmaxLemma(name, True, seconds, "proved: the invariant L·e(M) = Σ e(s), O·e(M) = Σ e(s)·v "
                     "survives a fold, and its exponents are ≤ 0")
    if answer == z3.sat:
        return SoftmaxLemma(name, False, seconds, f"refuted: {s.model()}")
    return SoftmaxLemma(name, False, seconds, f"unknown: {s.reason_unknown()}")


def prove_final(timeout_ms: int = 10_000) -> SoftmaxLemma:
    """The end: numerator O and denominator L, each relative to its own reference (O·e(M_o) = T,
    L·e(M_l) = S), brought to one reference and divided give T/S, the softmax-weighted mean:
    O·e(M_o − M_l) / L = T/S with L > 0 (one instance of e(a + b) = e(a)·e(b))."""
    import z3

    e = z3.Function("e", z3.RealSort(), z3.RealSort())
    Mo, Ml, L, O, S, T = z3.Reals("M_o M_l L O S T")
    shift = e(Mo - Ml)
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(O * e(Mo) == T, L * e(Ml) == S, shift * e(Ml) == e(Mo), e(Mo) > 0, e(Ml) > 0, S > 0,
          z3.Not(z3.And(L > 0, O * shift * S == T * L)))
    t0 = time.perf_counter()
    answer = s.check()
    ok = answer == z3.unsat
    return SoftmaxLemma("online softmax: final division", ok, time.perf_counter() - t0,
                        "proved: O·e(M_o − M_l)/L = Σ e(s)·v / Σ e(s)" if ok else f"not proved: {answer}")


def cited() -> dict:
    """{name: proved?} of the lemma's parts, as a proof that rests on them lists them."""
    return {part.name: part.proved for part in lemma()}


def lemma() -> list[SoftmaxLemma]:
    """The lemma's parts: the base holds by the block's contract (the first state is the block's);
    the step and the final division are proved here."""
    return [prove_step(), prove_final()]


def fold(blocks, rescale: bool = True):
    """Online softmax over `blocks` [(scores, values)] with floats: (y, M, L)."""
    M = L = O = None
    for scores, values in blocks:
        mb = max(scores)
        lb = sum(math.exp(x - mb) for x in scores)
        ob = sum(math.exp(x - mb) * v for x, v in zip(scores, values))
        if M is None:
            M, L, O = mb, lb, ob
            continue
        M2 = max(M, mb)
        keep, gain = math.exp(M - M2), math.exp(mb - M2)
        L = L * keep + lb * gain
        O = (O * keep if rescale else O) + ob * gain
        M = M2
    return O / L, M, L


def softmax_average(blocks) -> float:
    scores = [x for s, _ in blocks for x in s]
    values = [v for _, vs in blocks for v in vs]
    top = max(scores)
    w = [math.exp(x - top) for x in scores]
    return sum(a * v for a, v in zip(w, values)) / sum(w)


def concrete_counterexample(rescale: bool = False, limit: int = 3):
    """The smallest blocks (fewest blocks, then fewest keys, scores and values in {0, 1, 2}) where
    the fold differs from softmax·V, or None."""
    import itertools

    vals = (0.0, 1.0, 2.0)
    for nblocks in range(1, limit + 1):
        for sizes in itertools.product(range(1, limit + 1), repeat=nblocks):
            keys = sum(sizes)
            for scores in itertools.product(vals, repeat=keys):
                for values in itertools.product(vals, repeat=keys):
                    blocks, at = [], 0
                    for size in sizes:
                        blocks.append((scores[at:at + size], values[at:at + size]))
                        at += size
                    got, want = fold(blocks, rescale)[0], softmax_average(blocks)
                    if abs(got - want) > 1e-9 * max(1.0, abs(want)):
                        return blocks, got, want
    return None
