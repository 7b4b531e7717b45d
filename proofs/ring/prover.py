"""Verify a schedule at a tier: derive the checks, discharge them, group them into results.

A refutation is replayed before it is reported: the bounded checker must find the same property
failing at the counterexample's (n, m), and the ring model runs that instance; a counterexample that
does not replay is reported as `unknown`, never as a refutation.

The figures (counts, balance, memory: `ringproof.proofs.figures`) are named tasks of the same pool
as the checks; they come back as typed records (`figures.records`), and each figure's row is
gated by what the property table says it rests on (`_standing`) once the checks are in.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, replace
from functools import partial

from ringproof.errors import BadInput, InternalError
from ringproof.model.ring.machine import run
from ringproof.model.ring.trace import build_trace
from ringproof.proofs.ring.bounded import Failing, check_sizes, shapes, sweep
from ringproof.proofs.ring.conditions import admitted, vacuous, conditions as size_conditions
from ringproof.proofs.ring.formulas import check_formulas
from ringproof.proofs.ring.pool import beside, run_named
from ringproof.proofs.ring.properties import Check, check_trace, derive
from ringproof.proofs.ring.properties.base import generic_step
from ringproof.proofs.ring.session import Session
from ringproof.proofs.ring.smt import Outcome, discharge
from ringproof.proofs.options import Options
from ringproof.proofs.figures.records import Balance, Claimed, Counts, Memory
from ringproof.proofs.results import (FIGURES, PROPERTIES, PROPERTY_TABLE, SOLVER_PROPERTIES, TIERS, Counterexample,
                                      Result, Verdict, property_row)
from ringproof.schedules import usercode
from ringproof.schedules.dsl import ARITHMETIC, CLAIM_KINDS, LOAD_CLAIMS, Op, Schedule, rescaled
from ringproof.schedules.usercode import time_limit

REPLAY_MAX_N = 96


# the properties not decided by checks that `_figures` decides
DECIDED_HERE = {"counting": ("counts",), "figure": ("balance", "memory")}


def undecided(table=PROPERTY_TABLE) -> list[str]:
    """The properties of the table `verify` has no way to decide: each is decided by the registry's
    checks or is one of the figures `_figures` decides."""
    return [p.name for p in table if p.decided_by != "checks" and p.name not in DECIDED_HERE.get(p.decided_by, ())]


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
    solver_props = [p for p in opts.properties if p in SOLVER_PROPERTIES]
    checked = Checked([])
    figures = [p for p in opts.properties if p in FIGURES]
    # The steps on ints against their formulas in a worker while the checks are derived here (its
    # bad input raised first, before anything is proved: `formulas_checked` before the pool); at
    # once here where nothing else comes before the proofs.
    overlap = bool(solver_props) and opts.tier != "bounded"
    with beside(partial(_formulas, schedule), opts.jobs if overlap else 1) as formulas_checked:
        if solver_props and opts.tier == "bounded":
            formulas_checked()
            opts.progress(f"{schedule.name}: enumerating " + (f"n={opts.size[0]}, m={opts.size[1]}" if opts.size
                          else f"{len(shapes(schedule, opts.max_n))} sizes with n ≤ {opts.max_n}"))
            checked = _bounded(schedule, solver_props, opts, session, bool(figures))
        elif solver_props:
            checks = [c for c in derive(schedule) if c.property in solver_props]
            opts.progress(f"{schedule.name}: {len(checks)} checks at tier {opts.tier}")
            checked = _solve(schedule, checks, opts, session, with_counts=bool(figures), conditions=conditions,
                             first=formulas_checked)
        formulas_checked()
    results = list(checked.results)
    if figures:
        opts.progress(f"{schedule.name}: counting cycles and ops")
        results += _figures(schedule, opts, session, results, checked.counted, checked.enumerated)
    results = _cite_online_softmax(schedule, results, session)
    order = {p: i for i, p in enumerate(PROPERTIES)}
    phases = {p.name: i for i, p in enumerate(schedule.phases)}
    needed = checked.conditions
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


@dataclass(frozen=True)
class Checked:
    """What a tier's checks found: their results; the figures' `Counted` where their pool computed
    them (else `_figures` counts); the bounded sweep's counts per (n, m, d) where it covered every
    size; the size conditions where their pool computed them."""

    results: list
    counted: Counted | None = None
    enumerated: dict | None = None
    conditions: list | None = None


def _discharged(check: Check, m_value, session: Session, smt2_dir: str | None):
    """A check's outcome, without the check (it travels back from a worker process)."""
    return replace(discharge(check, session, m_value, smt2_dir=smt2_dir), check=None)


