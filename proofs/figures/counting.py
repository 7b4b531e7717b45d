"""Closed-form op and cycle counts (sympy), derived from the loop nests, each checked by enumeration.

A phase takes one cycle per tuple of its sequential loops; an iteration's op happens where its
guard holds, and a cycle whose guard is false but which sends is a MOVE (as the ring machine tallies
them). Each count is the number of points of a loop nest under a condition, counted exactly by
`ringproof.proofs.figures.nests` (empty ranges count 0, guards of any and/or/not of comparisons fold
into max/min bounds by cases) or `unknown` with the reason. Where the nest has no closed form, the
outermost loop's `through` hint is used once `ringproof.proofs.ring.induction` proves it; where a
guard cannot be counted, the phase's ops are the |terms| of its equation, valid only with the
phase's coverage (a bijection onto the terms) proved.

No count is accepted unchecked: every derived form of every phase is compared with enumeration at
every size n, d ≤ CHECK_MAX with m | n, m | d before it is used; a disagreement is an internal error
naming the phase and the size. Claims a schedule states are checked against the derived forms:
symbolically, case by case over residues of n, or refuted at a size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import NamedTuple

import sympy
import z3

from ringproof.errors import BadInput, InternalError
from ringproof.model.ring.vocabulary import forwards
from ringproof.proofs.memos import pure
from ringproof.proofs.ring.induction import prove_through
from ringproof.proofs.ring import budgets
from ringproof.proofs.figures.nests import KD, M, K, Decider, NoZ3, Unknown, count, lifted, to_z3
from ringproof.proofs.ring.session import Session
from ringproof.proofs.ring.smt import small_sizes
from ringproof.schedules.dsl import (ALWAYS_COUNTED, ARITHMETIC, Op, Phase, Schedule, Step, params,
                                     with_derived)
from ringproof.schedules.expr import Term, evaluate, var
from ringproof.schedules.shape import ANY_D, D_IS_N, PARAMETERS, Shape, derived_values, require_parameters

N, D = sympy.symbols("n d", positive=True, integer=True)
CHECK_MAX = 12         # every derived count is compared with enumeration for n, d ≤ this
CLAIM_MAX_N = 24       # a claim not shown equal is compared with the derived form up to this n


_COUNTER = {"n": K * M, "m": M, "k": K, "d": KD * M, "kd": KD}
require_parameters("counting.parameters", _COUNTER)


def parameters(shape: Shape) -> SimpleNamespace:
    """The parameters of the counter for `shape`: n = k·m, d = kd·m (kd is k where d is n)."""
    return shape.record(_COUNTER.__getitem__)


def in_n_m_d(e: sympy.Expr) -> sympy.Expr:
    """A form in k, m, kd written in n, m, d (as claims are)."""
    return e.xreplace({K: N / M, KD: D / M})


def symbolic_step(phase: Phase) -> Step:
    """The step on symbolic Terms: enough to read its op kind, guard and send, without building
    (and simplifying) every index formula in sympy."""
    P = SimpleNamespace(**{name: var(name) for name in PARAMETERS})
    return phase.step(P, SimpleNamespace(**{name: var(name) for name in phase.index_names}))


def tidy(e: sympy.Expr) -> sympy.Expr:
    """Simplified and factored; a form with cases (Piecewise) factored case by case where its
    cases are polynomial, else left as it is (sympy's simplify is slow to rearrange a hint's
    cases into something no easier to read)."""
    if not e.has(sympy.Piecewise):
        factored = _factored(e)
        return factored if factored is not None else sympy.factor(sympy.simplify(e))
    folded = sympy.piecewise_fold(e)
    if isinstance(folded, sympy.Piecewise) and not folded.has(sympy.Mod, sympy.floor, sympy.ceiling):
        return sympy.Piecewise(*[(sympy.factor(x), c) for x, c in folded.args])
    return e


def _factored(e: sympy.Expr):
    """e factored as a rational function of its symbols and its function atoms (floor(n/2) read as
    a symbol of that name, so the factors come out in the order sympy gives them), or None where it
    is not one. sympy's factor of a rational function is canonical, so simplifying first changes
    nothing on any registered target's forms, and would cost time (its first call in a process
    imports sympy.physics)."""
    atoms = e.atoms(sympy.Function)
    names = {str(x) for x in e.free_symbols}
    named = {a: sympy.Symbol(str(a), **a.assumptions0) for a in atoms}
    if names & {str(a) for a in atoms} or len({str(a) for a in atoms}) != len(atoms):
        return None
    f = e.xreplace(named)
    if not f.is_rational_function():
        return None
    return sympy.factor(f).xreplace({s: a for a, s in named.items()})


def nest_of(phase: Phase, P, with_pe: bool):
    """The phase's loops as [(symbol, lo, hi)] (with the PE index l innermost if `with_pe`) and
    the environment naming each index's symbol."""
    loops, env = [], {}
    for lp in phase.loops:
        lo, hi = lp.bounds(P, SimpleNamespace(**env))
        v = sympy.Symbol(lp.name, integer=True)     # no loop is named as a parameter (dsl.Loop)
        loops.append((v, sympy.sympify(lo), sympy.sympify(hi)))
        env[lp.name] = v
    if with_pe:
        v = sympy.Symbol("l", integer=True)
        loops.append((v, sympy.Integer(1), M))
        env["l"] = v
    return loops, env


