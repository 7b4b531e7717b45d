"""Normalization: index formulas with mod/div by symbolic m and n = k·m, rewritten to linear arithmetic.

Every integer value is kept as a digit pair (q, r) meaning q·m + r, where q and r are linear Z3 terms
over the digits of the loop indices (an index ranging over n values is split into j = lo + jq·m + jr,
0 ≤ jq < k, 0 ≤ jr < m). The pair is *canonical* when 0 ≤ r < m. Then:

    (q, r) mod m        = r − c·m                 c = ⌊r/m⌋ as an If-chain over r's proven window
    (q, r) div m        = q + c
    (q, r) mod (k·m)    = (q' − c'·k)·m + r'      (q', r') canonical, c' = ⌊q'/k⌋ likewise
    x = y, x < y        compare the canonical digits of x − y

Each rewrite is an instance of a lemma of `ringproof.proofs.ring.lemmas`; the side condition (the window, e.g.
−m ≤ r < m) is proven by Z3 under the query's assumptions before the rewrite is used. What cannot be
normalized raises `NormalizationError`, which the prover reports as `unknown`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import z3

from ringproof.errors import OutsideFragment
from ringproof.proofs.interrupts import stop_if_requested
from ringproof.proofs.ring.lemmas import (BLOCK_DIVISORS, BLOCK_WINDOWS, CONST_DIVISORS, MOD_WINDOWS, carry,
                                          div_const_cases)
from ringproof.proofs.ring.budgets import Budget
from ringproof.proofs.ring.session import Session
from ringproof.schedules.expr import Term, lift, var
from ringproof.schedules.operators import require_complete
from ringproof.schedules.shape import ANY_D, PARAMETERS, RING, D_IS_N, Least, Shape


MAX_MODELS = 8       # points kept per set of assumptions


def _vars(e, memo: dict) -> frozenset:
    """Names of the uninterpreted constants in e (memoized in `memo`, a session's, on every
    sub-term: AST id -> (e, names), e keeping the sub-term alive). Walked through Z3's C API on
    raw ASTs: a Python wrapper per child (`children()`) made this walk a seventh of the Z3 API
    calls of algo2's checks."""
    c = e.ctx_ref()
    root = e.as_ast()
    top = z3.Z3_get_ast_id(c, root)
    todo = [(root, top)]
    while todo:
        a, i = todo[-1]
        if i in memo:
            todo.pop()
            continue
        kind = z3.Z3_get_ast_kind(c, a)
        kids = ([z3.Z3_get_app_arg(c, a, j) for j in range(z3.Z3_get_app_num_args(c, a))]
                if kind in (z3.Z3_APP_AST, z3.Z3_NUMERAL_AST) else
                [z3.Z3_get_quantifier_body(c, a)] if kind == z3.Z3_QUANTIFIER_AST else [])   # else a bound variable
        ids = [z3.Z3_get_ast_id(c, k) for k in kids]
        missing = [(k, j) for k, j in zip(kids, ids) if j not in memo]
        if missing:
            todo.extend(missing)
            continue
        todo.pop()
        if kids or kind not in (z3.Z3_APP_AST, z3.Z3_NUMERAL_AST):
            names = frozenset().union(*[memo[j][1] for j in ids])
        else:
            decl = z3.Z3_get_app_decl(c, a)
            names = (frozenset((z3.z3._symbol2py(e.ctx, z3.Z3_get_decl_name(c, decl)),))
                     if z3.Z3_get_decl_kind(c, decl) == z3.Z3_OP_UNINTERPRETED else frozenset())
        memo[i] = (e, names)
    return memo[top][1]


def new_solver(budget: Budget) -> z3.Solver:
    """A fresh solver for one linear integer query: Z3's simplify / propagate-values / solve-eqs
    preprocessing before its SMT core (several times faster here than the default strategy).
    The budget's query rlimit decides when it gives up; its timeout is only a backstop."""
    s = z3.Then("simplify", "propagate-values", "solve-eqs", "smt").solver()
    s.set("rlimit", budget.query_rlimit)
    s.set("timeout", budget.timeout_ms)
    s.set("random_seed", budget.seed)
    return s


class NormalizationError(OutsideFragment):
    """A formula is outside what the normalization handles; the verdict becomes `unknown`."""


MAX_LITERAL = 10_000   # a literal up to this size in a comparison is decided by a split on m


class LiteralBound(NormalizationError):
    """A window failed only because of an integer literal c: it holds once m > |c|. The caller
    decides the query for m ≥ `limit` and for each m < `limit` with m fixed (smt.discharge)."""

    def __init__(self, message: str, limit: int):
        super().__init__(message)
        self.limit = limit


def _literal(x) -> int:
    """The constant summand of the linear term x (0 if none)."""
    x = z3.simplify(x)
    if z3.is_int_value(x):
        return x.as_long()
    if z3.is_add(x):
        return sum(c.as_long() for c in x.children() if z3.is_int_value(c))
    return 0


_ZERO = z3.IntVal(0)


@dataclass(frozen=True)
class DVal:
    """The integer q·m + p·U + r, U the block unit of the query (k, or a declared chunk size);
    `canon` records a proof that 0 ≤ r < m and p = 0. A value with p ≠ 0 is in block radix: it is
    compared and divided by U after its carry into p (`Ctx.in_blocks`)."""

    q: z3.ArithRef
    r: z3.ArithRef
    canon: bool = False
    p: z3.ArithRef = _ZERO

    @property
    def blocks(self) -> bool:
        p = self.p        # built simplified: a zero is a numeral (no simplify call here: this is hot)
        return p is not _ZERO and not (_numeral(p) and p.as_long() == 0)


