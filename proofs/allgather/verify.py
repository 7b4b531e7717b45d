"""`prove llama3` / `prove llama3-varlen`: every property for every m, T and lengths vector.

Each result rests on the obligations (a generic rank, document and head), the composition lemmas
over (rank, document) segments and the concrete sweep: every packing with D ≤ 3, T ≤ 16, m ≤ 4
(m | T) run on the all-gather model with GQA head groups, and the small packings under several
head layouts, whose pairs per rank and spread must equal the closed forms, whose measured data
held per rank must equal the memory forms and whose numerics must match the dense per-document
reference. Proved only where every part is; a packing where the run differs refutes the property
it breaks (smallest first, replayed on the model again); a part not shown leaves the verdict
unknown.
"""

from __future__ import annotations

import itertools
import time
from types import SimpleNamespace

from ringproof.model.allgather import rules
from ringproof.proofs.results import Counterexample, Result, Verdict

MAX_DOCS, MAX_RANKS, SWEEP_TOKENS, NUMERICS_TOKENS, TOLERANCE = 3, 4, 16, 10, 1e-9
HEAD_LAYOUTS = ((1, 1, 1), (2, 1, 1), (2, 2, 1), (4, 2, 2), (6, 3, 1), (6, 6, 2))   # H, Hk, s
HEAD_TOKENS = 6                        # the head layouts run on every packing up to this T

# (property, phase) -> the obligations and lemma parts it rests on
ROWS = {
    ("well-formed", "ranks"): ("ranks",),
    ("coverage", "forward"): ("ranks", "segment queries", "segment keys", "head groups", "segments"),
    ("coverage", "backward"): ("ranks", "segment queries", "segment keys", "head groups", "segments"),
    ("data-flow", "all-gather"): ("ranks", "gathered keys", "head groups"),
    ("placement", "forward"): ("ranks", "segment queries", "segments"),
    ("placement", "backward"): ("ranks", "segment queries", "segments"),
    ("counts", "pairs"): ("segment queries", "segment keys", "segments"),
    ("counts", "balance"): ("segment queries", "segment keys", "segments", "balance"),
    ("counts", "memory"): ("ranks",),
}
BROKEN = {"coverage": ("coverage", "forward"), "placement": ("placement", "forward"),
          "data-flow": ("data-flow", "all-gather"), "well-formed": ("well-formed", "ranks"),
          "counts": ("counts", "pairs"), "balance": ("counts", "balance"), "memory": ("counts", "memory"),
          "numerics": ("coverage", "backward")}
assert {p for p in BROKEN.values()} <= set(ROWS)


def segment_pairs(q_lo, q_hi, c):
    """Pairs of one segment: Σ_{q = q_lo}^{q_hi − 1} (q − c + 1), keys [c, q] per query."""
    return (q_hi - q_lo) * (q_hi + q_lo + 1 - 2 * c) // 2


def rank_pairs(t, lengths, m, r) -> int:
    """Pairs on rank r (per query head): the sum of its segments' closed forms."""
    docs = t.documents(lengths)
    return sum(segment_pairs(qa, qb, docs[i - 1].c) for i, qa, qb, _, _ in t.segments(lengths, m, r))


def packing_spread(t, lengths, m) -> int:
    """The spread of a packing by the closed forms: max − min over ranks of `rank_pairs`."""
    per = [rank_pairs(t, lengths, m, r) for r in range(m)]
    return max(per) - min(per)


def _symbols():
    import sympy

    names = "q q_lo q_hi c S r m T d H Hk s"
    return dict(zip(names.split(), sympy.symbols(names, integer=True, positive=True)))


