"""Verify a schedule at a tier: derive the checks, discharge them, group them into results.

A refutation is replayed before it is reported: the bounded checker must find the same property
failing at the counterexample's (n, m), and the ring model runs that instance; a counterexample that
does not replay is reported as `unknown`, never as a refutation.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable

from ringproof.errors import BadInput
from ringproof.model.ring.machine import run
from ringproof.model.ring.trace import build_trace
from ringproof.proofs.ring.bounded import check_sizes, sizes
from ringproof.proofs.ring.counting import check_claim, claim_at, closed, counts
from ringproof.proofs.ring.formulas import check_formulas
from ringproof.proofs.progress import silent
from ringproof.proofs.ring.pool import fork_map
from ringproof.proofs.ring.readable import readable
from ringproof.proofs.ring.properties import Check, check_trace, derive
from ringproof.proofs.ring.smt import Outcome, discharge
from ringproof.proofs.results import PROPERTIES, Counterexample, Result, Verdict
from ringproof.schedules.dsl import Schedule

REPLAY_MAX_N = 96


@dataclass(frozen=True)
class Options:
    properties: tuple = PROPERTIES
    tier: str = "parametric"
    max_n: int = 24          # bounded tier
    max_m: int = 8           # per-m tier
    timeout: float = 10.0    # seconds per query
    seed: int = 0
    jobs: int = 0            # 0: one per core
    cross_check: str | None = None   # 'cvc5': a second solver re-checks every unsat query
    cross_timeout: float = 60.0      # seconds per query for the second solver
    smt2_dir: str | None = None      # write every solver query there as SMT-LIB 2
    size: tuple | None = None  # bounded tier: this one (n, m) only
    progress: Callable = silent  # told what runs now (the CLI's stderr line)


def verify(schedule: Schedule, opts: Options = Options()) -> list[Result]:
    unknown = set(opts.properties) - set(PROPERTIES)
    if unknown:
        raise BadInput(f"unknown property {sorted(unknown)[0]!r}; known: {', '.join(PROPERTIES)}")
    opts.progress(f"{schedule.name}: its steps on ints against their formulas")
    check_formulas(schedule)
    results: list[Result] = []
    solver_props = [p for p in opts.properties if p != "counts"]
    if solver_props:
        if opts.tier == "bounded":
            opts.progress(f"{schedule.name}: enumerating " + (f"n={opts.size[0]}, m={opts.size[1]}"
                          if opts.size else f"{len(sizes(opts.max_n))} sizes with n ≤ {opts.max_n}"))
            results += _bounded(schedule, solver_props, opts)
        else:
            checks = [c for c in derive(schedule) if c.property in solver_props]
            opts.progress(f"{schedule.name}: {len(checks)} checks at tier {opts.tier}")
            results += _solve(schedule, checks, opts)
    if "counts" in opts.properties:
        opts.progress(f"{schedule.name}: counting cycles and ops")
        results.append(_counts(schedule, opts, results))
    order = {p: i for i, p in enumerate(PROPERTIES)}
    phases = {p.name: i for i, p in enumerate(schedule.phases)}
    return sorted(results, key=lambda r: (phases.get(r.phase, len(phases)), order[r.property]))


# ----------------------------------------------------------------------------- solver tiers

def _run_one(checks, job):
    i, m_value, timeout_ms, seed, cross, smt2, cross_ms = job
    return i, replace(discharge(checks[i], m_value, timeout_ms, seed, cross, smt2, cross_ms), check=None)


def _solve(schedule: Schedule, checks: list[Check], opts: Options) -> list[Result]:
    ms = [None] if opts.tier == "parametric" else list(range(1, opts.max_m + 1))
    jobs = [(i, mv, int(opts.timeout * 1000), opts.seed, opts.cross_check, opts.smt2_dir,
             int(opts.cross_timeout * 1000)) for i in range(len(checks)) for mv in ms]
    raw = fork_map(_run_one, checks, jobs, opts.jobs)
    outcomes: dict = {}
    for i, o in raw:
        outcomes.setdefault(i, []).append(replace(o, check=checks[i]))
    groups: dict = {}
    for i, c in enumerate(checks):
        groups.setdefault((c.property, c.phase), []).extend(outcomes[i])
    return [_result(schedule, prop, phase, outs, opts) for (prop, phase), outs in groups.items()]


def _result(schedule, prop, phase, outs: list[Outcome], opts: Options) -> Result:
    result = _verdict(schedule, prop, phase, outs, opts)
    evidence = audit(outs)
    if evidence.get("disagreements"):
        first = evidence["disagreements"][0]
        what = "SOLVERS DISAGREE" if first["answer"] == "sat" else "SECOND SOLVER DID NOT CONFIRM"
        result = replace(result, verdict=Verdict.UNKNOWN,
                         reason=f"{what} on {first['check']}: z3 unsat, {first['solver']} "
                                f"{first['answer']}" + (f"; {result.reason}" if result.reason else ""))
    return replace(result, solver=evidence)


def audit(outs: list[Outcome]) -> dict:
    """What the verdicts rested on: lemmas, side conditions, Z3 statistics, a second solver."""
    stats: dict = {}
    for o in outs:
        for k, v in o.stats.items():
            stats[k] = max(stats.get(k, 0), v) if k == "max memory" else stats.get(k, 0) + v
    out = {"queries": len(outs), "lemmas": sorted(set().union(*[o.lemmas for o in outs])),
           "side_conditions": sum(o.side_conditions for o in outs), "z3": stats}
    cross = [(o, o.cross) for o in outs if o.cross]
    if cross:
        answers: dict = {}
        for _, c in cross:
            answers[c["answer"]] = answers.get(c["answer"], 0) + 1
        out["cross_check"] = {"solver": cross[0][1]["solver"], "version": cross[0][1]["version"],
                              "z3_unsat": len(cross), "answers": answers,
                              "seconds": round(sum(c["seconds"] for _, c in cross), 4)}
        out["disagreements"] = [{"check": o.check.name, "solver": c["solver"], "answer": c["answer"]}
                                for o, c in cross if c["answer"] != "unsat"]
    files = [o.smt2 for o in outs if o.smt2]
    if files:
        out["smt2"] = files
    return out


def _verdict(schedule, prop, phase, outs: list[Outcome], opts: Options) -> Result:
    seconds = sum(o.seconds for o in outs)
    refuted = [o for o in outs if o.verdict is Verdict.REFUTED]
    refuted.sort(key=lambda o: (o.n, o.m))
    if refuted:
        o = refuted[0]
        cex = _replay(schedule, prop, phase, o)
        if cex is not None:
            return Result(prop, phase, Verdict.REFUTED, opts.tier, seconds,
                          f"{o.check.name}: fails at n={o.n}, m={o.m}", cex, len(outs))
        return Result(prop, phase, Verdict.UNKNOWN, opts.tier, seconds,
                      f"{o.check.name}: z3 found n={o.n}, m={o.m} but it did not replay concretely",
                      checks=len(outs))
    unknown = [o for o in outs if o.verdict is Verdict.UNKNOWN]
    if unknown:
        # No proof: look for a concrete counterexample by enumeration before saying `unknown`.
        t0 = time.perf_counter()
        hit = check_sizes(schedule, opts.max_n, [prop], jobs=opts.jobs).get((prop, phase))
        seconds += time.perf_counter() - t0
        why = f"{unknown[0].check.name}: {unknown[0].reason}"
        if hit is not None:
            n, m, f = hit
            ring = run(schedule, n, m)
            cex = Counterexample(n, m, f.check, f.message, f.iterations,
                                 {"confirmed": True, "ring_violations": [str(v) for v in ring.violations],
                                  "max_rel_error": ring.max_rel_error, "witness_only": ring.ok})
            return Result(prop, phase, Verdict.REFUTED, "bounded", seconds,
                          f"{f.check}: fails at n={n}, m={m} (found by enumeration; {why})", cex, len(outs))
        return Result(prop, phase, Verdict.UNKNOWN, opts.tier, seconds,
                      f"{why}; no counterexample with n ≤ {opts.max_n}", checks=len(outs))
    detail = {"checks": sorted({o.check.name for o in outs})}
    if opts.tier == "per-m":
        detail["m"] = f"1..{opts.max_m}"
    return Result(prop, phase, Verdict.PROVED, opts.tier, seconds, checks=len(outs), details=detail)


def _replay(schedule, prop, phase, o: Outcome) -> Counterexample | None:
    """Confirm a Z3 counterexample by enumeration at its (n, m); None if it does not replay."""
    if o.n is None or o.n > REPLAY_MAX_N:
        return None
    found = check_trace(build_trace(schedule, o.n, o.m), [prop]).get((prop, phase), [])
    if not found:
        return None
    twin = [f for f in found if f.check == o.check.name]     # the same check's concrete twin
    f = (twin or found)[0]
    ring = run(schedule, o.n, o.m)
    replay = {"confirmed": True, "finding": f"{f.check}: {f.message}", "same_check": bool(twin),
              "finding_iterations": list(f.iterations),
              "ring_violations": [str(v) for v in ring.violations],
              "max_rel_error": ring.max_rel_error, "witness_only": ring.ok}
    return Counterexample(o.n, o.m, o.check.name, f.message, tuple(o.iterations), replay)


# ----------------------------------------------------------------------------- bounded tier


def _bounded(schedule: Schedule, props, opts: Options) -> list[Result]:
    t0 = time.perf_counter()
    found = check_sizes(schedule, opts.max_n, props, jobs=opts.jobs, only=opts.size)
    secs = time.perf_counter() - t0
    out = []
    for (prop, phase), hit in found.items():
        if hit is None:
            out.append(Result(prop, phase, Verdict.PROVED, "bounded", secs / max(len(found), 1),
                              details=({"n": opts.size[0], "m": opts.size[1]} if opts.size else
                                       {"max_n": opts.max_n, "sizes": len(sizes(opts.max_n))})))
            continue
        n, m, f = hit
        ring = run(schedule, n, m)
        cex = Counterexample(n, m, f.check, f.message, f.iterations,
                             {"confirmed": True, "ring_violations": [str(v) for v in ring.violations],
                              "max_rel_error": ring.max_rel_error, "witness_only": ring.ok})
        out.append(Result(prop, phase, Verdict.REFUTED, "bounded", secs / max(len(found), 1),
                          f"{f.check}: fails at n={n}, m={m}", cex))
    return out


# ----------------------------------------------------------------------------- counts


def _enumerated_counts(schedule, nm) -> dict:
    """Cycles and active ops per kind of one (n, m), enumerated."""
    tr = build_trace(schedule, *nm)
    got = {"cycles": tr.cycles, "ops": {}}
    for pt in tr.phases:
        got["ops"][pt.op.value] = got["ops"].get(pt.op.value, 0) + int(pt.active.sum())
    return got


def _counts(schedule: Schedule, opts: Options, done: list) -> Result:
    t0 = time.perf_counter()
    c = counts(schedule, opts.seed, int(opts.timeout * 1000))
    details = {"cycles": str(c.cycles), "ops": {k: (str(v) if v is not None else None) for k, v in c.ops.items()},
               "phase_cycles": {k: str(v) for k, v in c.phase_cycles.items()},
               "utilization": str(c.utilization) if c.utilization is not None else None,
               "phase_utilization": {k: str(v) for k, v in (c.phase_utilization or {}).items()},
               "readable": {"cycles": readable(c.cycles), "utilization": readable(c.utilization),
                            "ops": {k: readable(v) for k, v in c.ops.items()}}}
    verdict, reason, cex = Verdict.PROVED, "", None
    details["hints"] = c.hints
    if any(c.ops[k] is None for k in ("MAC", "EAC", "DIV")):
        verdict, reason = Verdict.UNKNOWN, "an op count needs a guarded sum that was not derived"
    failed = {p: why for p, why in c.hints.items() if why}
    if failed and not closed(c.cycles):
        verdict = Verdict.UNKNOWN
        reason = "; ".join(f"{p} cycles: counting hint not proved ({why})" for p, why in failed.items())
    if c.bijections and opts.tier != "bounded":
        # a guarded phase does |terms| ops only if its coverage (a bijection onto them) is proved
        cov = {r.phase: r.verdict for r in done if r.property == "coverage"}
        if not set(c.bijections) <= set(cov):
            cov.update({r.phase: r.verdict for r in verify(schedule, replace(opts, properties=("coverage",)))})
        unproved = [p for p in c.bijections if cov.get(p) is not Verdict.PROVED]
        details["bijections"] = list(c.bijections)
        if unproved and verdict is Verdict.PROVED:
            verdict = Verdict.UNKNOWN
            reason = f"op counts of {', '.join(unproved)} rest on coverage, which is not proved"
    for what, claim in schedule.notes.get("claims", {}).items():
        derived = c.cycles if what == "cycles" else c.ops.get(what)
        if derived is None:
            continue
        bad = check_claim(derived, claim)
        if bad is not None and bad[0] is None:
            verdict = Verdict.UNKNOWN
            form = "closed form" if closed(derived) else "sum (no closed form)"
            reason = f"claim {what} = {claim} agrees with the derived {form} for every n ≤ 24 only"
            continue
        if bad is not None:
            n, m, got, want = bad
            verdict = Verdict.REFUTED
            reason = f"claim {what} = {claim} differs from the derived {derived}"
            if n is not None:
                cex = Counterexample(n, m, f"claim {what}", f"derived {got}, claimed {want}")
            break
    if opts.tier == "bounded" and verdict is not Verdict.REFUTED:
        # An op count with no closed form (guarded phases) is compared with its claim, if any.
        claims = schedule.notes.get("claims", {})
        open_ops = {k for k, v in c.ops.items() if v is None}
        compared = set(c.ops) - (open_ops - set(claims))
        todo = sizes(opts.max_n)
        for (n, m), got in zip(todo, fork_map(_enumerated_counts, schedule, todo, opts.jobs, chunksize=4,
                                              min_items=9)):
            want = c.at(n, m)
            want["ops"].update({k: claim_at(claims[k], n, m) for k in open_ops & set(claims)})
            wops = {k: v for k, v in want["ops"].items() if v and k in compared}
            gops = {k: v for k, v in got["ops"].items() if v and k in compared}
            if got["cycles"] != want["cycles"] or gops != wops:
                verdict = Verdict.REFUTED
                reason = f"closed form or claim disagrees with enumeration at n={n}, m={m}"
                cex = Counterexample(n, m, "counts", f"enumerated {got}, closed form {want}")
                break
        else:
            if verdict is Verdict.UNKNOWN and open_ops <= set(claims):
                verdict = Verdict.PROVED
                reason = (f"op counts {', '.join(sorted(open_ops))} of guarded phases: "
                          f"the claims equal the enumeration for n ≤ {opts.max_n}")
    details["claims"] = schedule.notes.get("claims", {})
    return Result("counts", "all", verdict, opts.tier, time.perf_counter() - t0, reason, cex, details=details)
