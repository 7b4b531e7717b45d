"""memory: the peak number of data a PE holds, by the definition of `ringproof.model.ring.memory`
(a datum is held from its arrival to its last use before it arrives again or is moved on; an output
to the end where it ends).

Derived for every n: the inputs homed on PE l, a closed form in n, m (d) and l, counted over each
input array's indices with home(ref) = l (`nests.count`, indices read mod m split in radix m) and
checked against the ring model's placement at every size n, d ≤ 12: every input arrives on its
home PE at cycle 0, so this is a lower bound of the peak on PE l. Where the schedule gives its
stays' hints (`Schedule.stays`), the **exact peak** (`stays.peak`): the hints checked by Z3 (each a
`smt.discharge` query), the occupancy of PE l at every cycle counted in closed form, its largest
shown by Z3; the form is compared with the ring model's measured peak at every size n, d ≤ 12
(a disagreement leaves it not derived; the prover's gate makes it an internal error where
ring-locality and data-flow, which the stays rest on, are proved). Hints marked
`stays["on_request"]` (a long derivation) are used only where the session's budget asks
(`Budget.long_peaks`, `prove --exact-peak`; `asked`); elsewhere the reason says so. A claim
`notes={"claims": {"memory": "..."}}` is proved equal to it, or refuted at the smallest size
n ≤ 12 where the measured peak (the largest over PEs) differs (replayed); where the peak is not derived, refuted so or unknown. The peak is also
measured on the ring model at one size (n = 16, m = 4 where allowed), with the cycle where the
busiest PE reaches it and what it holds then."""

from __future__ import annotations

from ringproof.model.ring.memory import at_peak, peak_per_pe
from ringproof.model.ring.trace import build_trace
from ringproof.proofs.figures import counting
from ringproof.proofs.figures.counting import check_sizes, claim_at, in_n_m_d, least_at, least_names, tidy
from ringproof.proofs.figures.memory import stays
from ringproof.proofs.figures.memory.homed import inputs_on, unused_on  # noqa: F401 (held.unused_on: the module's)
from ringproof.proofs.figures.records import ClaimVerdict
from ringproof.proofs.figures.spread import compile_form, figure_size, on_pes
from ringproof.proofs.results import Counterexample, Verdict
from ringproof.proofs.ring.session import Session
from ringproof.proofs.ring.smt import discharge

CLAIM_N = 12
WHY = ("the exact peak is a maximum over cycles of the data a PE holds, and a datum's stay there ends at "
       "its last use, a maximum over the iterations that read it: derived only where the schedule marks "
       "its stays' last uses (Schedule.stays), and this one does not")

SHORT_WHY = "a datum's stay ends at its last use, a maximum over iterations: derived where Schedule.stays marks those uses, none marked here"
BLOCKED = "marked, its occupancy would still not be counted: "     # `stays.blockers` follow
ON_REQUEST = ("exact peak derived only on request, with prove --exact-peak: the schedule marks its derivation "
              "long (Schedule.stays['on_request'])")
NOT_DERIVED = "exact peak not derived: "
RESTS_ON = ("ring-locality", "data-flow")     # the sources and `prev` witnesses: uses that begin no stay
MISMATCH = f"{NOT_DERIVED}the peak derived from the stays"


class Disagreement(str):
    """A reason the exact peak is not derived that is a disagreement with the ring model (it reads
    MISMATCH ...): the prover's error where what the stays rest on is proved (`is_mismatch`)."""


def is_mismatch(reason) -> bool:
    """Whether `summary`'s reason is a `Disagreement`."""
    return isinstance(reason, Disagreement)


def exact(schedule, session=None):
    """(the peak any PE holds, a closed form in k, m, kd, {"at": the hint's iterations, "checks":
    how many hint checks Z3 proved}) or (None, why not): `stays.peak` with every hint check
    (`stays.checks`) proved, compared with the ring model's measured peak at every size n, d ≤ 12."""
    session = session if session is not None else Session()
    hit = session.balanced.get(("peak", id(schedule)))
    if hit is not None and hit[0] is schedule:
        return hit[1]
    result = _early(schedule, session) or _checked(schedule, _stay_checks(schedule, session),
                                                   lambda c: discharge(c, session), lambda: _peak(schedule, session))
    session.balanced[("peak", id(schedule))] = (schedule, result)
    return result


