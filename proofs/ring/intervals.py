"""Side conditions that interval reasoning settles without Z3.

A side condition of the normalization is a conjunction of linear comparisons over integer digit
variables, under assumptions that mostly box each variable between linear forms of the parameters m
and k (`0 ≤ j.r < m`, `0 ≤ j.q < k`). When every relevant assumption is such a box or a bound on m, k
alone, and the condition has no If-terms, a comparison `g ≥ 0` is

- proved when g's minimum over the box, a linear form α·m + β·k + γ, is ≥ 0 wherever the parameter
  bounds allow (a lower bound on the minimum: choosing one of several bounds only weakens it);
- refuted when a small (m, k) gives a non-empty box whose exact minimum of g is < 0 (a concrete
  witness).

Where the condition has If-terms (the carries of the normalization) or some relevant assumption is
not a bound, a *proof* is still tried on a weaker reading: each combination of If-branches is a
linear form that must be ≥ 0 under the box plus that branch's conditions, and every assumption or
condition that is not a bound is dropped. Dropping hypotheses and splitting on branches can only
lose proofs, never make one, so this reading proves or answers None; it never refutes.

Anything else answers None and goes to Z3. `Intervals.decide` is tested against Z3 on random instances.
"""

from __future__ import annotations

from itertools import product

import z3

from ringproof.schedules.operators import require_complete

BOX_PARAMETERS = ("m", "k")     # Z3 variables a box reads as parameters (the others: digit variables)
WITNESS_GRID = range(1, 7)      # (m, k) tried for a refuting witness
MAX_CHOICES = 16                # combinations of alternative bounds tried for a proof
MAX_BRANCHES = 16               # combinations of If-branches tried for a proof

# The Z3 node kinds of the linear operators of `schedules/operators.py` (what the normalizer keeps;
# it rewrites the others into If-carries, which `linear` leaves to Z3 and `branches` splits).
_Z3_KINDS = {"add": (z3.Z3_OP_ADD, z3.Z3_OP_SUB), "neg": (z3.Z3_OP_UMINUS,), "mul": (z3.Z3_OP_MUL,)}
require_complete("intervals._OPS", _Z3_KINDS, refused=("mod", "div", "ite"), sorts=("int", "any"))
_OPS = {kind for kinds in _Z3_KINDS.values() for kind in kinds}


def _combine(kind, parts: list) -> dict | None:
    """The linear form of an arithmetic node (`_OPS`) over its children's forms (None: a product
    of two non-constants)."""
    if kind == z3.Z3_OP_UMINUS:
        return _scale(parts[0], -1)
    if kind == z3.Z3_OP_ADD:
        return _sum(parts)
    if kind == z3.Z3_OP_SUB:
        return _sum([parts[0]] + [_scale(p, -1) for p in parts[1:]])
    out = {"": 1}
    for p in parts:                                   # a product: all factors but one constant
        if set(out) == {""}:
            out = _scale(p, out[""])
        elif set(p) <= {""}:
            out = _scale(out, p.get("", 0))
        else:
            return None
    return out


def _count(parts) -> int:
    total = 1
    for p in parts:
        total *= len(p)
    return total


def _sum(parts) -> dict:
    out: dict = {}
    for p in parts:
        for v, c in p.items():
            out[v] = out.get(v, 0) + c
    return {v: c for v, c in out.items() if c or v == ""}


def _scale(p: dict, c: int) -> dict:
    return {v: c * x for v, x in p.items()}


def _compare(kind, a: dict, b: dict) -> list:
    """The forms ≥ 0 equivalent to `a kind b` over the integers."""
    diff = _sum([b, _scale(a, -1)])                       # b − a
    if kind == z3.Z3_OP_LE:
        return [diff]
    if kind == z3.Z3_OP_GE:
        return [_scale(diff, -1)]
    if kind == z3.Z3_OP_LT:
        return [_sum([diff, {"": -1}])]                 # integers: a < b ⇔ b − a − 1 ≥ 0
    if kind == z3.Z3_OP_GT:
        return [_sum([_scale(diff, -1), {"": -1}])]
    return [diff, _scale(diff, -1)]                     # EQ


_COMPARE = {z3.Z3_OP_LE, z3.Z3_OP_GE, z3.Z3_OP_LT, z3.Z3_OP_GT, z3.Z3_OP_EQ}
_NEGATED = {z3.Z3_OP_LE: z3.Z3_OP_GT, z3.Z3_OP_GE: z3.Z3_OP_LT, z3.Z3_OP_LT: z3.Z3_OP_GE,
            z3.Z3_OP_GT: z3.Z3_OP_LE}