def derived() -> SimpleNamespace:
    """The figures, derived by sympy: llama3's rank form (its segment sum with c = 0 and the
    rank's range), its increase from rank to rank, and from that its spread (the increase S² > 0,
    so the last rank does the most, the first the least); the memory peaks, the sums of the arrays
    `rules.memory` holds."""
    import sympy

    x = _symbols()
    q, qa, qb, c, S, r, m, T, d = (x[k] for k in "q q_lo q_hi c S r m T d".split())
    seg = sympy.summation(q - c + 1, (q, qa, qb - 1))
    rank = sympy.factor(sympy.simplify(seg.subs({qa: r * S, qb: (r + 1) * S, c: 0})))
    increase = sympy.factor(sympy.simplify(rank.subs(r, r + 1) - rank))
    spread = sympy.factor(sympy.simplify(rank.subs(r, m - 1) - rank.subs(r, 0)))
    Hd = SimpleNamespace(H=x["H"], Hk=x["Hk"], s=x["s"])
    memory = {k: sympy.factor(sum(rules.memory(T, S, d, Hd, b).values())) for k, b in (("forward", False), ("backward", True))}
    exprs = {"rank": rank, "spread": spread, **memory}
    exact = {}
    for name, e in exprs.items():         # numerator (integer coefficients) over an integer: exact on ints
        num, den = sympy.fraction(sympy.together(sympy.expand(e)))
        names = sorted(str(v) for v in e.free_symbols)
        exact[name] = (names, sympy.lambdify([x[k] for k in names], sympy.expand(num), modules=[]), int(den))

    def at(name, **sizes):
        """The form `name` at integer sizes (an int: each form is integer-valued there)."""
        names, num, den = exact[name]
        value = num(*(sizes[k] for k in names))
        if value % den:
            raise AssertionError(f"{name} = {exprs[name]} is {value}/{den} at {sizes}, not an integer")
        return value // den
    return SimpleNamespace(segment=seg, rank=rank, increase=increase, spread=spread, memory=memory, at=at)


def closed_forms(forms=None) -> dict:
    """The sympy identities the figures rest on; False where one fails."""
    import sympy

    f = forms or derived()
    x = _symbols()
    q, qa, qb, c, S, r, m, T = (x[k] for k in "q q_lo q_hi c S r m T".split())
    return {
        "segment sum": sympy.simplify(f.segment - (qb - qa) * (qb + qa + 1 - 2 * c) / 2) == 0,
        "llama3 total": sympy.simplify(sympy.summation(f.rank, (r, 0, m - 1)) - (m * S) * (m * S + 1) / 2) == 0,
        "llama3 increase positive": f.increase.is_positive is True,        # S is a positive symbol
        "llama3 increase constant": f.increase.free_symbols <= {S},
    }


def shown(expr) -> str:
    """A form as a reader writes it: S²·r, (m − 1)."""
    out = str(expr).replace("**2", "²").replace("**3", "³").replace("*", "·")
    return out.replace(" - ", " − ")


def packings(t, max_tokens: int):
    out = []
    for m in range(1, MAX_RANKS + 1):
        for D in range(1, 2 if t.single else MAX_DOCS + 1):
            out += [(L, m) for L in itertools.product(range(1, max_tokens + 1), repeat=D)
                    if sum(L) <= max_tokens and sum(L) % m == 0]
    return sorted(out, key=lambda x: (sum(x[0]), len(x[0]), x[1], x[0]))


