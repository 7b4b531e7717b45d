"""Load balance: active ops per PE, and their spread (max − min over the m PEs).

In the lock-step machine a PE whose guard is false in a cycle still spends it, so the cycle count
does not show imbalance; the active ops per PE do. They are derived in closed form in n, m (d) and
the PE index l: each phase's guarded loop nest is counted exactly with l kept symbolic
(`nests.count(..., keep=1)`, its mod-m and block/chunk digits split by `nests.lifted` and the
digit rule, each split proved), for phases whose op runs on PE l; a phase whose nest is not
counted is counted over its terms (`_by_terms`), through its counting hint where it carries one
(`recount`: Algorithm 3's phase 2), a count whose floors halve k and m read in each parity class
(`by_parities`); a form with floors of n that is one polynomial in every residue class of n is
written as that polynomial (`plain`). Every per-PE form is compared with enumeration on the trace
at every size n, d ≤ 12 before it is used (a disagreement is an internal error). The spread is
then proved for every n by Z3 over 1 ≤ l ≤ m (under the schedule's side condition; in each parity
class of k and m where the forms have such cases): 0 where total(l) = total(1) for every l;
total(m) − total(1) where total(l + 1) ≥ total(l) for every l < m (the extreme PEs are 1 and m);
total(1) − total(m) where it never grows; otherwise, or where a form is not derived, `unknown`
with the reason, and the figures are enumerated at one size. A claim `notes={"claims":
{"balance": "..."}}` is proved equal to the derived spread, refuted at the smallest size where the
enumerated spread differs, or else unknown.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import sympy

from ringproof.errors import InternalError
from ringproof.model.ring.trace import active_per_pe, build_trace, slot_members
from ringproof.proofs.figures.records import ClaimVerdict, IdleCycles
from ringproof.proofs.results import Counterexample, Verdict
from ringproof.schedules.dsl import with_derived
from ringproof.schedules.expr import evaluate, lift, var
from ringproof.schedules.shape import PARAMETERS

FIGURE = (16, 4)     # (n, m) of the printed figures where the spread is not derived (or smaller)
CLAIM_N = 24         # a claim is compared with enumeration up to this n where nothing is derived
L = sympy.Symbol("l", integer=True)
S = sympy.Symbol("s", integer=True)   # the ring step, in the per-step forms
_SIZES = sympy.symbols("k m kd", positive=True, integer=True)


def per_pe(schedule, n: int, m: int, d: int | None = None, by: str = "op") -> dict:
    """{op kind (by="op") or phase name (by="phase"): [active ops on PE 1, ..., PE m]} of one size,
    enumerated on the trace."""
    out: dict = {}
    for pt in build_trace(schedule, n, m, d).phases:
        if pt.op.value == "MOVE":
            continue
        key = pt.op.value if by == "op" else pt.phase.name
        counts = np.bincount(np.asarray(pt.pe)[pt.active], minlength=m + 1)[1:m + 1]
        out[key] = [a + int(b) for a, b in zip(out.get(key, [0] * m), counts)]
    return out


def spread_of(table: dict) -> int:
    """max − min over PEs of the total active ops."""
    totals = [sum(col) for col in zip(*table.values())] if table else [0]
    return max(totals) - min(totals)


def forms(schedule, session=None):
    """({op kind: active ops on PE l, a closed form in k, m, kd and l}, {phase: its form}, why not,
    [phases whose form is counted over their terms, valid only with their coverage proved])
    -- ({}, {the phases derived}, reason, [...]) where some phase's form is not derived. Each
    phase's form is checked by enumeration (module doc). Found under the session's budget (None: a
    fresh session under the default budget) and kept in it where derived."""
    from ringproof.proofs.figures.counting import condition_form, exact_chunks, nest_of, parameters, symbolic_step, with_parameters
    from ringproof.proofs.figures.nests import Unknown, count, lifted
    session = _session(session)
    hit = session.balanced.get(id(schedule))
    if hit is not None and hit[0] is schedule:
        return hit[1]
    P = with_parameters(schedule, parameters(schedule.shape))
    decider = session.decider(schedule.shape)
    out, phases, why, on_terms = {}, {}, "", []
    for phase in schedule.phases:
        st = symbolic_step(phase)
        if st.op.value == "MOVE":
            continue
        if not _on_l(st):
            why = f"phase {phase.name}: its op does not run on PE l"
            break
        if phase.recount is None:
            loops, env = nest_of(phase, P, True)
            loops = [loops[-1]] + loops[:-1]           # l outermost, kept
            try:
                cond = lifted(sympy.sympify(condition_form(st.guard, env, P)), loops, decider)
                phases[phase.name] = (st.op.value, count(loops, cond, decider, keep=1))
                continue
            except Unknown as e:
                nest_why = f"{e}; "
        else:                                           # its counting hint counts it over its terms
            nest_why = ""
        try:
            phases[phase.name] = (st.op.value, _by_terms(schedule, phase, st, P, decider, session))
            on_terms.append(phase.name)
        except Unknown as e2:
            why = why or f"phase {phase.name}: {nest_why}over its terms: {e2}"
    exact = exact_chunks(schedule)
    points = _points(schedule)
    settled: dict = {}              # form -> its collapsed form (algo3-fast's phases 1 and 3 have one)
    for name, (kind, v) in phases.items():
        v = sympy.expand(v.xreplace(exact))
        if v not in settled:
            settled[v] = plain(collapse(v, decider, points=points))
        phases[name] = (kind, settled[v])
    bad = _check(schedule, phases, on_terms, session) if phases else ""
    why = "; ".join(x for x in (bad, why) if x)
    if why:                                     # the phases derived, each checked, beside why not all
        result = ({}, {} if bad else {name: form for name, (_, form) in phases.items()}, why, [] if bad else on_terms)
    else:
        for kind, form in phases.values():
            out[kind] = sympy.expand(out.get(kind, 0) + form)
        out = {kind: collapse(form, decider, points=points) for kind, form in out.items()}
        result = (out, {name: form for name, (_, form) in phases.items()}, "", on_terms)
        session.balanced[id(schedule)] = (schedule, result)   # a why may be a solver's unknown: not kept
    return result


def step_forms(schedule, session=None):
    """({phase: active ops on PE l in ring step s, a closed form in k, m, kd, l and s (cases of l
    and s)}, why not) for the phases whose outermost loop is a ring step (`Loop(...,
    ring_step=True)`) and whose op runs on PE l ({}, "" where no phase has a ring step). Each
    phase's nest is counted with l and its ring step kept (`nests.count(..., keep=2)`); a chunk
    size the side condition makes exact (k/c) is counted as c·k' (no floor to split); the summed
    cases are then read as the cells of l and s their conditions cut out (`cells`). Each form is
    checked against enumeration at every (l, s) and every size n, d ≤ 12 (`_check_steps`)."""
    from ringproof.proofs.figures.counting import condition_form, nest_of, parameters, symbolic_step, with_parameters
    from ringproof.proofs.figures.nests import Unknown, count, lifted
    session = _session(session)
    key = ("steps", id(schedule))
    hit = session.balanced.get(key)
    if hit is not None and hit[0] is schedule:
        return hit[1]
    P = with_parameters(schedule, parameters(schedule.shape))
    scale, decider = chunked(schedule, session)
    out, why = {}, ""
    for phase in schedule.phases:
        st = symbolic_step(phase)
        if st.op.value == "MOVE" or not (phase.loops and phase.loops[0].ring_step):
            continue
        if not _on_l(st):
            why = why or f"phase {phase.name}: its op does not run on PE l"
            continue
        loops, env = nest_of(phase, P, True)
        loops = [loops[-1]] + loops[:-1]           # l, then the ring step: both kept
        loops = [(v, sympy.sympify(lo).xreplace(scale), sympy.sympify(hi).xreplace(scale)) for v, lo, hi in loops]
        step = loops[1][0]
        try:
            cond = sympy.sympify(condition_form(st.guard, env, P)).xreplace(scale)
            got = count(loops, lifted(cond, loops, decider), decider, keep=2, settle=False)
            form = cells(got, loops[:2], decider)
        except Unknown as e:
            why = why or f"phase {phase.name} per ring step: {e}"
            continue
        back = {x: x / c for x, c in ((k, v / k) for k, v in scale.items())}
        out[phase.name] = sympy.piecewise_fold(form.xreplace(back).xreplace({step: S})) if form.has(sympy.Piecewise) \
            else sympy.expand(form.xreplace(back).xreplace({step: S}))
    if out:
        _check_steps(schedule, out, session)
    result = (out, why)
    if not why:
        session.balanced[key] = (schedule, result)
    return result


def chunked(schedule, session):
    """({k: c·k} where the side condition makes the chunk k/c exact (one chunk), else {}; a Decider
    whose facts read k as k/c there, so that what it shows holds of the substituted forms)."""
    from ringproof.proofs.figures.counting import exact_chunks
    from ringproof.proofs.figures.nests import K, Decider
    decider = Decider(schedule.shape, session.budget)
    exact = exact_chunks(schedule)
    chunks = {sympy.cancel(K / v) for v in exact.values()}
    if len(chunks) != 1 or not next(iter(chunks)).is_Integer:
        return {}, decider
    scale = {K: next(iter(chunks)) * K}
    if decider.requires is not None:
        decider.requires = decider.requires.xreplace(scale)
    if decider.least:
        return {}, Decider(schedule.shape, session.budget)
    return scale, decider


def _atom(rel):
    """A comparison as e with `rel` ⇔ e ≤ 0 (integers; e scaled to integer coefficients, as Z3
    takes it: the counter writes l ≥ m + 1/2 for l ≥ m + 1), or None."""
    from ringproof.proofs.figures.nests import denominator
    if isinstance(rel, (sympy.LessThan, sympy.StrictLessThan, sympy.GreaterThan, sympy.StrictGreaterThan)):
        e = rel.lhs - rel.rhs if isinstance(rel, (sympy.LessThan, sympy.StrictLessThan)) else rel.rhs - rel.lhs
        e = sympy.expand(e * denominator(e))
        strict = isinstance(rel, (sympy.StrictLessThan, sympy.StrictGreaterThan))
        return sympy.expand(e + 1 if strict else e)
    return None


def cells(form, kept, decider):
    """`form` (a sum of cases, each a conjunction of comparisons) as one Piecewise over the cells
    its comparisons cut out of the kept indices' ranges (`kept`: [(l, 1, m), (s, lo, hi)]): each
    comparison splits the cells where both sides can hold (Z3, over the ranges, every size and the
    side condition; a cell Z3 does not show empty is kept), a cell's value is the sum of the cases
    that hold there, cells shown to have one value are joined. Raises nests.Unknown if a comparison
    is not one of integers."""
    from ringproof.proofs.figures.nests import Unknown
    form = sympy.expand(form)
    rels = sorted(form.atoms(sympy.core.relational.Relational), key=sympy.default_sort_key)
    atoms: list = []                   # e or 1 − e, whichever comes first: the same in every process
    both: dict = {}                    # rel: (e, 1 − e), read again in every cell below
    for rel in rels:
        e = _atom(rel)
        if e is None:
            raise Unknown(f"a case of the per-step form compares by {type(rel).__name__}")
        both[rel] = e, sympy.expand(1 - e)
        if e not in atoms and both[rel][1] not in atoms:
            atoms.append(e)
    z = _Cells(decider, kept)
    found = [{}]
    for e in sorted(atoms, key=sympy.default_sort_key):
        found = [{**cell, e: truth} for cell in found for truth in (True, False) if z.possible(cell, {e: truth})]
    pieces: list = []
    for cell in found:
        truth = {}
        for rel in rels:
            e, other = both[rel]
            truth[rel] = sympy.true if cell.get(e, not cell.get(other, True)) else sympy.false
        value = sympy.expand(sympy.piecewise_fold(form.xreplace(truth)))
        if value.has(sympy.Piecewise):
            raise Unknown("a case of the per-step form is not settled in a cell")
        for at, piece in enumerate(pieces):  # one value there (equal, or shown equal in the cell)
            if sympy.expand(piece[0] - value) == 0 or _equal_on_window(piece[0] - value, cell, kept[0][0]) \
                    or not z.possible(cell, nonzero=piece[0] - value):
                piece[1].append(cell)
                break
            if all(_equal_on_window(piece[0] - value, c, kept[0][0]) for c in piece[1]):
                pieces[at] = (value, piece[1] + [cell])      # the new value holds in the piece's cells
                break
        else:
            pieces.append((value, [cell]))
    pieces = [(v, z.joined(w)) for v, w in pieces]
    if len(pieces) == 1:
        return pieces[0][0]
    return sympy.Piecewise(*pieces[:-1], (pieces[-1][0], True))


def _equal_on_window(diff, cell: dict, v) -> bool:
    """Is `diff` 0 at every point of the cell, shown where the cell's atoms hold v within a window
    lo ≤ v ≤ lo + w of constant width w ≤ 4: `diff` is 0 at v = lo, ..., lo + w (sympy, exactly).
    (Z3 does not always settle a polynomial of degree 2 in v over such a cell.)"""
    lows, highs = [], []
    for e, truth in cell.items():
        e = e if truth else sympy.expand(1 - e)          # e ≤ 0
        c = e.coeff(v)
        rest = sympy.expand(e - c * v)
        if rest.has(v) or c not in (1, -1):
            continue
        (highs if c == 1 else lows).append(-rest if c == 1 else rest)
    for lo in lows:
        for hi in highs:
            w = sympy.expand(hi - lo)
            if w.is_Integer and 0 <= w <= 4:
                return all(sympy.expand(diff.xreplace({v: lo + t})) == 0 for t in range(int(w) + 1))
    return False


class _Cells:
    """One Z3 solver holding the sizes' facts and the kept indices' ranges; cells are asked about
    under push/pop (each comparison translated once). A cell is first looked for at the counter's
    small points (`signs.points`: sizes that meet the side condition, each kept index at the ends
    and middle of its range): one where every comparison of the question takes its side is a model
    of the query Z3 would be given, which Z3 could then only find satisfiable (or not decide): not
    shown empty either way (zigzag's per-step forms: most of 690 queries)."""

    def __init__(self, decider, kept):
        import z3
        from ringproof.proofs.figures import signs
        from ringproof.proofs.figures.nests import SYMPY_PARAMETERS, to_z3
        env, facts = decider.env()
        for v, lo, hi in kept:
            env[v] = z3.Int(str(v))
            facts += [to_z3(lo, env) <= env[v], env[v] <= to_z3(hi, env)]
        self.env, self.solver, self._terms, self._z = env, decider.solver(plain=True), {}, {}   # incremental: the preprocessing would be redone at each check
        self.solver.add(*facts)
        self.names = (*SYMPY_PARAMETERS, *[v for v, _, _ in kept])
        self.points = [] if decider.least else signs.points(SYMPY_PARAMETERS, tuple(kept), decider.requires,
                                                              decider.d_is_n)

    def _seen(self, sides: dict, nonzero) -> bool:
        """Does one of `points` put every e of `sides` on its side (e ≤ 0 where True, e ≥ 1 where
        False) and make `nonzero` (a condition, or None) hold?"""
        from ringproof.proofs.figures import signs
        if not self.points:
            return False
        fns = [(signs.compiled(e, self.names), t) for e, t in sides.items()]
        extra = signs.compiled(nonzero, self.names) if nonzero is not None else None
        if any(fn is None for fn, _ in fns) or (nonzero is not None and extra is None):
            return False
        for p in self.points:
            if all((v := signs.at(fn, p)) is not None and (v <= 0 if t else v >= 1) for fn, t in fns) \
                    and (extra is None or signs.at(extra, p) is True):
                return True
        return False

    def _atom(self, e, truth: bool):
        """e ≤ 0 (`truth`) or e ≥ 1 as a Z3 literal, built once (a cell's are asked again with each
        further comparison)."""
        from ringproof.proofs.figures.nests import to_z3
        key = (e, truth)
        if key not in self._z:
            if e not in self._terms:
                self._terms[e] = to_z3(e, self.env)
            self._z[key] = self._terms[e] <= 0 if truth else self._terms[e] >= 1
        return self._z[key]

    def possible(self, cell: dict, more: dict | None = None, nonzero=None) -> bool:
        """Not shown empty: the cell with `more` (and `nonzero` ≠ 0)."""
        import z3
        from ringproof.proofs.figures.nests import to_z3
        sides = {**cell, **(more or {})}
        # translated first: an atom Z3 cannot read raises NoZ3 even where a point would decide
        atoms = [self._atom(e, t) for e, t in sides.items()]
        other = _nonzero(nonzero) if nonzero is not None else None
        extra = to_z3(other, self.env) if other is not None else None
        if self._seen(sides, other):
            return True
        self.solver.push()
        try:
            self.solver.add(*atoms)
            if extra is not None:
                self.solver.add(extra)
            return self.solver.check() != z3.unsat
        finally:
            self.solver.pop()

    def joined(self, cells: list):
        """The union of cells of one value, written short: the comparisons they share where that is
        the same set, then without the comparisons the others imply (each shown by Z3)."""
        import z3
        shared = dict(cells[0])
        for cell in cells[1:]:
            shared = {e: t for e, t in shared.items() if cell.get(e) == t}
        union = z3.Or(*[z3.And(*[self._atom(e, t) for e, t in c.items()]) for c in cells])
        if len(cells) > 1 and self._empty(list(self._each(shared)) + [z3.Not(union)]):
            cells = [shared]
        out = []
        for cell in cells:
            kept = dict(cell)
            for e in list(cell):
                rest = {x: t for x, t in kept.items() if x is not e}
                if not self.possible(rest, {e: not cell[e]}):
                    del kept[e]
            out.append(sympy.And(*[(e <= 0) if t else (e >= 1) for e, t in kept.items()]))
        return sympy.Or(*out)

    def _each(self, cell):
        return (self._atom(e, t) for e, t in cell.items())

    def _empty(self, facts) -> bool:
        import z3
        self.solver.push()
        try:
            self.solver.add(*facts)
            return self.solver.check() == z3.unsat
        finally:
            self.solver.pop()


def _check_steps(schedule, by_phase: dict, session) -> None:
    """Each per-step form against enumeration at every (l, s) and every size n, d ≤ 12: an
    InternalError at the first disagreement."""
    from ringproof.proofs.figures.counting import check_sizes, in_n_m_d
    from ringproof.proofs.figures.nests import KD, K, M
    from ringproof.schedules.dsl import params, with_derived
    compiled = {name: sympy.lambdify((K, M, KD, L, S), form, modules=["math"]) for name, form in by_phase.items()}
    for n, m, d in check_sizes(schedule.shape):
        P = with_derived(schedule.derived, params(n, m, d=d))
        for name, form in by_phase.items():
            want = _enumerated(session, schedule.phase(name), P, (n, m, d))
            for s, row in want.items():
                got = [compiled[name](n // m, m, d // m, l, s) for l in range(1, m + 1)]
                if any(abs(g - w) > 1e-9 for g, w in zip(got, row)):
                    raise InternalError(f"balance: phase {name}: the derived active ops on PE l in ring step s, "
                                        f"{in_n_m_d(form)}, give {got} at s={s}, n={n}, m={m}, d={d}; "
                                        f"enumeration {row}")


def _enumerated(session, phase, P, size: tuple) -> dict:
    """{value of the phase's outermost loop: [its active ops on PE 1, ..., m]} at one size
    (`trace.active_per_step`), enumerated once per session (`counting.enumerated`): the counts,
    the per-PE forms and the per-step forms are all checked against it."""
    from ringproof.proofs.figures.counting import enumerated
    return enumerated(phase, P, size, session)[1]


def _has_op(t, op: str) -> bool:
    return t.op == op or any(_has_op(a, op) for a in t.args if hasattr(a, "op"))


def _by_terms(schedule, phase, st, P, decider, session):
    """The active ops of `phase` on PE l counted over the terms of its array's equation, each on
    the PE its coverage inverse names: |{terms t : inverse(t).l = l}|, equal to the ops on PE l
    only where the phase's coverage (a bijection onto the terms) is proved. Indices read mod m are
    split in radix m (`nests.split_digits`). A phase with a counting hint is counted through it
    (`_recounted`). Unknown where it does not apply."""
    from ringproof.proofs.figures.nests import K, M, Unknown, count, lifted, split_digits
    problem = schedule.problem
    if st.target is None or phase.inverse is None or st.target.array in problem.symmetric_pairs:
        raise Unknown("no equation whose terms it covers once")
    eqn = problem.equation_for(st.target.array)
    if eqn is None or eqn.op is not st.op:
        raise Unknown("no equation of its op whose terms it covers once")
    dims = list(eqn.target.dims) + ([eqn.reduce] if eqn.reduce else [])
    syms = [sympy.Symbol(f"_{i}", integer=True) for i in range(len(dims))]
    if not all(hasattr(P, x) for x in dims):
        raise Unknown(f"an extent of {eqn.target.array.name} that is not a size here")
    loops = [(L, sympy.Integer(1), M)] + [(s, sympy.Integer(1), sympy.sympify(getattr(P, x))) for s, x in zip(syms, dims)]
    where = sympy.true if eqn.where is None else sympy.sympify(eqn.where(P, *syms))
    T = SimpleNamespace(**{name: var(name) for name in PARAMETERS})
    T = with_derived(schedule.derived, T) if schedule.derived else T
    pe = phase.inverse(T, tuple(var(str(x)) for x in syms)).get("l")
    if pe is None:
        raise Unknown("its inverse names no PE")
    if phase.recount is not None:
        return _recounted(schedule, phase, P, decider, session)
    pe = lift(pe)                                   # read on Terms first: cheap
    by_cases = _has_op(pe, "ite")
    if by_cases and not (decider.holds(K - 1) and decider.holds(1 - K)):
        raise Unknown("the PE of a term is chosen by cases (an ite in its inverse) and k is not shown to be 1: its "
                      "parity cases are not counted (seconds of counting, docs/algo3.md)")
    pe = sympy.sympify(evaluate(pe, {**vars(P), **{str(x): x for x in syms}}))
    cond = sympy.And(where, sympy.Eq(pe, L))
    if by_cases:
        return _by_parity(loops, cond, schedule.shape, session)
    loops, cond = split_digits(loops, cond, keep=1) or (loops, cond)
    return count(loops, lifted(cond, loops, decider), decider, keep=1)


def _recounted(schedule, phase, P, decider, session):
    """The terms on PE l counted as the points of the phase's counting hint (`recount`: used only
    with its two checks proved), indices read mod m split in radix m."""
    from ringproof.proofs.figures import recount
    from ringproof.proofs.figures.nests import Unknown, count, lifted, split_digits
    why = recount.proved(schedule, phase, session)
    if why:
        raise Unknown(why)
    key = ("recounted", id(schedule), id(phase.recount))
    hit = session.balanced.get(key)
    if hit is None or hit[0] is not schedule:     # phase 2b of Algorithm 3 has phase 2a's hint
        loops, cond = recount.nest(schedule, phase, P, L)
        loops, cond = split_digits(loops, cond, keep=1) or (loops, cond)
        got = count(loops, lifted(cond, loops, decider), decider, keep=1)
        hit = session.balanced[key] = (schedule, by_parities(got, schedule.shape, session))
    return hit[1]


def by_parities(form, shape, session):
    """`form` (a count in k, m and l with floors and ceilings of halves: ⌊km/2⌋, ⌊(k − 1)/2⌋)
    read in each parity class of the sizes it halves, k = 2K − p and m = 2M − q (p, q ∈ {0, 1};
    K, M ≥ 1 cover every k, m ≥ 1), where each floor is a polynomial (sympy's algebra), and as
    cells of l there (`cells`, under the side condition with the same substitution); one Piecewise
    on k mod 2 and m mod 2, classes of one value joined. `form` unchanged where a class keeps a
    floor or ceiling, or halves no size."""
    from ringproof.proofs.figures.nests import K, M
    halved = [x for x in (K, M) if any(f.args[0].has(x) for f in form.atoms(sympy.floor, sympy.ceiling))]
    if not halved:
        return form
    pieces: list = []                 # [(value in k, m and l, its class)]
    for bits in itertools.product((0, 1), repeat=len(halved)):
        sub = {x: 2 * x - p for x, p in zip(halved, bits)}
        # each floor once: ⌊(2K − 1)(2M − 1)/2⌋ is 2KM − K − M once its argument is expanded (one
        # xreplace, top down, puts these values in without substituting into them again)
        f = form.xreplace({**sub, **{g: g.func(sympy.expand(g.args[0].xreplace(sub)))
                                     for g in form.atoms(sympy.floor, sympy.ceiling)}})
        if f.has(sympy.floor, sympy.ceiling):
            return form
        decider = _parity_decider(shape, session, sub)
        value = cells(f, [(L, sympy.Integer(1), M.xreplace(sub))], decider)
        value = value.xreplace({x: (x + p) / 2 for x, p in zip(halved, bits)})
        value = sympy.piecewise_fold(value) if value.has(sympy.Piecewise) else sympy.expand(value)
        pieces.append((value, sympy.And(*[sympy.Eq(sympy.Mod(x, 2), p) for x, p in zip(halved, bits)])))
    return _joined(pieces)


def _by_parity(loops, cond, shape, session):
    """The terms on PE l where k = 1 (the side condition shows it) and the PE is chosen by cases
    (2A < n): split once by `nests.lifted` (for every m), then counted in each parity of m,
    m = 2M − p (p = 0, 1; M ≥ 1 covers every m ≥ 1), where ⌊m/2⌋ is the polynomial M − p, and read
    as cells of l (`cells`); the two joined as
    Piecewise((even form, m mod 2 = 0), (odd form, True)). Each case is counted under the side
    condition with the same substitution (`_parity_decider`). Kept in the session: a second phase
    with the same terms and PE (step 2 of Algorithm 3) reuses it."""
    from ringproof.proofs.figures.nests import K, M, count, lifted
    key = ("parity", tuple(loops), cond, shape.requires)
    hit = session.balanced.get(key)
    if hit is not None:
        return hit
    one = {K: sympy.Integer(1)}
    loops = [(v, sympy.sympify(lo).xreplace(one), sympy.sympify(hi).xreplace(one)) for v, lo, hi in loops]
    parts = lifted(cond.xreplace(one), loops, _parity_decider(shape, session, one))   # for every m: each parity
    pieces = []
    for p in (0, 1):
        sub = {M: 2 * M - p}
        decider = _parity_decider(shape, session, {**one, **sub})
        nest = [(v, lo.xreplace(sub), hi.xreplace(sub)) for v, lo, hi in loops]
        form = count(nest, [_scaled(c.xreplace(sub)) for c in parts], decider, keep=1)
        pieces.append(cells(form, nest[:1], decider).xreplace({M: (M + p) / 2}))
    out = pieces[0] if sympy.expand(pieces[0] - pieces[1]) == 0 else \
        sympy.Piecewise((pieces[0], sympy.Eq(sympy.Mod(M, 2), 0)), (pieces[1], True))
    session.balanced[key] = out
    return out


def _parity_decider(shape, session, sub):
    """A Decider whose facts read m as `sub` writes it (2M − p, M ≥ 1): the side condition with the
    same substitution, so that what it shows holds of the substituted forms. Unknown where the
    shape has a derived parameter defined by a condition (its facts speak of m)."""
    from ringproof.proofs.figures.nests import Decider, Unknown
    decider = Decider(shape, session.budget)
    if decider.least:
        raise Unknown("the PE of a term is chosen by cases and a derived parameter is defined by a condition")
    if decider.requires is not None:
        decider.requires = decider.requires.xreplace(sub)
    return decider


def _scaled(cond):
    """cond (no Piecewise: sympy's would write them back) with every comparison scaled to integer
    coefficients by a positive factor (the same comparison). sympy writes 2A < 2M − 1 as
    A < M − 1/2, and its negation as A ≥ M − 1/2, which the counter would take as the lower bound
    M − 1/2 (not an integer)."""
    from ringproof.proofs.figures.nests import denominator
    scale = {}
    for r in cond.atoms(sympy.core.relational.Relational):
        den = denominator(r.lhs - r.rhs)
        if den > 1:
            scale[r] = r.func(sympy.expand(r.lhs * den), sympy.expand(r.rhs * den))
    return cond.xreplace(scale)


def collapse(form, decider, keep=(L,), points=()):
    """`form` without its cases where every case's value equals one of them (the same value
    written per case, e.g. l < m and l = m) at every point of its condition: that value, the
    equalities proved (Z3, over 1 ≤ l ≤ m and every size: all cases in one query, else case by
    case); else `form` unchanged. `points`: sizes ({symbol: value} of k, m, kd and the Least
    parameters) at which a value is first compared with the form at every l, so that a value the
    form does not take there is passed over without a solver call (it could not be proved)."""
    from ringproof.proofs.figures.nests import M
    if not form.has(sympy.Piecewise):
        return form
    folded = sympy.piecewise_fold(form)
    if not isinstance(folded, sympy.Piecewise) or len(folded.args) > 32:
        return form
    ctx = tuple((v, 1, M) for v in keep)
    values = [sympy.expand(e) for e, _ in folded.args]
    cases = None
    try:
        at = _values(folded, keep, points) if points else None
    except (ArithmeticError, TypeError, ValueError):      # not a number at some point: no filter
        at = None
    tried = []
    for value in reversed(values):
        if value.has(sympy.Piecewise) or value in tried:
            continue
        tried.append(value)
        if at is not None and not _same(_values(value, keep, points), at):
            continue                            # not the form's value at some point: it could not be proved
        if decider.never(_differs(folded, values, value), ctx):
            return value
        if cases is None:                       # each case where it applies: its condition, no earlier one's
            cases = [(e, sympy.And(c, *[sympy.Not(b) for _, b in folded.args[:i]]))
                     for i, (e, (_, c)) in enumerate(zip(values, folded.args))]
        others = [(e, c) for e, c in cases if e != value]
        if all(decider.never(sympy.And(c, _nonzero(e - value)), ctx) for e, c in others):
            return value
    return form


def _differs(folded, values: list, value):
    """`folded` ≠ value where it applies, as one condition: the first case whose condition holds has
    another value (a Piecewise of comparisons, which Z3 reads as nested If, so no case's condition
    is repeated under the later ones' negations, which on a form of many cases would make the
    query quadratic in its cases). Where the last case's condition is not True, each case's
    condition with the earlier ones' negations (the form is not defined elsewhere)."""
    if folded.args[-1][1] is not sympy.true:
        return sympy.Or(*[sympy.And(c, *[sympy.Not(b) for _, b in folded.args[:i]], sympy.Ne(e - value, 0, evaluate=False))
                          for i, (e, (_, c)) in enumerate(zip(values, folded.args)) if e != value])
    return sympy.Piecewise(*[(sympy.false if e == value else sympy.Ne(e - value, 0, evaluate=False), c)
                             for e, (_, c) in zip(values, folded.args)], evaluate=False)


def plain(form):
    """`form` without floor and ceiling where it is one polynomial in every residue class of n (and
    m, d) by the divisors under its floors (`counting.per_residue`: n = c·ν + s, where sympy's
    algebra writes each floor as a polynomial): that polynomial, an identity in each class; else
    `form` unchanged. (algo3-fast's phase 1 counts floor(n/2) and ceiling(n/2), which cancel.)"""
    from ringproof.proofs.figures.counting import D, N, in_n_m_d, per_residue
    from ringproof.proofs.figures.nests import KD, K, M
    if form.has(sympy.Piecewise) or not form.has(sympy.floor, sympy.ceiling):
        return form
    classes = per_residue(in_n_m_d(form), tidy=False)
    polys = {e for _, e in classes}
    if len(classes) < 2 or len(polys) != 1:
        return form
    poly = polys.pop()
    if poly.has(sympy.floor, sympy.ceiling, sympy.Mod, sympy.Piecewise):
        return form
    return sympy.expand(poly.xreplace({N: K * M, D: KD * M}))


def _same(a: list, b: list) -> bool:
    return all(abs(x - y) <= 1e-6 for x, y in zip(a, b))


def _values(form, keep, points) -> list:
    """`form`'s values at every point of `points` and every 1 ≤ l ≤ m (the `keep` indices),
    compiled: exactly (`signs.compiled`, faster than lambdify), else by lambdify in floats
    (at these sizes the values are integers or rationals with small denominators, so different
    values differ by far more than 1e-6)."""
    import itertools

    from ringproof.proofs.figures import signs
    from ringproof.proofs.figures.nests import M
    names = tuple(points[0])
    done = form.doit()
    f = signs.compiled(done, (*names, *keep)) or sympy.lambdify((*names, *keep), done, modules=["math"])
    out = []
    for p in points:
        args = tuple(int(p[x]) for x in names)
        out += [f(*args, *at) for at in itertools.product(range(1, int(p[M]) + 1), repeat=len(keep))]
    return out


def _points(schedule) -> list[dict]:
    """{symbol: value} of k, m, kd and the Least parameters at every size of `check_sizes`."""
    from ringproof.proofs.figures.counting import check_sizes, least_at
    from ringproof.proofs.figures.nests import KD, K, M
    return [{K: n // m, M: m, KD: d // m, **least_at(schedule.shape, n, m, d)} for n, m, d in check_sizes(schedule.shape)]


def _nonzero(e):
    """e ≠ 0 as each of its factors ≠ 0 (over the integers: mostly linear atoms for Z3)."""
    coeff, factors = sympy.factor_list(sympy.expand(e))
    if coeff == 0:
        return sympy.false
    return sympy.And(*[sympy.Ne(f, 0) for f, _ in factors])


def _session(session):
    from ringproof.proofs.ring.session import Session
    return session if session is not None else Session()


def compile_form(form, least=()):
    """The form as a Python function of (k, m, kd, l and the `least` symbols: derived parameters
    defined by a condition), compiled once."""
    from ringproof.proofs.figures.nests import KD, K, M
    return sympy.lambdify((K, M, KD, L, *least), form.doit(), modules=["math"])


def on_pes(fn, n: int, m: int, d: int, least=()) -> list:
    """A compiled form's values on PEs 1..m at one size: integers, or the value itself where it is
    not within 1e-9 of one (at these sizes a non-integer value of a rational form is much further
    than that from any integer, so it never passes for one)."""
    out = []
    for l in range(1, m + 1):
        v = fn(n // m, m, d // m, l, *least)
        out.append(int(round(v)) if abs(v - round(v)) < 1e-9 else v)
    return out


def _check(schedule, phases: dict, on_terms=(), session=None) -> str:
    """Each phase's per-PE form against enumeration (its guard and PE at every iteration) at every
    size n, d ≤ 12: InternalError at the first disagreement; for a form counted over the terms
    (`on_terms`), whose coverage may fail, the reason it is not used instead ("" where all agree)."""
    from ringproof.proofs.figures.counting import check_sizes, in_n_m_d, least_at, least_names
    from ringproof.schedules.dsl import params, with_derived
    names = least_names(schedule.shape)   # symbols of a Least, if any
    compiled = {name: compile_form(form, names) for name, (_, form) in phases.items()}
    for n, m, d in check_sizes(schedule.shape):
        P = with_derived(schedule.derived, params(n, m, d=d))
        least = [int(v) for v in least_at(schedule.shape, n, m, d).values()]
        for name, (kind, form) in phases.items():
            phase = schedule.phase(name)
            if phase.loops:       # the ops per PE: the sum over the outermost loop's values
                steps = _enumerated(_session(session), phase, P, (n, m, d))
                want = [sum(col) for col in zip(*steps.values())] or [0] * m
            else:
                want = active_per_pe(phase, P, m)
            got = on_pes(compiled[name], n, m, d, least)
            if got != want and name in on_terms:
                return (f"phase {name}: its terms on PE l ({got}) are not its ops ({want}) at n={n}, m={m}: "
                        "its coverage fails")
            if got != want:
                raise InternalError(f"balance: phase {name}: the derived {kind} on PE l, {in_n_m_d(form)}, gives "
                                    f"{got} at n={n}, m={m}, d={d}; enumeration {want}")
    return ""


def _always(decider, e, low, high) -> bool:
    """Is e ≤ 0 for every l in [low, high] (and every size)? Shown by the counter's decider."""
    num, den = sympy.fraction(sympy.together(sympy.expand(e)))
    if not (den.is_Integer and den > 0):
        return False
    return decider.holds(sympy.expand(num), ((L, low, high),))


def derived(schedule, session=None, found=None):
    """(spread as a sympy expression in n, m, d, "") when proved for every n, else (None, why not).
    `found`: `forms(schedule, session)` if the caller has it (not kept in the session where a form
    is not derived, and slow to find again)."""
    from ringproof.proofs.figures.counting import in_n_m_d, tidy
    from ringproof.proofs.figures.nests import K, M
    session = _session(session)
    per, _, why, _ = found if found is not None else forms(schedule, session)
    if why:
        return None, why
    total = sum(per.values(), sympy.Integer(0))
    halved = [x for x in (K, M) if total.has(sympy.Mod(x, 2))]
    if not halved:
        got = _spread(total, M, session.decider(schedule.shape))
        return (None, _NOT_MONOTONE) if got is None else (tidy(in_n_m_d(got)), "")
    from ringproof.proofs.figures.nests import Unknown
    cases = []
    for bits in itertools.product((0, 1), repeat=len(halved)):  # x = 2x' − p: each parity case of the forms
        sub = {x: 2 * x - p for x, p in zip(halved, bits)}        # (`_by_parity`, `by_parities`)
        try:
            decider = _parity_decider(schedule.shape, session, sub)
        except Unknown as e:
            return None, str(e)
        got = _spread(total.xreplace(sub), M.xreplace(sub), decider)
        if got is None:
            return None, f"{_NOT_MONOTONE}, for " + " and ".join(
                f"{'odd' if p else 'even'} {x}" for x, p in zip(halved, bits))
        cases.append((sympy.expand(got.xreplace({x: (x + p) / 2 for x, p in zip(halved, bits)})),
                      sympy.And(*[sympy.Eq(sympy.Mod(x, 2), p) for x, p in zip(halved, bits)])))
    if halved == [M]:                # as the k = 1 forms have always been written
        got = cases[0][0] if cases[0][0] == cases[1][0] else \
            sympy.Piecewise((cases[0][0], sympy.Eq(sympy.Mod(M, 2), 0)), (cases[1][0], True))
    else:
        got = _joined(cases)
    return tidy(in_n_m_d(got)), ""


def _joined(cases: list):
    """[(value, class condition)] as one Piecewise, classes of one value joined, the value of the
    most classes last (as the rest)."""
    pieces: list = []
    for value, where in cases:
        same = next((pc for pc in pieces if sympy.expand(pc[0] - value) == 0), None)
        if same is None:
            pieces.append((value, [where]))
        else:
            same[1].append(where)
    if len(pieces) == 1:
        return pieces[0][0]
    pieces.sort(key=lambda pc: len(pc[1]))
    return sympy.Piecewise(*[(v, sympy.Or(*w)) for v, w in pieces[:-1]], (pieces[-1][0], True))


def _on_l(st) -> bool:
    """Whether a phase's op runs on PE l (its pe formula is the index l itself)."""
    pe = lift(st.pe)
    return pe.op == "var" and pe.args[0] == "l"


_NOT_MONOTONE = "the active ops on PE l are not shown constant or monotone in l (Z3)"


def _spread(total, m, decider):
    """max − min over 1 ≤ l ≤ m of `total` where shown constant (0) or monotone in l (Z3), else None."""
    first, last = total.subs(L, 1), total.subs(L, m)
    if _always(decider, total - first, 1, m) and _always(decider, first - total, 1, m):
        return sympy.Integer(0)
    step = total.subs(L, L + 1) - total
    if _always(decider, -step, 1, m - 1):
        return last - first
    if _always(decider, step, 1, m - 1):
        return first - last
    return None


def figure_size(schedule):
    """The size of the printed figures: (16, 4) if the schedule allows it, else the largest allowed
    size with n ≤ 16 and m ≤ 4."""
    sizes = [(n, m, d) for n, m, d in schedule.shape.sizes(FIGURE[0], FIGURE[1]) if d == n]
    return (FIGURE[0], FIGURE[1], FIGURE[0]) if (FIGURE[0], FIGURE[1], FIGURE[0]) in sizes else \
        max(sizes, key=lambda s: (s[1], s[0]), default=None)


def summary(schedule, session=None, steps: bool = True) -> dict:
    """{"spread": closed form or None, "reason", "per_pe": {kind: form in n, m, d, l} and
    "per_phase": {phase: form} where derived, "on_coverage" (the phases counted over their terms)
    and "recounted" (those of them counted through their counting hint) where any, "at": {"n",
    "m", "per_pe", "spread"} where the spread is not derived, and `step_summary`'s keys unless
    `steps` is False} (JSON-ready)."""
    from ringproof.proofs.figures.counting import in_n_m_d, tidy
    session = _session(session)
    found = forms(schedule, session)
    spread, why = derived(schedule, session, found)
    out = {"spread": None if spread is None else str(spread), "reason": why}
    per, by_phase, _, on_terms = found
    if per:
        out["per_pe"] = {k: str(tidy(in_n_m_d(v))) for k, v in per.items()}
    if by_phase:
        out["per_phase"] = {k: str(tidy(in_n_m_d(v))) for k, v in by_phase.items()}
    if on_terms:
        out["on_coverage"] = on_terms
        hinted = [name for name in on_terms if schedule.phase(name).recount is not None]
        if hinted:                  # counted through their hints (`recount`), whose checks are proved
            out["recounted"] = hinted
    if steps:
        out.update(step_summary(schedule, session))
    if spread is None:
        size = figure_size(schedule)
        if size is not None:
            table = per_pe(schedule, *size)
            out["at"] = {"n": size[0], "m": size[1], "per_pe": table, "spread": spread_of(table)}
    return out


def step_summary(schedule, session=None) -> dict:
    """{"per_step": {phase: form in n, m, d, l, s}} where derived, {"per_step_reason": why} where
    not, {} where no phase has a ring step (JSON-ready; a task of its own in the prover's pool)."""
    from ringproof.proofs.figures.counting import in_n_m_d, tidy
    steps, why = step_forms(schedule, session)
    out = {"per_step": {k: str(tidy(in_n_m_d(v))) for k, v in steps.items()}} if steps else {}
    return {**out, "per_step_reason": why} if why else out


def check_claim(schedule, claim: str, session=None) -> ClaimVerdict:
    """The verdict (`ClaimVerdict`) on a claimed spread."""
    from ringproof.proofs.figures import counting
    spread, why = derived(schedule, session)
    if spread is not None:
        bad = counting.check_claim(spread, claim, shape=schedule.shape,
                                   derived_params=counting.derived_parameters(schedule))
        if bad is None:
            return ClaimVerdict(Verdict.PROVED, "", None)
        if bad[0] is None:
            return ClaimVerdict(Verdict.UNKNOWN, f"claim balance = {claim} not shown equal to the derived spread {spread}, "
                                f"nor told apart up to n = {counting.claim_bound(schedule.shape)[0]} nor by Z3", None)
        sizes = [bad[:3]]
    else:
        want = counting.parse_claim(claim, schedule.shape, counting.derived_parameters(schedule))
        sizes = [(n, m, d) for n, m, d in sorted(schedule.shape.sizes(CLAIM_N), key=lambda s: (s[0], s[1]))
                 if spread_of(per_pe(schedule, n, m, d)) != want.subs({counting.N: n, counting.M: m, counting.D: d,
                                                                       **counting.least_at(schedule.shape, n, m, d)})]
    if not sizes:
        return ClaimVerdict(Verdict.UNKNOWN, f"claim balance = {claim} agrees with enumeration for every n ≤ {CLAIM_N} only "
                            f"(spread not derived: {why})", None)
    n, m, d = sizes[0]
    want = counting.parse_claim(claim, schedule.shape, counting.derived_parameters(schedule))
    claimed = want.subs({counting.N: n, counting.M: m, counting.D: d, **counting.least_at(schedule.shape, n, m, d)})
    table = per_pe(schedule, n, m, d)
    got = spread_of(table)
    if got == claimed:          # the derived spread disagrees with the trace: never report it
        raise InternalError(f"balance: the derived spread {spread} differs from the claim at n={n}, m={m}, "
                            f"but the enumerated spread {got} agrees")
    replay = {"confirmed": True, "count": "balance", "measured": got, "per_pe": table}
    return ClaimVerdict(Verdict.REFUTED, f"claim balance = {claim}: the enumerated spread is {got} at n={n}, m={m}",
                        Counterexample(n, m, "claim balance", f"enumerated spread {got}, claimed {claimed}", (),
                                       replay, d=schedule.shape.own("d", d)))


def readable(details: dict) -> str:
    """One line for the table's foot."""
    per = "; ".join(f"{k} {_brief(_cases(v))}" for k, v in details.get("per_pe", {}).items() if v != "0")
    on_l = f"active ops on PE l: {per}; " if per else ""
    if not per and details.get("per_phase"):
        on_l = "active ops on PE l: " + "; ".join(f"{k} {_brief(_cases(v))}"
                                                  for k, v in details["per_phase"].items()) + "; "
    if details.get("on_coverage"):
        hinted = details.get("recounted")
        hinted = f"; {', '.join(hinted)} through a counting hint, proved" if hinted else ""
        on_l += f"({', '.join(details['on_coverage'])} counted over their terms: rests on their coverage{hinted}); "
    steps = _steps_line(details)
    if details.get("spread") is not None:
        return f"balance: {on_l}spread (max − min active ops over PEs) = {_cases(details['spread'])} for every n{steps}"
    if details.get("derived") is not None:
        return (f"balance: {on_l}spread (max − min active ops over PEs) = {_cases(details['derived'])} derived for "
                f"every n, not proved: {details['reason']}{steps}")
    at = details.get("at")
    if at is None:
        return f"balance: {on_l}spread not derived ({details['reason']}){steps}"
    fig = "; ".join(f"{k} per PE {'/'.join(map(str, v))}" for k, v in at["per_pe"].items() if any(v))
    return (f"balance: {on_l}spread not derived for every n ({details['reason']}); at n={at['n']}, m={at['m']}: "
            f"{fig} (spread {at['spread']}){steps}")


def _steps_line(details: dict) -> str:
    """The per-ring-step forms, one clause per phase ("" where no phase has a ring step), and the
    cycles with idle PEs not waiting where asked."""
    idle = details.get("idle_pes")
    idle = "" if idle is None else "\n  cycles with idle PEs not waiting (a ring step lasts as its busiest PE's " \
        "active ops): " + (f"{idle['cycles']} for every n" if idle["cycles"] else f"not derived ({idle['reason']})")
    if details.get("per_step_reason"):
        return f"\n  per ring step: not derived ({details['per_step_reason']}){idle}"
    if not details.get("per_step"):
        return idle
    return "\n  active ops on PE l in ring step s: " + "; ".join(
        f"{k} {_brief(_cases(v))}" for k, v in details["per_step"].items()) + idle


def _brief(form: str) -> str:
    """`form`, or where it is longer than a printed count may be (`readable.LIMIT`) its length:
    a case analysis of thousands of characters (a derivation over a refuted coverage, say) does
    not bury the table; --json has it whole, and the line's sample size gives its values."""
    from ringproof.proofs.figures.readable import LIMIT
    return form if len(form) <= LIMIT else f"a closed form of {len(form)} characters (full form with --json)"


def _cases(form: str) -> str:
    """A form for people: a case analysis as `{v1 if c1, v2 if c2, else v3}` (cases within a case
    flattened, in order), a parity as "m even", a comparison solved for the ring step s or the PE l
    where it is linear in it, a value factored where that is shorter; any other form as it is."""
    e = sympy.sympify(form)
    if not e.has(sympy.Piecewise):
        return str(e)
    cases = list(_flat(e, []))
    if len(cases) == 1:
        return _value(cases[0][0])
    parts = [f"{_value(v)} if {' and '.join(_condition(c) for c in cs)}" for v, cs in cases[:-1]]
    last, cs = cases[-1]
    tail = f"else {_value(last)}" if not cs else f"{_value(last)} if {' and '.join(_condition(c) for c in cs)}"
    return "{" + ", ".join(parts + [tail]) + "}"


def _flat(e, under: list):
    """(value, [conditions]) of each case of `e` in order, the conditions of the case it sits in first."""
    if not isinstance(e, sympy.Piecewise):
        yield e, under
        return
    for v, c in e.args:
        here = under if c == sympy.true else under + (list(c.args) if isinstance(c, sympy.And) else [c])
        yield from _flat(v, here)


def _value(v) -> str:
    """The shortest of `v` as it is, factored and over one denominator, a form with a leading minus
    before brackets last."""
    forms = [str(v), str(sympy.factor(v)), str(sympy.together(v))]
    return min(forms, key=lambda f: (f.startswith("-("), len(f)))


def _condition(c) -> str:
    if isinstance(c, sympy.Eq) and isinstance(c.lhs, sympy.Mod) and c.lhs.args[1] == 2 and c.rhs in (0, 1):
        x = c.lhs.args[0]
        return f"{_value(x)} {'even' if c.rhs == 0 else 'odd'}"
    if isinstance(c, (sympy.Ge, sympy.Gt, sympy.Le, sympy.Lt)):
        d = c.lhs - c.rhs
        named = {str(x): x for x in d.free_symbols}
        for x in (named[v] for v in ("s", "l") if v in named):
            a = d.coeff(x) if d.is_polynomial(x) and sympy.degree(d, x) == 1 else sympy.S.Zero
            if a.is_number and a != 0:
                rel = type(c) if a > 0 else c.reversed.func
                return str(rel(x, sympy.expand(-(d - a * x) / a)))
    return str(c)


# ----------------------------------------------------------------------------- idle PEs not waiting


def idle_cycles(schedule, session=None, counted=None) -> IdleCycles:
    """The cycles of the machine in which a PE with nothing to do in a ring step does not hold the
    others back (`IdleCycles`: a closed form in k, m, kd, else None and why not). A lock-step group whose
    phases have a ring step takes, per step s, the active ops of its busiest PE, Σ_s max_l g(l, s)
    with g the sum of its per-step forms: the busiest PE is a candidate c(s) among 1, m, s, s − 1
    shown by Z3 to have g(l, s) ≤ g(c(s), s) for every l, and the sum over s is counted case by
    case (`nests.count`); any other phase takes its lock-step cycles (`counted`: the schedule's
    Counts). Checked against `model.ring.trace.idle_cycles` at every size n, d ≤ 12 by the caller."""
    from ringproof.proofs.figures.counting import D, N, counts
    from ringproof.proofs.figures.nests import KD, K, M, Decider, Unknown, count
    session = _session(session)
    counted = counted or counts(schedule, session)
    steps, why = step_forms(schedule, session)
    if why:
        return IdleCycles(None, why)
    decider = Decider(schedule.shape, session.budget)
    total = sympy.Integer(0)
    for phases in slot_members(schedule).values():
        name = phases[0].group or phases[0].name
        if not all(p.loops and p.loops[0].ring_step for p in phases):
            forms = [counted.phase_cycles.get(p.name) for p in phases]   # lock step: its longest phase
            if any(f is None for f in forms):
                return IdleCycles(None, f"{name}: cycles not derived")
            forms = [sympy.expand(f.xreplace({N: K * M, D: KD * M})) for f in forms]       # in k, m, kd
            total += forms[0] if len(set(forms)) == 1 else sympy.Max(*forms)
            continue
        if not all(p.name in steps for p in phases):
            return IdleCycles(None, f"group {name}: a phase's op does not run on PE l")
        g = sympy.expand(sum((steps[p.name] for p in phases), sympy.Integer(0)))
        lo, hi = _step_range(phases[0], schedule)
        ctx = ((L, sympy.Integer(1), M), (S, lo, hi))
        best = next((c for c in (M, sympy.Integer(1), S, S - 1)
                     if decider.never(sympy.Or(c < 1, c > M), ctx[1:]) and _dominates(g, c, ctx, decider)), None)
        if best is None:
            return IdleCycles(None, f"group {name}: no busiest PE shown among 1, m, s, s − 1 in every ring step (Z3)")
        top = sympy.piecewise_fold(g.xreplace({L: best}))
        pieces = top.args if isinstance(top, sympy.Piecewise) else ((top, sympy.true),)
        before = []
        try:
            for v, c in pieces:
                if v.has(S):
                    return IdleCycles(None, f"group {name}: its busiest PE's ops depend on the ring step inside a case")
                total += v * count([(S, lo, hi)], sympy.And(c, *[sympy.Not(b) for b in before]), decider)
                before.append(c)
        except Unknown as e:
            return IdleCycles(None, f"group {name}: {e}")
    total = sympy.expand(total)
    bad = _check_idle(schedule, total)
    return IdleCycles(None, bad) if bad else IdleCycles(total, "")


def _check_idle(schedule, form) -> None:
    """The idle-PE cycles against the ring model's enumeration (`trace.idle_cycles`) at every size
    n, d ≤ 12: an InternalError at the first disagreement. Returns why the mode does not run the
    schedule as written where the ring model finds a datum read in the ring step it arrives in (at
    the smallest size with two PEs), else ""."""
    from ringproof.model.ring.trace import idle_cycles as enumerated, idle_violations
    from ringproof.proofs.figures.counting import check_sizes, in_n_m_d, value_of
    sizes = check_sizes(schedule.shape)
    if not sizes:
        return ""
    n, m, d = min((x for x in sizes if x[1] >= 2), key=lambda x: (x[0], x[2]), default=sizes[0])
    bad = idle_violations(schedule, n, m, d if schedule.shape.is_free("d") else None)
    if bad:
        return f"with idle PEs not waiting at n={n}, m={m}: {bad[0]}"
    for n, m, d in sizes:
        got, want = value_of(form, n, m, d, schedule.shape), enumerated(schedule, n, m, d if schedule.shape.is_free("d") else None)
        if got != want:
            raise InternalError(f"balance: the derived cycles with idle PEs not waiting, {in_n_m_d(form)}, give {got} "
                                f"at n={n}, m={m}, d={d}; the ring model {want}")
    return ""


def _dominates(g, c, ctx, decider) -> bool:
    """g(l, s) ≤ g(c, s) for every l, s of `ctx`, shown case against case: where a case of g(l, s)
    and one of g(c, s) can hold together, their values compare (a polynomial of the sizes by its
    coefficients, else Z3 under both cases)."""
    mine, theirs = _disjoint(g), _disjoint(g.xreplace({L: c}))
    for v, a in mine:
        for w, b in theirs:
            if decider.holds(sympy.expand(v - w), ()) and not (v - w).free_symbols - set(_SIZES):
                continue
            if not decider.never(sympy.And(a, b, v > w), ctx):
                return False
    return True


def _disjoint(form) -> list:
    """[(value, condition)] of a form's cases, each condition without the earlier ones."""
    folded = sympy.piecewise_fold(form)
    if not isinstance(folded, sympy.Piecewise):
        return [(form, sympy.true)]
    out, before = [], []
    for v, c in folded.args:
        out.append((v, sympy.And(c, *[sympy.Not(b) for b in before])))
        before.append(c)
    return out


def _step_range(phase, schedule):
    """The ring-step loop's bounds in k, m, kd."""
    from types import SimpleNamespace
    from ringproof.proofs.figures.counting import parameters, with_parameters
    P = with_parameters(schedule, parameters(schedule.shape))
    lo, hi = phase.loops[0].bounds(P, SimpleNamespace())
    return sympy.sympify(lo), sympy.sympify(hi)
