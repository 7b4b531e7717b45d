"""A sympy closed form as a Z3 term, for proofs about the derived forms (bound.py, gaps.py).

Integer-valued pieces stay integers: ⌈e⌉ and ⌊e⌋ become one fresh Int per distinct sympy term, tied
to e by c − 1 < e ≤ c (⌊⌋: f ≤ e < f + 1), Mod(a, b) (b > 0) a − b·⌊a/b⌋; Max, Min and Piecewise
become nested Ifs. The side conditions the fresh Ints need are collected in `side`: a claim is
proved under them (they define the Ints, they restrict nothing else).
"""

from __future__ import annotations

import sympy as sp
import z3

from ringproof.errors import BadInput


class ToZ3:
    def __init__(self, env: dict):
        self.env, self.side, self.made = dict(env), [], {}

    def __call__(self, e):
        if e is sp.true:
            return z3.BoolVal(True)
        if e is sp.false:
            return z3.BoolVal(False)
        if e.is_Integer:
            return z3.IntVal(int(e))
        if e.is_Rational:
            return z3.RealVal(int(e.p)) / z3.RealVal(int(e.q))
        if e.is_Symbol:
            return self.env[str(e)]
        if e.is_Add:
            return sum((self(a) for a in e.args[1:]), self(e.args[0]))
        if e.is_Mul:
            out = self(e.args[0])
            for a in e.args[1:]:
                out = out * self(a)
            return out
        if e.is_Pow and e.exp.is_Integer and e.exp > 0:
            b = self(e.base)
            out = b
            for _ in range(int(e.exp) - 1):
                out = out * b
            return out
        if e.is_Pow and e.exp == -1:
            return 1 / _real(self(e.base))
        if isinstance(e, (sp.ceiling, sp.floor)):
            return self._rounded(e)
        if isinstance(e, sp.Mod):
            a, b = e.args
            return self(a) - self(b) * self._rounded(sp.floor(a / b))
        if isinstance(e, (sp.Max, sp.Min)):
            args = [self(a) for a in e.args]
            out = args[0]
            for a in args[1:]:
                out = z3.If(out >= a, out, a) if isinstance(e, sp.Max) else z3.If(out <= a, out, a)
            return out
        if isinstance(e, sp.Piecewise):
            out = None
            for value, cond in reversed(e.args):
                v = self(value)
                out = v if out is None else z3.If(self(cond), v, out)
            return out
        if isinstance(e, sp.Eq):
            return self(e.lhs) == self(e.rhs)
        if isinstance(e, sp.Ne):
            return self(e.lhs) != self(e.rhs)
        if isinstance(e, (sp.Le, sp.Lt, sp.Ge, sp.Gt)):
            a, b = self(e.lhs), self(e.rhs)
            return {sp.Le: a <= b, sp.Lt: a < b, sp.Ge: a >= b, sp.Gt: a > b}[type(e)]
        if isinstance(e, (sp.And, sp.Or)):
            parts = [self(a) for a in e.args]
            return z3.And(*parts) if isinstance(e, sp.And) else z3.Or(*parts)
        raise BadInput(f"closed form has {type(e).__name__} {e}, which the Z3 translation does not read")

    def _rounded(self, e):
        """One Int per distinct ⌈e⌉ / ⌊e⌋ (they are functions of e)."""
        if e not in self.made:
            inner = self(e.args[0])
            c = self.made[e] = z3.FreshInt("ceil" if isinstance(e, sp.ceiling) else "floor")
            self.side += [c - 1 < inner, inner <= c] if isinstance(e, sp.ceiling) else [c <= inner, inner < c + 1]
        return self.made[e]


def _real(t):
    return z3.ToReal(t) if z3.is_int(t) else t