def _solve(schedule: Schedule, checks: list[Check], opts: Options, session: Session, with_counts: bool = False,
           conditions: bool = False, first=None) -> Checked:
    """Results of the checks, and the schedule's figures if asked (computed in the same pool, first,
    since they are the longest tasks): the counts with their balance figures, the balance per ring
    step, and the exact memory peak's derivation and hint checks, joined here (`Counted`); and the
    size conditions if asked. The checks of the counting hints (`recount`) are tasks of
    their own too: the balance counts with them assumed, and is found again without them where one
    is not proved (`recount.join`). `first`: called before the pool starts (a check that must pass
    before anything is proved). The pool runs named tasks; their answers are read by name."""
    ms = [None] if opts.tier == "parametric" else list(range(1, opts.max_m + 1))
    keys = [(i, mv) for i in range(len(checks)) for mv in ms]
    tasks: dict = {}        # name -> zero-argument task, handed out in this order: the long ones first
    if with_counts:
        # Imported before the workers fork, once: what the counts tasks import and the parent imports
        # again to print their lines (sympy, the counter's modules; sympy.tensor, which sympy's Add
        # imports on its first call, and sympy.codegen, which lambdify's printer does).
        import sympy.codegen.ast    # noqa: F401
        import sympy.tensor.tensor    # noqa: F401

        from ringproof.proofs.figures import counting, readable, recount    # noqa: F401
        from ringproof.proofs.figures.memory import held
        hints = held.hint_checks(schedule, session)
        recounts = recount.pending(schedule)     # the balance counts with them assumed, joined below
        recount.assume(schedule, session, recounts)
        tasks["memory apart"] = partial(held.apart, schedule, session)
        tasks["counts and balance"] = partial(_count_and_balance, schedule, opts, session)
        tasks["peaks measured"] = partial(held.measured, schedule, session)
        tasks["balance per step"] = partial(_step_task, schedule, opts, session)
    if conditions:      # after the counts' parts: a long task among ~100 short checks would end the pool late
        tasks["size conditions"] = partial(size_conditions, schedule)
    if bool(_online_phases(schedule)) and session.softmax_known() is None:
        tasks["online softmax"] = session.softmax_status     # the lemma's parts, where a phase cites it
    if with_counts:
        tasks.update({("hint", i): partial(_discharged, c, None, session, None) for i, c in enumerate(hints)})
        tasks.update({("recount", key, part): partial(_discharged, c, None, session, None)
                      for key, cs in recounts.items() for part, c in cs.items()})
    tasks.update({("check", i, mv): partial(_discharged, checks[i], mv, session, opts.smt2_dir) for i, mv in keys})
    if first is not None:
        first()
    done = run_named(tasks, opts.jobs)
    if "online softmax" in done:
        session.softmax_status(done["online softmax"])
    counted = None
    if with_counts:
        held.join(schedule, session, done["memory apart"], done["peaks measured"],
                  [done["hint", i] for i in range(len(hints))], hints)
        balance = done["counts and balance"].counts.balance
        if not recount.join(schedule, session, recounts, {(key, part): done["recount", key, part]
                                                          for key, cs in recounts.items() for part in cs}):
            balance = _balance_task(schedule, session)        # again: a hint not proved counts nothing
        counted = _with_load(schedule, opts, done["counts and balance"], balance, _memory_task(schedule, session),
                             done["balance per step"])
    outcomes: dict = {}
    for i, mv in keys:
        outcomes.setdefault(i, []).append(replace(done["check", i, mv], check=checks[i]))
    groups: dict = {}
    for i, c in enumerate(checks):
        groups.setdefault((c.property, c.phase), []).extend(outcomes[i])
    sweep = _sweep_unproved(schedule, groups, opts)
    return Checked([_result(schedule, prop, phase, outs, opts, sweep) for (prop, phase), outs in groups.items()],
                   counted, conditions=done.get("size conditions"))


