"""`prove llama3` / `prove llama3-varlen`: every property for every m, T and lengths vector.

Each result rests on the obligations (a generic rank and document), the composition lemma over
(rank, document) segments and the concrete sweep: every packing with D ≤ 3, T ≤ 16, m ≤ 4 (m | T)
run on the all-gather model, whose pairs per rank must equal the closed forms, whose data held per
rank must equal the memory form and whose numerics must match the dense per-document reference.
Proved only where every part is; a packing where the run differs refutes the property it breaks
(smallest first, replayed); a part not shown leaves the verdict unknown.
"""

from __future__ import annotations

import itertools
import time

from ringproof.model.allgather import rules
from ringproof.proofs.results import Counterexample, Result, Verdict

MAX_DOCS, MAX_RANKS, SWEEP_TOKENS, TOLERANCE = 3, 4, 16, 1e-9

# (property, phase) -> the obligations and lemma parts it rests on
ROWS = {
    ("well-formed", "ranks"): ("ranks",),
    ("coverage", "forward"): ("ranks", "segment queries", "segment keys", "segments"),
    ("coverage", "backward"): ("ranks", "segment queries", "segment keys", "segments"),
    ("data-flow", "all-gather"): ("ranks", "gathered keys"),
    ("placement", "forward"): ("ranks", "segment queries", "segments"),
    ("placement", "backward"): ("ranks", "segment queries", "segments"),
    ("counts", "pairs"): ("segment queries", "segment keys", "segments"),
    ("counts", "balance"): ("segment queries", "segment keys"),
    ("counts", "memory"): ("ranks",),
}
BROKEN = {"coverage": ("coverage", "forward"), "placement": ("placement", "forward"),
          "data-flow": ("data-flow", "all-gather"), "well-formed": ("well-formed", "ranks"),
          "counts": ("counts", "pairs"), "memory": ("counts", "memory"), "numerics": ("coverage", "backward")}


def segment_pairs(q_lo, q_hi, c):
    """Pairs of one segment: Σ_{q = q_lo}^{q_hi − 1} (q − c + 1), keys [c, q] per query."""
    return (q_hi - q_lo) * (q_hi + q_lo + 1 - 2 * c) // 2


def rank_pairs(t, lengths, m, r) -> int:
    """Pairs on rank r: the sum of its segments' closed forms."""
    return sum(segment_pairs(qa, qb, t.documents(lengths)[i - 1].c) for i, qa, qb, _, _ in t.segments(lengths, m, r))


LLAMA3_RANK = "S**2*r + S*(S + 1)/2"        # rank r (0-based) of llama3
LLAMA3_SPREAD = "(m - 1)*S**2"
MEMORY = {"forward": "2*T*d + 2*S*d", "backward": "4*T*d + 6*S*d"}


def closed_forms() -> dict:
    """The sympy identities the figures rest on: each segment's sum, llama3's rank form, its
    total, increase and spread; False where one fails."""
    import sympy

    q, qa, qb, c, S, r, m, T, d = sympy.symbols("q q_lo q_hi c S r m T d", integer=True)
    seg = sympy.summation(q - c + 1, (q, qa, qb - 1))
    f = sympy.sympify(LLAMA3_RANK, locals={"S": S, "r": r})
    checks = {
        "segment sum": sympy.simplify(seg - (qb - qa) * (qb + qa + 1 - 2 * c) / 2) == 0,
        "llama3 rank": sympy.simplify(seg.subs({qa: r * S, qb: (r + 1) * S, c: 0}) - f) == 0,
        "llama3 total": sympy.simplify(sympy.summation(f, (r, 0, m - 1)) - (m * S) * (m * S + 1) / 2) == 0,
        "llama3 increase": sympy.simplify(f.subs(r, r + 1) - f - S ** 2) == 0,
        "llama3 spread": sympy.simplify(f.subs(r, m - 1) - f.subs(r, 0) - sympy.sympify(LLAMA3_SPREAD, locals={"m": m, "S": S})) == 0,
        "memory": all(sympy.simplify(sum(rules.memory(T, S, d, b).values()) - sympy.sympify(MEMORY[k], locals={"T": T, "S": S, "d": d})) == 0
                      for k, b in (("forward", False), ("backward", True))),
    }
    return checks


def packings(t, max_tokens: int):
    out = []
    for m in range(1, MAX_RANKS + 1):
        for D in range(1, 2 if t.single else MAX_DOCS + 1):
            out += [(L, m) for L in itertools.product(range(1, max_tokens + 1), repeat=D)
                    if sum(L) <= max_tokens and sum(L) % m == 0]
    return sorted(out, key=lambda x: (sum(x[0]), len(x[0]), x[1], x[0]))