# `exact` in parts that may run in separate processes (the prover's pool): `apart`, `measured` and
# each of `hint_checks` discharged, then `join`ed in the caller's session.

def asked(schedule, session) -> bool:
    """Is the exact peak derived in this session: the schedule marks where its peak is, and not
    on request only, or the session's budget asks for those too (`Budget.long_peaks`)?"""
    return bool(schedule.stays.peak) and (not schedule.stays.on_request or session.budget.long_peaks)


def hint_checks(schedule, session) -> list:
    """The checks of the stays' hints that `exact` may ask Z3 (none where it asks none)."""
    if not asked(schedule, session):
        return []
    try:
        return _stay_checks(schedule, session)
    except stays.NotDerived:        # `_early` says why
        return []


def _stay_checks(schedule, session) -> list:
    """`stays.checks`, kept in the session: built once where the prover's parent asks for them
    before its pool forks, not again by `apart`'s `_early` in a worker."""
    hit = session.balanced.get(("stay-checks", id(schedule)))
    if hit is None or hit[0] is not schedule:
        try:
            got = stays.checks(schedule)
        except stays.NotDerived as e:
            got = str(e)
        hit = session.balanced[("stay-checks", id(schedule))] = (schedule, got)
    if isinstance(hit[1], str):
        raise stays.NotDerived(hit[1])
    return hit[1]


def apart(schedule, session) -> tuple:
    """(`inputs_on`'s answer, whether `exact` asks no hint check, `exact`'s answer then or else the
    peak derived with them assumed proved but not compared with the ring model, {form: its text as
    `summary` prints it} of those forms): `exact` but its hint checks and `measured`. The texts
    are written here, in the pool, not by the parent after it (off the parent's serial part)."""
    early = _early(schedule, session)
    inputs, got = inputs_on(schedule, session), early or _peak(schedule, session, compare=False)
    return inputs, early is not None, got, {f: _text(f) for f in (inputs[0], got[0]) if f is not None}


def _text(form) -> str:
    """A form in k, m, kd (l) as `summary` prints it: in n, m, d, tidied."""
    return str(tidy(in_n_m_d(form)))


def measured(schedule, session) -> list | None:
    """The ring model's peak at every size of `_check_peak` where the peak is derived (`asked`;
    `exact` may compare it with this), else None: independent of the derivation, a task of its
    own beside `apart`."""
    return list(_measured_at(schedule, check_sizes(schedule.shape))) if asked(schedule, session) else None


def _measured_at(schedule, sizes):
    """The ring model's peak (the largest over PEs) at each (n, m, d) of `sizes`, one by one."""
    return (max(peak_per_pe(build_trace(schedule, n, m, d))) for n, m, d in sizes)


def join(schedule, session, part: tuple, peaks: list | None, outcomes: list, checks: list | None = None):
    """`exact`'s answer from `apart`'s `part`, `measured`'s `peaks` and the `outcomes`
    (`smt.Outcome`) of `hint_checks`, in its order, kept in `session` as if `exact` had run there.
    `checks`: `hint_checks`' list where the caller has it (built again otherwise, in the parent
    after the pool)."""
    inputs, early, got, texts = part
    if inputs[0] is not None:
        session.balanced[("inputs", id(schedule))] = (schedule, inputs)
    session.balanced[("texts", id(schedule))] = (schedule, texts)
    answers = iter(outcomes)
    result = got if early else _checked(schedule, _stay_checks(schedule, session) if checks is None else checks,
                                        lambda c: next(answers), lambda: _compared(schedule, got, peaks))
    session.balanced[("peak", id(schedule))] = (schedule, result)
    return result