@dataclass(frozen=True)
class Swept:
    """The bounded sweep of the groups left unproved (`_sweep_unproved`): (property, phase) -> the
    smallest `bounded.Failing` or None, and the sweep's seconds per such group."""

    failing: dict
    seconds: float = 0.0


def _sweep_unproved(schedule, groups: dict, opts: Options) -> Swept:
    """One bounded sweep for every group with an unknown and no refuted outcome."""
    todo = [key for key, outs in groups.items() if not any(o.verdict is Verdict.REFUTED for o in outs)
            and any(o.verdict is Verdict.UNKNOWN for o in outs)]
    if not todo:
        return Swept({})
    t0 = time.perf_counter()
    found = check_sizes(schedule, opts.max_n, sorted({prop for prop, _ in todo}), jobs=opts.jobs)
    return Swept(found, (time.perf_counter() - t0) / len(todo))


def _result(schedule, prop, phase, outs: list[Outcome], opts: Options, sweep: Swept) -> Result:
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


def _verdict(schedule, prop, phase, outs: list[Outcome], opts: Options, sweep: Swept) -> Result:
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
        hit = sweep.failing.get((prop, phase))
        seconds += sweep.seconds
        why = f"{unknown[0].check.name}: {unknown[0].reason}"
        if hit is not None:
            cex = _enumerated(schedule, hit)
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


def _enumerated(schedule, hit: Failing) -> Counterexample:
    """The counterexample of a finding of the bounded sweep, run on the ring model; `witness_only`:
    the ring computes the right result there, so only a witness is wrong."""
    f = hit.finding
    ring = run(schedule, hit.n, hit.m, d=f.d)
    return Counterexample(hit.n, hit.m, f.check, f.message, f.iterations,
                          {"confirmed": True, "ring_violations": [str(v) for v in ring.violations],
                           "max_rel_error": ring.max_rel_error, "first_difference": ring.difference,
                           "witness_only": ring.ok},
                          schedule.shape.own("d", f.d))


# ----------------------------------------------------------------------------- bounded tier


def _bounded(schedule: Schedule, props, opts: Options, session: Session, with_counts: bool) -> Checked:
    """The results of the sweep; its enumerated counts when it covered every size (the counts
    tier's own sweep, then, is not run again); the counts' closed forms if asked, computed in the
    same pool, first (`_count_task`'s `Counted`)."""
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
        cex = _enumerated(schedule, hit)
        out.append(Result(prop, phase, Verdict.REFUTED, "bounded", secs / max(len(found), 1),
                          f"{cex.check}: fails at {cex.sizes()}", cex))
    return Checked(out, swept.first, None if opts.size else swept.counts)


# ----------------------------------------------------------------------------- figures


@dataclass(frozen=True)
class Counted:
    """What the counting task hands on: the `Counts` record and, where kept, the counter's sympy
    answer (`counting.counts`: the bounded tier compares its forms with enumeration)."""

    counts: Counts
    forms: object = None


@dataclass(frozen=True)
class Standing:
    """How this run's results left what a figure rests on (its table row's `rests_on`): `open`,
    the phases (or properties) not proved; `bounded`, every one proved, some at tier bounded only;
    `tier`, the weakest tier among the proved ones and the run's."""

    open: tuple
    bounded: bool
    tier: str

    @property
    def everywhere(self) -> bool:
        return not self.open and not self.bounded

    def why(self, what: str, max_n: int) -> str:
        """"rests on `what`, not proved in this run" or "..., proved only for n ≤ max_n ..."."""
        return f"rests on {what}, " + (f"proved only for n ≤ {max_n} in this run (tier bounded)" if not self.open
                                       else "not proved in this run")


def _standing(name: str, done: list, opts: Options, phases=None) -> Standing:
    """The one gate for "rests on": the results in `done` of the properties the table's row `name`
    rests on, of `phases` (each needed) or, without phases, of every phase (at least one needed)."""
    rests = property_row(name).rests_on
    on = [r for r in done if r.property in rests and (phases is None or r.phase in phases)]
    if phases is None:
        missing = () if on and all(r.verdict is Verdict.PROVED for r in on) else rests
    else:
        got = {(r.property, r.phase): r for r in on}
        missing = tuple(dict.fromkeys(ph for p in rests for ph in phases
                                      if (p, ph) not in got or got[p, ph].verdict is not Verdict.PROVED))
    tier = max([opts.tier] + [r.tier for r in on if r.verdict is Verdict.PROVED], key=TIERS.index)
    return Standing(missing, not missing and any(r.tier == "bounded" for r in on), tier)