def condition_form(x, env: dict, P):
    """A guard or send condition (a Term or a constant) in sympy."""
    if isinstance(x, Term):
        return evaluate(x, {**vars(P), **env})
    return sympy.true if x else sympy.false


def phase_forms(phase: Phase, P, decider: Decider, hint: tuple | None = None, exact: dict | None = None,
                moves: bool = True) -> tuple[dict, dict]:
    """({"cycles" or op kind: its closed form in k, m, kd}, {kind: why it is not derived}) of one
    phase. `hint` is `prove_through(phase)`'s answer: the hint is used if proved; `exact`: {floor
    form: exact value} of chunk sizes (`exact_chunks`), put in the counts (the counter splits digits
    of the floor form). `moves=False`: the MOVEs of a phase whose op is not MOVE are not counted
    (an earlier phase's were not derived, so the schedule's MOVE total is not either)."""
    forms, why = {}, {}
    if hint is not None and hint[0] is True:
        lp = phase.loops[0]
        forms["cycles"] = sympy.expand(sympy.sympify(lp.through(P, lp.bounds(P, SimpleNamespace())[1])))
    else:
        try:
            forms["cycles"] = count(nest_of(phase, P, False)[0], True, decider)
        except Unknown as e:
            hint_why = f"; counting hint not proved ({hint[1]})" if hint is not None else ""
            why["cycles"] = f"{phase.name} cycles: {e}{hint_why}"
    st = symbolic_step(phase)
    loops, env = nest_of(phase, P, True)
    parts = [(st.op.value, st.guard)]
    if st.send is not None and (moves or st.op is Op.MOVE):
        parts.append(("MOVE", forwards(st.guard, st.send.when)))
    for kind, cond in parts:
        if kind in why:
            continue
        try:
            c = sympy.sympify(condition_form(cond, env, P))
            if c is sympy.true and "cycles" in forms:
                got, split = forms["cycles"] * M, False
            else:       # an op the counter cannot count falls back on |terms| (`_derive`); a MOVE cannot
                got, split = _guarded_count(loops, c, decider, lift=kind == "MOVE")
        except Unknown as e:
            why[kind] = f"{phase.name} {kind}: {e}"
            forms.pop(kind, None)
            continue
        forms[kind] = forms.get(kind, 0) + (_settled(got, exact, decider) if split or exact else got)
    loose = set(decider.least) if decider.least and not decider.exists() else set()
    for kind, form in list(forms.items()):      # a form in a size not shown to exist says nothing
        if sympy.sympify(form).free_symbols & loose:
            why[kind] = f"{phase.name} {kind}: not shown that {', '.join(map(str, loose))} exists at every size"
            del forms[kind]
    return forms, why


def _settled(form: sympy.Expr, exact: dict | None, decider: Decider) -> sympy.Expr:
    """form with the chunk sizes exact (`exact_chunks`) and the Piecewise cases that cannot hold
    (the decider shows it) dropped."""
    out = form.xreplace(exact or {})
    if not out.has(sympy.Piecewise):
        return out
    out = sympy.piecewise_fold(out)
    if not isinstance(out, sympy.Piecewise):
        return out
    kept, before = [], []
    for e, cond in out.args:
        if cond is sympy.true or not decider.never(sympy.And(cond, *[sympy.Not(c) for c in before])):
            kept.append((e, cond))
        before.append(cond)
    return kept[0][0] if len(kept) == 1 and kept[0][1] is sympy.true else sympy.Piecewise(*kept)


