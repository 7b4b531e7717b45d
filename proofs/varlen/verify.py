"""`prove NAME` for a varlen schedule: every property for every m, every number of documents D ≥ 1
and every lengths vector that meets the side condition.

The route, each part checked:
1. the base's proof (the single-sequence schedule of `Varlen.base`, forward or backward, by the ring
   prover): every property for one document of any length n meeting the side condition;
2. the obligations (`obligations`): the schedule's own formulas are the base's at each document's
   offset and first local slot, and its mask is exactly the document-causal one;
3. the composition lemma (`composition`, by induction over D), cited in every result as the
   online-softmax lemma is: the per-document proofs make the packed one;
4. the counts and loads as sums over the documents of the base's closed forms with n = L_i, and
   the concrete twin: every packing with D ≤ 3 documents, T ≤ `max_tokens` tokens and m ≤ 4 run
   on the packed ring model (`model.ring.packed`), whose pairs per rank and ring step must be the
   sums and whose numerics must match a dense per-document reference.
A result is proved only where every part it rests on is; a packing where the run differs refutes
the property it breaks, with that packing (smallest first) as the counterexample.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, replace

from ringproof.errors import BadInput
from ringproof.proofs.results import Counterexample, Result, Verdict

MAX_DOCS, MAX_RANKS = 3, 4
TOLERANCE = 1e-9          # float64 against the dense reference
NUMERICS_TOKENS = 10      # the sweep's packings of at most this many tokens also run the numerics
SWEEP_TOKENS = 16         # `prove`'s sweep: every packing up to this many tokens (tests: 48)

# What each property rests on besides the base's proof of it (obligation and lemma names by kind).
RESTS_ON = {
    "well-formed": ("token",),
    "coverage": ("token", "owner and slot", "mask", "pairs"),
    "no-conflict": ("owner and slot", "local slots"),
    "ring-locality": ("owner and slot", "local slots"),
    "data-flow": ("token", "owner and slot", "local slots"),
    "placement": ("owner and slot",),
    "counts": ("token", "loads"),
}


@dataclass(frozen=True)
class Sweep:
    """The concrete twin's outcome: packings run, and the first that differs (a PackedRun)."""

    packings: int
    bounds: str
    failed: object | None