def _fetched(schedule: Schedule, opts: Options, session: Session, done: list, name: str, phases=None) -> list:
    """`done` with the results a figure rests on (`_standing`) that this run did not ask for, proved
    now in the same session."""
    rests = property_row(name).rests_on
    have = {(r.property, r.phase) for r in done}
    todo = [p for p in rests if (not any(h[0] == p for h in have) if phases is None
                                 else not all((p, ph) in have for ph in phases))]
    if not todo:
        return done
    return done + [r for r in verify(schedule, replace(opts, properties=tuple(todo)), session)
                   if (r.property, r.phase) not in have]


def _figures(schedule: Schedule, opts: Options, session: Session, done: list, counted: Counted | None = None,
             enumerated=None) -> list[Result]:
    """The rows of the figures asked (counts, balance, memory; `counted`: `_count_task`'s answer
    if a pool already ran it, `enumerated` the bounded sweep's counts per (n, m, d) if it covered
    every size), each gated by what it rests on."""
    if counted is None:
        counted = _count_task(schedule, opts, session, keep=opts.tier == "bounded")
    t_end = time.perf_counter()
    counts, asked = counted.counts, set(opts.properties)
    on_terms = list(counts.balance.on_coverage) if counts.balance is not None else []
    # a guarded phase does |terms| ops only if its coverage (a bijection onto them) is proved
    gate_ops = "counts" in asked and bool(counts.bijections) and counts.verdict is Verdict.PROVED
    terms = list(dict.fromkeys((list(counts.bijections) if gate_ops else [])
                               + (on_terms if asked & {"counts", "balance"} else [])))
    if terms:
        done = _fetched(schedule, opts, session, done, "counts", terms)
    if "memory" in asked:
        done = _fetched(schedule, opts, session, done, "memory")
    counts = _gated(counts, done, opts, gate_ops)
    spread, held_by = _standing("balance", done, opts, on_terms), _standing("memory", done, opts)
    if opts.tier == "bounded" and counts.verdict is not Verdict.REFUTED:
        counts = _enumerate_counts(schedule, opts, counts, counted.forms, enumerated)
    seconds = counts.seconds + time.perf_counter() - t_end
    rows = []
    if "counts" in asked:
        rows.append(Result("counts", "all", counts.verdict, opts.tier, seconds, counts.reason, counts.counterexample,
                           details=counts.to_json()))
    if "balance" in asked:
        rows.append(_figure_row("balance", "spread", counts.balance, spread.tier if on_terms else opts.tier))
    if "memory" in asked:
        rows.append(_figure_row("memory", "exact peak", counts.memory, held_by.tier))
    return rows


def _gated(counts: Counts, done: list, opts: Options, gate_ops: bool = True) -> Counts:
    """`counts` with each figure gated by what it rests on (`_standing`): op counts of phases
    counted over their terms (`gate_ops`), a spread counted over some phases' terms and the exact
    peak stand for every n only with what they rest on proved for every n in this run; else the
    form is printed as derived, not proved, and a claim of it is unknown. A peak that disagrees
    with the ring model while what it rests on is proved is the prover's error."""
    balance, memory, claims = counts.balance, counts.memory, counts.claims
    if gate_ops:
        ops = _standing("counts", done, opts, counts.bijections)
        if ops.open:
            counts = replace(counts, verdict=Verdict.UNKNOWN,
                             reason=f"op counts of {', '.join(ops.open)} rest on coverage, which is not proved")
    on_terms = list(balance.on_coverage) if balance is not None else []
    spread = _standing("balance", done, opts, on_terms)
    if on_terms and balance.spread is not None and not spread.everywhere:
        why = spread.why(f"the coverage of {', '.join(on_terms)}", opts.max_n)
        if counts.verdict is Verdict.PROVED and "balance" in claims:
            counts = replace(counts, verdict=Verdict.UNKNOWN, reason=f"claim balance {why}")
        balance = balance.unproved(why)
    held_by = _standing("memory", done, opts)
    if memory is not None:
        # the exact peak counts no stay begun by a use: it stands with the sources' properties proved
        if held_by.everywhere and memory.mismatch:
            raise InternalError(f"memory: {memory.reason}, and both are proved")
        if not held_by.everywhere and memory.closed_form:
            why = held_by.why(" and ".join(property_row("memory").rests_on), opts.max_n)
            if counts.verdict is Verdict.PROVED and "memory" in claims:
                counts = replace(counts, verdict=Verdict.UNKNOWN, reason=f"claim memory {why}")
            memory = memory.unproved(why)
    return replace(counts, balance=balance, memory=memory)