def _early(schedule, session):
    """`exact`'s answer where it asks no hint check: no hints, hints on request not asked for, the
    inputs on PE l not counted, a count the occupancy needs whatever the hints mark failing
    (`stays.probe`), the hints' checks not derived; else None."""
    if not schedule.stays.peak:
        blocked = stays.blockers(schedule, session)
        return None, WHY + (f"; {BLOCKED}{'; '.join(blocked)}" if blocked else "")
    if not asked(schedule, session):
        return None, ON_REQUEST
    inputs, why = inputs_on(schedule, session)
    if inputs is None:
        return None, why
    try:
        stays.probe(schedule, session)
        _stay_checks(schedule, session)
    except stays.NotDerived as e:
        return None, f"{NOT_DERIVED}{e}"
    return None


def _checked(schedule, todo: list, outcome, peak):
    """`exact`'s answer from its hint checks `todo` (`outcome(check)`: the check's `smt.Outcome`,
    asked in order up to the first not proved, which is the reason) and `peak()`, `_peak`'s answer."""
    for c in todo:
        out = outcome(c)
        if out.verdict is not Verdict.PROVED:
            at = f" (n={out.n}, m={out.m})" if out.verdict is Verdict.REFUTED else f" ({out.reason})"
            return None, f"{NOT_DERIVED}the hint check {c.phase}: {c.name} is {out.verdict.value}{at}"
    top, how = peak()
    return (None, how) if top is None else (top, {"at": how, "checks": len(todo)})


def _peak(schedule, session, compare=True):
    """The peak derived from the stays with their hint checks assumed proved, compared with the
    ring model unless not `compare` (`_compared` does it then): (form, the hint's iterations) or
    (None, why not)."""
    try:
        top = stays.peak(schedule, session, inputs_on(schedule, session)[0])
    except stays.NotDerived as e:
        return None, f"{NOT_DERIVED}{e}"
    got = top["form"], top["at"]
    return _compared(schedule, got) if compare else got


def _compared(schedule, got: tuple, peaks: list | None = None) -> tuple:
    """`_peak`'s answer `got` where its form agrees with the ring model (`_check_peak`, with the
    measured `peaks` where given), else (None, the disagreement)."""
    if got[0] is None:
        return got
    off = _check_peak(schedule, got[0], peaks)
    return (None, off) if off else got


def _check_peak(schedule, form, peaks: list | None = None) -> str:
    """The derived peak against the ring model's measured one at every size n, d ≤ 12 (`peaks`:
    `measured`'s, else measured here): "" where they agree, else the first disagreement (MISMATCH
    ...). The derivation counts no stay begun by a use, which holds where ring-locality and
    data-flow do: a schedule that fails them (a mutant) may disagree; one that satisfies them may
    not (`prover._counts` raises an internal error then)."""
    names = least_names(schedule.shape)
    fn = compile_form(form, names)                   # once: a sympy form put in at 219 sizes costs more than the traces
    sizes = check_sizes(schedule.shape)
    for (n, m, d), want in zip(sizes, peaks if peaks is not None else _measured_at(schedule, sizes), strict=True):
        got = on_pes(fn, n, m, d, [int(v) for v in least_at(schedule.shape, n, m, d).values()])[0]   # no l in it
        if got != want:
            return Disagreement(f"{MISMATCH} {in_n_m_d(form)} is {got} at n={n}, m={m}, d={d}, the ring model "
                                f"measures {want} (it rests on {' and '.join(RESTS_ON)})")
    return ""


def summary(schedule, session=None) -> dict:
    """{"closed_form": the exact peak in n, m, d or None, "reason" (why not, or ""), "mismatch"
    where not derived (whether the reason is a disagreement with the ring model), where derived
    "peak_at" (the hint's iterations), "hint_checks" (how many Z3 proved) and "rests_on" (the
    properties the stays rest on), "inputs_on_pe": form in n, m, d, l (a lower bound of the
    peak on PE l) or None, "inputs_reason" where not derived, "at": {"n", "m", "per_pe", "peak",
    "pe", "cycle", "by_array"}} (JSON-ready; "pe" is the busiest PE, "cycle" its first cycle at the
    peak, "by_array" the data of each array it holds then)."""
    hit = session.balanced.get(("texts", id(schedule))) if session is not None else None
    texts = hit[1] if hit is not None and hit[0] is schedule else {}      # `apart`'s, where a pool ran it
    top, how = exact(schedule, session)
    out = {"closed_form": None, "reason": how, "mismatch": is_mismatch(how)} if top is None else \
        {"closed_form": texts.get(top) or _text(top), "reason": "", "peak_at": how["at"],
         "hint_checks": how["checks"], "rests_on": list(RESTS_ON)}
    form, why = inputs_on(schedule, session)
    out["inputs_on_pe"] = None if form is None else texts.get(form) or _text(form)
    if why:
        out["inputs_reason"] = why
    size = figure_size(schedule)
    if size is not None:
        top = at_peak(build_trace(schedule, *size))
        out["at"] = {"n": size[0], "m": size[1], **top}
    return out