def sweep(t, max_tokens: int = SWEEP_TOKENS):
    """(packings run, the first differing run or None)."""
    from ringproof.model.allgather.run import AllGatherRun, run

    todo = packings(t, max_tokens)
    for lengths, m in todo:
        got = run(t, lengths, m, d=2, numerics=sum(lengths) <= 10)
        label = f"lengths {','.join(map(str, lengths))}, m={m}"
        if got.first_difference is None:
            worst = max(got.error.values(), default=0.0)
            S, T = sum(lengths) // m, sum(lengths)
            want = [rank_pairs(t, lengths, m, r) for r in range(m)]
            if t.single:
                want = [S * S * r + S * (S + 1) // 2 for r in range(m)]
            total = sum(L * (L + 1) // 2 for L in lengths)
            if worst > TOLERANCE:
                name = max(got.error, key=got.error.get)
                got = AllGatherRun(lengths, m, 2, f"{label}: {name} differs from the reference by {worst:.3g}", "numerics")
            elif got.pairs != want or sum(got.pairs) != total:
                got = AllGatherRun(lengths, m, 2, f"{label}: pairs per rank {got.pairs} run, {want} by the closed "
                                   f"forms ({total} in all)", "counts")
            elif any(sum(f.values()) != 2 * T * 2 + 2 * S * 2 or sum(b.values()) != 4 * T * 2 + 6 * S * 2
                     for f, b in got.held):
                got = AllGatherRun(lengths, m, 2, f"{label}: data held per rank differs from {MEMORY}", "memory")
        if got.first_difference is not None:
            return len(todo), got
    return len(todo), None


def prove(t, max_tokens: int = SWEEP_TOKENS) -> list[Result]:
    """The Result rows of target `t`, each at tier parametric."""
    from ringproof.proofs.allgather import composition, obligations

    t0 = time.perf_counter()
    parts = {o.part: o for o in obligations.obligations(t)}
    parts.update({p.part: p for p in composition.lemma()})
    forms = closed_forms()
    n, failed = sweep(t, max_tokens)
    bounds = f"every packing with D ≤ {1 if t.single else MAX_DOCS}, T ≤ {max_tokens}, m ≤ {MAX_RANKS} ({n})"
    seconds = time.perf_counter() - t0
    results = []
    for (prop, phase), needs in ROWS.items():
        lemmas = sorted(f"{t.name}: {k}" if k != "segments" else parts[k].name for k in needs)
        verdict, reason, cex = Verdict.PROVED, "", None
        missing = [k for k in needs if not parts[k].proved]
        if prop == "counts" and not all(forms.values()):
            missing.append("closed forms: " + ", ".join(k for k, ok in forms.items() if not ok))
        if failed is not None and BROKEN[failed.broken] == (prop, phase):
            verdict, reason = Verdict.REFUTED, f"the all-gather model differs: {failed.first_difference}"
            cex = Counterexample(n=sum(failed.lengths), m=failed.m, check=f"all-gather model: {failed.broken}",
                                 message=failed.first_difference.split(": ", 1)[1],
                                 replay={"lengths": list(failed.lengths), "replayed": True}, d=failed.d)
        elif missing:
            what = parts.get(missing[0])
            verdict, reason = Verdict.UNKNOWN, f"rests on {missing[0]}, not shown" + (f" ({what.detail})" if what else "")
        elif failed is not None:
            verdict, reason = Verdict.UNKNOWN, f"the all-gather model differs on another property: {failed.first_difference}"
        details = figures(t) if (prop, phase) == ("counts", "pairs") else {}
        if details:
            details["checked"] = f"{bounds} on the all-gather model: pairs per rank, data held, numerics"
        results.append(Result(prop, phase, verdict, "parametric", seconds / len(ROWS), reason, cex,
                              details=details, solver={"lemmas": lemmas, "closed forms": forms}))
    return results


def figures(t) -> dict:
    """The closed forms, JSON-ready."""
    seg = "Σ over rank r's segments (q_lo, q_hi, c) of (q_hi − q_lo)(q_hi + q_lo + 1 − 2c)/2"
    return {"pairs": "Sum(L[i]*(L[i] + 1)/2, (i, 1, D))" if not t.single else "T*(T + 1)/2",
            "per_rank": LLAMA3_RANK if t.single else seg,
            "spread": LLAMA3_SPREAD if t.single else None,
            "memory_per_rank": dict(MEMORY),
            "traffic_per_rank": {"all-gather k, v": "2*(m - 1)*S*d", "reduce-scatter dk, dv": "2*(m - 1)*S*d"}}


def readable(t, details: dict) -> str:
    lines = [f"pairs computed = {'T(T + 1)/2' if t.single else 'Σ_i L_i(L_i + 1)/2'} (each document-causal pair once, per head group)"]
    if t.single:
        lines.append("balance: rank r (0-based) computes S·r·S + S(S + 1)/2 pairs; spread (max − min) = (m − 1)·S² "
                     "(no load balance: the last rank does the most)")
    else:
        lines.append(f"balance: pairs on rank r = {details['per_rank']}; spread not in closed form (it depends on the packing)")
    lines.append("memory per rank: forward 2·T·d (K, V gathered) + 2·S·d (its q, out); backward 4·T·d (K, V, and "
                 "the dK, dV buffers before the reduce-scatter) + 6·S·d")
    lines.append("traffic per rank: all-gather receives 2(m − 1)·S·d (K, V); reduce-scatter 2(m − 1)·S·d (dk, dv)")
    lines.append(f"checked: {details.get('checked', '')}")
    return "\n".join(lines)