def _guarded_count(loops, cond, decider: Decider, lift: bool) -> tuple[sympy.Expr, bool]:
    """(the points of the nest `loops` (the PE index l innermost) where `cond` holds, whether cond
    is split): counted as it is, else, if `lift`, with l outermost (no loop bound names l) and
    cond split by `nests.lifted` into cases without mod m and Piecewise (the layouts' digits of l),
    each split proved; Unknown with the reason of the last way tried."""
    try:
        return count(loops, cond, decider), False
    except Unknown:
        if not lift:
            raise
        outer = [loops[-1]] + loops[:-1]
        return count(outer, lifted(cond, outer, decider), decider), True


@dataclass(frozen=True)
class Counts:
    cycles: sympy.Expr | None   # None: not derived (`why["cycles"]` says why)
    phase_cycles: dict
    ops: dict                   # Op name -> closed form (None: not derived, `why` says why)
    utilization: sympy.Expr | None
    bijections: tuple = ()      # phases whose op count rests on their coverage being proved
    phase_utilization: dict = None   # phase -> its ops / (m · its cycles), where derived
    hints: dict = None          # phase -> "" if its `through` hint is proved and used, else why not
    why: dict = field(default_factory=dict)   # kind -> why it is not derived

    def at(self, n: int, m: int, d: int | None = None, shape: Shape = D_IS_N) -> dict:
        """The counts at one size; `shape`: the schedule's, whose derived parameters defined by a
        condition (`Least`) stay symbols in the forms."""
        sub = {N: n, M: m, D: n if d is None else d, **least_at(shape, n, m, d)}
        value = (lambda e: value_at(e, sub) if e is not None else None)
        return {"cycles": value(self.cycles), "ops": {k: value(v) for k, v in self.ops.items()}}


def value_at(e: sympy.Expr, sub: dict) -> int:
    """int(e) at the integer values `sub` ({symbol: int}), e compiled once for every size asked
    (`signs.compiled`: exact, floor and mod as sympy reads them for a positive divisor; a bounded
    run asks every form at hundreds of sizes), else by sympy with the values put in (`xreplace`:
    a Sum, a node not compiled such as a division by a size, no case of a Piecewise holding, a
    divisor not positive; sympy's `subs` is slow where hundreds of sizes are asked)."""
    from ringproof.proofs.figures import signs
    names = tuple(sorted(sub, key=lambda x: x.name))      # not str: printing a symbol takes longer
    fn = signs.compiled(e, names)
    try:
        v = fn(*(sub[x] for x in names)) if fn is not None else None
    except (ArithmeticError, TypeError, ValueError):
        v = None
    if v is not None and not isinstance(v, bool):
        return int(v)
    return int(e.xreplace({x: sympy.Integer(v) for x, v in sub.items()}).doit())


def required_count(eqn, P, decider: Decider | None = None) -> sympy.Expr | None:
    """|{terms of eqn}|: its index ranges under its mask `where`, counted exactly (`nests`), in
    k, m, kd; None where the mask cannot be counted."""
    dims = list(eqn.target.dims) + ([eqn.reduce] if eqn.reduce else [])
    syms = [sympy.Symbol(f"_{i}", integer=True) for i in range(len(dims))]
    loops = [(s, sympy.Integer(1), sympy.sympify(getattr(P, dim))) for s, dim in zip(syms, dims)]
    cond = sympy.true if eqn.where is None else sympy.sympify(eqn.where(P, *syms))
    try:
        return count(loops, cond, decider)
    except Unknown:
        return None


def _required_enumerated(eqn, P) -> int:
    """|{terms of eqn}| at the sizes P (its derived parameters included), by enumeration."""
    import numpy as np

    dims = list(eqn.target.dims) + ([eqn.reduce] if eqn.reduce else [])
    if eqn.where is None:
        return math.prod(getattr(P, x) for x in dims)
    grids = np.meshgrid(*[np.arange(1, getattr(P, x) + 1) for x in dims], indexing="ij")
    got = eqn.where(P, *[g.ravel() for g in grids])
    return int(np.count_nonzero(np.broadcast_to(np.asarray(got, dtype=bool), grids[0].size)))


