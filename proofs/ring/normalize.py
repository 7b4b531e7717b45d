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
from ringproof.proofs.ring import budgets
from ringproof.proofs.ring.intervals import decide
from ringproof.proofs.ring.lemmas import (BLOCK_WINDOWS, CONST_DIVISORS, MOD_WINDOWS, carry, div_const_cases,
                           library_status)
from ringproof.schedules.expr import Term, var


# (fact id, ids of the assumptions used) -> (proved?, the ASTs, kept alive). Only definite answers
# (proved, or false at a point satisfying the assumptions) are kept: those no timeout, resource
# limit, seed or solver changes, so the key holds everything that can change one; an unknown is
# never kept, and a later query with a larger budget asks again.
_PROVEN: dict = {}
_MODELS: dict = {}   # ids of the assumptions used -> (the ASTs, kept alive, [points satisfying them])
MAX_MODELS = 8       # points kept per set of assumptions
_VARS: dict = {}     # AST id -> (AST, names of its uninterpreted constants)


def _vars(e) -> frozenset:
    """Names of the uninterpreted constants in e (memoized on every sub-term)."""
    todo = [e]
    while todo:
        x = todo[-1]
        if x.get_id() in _VARS:
            todo.pop()
            continue
        kids = x.children()
        missing = [c for c in kids if c.get_id() not in _VARS]
        if missing:
            todo.extend(missing)
            continue
        todo.pop()
        if z3.is_const(x) and x.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            names = frozenset((x.decl().name(),))
        else:
            names = frozenset().union(*[_VARS[c.get_id()][1] for c in kids])
        _VARS[x.get_id()] = (x, names)
    return _VARS[e.get_id()][1]


def new_solver(timeout_ms: int, seed: int, rlimit: int = budgets.SIDE_CONDITION) -> z3.Solver:
    """A fresh solver for linear integer queries: Z3's simplify / propagate-values / solve-eqs
    preprocessing before its SMT core (several times faster here than the default strategy).
    `rlimit` decides when it gives up; the wall-clock timeout is only a backstop (see budgets)."""
    s = z3.Then("simplify", "propagate-values", "solve-eqs", "smt").solver()
    s.set("rlimit", rlimit)
    s.set("timeout", timeout_ms)
    s.set("random_seed", seed)
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


@dataclass(frozen=True)
class DVal:
    """The integer q·m + r; `canon` records a proof that 0 ≤ r < m."""

    q: z3.ArithRef
    r: z3.ArithRef
    canon: bool = False


def _times(c, unit):
    """c·unit with the product pushed into c's If-branches, so the result stays linear."""
    if z3.is_app_of(c, z3.Z3_OP_ITE):
        return z3.If(c.arg(0), _times(c.arg(1), unit), _times(c.arg(2), unit))
    return z3.simplify(c) * unit


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


def _is_const(e, value=None) -> bool:
    e = z3.simplify(e)
    return z3.is_int_value(e) and (value is None or e.as_long() == value)


PARAMS = SimpleNamespace(n=var("n"), m=var("m"), k=var("k"), d=var("d"), kd=var("kd"))
_PARAM_NAMES = frozenset({"m", "k", "kd"})


def _keep_point(model, group: tuple, relevant: list) -> None:
    """Keep a model of `relevant` (completed: every variable gets a value) as a known point, once
    checked to satisfy every assumption of the group."""
    kept = _MODELS.setdefault(group, (relevant, []))[1]
    if len(kept) < MAX_MODELS and all(z3.is_true(model.eval(a, model_completion=True)) for a in relevant):
        kept.append(model)


def _refuted_at_known_point(fact, group: tuple) -> bool:
    """Is `fact` false at a known point of the group's assumptions? Then it does not follow."""
    return any(z3.is_false(p.eval(fact, model_completion=True)) for p in _MODELS.get(group, ((), ()))[1])