def packings(v, max_tokens: int, max_docs: int = MAX_DOCS, max_m: int = MAX_RANKS):
    """(lengths, m) of every packing the schedule allows with at most `max_docs` documents and
    `max_tokens` tokens (padded) on m ≤ max_m ranks: fewest tokens first, then fewest documents, m."""
    out = []
    for m in range(1, max_m + 1):
        for D in range(1, max_docs + 1):
            if v.padded:
                lengths = range(1, max_tokens + 1)
                vectors = (L for L in itertools.product(lengths, repeat=D) if sum(v.padded_lengths(L, m)) <= max_tokens)
            else:
                u = v.unit(m)
                vectors = (tuple(u * x for x in c) for c in itertools.product(range(1, max_tokens // u + 1), repeat=D)
                           if u * sum(c) <= max_tokens)
            out += [(L, m) for L in vectors]
    return sorted(out, key=lambda t: (sum(v.padded_lengths(t[0], t[1])), len(t[0]), t[1], t[0]))


def sweep(v, max_tokens: int, forms=None, d: int = 2) -> Sweep:
    """Run every packing up to the bounds; with `forms` ((lengths, m) -> (per-rank pairs, per-step
    pairs or None)), the run's pairs must equal them."""
    from ringproof.model.ring.packed import PackedRun, run

    todo = packings(v, max_tokens)
    for lengths, m in todo:
        got = run(v, lengths, m, d=d, numerics=sum(lengths) <= NUMERICS_TOKENS)
        if got.first_difference is None:
            worst = max(got.error.values(), default=0.0)
            if worst > TOLERANCE:
                name = max(got.error, key=got.error.get)
                got = PackedRun(lengths, m, d, f"lengths {','.join(map(str, lengths))}, m={m}: {name} differs from "
                                f"the per-document reference by {worst:.3g} (relative)", broken="coverage")
        if got.first_difference is None and v.padded:
            want = sum(length * (length + 1) // 2 for length in lengths)
            if sum(got.per_rank) != want:
                got = PackedRun(lengths, m, d, f"lengths {','.join(map(str, lengths))}, m={m}: {sum(got.per_rank)} "
                                f"pairs run, {want} by the sum over documents of {PADDED_PAIRS}", broken="counts")
        elif got.first_difference is None and forms is not None:
            per_rank, per_step = forms(lengths, m)
            if per_rank != got.per_rank:
                got = PackedRun(lengths, m, d, f"lengths {','.join(map(str, lengths))}, m={m}: pairs per rank "
                                f"{got.per_rank} run, {per_rank} by the sums over documents", broken="counts")
            elif per_step is not None and per_step != got.pairs:
                got = PackedRun(lengths, m, d, f"lengths {','.join(map(str, lengths))}, m={m}: pairs per ring step "
                                f"{got.pairs} run, {per_step} by the sums over documents", broken="counts")
        if got.first_difference is not None:
            return Sweep(len(todo), _bounds(max_tokens), got)
    return Sweep(len(todo), _bounds(max_tokens), None)


def _bounds(max_tokens: int) -> str:
    return f"D ≤ {MAX_DOCS}, T ≤ {max_tokens}, m ≤ {MAX_RANKS}"


# --------------------------------------------------------------------------- sums over documents


def summed(form: str) -> str:
    """A base's closed form in n as the sum over the documents with n = L_i (sympy-readable)."""
    import sympy

    n, i, D = sympy.Symbol("n"), sympy.Symbol("i", integer=True, positive=True), sympy.Symbol("D", integer=True, positive=True)
    L = sympy.IndexedBase("L")
    e = sympy.sympify(form, locals={"n": n})
    if not e.has(n):
        return str(sympy.simplify(D * e)) if e != 0 else "0"
    return str(sympy.Sum(e.subs(n, L[i]), (i, 1, D)))


class _Sums:
    """A base's closed form in n, summed over a packing's lengths at the other sizes: each
    document's value exact (sympy) and kept per (length, sizes) for the sweep's many packings."""

    def __init__(self, form: str):
        import sympy

        self.form, self.values = sympy.sympify(form), {}

    def __call__(self, lengths, **sizes):
        import sympy

        total = 0
        for L in lengths:
            key = (L, tuple(sorted(sizes.items())))
            if key not in self.values:
                self.values[key] = self.form.subs({sympy.Symbol("n"): L, **{sympy.Symbol(k): x for k, x in sizes.items()}})
            total += self.values[key]
        total = sympy.nsimplify(total)
        return int(total) if total.is_Integer else total


def _scores_phase(balance: dict, key: str):
    """The base's form of its scores phase (the first MAC phase: the forward's ring.MAC, the
    backward's ring.MAC1): its ops are d · the pairs."""
    forms = balance.get(key) or {}
    return next((f for phase, f in forms.items() if phase.rsplit(".", 1)[-1] in ("MAC", "MAC1")), None)


def _pair_forms(v, base_details: dict):
    """(lengths, m) -> (pairs per rank, pairs per ring step) from the base's proved forms of its
    scores phase per PE and per ring step, summed over the documents; for a padded schedule the
    totals alone (each document's real causal pairs), the per-rank split not in closed form."""
    if v.padded:
        def totals(lengths, m):
            return None, None
        return totals
    balance = base_details.get("balance") or {}
    per_pe, per_step = _scores_phase(balance, "per_phase"), _scores_phase(balance, "per_step")
    if per_pe is None:
        return None
    per_pe, per_step = _Sums(per_pe), per_step and _Sums(per_step)

    def forms(lengths, m):
        ranks = [per_pe(lengths, m=m, d=1, l=r + 1) for r in range(m)]
        steps = None if per_step is None else [[per_step(lengths, m=m, d=1, l=r + 1, s=s + 1) for r in range(m)]
                                               for s in range(m)]
        return ranks, steps
    return forms


PADDED_PAIRS = "real*(real + 1)/2"      # a padded document's pairs: its real tokens', causal


def _spread(balance: dict) -> dict:
    """{"spread", "reason"} of the packed schedule: the base's active ops on PE l summed over the
    kinds are a·l + b (a, b in n, m, d) with a of one sign for every size (its terms' coefficients
    all of one sign), so every document's busiest and idlest PEs are the same ones and the spread
    of the sum is (m − 1)·|Σ_i a(L_i)|; otherwise not in closed form."""
    import sympy

    forms = list((balance.get("per_pe") or {}).values())
    if balance.get("spread") == "0":
        return {"spread": "0", "reason": ""}
    l = sympy.Symbol("l")
    total = sympy.expand(sum((sympy.sympify(f) for f in forms), sympy.Integer(0)))
    slope = sympy.expand(sympy.diff(total, l))
    num, den = sympy.fraction(sympy.together(slope))
    coeffs = sympy.Poly(sympy.expand(num), *sorted(num.free_symbols, key=str)).coeffs() if num.free_symbols else [num]
    den_ok = all(c > 0 for c in sympy.Poly(den, *sorted(den.free_symbols, key=str)).coeffs()) if den.free_symbols else den > 0
    if not forms or sympy.diff(total, l, 2) != 0 or not den_ok or not (all(c > 0 for c in coeffs) or all(c < 0 for c in coeffs)):
        return {"spread": None, "reason": "the active ops on PE l are not a·l + b with a of one sign: "
                                          "the spread of the sum over documents is not derived (per-PE loads given as sums)"}
    width = sympy.Abs(slope) if any(c < 0 for c in coeffs) else slope
    return {"spread": summed(str(sympy.factor((sympy.Symbol("m") - 1) * width))), "reason": ""}


def figures(v, base_details: dict) -> dict:
    """The varlen schedule's counts, balance and memory inputs: the base's forms summed over the
    documents (the composition lemma's loads part); a padded schedule's pairs are its real
    tokens', its cycles the base's over the padded lengths (every padded slot is run)."""
    out = {}
    if base_details.get("cycles"):
        out["cycles"] = summed(base_details["cycles"])
    if v.padded:
        import sympy

        out["pairs"] = str(sympy.Sum(sympy.sympify(PADDED_PAIRS).subs(sympy.Symbol("real"), sympy.IndexedBase("l")[sympy.Symbol("i", integer=True, positive=True)]),
                                     (sympy.Symbol("i", integer=True, positive=True), 1, sympy.Symbol("D", integer=True, positive=True))))
        out["ops"] = {}
        out["balance"] = {"per_pe": {}, "per_step": {}, "spread": None,
                          "reason": "a rank's real pairs depend on where each document's padding falls: not in closed form"}
        return out
    out["ops"] = {kind: summed(f) for kind, f in (base_details.get("ops") or {}).items() if f != "not derived"}
    balance = base_details.get("balance") or {}
    if balance:
        out["balance"] = {
            "per_pe": {kind: summed(f) for kind, f in (balance.get("per_pe") or {}).items()},
            "per_step": {phase: summed(f) for phase, f in (balance.get("per_step") or {}).items()},
            **_spread(balance),
        }
    memory = base_details.get("memory") or {}
    if memory.get("inputs_on_pe"):
        out["memory"] = {"inputs_on_pe": summed(memory["inputs_on_pe"])}
    return out


# --------------------------------------------------------------------------- the proof


def prove(v, opts, session, max_tokens: int = SWEEP_TOKENS, backward: bool | None = None, base_results=None):
    """(results, conditions, seconds) of the varlen schedule `v` (its backward where
    `backward`, default `v.backward`); `base_results`: the base's own results, where a caller
    has proved it already with the same options."""
    from ringproof.proofs.ring.prover import verify_with_conditions
    from ringproof.proofs.varlen import composition, obligations
    from ringproof.schedules import context_parallel as cp

    t0 = time.perf_counter()
    backward = v.backward if backward is None else backward
    base = cp.BACKWARDS[f"{v.base.name}-bwd"] if backward else cp.FORWARDS[v.base.name]
    opts.progress(f"{v.name}: the base {base.name}, for one document of any length")
    if base_results is None:
        base_results, _ = verify_with_conditions(base, opts, session)
    opts.progress(f"{v.name}: the obligations and the composition lemma")
    with composition.exporting(opts.smt2_dir):
        parts = {o.part: o for o in obligations.obligations(v)}
        lemma = {p.part: p for p in composition.lemma(v.causal, v.padded)}
    counts = next((r for r in base_results if r.property == "counts"), None)
    balance = next((r for r in base_results if r.property == "balance"), None)
    source = counts.details if counts is not None else {"balance": balance.details} if balance is not None else None
    forms = _pair_forms(v, source) if source is not None else None
    opts.progress(f"{v.name}: every packing with {_bounds(max_tokens)} on the packed ring model")
    swept = sweep(v, max_tokens, forms)
    results = [_result(v, r, parts, lemma, swept, max_tokens) for r in base_results]
    seconds = time.perf_counter() - t0
    needed = [] if v.padded else [{"condition": v.requires_text, "counterexample": _without(v)}]
    return [replace(r, seconds=r.seconds) for r in results], needed, seconds


def _result(v, r: Result, parts: dict, lemma: dict, swept: Sweep, max_tokens: int) -> Result:
    """The base's result `r` for the packed schedule: its verdict combined with what it rests on."""
    needs = RESTS_ON.get(r.property, ("token", "owner and slot"))
    if v.padded and r.property in ("coverage", "counts"):
        needs += ("padding masked",)
    rested = {**{f"{v.name}: {k}": parts[k].proved for k in needs if k in parts},
              **{lemma[k].name: lemma[k].proved for k in needs if k in lemma}}
    solver = {**r.solver, "lemmas": sorted(set(r.solver.get("lemmas", ())) | set(rested)),
              "base": r.solver.get("base", f"{v.base.name} {r.property}/{r.phase}")}
    files = [f for k in needs if k in parts or k in lemma for f in (parts.get(k) or lemma[k]).smt2]
    if files:
        solver["smt2"] = [*r.solver.get("smt2", []), *files]
    verdict, reason, cex = r.verdict, r.reason, r.counterexample
    failed = swept.failed
    if failed is not None and failed.broken == r.property:
        verdict, cex = Verdict.REFUTED, _counterexample(failed)
        reason = f"the packed ring model differs: {failed.first_difference}"
    elif verdict is Verdict.PROVED:
        missing = [k for k in needs if (k in parts and not parts[k].proved) or (k in lemma and not lemma[k].proved)]
        if missing:
            what = parts.get(missing[0]) or lemma.get(missing[0])
            verdict = Verdict.UNKNOWN
            reason = (f"rests on {what.name}, not proved ({what.detail}); no packing with {swept.bounds} "
                      "differs on the packed ring model")
        elif failed is not None:
            verdict = Verdict.UNKNOWN
            reason = f"the packed ring model differs on another property: {failed.first_difference}"
    details = r.details
    if r.property == "balance":
        return _balance_row(v, r, verdict, reason, cex, solver, swept)
    if r.property == "memory":
        inputs = (r.details or {}).get("inputs_on_pe")
        return replace(r, verdict=Verdict.UNKNOWN if verdict is not Verdict.REFUTED else verdict, counterexample=cex,
                       solver=solver, reason="no exact memory peak is derived for a varlen target"
                       + (f"; the inputs held per PE, {summed(inputs)}, bound it from below" if inputs else ""),
                       details={"inputs_on_pe": summed(inputs)} if inputs else {})
    if r.property == "counts":
        details = {**figures(v, r.details), "documents": f"any D ≥ 1 documents, {v.requires_text}",
                   "checked": f"every packing with {swept.bounds} ({swept.packings}) on the packed ring model: "
                              "pairs per rank and ring step equal the sums, numerics equal the per-document reference",
                   "base": {k: r.details[k] for k in ("cycles", "ops", "balance") if k in r.details}}
    return replace(r, verdict=verdict, reason=reason, counterexample=cex, solver=solver, details=details)


def _balance_row(v, r: Result, verdict, reason, cex, solver, swept) -> Result:
    """The balance row of the packed schedule: the base's per-PE forms summed over the documents
    (checked by the sweep) and the spread of the sum where it is derived; unknown where it is not."""
    figs = figures(v, {"balance": r.details}).get("balance", {})
    if verdict is Verdict.PROVED and figs.get("spread") is None:
        verdict, reason = Verdict.UNKNOWN, f"the spread is not derived: {figs.get('reason', '')}"
    return replace(r, verdict=verdict, reason=reason, counterexample=cex, solver=solver,
                   details={**figs, "checked": f"per-PE pairs at every packing with {swept.bounds} ({swept.packings})"})


def _counterexample(failed) -> Counterexample:
    T = sum(failed.lengths)
    return Counterexample(n=T, m=failed.m, check=f"packed ring model: {failed.broken}",
                          message=failed.first_difference.split(": ", 1)[1],
                          replay={"lengths": list(failed.lengths), "replayed": True}, d=failed.d)


def _without(v) -> Counterexample | None:
    """The smallest packing outside the side condition where the run breaks (relaxed), or None."""
    from ringproof.model.ring.packed import run

    if v.padded:
        return None
    for T in range(1, 25):
        for D in (1, 2, 3):
            for lengths in itertools.product(range(1, T + 1), repeat=D):
                if sum(lengths) != T:
                    continue
                for m in range(2, 5):
                    if v.valid(lengths, m) or min(lengths) < v.unit(m):    # each document one unit at least
                        continue
                    got = run(v, lengths, m, numerics=False, relaxed=True)
                    if got.first_difference is not None:
                        return _counterexample(got)
    return None


def check_name(name: str):
    """The varlen row of a target name (NAME or NAME-bwd), or None."""
    from ringproof.schedules.documents import varlen

    return varlen(name)


def check_tokens(max_tokens: int) -> int:
    if max_tokens < 1 or max_tokens > 64:
        raise BadInput(f"the packed cross-check takes T ≤ 64 tokens, got {max_tokens}")
    return max_tokens


def _text(form: str) -> str:
    """A sum over documents for people: Σ_i … with L_i for L[i]."""
    import re

    s = form.replace("L[i]", "L_i").replace("**2", "²").replace("**3", "³").replace("*", "·")
    m = re.fullmatch(r"Sum\((.*), \(i, 1, D\)\)", s)
    return f"Σ_i {m.group(1)}" if m else s


def readable(details: dict) -> str:
    """The varlen figures as lines: cycles and ops, the per-rank loads, and what was checked."""
    lines = []
    if details.get("cycles"):
        ops = ", ".join(f"{k}: {_text(v)}" for k, v in details.get("ops", {}).items() if v != "0")
        lines.append(f"cycles = {_text(details['cycles'])}; ops = {ops}")
    balance = details.get("balance") or {}
    if balance.get("per_pe"):
        per = "; ".join(f"{k} {_text(v)}" for k, v in balance["per_pe"].items())
        spread = balance.get("spread")
        lines.append(f"balance: active ops on PE l: {per}; spread (max − min over PEs) = "
                     + (f"{spread} for every packing" if spread is not None else "not in closed form: " + balance.get("reason", "")))
    elif balance.get("reason"):
        lines.append(f"balance: {balance['reason']}")
    if balance.get("per_step"):
        step = next(iter(balance["per_step"].items()))
        lines.append(f"per ring step s: {step[0]} {_text(step[1])}")
    if details.get("pairs"):
        lines.append(f"pairs computed = {_text(details['pairs']).replace('l[i]', 'ℓ_i')} (ℓ_i the real length of document i)")
    if (details.get("memory") or {}).get("inputs_on_pe"):
        lines.append(f"memory: inputs held per PE = {_text(details['memory']['inputs_on_pe'])} (a lower bound of the peak)")
    lines.append(f"documents: {details.get('documents', '')}; L_i the length of document i")
    if details.get("checked"):
        lines.append(f"checked: {details['checked']}")
    return "\n".join(lines)
