"""What a report says about one target, as JSON-ready data (report.json is this; Markdown and HTML
render it): verdicts, what each proof rested on, refutations with their replay and picture, the
printed-versus-repaired formulas, the closed-form counts beside the paper's claims."""

from __future__ import annotations

import platform
from importlib import metadata
from types import SimpleNamespace

import sympy

from ringproof.model.ring.trace import build_trace
from ringproof.proofs.report import svg
from ringproof.proofs.report.maths import class_forms, closed_text
from ringproof.proofs.report.words import dsl_reason, theorem
from ringproof.proofs.results import DEFAULT_PROPERTIES, Verdict
from ringproof.schedules.expr import var

PICTURE_MAX_N = 24     # a counterexample larger than this gets no picture


def versions(cross_check: str | None = None) -> dict:
    """Python, the solvers and the libraries the verdicts came from."""
    import z3

    out = {"python": platform.python_version(), "platform": platform.platform(),
           "z3": z3.get_version_string()}
    for dist in ("ringproof", "sympy", "numpy", "python-sat", "cvc5"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    out["cross_check"] = cross_check
    return out


def command(target: str, opts) -> str:
    """The `prove` command that reproduces the verdicts of one target."""
    parts = ["prove", target, "--tier", opts.tier, "--timeout", f"{opts.timeout:g}", "--seed", str(opts.seed)]
    if opts.tier == "bounded":
        parts += ["--max-n", str(opts.max_n)]
    if opts.tier == "per-m":
        parts += ["--max-m", str(opts.max_m)]
    return " ".join(parts + [f"--property {p}" for p in opts.properties
                             if set(opts.properties) != set(DEFAULT_PROPERTIES)])


def picture_size(schedule, size: tuple[int, int]) -> tuple[int, int]:
    """`size` if the schedule's side condition admits it, else the nearest size it admits: the
    smallest n ≥ size's n, then the m closest to size's m (m | n)."""
    n0, m0 = size
    for n in range(n0, 4 * n0 + 8):
        for m in sorted((m for m in range(1, n + 1) if n % m == 0), key=lambda m: (abs(m - m0), m)):
            if schedule.admits(n, m):
                return n, m
    return size          # none nearby: build_trace says which condition fails


def target(name: str, schedule, results, needed: list, opts, size=(4, 2), per_phase: int = 6, defects=None) -> dict:
    """The report's section for one target: its results and size conditions
    (`prover.verify_with_conditions`); `defects` = (variant, names) for a printed variant."""
    size = picture_size(schedule, size)
    trace = build_trace(schedule, *size)
    cycles = svg.default_cycles(trace, per_phase)
    out = {"target": name, "schedule": schedule.name, "doc": schedule.doc,
           "verdict": Verdict.combine(r.verdict for r in results).value, "command": command(name, opts),
           "expected": "refuted" if defects else "proved",
           "conditions": [c["condition"] for c in needed], "derived": schedule.derivations(),
           "bounds": {"max_n": opts.max_n, "max_m": opts.max_m},
           "without": [{"condition": c["condition"], "counterexample": c["counterexample"].to_json()
                        if c["counterexample"] else None} for c in needed],
           "results": [r.to_json() for r in results],
           "proofs": [_proof(r) for r in results if r.solver],
           "refutations": [_refutation(name, schedule, r) for r in results if r.verdict is not Verdict.PROVED],
           "counts": _claims_by(_counts(results, schedule), name), "defects": formula_differences(*defects) if defects else [],
           "grid": grid(trace, cycles),
           "picture": {"n": size[0], "m": size[1], "cycles": cycles, "cycles_total": trace.cycles,
                       "svg": svg.picture(trace, cycles), "rows": svg.rows(trace, cycles)}}
    from ringproof.proofs.cli.verify import readable_derivations

    out["theorem"] = theorem(out, readable_derivations(schedule))     # ⌊n/(2·m)⌋, as the terminal says it
    return out


def grid(trace, cycles) -> dict:
    """The picture's cells as text: rows PEs 1..m, one column per cycle shown."""
    cells = svg.cells(trace, cycles)
    rows = [[(f"{c.op} {c.datum}" + (" →" if c.send else "")) if (c := cells.get((p, t))) else ""
             for t in cycles] for p in range(1, trace.m + 1)]
    phase = svg.phases_of(trace, cycles)
    return {"n": trace.n, "m": trace.m, "cycles": list(cycles), "cycles_total": trace.cycles,
            "phases": [phase.get(t, "") for t in cycles], "cells": rows}


def _proof(r) -> dict:
    return {"property": r.property, "phase": r.phase, "verdict": r.verdict.value, **r.solver}


def _refutation(name: str, schedule, r) -> dict:
    out = {"property": r.property, "phase": r.phase, "verdict": r.verdict.value, "reason": r.reason,
           "reason_dsl": dsl_reason(r.reason), "counterexample": None, "replay": None, "picture": None}
    cex = r.counterexample
    if cex is None:
        return out
    out["counterexample"] = cex.to_json()
    out["replay"] = cex.command(name)
    if cex.n <= PICTURE_MAX_N:
        trace = build_trace(schedule, cex.n, cex.m)
        marked = svg.failing_cells(trace, cex.iterations)
        if marked:
            cycles = svg.around({t for _, t in marked}, trace)
            out["picture"] = {"n": cex.n, "m": cex.m, "cycles": cycles, "marked": sorted(marked),
                              "svg": svg.picture(trace, cycles, marked), "rows": svg.rows(trace, cycles, marked)}
    return out


def _counts(results, schedule) -> dict | None:
    """The counts section; a claim or a form may name the schedule's derived parameters."""
    r = next((r for r in results if r.property == "counts"), None)
    if r is None or not r.details:
        return None
    from ringproof.proofs.figures.counting import D, M, N, check_claim, derived_parameters, per_residue
    from ringproof.schedules.shape import D_IS_N

    shape = schedule.shape
    square = shape == D_IS_N
    named = derived_parameters(schedule)

    def agree(derived, claim):
        """The paper's claim against the derived form: shown equal, the smallest size where they
        differ, or agreement on every size tried (which is not a proof, and is said so)."""
        if derived is None or claim is None or "Sum" in derived:
            return None
        got = check_claim(sympy.sympify(derived, locals={"n": N, "m": M, "d": N if square else D, **named}),
                          claim, shape=shape, derived_params=named)
        if got is None:
            return "equal"
        n, m, d, mine, theirs = got
        if n is None:
            return "agrees on every size tried (n ≤ 24), not shown equal"
        at_d = "" if square else f", d = {d}"
        return f"differs at n = {n}, m = {m}{at_d}: derived {mine}, claimed {theirs}"

    def forms(text):
        if text is None:
            return None
        e = sympy.sympify(text, locals={"n": N, "m": M, **named})
        return [{"class": c, "formula": str(f)} for c, f in per_residue(e)]

    d = r.details
    derived = {"cycles": d["cycles"], **d["ops"]}
    claims = d.get("claims", {})
    rows = [{"quantity": q, "derived": v, "per_residue": forms(v) if v and "Sum" not in v else None,
             "claim": claims.get(q), "claim_per_residue": forms(claims.get(q)),
             "claim_check": agree(v, claims.get(q))}
            for q, v in derived.items() if v not in ("0",)]
    for row in rows:     # forms still with floor, mod or cases: per class of n/m and m (maths.class_forms)
        per = row["per_residue"] or []
        row["per_class"] = (class_forms(row["derived"], square)
                            if any(not closed_text(x["formula"]) for x in per) else None)
    from ringproof.proofs.report.maths import load_lines
    load = load_lines(d.get("balance"), d.get("memory"))       # forms in signs a reader knows, not sympy's
    return {"verdict": r.verdict.value, "reason": r.reason, "rows": rows,
            "phase_cycles": d.get("phase_cycles", {}), "utilization": d.get("utilization"),
            "balance": d.get("balance"), "memory": d.get("memory"), "load": load}


def _claims_by(counts: dict | None, name: str) -> dict | None:
    """Whose claims the counts are compared with: the paper's for its registered schedules, else the
    schedule's own (a user's file, a context-parallel target), so no column says "paper" for them."""
    from ringproof.proofs.cli.targets import PAPER

    if counts is not None:
        counts["claims_by"] = "paper" if name in PAPER else "schedule"
    return counts


def formula_differences(variant, defects) -> list[dict]:
    """Per printed defect: the step fields and loop bounds where the printed form differs from the
    repaired one, both rendered from the schedule code with symbolic indices."""
    from ringproof.proofs.ring.normalize import PARAMS

    repaired = {p.name: p for p in variant(()).phases}
    out = []
    for d in defects:
        for ph in variant((d,)).phases:
            good = repaired.get(ph.name)
            if good is None:
                out.append({"defect": d, "phase": ph.name, "field": "phase", "printed": "present",
                            "repaired": "absent"})
                continue
            for fld, printed, fixed in _fields(ph, good, PARAMS):
                if printed != fixed:
                    out.append({"defect": d, "phase": ph.name, "field": fld, "printed": printed,
                                "repaired": fixed})
    return out


def _fields(printed, repaired, P):
    ix = SimpleNamespace(**{name: var(name) for name in
                            dict.fromkeys(printed.index_names + repaired.index_names)})
    a, b = printed.step(P, ix), repaired.step(P, ix)
    for fld in ("pe", "op", "target", "operands", "send", "guard", "first", "prev", "sources"):
        yield fld, repr(getattr(a, fld)), repr(getattr(b, fld))
    la = [(lp.name, repr(lp.bounds(P, ix))) for lp in printed.loops]
    lb = [(lp.name, repr(lp.bounds(P, ix))) for lp in repaired.loops]
    yield "loops", repr(la), repr(lb)


# ----------------------------------------------------------------------------- packed sequences

# the packing each packed section shows from a model run: (lengths, m) per kind
SHOWN_PACKING = {"varlen": 2, "allgather": ((3, 5), 2), "single": ((8,), 2)}


def packed(name: str, record, results, needed: list, opts, size=(4, 2), per_phase: int = 6) -> dict:
    """The report's section for one packed-sequence target: a varlen one (`documents.Varlen`, its
    results from `proofs.varlen.verify.prove`) or an all-gather one (`allgather.AllGather`, from
    `proofs.allgather.verify.prove`), with the keys of a ring target's section: the figures are
    sums over the documents and all-gather forms; the picture is the varlen base's ring pass for
    one document; an all-gather target has no ring pass (grid and picture None) and shows one
    packing's pairs per rank from the model run instead (`packing`)."""
    from ringproof.schedules.documents import Varlen

    varlen = isinstance(record, Varlen)
    out = {"target": name, "schedule": record.name, "doc": record.doc + (" (the backward pass)" if varlen and
                                                                        record.backward else ""),
           "machine": "packed" if varlen else "allgather",
           "verdict": Verdict.combine(r.verdict for r in results).value, "command": packed_command(name, opts),
           "expected": "proved", "conditions": [c["condition"] for c in needed], "derived": {},
           "without": [{"condition": c["condition"], "counterexample": c["counterexample"].to_json()
                        if c["counterexample"] else None} for c in needed],
           "results": [r.to_json() for r in results],
           "proofs": [_packed_proof(r) for r in results if r.solver],
           "refutations": [_packed_refutation(name, r) for r in results if r.verdict is not Verdict.PROVED],
           "counts": _packed_counts(record, results, varlen), "defects": [],
           "grid": None, "picture": None, "base": None, "packing": None}
    if varlen:
        from ringproof.schedules import context_parallel as cp

        base = cp.BACKWARDS[f"{record.base.name}-bwd"] if record.backward else cp.FORWARDS[record.base.name]
        size = picture_size(base, size)
        trace = build_trace(base, *size)
        cycles = svg.default_cycles(trace, per_phase)
        out["base"] = base.name
        out["grid"] = grid(trace, cycles)
        out["picture"] = {"n": size[0], "m": size[1], "cycles": cycles, "cycles_total": trace.cycles,
                          "svg": svg.picture(trace, cycles), "rows": svg.rows(trace, cycles),
                          "of": f"the base {base.name}'s ring pass for one document of n = {size[0]} tokens"}
    out["packing"] = _packing(name, record, varlen)
    from ringproof.proofs.report.words import packed_theorem

    out["theorem"] = packed_theorem(out, record)
    return out


def packed_command(target: str, opts) -> str:
    """The `prove` command that reproduces a packed target's verdicts (tier parametric: every m,
    D and lengths vector)."""
    return " ".join(["prove", target] + [f"--property {p}" for p in opts.properties
                                         if set(opts.properties) != set(DEFAULT_PROPERTIES)])


def _packed_proof(r) -> dict:
    """What one packed result rested on: the obligations and lemmas (`lemmas`), the base's proof
    for a varlen one (its queries and Z3 statistics), the sympy identities for an all-gather one."""
    s = r.solver
    return {"property": r.property, "phase": r.phase, "verdict": r.verdict.value, **s,
            "queries": s.get("queries", 0), "lemmas": list(s.get("lemmas", [])),
            "side_conditions": s.get("side_conditions", 0), "z3": s.get("z3", {})}


def _packed_refutation(name: str, r) -> dict:
    """A packed result not proved: its reason, and for a refutation the smallest packing where the
    model differs with its replay (`prove simulate NAME --lengths … -m M`); no ring picture."""
    cex = r.counterexample
    return {"property": r.property, "phase": r.phase, "verdict": r.verdict.value, "reason": r.reason,
            "reason_dsl": r.reason, "counterexample": cex.to_json() if cex else None,
            "replay": cex.command(name) if cex else None, "picture": None}


def _form(label: str, form: str | None) -> dict:
    return {"quantity": label, "derived": form, "per_residue": None, "claim": None, "claim_per_residue": None,
            "claim_check": None, "per_class": None}


def _packed_counts(record, results, varlen: bool) -> dict | None:
    """The counts of a packed target: its closed forms (sympy text, sums over the documents) as
    rows, and its load lines as words with the forms held apart (`lines`: each {"words", "forms"},
    a form's place in the words marked FORM0, FORM1, …), typeset by the renderer; `load` is
    the same lines in text."""
    from ringproof.proofs.report.maths import text

    if varlen:
        r = next((r for r in results if r.property == "counts"), None)
        d = (r.details or {}) if r else {}
        rows = ([_form("cycles", d["cycles"])] if d.get("cycles") else []) + \
            [_form(f"{k} ops", v) for k, v in (d.get("ops") or {}).items() if v != "0"] + \
            ([_form("pairs", d["pairs"])] if d.get("pairs") else [])
        lines = _varlen_lines(d, results)
    else:
        r = next((r for r in results if r.property == "counts" and r.details), None) or \
            next((r for r in results if r.property == "counts"), None)
        d = (r.details or {}) if r else {}
        rows = [_form("pairs per query head", d["pairs"])] if d.get("pairs") else []
        if record.single and d.get("per_rank"):
            rows += [_form("pairs on rank r (0-based)", d["per_rank"]), _form("spread (max − min over ranks)", d["spread"])]
        rows += [_form(f"memory per rank, {k} (peak, elements)", v) for k, v in (d.get("memory_per_rank") or {}).items()]
        rows += [_form(f"received per rank, {k}", v) for k, v in (d.get("traffic_per_rank") or {}).items()]
        lines = _allgather_lines(record, d)
    if r is None:
        return None
    counts = [x for x in results if x.property == "counts"]
    verdict = Verdict.combine(x.verdict for x in counts).value
    reason = "; ".join(x.reason for x in counts if x.reason)
    load = [_fill(line, lambda f: text(f, None)) for line in lines]
    return {"verdict": verdict, "reason": reason, "rows": rows, "claims_by": "schedule",
            "balance": d.get("balance") if varlen else None, "memory": d.get("memory") if varlen else None,
            "load": load, "lines": lines, "documents": d.get("documents"), "checked": d.get("checked")}


def _fill(line: dict, show) -> str:
    import re

    return re.sub(r"FORM(\d+)", lambda x: show(line["forms"][int(x[1])]), line["words"])


def _varlen_lines(d: dict, results) -> list[dict]:
    """The balance, per-step and memory lines of a varlen target (`varlen.verify.readable`'s)."""
    lines = []
    balance = d.get("balance") or next((r.details for r in results if r.property == "balance" and r.details), None) or {}
    per = balance.get("per_pe") or {}
    if per:
        kinds = list(per)
        words = "balance: active ops on PE l: " + "; ".join(f"{k} FORM{i}" for i, k in enumerate(kinds))
        forms = [per[k] for k in kinds]
        if balance.get("spread") is not None:
            words += f"; spread (max − min over PEs) = FORM{len(forms)} for every packing"
            forms.append(balance["spread"])
        else:
            words += "; spread not in closed form: " + balance.get("reason", "")
        lines.append({"words": words, "forms": forms})
    elif balance.get("reason"):
        lines.append({"words": f"balance: {balance['reason']}", "forms": []})
    for phase, form in list((balance.get("per_step") or {}).items())[:1]:
        lines.append({"words": f"per ring step s: {phase} FORM0", "forms": [form]})
    memory = d.get("memory") or next((r.details for r in results if r.property == "memory" and r.details), None) or {}
    if memory.get("inputs_on_pe"):
        lines.append({"words": "memory: inputs held per PE = FORM0 (a lower bound of the peak; no exact peak is "
                               "derived for a varlen target)", "forms": [memory["inputs_on_pe"]]})
    if d.get("documents"):
        lines.append({"words": f"documents: {d['documents']}; L_i the length of document i", "forms": []})
    if d.get("checked"):
        lines.append({"words": f"checked: {d['checked']}", "forms": []})
    return lines


def _allgather_lines(t, d: dict) -> list[dict]:
    """The pairs, balance, memory and traffic lines of an all-gather target (`allgather.verify.readable`'s)."""
    if not d:
        return []
    lines = [{"words": "pairs computed = FORM0 per query head (each document-causal pair once, in each head group)",
              "forms": [d["pairs"]]}]
    if t.single:
        lines.append({"words": "balance: rank r (0-based) computes FORM0 pairs; spread (max − min) = FORM1 "
                               "(no load balance: the last rank does the most)", "forms": [d["per_rank"], d["spread"]]})
    else:
        lines.append({"words": f"balance: pairs on rank r = {d['per_rank']}; spread = max − min of those, at most "
                               "FORM0 for every lengths vector (one document attains it)", "forms": [d["spread_bound"]]})
    mem = d.get("memory_per_rank") or {}
    if mem:
        lines.append({"words": "memory per rank (peak, elements): forward FORM0; backward FORM1 (H query heads, Hk KV "
                               "heads, s gathered at a time: the two T·s·d buffers of K and V of a head group)",
                      "forms": [mem["forward"], mem["backward"]]})
    traffic = d.get("traffic_per_rank") or {}
    if traffic:
        lines.append({"words": "traffic per rank: " + "; ".join(f"{k} FORM{i}" for i, k in enumerate(traffic)),
                      "forms": list(traffic.values())})
    if d.get("checked"):
        lines.append({"words": f"checked: {d['checked']}", "forms": []})
    return lines


def _packing(name: str, record, varlen: bool) -> dict | None:
    """One packing run on the target's model: its pairs per rank (and per ring step, varlen), the
    segments per rank (all-gather), for the section's small table; None where the run differs."""
    if varlen:
        from ringproof.model.ring.packed import run

        m = SHOWN_PACKING["varlen"]
        u = record.unit(m)
        lengths = (3, 5) if record.padded else (u, 2 * u)
        got = run(record, lengths, m, numerics=False)
        if got.first_difference is not None:
            return None
        return {"lengths": list(lengths), "m": m, "model": "the packed ring model", "ranks_from": 1,
                "pairs_per_rank": [int(x) for x in got.per_rank],
                "pairs_per_step": [[int(x) for x in s] for s in got.pairs],
                "command": f"prove simulate {name} --lengths {','.join(map(str, lengths))} -m {m}"}
    from ringproof.model.allgather import rules
    from ringproof.model.allgather.run import DEFAULT_HEADS
    from ringproof.proofs.allgather.verify import case, derived

    lengths, m = SHOWN_PACKING["single" if record.single else "allgather"]
    got = case(record, lengths, m, rules.heads(*DEFAULT_HEADS), derived(), numerics=False)
    if got.first_difference is not None:
        return None
    segs = [record.prepare_cu_seqlens(lengths, m, r) for r in range(m)]
    return {"lengths": list(lengths), "m": m, "model": "the all-gather model", "ranks_from": 0,
            "pairs_per_rank": [int(x) for x in got.pairs],
            "segments": [{"q": [int(x) for x in q], "k": [int(x) for x in k], "local_k_slice": [int(x) for x in s]}
                         for q, k, s in segs],
            "command": f"prove simulate {name} --lengths {','.join(map(str, lengths))} -m {m}"}