class Ctx:
    """One query's world: the symbolic parameters, the assumptions so far, the variable map."""

    def __init__(self, m_value: int | None = None, timeout_ms: int = 10000, seed: int = 0,
                 nonlinear: bool = False, square: bool = True, min_m: int = 1):
        """`square`: d = n (kd is k); else d = kd·m with kd ≥ 1 a parameter of its own. `min_m`:
        the least m of this query (a literal split decides smaller m apart)."""
        self.nonlinear = nonlinear     # allow products of values (counting identities, not indices)
        self.m, self.k = z3.Int("m"), z3.Int("k")
        self.m_value, self.min_m = m_value, min_m
        self.kd = self.k if square else z3.Int("kd")
        self.units = (self.k,) if square else (self.k, self.kd)   # block counts: n = k·m, d = kd·m
        self.assumptions: list = [self.m >= min_m] + [u >= 1 for u in self.units]
        if m_value is not None:
            self.assumptions.append(self.m == m_value)
        zero = z3.IntVal(0)
        self.env = {"m": DVal(z3.IntVal(1), zero), "k": DVal(zero, self.k), "n": DVal(self.k, zero),
                    "kd": DVal(zero, self.kd), "d": DVal(self.kd, zero)}
        self.timeout_ms, self.seed = timeout_ms, seed
        self.lemmas_used: set[str] = set()
        self._instances: list = []     # (lemma name, a function building its instance here)
        self.side_conditions = 0
        self._windows: dict = {}
        self._divs: dict = {}
        self._solvers: dict = {}     # ids of a subset of the assumptions -> its incremental solver
        self._memo: dict = {}    # ("v"|"c", id(Term)) -> (Term, result); the Term is kept alive
        self._own: list = []         # variables of each assumption (parameters left out)
        self._relevance: dict = {}   # (variables of a fact, number of assumptions) -> assumptions

    # ------------------------------------------------------------------ side conditions
    def prove(self, fact) -> bool:
        """Does `fact` follow from the assumptions? (A side condition, not a verdict.)

        Proven from the assumptions that share variables with `fact` (transitively): a fact that
        follows from a subset follows from all, and the answer is cached by that subset. Interval
        reasoning (`intervals.decide`) settles what it can; a fact false at a point already known
        to satisfy the subset (a counter-model of an earlier side condition) does not follow; the
        rest goes to one incremental Z3 solver per subset, the fact's negation pushed and popped.
        """
        relevant = self._relevant(fact)
        group = tuple(a.get_id() for a in relevant)
        key = (fact.get_id(), group)
        if key in _PROVEN:
            return _PROVEN[key][0]
        verdict = decide(fact, relevant)
        if verdict is None and _refuted_at_known_point(fact, group):
            verdict = False
        if verdict is None:
            verdict = self._z3_proves(fact, group, relevant)
        if verdict is None:
            return False        # not shown under this budget; a larger one may: never cached
        _PROVEN[key] = (verdict, fact, relevant)
        return verdict

    def _z3_proves(self, fact, group: tuple, relevant: list) -> bool | None:
        """True (unsat), False (a counter-model), None (Z3 gave no answer within the budget)."""
        s = self._solvers.get(group)
        if s is None:
            s = self._solvers[group] = z3.Solver() if self.nonlinear else z3.SolverFor("QF_LIA")
            s.set("rlimit", budgets.SIDE_CONDITION)   # per check; the wall clock only a backstop
            s.set("timeout", self.timeout_ms)
            s.set("random_seed", self.seed)
            s.add(*relevant)
        s.push()
        s.add(z3.Not(fact))
        self.side_conditions += 1
        answer = s.check()
        if answer == z3.sat:
            _keep_point(s.model(), group, relevant)
        s.pop()
        return True if answer == z3.unsat else (False if answer == z3.sat else None)

    def _relevant(self, fact) -> list:
        """The assumptions that share variables with `fact`, transitively (memoized per variable
        set and number of assumptions: assumptions are only ever appended)."""
        own = self._own
        for a in self.assumptions[len(own):]:
            own.append(_vars(a) - _PARAM_NAMES)
        need = frozenset(_vars(fact) - _PARAM_NAMES)
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
            hit = self._relevance[key] = [a for a, c in zip(self.assumptions, chosen) if c]
        return hit

    def _use(self, lemma: str, instance=None):
        """Record a use of `lemma`; `instance` builds its instance here (a valid formula), which
        only an exported query needs, so it is built only then (`instances`)."""
        if not library_status().get(lemma, False):
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
            lows = sorted({a for a, _ in windows}, reverse=True)
            highs = sorted({b for _, b in windows})
            a = next((a for a in lows if self.prove(a * unit <= x)), None)
            b = next((b for b in highs if a is not None and self.prove(x < b * unit)), None)
            self._windows[key] = (a, b, x)
        a, b, _ = self._windows[key]
        if a is None or b is None:
            why = f"cannot bound {_short(x)} within a few multiples of {unit} ({what})"
            c = _literal(x)
            if unit is self.m and self.m_value is None and self.min_m == 1 and 0 < abs(c) <= MAX_LITERAL:
                raise LiteralBound(why, abs(c) + 1)
            raise NormalizationError(why)
        return a, b

    # ------------------------------------------------------------------ digit arithmetic
    def canonical(self, x: DVal) -> DVal:
        if x.canon:
            return x
        try:
            a, b = self._window(x.r, self.m, MOD_WINDOWS, "carry")
        except NormalizationError:
            if self.m_value is None:
                raise
            c = x.r / self.m_value        # m fixed: Z3's division by a positive numeral is floor, linear
            return DVal(z3.simplify(x.q + c), z3.simplify(x.r - c * self.m_value), True)
        if (a, b) == (0, 1):
            return DVal(x.q, x.r, True)
        c = carry(x.r, self.m, a, b)
        self._use(f"mod-window[{a},{b}]", self._window_instance(x.r, self.m, a, b, c))
        self._use("carry")
        return DVal(z3.simplify(x.q + c), z3.simplify(x.r - _times(c, self.m)), True)

    def _block(self, x: DVal, unit):
        x = self.canonical(x)
        a, b = self._window(x.q, unit, BLOCK_WINDOWS, f"mod {unit}·m")
        c = carry(x.q, unit, a, b)
        m, k = self.m, unit
        v = lambda: x.q * m + x.r     # noqa: E731 (the instance is built only when exported)
        self._use(f"block-window[{a},{b}]", lambda: z3.Implies(
            z3.And(k > 0, m > 0, 0 <= x.r, x.r < m, a * k <= x.q, x.q < b * k),
            z3.And(v() % (k * m) == (x.q - c * k) * m + x.r, v() / (k * m) == c)))
        return x, c

    def compare(self, x: DVal, y: DVal, op: str):
        q, r = z3.simplify(x.q - y.q), z3.simplify(x.r - y.r)
        if not _is_const(q, 0):
            self._use("digit-compare")
            d = self.canonical(DVal(q, r))
            q, r = d.q, d.r
            return {"eq": z3.And(q == 0, r == 0), "lt": q < 0,
                    "le": z3.Or(q < 0, z3.And(q == 0, r == 0))}[op]
        return {"eq": r == 0, "lt": r < 0, "le": r <= 0}[op]

    def is_m(self, x: DVal) -> bool:
        return _is_const(x.q, 1) and _is_const(x.r, 0)

    def count_unit(self, x: DVal):
        """The block count (k or kd) that x is, else None."""
        return next((u for u in self.units if _is_const(x.q, 0) and z3.eq(z3.simplify(x.r), u)), None)

    def extent_unit(self, x: DVal):
        """The block count u of an extent x = u·m (n or d), else None."""
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
            if args[0] not in self.env:
                raise NormalizationError(f"unknown variable {args[0]}")
            return self.env[args[0]]
        if op == "const":
            return DVal(z3.IntVal(0), z3.IntVal(args[0]))
        if op == "add":
            a, b = self.val(args[0]), self.val(args[1])
            return DVal(z3.simplify(a.q + b.q), z3.simplify(a.r + b.r))
        if op == "neg":
            a = self.val(args[0])
            return DVal(z3.simplify(-a.q), z3.simplify(-a.r))
        if op == "mul":
            return self._mul(self.val(args[0]), self.val(args[1]))
        if op in ("mod", "div"):
            return self._moddiv(op, self.val(args[0]), self.val(args[1]))
        if op == "ite":
            c, a, b = self.cond(args[0]), self.val(args[1]), self.val(args[2])
            return DVal(z3.simplify(z3.If(c, a.q, b.q)), z3.simplify(z3.If(c, a.r, b.r)),
                        a.canon and b.canon)
        raise NormalizationError(f"{op} is not an integer expression")

    def _mul(self, a: DVal, b: DVal) -> DVal:
        for x, y in ((a, b), (b, a)):
            if _is_const(x.q, 0) and _is_const(x.r):
                c = z3.simplify(x.r).as_long()
                return DVal(z3.simplify(c * y.q), z3.simplify(c * y.r), y.canon and c == 1)
        for x, y in ((a, b), (b, a)):
            if _is_const(x.q, 0) and _is_const(y.r, 0):      # scalar · (multiple of m)
                return DVal(z3.simplify(x.r * y.q), z3.IntVal(0), True)
        if _is_const(a.q, 0) and _is_const(b.q, 0):
            return DVal(z3.IntVal(0), z3.simplify(a.r * b.r))
        if self.nonlinear:
            return DVal(z3.IntVal(0), z3.simplify(self.int_term(a) * self.int_term(b)))
        raise NormalizationError("product of two values that both involve m")

    def _moddiv(self, op, a: DVal, b: DVal) -> DVal:
        zero = z3.IntVal(0)
        if self.is_m(b):
            a = self.canonical(a)
            return DVal(zero, a.r, True) if op == "mod" else DVal(zero, a.q)
        unit = self.extent_unit(b)
        if unit is not None:
            x, c = self._block(a, unit)
            if op == "mod":
                return DVal(z3.simplify(x.q - _times(c, unit)), x.r, True)
            return DVal(zero, z3.simplify(c))
        unit = self.count_unit(b)
        if unit is not None and _is_const(a.q, 0):
            lo, hi = self._window(a.r, unit, MOD_WINDOWS, f"mod {unit}")
            c = carry(a.r, unit, lo, hi)
            self._use(f"mod-window[{lo},{hi}]", self._window_instance(a.r, unit, lo, hi, c))
            if op == "mod":
                return DVal(zero, z3.simplify(a.r - _times(c, unit)))
            return DVal(zero, z3.simplify(c))
        if _is_const(b.q, 0) and _is_const(b.r) and z3.simplify(b.r).as_long() > 0 and _is_const(a.q, 0):
            c = z3.simplify(b.r).as_long()
            return DVal(zero, a.r % c if op == "mod" else a.r / c)
        if _is_const(b.q, 0) and _is_const(b.r) and z3.simplify(b.r).as_long() in CONST_DIVISORS:
            hq, hr, p = self._div_const(a, z3.simplify(b.r).as_long())
            return DVal(hq, hr, True) if op == "div" else DVal(zero, p)
        raise NormalizationError(f"{op} by a divisor other than m, k, n, kd, d or a positive constant")

    def _div_const(self, a: DVal, c: int):
        """Digits of a div c and a mod c for a value involving m: fresh variables pinned by the
        linear case constraints of lemma div-const[c] (which always have a solution)."""
        a = self.canonical(a)
        key = (a.q.get_id(), a.r.get_id(), c)
        if key not in self._divs:
            self._use(f"div-const[{c}]")
            self._use(f"div-const-exists[{c}]")
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
        op, args = t.op, t.args
        if op == "bool":
            return z3.BoolVal(args[0])
        if op in ("eq", "lt", "le"):
            return self.compare(self.val(args[0]), self.val(args[1]), op)
        if op == "and":
            return z3.And(*[self.cond(a) for a in args])
        if op == "or":
            return z3.Or(*[self.cond(a) for a in args])
        if op == "not":
            return z3.Not(self.cond(args[0]))
        if op == "ite":
            return z3.If(self.cond(args[0]), self.cond(args[1]), self.cond(args[2]))
        raise NormalizationError(f"{op} is not a condition")

    def int_term(self, x: DVal) -> z3.ArithRef:
        """x as one Z3 integer term q·m + r."""
        return x.q * self.m + x.r

    def int_of(self, x: DVal, model) -> int:
        """The concrete value of x in a Z3 model."""
        return model.eval(self.int_term(x), model_completion=True).as_long()