def _head(e) -> tuple:
    """(declaration kind, number of arguments, sort kind) of the Z3 term e, the first two None and 0
    where e is not an application: read through Z3's C API, without the wrappers of `decl()` and
    the kind tests (`is_app`, `is_int`, `is_and`), which were most of this reader's Z3 API calls."""
    c, a = e.ctx_ref(), e.as_ast()
    sort = z3.Z3_get_sort_kind(c, z3.Z3_get_sort(c, a))
    if z3.Z3_get_ast_kind(c, a) not in (z3.Z3_APP_AST, z3.Z3_NUMERAL_AST):
        return None, 0, sort
    return z3.Z3_get_decl_kind(c, z3.Z3_get_app_decl(c, a)), z3.Z3_get_app_num_args(c, a), sort


def _args(e, arity: int) -> list:
    """The `arity` arguments of the application e (`_head`'s count), wrapped as `children()` does
    but without z3's debug checks of e (about half of the API calls of a child)."""
    c, a = e.ctx_ref(), e.as_ast()
    return [z3.z3._to_expr_ref(z3.Z3_get_app_arg(c, a, i), e.ctx) for i in range(arity)]


class Box:
    """Relevant assumptions read as bounds: per variable, lower and upper linear forms in m, k;
    the parameters' own constraints kept as forms ≥ 0 over m, k."""

    def __init__(self):
        self.lo: dict = {}
        self.hi: dict = {}
        self.params: list = []

    def add(self, forms) -> bool:
        """Add forms ≥ 0 that are bounds; False if some was not (it is left out)."""
        return all([self._add(f) for f in forms])

    def copy(self) -> Box:
        box = Box()
        box.lo = {v: list(b) for v, b in self.lo.items()}
        box.hi = {v: list(b) for v, b in self.hi.items()}
        box.params = list(self.params)
        return box

    def _add(self, f: dict) -> bool:
        own = [v for v in f if v and v not in BOX_PARAMETERS]
        if not own:
            self.params.append(f)
            return True
        if len(own) != 1 or abs(f[own[0]]) != 1:
            return False
        v, c = own[0], f[own[0]]
        rest = {x: y for x, y in f.items() if x != v}
        if c == 1:          # v + rest ≥ 0  ⇒  v ≥ −rest
            self.lo.setdefault(v, []).append(_scale(rest, -1))
        else:               # rest − v ≥ 0  ⇒  v ≤ rest
            self.hi.setdefault(v, []).append(rest)
        return True

    def variables(self) -> set:
        return set(self.lo) | set(self.hi)


def _at(f: dict, point: dict) -> int:
    return sum(c * (point[v] if v else 1) for v, c in f.items())