def _figure_row(name: str, what: str, figure: Balance | Memory, tier: str) -> Result:
    """The row of a load figure: refuted where its claim is (replayed); unknown where the figure is
    not derived, is derived but what it rests on is not proved, or its claim is undecided; else
    proved, at the weakest tier of the run and what it rests on."""
    claim, details = figure.claim, figure.to_json()
    if claim is not None:
        details["claim"] = claim.claim
    if claim is not None and claim.verdict is Verdict.REFUTED:
        verdict, reason = Verdict.REFUTED, claim.reason
    elif figure.form is None:
        verdict = Verdict.UNKNOWN
        reason = claim.reason if claim is not None else figure.why_not
    elif figure.derived is not None:
        verdict = Verdict.UNKNOWN
        reason = f"the {what} {figure.derived} is derived for every n, not proved: it {figure.unproved_because}"
    elif claim is not None and claim.verdict is not Verdict.PROVED:
        verdict, reason = Verdict.UNKNOWN, claim.reason
    else:
        verdict, reason = Verdict.PROVED, ""
    return Result(name, "all", verdict, tier, figure.seconds, reason,
                  claim.counterexample if verdict is Verdict.REFUTED else None, details=details)


def _count_task(schedule: Schedule, opts: Options, session: Session, keep: bool = False,
                load: bool = True) -> Counted:
    """The counts before the coverage they may rest on is known, the phases whose op counts rest
    on their coverage among them (`Counts.bijections`), and the counter's answer if `keep`. Runs
    in the pool beside the solver checks; what it returns holds no sympy object unless `keep`, so
    the parent never imports sympy for a parametric proof.

    Every claimed kind is checked: shown equal to its derived form (proved), refuted at a size
    (replayed on the ring model), or, where its form is not derived or no size up to the sampled
    bound tells them apart, `unknown` saying which kind and why. Claims of balance and memory are
    decided by `spread` and `held` (`_balance_task`, `_memory_task`; without `load`, left for
    `_with_load`: `_solve`'s pool computes them in `_count_and_balance` and the exact memory
    peak's tasks)."""
    from ringproof.proofs.figures.counting import check_claim, claim_bound, counts, derived_parameters
    from ringproof.proofs.figures.readable import readable

    t0 = time.perf_counter()
    c = counts(schedule, session)
    text = (lambda e: str(e) if e is not None else None)
    claims = schedule.notes.claims
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
        if bad is not None and bad.n is None:
            verdict = Verdict.UNKNOWN
            limit_n, limit_d = claim_bound(schedule.shape)
            bound = f"n ≤ {limit_n}" + (f" and d ≤ {limit_d}" if schedule.shape.is_free("d") else "")
            reason = (reason + "; " if reason else "") + (
                f"claim {what} = {claim} agrees with the derived closed form for every {bound} only")
            continue
        if bad is not None:
            verdict = Verdict.REFUTED
            reason = f"claim {what} = {claim} differs from the derived {derived}"
            cex = _count_replay(schedule, what, bad.n, bad.m, bad.d, int(bad.derived), int(bad.claimed))
            reason = _breaks(cex) or reason
            break
    record = Counts(text(c.cycles), {k: text(v) for k, v in c.ops.items()},
                    {k: text(v) for k, v in c.phase_cycles.items()}, text(c.utilization),
                    {k: str(v) for k, v in (c.phase_utilization or {}).items()},
                    {"cycles": readable(c.cycles), "utilization": readable(c.utilization),
                     "ops": {k: readable(v) for k, v in c.ops.items()}},
                    c.hints, dict(c.why) if c.why else {}, claims, verdict, reason, cex, tuple(bijections),
                    seconds=time.perf_counter() - t0)
    counted = Counted(record, c if keep else None)
    if not load:
        return counted
    return _with_load(schedule, opts, counted, _balance_task(schedule, session), _memory_task(schedule, session),
                      _step_task(schedule, opts, session))