def counts(schedule: Schedule, session: Session | None = None) -> Counts:
    """Cycles and ops per kind, each phase's forms checked by enumeration (module doc). A guarded
    phase's ops that the counter cannot derive are |terms| of its equation, valid only with that
    phase's coverage proved: `bijections` lists those phases. Counting hints and the counter's
    decisions are proved here under the session's budget (None: a fresh session under the default budget), once per
    schedule in a session when they all hold."""
    session = session if session is not None else Session()
    parts = counted_from(schedule)
    key = tuple(map(id, parts))
    hit = session.counted.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], parts)):
        return hit[1]
    c = _derive(schedule, session)
    if not any(c.hints.values()):      # a hint that failed (e.g. timed out) is tried again next time
        session.counted[key] = (parts, c)
    return c


def counted_from(schedule: Schedule) -> tuple:
    """What `_derive` reads of a schedule: its problem, phases, shape, side condition and derived
    parameters, each as the object it is. A copy with other notes or claims (`replace`) holds the
    same objects and shares its counts in a session; one with any of these changed does not."""
    return (schedule.problem, schedule.shape, schedule.requires, *schedule.phases,
            *(x for item in schedule.derived.items() for x in item))


def check_sizes(shape: Shape, limit: int = CHECK_MAX) -> list[tuple[int, int, int]]:
    """The (n, m, d) every derived count is compared at: the sizes of `shape` with n, d ≤ limit, or,
    where its side condition admits none of those, its smallest few up to 4·limit (so no figure
    goes unchecked); empty only where it admits none up to there."""
    small = small_sizes(shape, limit)
    return [(n, m, d) for n, d, m in (small or small_sizes(shape, 4 * limit)[:4])]


def least_names(shape: Shape) -> tuple:
    """The symbols of the shape's derived parameters defined by a condition (`Least`), in the order
    `least_at` gives their values."""
    from ringproof.schedules.shape import Least
    return tuple(sympy.Symbol(name, integer=True) for name, fn in shape.derived if isinstance(fn, Least))


def least_at(shape: Shape, n: int, m: int, d: int | None = None) -> dict:
    """{symbol: value} of the shape's derived parameters defined by a condition (`Least`), which stay
    symbols in a derived form, at one size."""
    return {sympy.Symbol(name, integer=True): sympy.Integer(v)
            for name, v in derived_values(shape, n, m, d, least_only=True).items()}


