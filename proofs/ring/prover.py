"""Verify a schedule at a tier: derive the checks, discharge them, group them into results.

A refutation is replayed before it is reported: the bounded checker must find the same property
failing at the counterexample's (n, m), and the ring model runs that instance; a counterexample that
does not replay is reported as `unknown`, never as a refutation.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import replace
from functools import partial

from ringproof.errors import BadInput, InternalError
from ringproof.model.ring.machine import run
from ringproof.model.ring.trace import build_trace
from ringproof.proofs.ring.bounded import check_sizes, shapes, sweep
from ringproof.proofs.ring.conditions import admitted, vacuous, conditions as size_conditions
from ringproof.proofs.ring.formulas import check_formulas
from ringproof.proofs.ring.pool import beside, run_all
from ringproof.proofs.ring.properties import Check, check_trace, derive
from ringproof.proofs.ring.properties.base import generic_step
from ringproof.proofs.ring.session import Session
from ringproof.proofs.ring.smt import Outcome, discharge
from ringproof.proofs.options import Options
from ringproof.proofs.results import PROPERTIES, PROPERTY_TABLE, SOLVER_PROPERTIES, Counterexample, Result, Verdict
from ringproof.schedules import usercode
from ringproof.schedules.dsl import ARITHMETIC, CLAIM_KINDS, LOAD_CLAIMS, Op, Schedule, rescaled
from ringproof.schedules.usercode import time_limit

REPLAY_MAX_N = 96


def undecided(table=PROPERTY_TABLE) -> list[str]:
    """The properties of the table `verify` has no way to decide: each is decided by the registry's
    checks or is the one counting property, `counts` (`_counts`)."""
    return [p.name for p in table if p.decided_by != "checks" and (p.decided_by, p.name) != ("counting", "counts")]


if undecided():
    raise ImportError(f"the prover decides no property {undecided()} of the property table")


def verify(schedule: Schedule, opts: Options = Options(), session: Session | None = None) -> list[Result]:
    """Every property of `opts` for `schedule`, at its tier. `session` (its budget must be the
    options') holds what the solvers found, reused across calls; None: a fresh session of its own."""
    return verify_with_conditions(schedule, opts, session, conditions=False)[0]


def verify_with_conditions(schedule: Schedule, opts: Options = Options(), session: Session | None = None,
                           conditions: bool = True) -> tuple[list[Result], list[dict] | None]:
    """`verify`'s results and, if asked, the size conditions with a failure without each
    (`conditions.conditions`), computed as one more task of the checks' pool, where its bounded
    runs overlap the longer tasks instead of following them."""
    if session is None:
        session = Session(opts.budget)
    elif session.budget != opts.budget:
        raise ValueError(f"the session's budget {session.budget} is not the options' {opts.budget}")
    unknown = set(opts.properties) - set(PROPERTIES)
    if unknown:
        raise BadInput(f"unknown property {sorted(unknown)[0]!r}; known: {', '.join(PROPERTIES)}")
    if admitted(schedule)[0] == "none":
        return vacuous(schedule, opts.properties, opts.tier), size_conditions(schedule) if conditions else None
    opts.progress(f"{schedule.name}: its steps on ints against their formulas")
    results: list[Result] = []
    solver_props = [p for p in opts.properties if p in SOLVER_PROPERTIES]
    derived, enumerated, needed = None, None, None
    # The steps on ints against their formulas in a worker while the checks are derived here (its
    # bad input raised first, before anything is proved: `formulas_checked` before the pool); at
    # once here where nothing else comes before the proofs.
    overlap = bool(solver_props) and opts.tier != "bounded"
    with beside(partial(_formulas, schedule), opts.jobs if overlap else 1) as formulas_checked:
        if solver_props and opts.tier == "bounded":
            formulas_checked()
            opts.progress(f"{schedule.name}: enumerating " + (f"n={opts.size[0]}, m={opts.size[1]}" if opts.size
                          else f"{len(shapes(schedule, opts.max_n))} sizes with n ≤ {opts.max_n}"))
            bounded, enumerated, derived = _bounded(schedule, solver_props, opts, session, "counts" in opts.properties)
            results += bounded
        elif solver_props:
            checks = [c for c in derive(schedule) if c.property in solver_props]
            opts.progress(f"{schedule.name}: {len(checks)} checks at tier {opts.tier}")
            solved, derived, needed = _solve(schedule, checks, opts, session, with_counts="counts" in opts.properties,
                                             conditions=conditions, first=formulas_checked)
            results += solved
        formulas_checked()
    if "counts" in opts.properties:
        opts.progress(f"{schedule.name}: counting cycles and ops")
        results.append(_counts(schedule, opts, session, results, derived, enumerated))
    results = _cite_online_softmax(schedule, results, session)
    order = {p: i for i, p in enumerate(PROPERTIES)}
    phases = {p.name: i for i, p in enumerate(schedule.phases)}
    if conditions and needed is None:    # no pool above computed them
        needed = size_conditions(schedule)
    return sorted(results, key=lambda r: (phases.get(r.phase, len(phases)), order[r.property])), needed


def _formulas(schedule: Schedule) -> None:
    """`check_formulas` under the time limit of the user's code run on ints."""
    files = {code.co_filename for ph in schedule.phases
             if (code := getattr(inspect.unwrap(ph.step), "__code__", None))}
    with time_limit(usercode.SAMPLING_SECONDS, f"{schedule.name}: its steps run on ints at the sampled points", files):
        check_formulas(schedule)


def _cite_online_softmax(schedule: Schedule, results: list[Result], session: Session) -> list[Result]:
    """The coverage of a phase of online-softmax terms (exp(a − b) read with a running reference b,
    or their final division, NORM) shows each term done once; that the accumulators then hold the
    equation's values is the online-softmax lemma, listed among what the result rested on (and the
    result `unknown` if a part of it is not proved)."""
    online_phases = _online_phases(schedule)
    if not online_phases:
        return results
    parts = session.softmax_status()
    out = []
    for r in results:
        if r.property == "coverage" and r.phase in online_phases:
            solver = {**r.solver, "lemmas": sorted(set(r.solver.get("lemmas", ())) | set(parts))}
            r = replace(r, solver=solver)
            missing = [name for name, ok in parts.items() if not ok]
            if missing and r.verdict is Verdict.PROVED:
                r = replace(r, verdict=Verdict.UNKNOWN, reason=f"rests on {missing[0]}, not proved")
        out.append(r)
    return out


def _online_phases(schedule: Schedule) -> set:
    """The phases of online-softmax terms: exp(a − b) read with a running reference b, or their
    final division (NORM)."""
    def online(st):
        reads = st.operands if st.op is Op.NORM else (st.target,) if st.target is not None else ()
        return any(rescaled(schedule.problem, ref.array) for ref in reads)

    return {p.name for p in schedule.phases if online(generic_step(p))}


# ----------------------------------------------------------------------------- solver tiers


def _discharged(check: Check, m_value, session: Session, smt2_dir: str | None):
    """A check's outcome, without the check (it travels back from a worker process)."""
    return replace(discharge(check, session, m_value, smt2_dir=smt2_dir), check=None)


def _solve(schedule: Schedule, checks: list[Check], opts: Options, session: Session, with_counts: bool = False,
           conditions: bool = False, first=None):
    """Results of the checks, and the schedule's counts if asked (computed in the same pool, first,
    since they are the longest tasks): the counts, and beside them their load part (balance,
    per ring step too) and the exact memory peak's derivation and hint checks, joined here; and
    the size conditions if asked (a task after the counts' parts), else None. The checks of the counting
    hints (`recount`) are tasks of their own too: the balance counts with them assumed, and is
    found again without them where one is not proved (`recount.join`). `first`: called before the
    pool starts (a check that must pass before anything is proved)."""
    ms = [None] if opts.tier == "parametric" else list(range(1, opts.max_m + 1))
    keys = [(i, mv) for i in range(len(checks)) for mv in ms]
    tasks = [partial(_discharged, checks[i], mv, session, opts.smt2_dir) for i, mv in keys]
    if with_counts:
        # Imported before the workers fork, once: what the counts tasks import and the parent imports
        # again to print their lines (sympy, the counter's modules; sympy.tensor, which sympy's Add
        # imports on its first call, and sympy.codegen, which lambdify's printer does: each worker
        # imported them, some 0.05 s of CPU).
        import sympy.codegen.ast    # noqa: F401
        import sympy.tensor.tensor    # noqa: F401

        from ringproof.proofs.figures import counting, readable, recount    # noqa: F401
        from ringproof.proofs.figures.memory import held
        hints = held.hint_checks(schedule, session)
        recounts = recount.pending(schedule)     # the balance counts with them assumed, joined below
        recount.assume(schedule, session, recounts)
        recount_checks = [c for _, cs in recounts for c in cs]
        tasks[:0] = [partial(_discharged, c, None, session, None) for c in hints + recount_checks]
    # The long tasks first (`pool.run_all` hands them out in list order): the counts' parts, then
    # the size conditions (ring-attention's 0.4 s, last of ~100 short checks, ended the pool 0.2 s
    # after the other worker), the online-softmax lemma's parts where a phase cites it (Z3 proofs of
    # 0.05 s that the parent ran after the pool), then the hint checks and the checks.
    head = ([partial(held.apart, schedule, session), partial(_count_and_balance, schedule, opts, session),
             partial(held.measured, schedule, session), partial(_step_task, schedule, opts, session)]
            if with_counts else []) + ([partial(size_conditions, schedule)] if conditions else [])
    softmax = bool(_online_phases(schedule)) and session.softmax_known() is None
    tasks[:0] = head + ([session.softmax_status] if softmax else [])
    if first is not None:
        first()
    raw = run_all(tasks, opts.jobs)
    if softmax:
        session.softmax_status(raw.pop(len(head)))
    done, raw = raw[:len(head)], raw[len(head):]
    needed = done[-1] if conditions else None
    if with_counts:
        parts, (counted, balance), peaks, steps = done[:4]
        held.join(schedule, session, parts, peaks, raw[:len(hints)], hints)
        if not recount.join(schedule, session, recounts, raw[len(hints):len(hints) + len(recount_checks)]):
            balance = _balance_task(schedule, session)        # again: a hint not proved counts nothing
        del raw[:len(hints) + len(recount_checks)]
    derived = _with_load(schedule, opts, counted, _memory_part(schedule, session, balance), steps) \
        if with_counts else None
    outcomes: dict = {}
    for (i, _), o in zip(keys, raw):
        outcomes.setdefault(i, []).append(replace(o, check=checks[i]))
    groups: dict = {}
    for i, c in enumerate(checks):
        groups.setdefault((c.property, c.phase), []).extend(outcomes[i])
    sweep = _sweep_unproved(schedule, groups, opts)
    return [_result(schedule, prop, phase, outs, opts, sweep) for (prop, phase), outs in groups.items()], derived, needed


def _sweep_unproved(schedule, groups: dict, opts: Options) -> tuple:
    """One bounded sweep for every group with an unknown and no refuted outcome: (property,
    phase) -> smallest failing size or None, and the sweep's seconds per such group."""
    todo = [key for key, outs in groups.items() if not any(o.verdict is Verdict.REFUTED for o in outs)
            and any(o.verdict is Verdict.UNKNOWN for o in outs)]
    if not todo:
        return {}, 0.0
    t0 = time.perf_counter()
    found = check_sizes(schedule, opts.max_n, sorted({prop for prop, _ in todo}), jobs=opts.jobs)
    return found, (time.perf_counter() - t0) / len(todo)


def _result(schedule, prop, phase, outs: list[Outcome], opts: Options, sweep: tuple) -> Result:
    result = _verdict(schedule, prop, phase, outs, opts, sweep)
    evidence = audit(outs)
    if evidence.get("disagreements"):
        first = evidence["disagreements"][0]
        what = "SOLVERS DISAGREE" if first["answer"] == "sat" else "SECOND SOLVER DID NOT CONFIRM"
        result = replace(result, verdict=Verdict.UNKNOWN,
                         reason=f"{what} on {first['check']}: z3 unsat, {first['solver']} "
                                f"{first['answer']}" + (f"; {result.reason}" if result.reason else ""))
    return replace(result, solver=evidence)


def _zero():
    import sympy
    return sympy.Integer(0)


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


def _verdict(schedule, prop, phase, outs: list[Outcome], opts: Options, sweep: tuple) -> Result:
    seconds = sum(o.seconds for o in outs)
    refuted = [o for o in outs if o.verdict is Verdict.REFUTED]
    refuted.sort(key=lambda o: (o.n + o.d, o.n, o.m))
    if refuted:
        o = refuted[0]
        cex = _replay(schedule, prop, phase, o)
        if cex is not None:
            return Result(prop, phase, Verdict.REFUTED, opts.tier, seconds,
                          f"{o.check.name}: fails at {cex.sizes()}", cex, len(outs))
        where = Counterexample(o.n, o.m, "", "", d=schedule.shape.own("d", o.d)).sizes()
        return Result(prop, phase, Verdict.UNKNOWN, opts.tier, seconds,
                      f"{o.check.name}: z3 found {where} but it did not replay concretely",
                      checks=len(outs))
    unknown = [o for o in outs if o.verdict is Verdict.UNKNOWN]
    if unknown:
        # No proof: a concrete counterexample by enumeration (`_sweep_unproved`) before `unknown`.
        found, sweep_seconds = sweep
        hit = found.get((prop, phase))
        seconds += sweep_seconds
        why = f"{unknown[0].check.name}: {unknown[0].reason}"
        if hit is not None:
            cex = _enumerated(schedule, *hit)
            return Result(prop, phase, Verdict.REFUTED, "bounded", seconds,
                          f"{cex.check}: fails at {cex.sizes()} (found by enumeration; {why})", cex, len(outs))
        return Result(prop, phase, Verdict.UNKNOWN, opts.tier, seconds,
                      f"{why}; no counterexample with n ≤ {opts.max_n}", checks=len(outs))
    detail = {"checks": sorted({o.check.name for o in outs})}
    if opts.tier == "per-m":
        detail["m"] = f"1..{opts.max_m}"
    return Result(prop, phase, Verdict.PROVED, opts.tier, seconds, checks=len(outs), details=detail)


def _replay(schedule, prop, phase, o: Outcome) -> Counterexample | None:
    """Confirm a Z3 counterexample by enumeration at its (n, m); None if it does not replay."""
    if o.n is None or o.n > REPLAY_MAX_N or o.d > REPLAY_MAX_N:
        return None
    found = check_trace(build_trace(schedule, o.n, o.m, o.d), [prop]).get((prop, phase), [])
    if not found:
        return None
    twin = [f for f in found if f.check == o.check.name]     # the same check's concrete twin
    f = (twin or found)[0]
    ring = run(schedule, o.n, o.m, d=o.d)
    replay = {"confirmed": True, "finding": f"{f.check}: {f.message}", "same_check": bool(twin),
              "finding_iterations": list(f.iterations),
              "ring_violations": [str(v) for v in ring.violations],
              "max_rel_error": ring.max_rel_error, "first_difference": ring.difference, "witness_only": ring.ok}
    return Counterexample(o.n, o.m, o.check.name, f.message, tuple(o.iterations), replay,
                          schedule.shape.own("d", o.d))


def _enumerated(schedule, n, m, f) -> Counterexample:
    """The counterexample of a finding of the bounded sweep, run on the ring model; `witness_only`:
    the ring computes the right result there, so only a witness is wrong."""
    ring = run(schedule, n, m, d=f.d)
    return Counterexample(n, m, f.check, f.message, f.iterations,
                          {"confirmed": True, "ring_violations": [str(v) for v in ring.violations],
                           "max_rel_error": ring.max_rel_error, "first_difference": ring.difference,
                           "witness_only": ring.ok},
                          schedule.shape.own("d", f.d))


# ----------------------------------------------------------------------------- bounded tier


def _bounded(schedule: Schedule, props, opts: Options, session: Session,
             with_counts: bool) -> tuple[list[Result], dict | None, tuple]:
    """The results of the sweep; its enumerated counts when it covered every size (the counts
    tier's own sweep, then, is not run again); the counts' closed forms if asked, computed in the
    same pool, first (`_count_task`)."""
    t0 = time.perf_counter()
    swept = sweep(schedule, opts.max_n, props, jobs=opts.jobs, only=opts.size,
                  first=partial(_count_task, schedule, opts, session, True) if with_counts else None)
    found = swept.verdicts
    secs = time.perf_counter() - t0
    out = []
    for (prop, phase), hit in found.items():
        if hit is None:
            out.append(Result(prop, phase, Verdict.PROVED, "bounded", secs / max(len(found), 1),
                              details=({"n": opts.size[0], "m": opts.size[1]} if opts.size else
                                       {"max_n": opts.max_n, "sizes": len(shapes(schedule, opts.max_n))})))
            continue
        cex = _enumerated(schedule, *hit)
        out.append(Result(prop, phase, Verdict.REFUTED, "bounded", secs / max(len(found), 1),
                          f"{cex.check}: fails at {cex.sizes()}", cex))
    return out, (None if opts.size else swept.counts), swept.first


# ----------------------------------------------------------------------------- counts


def _counts(schedule: Schedule, opts: Options, session: Session, done: list, counted=None,
            enumerated=None) -> Result:
    """The counts result; `counted` is `_count_task(schedule, opts, session)` if a pool already ran it,
    `enumerated` the bounded sweep's counts per (n, m, d) if it covered every size."""
    if counted is None:
        counted = _count_task(schedule, opts, session, keep=opts.tier == "bounded")
    t_end = time.perf_counter()
    result, bijections, c = counted
    on_terms = ((result.details or {}).get("balance") or {}).get("on_coverage") or []
    cov = {r.phase: r for r in done if r.property == "coverage"}
    if (bijections and opts.tier != "bounded" and result.verdict is Verdict.PROVED) or on_terms:
        # a guarded phase does |terms| ops only if its coverage (a bijection onto them) is proved
        if not set(bijections) | set(on_terms) <= set(cov):
            cov.update({r.phase: r for r in verify(schedule, replace(opts, properties=("coverage",)), session)})
    if bijections and opts.tier != "bounded" and result.verdict is Verdict.PROVED:
        unproved = [p for p in bijections if p not in cov or cov[p].verdict is not Verdict.PROVED]
        if unproved:
            result = replace(result, verdict=Verdict.UNKNOWN,
                             reason=f"op counts of {', '.join(unproved)} rest on coverage, which is not proved")
    if on_terms:
        result = _balance_rests(schedule, result, on_terms, cov, opts)
    memory = (result.details or {}).get("memory") or {}
    if memory:
        result = _memory_rests(schedule, result, memory, done, opts)
    if opts.tier == "bounded" and result.verdict is not Verdict.REFUTED:
        result = _enumerate_counts(schedule, opts, result, c, enumerated)
    return replace(result, seconds=result.seconds + time.perf_counter() - t_end)


def _balance_rests(schedule: Schedule, result: Result, on_terms: list, cov: dict, opts: Options) -> Result:
    """A spread counted over some phases' terms stands (for every n) only with their coverage
    proved for every n in this run; else it is printed as derived, not proved, and a claim of it is
    unknown (as `_memory_rests` does for the exact peak)."""
    balance = result.details["balance"]
    ok = [p for p in on_terms if p in cov and cov[p].verdict is Verdict.PROVED]
    if balance.get("spread") is None or (len(ok) == len(on_terms) and all(cov[p].tier != "bounded" for p in ok)):
        return result
    why = f"rests on the coverage of {', '.join(on_terms)}, " + (
        f"proved only for n ≤ {opts.max_n} in this run (tier bounded)" if len(ok) == len(on_terms)
        else "not proved in this run")
    if result.verdict is Verdict.PROVED and "balance" in schedule.notes.get("claims", {}):
        result = replace(result, verdict=Verdict.UNKNOWN, reason=f"claim balance {why}")
    balance = dict(balance, spread=None, derived=balance["spread"], reason=f"it {why}")
    return replace(result, details=dict(result.details, balance=balance))


def _memory_rests(schedule: Schedule, result: Result, memory: dict, done: list, opts: Options) -> Result:
    """The exact peak counts no stay begun by a use: it stands (for every n) only with the
    properties that show each use's source (`held.RESTS_ON`) proved for every n in this run.
    Without them (not proved, or proved at tier bounded only) it is printed as derived, not proved,
    and a claim of it is unknown; a peak that disagrees with the ring model while they are proved
    is the prover's error."""
    from ringproof.proofs.figures.memory import held
    rests = [r for r in done if r.property in held.RESTS_ON]
    proved = bool(rests) and all(r.verdict is Verdict.PROVED for r in rests)
    everywhere = proved and all(r.tier != "bounded" for r in rests)
    if everywhere and memory.get("reason", "").startswith(held.MISMATCH):
        raise InternalError(f"memory: {memory['reason']}, and both are proved")
    if everywhere or not memory.get("closed_form"):
        return result
    why = f"rests on {' and '.join(held.RESTS_ON)}, " + (
        f"proved only for n ≤ {opts.max_n} in this run (tier bounded)" if proved else "not proved in this run")
    if result.verdict is Verdict.PROVED and "memory" in schedule.notes.get("claims", {}):
        result = replace(result, verdict=Verdict.UNKNOWN, reason=f"claim memory {why}")
    memory = dict(memory, closed_form=None, derived=memory["closed_form"], reason=f"exact peak not proved: it {why}")
    return replace(result, details=dict(result.details, memory=memory))


def _count_task(schedule: Schedule, opts: Options, session: Session, keep: bool = False, load: bool = True) -> tuple:
    """(the counts Result before the coverage it may rest on is known, the phases whose op counts
    rest on their coverage, the counts themselves if `keep`). Runs in the pool beside the solver
    checks; what it returns holds no sympy object unless `keep`, so the parent never imports
    sympy for a parametric proof.

    Every claimed kind is checked: shown equal to its derived form (proved), refuted at a size
    (replayed on the ring model), or, where its form is not derived or no size up to the sampled
    bound tells them apart, `unknown` saying which kind and why. Claims of balance and memory are
    decided by `spread` and `held` (`_load_task`; without `load`, left for `_with_load`: `_solve`'s
    pool computes them in `_count_and_balance` and the exact memory peak's tasks)."""
    from ringproof.proofs.figures.counting import check_claim, claim_bound, counts, derived_parameters
    from ringproof.proofs.figures.readable import readable

    t0 = time.perf_counter()
    c = counts(schedule, session)
    text = (lambda e: str(e) if e is not None else None)
    details = {"cycles": text(c.cycles), "ops": {k: text(v) for k, v in c.ops.items()},
               "phase_cycles": {k: text(v) for k, v in c.phase_cycles.items()},
               "utilization": text(c.utilization),
               "phase_utilization": {k: str(v) for k, v in (c.phase_utilization or {}).items()},
               "readable": {"cycles": readable(c.cycles), "utilization": readable(c.utilization),
                            "ops": {k: readable(v) for k, v in c.ops.items()}}}
    details["hints"] = c.hints
    if c.why:
        details["not_derived"] = dict(c.why)
    claims = schedule.notes.get("claims", {})
    needed = ["cycles", *ARITHMETIC] + [k for k in claims if k not in ("cycles", *ARITHMETIC)
                                          and k not in LOAD_CLAIMS]
    missing = [k for k in needed if k in c.why]
    verdict, reason, cex = Verdict.PROVED, "", None
    if missing:
        verdict = Verdict.UNKNOWN
        reason = "; ".join(f"{k} not derived ({c.why[k]})" for k in missing)
    bijections = list(c.bijections) if opts.tier != "bounded" else []
    for what, claim in claims.items():
        if what in LOAD_CLAIMS:
            continue
        derived = c.cycles if what == "cycles" else c.ops.get(what, _zero())   # a kind it never runs: 0
        if derived is None:
            continue                       # named in the reason above
        bad = check_claim(derived, claim, shape=schedule.shape, seed=opts.seed,
                          derived_params=derived_parameters(schedule))
        if bad is not None and bad[0] is None:
            verdict = Verdict.UNKNOWN
            limit_n, limit_d = claim_bound(schedule.shape)
            bound = f"n ≤ {limit_n}" + (f" and d ≤ {limit_d}" if schedule.shape.is_free("d") else "")
            reason = (reason + "; " if reason else "") + (
                f"claim {what} = {claim} agrees with the derived closed form for every {bound} only")
            continue
        if bad is not None:
            n, m, d, got, want = bad
            verdict = Verdict.REFUTED
            reason = f"claim {what} = {claim} differs from the derived {derived}"
            cex = _count_replay(schedule, what, n, m, d, int(got), int(want))
            reason = _breaks(cex) or reason
            break
    details["claims"] = claims
    result = Result("counts", "all", verdict, opts.tier, time.perf_counter() - t0, reason, cex, details=details)
    counted = result, bijections, c if keep else None
    return _with_load(schedule, opts, counted, _load_task(schedule, session),
                      _step_task(schedule, opts, session)) if load else counted


def _load_task(schedule: Schedule, session: Session) -> tuple:
    """(balance summary, memory summary, [(verdict, why, counterexample) of each claim of balance or
    memory, in the claims' order], seconds): the load part of the counts result."""
    return _memory_part(schedule, session, _balance_task(schedule, session))


def _balance_task(schedule: Schedule, session: Session) -> tuple:
    """(balance summary, {position of a balance claim among the claims of balance or memory: its
    verdict}, seconds)."""
    from ringproof.proofs.figures import spread
    t0 = time.perf_counter()
    balance = spread.summary(schedule, session, steps=False)
    verdicts = {i: spread.check_claim(schedule, claim, session) for i, (what, claim) in enumerate(_load_claims(schedule))
                if what == "balance"}
    return balance, verdicts, time.perf_counter() - t0


def _memory_part(schedule: Schedule, session: Session, balanced: tuple) -> tuple:
    """`_load_task`'s answer from `_balance_task`'s: the memory summary and the verdicts of the
    memory claims added (the exact peak from `session` where a pool joined it there)."""
    from ringproof.proofs.figures.memory import held
    t0 = time.perf_counter()
    balance, verdicts, seconds = balanced
    memory = held.summary(schedule, session)
    verdicts = {**verdicts, **{i: held.check_claim(schedule, claim, session)
                               for i, (what, claim) in enumerate(_load_claims(schedule)) if what == "memory"}}
    return balance, memory, [verdicts[i] for i in sorted(verdicts)], seconds + time.perf_counter() - t0


def _load_claims(schedule: Schedule) -> list:
    return [(what, claim) for what, claim in schedule.notes.get("claims", {}).items() if what in LOAD_CLAIMS]


def _count_and_balance(schedule: Schedule, opts: Options, session: Session) -> tuple:
    """(`_count_task` without its load part, `_balance_task`): one pool task, since they read the
    same per-phase forms and counter's answers (in two tasks each worker derived them: 1.5 s more
    CPU of algo3-fast's 10 s). The balance per ring step (`_step_task`) and the exact memory peak
    are tasks of their own (with the step part, this was the longest task of zigzag's proof)."""
    return _count_task(schedule, opts, session, load=False), _balance_task(schedule, session)


def _step_task(schedule: Schedule, opts: Options, session: Session) -> dict:
    """The balance per ring step (`spread.step_summary`) and, with --idle-pes, the cycles with idle
    PEs not waiting (`balance.idle_pes`), JSON-ready: the third part of the counts result."""
    from ringproof.proofs.figures import spread
    from ringproof.proofs.figures.counting import in_n_m_d, tidy
    out = spread.step_summary(schedule, session)
    if opts.idle_pes:
        idle, why = spread.idle_cycles(schedule, session)
        out["idle_pes"] = {"cycles": None if idle is None else str(tidy(in_n_m_d(idle))), "reason": why}
    return out


def _with_load(schedule: Schedule, opts: Options, counted: tuple, load: tuple, steps: dict) -> tuple:
    """The counts result of `_count_task` without its load part, completed by `_load_task`'s: the
    balance and memory summaries, the phases the balance forms rest on the coverage of, and the
    verdicts of the claims of balance and memory (a refutation of another claim stands); and by
    `_step_task`'s balance per ring step."""
    result, bijections, c = counted
    balance, memory, verdicts, seconds = load
    details = dict(result.details, balance={**balance, **steps}, memory=memory)
    if opts.tier != "bounded":
        bijections = bijections + [p for p in balance.get("on_coverage", []) if p not in bijections]
    if bijections:
        details["bijections"] = bijections
    verdict, reason, cex = result.verdict, result.reason, result.counterexample
    for v, why, bad in verdicts:
        if v is not Verdict.PROVED and verdict is not Verdict.REFUTED:
            verdict, reason, cex = v, (reason + "; " if reason and v is Verdict.UNKNOWN else "") + why, bad
    return replace(result, verdict=verdict, reason=reason, counterexample=cex, details=details,
                   seconds=result.seconds + seconds), bijections, c


def _count_replay(schedule: Schedule, what: str, n: int, m: int, d: int, derived: int, claimed: int,
                  source: str = "derived") -> Counterexample:
    """A counts refutation with the ring model's run at its size. The count it measures must be the
    `source` one, unless the run shows the schedule broken there (a rule violated or a wrong
    result, at a size `requires` admits): a derived count assumes the schedule computes its problem
    (|terms| rests on coverage), so that is the schedule refuted, the counterexample saying where it
    breaks (`replay["breaks"]`). A valid run measuring another count is ringproof wrong: an
    internal error, never a refutation."""
    ring = run(schedule, n, m, d=d)
    measured = {"cycles": ring.cycles, **ring.ops}
    got = measured.get(what, 0)
    replay = {"confirmed": True, "ring_counts": measured, "count": what, "measured": got,
              "ring_violations": [str(v) for v in ring.violations], "max_rel_error": ring.max_rel_error,
              "first_difference": ring.difference}
    where = f"n={n}, m={m}" + (f", d={d}" if schedule.shape.is_free("d") else "")
    if not ring.ok:
        replay["breaks"] = (str(ring.violations[0]) if ring.violations else
                            f"its result differs from numpy (max relative error {ring.max_rel_error:.3g})")
    if got != derived:
        if ring.ok:
            raise InternalError(f"counts: the {source} {what} is {derived} at {where}, the ring model measures "
                                f"{got} in a valid run")
        return Counterexample(n, m, f"claim {what}", f"the schedule breaks at {where} ({replay['breaks']}): "
                              f"the ring model measures {what} {got}, the {source} form (which assumes a "
                              f"correct run) gives {derived}, claimed {claimed}", (), replay,
                              schedule.shape.own("d", d))
    return Counterexample(n, m, f"claim {what}", f"{source} {derived}, claimed {claimed}, the ring model "
                          f"measures {got}", (), replay, schedule.shape.own("d", d))


def _breaks(cex: Counterexample) -> str:
    """The reason of a counts refutation whose replay found the schedule broken, else ""."""
    why = cex.replay.get("breaks")
    return f"the schedule breaks at {cex.sizes()}, a size its side condition admits: {why}" if why else ""


def _enumerate_counts(schedule: Schedule, opts: Options, result: Result, c, enumerated=None) -> Result:
    """The bounded tier: cycles and every op count enumerated for every size up to max_n (the
    sweep's, or a counting sweep of its own; the one size of `opts.size`) against every claim and
    every derived form. A claim the run contradicts is refuted; a derived form the run contradicts
    is refuted where it rests on a phase's coverage, else an internal error (the counter is wrong)."""
    from ringproof.proofs.figures.counting import claim_at, rests_on_coverage

    claims = schedule.notes.get("claims", {})
    todo = ([(opts.size[0], opts.size[1], opts.size[2] if len(opts.size) > 2 else opts.size[0])]
            if opts.size else shapes(schedule, opts.max_n))
    if enumerated is None:
        enumerated = sweep(schedule, opts.max_n, jobs=opts.jobs, checks=False, only=opts.size).counts
    on_coverage = rests_on_coverage(schedule, c)
    for n, m, d in todo:
        got = enumerated[n, m, d]
        derived = c.at(n, m, d, schedule.shape)
        for kind in CLAIM_KINDS:
            measured = got["cycles"] if kind == "cycles" else got["ops"].get(kind, 0)
            form = derived["cycles"] if kind == "cycles" else derived["ops"].get(kind)
            where = Counterexample(n, m, "", "", d=schedule.shape.own("d", d)).sizes()
            claimed = claim_at(claims[kind], n, m, d, schedule.shape) if kind in claims else None
            if kind in claims and claimed != measured:
                cex = _count_replay(schedule, kind, n, m, d, measured, claimed, "enumerated")
                return replace(result, verdict=Verdict.REFUTED, counterexample=cex,
                               reason=f"claim {kind} = {claims[kind]} disagrees with the run at {where}")
            if form is not None and form != measured:
                cex = _count_replay(schedule, kind, n, m, d, measured, form, "enumerated")
                if kind not in on_coverage and not _breaks(cex):
                    raise InternalError(f"counts: the derived {kind} is {form} at {where}, enumeration {measured} "
                                        f"in a valid run")
                return replace(result, verdict=Verdict.REFUTED, counterexample=cex,
                               reason=_breaks(cex) or f"{kind} = |terms| (phases {', '.join(c.bijections)} covering "
                                                      f"their terms once) disagrees with the run at {where}")
    open_kinds = {k for k in ["cycles", *ARITHMETIC, *claims] if k in c.why}
    if result.verdict is Verdict.UNKNOWN and open_kinds <= set(claims):
        bound = f"n={todo[0][0]}, m={todo[0][1]}" if opts.size else f"n ≤ {opts.max_n}"
        return replace(result, verdict=Verdict.PROVED,
                       reason=(f"counts {', '.join(sorted(open_kinds))} not derived: " if open_kinds else "")
                       + f"the claims equal the run for {bound}")
    return result