def _difference(t, got, forms, Hd) -> tuple[str, str] | None:
    """(property, what differs) between a valid run and the closed forms, or None."""
    lengths, m = got.lengths, got.m
    T, S, d = sum(lengths), sum(lengths) // m, got.d
    worst = max(got.error.values(), default=0.0)
    if worst > TOLERANCE:
        name = max(got.error, key=got.error.get)
        return "numerics", f"{name} differs from the reference by {worst:.3g}"
    want = [rank_pairs(t, lengths, m, r) for r in range(m)]
    if t.single:
        want = [forms.at("rank", S=S, r=r) for r in range(m)]
    total = sum(L * (L + 1) // 2 for L in lengths)
    if got.pairs != want or sum(got.pairs) != total:
        return "counts", f"pairs per rank {got.pairs} run, {want} by the closed forms ({total} in all)"
    spread = max(got.pairs) - min(got.pairs)
    bound = forms.at("spread", m=m, S=S)
    if spread != max(want) - min(want) or spread > bound or (t.single and spread != bound):
        return "balance", f"spread {spread} run; {bound} = {shown(forms.spread)} " + \
            ("by the closed form" if t.single else "bounds it")
    for r, ((f, b), (pf, pb)) in enumerate(zip(got.held, got.peak)):
        for name, backward, held, peak in (("forward", False, f, pf), ("backward", True, b, pb)):
            form = rules.memory(T, S, d, Hd, backward)
            total_form = forms.at(name, T=T, S=S, d=d, H=Hd.H, Hk=Hd.Hk, s=Hd.s)
            if held != form or peak != total_form:
                return "memory", (f"rank {r} held {peak} elements at its {name} peak ({held}), the memory "
                                  f"form gives {total_form}")
    if got.received[0] != rules.received(m, S, d, Hd):
        return "memory", f"rank 0 received {got.received[0]}, the rules give {rules.received(m, S, d, Hd)}"
    return None


def case(t, lengths, m, Hd, forms, numerics: bool = True, d: int = 2, seed: int = 0):
    """The model's run of one packing, with the closed forms' difference folded in: what the
    sweep checks, `prove simulate` and `--tier bounded` replay."""
    from ringproof.model.allgather.run import AllGatherRun, run

    got = run(t, lengths, m, d=d, seed=seed, heads=Hd, numerics=numerics)
    if got.first_difference is None:
        found = _difference(t, got, forms, Hd)
        if found is not None:
            label = f"lengths {','.join(map(str, lengths))}, m={m}"
            heads = "" if (Hd.H, Hd.Hk, Hd.s) == _default() else f" (H={Hd.H}, Hk={Hd.Hk}, s={Hd.s})"
            return AllGatherRun(lengths, m, d, f"{label}{heads}: {found[1]}", found[0], heads=(Hd.H, Hd.Hk, Hd.s))
    return got


def _default():
    from ringproof.model.allgather.run import DEFAULT_HEADS
    return DEFAULT_HEADS


def sweep(t, max_tokens: int = SWEEP_TOKENS, forms=None):
    """(runs made, the first differing run or None): every packing under the default heads,
    then the small ones under each of HEAD_LAYOUTS."""
    forms = forms or derived()
    todo = packings(t, max_tokens)
    cases = [(lengths, m, rules.heads(*_default())) for lengths, m in todo]
    cases += [(lengths, m, rules.heads(*h)) for h in HEAD_LAYOUTS for lengths, m in todo if sum(lengths) <= HEAD_TOKENS]
    for done, (lengths, m, Hd) in enumerate(cases, 1):
        got = case(t, lengths, m, Hd, forms, numerics=sum(lengths) <= NUMERICS_TOKENS)
        if got.first_difference is not None:
            return done, got
    return len(cases), None


def replay(t, failed, forms=None):
    """The failing run made again from the counterexample's sizes alone, as the sweep made it:
    (whether it differs in the same words, the run)."""
    Hd = rules.heads(*failed.heads)
    again = case(t, failed.lengths, failed.m, Hd, forms or derived(), numerics=sum(failed.lengths) <= NUMERICS_TOKENS)
    return again.first_difference == failed.first_difference, again


def prove(t, max_tokens: int = SWEEP_TOKENS, smt2_dir: str | None = None) -> list[Result]:
    """The Result rows of target `t`, each at tier parametric; `smt2_dir`: where its Z3 queries
    are also written as SMT-LIB 2 (`prove --smt2`)."""
    from ringproof.proofs.allgather import composition, obligations
    from ringproof.proofs.varlen.composition import exporting

    with exporting(smt2_dir):
        parts = {o.part: o for o in obligations.obligations(t)}
        parts.update({p.part: p for p in composition.lemma()})
    forms = derived()
    checks = closed_forms(forms)
    t1 = time.perf_counter()
    n, failed = sweep(t, max_tokens, forms)
    again = replay(t, failed, forms) if failed is not None else None
    sweep_seconds = time.perf_counter() - t1
    bounds = f"every packing with D ≤ {1 if t.single else MAX_DOCS}, T ≤ {max_tokens}, m ≤ {MAX_RANKS}"
    results = []
    for (prop, phase), needs in ROWS.items():
        lemmas = sorted(f"{t.name}: {k}" if k not in ("segments", "balance") else parts[k].name for k in needs)
        verdict, reason, cex = Verdict.PROVED, "", None
        missing = [k for k in needs if not parts[k].proved]
        if prop == "counts" and not all(checks.values()):
            missing.append("closed forms: " + ", ".join(k for k, ok in checks.items() if not ok))
        if failed is not None and BROKEN[failed.broken] == (prop, phase):
            ok, rerun = again
            verdict, reason = Verdict.REFUTED, f"the all-gather model differs: {failed.first_difference}"
            if not ok:
                verdict, reason = Verdict.UNKNOWN, (f"the all-gather model differed once ({failed.first_difference}) "
                                                    f"but not on replay ({rerun.first_difference or 'valid'})")
            cex = Counterexample(n=sum(failed.lengths), m=failed.m, check=f"all-gather model: {failed.broken}",
                                 message=failed.first_difference.split(": ", 1)[1],
                                 replay={"lengths": list(failed.lengths), "heads": list(failed.heads),
                                         "replayed": ok, "first_difference": rerun.first_difference},
                                 d=failed.d)
        elif missing:
            what = parts.get(missing[0])
            verdict, reason = Verdict.UNKNOWN, f"rests on {missing[0]}, not shown" + (f" ({what.detail})" if what else "")
        elif failed is not None:
            verdict, reason = Verdict.UNKNOWN, f"the all-gather model differs on another property: {failed.first_difference}"
        details = figures(t, forms) if (prop, phase) == ("counts", "pairs") else {}
        if details:
            details["checked"] = (f"{bounds} ({n} runs, head layouts H, Hk, s ∈ {list(HEAD_LAYOUTS)} up to T ≤ "
                                  f"{HEAD_TOKENS}) on the all-gather model: pairs per rank, spread, measured data "
                                  "held, numerics")
        seconds = sum(parts[k].seconds for k in needs) + sweep_seconds / len(ROWS)
        files = [f for k in needs for f in parts[k].smt2]
        results.append(Result(prop, phase, verdict, "parametric", seconds, reason, cex, details=details,
                              solver={"lemmas": lemmas, "closed forms": checks, **({"smt2": files} if files else {})}))
    return results


def figures(t, forms=None) -> dict:
    """The closed forms, JSON-ready (sympy text)."""
    f = forms or derived()
    seg = "Σ over rank r's segments (q_lo, q_hi, c) of (q_hi − q_lo)(q_hi + q_lo + 1 − 2c)/2"
    return {"pairs": "Sum(L[i]*(L[i] + 1)/2, (i, 1, D))" if not t.single else "T*(T + 1)/2",
            "per_rank": str(f.rank) if t.single else seg,
            "spread": str(f.spread) if t.single else None,
            "spread_bound": str(f.spread),
            "memory_per_rank": {k: str(v) for k, v in f.memory.items()},
            "traffic_per_rank": {k: str(v) for k, v in rules.received(*_symbols_of("m S d"), _heads_symbols()).items()}}


def _symbols_of(names: str):
    x = _symbols()
    return [x[k] for k in names.split()]


def _heads_symbols():
    x = _symbols()
    return SimpleNamespace(H=x["H"], Hk=x["Hk"], s=x["s"])


def readable(t, details: dict) -> str:
    per, bound = shown(details["per_rank"]), shown(details["spread_bound"])
    lines = [f"pairs computed = {'T(T + 1)/2' if t.single else 'Σ_i L_i(L_i + 1)/2'} per query head (each "
             "document-causal pair once, in each head group)"]
    if t.single:
        lines.append(f"balance: rank r (0-based) computes {per} pairs; spread (max − min) = {shown(details['spread'])} "
                     "(no load balance: the last rank does the most)")
    else:
        lines.append(f"balance: pairs on rank r = {per}; spread = max − min of those, at most {bound} for every "
                     "lengths vector (one document attains it)")
    mem = details["memory_per_rank"]
    lines.append(f"memory per rank (peak, elements): forward {shown(mem['forward'])}; backward {shown(mem['backward'])} "
                 "(H query heads, Hk KV heads, s gathered at a time: the two T·s·d buffers of K and V of a head "
                 "group, this one's and the next one's, whatever m)")
    lines.append("traffic per rank: all-gather receives " + "; reduce-scatter ".join(
        shown(v) for v in details["traffic_per_rank"].values()) + " (K, V; dk, dv)")
    lines.append(f"checked: {details.get('checked', '')}")
    return "\n".join(lines)


def spread_claim(t, claim: str, max_tokens: int = 12) -> dict:
    """A claimed spread checked against the derived one and the model: for `llama3` the claim is
    the spread (a form in T, m, S), for a packed target a bound on it over every lengths vector.
    Proved where sympy shows it equal to the derived form (proved for every size), or for a bound
    at least it (its difference a polynomial in m − 1, S − 1 with nonnegative coefficients); refuted with
    the smallest packing (T, then m) whose run differs from it (exceeds it, for a bound), the run
    made again; unknown where neither."""
    import sympy

    from ringproof.errors import BadInput

    x = _symbols()
    try:
        expr = sympy.sympify(claim, locals={k: x[k] for k in ("T", "m", "S")})
    except (sympy.SympifyError, SyntaxError, TypeError) as err:
        raise BadInput(f"spread claim {claim[:60]!r} is not a formula in T, m, S: {err}") from None
    if not expr.free_symbols <= {x["T"], x["m"], x["S"]}:
        raise BadInput(f"spread claim {claim[:60]!r} names {sorted(map(str, expr.free_symbols))}; it may use T, m, S")
    forms = derived()
    diff = sympy.expand(sympy.simplify((expr - forms.spread).subs(x["T"], x["m"] * x["S"])))
    exact = diff == 0
    if not t.single and not exact and diff.is_polynomial(x["m"], x["S"]):   # a looser bound: m, S ≥ 1
        poly = sympy.Poly(diff.subs({x["m"]: x["m"] + 1, x["S"]: x["S"] + 1}), x["m"], x["S"])
        exact = all(c >= 0 for c in poly.coeffs())
    out = {"claim": claim, "derived": str(forms.spread), "bound": not t.single}
    if exact:
        return {**out, "verdict": Verdict.PROVED.value, "counterexample": None}
    for lengths, m in packings(t, max_tokens):
        T, S = sum(lengths), sum(lengths) // m
        claimed = expr.subs({x["T"]: T, x["m"]: m, x["S"]: S})
        got = case(t, lengths, m, rules.heads(*_default()), forms, numerics=False)
        spread = max(got.pairs) - min(got.pairs)
        if (spread > claimed) if not t.single else (spread != claimed):
            again = case(t, lengths, m, rules.heads(*_default()), forms, numerics=False)
            if again.pairs != got.pairs:
                break
            return {**out, "verdict": Verdict.REFUTED.value,
                    "counterexample": {"lengths": list(lengths), "m": m, "measured": spread, "claimed": str(claimed),
                                       "command": f"prove simulate {t.name} --lengths {','.join(map(str, lengths))} -m {m}"}}
    return {**out, "verdict": Verdict.UNKNOWN.value, "counterexample": None}
