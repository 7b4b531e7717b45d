"""What the composition lemma needs of a varlen schedule, proved per schedule for a generic document.

A generic document: its length n a multiple of the base's unit (n = m·k; zigzag's k = 2h), its
offset c ≥ 0 and first local slot o ≥ 0, its index i of D documents and (padded) its real length
1 ≤ real ≤ n, all symbolic. The schedule's own formulas (`Varlen.token`, `owner`, `slot`, `mask`)
are evaluated on Z3 terms (the DSL helpers' Z3 backend) and shown to be the base's shifted:

- token: rank r's slot j of the document is token c + base.token(r, j): the document's tokens are
  the base's at its offset, so they lie in [c, c + n) (each document contiguous in the packed
  order) and the base's proof holds for them;
- owner/slot: every token t of the document is on the base's rank of t − c, in local slot o + the
  base's slot of t − c (the document's slots on a rank are [o, o + k): after the earlier ones);
- mask: for a query and a key token of two documents (the same one, or an earlier and a later one
  at disjoint offsets), the mask is exactly "same document, k ≤ q" (without k ≤ q for a base with
  no mask; and both tokens real where the schedule pads).

Z3 answers each for every size at once; a model (or no answer) is not a refutation by itself:
`prove` then searches the packings in order for the smallest where the run differs.
"""

from __future__ import annotations

from dataclasses import dataclass

from ringproof.schedules.expr import Backend, extra_backend


def z3_backend():
    import z3

    return Backend(
        "z3", lambda x: isinstance(x, z3.ExprRef),
        mod=lambda a, b: a % b, div=lambda a, b: a / b, ite=z3.If,     # Z3's / and % floor for b > 0
        eq=lambda a, b: a == b, lt=lambda a, b: a < b, le=lambda a, b: a <= b,
        and_=z3.And, or_=z3.Or, not_=z3.Not,
    )


@dataclass(frozen=True)
class Obligation:
    name: str
    proved: bool
    seconds: float
    detail: str
    model: dict | None = None      # Z3's model where it found one: sizes to start the search from
    part: str = ""                 # what it is of (token, owner and slot, mask): the key citers use
    smt2: tuple = ()               # the SMT-LIB files its queries were written to (`composition.exporting`)


def _generic(v, z3, suffix: str = ""):
    """A generic document's record (Z3 terms) and the facts its sizes satisfy."""
    from ringproof.schedules.documents import document

    m, k, c, o, i, D, real, d = z3.Ints(" ".join(f"{x}{suffix}" for x in ("m", "k", "c", "o", "i", "D", "real", "d")))
    facts = [m >= 1, k >= 1, c >= 0, o >= 0, i >= 1, i <= D, d >= 1]
    derived = {}
    if v.unit(2) == 4:                    # the base halves each rank's share: k = 2h
        h = z3.Int(f"h{suffix}")
        facts += [h >= 1, k == 2 * h]
        derived["h"] = h
    n = m * k
    facts += [real >= 1, real <= n] if v.padded else [real == n]
    P = document(v.base, n, m, c=c, o=o, i=i, D=D, d=d, real=real, k=k, kd=k, **derived)
    return P, facts


def check(t, part: str, facts, goal, timeout_ms: int, detail: str) -> Obligation:
    """Target `t`'s obligation of `part` settled by Z3 on a generic document (or segment) of `facts`:
    proved on unsat, after the facts alone are shown satisfiable (an empty space proves nothing); a
    model's integer constants kept (its function interpretations, e.g. of division by a symbol, are
    not sizes)."""
    import z3

    from ringproof.proofs.varlen.composition import ask

    name = f"{t.name}: {part}"
    alone, _, _, _ = ask(facts, z3.BoolVal(False), timeout_ms)      # not written: `--smt2` holds the checks
    if alone != z3.sat:
        return Obligation(name, False, 0.0, f"not shown: the assumptions alone are {alone} (vacuous)", part=part)
    answer, seconds, s, path = ask(facts, goal, timeout_ms, name)
    files = (path,) if path else ()
    if answer == z3.unsat:
        return Obligation(name, True, seconds, f"proved: {detail}", part=part, smt2=files)
    if answer == z3.sat:
        model = s.model()
        values = {str(x): model[x].as_long() for x in model.decls() if x.arity() == 0 and x.range() == z3.IntSort()}
        return Obligation(name, False, seconds, f"Z3 found a generic case where it fails: {values}", values, part, files)
    return Obligation(name, False, seconds, f"not shown: Z3 answered {s.reason_unknown() or answer}", part=part,
                      smt2=files)


def token_shift(v, timeout_ms: int = 10_000) -> Obligation:
    import z3

    with extra_backend(z3_backend()):
        P, facts = _generic(v, z3)
        r, j = z3.Ints("r j")
        facts += [0 <= r, r < P.m, 0 <= j, j < P.k]
        goal = v.token(P, r, j) == P.c + v.base.layout.token(P, r, j)
    return check(v, "token", facts, goal, timeout_ms,
                  "rank r's slot j of a document is the base's token at the document's offset")


def owner_slot_shift(v, timeout_ms: int = 10_000) -> Obligation:
    import z3

    with extra_backend(z3_backend()):
        P, facts = _generic(v, z3)
        t = z3.Int("t")
        facts += [P.c <= t, t < P.c + P.n]
        lay = v.base.layout
        goal = z3.And(v.owner(P, t) == lay.owner(P, t - P.c), v.slot(P, t) == P.o + lay.slot(P, t - P.c))
    return check(v, "owner and slot", facts, goal, timeout_ms,
                  "each token t of a document is on the base's rank of t − c, in slot o + the base's slot")


def mask_exact(v, timeout_ms: int = 10_000) -> Obligation:
    import z3

    with extra_backend(z3_backend()):
        A, facts_a = _generic(v, z3, "_q")
        B, facts_b = _generic(v, z3, "_k")
        q, k, same = z3.Int("q"), z3.Int("kt"), z3.Bool("same")
        facts = facts_a + facts_b + [A.m == B.m, A.D == B.D, A.d == B.d]
        # the same document, or two at disjoint offsets in the order of their indices
        same_doc = z3.And(A.i == B.i, A.c == B.c, A.o == B.o, A.k == B.k, A.real == B.real)
        apart = z3.And(A.i != B.i, z3.Implies(A.i < B.i, A.c + A.n <= B.c), z3.Implies(B.i < A.i, B.c + B.n <= A.c))
        facts += [z3.If(same, same_doc, apart), A.c <= q, q < A.c + A.n, B.c <= k, k < B.c + B.n]
        want = z3.And(same, k <= q) if v.causal else same
        if v.padded:
            want = z3.And(want, q - A.c < A.real, k - B.c < B.real)
        got = v.mask(A, B, q, k)
        got = got if isinstance(got, z3.ExprRef) else z3.BoolVal(bool(got))
        goal = got == want
    kind = "same document, k ≤ q" if v.causal else "same document"
    return check(v, "mask", facts, goal, timeout_ms,
                  f"the mask is exactly '{kind}'" + (", both tokens real" if v.padded else ""))


def obligations(v) -> list[Obligation]:
    return [token_shift(v), owner_slot_shift(v), mask_exact(v)]
