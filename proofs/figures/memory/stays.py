"""memory, exactly: the data PE l holds at every cycle in closed form, and its peak, for every n.

By the definition of `ringproof.model.ring.memory`, every stay of a datum on a PE begins at an
*arrival* (an input at cycle 0, a copy or a moved sum the cycle after its send, a result made by an
op that does not accumulate) or at the *first node* of a running sum, and ends at a *departure*
(the sum moved on), at the *last use* before the datum arrives again, or, for an output's last stay
on a PE, at the end of the run. The occupancy of PE l at cycle t is then

    inputs on l + #beginnings at cycles ≤ t − #ends at cycles < t  (+ the copies arriving at t that
    no one uses there: a stay of that one cycle),

each term an exact count of the iterations of a loop nest (`nests.count`, the iteration's indices
kept; indices read mod m or div m split in radix m on both sides). Which use is a stay's last is
the schedule's hint (`Schedule(..., stays={"last": {(phase, array): (P, ix) -> condition},
"alone": {(phase, array): ...}, "home": {(phase, array): ...}, "guard": {phase: (P, ix) -> condition},
"unused": {input array: (P, indices) -> condition}, "peak": (phase, (P) -> {index: value, "l": PE})})`),
checked:

- *a guard's reading is the guard* (Z3): where a schedule gives one ("guard"), the counts read the
  step's guard as it (a causal mask in the cells of (l, s), free of the key's owner mod m), and a
  send whose condition is that guard too (Algorithm 3's moved sums w1);
- *a ledger's readings are the phase's events* (Z3, `ledger.checks`): where a schedule gives one
  ("ledger": {phase: ...}, Algorithm 2's phase 1, whose loop bound reads h mod m), the counts read
  that phase's events over its nest with one loop padded to an affine bound, a copy passed on in
  the cycle it arrives (transit) left out and counted at its own iteration;
- *a marked end is an end* (Z3, for every n): after it, every later use of the datum on that PE
  is preceded by a new beginning after the mark — an arrival its own source or `prev` witness
  names, a first node, a made result; an output's marked last stay is followed by no use and no
  arrival there at all (it is kept to the end); a departure is checked the same way;
- *a first node begins a stay* (Z3): no use or arrival of its datum on that PE before it;
- *a copy marked alone* is used by no one where it arrives before it arrives again (Z3);
- *an output sent home* (marked "home") is neither used nor sent again where it arrives (Z3): its
  last stay there, kept to the end (the dk and dv sums a backward ring's return hop moves home);
- *an input marked unused* ("unused") is used by no iteration (Z3): its one stay is its home PE's
  cycle 0 (the entries of dS and P above the diagonal in a causal backward ring), counted on PE l
  (`homed.unused_on`, checked against the ring model) and ended there;
- *every stay has its marked end* (count): on every PE the ends (marked, departures, alone copies,
  outputs sent home, kept outputs, unused inputs) are as many as the beginnings. A marked end is
  the end of one stay and two are never of the same stay, so equal numbers leave no stay without
  its marked end.

The other uses begin nothing: an operand's source witness, a node's `prev`, a forwarded copy's
source (proved by ring-locality and data-flow) show the datum already on the PE. The peak is the
occupancy at the hint's iteration; that no PE holds more at any cycle is proved by Z3 over the
closed forms, and it is compared with the ring model's measured peak at every size n, d ≤ 12.
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import sympy

from ringproof.proofs.figures import comparisons, signs
from ringproof.proofs.figures.counting import condition_form, parameters, symbolic_step, with_parameters
from ringproof.proofs.figures.memory import homed, ledger, peak_bound
from ringproof.proofs.figures.memory.data import data_of, Datum, ends, hint, mark, NotDerived, outputs, stored
from ringproof.proofs.figures.nests import count, lifted, M, split_digits, Unknown
from ringproof.proofs.figures.spread import cells, chunked
from ringproof.proofs.ring.iterations import alternatives, at, before, exists, fresh, moves, next_pe, ref_eq, sending
from ringproof.proofs.ring.normalize import PARAMS
from ringproof.proofs.ring.properties import shape_of
from ringproof.proofs.ring.properties.base import Check
from ringproof.schedules.dsl import HOME
from ringproof.schedules.expr import and_, eq, evaluate, lift, not_, or_, Term, var


# --------------------------------------------------------------------------- what an iteration does


def shared_marked(schedule, phase) -> None:
    """NotDerived where the schedule marks an array of which a step reads two slots (`Datum.shared`):
    both marked, one datum would end twice."""
    for d in data_of(phase.step(_vars(schedule), _ix(phase))):
        if d.shared and any(hint(schedule, kind, phase.name, d.ref.array.name) is not None
                            for kind in ("last", "alone", "home")):
            raise NotDerived(f"phase {phase.name}: two slots of {d.ref.array.name} in one step, one datum or two "
                             f"not decided, and {d.ref.array.name} marked there")



def _followed(step) -> None:
    """NotDerived where the occupancy's counts cannot follow the step: an op not on PE l, two
    slots of one array not decided one datum."""
    pe = lift(step.pe)
    if not (pe.op == "var" and pe.args[0] == "l"):
        raise NotDerived("its op does not run on PE l")
    data_of(step)




def checks(schedule) -> list:
    """The Checks (`smt.discharge`) that the hints are what the module doc says."""
    S, out = schedule, []
    requires, chunk, _ = shape_of(S)          # as every property's checks assume it
    slot = dict(zip([p.name for p in S.phases], S.slots))

    def check(phase, name, build):
        out.append(Check("memory", phase, name, build, shape=S.shape, requires=requires, chunk=chunk))

    def pair(p, q, fn):
        def build(ctx):
            a, b = fresh(ctx, S, p, "a"), fresh(ctx, S, q, "b")
            return fn(a, b)
        return build

    inputs = {a.name for a in S.problem.inputs}
    for arr in S.stays.unused:
        if arr not in inputs:
            raise NotDerived(f"{arr} marked unused (stays['unused']) is not an input")
    for p in S.phases:
        shared_marked(S, p)
        if hint(S, "guard", p.name) is not None:
            check(p.name, "guard as its reading", lambda ctx, p=p: _guard_read(S, fresh(ctx, S, p, "a")))
        gen = data_of(p.step(_vars(S), _ix(p)))
        for gi, g in enumerate(gen):
            arr = g.ref.array.name
            marked = hint(S, "last", p.name, arr) is not None
            for q in S.phases:
                for hi, h in enumerate(data_of(q.step(_vars(S), _ix(q)))):
                    if h.ref.array.name != arr:
                        continue
                    if slot[q.name] >= slot[p.name] and (marked or str(g.departs) != "False"):
                        check(p.name, f"end of {arr} before {q.name}",
                              pair(p, q, lambda a, b, gi=gi, hi=hi: _after_end(S, a, b, gi, hi)))
                    if slot[q.name] <= slot[p.name] and str(g.first) != "False":
                        check(p.name, f"first {arr} after {q.name}",
                              pair(p, q, lambda a, b, gi=gi, hi=hi: _before_first(S, a, b, gi, hi)))
                st = q.step(_vars(S), _ix(q))
                if st.send is not None and stored(st).array.name == arr:
                    if arr in outputs(S) and marked and slot[q.name] >= slot[p.name]:
                        check(p.name, f"kept {arr}, no copy from {q.name}",
                              pair(p, q, lambda a, b, gi=gi: _no_arrival_after(S, a, b, gi)))
                    if slot[q.name] <= slot[p.name] and str(g.first) != "False":
                        check(p.name, f"first {arr}, no copy from {q.name}",
                              pair(p, q, lambda a, b, gi=gi: _no_arrival_before(S, a, b, gi)))
        st = p.step(_vars(S), _ix(p))
        if st.send is not None and hint(S, "home", p.name, stored(st).array.name) is not None:
            arr = stored(st).array.name
            if arr not in outputs(S) or hint(S, "alone", p.name, arr) is not None:
                raise NotDerived(f"phase {p.name}: {arr} marked kept where it arrives (stays['home']) is "
                                 f"{'not an output' if arr not in outputs(S) else 'also marked alone'}")
            for q in S.phases:
                if slot[q.name] < slot[p.name]:
                    continue
                for hi, h in enumerate(data_of(q.step(_vars(S), _ix(q)))):
                    if h.ref.array.name == arr:
                        check(p.name, f"home {arr}, no use in {q.name}",
                              pair(p, q, lambda a, b, hi=hi: _home_unused(S, a, b, hi)))
                sq = q.step(_vars(S), _ix(q))
                if sq.send is not None and stored(sq).array.name == arr:
                    check(p.name, f"home {arr}, no copy from {q.name}", pair(p, q, lambda a, b: _home_last(S, a, b)))
        for arr in S.stays.unused:
            for hi, h in enumerate(data_of(st)):
                if h.ref.array.name == arr:
                    check(p.name, f"unused {arr}, no use",
                          lambda ctx, p=p, hi=hi: _unused(S, fresh(ctx, S, p, "a"), hi))
        if st.send is not None and hint(S, "alone", p.name, stored(st).array.name) is not None:
            arr = stored(st).array.name
            for q in S.phases:
                for hi, h in enumerate(data_of(q.step(_vars(S), _ix(q)))):
                    if h.ref.array.name == arr and slot[q.name] >= slot[p.name]:
                        check(p.name, f"alone {arr} before {q.name}",
                              pair(p, q, lambda a, b, hi=hi: _alone(S, a, b, hi)))
    return out + ledger.checks(S)


def _vars(S):
    return PARAMS


def _ix(p):
    return SimpleNamespace(**{name: var(name) for name in p.index_names})


def _ixs(it):
    return SimpleNamespace(**it.idx)


def _begun(S, a, b, h: Datum, x, after_send=False):
    """Term: a stay of x begins on b's PE after a's cycle (after a's cycle + 1 where `after_send`:
    a's own copy arrives then) and no later than b: b makes x or starts its sum, or a source or
    `prev` witness of b is a send (a move) from the previous PE arriving then, or a use of x on b's
    PE after a and before b (which the same check, for that use, shows preceded by a beginning:
    an induction on the cycle)."""
    opts = [h.made, h.first]
    later = (lambda src: before(a, src)) if after_send else (lambda src: not_(before(src, a)))
    for cond, w in h.sources:
        for c, alt in alternatives(w, cond):
            if alt is HOME:
                continue
            src = at(S, alt)
            ss = src.step
            opts.append(and_(c, exists(src), eq(ss.pe, b.step.pe), before(a, src), before(src, b),
                             or_(*[and_(u.used, _same(u.ref, x)) for u in data_of(ss)])))
            if ss.send is not None:
                opts.append(and_(c, exists(src), sending(src), eq(next_pe(ss.pe), b.step.pe), later(src),
                                 before(src, b), _same(stored(ss), x)))
    if h.node_prev is not None and h.node_prev[1] is not None:
        cond, w = h.node_prev
        for c, alt in alternatives(w, cond):
            if alt is HOME:
                continue
            src = at(S, alt)
            opts.append(and_(c, exists(src), eq(src.step.pe, b.step.pe), before(a, src), before(src, b),
                             or_(*[and_(u.used, _same(u.ref, x)) for u in data_of(src.step)])))
            opts.append(and_(c, exists(src), moves(src), eq(next_pe(src.step.pe), b.step.pe), later(src),
                             before(src, b)))
    return or_(*opts)


def _same(r1, r2):
    return ref_eq(r1, r2)


def _after_end(S, a, b, gi, hi):
    """A marked end (or departure) at a: a later use of its datum on its PE comes after a new
    beginning; an output's marked end: no later use at all."""
    g, h = data_of(a.step)[gi], data_of(b.step)[hi]
    during, kept = ends(S, a.phase, g, _vars(S), _ixs(a))
    hyps = [or_(during, kept), h.used, eq(a.step.pe, b.step.pe), before(a, b), _same(g.ref, h.ref)]
    goal = and_(not_(kept), _begun(S, a, b, h, g.ref))
    return {"a": a, "b": b}, hyps, goal


def _before_first(S, a, b, gi, hi):
    """A first node at a: no use of its datum on its PE before it."""
    g, h = data_of(a.step)[gi], data_of(b.step)[hi]
    return {"a": a, "b": b}, [g.first, h.used, eq(a.step.pe, b.step.pe), before(b, a)], not_(_same(g.ref, h.ref))


def _no_arrival_after(S, a, b, gi):
    """An output's marked end at a: no copy of it arrives on its PE later."""
    g = data_of(a.step)[gi]
    _, kept = ends(S, a.phase, g, _vars(S), _ixs(a))
    hyps = [kept, sending(b), eq(next_pe(b.step.pe), a.step.pe), not_(before(b, a))]
    return {"a": a, "b": b}, hyps, not_(_same(stored(b.step), g.ref))


def _no_arrival_before(S, a, b, gi):
    """A first node at a: no copy of its datum arrived on its PE before (or at) it."""
    g = data_of(a.step)[gi]
    hyps = [g.first, sending(b), eq(next_pe(b.step.pe), a.step.pe), before(b, a)]
    return {"a": a, "b": b}, hyps, not_(_same(stored(b.step), g.ref))


def _home_unused(S, a, b, hi):
    """A send at a marked home: its datum is not used on the next PE after it arrives (its last
    stay there, which an output keeps to the end)."""
    h = data_of(b.step)[hi]
    x = stored(a.step)
    marked = mark(S, "home", a.phase.name, x.array.name, _vars(S), _ixs(a))
    hyps = [sending(a), marked, h.used, eq(next_pe(a.step.pe), b.step.pe), before(a, b)]
    return {"a": a, "b": b}, hyps, not_(_same(x, h.ref))


def _home_last(S, a, b):
    """A send at a marked home: no later send brings its datum to the same PE again."""
    x = stored(a.step)
    marked = mark(S, "home", a.phase.name, x.array.name, _vars(S), _ixs(a))
    hyps = [sending(a), marked, sending(b), eq(b.step.pe, a.step.pe), before(a, b)]
    return {"a": a, "b": b}, hyps, not_(_same(stored(b.step), x))


def _guard_read(S, a):
    """The guard's reading (stays["guard"]) is the step's guard at every iteration."""
    g, r = lift(a.step.guard), lift(hint(S, "guard", a.phase.name)(_vars(S), _ixs(a)))
    return {"a": a}, [], and_(or_(not_(g), r), or_(g, not_(r)))


def _unused(S, a, hi):
    """An input marked unused (stays["unused"]) is not used at a: its one stay is its home PE's
    cycle 0."""
    h = data_of(a.step)[hi]
    return {"a": a}, [h.used], not_(lift(hint(S, "unused", h.ref.array.name)(_vars(S), tuple(h.ref.idx))))


def _alone(S, a, b, hi):
    """A copy sent at a marked alone: a use of it on the next PE after it arrives comes after a
    new beginning there."""
    h = data_of(b.step)[hi]
    x = stored(a.step)
    marked = mark(S, "alone", a.phase.name, x.array.name, _vars(S), _ixs(a))
    hyps = [sending(a), marked, h.used, eq(next_pe(a.step.pe), b.step.pe), before(a, b), _same(x, h.ref)]
    return {"a": a, "b": b}, hyps, _begun(S, a, b, h, x, after_send=True)


# --------------------------------------------------------------------------- the counts


class Counter:
    """Counts of one schedule's events with the iteration (and l) kept, in k, m, kd."""

    def __init__(self, schedule, session):
        self.S = schedule
        self.P = with_parameters(schedule, parameters(schedule.shape))
        self.decider = session.decider(schedule.shape)
        self.scale, self.back = {}, {}
        hit = session.balanced.get(("stays-chunk", id(schedule)))
        if hit is None or hit[0] is not schedule:
            hit = (schedule, chunked(schedule, session))
            session.balanced[("stays-chunk", id(schedule))] = hit
        scale, decider = hit[1]
        if scale:                        # an exact chunk k/c: k counted as c·k′, no floor to split
            self.scale, self.decider = scale, decider
            self.back = {x: x / (v / x) for x, v in scale.items()}
            self.P = SimpleNamespace(**{x: sympy.sympify(v).xreplace(scale) for x, v in vars(self.P).items()})
        self.session = session
        self.slot = dict(zip([p.name for p in schedule.phases], schedule.slots))

    def nest(self, phase, suffix=""):
        """[(symbol, lo, hi)] of the phase's loops, symbols named with `suffix`, and the env."""
        loops, env, pad = [], {}, ledger.hint(self.S, phase)
        for lp in phase.loops:
            lo, hi = lp.bounds(self.P, SimpleNamespace(**env))
            if pad is not None and lp.name == pad["loop"]:          # checked: `ledger.checks`
                hi = pad["pad"](self.P, SimpleNamespace(**env))
            v = sympy.Symbol(lp.name + suffix, integer=True)
            loops.append((v, sympy.sympify(lo), sympy.sympify(hi)))
            env[lp.name] = v
        return loops, env

    def value(self, x):
        """A hint's value (a Term of the sizes, or a number) in sympy."""
        return sympy.sympify(evaluate(x, vars(self.P)) if isinstance(x, Term) else x)

    def condition(self, term, env):
        return sympy.sympify(condition_form(term, env, self.P))

    def events(self, phase):
        """{"begin", "end", "kept", "arrive", "alone", "home"}: [sympy condition on phase's indices
        (primed) and l′, one per datum] of the events of `phase` (arrivals on the next PE: all, those
        marked alone, those marked kept there, "home")."""
        st = symbolic_step(phase)
        try:
            _followed(st)
        except NotDerived as e:
            raise NotDerived(f"phase {phase.name}: {e}") from None
        shared_marked(self.S, phase)
        loops, env = self.nest(phase, "_")
        env["l"] = sympy.Symbol("l_", integer=True)
        Pv = SimpleNamespace(**{name: var(name) for name in vars(self.P)})
        ix = _ix(phase)
        book = ledger.hint(self.S, phase)
        if book is not None:             # the events as the ledger reads them (checked: `ledger.checks`)
            if any(hint(self.S, kind, phase.name, stored(st).array.name) is not None for kind in ("alone", "home")
                   if st.send is not None):
                raise NotDerived(f"phase {phase.name}: a ledger and copies marked alone or kept where they arrive")
            F = sympy.false
            return loops, env, {"begin": [self.condition(book["begin"](Pv, ix), env)],
                                "end": [self.condition(book["end"](Pv, ix), env)], "kept": [F],
                                "arrive": [self.condition(book["arrive"](Pv, ix), env)], "alone": [F], "home": [F]}
        reading = hint(self.S, "guard", phase.name)
        if reading is not None:          # the guard as the schedule reads it (checked: `_guard_read`)
            same = st.send is not None and str(lift(st.send.when)) == str(lift(st.guard))
            st = replace(st, guard=reading(Pv, ix))
            if same:                     # a send under the very guard: the same reading
                st = replace(st, send=replace(st.send, when=st.guard))
        out = {"begin": [], "end": [], "kept": [], "arrive": [], "alone": [], "home": []}
        for d in data_of(st):
            during, kept = ends(self.S, phase, d, Pv, ix)
            out["begin"].append(self.condition(or_(d.made, d.first), env))
            out["end"].append(self.condition(during, env))
            out["kept"].append(self.condition(kept, env))
        if st.send is not None:
            send = lift(st.send.when)
            out["arrive"].append(self.condition(send, env))
            out["alone"].append(self.condition(and_(send, mark(self.S, "alone", phase.name, stored(st).array.name,
                                                                  Pv, ix)), env))
            out["home"].append(self.condition(and_(send, mark(self.S, "home", phase.name, stored(st).array.name,
                                                                 Pv, ix)), env))
        return loops, env, out

    def count(self, phase, cond, at=None, strict=True, sent=False):
        """#iterations of `phase` on PE l (on PE l − 1 where `sent`: what arrives on l from there) with `cond`,
        over the whole phase, or (`at`: (loops of the kept iteration)) those before it (`strict`) or
        up to it; a form in l (and the kept indices). Kept in the session (`probe` asks some first)."""
        if sympy.sympify(cond) is sympy.false:
            return sympy.Integer(0)
        key = ("stays-count", id(self.S), phase.name, str(cond), str(at), strict, sent)
        hit = self.session.balanced.get(key)
        if hit is None or hit[0] is not self.S:
            got = self._count(phase, cond, at, strict, sent)
            hit = (self.S, _halves(got) if ledger.hint(self.S, phase) is not None else got)
            self.session.balanced[key] = hit
        return hit[1]

    def _count(self, phase, cond, at, strict, sent):
        """`count`'s: before the kept iteration (v1, ..., vr), a sum over t of the counts with
        v′j = vj for j < t put in (those loops gone) and v′t < vt (and, not `strict`, the one with
        every v′j = vj): conjunctions, since one count of their disjunction splits into many more
        cases. A v′j so fixed lies in its range: the
        kept iteration is one of the same nest. One read under a Mod or floor stays a loop, with
        v′j = vj a condition (`split_digits` writes both in radix, `_mirror`); so does the PE l′ = l
        (put in elsewhere, where that is faster)."""
        loops, env = self.nest(phase, "_")
        L, L_ = sympy.Symbol("l", integer=True), sympy.Symbol("l_", integer=True)
        cond = sympy.sympify(cond)
        kept = [(L, sympy.Integer(1), M)] + (list(at) if at is not None else [])
        if L_ in {x for a in cond.atoms(sympy.Mod, sympy.floor) for x in a.free_symbols}:
            cond, pe = sympy.And(cond, sympy.Eq(L_, L)), [(L_, sympy.Integer(1), M)]
        else:
            cond, pe = cond.xreplace({L_: L}), []
        if at is None:
            got = self._nest_count(phase, kept + pe + loops, cond, len(kept))
        else:
            read = {x for e in [cond] + [sympy.sympify(b) for _, lo, hi in loops for b in (lo, hi)]
                    for a in e.atoms(sympy.Mod, sympy.floor) for x in a.free_symbols}
            got = sympy.Integer(0)
            for t in range(len(loops) + (0 if strict else 1)):
                same = {v_: v for (v_, _, _), (v, _, _) in zip(loops[:t], at) if v_ not in read}
                rest = [(v_, sympy.sympify(lo).xreplace(same), sympy.sympify(hi).xreplace(same))
                        for v_, lo, hi in loops if v_ not in same]
                here = sympy.And(cond.xreplace(same), *[sympy.Eq(v_, v) for (v_, _, _), (v, _, _) in zip(loops[:t], at)
                                                        if v_ not in same],
                                 *([loops[t][0] < at[t][0]] if t < len(loops) else []))
                got += self._nest_count(phase, kept + pe + rest, here, len(kept))
        return got.xreplace({L: previous(L)}) if sent else got

    def _nest_count(self, phase, nest, cond, keep):
        """`nests.count` of the nest's iterations with `cond`, its first `keep` indices kept."""
        if cond is sympy.false:
            return sympy.Integer(0)
        back = {}
        split = split_digits(nest, cond, keep=keep)
        if split is not None:
            nest, cond, keep, back = _mirror(split[0], split[1], keep)
        try:
            got = count(nest, lifted(cond, nest, self.decider), self.decider, keep=keep, settle=False)
        except Unknown as e:
            raise NotDerived(f"phase {phase.name}: {e}") from None
        return got.xreplace(back) if back else got


LONG = 160       # a blocker's text longer than this is cut before its first ": " (the data it names:
                 # their index formulas can run to pages)


def blockers(schedule, session) -> list[str]:
    """What keeps the occupancy from being counted whatever the stays marked, read off the steps and
    loops without counting: a step the counts cannot follow (`_followed`), the bound of a loop whose
    sends arrive somewhere (counted whatever the marks) reading an outer index under mod, div or
    cases (the counter sums polynomials between affine bounds)."""
    c, out = Counter(schedule, session), []
    for phase in schedule.phases:
        st = symbolic_step(phase)
        try:
            _followed(st)
        except NotDerived as e:
            why = str(e)
            out.append(f"phase {phase.name}: {why if len(why) <= LONG else why.split(': ', 1)[0]}")
        if st.send is None or str(lift(st.send.when)) == "False":
            continue
        outer = set()
        for v, lo, hi in c.nest(phase)[0]:
            if any(x.free_symbols & outer for b in (lo, hi) for x in b.atoms(sympy.Mod, sympy.floor, sympy.Piecewise)):
                used = sorted(str(x) for b in (lo, hi) for x in b.free_symbols & outer)
                out.append(f"phase {phase.name}: the bound of loop {v} reads {', '.join(used)} under mod, div or cases")
            outer.add(v)
    return out


def probe(schedule, session) -> None:
    """NotDerived where a count the occupancy needs whatever the hints mark fails: each phase's
    sends that arrive on PE l before a kept iteration. Asked before the hint checks, so a schedule
    whose sends the counter cannot follow costs no Z3 query; the counts are kept for `occupancy`."""
    c = Counter(schedule, session)
    for phase in schedule.phases:
        _, _, ev = c.events(phase)
        at, _ = c.nest(phase)
        for cond in ev["arrive"]:
            c.count(phase, cond, at=at, strict=True, sent=True)


def _mirror(nest, cond, keep):
    """The kept twin v of every summed index v_ that `split_digits` wrote in radix c, written in
    radix c too (the lexicographic comparison reads both alike): (nest, cond, keep, {digit: its
    value in v})."""
    names = {str(v): (v, lo, hi) for v, lo, hi in nest}
    kept, rest, back, subs = [], nest[keep:], {}, {}
    for v, lo, hi in nest[:keep]:
        twin = names.get(f"{v}__r")
        if twin is None:
            kept.append((v, lo, hi))
            continue
        c = twin[2] + 1
        vq, vr = sympy.Symbol(f"{v}_q", integer=True), sympy.Symbol(f"{v}_r", integer=True)
        kept += [(vq, sympy.Integer(0), sympy.expand((hi - lo + 1) / c) - 1), (vr, sympy.Integer(0), c - 1)]
        subs[v] = lo + c * vq + vr
        back.update({vq: sympy.floor((v - lo) / c), vr: sympy.Mod(v - lo, c)})
    return kept + rest, cond.xreplace(subs), len(kept), back


def _halves(form):
    """`form` with each floor(Y/2), Y with integer coefficients and an odd constant term, written
    Y − floor((Y + 1)/2) (equal for every integer Y): floor((n − 1)/2) as n − 1 − floor(n/2), so
    that the halves of one n cancel where counts add up (Algorithm 2's groups h ≤ n div 2 but n/2;
    asked for a ledger's phase only)."""
    subs = {}
    for f in sympy.sympify(form).atoms(sympy.floor):
        Y = sympy.expand(2 * f.args[0])
        if _integral(Y) and Y.as_coeff_Add()[0] % 2 == 1:
            subs[f] = Y - sympy.floor(sympy.expand((Y + 1) / 2))
    return sympy.sympify(form).xreplace(subs) if subs else form


def _integral(e) -> bool:
    """Does the polynomial e have integer coefficients?"""
    try:
        return all(c.is_Integer for c in sympy.Poly(e, *sorted(e.free_symbols, key=str)).coeffs()) if e.free_symbols \
            else e.is_Integer
    except sympy.PolynomialError:
        return False


def previous(l):
    """The PE before l on the ring (1 before 2, ..., m before 1)."""
    return sympy.Piecewise((l - 1, l >= 2), (M, True))


# --------------------------------------------------------------------------- occupancy and peak


def occupancy(schedule, session, inputs) -> tuple[dict, sympy.Expr]:
    """({slot: (its loops, the data PE l holds in the cycle of that iteration)}, the data held in the
    cycle after the last, where a copy sent in the last cycle arrives), closed forms in l, the
    iteration's indices and k, m, kd."""
    c = Counter(schedule, session)
    forms, end = _occupancy(schedule, session, inputs, c)
    return _scaled(forms, c.back), end.xreplace(c.back)


def _occupancy(schedule, session, inputs, c) -> tuple[dict, sympy.Expr]:
    """`occupancy` as the counter `c` writes it (zigzag's chunk k/2 as k′): what `peak` bounds. Not
    put back into k and out again: that rebuilds a Piecewise per case, a large part of zigzag's
    peak."""
    S = schedule
    L = sympy.Symbol("l", integer=True)
    inputs = sympy.sympify(inputs).xreplace(c.scale)
    events = {p.name: c.events(p)[2] for p in S.phases}
    slots = sorted(set(S.slots))
    members = {s: [p for p, x in zip(S.phases, S.slots) if x == s] for s in slots}
    total = {}
    for p in S.phases:
        ev = events[p.name]
        total[p.name] = {kind: sympy.Add(*[c.count(p, cond, sent=kind in ("arrive", "alone", "home")) for cond in conds])
                         for kind, conds in ev.items()}
    unused = _unused_on(S, session, c.scale)
    out = {}
    before = sympy.sympify(inputs)
    for s in slots:
        first = members[s][0]
        at, env = c.nest(first)
        for p in members[s][1:]:
            if [(str(v), lo, hi) for v, lo, hi in c.nest(p)[0]] != [(str(v), lo, hi) for v, lo, hi in at]:
                raise NotDerived(f"the phases of slot {s} have loops of different bounds")
        # the inputs no one uses are held at cycle 0 only: the first tuple of the first slot
        terms = [before, -(sympy.Piecewise((0, sympy.And(*[sympy.Eq(v, lo) for v, lo, _ in at])), (unused, True))
                           if s == slots[0] and unused != 0 else unused)]
        for p in members[s]:
            ev = events[p.name]
            terms += [c.count(p, cond, at=at, strict=False) for cond in ev["begin"]]
            terms += [-c.count(p, cond, at=at, strict=True) for cond in ev["end"]]
            terms += [c.count(p, cond, at=at, strict=True, sent=True) for cond in ev["arrive"]]
            terms += [-c.count(p, cond, at=at, strict=True, sent=True) for cond in ev["alone"]]
            terms.append(_in_transit(c, p, env))
        terms.append(_alone_now(c, S, members, s, at, events))
        out[s] = (at, sympy.Add(*terms))          # once: a sum rebuilt per term grows with the square of the terms
        for p in members[s]:
            t = total[p.name]
            before = before + t["begin"] - t["end"] + t["arrive"] - t["alone"]
    begun = sympy.sympify(inputs) + sum((total[p.name]["begin"] + total[p.name]["arrive"] for p in S.phases),
                                        sympy.Integer(0))
    ended = unused + sum((total[p.name]["end"] + total[p.name]["kept"] + total[p.name]["alone"]
                          + total[p.name]["home"] for p in S.phases), sympy.Integer(0))
    pes = [(L, sympy.Integer(1), M)]
    if not _as_many(begun, ended, c.decider, pes):
        raise NotDerived(f"the stays begun on PE l ({begun}) are not shown to be as many as those the hints "
                         f"end ({ended}): some stay's last use is not marked")
    last = slots[-1]
    end = sum((total[p.name]["kept"] + total[p.name]["home"] for p in S.phases), sympy.Integer(0))
    for p in members[last]:
        loops, _ = c.nest(p, "_")
        point = _last_tuple(loops)
        for cond in events[p.name]["alone"]:
            end += _at(cond, point, L)
    return out, end


def _in_transit(c, phase, env):
    """1 where the kept iteration passes on a copy that arrived in its cycle (a ledger's transit,
    left out of its counts), else 0."""
    book = ledger.hint(c.S, phase)
    if book is None:
        return sympy.Integer(0)
    Pv = SimpleNamespace(**{name: var(name) for name in vars(c.P)})
    cond = c.condition(book["transit"](Pv, _ix(phase)), {**env, "l": sympy.Symbol("l", integer=True)})
    return sympy.Piecewise((1, cond), (0, True))


def _unused_on(S, session, scale: dict):
    """The inputs homed on PE l that the schedule marks unused (`homed.unused_on`), k written as
    the counter writes it (`scale`), or NotDerived."""
    if not S.stays.unused:
        return sympy.Integer(0)
    got, why = homed.unused_on(S, session)
    if got is None:
        raise NotDerived(why)
    return sympy.sympify(got).xreplace(scale)


def _scaled(forms: dict, scale: dict) -> dict:
    """The occupancy's forms (and their loops' bounds) with `scale` put in (k′ back to k/c, or k to c·k′)."""
    if not scale:
        return forms
    return {s: ([(v, sympy.sympify(lo).xreplace(scale), sympy.sympify(hi).xreplace(scale)) for v, lo, hi in at],
                sympy.sympify(f).xreplace(scale)) for s, (at, f) in forms.items()}


def _as_many(begun, ended, decider, pes) -> bool:
    """Are the forms equal at every PE? Z3 on the difference, else (a difference with cases of l:
    the causal forwards' counts, which Z3 does not settle in one query) cell by cell of l
    (`spread.cells`: its value 0 in every cell its comparisons cut out)."""
    diff = sympy.expand(begun - ended)
    if decider.holds(diff, pes) and decider.holds(-diff, pes):
        return True
    try:
        got = cells(diff, pes, decider) if diff.has(sympy.Piecewise) else diff
    except Unknown:
        return False
    pieces = got.args if isinstance(got, sympy.Piecewise) else [(got, sympy.true)]
    return all(sympy.expand(v) == 0 or _zero_at_one_pe(v, c, pes[0]) for v, c in pieces)


def _zero_at_one_pe(value, cond, pe) -> bool:
    """Is `value` 0 where `cond` holds, `cond` (a conjunction of comparisons of l) with l's range
    leaving one PE (l − m ≥ 0 is l = m): that PE put in, exactly (sympy)."""
    L, lo, hi = pe
    lows, highs = [lo], [hi]
    for a in sympy.And.make_args(cond):
        got = comparisons.split(comparisons.atom(a).p, L) if isinstance(a, (sympy.LessThan, sympy.GreaterThan)) else None
        if got is not None and got[0] in (1, -1):                 # ±L + r ≤ 0
            (highs if got[0] == 1 else lows).append(sympy.expand(-got[1] / got[0]))
    return any(sympy.expand(x - y) == 0 and sympy.expand(value.xreplace({L: x})) == 0 for x in lows for y in highs)


def _last_tuple(loops) -> dict:
    """{index: its value} at the last tuple of a nest."""
    point = {}
    for v, lo, hi in loops:
        point[v] = sympy.sympify(hi).xreplace(point)
    return point


def _at(cond, point: dict, L):
    """1 where `cond` (of primed indices and l′) holds at `point` with l′ the PE before l, else 0."""
    L_ = sympy.Symbol("l_", integer=True)
    here = sympy.sympify(cond).xreplace({**point, L_: previous(L)})
    return sympy.Piecewise((1, here), (0, True))


def _alone_now(c, S, members, s, at, events):
    """The copies no one uses that arrive in the cycle of the kept iteration: sent by PE l − 1 in
    the cycle before (its predecessor tuple, or the last tuple of the slot before)."""
    L = sympy.Symbol("l", integer=True)
    out = sympy.Integer(0)
    names = [v for v, _, _ in at]
    for t in reversed(range(len(at))):
        v, lo, hi = at[t]
        here = [sympy.Gt(v, lo)] + [sympy.Eq(u, ulo) for u, ulo, _ in at[t + 1:]]
        point = {sympy.Symbol(f"{u}_", integer=True): u for u in names[:t]}
        point[sympy.Symbol(f"{v}_", integer=True)] = v - 1
        for u, _, uhi in at[t + 1:]:
            point[sympy.Symbol(f"{u}_", integer=True)] = sympy.sympify(uhi).xreplace(
                {x: point[sympy.Symbol(f"{x}_", integer=True)] for x in names if sympy.Symbol(f"{x}_", integer=True) in point})
        for p in members[s]:
            for cond in events[p.name]["alone"]:
                out += sympy.Piecewise((_at(cond, point, L), sympy.And(*here)), (0, True))
    if s > 0:
        start = sympy.And(*[sympy.Eq(u, ulo) for u, ulo, _ in at])
        for p in members[s - 1]:
            point = _last_tuple(c.nest(p, "_")[0])
            for cond in events[p.name]["alone"]:
                out += sympy.Piecewise((_at(cond, point, L), start), (0, True))
    return out


def _at_point(e, values: dict, memo: dict | None = None):
    """e.xreplace(values), built the way xreplace builds it, but each case of a Piecewise read only
    where no case before it holds, and a condition decided from its comparisons each put to a value
    once (`peak_bound.holds`; sympy's own where they do not decide it): the occupancy at a candidate
    iteration, where xreplace would rebuild every case of thousands at each candidate (slow)."""
    memo = {} if memo is None else memo
    if not e.args:
        return values.get(e, e)
    if isinstance(e, sympy.Piecewise):
        kept = []
        for value, cond in e.args:
            holds = peak_bound.holds(cond, _AtValues(values, memo).get)
            holds = cond.xreplace(values) if holds is None else sympy.true if holds else sympy.false
            if holds is sympy.false:
                continue
            kept.append((_at_point(value, values, memo), holds))
            if holds is sympy.true:
                break
        return sympy.Piecewise(*kept)
    args = [_at_point(a, values, memo) for a in e.args]
    return e.func(*args) if any(a is not b for a, b in zip(args, e.args)) else e


class _AtValues:
    """The truth of each comparison with `values` put in (sympy.true or sympy.false; None where that
    leaves it open), each put in once and kept in `memo`: its `get` is the `truth` `peak_bound.holds` reads."""

    def __init__(self, values: dict, memo: dict):
        self.values, self.memo = values, memo

    def get(self, a):
        got = self.memo.get(a)
        if got is None:
            got = self.memo[a] = a.xreplace(self.values)
        return got if got is sympy.true or got is sympy.false else None


def peak(schedule, session, inputs) -> dict:
    """{"form": the peak (k, m, kd), "at": the hint's iterations} or
    NotDerived: the most of the occupancy at the hint's iterations (`stays["peak"]`: [(phase,
    (P) -> {index: value, "l": PE, and optionally "when": the sizes where the iteration is one})]),
    shown by Z3 to be the most any PE holds in any cycle (where no one candidate is the most in a
    regime of the sizes, their Max: the occupancy shown at most the largest of them, else, where
    that is not shown, proved in each part where one of them is: `peak_bound.parts`)."""
    S = schedule
    if not S.stays.peak:
        raise NotDerived("the schedule gives no iteration at which a PE holds the most (stays['peak'])")
    for phase, _ in S.stays.peak:
        if ledger.hint(S, S.phase(phase)) is not None:      # its nest is padded: a point may be no cycle
            raise NotDerived(f"the peak's iteration in {phase}, a phase read over a ledger")
    c = Counter(S, session)
    forms, end = _occupancy(S, session, inputs, c)          # in the chunk's k′ (zigzag's h)
    decider = peak_bound.Remembered(c.decider)
    L = sympy.Symbol("l", integer=True)
    candidates, where = [], []
    for phase, fn in S.stays.peak:
        at, form = forms[c.slot[S.phase(phase).name]]
        point = fn(c.P)
        when = c.value(point.get("when", True))
        values = {v: c.value(point[str(v)]) for v, _, _ in at}
        values[L] = c.value(point["l"])
        canonical = sympy.And(*[a.canonical if isinstance(a, sympy.core.relational.Relational) else a
                                for a in sympy.And.make_args(when)])          # k ≥ 2, as signs.least_of reads it
        for v, lo, hi in [(L, sympy.Integer(1), M)] + at:
            x = values[v]
            inside = sympy.And(sympy.sympify(lo).xreplace(values) <= x, x <= sympy.sympify(hi).xreplace(values))
            if all(a is sympy.true or signs.decided(a, canonical) is sympy.true for a in sympy.And.make_args(inside)):
                continue                  # shown from the signs where the iteration is one (no Z3)
            if not decider.never(sympy.And(when, sympy.Not(inside))):
                raise NotDerived(f"the peak's iteration in {phase}: {v} = {x} is not shown within {lo} .. {hi}")
        value = _at_point(form, values)
        candidates.append(value if when is sympy.true else sympy.Piecewise((value, when), (0, True)))
        where.append({"phase": phase, **{str(k): str(v.xreplace(c.back)) for k, v in values.items()},
                      **({} if when is sympy.true else {"when": str(when.xreplace(c.back))})})
    groups = peak_bound.settled(candidates, decider)
    if groups is None:
        raise NotDerived("the largest of the occupancy at the peak's iterations is not shown in each regime of the sizes")
    top = groups[0][0] if len(groups) == 1 else \
        sympy.Piecewise(*[(v, peak_bound.tidied(sympy.Or(*peak_bound.joined(cs)), decider)) for v, cs in groups[:-1]],
                        (groups[-1][0], True))
    slots = list(forms.items()) + [("after the last cycle", ([], end))]
    for most, conds in groups:
        if isinstance(most, sympy.Max) and all(
                peak_bound.at_most(f, sympy.Or(*conds), [(L, sympy.Integer(1), M)] + loops, decider, most.args)
                for _, (loops, f) in slots):
            continue
        for value, regime in peak_bound.parts(most, sympy.Or(*conds), decider):
            for t, (loops, f) in slots:
                if not peak_bound.at_most(f, regime, [(L, sympy.Integer(1), M)] + loops, decider, (value,)):
                    raise NotDerived(f"Z3 does not show that no PE holds more than {value} where {regime}, in the "
                                     f"cycles of slot {t}")
    return {"form": top.xreplace(c.back), "at": where}