def _times(c, unit):
    """c·unit with the product pushed into c's If-branches, so the result stays linear."""
    if z3.is_app_of(c, z3.Z3_OP_ITE):
        return z3.If(c.arg(0), _times(c.arg(1), unit), _times(c.arg(2), unit))
    return z3.simplify(c) * unit


# The digit arithmetic `Ctx.built` keeps: each an operation on Z3 terms (and ints in fixed places).
_BUILDS = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "neg": lambda x: -x, "ite": z3.If,
    "mul": lambda x, y: x * y, "scale": lambda c, x: c * x, "same": lambda x: x,
    "uncarry": lambda x, c, unit: x - _times(c, unit),        # x − c·unit, c an If-chain
    "length": lambda hi, lo: hi - lo + 1,                      # the count of [lo, hi]
}


def _scaled(e, unit):
    """e·unit as a linear term when e is built of integers, +, integer multiples and If (so the
    product distributes into the branches), else None."""
    if z3.is_int_value(e):
        return e.as_long() * unit
    if z3.is_app_of(e, z3.Z3_OP_ITE):
        x, y = _scaled(e.arg(1), unit), _scaled(e.arg(2), unit)
        return None if x is None or y is None else z3.If(e.arg(0), x, y)
    if z3.is_add(e):
        parts = [_scaled(c, unit) for c in e.children()]
        return None if any(x is None for x in parts) else z3.Sum(parts)
    if z3.is_mul(e) and len(e.children()) == 2:
        a, b = e.children()
        a, b = (a, b) if z3.is_int_value(a) else (b, a)
        inner = _scaled(b, unit) if z3.is_int_value(a) else None
        return None if inner is None else a.as_long() * inner
    return None


def _short(e, limit: int = 200) -> str:
    """A term in one line of at most `limit` characters, printed to a few levels only (Z3's
    printer takes seconds on the whole of the large terms a failed normalization meets)."""
    from z3 import z3printer

    fmt = z3printer._Formatter
    saved = fmt.max_depth, fmt.max_args
    fmt.max_depth, fmt.max_args = 6, 8
    try:
        text = " ".join(str(z3.simplify(e)).split())
    finally:
        fmt.max_depth, fmt.max_args = saved
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _coefficient(e, v):
    """(c, rest) with e = c·v + rest, c an integer and rest free of v; None if e is not so."""
    rest = z3.simplify(z3.substitute(e, (v, z3.IntVal(0))))
    c = z3.simplify(z3.substitute(e, (v, z3.IntVal(1))) - rest)
    return (c.as_long(), rest) if z3.is_int_value(c) else None


def _only_in_conditions(e, v) -> bool:
    """Does v occur in e only inside If conditions (so e·v stays linear in the branches)?"""
    todo, seen = [e], set()
    while todo:
        x = todo.pop()
        if x.get_id() in seen:
            continue
        seen.add(x.get_id())
        if z3.eq(x, v):
            return False
        todo.extend(x.children()[1:] if z3.is_app_of(x, z3.Z3_OP_ITE) else x.children())
    return True


def multiple(e, v):
    """c if e is the multiple c·v of v (c an integer, possibly 0), else None."""
    split = _coefficient(e, v)
    return split[0] if split is not None and _is_const(split[1], 0) else None


def same_term(a, b) -> bool:
    """Are the Z3 terms a (possibly None) and b the same term?"""
    return a is not None and z3.eq(z3.simplify(a), z3.simplify(b))


def _is_const(e, value=None) -> bool:
    if not _numeral(e):          # most values are built simplified: a numeral needs no simplify call
        e = z3.simplify(e)
        if not _numeral(e):
            return False
    return value is None or e.as_long() == value


def _numeral(e) -> bool:
    """Is the integer term e a numeral? (z3.is_int_value in one call: this is hot.)"""
    return z3.Z3_is_numeral_ast(e.ctx_ref(), e.as_ast())


PARAMS = SimpleNamespace(**{name: var(name) for name in PARAMETERS})   # the symbolic parameter record
_PARAM_NAMES = frozenset({RING} | {e.blocks for e in ANY_D.extents})   # Z3 constants that are parameters


def _keep_point(models: dict, model, group: tuple, relevant: list) -> None:
    """Keep a model of `relevant` (completed: every variable gets a value) as a known point of the
    group in `models` (a session's), once checked to satisfy every assumption of the group."""
    kept = models.setdefault(group, (relevant, []))[1]
    if len(kept) < MAX_MODELS and _satisfies(model, relevant):
        kept.append(model)


def _truth(model, e) -> int:
    """Z3's truth value of the condition e at `model` completed (Z3_L_TRUE, Z3_L_FALSE, or
    Z3_L_UNDEF where it is neither): `model.eval` read through Z3's C API, without the wrapper
    and the kind tests around its answer (a tenth of the Z3 API calls of algo2's checks)."""
    c, out = model.ctx.ref(), (z3.Ast * 1)()
    if not z3.Z3_model_eval(c, model.model, e.as_ast(), True, out):
        return z3.Z3_L_UNDEF
    return z3.Z3_get_bool_value(c, out[0])


def _satisfies(model, assumptions: list) -> bool:
    return all(_truth(model, a) == z3.Z3_L_TRUE for a in assumptions)


def _refuted_at(model, fact, relevant: list) -> bool:
    """Is `fact` false at `model`, a point checked to satisfy `relevant`? (Kept or not: a group
    keeps MAX_MODELS points.)"""
    return _truth(model, fact) == z3.Z3_L_FALSE and _satisfies(model, relevant)


