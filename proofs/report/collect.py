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
