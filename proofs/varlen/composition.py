"""The composition lemma, proved once: documents side by side in one packed sequence, each run as
its own sequence, make the packed schedule.

Induction over the number of documents D. The packing of the first D documents holds the tokens
[0, c) and, on every rank, the local slots [0, o); document D + 1 holds the tokens [c, c + L) and
on every rank the slots [o, o + L/m). Z3 proves the step of each part with the earlier documents
left uninterpreted (their document numbers `doc`, their pair counts `cnt_A`, their slots), so it
holds for every D; the base (one document) is the per-document proof itself.

- pairs: if the earlier documents compute each document-causal pair of [0, c) exactly once and no
  other pair (cnt_A), and the new document each causal pair of [c, c + L) once (cnt_B: its base
  proof, shifted), then together they compute each document-causal pair of [0, c + L) exactly once
  and no other (document-local pairs alike, without k ≤ q);
- slots: the new document's slots on a rank are disjoint from every earlier document's, and the
  packing's slots end at o + L/m: a rank's local slots of distinct documents never meet, so
  conflicts and ring traffic stay within one document's slots;
- loads: the ops of distinct documents are distinct iterations, so a rank's ops at a ring step are
  the sum over the documents, and a sum of per-rank loads that do not depend on the rank does not
  either (the spread of the sum is 0 where each document's is).

Help given to Z3, explicit: the universally quantified hypotheses are instantiated at the point of
the goal (the skolem constants), the only instances the step needs.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from dataclasses import dataclass

SMT2_DIR = contextvars.ContextVar("smt2_dir", default=None)    # where `ask` writes its queries (`exporting`)


@dataclass(frozen=True)
class CompositionLemma:
    name: str
    proved: bool
    seconds: float
    detail: str
    part: str = ""         # what the lemma is of (pairs, local slots, loads, padding masked): the key citers use
    smt2: tuple = ()       # the SMT-LIB files its query was written to (`exporting`)


@contextlib.contextmanager
def exporting(directory: str | None):
    """Within it, every query `ask` puts to Z3 is also written to `directory` as a standalone
    SMT-LIB 2 script (`prove --smt2 DIR` of a packed target); None: none is."""
    token = SMT2_DIR.set(directory)
    try:
        yield
    finally:
        SMT2_DIR.reset(token)


def ask(hyps, goal, timeout_ms: int, title: str | None = None):
    """(answer, seconds, solver, the SMT-LIB file written or None) of Z3 asked for a model of the
    hypotheses without the goal; the file, named by `title`, where `exporting` names a directory
    (no title: a query that is not a check, such as the assumptions' satisfiability, is not written)."""
    import z3

    from ringproof.proofs.ring import smtlib

    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(*hyps, z3.Not(goal))
    t0 = time.perf_counter()
    answer = s.check()
    seconds, directory = time.perf_counter() - t0, SMT2_DIR.get() if title is not None else None
    path = smtlib.write(directory, title, None, smtlib.script(title, [], hyps, z3.Not(goal), [])) if directory else None
    return answer, seconds, s, path


def settle(part: str, name: str, hyps, goal, timeout_ms: int, detail: str) -> CompositionLemma:
    """The lemma `name` (of `part`) settled by Z3: proved where no model of `hyps` breaks `goal`."""
    import z3

    answer, seconds, s, path = ask(hyps, goal, timeout_ms, name)
    files = (path,) if path else ()
    if answer == z3.unsat:
        return CompositionLemma(name, True, seconds, f"proved: {detail}", part, files)
    if answer == z3.sat:
        return CompositionLemma(name, False, seconds, f"refuted: {s.model()}", part, files)
    return CompositionLemma(name, False, seconds, f"unknown: {s.reason_unknown()}", part, files)


def prove_pairs(causal: bool = True, disjoint: bool = True, timeout_ms: int = 10_000) -> CompositionLemma:
    """The pairs step; `disjoint=False`: the mutant whose new document starts one token early
    (overlapping the last earlier token), refuted."""
    import z3

    I = z3.IntSort()
    doc = z3.Function("doc", I, I)                    # document number of an earlier token
    cnt_a = z3.Function("cnt_A", I, I, I)             # how often the earlier documents compute (q, k)
    cnt_b = z3.Function("cnt_B", I, I, I)             # how often the new document does
    c, L, D, q, k = z3.Ints("c L D q k")
    start = c if disjoint else c - 1

    def seen(a, b):
        return z3.And(b <= a) if causal else z3.BoolVal(True)

    def new_doc(t):
        return z3.If(t < c, doc(t), D + 1)

    def pair_a(a, b):                                 # a document-causal pair of [0, c)
        return z3.And(0 <= b, b < c, 0 <= a, a < c, doc(a) == doc(b), seen(a, b))

    def pair_b(a, b):                                 # a causal pair of the new document
        return z3.And(start <= b, b < start + L, start <= a, a < start + L, seen(a, b))

    hyps = [c >= 0, L >= 1, D >= 1, c > 0 if not disjoint else z3.BoolVal(True),
            z3.Implies(z3.And(0 <= q, q < c), z3.And(1 <= doc(q), doc(q) <= D)),   # earlier: 1..D
            z3.Implies(z3.And(0 <= k, k < c), z3.And(1 <= doc(k), doc(k) <= D)),
            cnt_a(q, k) == z3.If(pair_a(q, k), 1, 0),                               # instantiated at (q, k)
            cnt_b(q, k) == z3.If(pair_b(q, k), 1, 0)]
    total = cnt_a(q, k) + cnt_b(q, k)
    want = z3.And(0 <= k, k < c + L, 0 <= q, q < c + L, new_doc(q) == new_doc(k), seen(q, k))
    goal = total == z3.If(want, 1, 0)
    kind = "document-causal" if causal else "document-local"
    part = "pairs" + ("" if disjoint else " (overlapping documents)")
    return settle(part, f"varlen composition: {kind} {part}", hyps, goal, timeout_ms,
                  f"each {kind} pair of D + 1 documents computed exactly once, given it for D and the new one")


def prove_slots(timeout_ms: int = 10_000) -> CompositionLemma:
    """The slots step: a slot of an earlier document (below the running end o) and one of the new
    document ([o, o + k)) never meet, and the new running end is o + k."""
    import z3

    o, k, a, b, lo, hi = z3.Ints("o k a b lo hi")
    hyps = [o >= 0, k >= 1, 0 <= lo, lo <= a, a < hi, hi <= o,      # an earlier document's slot a
            o <= b, b < o + k]                                      # the new document's slot b
    goal = z3.And(a != b, b < o + k, a < o + k)
    return settle("local slots", "varlen composition: local slots", hyps, goal, timeout_ms,
                  "a rank's slots of distinct documents are disjoint, the packing's end moves by L/m")


def prove_loads(timeout_ms: int = 10_000) -> CompositionLemma:
    """The loads step: a rank's ops over D + 1 documents are its ops over D plus the new one's,
    and where neither depends on the rank, their sum does not (spread 0 stays 0)."""
    import z3

    I = z3.IntSort()
    f = z3.Function("load_A", I, I)       # ops of rank r over the earlier documents
    g = z3.Function("load_B", I, I)       # ops of rank r for the new document
    r1, r2, F, G = z3.Ints("r1 r2 F G")
    hyps = [f(r1) == F, f(r2) == F, g(r1) == G, g(r2) == G]
    goal = f(r1) + g(r1) == f(r2) + g(r2)
    return settle("loads", "varlen composition: loads", hyps, goal, timeout_ms,
                  "per-rank loads add over documents; a sum of rank-independent loads is rank-independent")


def prove_filter(timeout_ms: int = 10_000) -> CompositionLemma:
    """The padded document: the base computes each causal pair of the padded document once; the
    mask keeps a pair exactly when both tokens are real (its obligation), so each causal pair of
    real tokens is computed once and no pair with a padded token is."""
    import z3

    I, B = z3.IntSort(), z3.BoolSort()
    cnt = z3.Function("cnt", I, I, I)             # the base's count of (q, k) in the padded document
    real = z3.Function("real", I, B)
    c, L, q, k = z3.Ints("c L q k")
    pair = z3.And(c <= k, k <= q, q < c + L)
    kept = z3.If(z3.And(real(q), real(k)), cnt(q, k), 0)
    hyps = [L >= 1, cnt(q, k) == z3.If(pair, 1, 0)]
    goal = kept == z3.If(z3.And(pair, real(q), real(k)), 1, 0)
    return settle("padding masked", "varlen composition: padding masked", hyps, goal, timeout_ms,
                  "each causal pair of real tokens computed once, none with a padded token")


def lemma(causal: bool = True, padded: bool = False) -> list[CompositionLemma]:
    """Every part the varlen proofs cite."""
    return [prove_pairs(causal), prove_slots(), prove_loads()] + ([prove_filter()] if padded else [])


def cited(causal: bool = True, padded: bool = False) -> dict:
    """{name: proved?} of the lemma's parts, as a proof that rests on them lists them."""
    return {part.name: part.proved for part in lemma(causal, padded)}