def check_claim(schedule, claim: str, session=None) -> ClaimVerdict:
    """The verdict (`ClaimVerdict`) on a claimed peak (the largest over PEs): proved
    where it equals the derived peak, else refuted where the measured peak differs at a size: the
    first where the derived peak differs from the claim (found by Z3 past the sizes sampled), else
    each size n ≤ CLAIM_N."""
    top, why = exact(schedule, session)
    sizes = sorted(schedule.shape.sizes(CLAIM_N), key=lambda s: (s[0], s[2], s[1]))
    if top is not None:
        bad = counting.check_claim(counting.in_n_m_d(top), claim, shape=schedule.shape,
                                   derived_params=counting.derived_parameters(schedule))
        if bad is None:
            return ClaimVerdict(Verdict.PROVED, "", None)
        if bad[0] is not None and bad[:3] not in sizes:     # past n ≤ CLAIM_N (`counting.apart`): first
            sizes = [bad[:3], *sizes]
    for n, m, d in sizes:
        peaks = peak_per_pe(build_trace(schedule, n, m, d))
        got, claimed = max(peaks), claim_at(claim, n, m, d, schedule.shape)   # it may name derived sizes
        if got != claimed:
            replay = {"confirmed": True, "count": "memory", "measured": got, "per_pe": peaks}
            return ClaimVerdict(Verdict.REFUTED, f"claim memory = {claim}: the measured peak is {got} at n={n}, m={m}",
                                Counterexample(n, m, "claim memory", f"measured peak {got}, claimed {claimed}", (),
                                               replay, d=schedule.shape.own("d", d)))
    return ClaimVerdict(Verdict.UNKNOWN, f"claim memory = {claim} agrees with the ring model for every n ≤ {CLAIM_N} only "
                        f"({why if top is None else f'not shown equal to the derived peak {top}'})", None)


def readable(details: dict) -> str:
    bound = details.get("inputs_on_pe")
    low = (f"peak on PE l ≥ {bound} (the inputs it holds from cycle 0, for every n); " if bound is not None
           else f"inputs per PE not derived ({details.get('inputs_reason', '')}); ")
    at = details.get("at")
    fig = ""
    if at:
        held = ", ".join(f"{a} {c}" for a, c in at.get("by_array", {}).items())
        where = f"; PE {at['pe']} at cycle {at['cycle']}: {held}" if "pe" in at else ""
        fig = f"; at n={at['n']}, m={at['m']}: {'/'.join(map(str, at['per_pe']))} (measured{where})"
    if details.get("closed_form"):
        return f"memory: peak {details['closed_form']} on the busiest PE (proved for every n); {low.rstrip('; ')}{fig}"
    if details.get("derived"):
        why = details.get("unproved_because") or f"rests on {' and '.join(RESTS_ON)}, not proved in this run"
        return f"memory: peak {details['derived']} on the busiest PE derived for every n, not proved: it {why}; " \
               f"{low.rstrip('; ')}{fig}"
    why = details.get("reason", "")
    if why.startswith(NOT_DERIVED) or why == ON_REQUEST:     # the stays marked, the peak not derived from them
        short = why[len("exact peak "):]
    else:
        short = SHORT_WHY + (f"; {BLOCKED}{why.split(BLOCKED, 1)[1]}" if BLOCKED in why else "")
    return f"memory: {low}exact peak unknown ({short}){fig}"