def value_of(form: sympy.Expr, n: int, m: int, d: int, shape: Shape = D_IS_N) -> int:
    """A form in k, m, kd at one size (`value_at`: compiled once for every size checked)."""
    return value_at(form, {K: n // m, M: m, KD: d // m, **{x: int(v) for x, v in least_at(shape, n, m, d).items()}})


def enumerated(phase: Phase, P, size: tuple, session: Session) -> tuple[dict, dict | None]:
    """`trace.phase_tally` (its counts, its active ops per PE per ring step) at one size (n, m, d),
    P its record with the derived parameters, from one enumeration kept in the session: the counts
    and the per-PE forms (and the per-step forms) are checked against them at the same sizes."""
    from ringproof.model.ring.trace import phase_tally
    key = (id(phase), *size)
    hit = session.enumerated.get(key)
    if hit is None or hit[0] is not phase:
        hit = session.enumerated[key] = (phase, phase_tally(phase, P, size[1]))
    return hit[1]


def _check(schedule: Schedule, per_phase: dict, required: dict, session: Session) -> None:
    """Every derived form against enumeration at every size of `check_sizes`: InternalError at the
    first disagreement, naming the phase, the count and the size."""
    for n, m, d in check_sizes(schedule.shape):
        P = with_derived(schedule.derived, params(n, m, d=d))
        for p in schedule.phases:
            forms = per_phase[p.name]
            if not forms:
                continue
            got = enumerated(p, P, (n, m, d), session)[0]
            for kind, form in forms.items():
                if value_of(form, n, m, d, schedule.shape) != got[kind]:
                    where = f"n={n}, m={m}" + (f", d={d}" if schedule.shape.is_free("d") else "")
                    raise InternalError(f"counts: phase {p.name}: the derived {kind} {in_n_m_d(form)} gives "
                                        f"{value_of(form, n, m, d, schedule.shape)} at {where}, enumeration {got[kind]}")
        for name, (eqn, form) in required.items():
            want = _required_enumerated(eqn, P)
            if value_of(form, n, m, d, schedule.shape) != want:
                raise InternalError(f"counts: phase {name}: the terms of {eqn.target.name}: {in_n_m_d(form)} gives "
                                    f"{value_of(form, n, m, d, schedule.shape)} at n={n}, d={d}, enumeration {want}")


def _computing(schedule: Schedule, array) -> int:
    """How many phases compute `array` (a phase's |terms| fallback holds only for the one)."""
    return sum(1 for p in schedule.phases if (st := symbolic_step(p)).op is not Op.MOVE
               and st.target is not None and st.target.array == array)


def _cycles(schedule: Schedule, per_phase: dict) -> sympy.Expr:
    """The schedule's cycles: the sum over its time slots of the cycles of the longest member of
    each (a lock-step group lasts as its longest phase; `Schedule.slots`)."""
    by_slot: dict = {}
    for p, s in zip(schedule.phases, schedule.slots):
        forms = by_slot.setdefault(s, [])
        form = per_phase[p.name]["cycles"]
        if not any(sympy.expand(form - f) == 0 for f in forms):
            forms.append(form)
    return sum((f[0] if len(f) == 1 else sympy.Max(*f) for f in by_slot.values()), sympy.Integer(0))


def _check_cycles(schedule: Schedule, form: sympy.Expr, session: Session) -> None:
    """The cycles of a schedule with lock-step groups against enumeration (`check_sizes`; each
    phase's loop tuples as `_check` enumerated them)."""
    from ringproof.model.ring.trace import slot_starts
    for n, m, d in check_sizes(schedule.shape):
        P = with_derived(schedule.derived, params(n, m, d=d))
        got = slot_starts(schedule, [enumerated(p, P, (n, m, d), session)[0]["cycles"] for p in schedule.phases])[1]
        if value_of(form, n, m, d) != got:
            raise InternalError(f"counts: the derived cycles {in_n_m_d(form)} of {schedule.name} give "
                                f"{value_of(form, n, m, d)} at n={n}, m={m}, enumeration {got}")


def _ratio(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """a / b in n, m, d, taken as 0 where b is 0 (a phase or schedule of no cycles: as the
    simulator reports its utilization)."""
    q = in_n_m_d(a) / in_n_m_d(b)
    if not q.has(sympy.Piecewise):
        return tidy(q)
    if q.has(sympy.Mod, sympy.floor, sympy.ceiling):
        return q                          # a hint's cases: left as written (see `tidy`)
    q = sympy.piecewise_fold(q)
    return sympy.Piecewise(*[(0 if e.has(sympy.zoo, sympy.nan) else tidy(e), c) for e, c in q.args])


def _derive(schedule: Schedule, session: Session) -> Counts:
    P = with_parameters(schedule, parameters(schedule.shape))
    decider = session.decider(schedule.shape)
    hints = {p.name: prove_through(p, session, shape=schedule.shape) for p in schedule.phases
             if p.loops and p.loops[0].through is not None}
    per_phase, why, required = {}, {}, {}
    exact = exact_chunks(schedule)
    for p in schedule.phases:
        forms, missing = phase_forms(p, P, decider, hints.get(p.name), exact, moves="MOVE" not in why)
        st = symbolic_step(p)
        if (st.op.value in missing and st.op is not Op.MOVE and st.target is not None
                and st.target.array not in schedule.problem.symmetric_pairs     # not a bijection there
                and _computing(schedule, st.target.array) == 1):                # nor across phases
            eqn = schedule.problem.equation_for(st.target.array)
            c = required_count(eqn, P, decider)
            if c is not None:
                required[p.name] = (eqn, c)
                del missing[st.op.value]
        per_phase[p.name] = forms
        for kind, reason in missing.items():
            why.setdefault(kind, reason)
    _check(schedule, per_phase, required, session)

    def total(kind):
        if kind in why:
            return None
        if kind == "cycles":
            return _cycles(schedule, per_phase)
        out = sympy.Integer(0)
        for p in schedule.phases:
            out += per_phase[p.name].get(kind, 0)
            if p.name in required and symbolic_step(p).op.value == kind:
                out += required[p.name][1]
        return out

    cycles = total("cycles")
    if cycles is not None and len(set(schedule.slots)) < len(schedule.phases):
        _check_cycles(schedule, cycles, session)
    kinds = list(ALWAYS_COUNTED) + sorted({symbolic_step(p).op.value for p in schedule.phases} - set(ALWAYS_COUNTED))
    ops = {kind: total(kind) for kind in kinds}
    per_util = {}
    for p in schedule.phases:
        kind, cyc = symbolic_step(p).op.value, per_phase[p.name].get("cycles")
        c = required[p.name][1] if p.name in required else per_phase[p.name].get(kind)
        if c is not None and cyc is not None and sympy.expand(cyc) != 0:
            per_util[p.name] = _ratio(c, M * cyc)
    arith = [ops[k] for k in ARITHMETIC if k in ops]
    util = None if None in arith or cycles is None else _ratio(sum(arith), M * cycles)
    show = (lambda e: tidy(in_n_m_d(e)) if e is not None else None)
    return Counts(show(cycles), {p.name: show(per_phase[p.name].get("cycles")) for p in schedule.phases},
                  {k: show(v) for k, v in ops.items()}, util, tuple(required), per_util,
                  {name: ("" if ok is True else reason) for name, (ok, reason) in hints.items()}, why)


def closed(e: sympy.Expr) -> bool:
    """Is e a closed form? (A sum sympy could not evaluate stays a `Sum`.)"""
    return not e.has(sympy.Sum)


def claim_at(claim: str, n: int, m: int, d: int | None = None, shape: Shape = ANY_D) -> int:
    """The value of a claimed closed form at (n, m, d); d = n where not given. `shape`: the
    schedule's, whose derived parameters a claim may name (each takes its value at the size)."""
    d = n if d is None else d
    form, names = _claim_form(claim, tuple(name for name, _ in shape.derived))
    values = {names[k]: v for k, v in derived_values(shape, n, m, d).items()}
    return value_at(form, {N: n, M: m, D: d, **values})


@pure(256)
def _claim_form(claim: str, derived: tuple) -> tuple:
    """(a claim's closed form in n, m, d, {derived parameter: its symbol}), parsed once per claim
    and names of the derived parameters (all the form depends on)."""
    names = {name: sympy.Symbol(name, integer=True) for name in derived}
    return parse_claim(claim, ANY_D, names), names


def divisors_of(e: sympy.Expr, x: sympy.Symbol) -> set[int]:
    """Constant c of every `x mod c` and `floor(x·a/c)` in e (a, c integers)."""
    out = {int(a.args[1]) for a in e.atoms(sympy.Mod)
           if a.args[0] == x and a.args[1].is_Integer}
    for f in e.atoms(sympy.floor):
        num, den = sympy.fraction(sympy.together(f.args[0]))
        if den.is_Integer and num.free_symbols == {x} and num.is_polynomial(x):
            out.add(int(den))
    return out


def equal(a: sympy.Expr, b: sympy.Expr, seed: int = 0) -> bool:
    """Is a = b for all positive integers n, m (and d)? True only when sympy shows a − b = 0:
    directly, in each case of a Piecewise (every case's expression 0), or in each residue class
    n = c·ν + s (c the lcm of the constant divisors of n in a − b, same for m), where floor and mod
    of n by c become polynomials; False means not shown."""
    d = a - b
    if sympy.expand(d) == 0:
        return True
    cases = residue_cases(d)           # polynomials in each residue class: expanding shows them 0
    if cases != [{}] and all(_zero(d.subs(case)) for case in cases):
        return True
    if sympy.simplify(d) == 0:
        return True
    folded = sympy.piecewise_fold(d)
    if not isinstance(folded, sympy.Piecewise):
        return False
    before = []
    for e, cond in folded.args:       # each case that can occur must be 0 where it occurs
        if (_possible(cond, before, seed) and not equal(e, sympy.Integer(0), seed)
                and _possible(sympy.And(cond, sympy.Ne(e, 0)), before, seed)):
            return False
        before.append(cond)
    return True


def _zero(e: sympy.Expr) -> bool:
    """Shown 0 by sympy: expanded, else simplified (slower; its first call imports sympy.physics)."""
    return sympy.expand(e) == 0 or sympy.simplify(e) == 0


def _possible(cond, before: list, seed: int = 0) -> bool:
    """Can cond hold, with every condition of `before` false, for some n = k·m, d = kd·m? False
    only when Z3 shows it cannot."""
    k, m, kd = z3.Ints("k m kd")
    env = {N: k * m, M: m, D: kd * m}
    try:
        query = z3.And(to_z3(cond, env), *[z3.Not(to_z3(c, env)) for c in before])
    except NoZ3:
        return True
    s = z3.Solver()
    s.set("rlimit", budgets.SIDE_CONDITION)
    s.set("random_seed", seed)
    s.add(k >= 1, m >= 1, kd >= 1, query)
    return s.check() != z3.unsat


def residue_cases(e: sympy.Expr) -> list[dict]:
    """The substitutions x = c·ν + s (x in n, m, d; c the lcm of the constant divisors of x in e,
    s < c) under which floor and mod of x by c become polynomials; [{}] when e has none."""
    split = {x: math.lcm(*divisors_of(e, x)) for x in (N, M, D) if divisors_of(e, x)}
    digits = {x: sympy.Symbol(f"_{x}", integer=True, nonnegative=True) for x in split}
    cases = [{}]
    for x, c in split.items():
        cases = [{**case, x: c * digits[x] + s} for case in cases for s in range(c)]
    return cases


def per_residue(e: sympy.Expr, tidy: bool = True) -> list[tuple[str, sympy.Expr]]:
    """e in each residue class of n and m (label, closed form in n, m), or [("", e)]. `tidy`: each
    form factored and, where that leaves no floor, mod or cases, simplified for people (sympy's
    `simplify` of a form with them is slow and leaves them); else expanded (a caller that
    compares polynomials: sympy's `simplify` imports `sympy.physics` on its first call)."""
    out = []
    for case in residue_cases(e):
        if not case:
            return [("", e)]
        label, back = [], {}
        for x, form in case.items():
            nu = next(iter(form.free_symbols))
            c, s = int(form.coeff(nu)), int(form.subs(nu, 0))
            label.append(f"{x} ≡ {s} (mod {c})")
            back[nu] = (x - s) / c
        form = e.xreplace(case).xreplace(back)
        out.append((", ".join(label), _tidy(form) if tidy else sympy.expand(form)))
    return out


def _tidy(form: sympy.Expr) -> sympy.Expr:
    f = sympy.factor(form)
    return f if f.has(sympy.floor, sympy.ceiling, sympy.Mod, sympy.Piecewise) else sympy.simplify(f)


def claim_bound(shape: Shape) -> tuple[int, int]:
    """(largest n, largest d) at which `check_claim` compares a claim it cannot show equal (the
    bound shared by the free sizes)."""
    limit = CLAIM_MAX_N // len(shape.free)
    return limit, limit


class Differs(NamedTuple):
    """Where a claim and the derived form differ: the size (None, None, None where no size tried
    tells them apart) and the two values there (the two forms, then)."""
    n: int | None
    m: int | None
    d: int | None
    derived: object
    claimed: object


def check_claim(derived: sympy.Expr, claim: str, shape: Shape = D_IS_N, seed: int = 0, derived_params=None):
    """None if `claim` is shown equal to `derived` for all n, m (and d; `equal`); else `Differs`: the
    smallest (n, m, d, derived, claimed) where they differ, or (None, None, None, derived, claimed) when no
    size up to `claim_bound` tells them apart (agreement on samples, not a proof). `shape`: the
    schedule's free sizes (and its side condition: only the sizes it allows are compared);
    `derived_params`: {name: value in n, m, d} of its derived parameters, which a claim may name."""
    c = parse_claim(claim, shape, derived_params)
    if closed(derived) and equal(derived, c, seed):
        return None
    for n, d, m in small_sizes(shape, claim_bound(shape)[0]):
        sub = {N: n, M: m, D: d, **least_at(shape, n, m, d)}
        got, want = derived.subs(sub).doit(), c.subs(sub)
        if got != want:
            return Differs(n, m, d, got, want)
    found = apart(derived, c, shape, seed) if closed(derived) else None
    if found == "equal":
        return None
    if found is not None:
        n, m, d = found
        sub = {N: n, M: m, D: d}
        got, want = derived.subs(sub).doit(), c.subs(sub)
        if got != want:          # Z3's reading of the forms confirmed by sympy's at that size
            return Differs(n, m, d, got, want)
    return Differs(None, None, None, derived, c)


def apart(derived: sympy.Expr, claimed: sympy.Expr, shape: Shape = D_IS_N, seed: int = 0):
    """Where two closed forms in n, m (d) differ, past any sampled bound: "equal" where Z3 shows
    them equal at every size the shape admits (m | n, m | d and its side condition); else the
    smallest (n, m, d) where they differ, in `small_sizes`' order (n + d, then n, then m: Z3 asked
    with bisected bounds); None where Z3 cannot tell (a form it does not translate, a derived
    size defined by a condition, an unknown answer)."""
    from ringproof.proofs.figures.nests import side_condition
    diff = (derived - claimed).subs({N: K * M, D: KD * M})
    if diff.free_symbols - {K, M, KD}:
        return None
    k, m = z3.Ints("k m")
    kd = z3.Int("kd") if shape.is_free("d") else k
    env = {K: k, M: m, KD: kd}
    try:
        facts = [k >= 1, m >= 1, kd >= 1, to_z3(sympy.Ne(diff, 0, evaluate=False), env)]
        req = side_condition(shape)
        facts += [to_z3(req, env)] if req is not None else []
    except NoZ3:
        return None

    def model(*more):
        s = z3.Solver()
        s.set("rlimit", budgets.SIDE_CONDITION)
        s.set("random_seed", seed)
        s.add(*facts, *more)
        r = s.check()
        return s.model() if r == z3.sat else (False if r == z3.unsat else None)

    found = model()
    if not found:
        return "equal" if found is False else None
    n_of, d_of = k * m, kd * m
    value = (lambda e, at: at.eval(e, model_completion=True).as_long())
    fixed = []
    for e in (n_of + d_of, n_of, m):           # the smallest sum, then n, then m
        lo, hi = 0, value(e, found)            # e ≤ lo unsat: every size is ≥ 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            better = model(*fixed, e <= mid)
            if better is None:
                break
            if better is False:
                lo = mid
            else:
                found, hi = better, value(e, better)
        fixed.append(e == value(e, found))
    return value(n_of, found), value(m, found), value(d_of, found)


def parse_claim(claim: str, shape: Shape = D_IS_N, derived_params=None) -> sympy.Expr:
    """A claim's closed form in n, m (and d, where the shape has it free; else d is n), where the
    schedule's derived parameters (`derived_params`) stand for their values: bad input if it is
    not one."""
    try:
        c = sympy.sympify(claim, locals={"n": N, "m": M, "d": D if shape.is_free("d") else N,
                                         **(derived_params or {})})
    except (sympy.SympifyError, SyntaxError, TypeError) as e:
        raise BadInput(f"claim {claim!r} is not a formula in n, m, d: {e}") from None
    if not isinstance(c, sympy.Expr) or c.free_symbols - {N, M, D} - set((derived_params or {}).values()):
        raise BadInput(f"claim {claim!r} is not a formula in n, m, d")
    return c


def rests_on_coverage(schedule: Schedule, c: Counts) -> set:
    """The kinds whose derived count is |terms| of a phase's equation (`Counts.bijections`)."""
    return {symbolic_step(schedule.phase(p)).op.value for p in c.bijections}


def derived_parameters(schedule, P=None) -> dict:
    """{name: sympy value} of the schedule's derived parameters in the record P (default: n, m, d
    as claims are written): the chunk size k/c exactly where its side condition is proved to make
    c divide k (`properties.shape_of`), else as its formula evaluates in sympy (a floor stays)."""
    from ringproof.proofs.ring.properties import shape_of
    if P is None:
        P = schedule.shape.record({"n": N, "m": M, "k": N / M, "d": D, "kd": D / M}.__getitem__)
    _, c, chunk = shape_of(schedule)
    seen = with_derived(schedule.derived, P)
    return {name: P.k / c if name == chunk else sympy.sympify(getattr(seen, name)) for name in schedule.derived}


def exact_chunks(schedule) -> dict:
    """{floor form: exact value} of the derived parameters proved exact (a chunk k/c where the side
    condition makes c divide k: `derived_parameters`), in k, m, kd; where the steps write that
    chunk inline (`properties.shape_of` with no name), {floor(k/c): k/c}."""
    if schedule.requires is not None and not schedule.derived:
        from ringproof.proofs.ring.properties import shape_of
        _, c, name = shape_of(schedule)
        return {sympy.floor(K / c): K / c} if c > 1 and name is None else {}
    if not schedule.derived:
        return {}
    P = parameters(schedule.shape)
    raw = with_derived(schedule.derived, P)
    exact = derived_parameters(schedule, P)
    return {sympy.sympify(getattr(raw, k)): v for k, v in exact.items() if sympy.sympify(getattr(raw, k)) != v}


def with_parameters(schedule, P):
    """The sympy record P with the schedule's derived parameters (`derived_parameters`)."""
    if not schedule.derived:
        return P
    return SimpleNamespace(**vars(P), **derived_parameters(schedule, P))