def _refuted_at_known_point(models: dict, fact, group: tuple) -> bool:
    """Is `fact` false at a known point of the group's assumptions? Then it does not follow."""
    return any(_truth(p, fact) == z3.Z3_L_FALSE for p in models.get(group, ((), ()))[1])


class Ctx:
    """One query's world: the symbolic parameters, the assumptions so far, the variable map."""

    def __init__(self, m_value: int | None = None, session: Session | None = None,
                 nonlinear: bool = False, shape: Shape = D_IS_N, min_m: int = 1, block_split: bool = False,
                 chunk: int = 1):
        """`session`: the budget and caches (None: a fresh session under the default budget).
        `shape`: the schedule's free sizes (each extent = its block count · m, the block count
        ≥ 1 a parameter; an alias is the parameter it names). `min_m`: the least m of this query
        (a literal split decides smaller m apart). `block_split`: an index over n values is split
        in block radix, j = lo + jq·U + jr (0 ≤ jq < n/U, 0 ≤ jr < U), for formulas of contiguous
        layouts; else in radix m, j = lo + jq·m + jr. `chunk` c > 1: the schedule's side condition
        makes c divide k, and U is the chunk size h = k/c (k = c·h)."""
        self.session = session if session is not None else Session()
        self.nonlinear = nonlinear     # allow products of values (counting identities, not indices)
        self.block_split = block_split
        self.shape = shape
        self.m, self.k = z3.Int(RING), z3.Int("k")
        self.m_value, self.min_m = m_value, min_m
        self.U = self.k if chunk == 1 else z3.Int("h")      # the block unit: p·U in a DVal
        zero = z3.IntVal(0)
        self.units = tuple(z3.Int(e.blocks) if e.blocks != "k" or chunk == 1 else z3.simplify(chunk * self.U)
                           for e in shape.extents)        # block counts: n = k·m (k = c·h), d = kd·m
        self.env = {RING: DVal(z3.IntVal(1), zero)}
        for e, u in zip(shape.extents, self.units):
            self.env[e.blocks], self.env[e.name] = DVal(zero, u), DVal(u, zero)
        for alias, name in shape.same:
            self.env[alias] = self.env[name]
        self.kd = self.env["kd"].r
        self.assumptions: list = [self.m >= min_m] + [u >= 1 for u in self.units]
        if chunk != 1:
            self.assumptions += [self.U >= 1, self.k == self.env["k"].r]
        if m_value is not None:
            self.assumptions.append(self.m == m_value)
        self._least = {name: fn for name, fn in shape.derived if isinstance(fn, Least)}
        self._formulas = {name for name, fn in shape.derived if not isinstance(fn, Least)}
        self._nonlinear: set = set()   # ids of assumptions that multiply variables (a Least's conditions)
        self.lemmas_used: set[str] = set()
        self._instances: list = []     # (lemma name, a function building its instance here)
        self._asked: set = set()       # keys of the side conditions this context's proof rested on
        self._windows: dict = {}
        self._divs: dict = {}
        self._solvers: dict = {}     # ids of a subset of the assumptions -> [its incremental solver, facts asked]
        self._memo: dict = {}    # ("v"|"c", id(Term)) -> (Term, result); the Term is kept alive
        self._own: list = []         # variables of each assumption (parameters left out)
        self._relevance: dict = {}   # (variables of a fact, number of assumptions) -> (assumptions, ids)

    # ------------------------------------------------------------------ side conditions
    @property
    def side_conditions(self) -> int:
        """How many distinct side conditions this context asked (answers the session had cached
        included): what its proof rested on, whichever earlier call first proved them."""
        return len(self._asked)

    def prove(self, fact) -> bool:
        """Does `fact` follow from the assumptions? (A side condition, not a verdict.)

        Proven from the assumptions that share variables with `fact` (transitively): a fact that
        follows from a subset follows from all, and the answer is cached by that subset. Interval
        reasoning (`Intervals.decide`) settles what it can; a fact false at a point already known
        to satisfy the subset (a counter-model of an earlier side condition) does not follow; the
        rest goes to one incremental Z3 solver per subset, the fact's negation assumed for one check.
        """
        stop_if_requested()
        return self._proves(fact, *self._relevant(fact))

    def _proves(self, fact, relevant: list, group: tuple, partner=None) -> bool:
        """`prove` for `fact` whose relevant assumptions and their ids (`_relevant`) are `relevant`, `group`.
        `partner`: a fact of the same assumptions that the caller asks next if this one holds; where
        both need Z3, one query asks for both (their conjunction proved proves each; else `fact` is
        refuted where the counter-model falsifies it, and asked alone where not)."""
        self._asked.add((fact.get_id(), group))
        verdict = self._settled(fact, group, relevant)
        if verdict is not None:
            return verdict
        if partner is not None and self._settled(partner, group, relevant) is None:
            both, model = self._z3_check(z3.And(fact, partner), group, relevant)
            if both:
                self.session.proven[(partner.get_id(), group)] = (True, partner, relevant)
                verdict = True
            elif model is not None and _refuted_at(model, fact, relevant):
                verdict = False
        if verdict is None:
            verdict = self._z3_proves(fact, group, relevant)
        if verdict is None:
            return False        # not shown under this budget; a larger one may: never cached
        self.session.proven[(fact.get_id(), group)] = (verdict, fact, relevant)
        return verdict

    def _settled(self, fact, group: tuple, relevant: list) -> bool | None:
        """The answer for `fact` without Z3 (cached, by intervals, or false at a known point), kept
        in the session; None if Z3 must decide. Only definite answers are kept (proved, or false
        at a point satisfying the assumptions): no budget changes them, and the session's caches
        are its budget's anyway."""
        key = (fact.get_id(), group)
        hit = self.session.proven.get(key)
        if hit is not None:
            return hit[0]
        verdict = self.session.intervals.decide(fact, relevant, group)
        if verdict is None and _refuted_at_known_point(self.session.models, fact, group):
            verdict = False
        if verdict is not None:
            self.session.proven[key] = (verdict, fact, relevant)
        return verdict

    def _z3_proves(self, fact, group: tuple, relevant: list) -> bool | None:
        """True (unsat), False (a counter-model), None (Z3 gave no answer within the budget)."""
        return self._z3_check(fact, group, relevant)[0]

    def _z3_check(self, fact, group: tuple, relevant: list) -> tuple:
        """(`_z3_proves`'s answer, the counter-model where it is False)."""
        # A Least's conditions (and the facts about them) multiply variables: only they leave QF_LIA,
        # whose digit products q·m it decides fast (the general solver is far slower on them).
        nonlinear = self.nonlinear or bool(self._nonlinear & set(group)) or (bool(self._least) and not _linear(fact))
        hit = self._solvers.get((group, nonlinear))
        if hit is None:
            s = z3.Solver() if nonlinear else z3.SolverFor("QF_LIA")
            budget = self.session.budget
            s.set("rlimit", budget.side_condition_rlimit)   # per check; the wall clock only a backstop
            s.set("timeout", budget.timeout_ms)
            s.set("random_seed", budget.seed)
            s.add(*relevant)
            hit = self._solvers[(group, nonlinear)] = [s, 0]
        s, asked = hit
        # ¬fact under a fresh literal of its own, assumed for this check only (push and pop would
        # drop what follows): the solver keeps the terms it took in and what it learned about the
        # assumptions, which the next facts share (a window's bounds, their carries)
        chosen = z3.Bool(f"ringproof.fact.{asked}")
        hit[1] += 1
        s.add(z3.Implies(chosen, z3.Not(fact)))
        answer = s.check(chosen)
        model = s.model() if answer == z3.sat else None
        if model is not None:
            _keep_point(self.session.models, model, group, relevant)
        return True if answer == z3.unsat else (False if answer == z3.sat else None), model

    def _relevant(self, *terms) -> tuple:
        """(the assumptions that share variables with `terms` (a fact, or the terms a fact is made
        of), transitively; their AST ids, which key the session's answers), memoized per variable
        set and number of assumptions (assumptions are only ever appended): the ids read once per
        set, not per fact."""
        own = self._own
        for a in self.assumptions[len(own):]:
            own.append(_vars(a, self.session.variables) - _PARAM_NAMES)
        need = frozenset().union(*[_vars(t, self.session.variables) for t in terms]) - _PARAM_NAMES
        key = (need, len(own))
        hit = self._relevance.get(key)
        if hit is None:
            chosen = [not v for v in own]
            need = set(need)
            grew = True
            while grew:
                grew = False
                for i, v in enumerate(own):
                    if not chosen[i] and v & need:
                        chosen[i] = True
                        need |= v
                        grew = True
            relevant = [a for a, c in zip(self.assumptions, chosen) if c]
            hit = self._relevance[key] = (relevant, tuple(a.get_id() for a in relevant))
        return hit

    def use_lemma(self, lemma: str, instance=None):
        """Record a use of `lemma`; `instance` builds its instance here (a valid formula), which
        only an exported query needs, so it is built only then (`instances`)."""
        if not self.session.lemma_status().get(lemma, False):
            raise NormalizationError(f"lemma {lemma} is not proven")
        self.lemmas_used.add(lemma)
        if instance is not None:
            self._instances.append((lemma, instance))

    @property
    def instances(self) -> list:
        """(lemma name, its instance here) for every lemma use that has one."""
        return [(lemma, build()) for lemma, build in self._instances]

    @staticmethod
    def _window_instance(x, unit, a: int, b: int, c):
        """The mod-window lemma at x: x ∈ [a·unit, b·unit) ⇒ x mod unit = x − c·unit ∧ x div unit = c."""
        return lambda: z3.Implies(z3.And(unit > 0, a * unit <= x, x < b * unit),
                                  z3.And(x % unit == x - c * unit, x / unit == c))

    def _window(self, x, unit, windows, what):
        key = (x.get_id(), unit.get_id(), len(self.assumptions))
        if key not in self._windows:
            self._windows[key] = (*self._tightest(x, unit, windows), x)
        a, b, _ = self._windows[key]
        if a is None or b is None:
            why = f"cannot bound {_short(x)} within a few multiples of {unit} ({what})"
            c = _literal(x)
            if unit is self.m and self.m_value is None and self.min_m == 1 and 0 < abs(c) <= MAX_LITERAL:
                raise LiteralBound(why, abs(c) + 1)
            raise NormalizationError(why)
        return a, b

    def _tightest(self, x, unit, windows) -> tuple:
        """(a, b): the largest low a and the least high b of `windows` with a·unit ≤ x < b·unit
        proven (None where none is). Every bound is a fact about x and unit alone, so all share
        their relevant assumptions, by which the session keeps the answer, with the side
        conditions it rested on (asked again on a hit); only an answer whose every side condition
        had a definite answer is kept."""
        lows = sorted({a for a, _ in windows}, reverse=True)
        highs = sorted({b for _, b in windows})
        relevant, group = self._relevant(x, unit)
        key = (x.get_id(), unit.get_id(), tuple(lows), tuple(highs), group)
        hit = self.session.windows.get(key)
        if hit is not None:
            self._asked.update(hit[1])
            return hit[0]
        asked = []

        def holds(fact, partner=None) -> bool:
            asked.append((fact.get_id(), group))
            return self._proves(fact, relevant, group, partner)

        top = x < highs[0] * unit
        a = next((a for a in lows if holds(a * unit <= x, top)), None)
        b = next((b for b in highs if a is not None and holds(x < b * unit)), None)
        if all(k in self.session.proven for k in asked):
            self.session.windows[key] = ((a, b), asked, x, unit, relevant)
        return a, b

    # ------------------------------------------------------------------ digit arithmetic
    def to_radix_m(self, x: DVal) -> DVal:
        """x with its blocks p·U folded into q: possible when p = a·m (then p·U = (a·U)·m)."""
        if not x.blocks:
            return x
        a = multiple(x.p, self.m)
        if a is None:
            raise NormalizationError(f"value mixes blocks of {self.U} ({_short(x.p)}) with digits of m")
        self.use_lemma("radix-swap")
        return DVal(z3.simplify(x.q + a * self.U), x.r)

    def to_blocks(self, x: DVal) -> DVal:
        """x with its multiples of m folded into p: possible when q = a·U (then q·m = (a·m)·U)."""
        if _is_const(x.q, 0):
            return x
        a = multiple(x.q, self.U)
        if a is None:
            raise NormalizationError(f"value mixes digits of m ({_short(x.q)}) with blocks of {self.U}")
        self.use_lemma("radix-swap")
        return DVal(_ZERO, x.r, p=z3.simplify(x.p + a * self.m))

    def in_blocks(self, x: DVal) -> DVal:
        """x = p·U + r with 0 ≤ r < U proven (block radix; q = 0)."""
        x = self.to_blocks(x)
        a, b = self._window(x.r, self.U, MOD_WINDOWS, "block carry")
        if (a, b) == (0, 1):
            return x
        c = self.carry(x.r, self.U, a, b)
        self.use_lemma(f"mod-window[{a},{b}]", self._window_instance(x.r, self.U, a, b, c))
        self.use_lemma("carry")
        return DVal(_ZERO, self.built("uncarry", x.r, c, self.U), p=self.built("add", x.p, c))

    def is_unit(self, x: DVal) -> bool:
        """Is x the block unit U itself (written U, or one block)?"""
        if not _is_const(x.q, 0):
            return False
        return (_is_const(x.p, 1) and _is_const(x.r, 0)) or (not x.blocks and multiple(x.r, self.U) == 1)

    def canonical(self, x: DVal) -> DVal:
        if x.canon:
            return x
        x = self.to_radix_m(x)
        try:
            a, b = self._window(x.r, self.m, MOD_WINDOWS, "carry")
        except NormalizationError:
            if self.m_value is None:
                raise
            c = x.r / self.m_value        # m fixed: Z3's division by a positive numeral is floor, linear
            return DVal(z3.simplify(x.q + c), z3.simplify(x.r - c * self.m_value), True)
        if (a, b) == (0, 1):
            return DVal(x.q, x.r, True)
        c = self.carry(x.r, self.m, a, b)
        self.use_lemma(f"mod-window[{a},{b}]", self._window_instance(x.r, self.m, a, b, c))
        self.use_lemma("carry")
        return DVal(self.built("add", x.q, c), self.built("uncarry", x.r, c, self.m), True)

    def _block(self, x: DVal, unit):
        x = self.canonical(x)
        a, b = self._window(x.q, unit, BLOCK_WINDOWS, f"mod {unit}·m")
        c = self.carry(x.q, unit, a, b)
        m, k = self.m, unit
        v = lambda: x.q * m + x.r     # noqa: E731 (the instance is built only when exported)
        self.use_lemma(f"block-window[{a},{b}]", lambda: z3.Implies(
            z3.And(k > 0, m > 0, 0 <= x.r, x.r < m, a * k <= x.q, x.q < b * k),
            z3.And(v() % (k * m) == (x.q - c * k) * m + x.r, v() / (k * m) == c)))
        return x, c

    def compare(self, x: DVal, y: DVal, op: str):
        q, r = self.built("sub", x.q, y.q), self.built("sub", x.r, y.r)
        p = self.built("sub", x.p, y.p) if x.blocks or y.blocks else _ZERO
        if p is not _ZERO and not _is_const(p, 0):
            diff = DVal(q, r, p=p)
            if multiple(p, self.m) is not None:
                diff = self.to_radix_m(diff)
                q, r = diff.q, diff.r
            else:
                self.use_lemma("digit-compare")
                d = self.in_blocks(diff)
                return self.digit_compare(d.p, d.r, op)
        if not _is_const(q, 0):
            self.use_lemma("digit-compare")
            d = self.canonical(DVal(q, r))
            return self.digit_compare(d.q, d.r, op)
        return r == 0 if op == "eq" else r < 0 if op == "lt" else r <= 0

    def is_m(self, x: DVal) -> bool:
        return _is_const(x.q, 1) and _is_const(x.r, 0) and not x.blocks

    def count_unit(self, x: DVal):
        """The block count (k or kd) that x is, else None."""
        if x.blocks:
            return None
        return next((u for u in self.units if _is_const(x.q, 0) and z3.eq(z3.simplify(x.r), u)), None)

    def extent_unit(self, x: DVal):
        """The block count u of an extent x = u·m (n or d), else None."""
        if x.blocks:
            return self.U if _is_const(x.q, 0) and _is_const(x.r, 0) and z3.eq(z3.simplify(x.p), self.m) else None
        return next((u for u in self.units if _is_const(x.r, 0) and z3.eq(z3.simplify(x.q), u)), None)

    # ------------------------------------------------------------------ translation
    def val(self, t: Term) -> DVal:
        """The digit form of integer Term t (memoized per Term object: formulas share sub-terms)."""
        hit = self._memo.get(("v", id(t)))
        if hit is None:
            hit = self._memo[("v", id(t))] = (t, self._val(t))
        return hit[1]

    def _val(self, t: Term) -> DVal:
        op, args = t.op, t.args
        if op == "var":
            if args[0] not in self.env and args[0] in self._least:
                self._characterise(args[0])
            elif args[0] not in self.env and args[0] in self._formulas:      # a derived size named
                from ringproof.schedules.dsl import with_derived               # (an array's extent)
                self.env[args[0]] = self.val(lift(getattr(with_derived(dict(self.shape.derived), PARAMS), args[0])))
            if args[0] not in self.env:
                raise NormalizationError(f"unknown variable {args[0]}")
            return self.env[args[0]]
        if op == "const":
            hit = self.session.literals.get(args[0])
            if hit is None:        # literals recur in every formula; each z3.IntVal is several Z3 calls
                hit = self.session.literals[args[0]] = DVal(_ZERO, z3.IntVal(args[0]))
            return hit
        if op not in _VAL:
            raise NormalizationError(f"{op} is not an integer expression")
        return _VAL[op](self, *args)

    def _characterise(self, name: str) -> None:
        """The derived parameter `name`, a `Least`, as fresh digits K = q·m + r (0 ≤ r < m) pinned by its conditions: lo ≤ K
        ≤ hi, cond(K), and K = lo or not cond(K − 1) -- once it is proved, under the assumptions so
        far (the side condition among them), that lo ≤ hi and cond(hi) hold for every size, so K
        exists; else NormalizationError."""
        from ringproof.schedules.dsl import with_derived
        fn, q, r = self._least[name], z3.Int(f"{name}.q"), z3.Int(f"{name}.r")
        K = q * self.m + r         # in digits, as every value: linear wherever the queries use it
        P = with_derived(dict(self.shape.derived), PARAMS)
        ints = {x: self.int_term(v) for x, v in self.env.items()}
        ints[name] = K
        lo, hi = (plain(lift(b), ints) for b in fn.bounds(P))
        exists = z3.And(lo <= hi, plain(lift(fn.cond(P, fn.hi(P))), ints))
        if not self.prove(exists):
            raise NormalizationError(f"derived parameter {name}: not shown that some value in its bounds "
                                     "satisfies its condition at every size")
        least = [lo <= K, K <= hi, plain(lift(fn.cond(P, var(name))), ints),
                 z3.Or(K == lo, z3.Not(plain(lift(fn.cond(P, var(name) - 1)), ints)))]
        self._nonlinear |= {a.get_id() for a in least if not _linear(a)}
        self.assumptions += [0 <= r, r < self.m] + least
        self.env[name] = DVal(q, r, True)

    def _add(self, a: Term, b: Term) -> DVal:
        a, b = self.val(a), self.val(b)
        p = self.built("add", a.p, b.p) if a.blocks or b.blocks else _ZERO
        return DVal(self.built("add", a.q, b.q), self.built("add", a.r, b.r), p=p)

    def _neg(self, a: Term) -> DVal:
        a = self.val(a)
        p = self.built("neg", a.p) if a.blocks else _ZERO
        return DVal(self.built("neg", a.q), self.built("neg", a.r), p=p)

    def _ite(self, c: Term, a: Term, b: Term) -> DVal:
        c, a, b = self.cond(c), self.val(a), self.val(b)
        return DVal(self.built("ite", c, a.q, b.q), self.built("ite", c, a.r, b.r), a.canon and b.canon,
                    self.built("ite", c, a.p, b.p) if a.blocks or b.blocks else _ZERO)

    def _mul(self, a: DVal, b: DVal) -> DVal:
        for x, y in ((a, b), (b, a)):
            if _is_const(x.q, 0) and _is_const(x.r) and not x.blocks:
                c = self.built("same", x.r).as_long()
                return DVal(self.built("scale", c, y.q), self.built("scale", c, y.r), y.canon and c == 1,
                            self.built("scale", c, y.p) if y.blocks else _ZERO)
        if a.blocks or b.blocks:
            raise NormalizationError("product of a value in blocks with another value")
        for x, y in ((a, b), (b, a)):
            if _is_const(x.q, 0) and _is_const(y.r, 0):      # scalar · (multiple of m)
                return DVal(self.built("mul", x.r, y.q), z3.IntVal(0), True)
        if not self.nonlinear:
            for x, y in ((a, b), (b, a)):                     # value · (c·U): c·value blocks
                c = multiple(y.r, self.U) if _is_const(y.q, 0) else None
                qm = _scaled(z3.simplify(x.q), self.m)
                if c and qm is not None and _only_in_conditions(x.r, self.U):
                    p = c * (qm + x.r)
                    return DVal(_ZERO, _ZERO, p=z3.simplify(p))
        if _is_const(a.q, 0) and _is_const(b.q, 0):
            return DVal(z3.IntVal(0), z3.simplify(a.r * b.r))
        if self.nonlinear:
            return DVal(z3.IntVal(0), z3.simplify(self.int_term(a) * self.int_term(b)))
        raise NormalizationError("product of two values that both involve m")

    def _moddiv(self, op, a: DVal, b: DVal) -> DVal:
        zero = _ZERO
        if b.blocks:
            raise NormalizationError(f"{op} by a divisor written in blocks of {self.U}")
        if self.is_m(b):
            a = self.canonical(a)
            return DVal(zero, a.r, True) if op == "mod" else DVal(zero, a.q)
        if (a.blocks or not _is_const(a.q, 0)) and self.is_unit(b):
            x = self.in_blocks(a)
            return DVal(zero, x.r) if op == "mod" else DVal(zero, x.p)
        if a.blocks and same_term(self.extent_unit(b), self.U):      # (p·U + r) mod (m·U)
            x = self.in_blocks(a)
            lo, hi = self._window(x.p, self.m, BLOCK_WINDOWS, f"mod m·{self.U}")
            c = self.carry(x.p, self.m, lo, hi)
            m, u = self.m, self.U
            v = lambda: x.p * u + x.r     # noqa: E731 (the instance is built only when exported)
            self.use_lemma(f"block-window[{lo},{hi}]", lambda: z3.Implies(
                z3.And(m > 0, u > 0, 0 <= x.r, x.r < u, lo * m <= x.p, x.p < hi * m),
                z3.And(v() % (m * u) == (x.p - c * m) * u + x.r, v() / (m * u) == c)))
            if op == "mod":
                return DVal(zero, x.r, p=self.built("uncarry", x.p, c, m))
            return DVal(zero, self.built("same", c))
        unit = self.extent_unit(b)
        if unit is not None:
            x, c = self._block(a, unit)
            if op == "mod":
                return DVal(self.built("uncarry", x.q, c, unit), x.r, True)
            return DVal(zero, self.built("same", c))
        unit = self.count_unit(b)
        if unit is not None and _is_const(a.q, 0):
            lo, hi = self._window(a.r, unit, MOD_WINDOWS, f"mod {unit}")
            c = self.carry(a.r, unit, lo, hi)
            self.use_lemma(f"mod-window[{lo},{hi}]", self._window_instance(a.r, unit, lo, hi, c))
            if op == "mod":
                return DVal(zero, self.built("uncarry", a.r, c, unit))
            return DVal(zero, self.built("same", c))
        if _is_const(b.r, 0) and _is_const(b.q) and z3.simplify(b.q).as_long() in BLOCK_DIVISORS:
            return self._div_block(op, a, z3.simplify(b.q).as_long())
        if self.U is not self.k and _is_const(b.q, 0) and _is_const(b.r) and not a.blocks and _is_const(a.q, 0):
            c, t = z3.simplify(b.r).as_long(), multiple(a.r, self.U)
            if c > 0 and t is not None and t % c == 0:          # (c·t'·U) div c = t'·U exactly
                return DVal(zero, zero) if op == "mod" else DVal(zero, z3.simplify((t // c) * self.U))
        if _is_const(b.q, 0) and _is_const(b.r) and z3.simplify(b.r).as_long() > 0 and _is_const(a.q, 0):
            c = z3.simplify(b.r).as_long()
            return DVal(zero, a.r % c if op == "mod" else a.r / c)
        if _is_const(b.q, 0) and _is_const(b.r) and z3.simplify(b.r).as_long() in CONST_DIVISORS:
            hq, hr, p = self._div_const(a, z3.simplify(b.r).as_long())
            return DVal(hq, hr, True) if op == "div" else DVal(zero, p)
        raise NormalizationError(f"{op} by a divisor other than m, k, n, kd, d or a positive constant")

    def _div_block(self, op, a: DVal, c: int) -> DVal:
        """a div (c·m) and a mod (c·m): with a = q·m + r canonical and q = c·t + e (0 ≤ e < c),
        lemma block-const[c] gives t and e·m + r; t = q/c exactly when q is a multiple of c·U."""
        a = self.canonical(a)
        zero = z3.IntVal(0)
        t = multiple(a.q, self.U)
        if t is not None and t % c == 0:
            tq, e = z3.simplify((t // c) * self.U), zero
        else:
            tq, e = z3.simplify(a.q / c), z3.simplify(a.q % c)
        m, r, q = self.m, a.r, a.q
        self.use_lemma(f"block-const[{c}]", lambda: z3.Implies(
            z3.And(m > 0, 0 <= r, r < m, q == c * tq + e, 0 <= e, e < c),
            z3.And((q * m + r) / (c * m) == tq, (q * m + r) % (c * m) == e * m + r)))
        return DVal(zero, tq) if op == "div" else DVal(e, r, True)

    def _div_const(self, a: DVal, c: int):
        """Digits of a div c and a mod c for a value involving m: fresh variables pinned by the
        linear case constraints of lemma div-const[c] (which always have a solution)."""
        a = self.canonical(a)
        key = (a.q.get_id(), a.r.get_id(), c)
        if key not in self._divs:
            self.use_lemma(f"div-const[{c}]")
            self.use_lemma(f"div-const-exists[{c}]")
            i = len(self._divs)
            hq, hr, p = z3.Ints(f"_d{i}.q _d{i}.r _d{i}.p")
            self.assumptions += [0 <= hr, hr < self.m, 0 <= p, p < c,
                                 div_const_cases(a.q, a.r, self.m, hq, hr, p, c)]
            self._divs[key] = (hq, hr, p, a)
        return self._divs[key][:3]

    def cond(self, t) -> z3.BoolRef:
        """The Z3 condition of Term t (memoized like `val`)."""
        if isinstance(t, bool):
            return z3.BoolVal(t)
        hit = self._memo.get(("c", id(t)))
        if hit is None:
            hit = self._memo[("c", id(t))] = (t, self._cond(t))
        return hit[1]

    def _cond(self, t) -> z3.BoolRef:
        if t.op == "bool":
            return z3.BoolVal(t.args[0])
        if t.op not in _COND:
            raise NormalizationError(f"{t.op} is not a condition")
        return _COND[t.op](self, *t.args)

    def built(self, op: str, *xs):
        """z3.simplify of `_BUILDS[op]` on xs, kept in the session by op and the operands' ids (the
        same operands always build the same term, and the checks of a schedule build the same
        digits many times over)."""
        key = (op, *[x if isinstance(x, int) else x.get_id() for x in xs])
        hit = self.session.terms.get(key)
        if hit is None:
            hit = self.session.terms[key] = (z3.simplify(_BUILDS[op](*xs)), xs)
        return hit[0]

    def carry(self, x, unit, a: int, b: int):
        """`lemmas.carry`, kept in the session like `built` (not simplified: lemma instances read it)."""
        return self._kept(("carry", x.get_id(), unit.get_id(), a, b), lambda: carry(x, unit, a, b), x, unit)

    def digit_compare(self, high, low, op: str):
        """`_digit_compare`, kept in the session like `built` (not simplified)."""
        return self._kept(("compare", op, high.get_id(), low.get_id()), lambda: _digit_compare(high, low, op),
                          high, low)

    def _kept(self, key: tuple, build, *operands):
        """build(), kept in the session's terms by `key` (the operands' ids; `operands` kept alive)."""
        hit = self.session.terms.get(key)
        if hit is None:
            hit = self.session.terms[key] = (build(), operands)
        return hit[0]

    def int_term(self, x: DVal) -> z3.ArithRef:
        """x as one Z3 integer term q·m + p·U + r."""
        return x.q * self.m + x.r + x.p * self.U

    def int_of(self, x: DVal, model) -> int:
        """The concrete value of x in a Z3 model."""
        return model.eval(self.int_term(x), model_completion=True).as_long()


def _digit_compare(high, low, op: str):
    """The condition `op` ("eq", "lt", "le") of the value high·B + low against 0, its low digit
    0 ≤ low < B proven (only the condition asked is built)."""
    if op == "eq":
        return z3.And(high == 0, low == 0)
    if op == "lt":
        return high < 0
    return z3.Or(high < 0, z3.And(high == 0, low == 0))


def _linear(e) -> bool:
    """Does the Z3 term e multiply no two variables (nor divide by one)?"""
    todo = [e]
    while todo:
        x = todo.pop()
        kids = x.children()
        if z3.is_app_of(x, z3.Z3_OP_MUL) and sum(not z3.is_int_value(c) for c in kids) > 1:
            return False
        if (z3.is_app_of(x, z3.Z3_OP_IDIV) or z3.is_app_of(x, z3.Z3_OP_MOD)) and not z3.is_int_value(kids[1]):
            return False
        todo += kids
    return True


def plain(t: Term, ints: dict):
    """Term t as a plain Z3 integer term or condition, its variables from `ints` (no digits: products
    and divisions stay as they are; a derived parameter's defining condition)."""
    op, a = t.op, t.args
    if op == "var":
        if a[0] not in ints:
            raise NormalizationError(f"unknown variable {a[0]}")
        return ints[a[0]]
    if op == "const":
        return z3.IntVal(a[0])
    if op == "bool":
        return z3.BoolVal(a[0])
    return _PLAIN[op](*[plain(x, ints) for x in a])


_PLAIN = {
    "add": lambda x, y: x + y, "neg": lambda x: -x, "mul": lambda x, y: x * y,
    "mod": lambda x, y: x % y, "div": lambda x, y: x / y,     # Z3's / and % are floor's for a divisor > 0
    "ite": z3.If, "eq": lambda x, y: x == y, "lt": lambda x, y: x < y, "le": lambda x, y: x <= y,
    "and": lambda *xs: z3.And(*xs), "or": lambda *xs: z3.Or(*xs), "not": z3.Not,
}
require_complete("normalize.plain", _PLAIN)


# Each operator of `schedules/operators.py` in digit form (an integer) or as a Z3 condition.
_VAL = {
    "add": Ctx._add, "neg": Ctx._neg, "ite": Ctx._ite,
    "mul": lambda ctx, a, b: ctx._mul(ctx.val(a), ctx.val(b)),
    "mod": lambda ctx, a, b: ctx._moddiv("mod", ctx.val(a), ctx.val(b)),
    "div": lambda ctx, a, b: ctx._moddiv("div", ctx.val(a), ctx.val(b)),
}
_COND = {
    "eq": lambda ctx, a, b: ctx.compare(ctx.val(a), ctx.val(b), "eq"),
    "lt": lambda ctx, a, b: ctx.compare(ctx.val(a), ctx.val(b), "lt"),
    "le": lambda ctx, a, b: ctx.compare(ctx.val(a), ctx.val(b), "le"),
    "and": lambda ctx, *xs: z3.And(*[ctx.cond(x) for x in xs]),
    "or": lambda ctx, *xs: z3.Or(*[ctx.cond(x) for x in xs]),
    "not": lambda ctx, a: z3.Not(ctx.cond(a)),
    "ite": lambda ctx, c, a, b: z3.If(ctx.cond(c), ctx.cond(a), ctx.cond(b)),
}
require_complete("normalize.Ctx.val", _VAL, sorts=("int", "any"))
require_complete("normalize.Ctx.cond", _COND, sorts=("bool", "any"))