def _param_range(box: Box, name: str, strict: bool = True):
    """[lo, hi] of one parameter from the constraints on it alone (hi None: unbounded); None if
    some constraint ties m and k together (`strict=False`: leave such constraints out)."""
    lo, hi = None, None
    for f in box.params:
        vs = [v for v in f if v]
        if len(vs) != 1:
            if strict:
                return None               # ties m and k together, or a constant fact
            continue
        if vs[0] != name:
            continue
        c, r = f[name], f.get("", 0)      # c·x + r ≥ 0
        if c > 0:
            bound = -(r // c)             # x ≥ ⌈−r/c⌉
            lo = bound if lo is None else max(lo, bound)
        else:
            bound = r // (-c)             # x ≤ ⌊r/−c⌋
            hi = bound if hi is None else min(hi, bound)
    return lo, hi


def _proves(g: dict, box: Box, ranges) -> bool:
    """Is g ≥ 0 wherever the box is non-empty? (Sound, not complete.)"""
    terms = [v for v in g if v and v not in BOX_PARAMETERS]
    options = []
    for v in terms:
        bounds = box.lo.get(v) if g[v] > 0 else box.hi.get(v)
        if not bounds:
            return False
        options.append(bounds)
    for k, choice in enumerate(product(*options)):
        if k >= MAX_CHOICES:
            return False
        low = _sum([{x: c for x, c in g.items() if not x or x in BOX_PARAMETERS}] +
                   [_scale(b, g[v]) for v, b in zip(terms, choice)])
        if _min_over(low, ranges) >= 0:
            return True
    return False


def _min_over(f: dict, ranges) -> float:
    """Minimum of a linear form in m, k over the parameter ranges (−inf if unbounded below)."""
    total = f.get("", 0)
    for name, (lo, hi) in zip(BOX_PARAMETERS, ranges):
        c = f.get(name, 0)
        if c and (lo if c > 0 else hi) is None:
            return float("-inf")
        total += c * (lo if c > 0 else hi) if c else 0
    return total


def _witness(forms: list, box: Box, ranges) -> bool:
    """Is there a small (m, k) with a non-empty box where some form's exact minimum is < 0?"""
    names = box.variables() | {v for g in forms for v in g if v and v not in BOX_PARAMETERS}
    if any(v not in box.lo or v not in box.hi for v in names):
        return False                                  # unbounded: no exact minimum
    grid = [[x for x in WITNESS_GRID if (lo is None or lo <= x) and (hi is None or x <= hi)]
            for lo, hi in ranges]
    for m, k in product(*grid):
        point = {"m": m, "k": k}
        if any(_at(f, point) < 0 for f in box.params):
            continue
        span = {v: (max(_at(b, point) for b in box.lo[v]), min(_at(b, point) for b in box.hi[v]))
                for v in names}
        if any(lo > hi for lo, hi in span.values()):
            continue
        for g in forms:
            low = sum(c * (point[v] if v in BOX_PARAMETERS else span[v][0] if c > 0 else span[v][1])
                      for v, c in g.items() if v) + g.get("", 0)
            if low < 0:
                return True
    return False


class Intervals:
    """The interval reader of Z3 terms, memoized per AST (formulas share sub-terms): one per
    session (`ringproof.proofs.ring.session`), each memo keeping its ASTs alive."""

    def __init__(self):
        self._linear_forms: dict = {}   # AST id -> (AST, its linear form or None)
        self._branch_forms: dict = {}   # AST id -> (AST, its branches or None)
        self._bounds: dict = {}         # AST id -> (AST, its bounds)
        self._facts: dict = {}          # (AST id, linear only?) -> (AST, its forms ≥ 0 or None)
        self._boxes: dict = {}          # (assumption ids, strict) -> (the assumptions, their Box)

    def decide(self, fact, assumptions, ids: tuple | None = None) -> bool | None:
        """True: `fact` follows from `assumptions`; False: it does not (a concrete witness exists);
        None: not settled by intervals. `ids`: the assumptions' AST ids, where the caller has them."""
        ids = tuple(a.get_id() for a in assumptions) if ids is None else ids
        forms = self.nonnegatives(fact)
        box = self.box(assumptions, ids=ids) if forms is not None else None
        ranges = [_param_range(box, p) for p in BOX_PARAMETERS] if box is not None else [None]
        if None not in ranges:
            if all(_proves(g, box, ranges) for g in forms):
                return True
            if _witness(forms, box, ranges):
                return False
            return None
        return True if self._proves_by_branches(fact, assumptions, ids) else None

    def _proves_by_branches(self, fact, assumptions, ids: tuple) -> bool:
        """A proof on the weaker reading (module docstring): every If-branch of the fact is ≥ 0 under
        the assumptions that are bounds and that branch's conditions that are bounds."""
        alts = self.branch_nonnegatives(fact)
        if alts is None:
            return False
        base = self.box(assumptions, strict=False, ids=ids)
        for g, conds in alts:
            box = base
            if conds:
                box = base.copy()
                for c in conds:
                    box.add(self.bounds_of(c))
            ranges = [_param_range(box, p, strict=False) for p in BOX_PARAMETERS]
            if not _proves(g, box, ranges):
                return False
        return True

    def linear(self, e) -> dict | None:
        """e as {variable name: coefficient, "": constant}, or None if e is not linear and If-free
        (memoized: formulas share sub-terms)."""
        i = e.get_id()
        if i not in self._linear_forms:
            self._linear_forms[i] = (e, self._linear(e))
        return self._linear_forms[i][1]

    def _linear(self, e) -> dict | None:
        kind, arity, sort = _head(e)
        if sort != z3.Z3_INT_SORT:
            return None
        if kind == z3.Z3_OP_ANUM:
            return {"": e.as_long()}
        if kind == z3.Z3_OP_UNINTERPRETED and arity == 0:
            return {e.decl().name(): 1}
        if kind not in _OPS:
            return None
        parts = [self.linear(c) for c in _args(e, arity)]
        if any(p is None for p in parts):
            return None
        return _combine(kind, parts)

    def branches(self, e) -> list | None:
        """e as [(linear form, path conditions)], one per combination of its If-branches: e equals the
        form of a branch whose conditions (Z3 booleans) hold. None past MAX_BRANCHES or if a branch is
        not linear."""
        i = e.get_id()
        if i not in self._branch_forms:
            self._branch_forms[i] = (e, self._branches(e))
        return self._branch_forms[i][1]

    def _branches(self, e) -> list | None:
        lin = self.linear(e)
        if lin is not None:
            return [(lin, ())]
        kind, arity, sort = _head(e)
        if kind == z3.Z3_OP_ITE:
            c, yes, no = _args(e, 3)
            yes, no = self.branches(yes), self.branches(no)
            if yes is None or no is None or len(yes) + len(no) > MAX_BRANCHES:
                return None
            return [(f, (c,) + cs) for f, cs in yes] + [(f, (z3.Not(c),) + cs) for f, cs in no]
        if sort != z3.Z3_INT_SORT or kind not in _OPS:
            return None
        parts = [self.branches(c) for c in _args(e, arity)]
        if any(p is None for p in parts) or _count(parts) > MAX_BRANCHES:
            return None
        out = []
        for combo in product(*parts):
            form = _combine(kind, [f for f, _ in combo])
            if form is None:
                return None
            out.append((form, tuple(c for _, cs in combo for c in cs)))
        return out

    def nonnegatives(self, e) -> list | None:
        """e (a comparison, or a conjunction of them) as linear forms that must all be ≥ 0."""
        alts = self.branch_nonnegatives(e, linear_only=True)
        return None if alts is None else [f for f, _ in alts]

    def branch_nonnegatives(self, e, linear_only: bool = False) -> list | None:
        """e (a comparison, or a conjunction of them) as [(form, conditions)]: e holds iff every form
        whose conditions hold is ≥ 0 (one per combination of If-branches; `linear_only`: If-free).
        Memoized: the same fact is asked under many sets of assumptions."""
        key = (e.get_id(), linear_only)
        if key not in self._facts:
            self._facts[key] = (e, self._branch_nonnegatives(e, linear_only))
        return self._facts[key][1]

    def _branch_nonnegatives(self, e, linear_only: bool) -> list | None:
        kind, arity, _ = _head(e)
        if kind == z3.Z3_OP_AND:
            out = []
            for c in _args(e, arity):
                part = self.branch_nonnegatives(c, linear_only)
                if part is None:
                    return None
                out += part
            return out
        if arity != 2 or kind not in _COMPARE:
            return None
        if linear_only:
            a, b = (self.linear(x) for x in _args(e, 2))
            sides = None if a is None or b is None else ([(a, ())], [(b, ())])
        else:
            sides = tuple(self.branches(x) for x in _args(e, 2))
        if sides is None or None in sides or len(sides[0]) * len(sides[1]) > MAX_BRANCHES:
            return None
        return [(f, ca + cb) for a, ca in sides[0] for b, cb in sides[1] for f in _compare(kind, a, b)]

    def bounds_of(self, c) -> list:
        """Forms ≥ 0 that a condition (a comparison, its negation, or a conjunction) implies; what is
        not such is left out, which only weakens what is assumed."""
        i = c.get_id()
        if i not in self._bounds:
            self._bounds[i] = (c, self._bounds_of(c))
        return self._bounds[i][1]

    def _bounds_of(self, c) -> list:
        head, arity, _ = _head(c)
        if head == z3.Z3_OP_AND:
            return [f for x in _args(c, arity) for f in self.bounds_of(x)]
        kind = None
        if head == z3.Z3_OP_NOT:
            inner, = _args(c, 1)
            inner_kind, inner_arity, _ = _head(inner)
            if inner_arity == 2:
                kind, c = _NEGATED.get(inner_kind), inner
        elif arity == 2 and head in _COMPARE:
            kind = head
        if kind is None:
            return []
        a, b = (self.linear(x) for x in _args(c, 2))
        return [] if a is None or b is None else _compare(kind, a, b)

    def box(self, assumptions, strict: bool = True, ids: tuple | None = None) -> Box | None:
        """The box of `assumptions` (of AST ids `ids`, where known); None if one is not a bound
        (`strict=False`: leave it out). Memoized: a Box is not changed once made (`copy` before adding)."""
        key = (tuple(a.get_id() for a in assumptions) if ids is None else ids, strict)
        if key not in self._boxes:
            self._boxes[key] = (list(assumptions), self._box(assumptions, strict))
        return self._boxes[key][1]

    def _box(self, assumptions, strict: bool) -> Box | None:
        box = Box()
        for a in assumptions:
            forms = self.nonnegatives(a) if strict else self.bounds_of(a)
            if forms is None:
                return None
            if not box.add(forms) and strict:
                return None
        return box