def _balance_task(schedule: Schedule, session: Session) -> Balance:
    """The balance figures (`spread.summary`, without the per-step forms) and the verdict of a
    claimed balance."""
    from ringproof.proofs.figures import spread
    t0 = time.perf_counter()
    summary = spread.summary(schedule, session, steps=False)
    claim = schedule.notes.claims.get("balance")
    claimed = None
    if claim is not None:
        v = spread.check_claim(schedule, claim, session)
        claimed = Claimed("balance", claim, v.verdict, v.reason, v.counterexample)
    return Balance.from_summary(summary, claimed, time.perf_counter() - t0)


def _memory_task(schedule: Schedule, session: Session) -> Memory:
    """The memory figures (`held.summary`; the exact peak from `session` where a pool joined it
    there) and the verdict of a claimed peak."""
    from ringproof.proofs.figures.memory import held
    t0 = time.perf_counter()
    summary = held.summary(schedule, session)
    claim = schedule.notes.claims.get("memory")
    claimed = None
    if claim is not None:
        v = held.check_claim(schedule, claim, session)
        claimed = Claimed("memory", claim, v.verdict, v.reason, v.counterexample)
    return Memory.from_summary(summary, claimed, time.perf_counter() - t0)


def _count_and_balance(schedule: Schedule, opts: Options, session: Session) -> Counted:
    """`_count_task` without its load part, its balance figures (`_balance_task`) in it: one pool
    task, since they read the same per-phase forms and counter's answers. The balance per ring
    step (`_step_task`) and the exact memory peak are tasks of their own."""
    counted = _count_task(schedule, opts, session, load=False)
    return replace(counted, counts=replace(counted.counts, balance=_balance_task(schedule, session)))


def _step_task(schedule: Schedule, opts: Options, session: Session) -> dict:
    """The balance per ring step (`spread.step_summary`) and, with --idle-pes, the cycles with idle
    PEs not waiting (`balance.idle_pes`), JSON-ready: the balance figures' `steps`."""
    from ringproof.proofs.figures import spread
    from ringproof.proofs.figures.counting import in_n_m_d, tidy
    out = spread.step_summary(schedule, session)
    if opts.idle_pes:
        idle = spread.idle_cycles(schedule, session)
        out["idle_pes"] = {"cycles": None if idle.cycles is None else str(tidy(in_n_m_d(idle.cycles))),
                           "reason": idle.why}
    return out


def _with_load(schedule: Schedule, opts: Options, counted: Counted, balance: Balance, memory: Memory,
               steps: dict) -> Counted:
    """The counts of `_count_task` without their load part, completed: the balance figures (with
    `_step_task`'s per ring step) and the memory figures, the phases the balance forms rest on the
    coverage of, and the verdicts of the claims of balance and memory, in the claims' order (a
    refutation of another claim stands)."""
    counts = counted.counts
    bijections = list(counts.bijections)
    if opts.tier != "bounded":
        bijections += [p for p in balance.on_coverage if p not in bijections]
    verdict, reason, cex = counts.verdict, counts.reason, counts.counterexample
    claimed = {"balance": balance.claim, "memory": memory.claim}
    for what in [w for w in counts.claims if w in LOAD_CLAIMS]:
        v, why, bad = claimed[what].verdict, claimed[what].reason, claimed[what].counterexample
        if v is not Verdict.PROVED and verdict is not Verdict.REFUTED:
            verdict, reason, cex = v, (reason + "; " if reason and v is Verdict.UNKNOWN else "") + why, bad
    return replace(counted, counts=replace(counts, verdict=verdict, reason=reason, counterexample=cex,
                                           bijections=tuple(bijections), balance=balance.with_steps(steps),
                                           memory=memory, seconds=counts.seconds + balance.seconds + memory.seconds))


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


def _enumerate_counts(schedule: Schedule, opts: Options, result: Counts, c, enumerated=None) -> Counts:
    """The bounded tier: cycles and every op count enumerated for every size up to max_n (the
    sweep's, or a counting sweep of its own; the one size of `opts.size`) against every claim and
    every derived form. A claim the run contradicts is refuted; a derived form the run contradicts
    is refuted where it rests on a phase's coverage, else an internal error (the counter is wrong)."""
    from ringproof.proofs.figures.counting import claim_at, rests_on_coverage

    claims = schedule.notes.claims
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
