"""Expression helpers that dispatch on the backend of their arguments.

A schedule's index formulas are written once with these helpers and Python's `+ - *` and are then
evaluated with Python ints, numpy int64 arrays, sympy symbols, Z3 terms or `Term` trees (the
prover's own syntax, which `ringproof.proofs.ring.normalize` rewrites into linear arithmetic).

`mod`/`div` are floor modulo and floor division by a *positive* divisor on every backend (Python's
`%`/`//` and Z3's `%`/`/` agree only there); comparisons go through `eq`, `lt`, ... so that Python's
`==` keeps its meaning on every backend.
"""

from __future__ import annotations

import operator
import sys
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any, Callable

from ringproof.errors import BadInput
from ringproof.schedules.operators import OPERATORS, require_complete


# --------------------------------------------------------------------------- Term trees


def user_line(*internal: str) -> str:
    """`file:line: ` of the innermost caller outside this module and the files `internal` (the
    schedule author's line that made the call), or "" if there is none."""
    skip = {__file__, *internal}
    frame = sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename in skip
                                 or frame.f_code.co_filename.startswith("<")):
        frame = frame.f_back
    from ringproof.schedules.usercode import shown

    return f"{shown(frame.f_code.co_filename)}:{frame.f_lineno}: " if frame is not None else ""


class SymbolicMisuse(BadInput, TypeError):
    """Python's own operation on a symbolic value: bad input (exit 64); also a TypeError, which is
    what Python code probing a value (`operator.index`, `bool`) expects from an unsupported type."""


def _refuse(what: str, use: str):
    """Refuse a Python operation on a symbolic value, naming the line of the caller that wrote it.

    Python would answer it from the Term's fields (`j == 1` is False for every j), so the prover
    would check a formula other than the one that runs: bad input, never a silent proof.
    """
    raise SymbolicMisuse(f"{user_line()}Python's {what} on a symbolic index value would not be what "
                         f"the prover checks: use {use}")


@dataclass(frozen=True, eq=False)
class Term:
    """A node of the prover's expression syntax: `op` applied to `args`.

    Leaves are ('var', name) and ('const', value). Arithmetic operators build nodes; logic and
    comparisons are built by the helpers of this module. Python's comparisons, truth value, `%`,
    `//`, `/` and conversions to numbers are refused (BadInput naming the line): they would be
    decided on the tree, not on the value. `same(a, b)` compares two trees; a Term hashes by
    identity.
    """

    op: str
    args: tuple

    __hash__ = object.__hash__

    def __add__(self, other):
        return Term("add", (self, lift(other)))

    def __radd__(self, other):
        return Term("add", (lift(other), self))

    def __sub__(self, other):
        return Term("add", (self, Term("neg", (lift(other),))))

    def __rsub__(self, other):
        return Term("add", (lift(other), Term("neg", (self,))))

    def __neg__(self):
        return Term("neg", (self,))

    def __mul__(self, other):
        return Term("mul", (self, lift(other)))

    def __rmul__(self, other):
        return Term("mul", (lift(other), self))

    def __repr__(self):
        return render(self)


# Python operations a Term refuses: the operation named in the message, the DSL helper to use.
_REFUSED = {
    "__eq__": ("==", "eq(a, b)"), "__ne__": ("!=", "ne(a, b)"), "__lt__": ("<", "lt(a, b)"),
    "__le__": ("<=", "le(a, b)"), "__gt__": (">", "gt(a, b)"), "__ge__": (">=", "ge(a, b)"),
    "__bool__": ("truth value (`if`, `and`, `or`, `not`)",
                 "ite(c, a, b) for values, and_/or_/not_ for conditions, guard= for a Step"),
    "__mod__": ("%", "mod(a, b)"), "__rmod__": ("%", "mod(a, b)"),
    "__floordiv__": ("//", "div(a, b)"), "__rfloordiv__": ("//", "div(a, b)"),
    "__truediv__": ("/", "div(a, b) (floor division)"), "__rtruediv__": ("/", "div(a, b) (floor division)"),
    "__divmod__": ("divmod()", "div(a, b) and mod(a, b)"), "__rdivmod__": ("divmod()", "div(a, b) and mod(a, b)"),
    "__pow__": ("**", "a * a"), "__rpow__": ("**", "a * a"), "__abs__": ("abs()", "ite(lt(a, 0), -a, a)"),
    "__float__": ("float()", "integer index formulas only"),
    "__int__": ("int()", "the formula itself (it is already an integer expression)"),
    "__index__": ("use as a Python index or range bound", "the formula itself, or a Loop bound"),
}


def _refusal(what: str, use: str):
    def refused(self, *args):
        _refuse(what, use)
    return refused


for _name, (_what, _use) in _REFUSED.items():
    setattr(Term, _name, _refusal(_what, _use))


def same(a, b) -> bool:
    """Structural equality of two Terms (or of plain values): the same tree, leaf for leaf."""
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        if x is y:
            continue
        if isinstance(x, Term) != isinstance(y, Term):
            return False
        if not isinstance(x, Term):
            if type(x) is not type(y) or x != y:
                return False
            continue
        if x.op != y.op or len(x.args) != len(y.args):
            return False
        todo.extend(zip(x.args, y.args))
    return True


def var(name: str) -> Term:
    return Term("var", (name,))


def const(value: int) -> Term:
    return Term("const", (int(value),))


def _numpy_scalar(x, kind: str) -> bool:
    """Is x a numpy scalar of `kind` ("bool_" or "integer")? (numpy is never imported for this:
    without it loaded there are no numpy values.)"""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, getattr(np, kind))


def lift(x) -> Term:
    if isinstance(x, Term):
        return x
    if isinstance(x, bool) or _numpy_scalar(x, "bool_"):
        return Term("bool", (bool(x),))
    if isinstance(x, int) or _numpy_scalar(x, "integer"):
        return const(int(x))
    raise TypeError(f"cannot mix {type(x).__name__} with a Term")


def _infix(sep: str):
    return lambda t: sep.join(_paren(a) for a in t.args)


def _render_add(t: Term) -> str:
    a, b = t.args
    if b.op == "neg":
        return f"{render(a)} - {_paren(b.args[0])}"
    return f"{render(a)} + {render(b)}"


def _compare(sep: str):
    """A comparison of two integers: arithmetic binds tighter, so its sides need no parentheses."""
    return lambda t: sep.join(render(a) for a in t.args)


def _render_eq(t: Term) -> str:
    """a = b, or `c | a` where it says a mod c = 0 (divisibility, as side conditions are written)."""
    a, b = t.args
    for x, zero in ((a, b), (b, a)):
        if x.op == "mod" and zero.op == "const" and zero.args[0] == 0:
            return f"{_factor(x.args[1])} | {_factor(x.args[0])}"
    return f"{render(a)} = {render(b)}"


def _factor(t: Term) -> str:
    """An operand of `|`: a variable, a number or c·x written cx (2m); anything else parenthesized."""
    if t.op == "mul" and t.args[0].op == "const" and t.args[1].op == "var" and t.args[0].args[0] > 0:
        return f"{t.args[0].args[0]}{t.args[1].args[0]}"
    return _paren(t)


# How each operator of `schedules/operators.py` is written in the paper's notation.
_RENDER = {
    "add": _render_add, "neg": lambda t: f"-{_paren(t.args[0])}", "mul": _infix("·"),
    "mod": lambda t: f"{_paren(t.args[0])} % {_paren(t.args[1])}",
    "div": lambda t: f"{_paren(t.args[0])} \\ {_paren(t.args[1])}",
    "ite": lambda t: f"({render(t.args[1])} if {render(t.args[0])} else {render(t.args[2])})",
    "eq": _render_eq, "lt": _compare(" < "), "le": _compare(" ≤ "),
    "and": _infix(" ∧ "), "or": _infix(" ∨ "), "not": lambda t: f"¬{_paren(t.args[0])}",
}
require_complete("expr.render", _RENDER)


def render(t: Term) -> str:
    """Render a Term in the paper's notation (for messages and reports)."""
    if t.op == "var":
        return t.args[0]
    if t.op in ("const", "bool"):
        return str(t.args[0])
    return _RENDER[t.op](t)


def evaluate(t: Term, env: dict):
    """Term t on another backend: variables from env, operators by this module's helpers."""
    op, a = t.op, t.args
    if op == "var":
        return env[a[0]]
    if op in ("const", "bool"):
        return a[0]
    return _HELPERS[op](*[evaluate(x, env) for x in a])


def _paren(t: Term) -> str:
    s = render(t)
    return s if t.op in ("var", "const", "bool", "ite") else f"({s})"


# --------------------------------------------------------------------------- backends


@dataclass(frozen=True)
class Backend:
    """The operations one backend provides. `handles(x)` says whether x belongs to it."""

    name: str
    handles: Callable[[Any], bool]
    mod: Callable
    div: Callable
    ite: Callable
    eq: Callable
    lt: Callable
    le: Callable
    and_: Callable
    or_: Callable
    not_: Callable

    def operations(self) -> dict[str, Callable]:
        """Every operator of `schedules/operators.py` on this backend, by name: Python's own
        `+ - *` where the operator has no helper, this backend's field otherwise."""
        return {**_PYTHON, **{op.name: getattr(self, op.helper) for op in OPERATORS.values() if op.helper}}


require_complete("expr.Backend fields", {op.name for op in OPERATORS.values()
                                         if op.helper in {f.name for f in fields(Backend)}},
                 refused={op.name for op in OPERATORS.values() if op.helper is None})

# The operators a Term builds with Python's own operators (no helper, no backend field).
_PYTHON = {"add": operator.add, "neg": operator.neg, "mul": operator.mul}
require_complete("expr: Python's operators", _PYTHON,
                 refused={op.name for op in OPERATORS.values() if op.helper is not None})


def _term_binary(op):
    return lambda a, b: Term(op, (lift(a), lift(b)))


_TERM = Backend(
    "term", lambda x: isinstance(x, Term),
    mod=_term_binary("mod"), div=_term_binary("div"),
    ite=lambda c, a, b: Term("ite", (lift(c), lift(a), lift(b))),
    eq=_term_binary("eq"), lt=_term_binary("lt"), le=_term_binary("le"),
    and_=lambda *xs: Term("and", tuple(lift(x) for x in xs)),
    or_=lambda *xs: Term("or", tuple(lift(x) for x in xs)),
    not_=lambda a: Term("not", (lift(a),)),
)


def _numpy_backend() -> Backend:
    import numpy as np

    def every(*xs):
        out = np.asarray(xs[0], dtype=bool)
        for x in xs[1:]:
            out = np.logical_and(out, x)
        return out

    def some(*xs):
        out = np.asarray(xs[0], dtype=bool)
        for x in xs[1:]:
            out = np.logical_or(out, x)
        return out

    def mod(a, b):
        """np.mod; by a positive int, a − b·(a div b): numpy divides an integer array by one
        number without a hardware division per element, about four times faster."""
        if isinstance(a, np.ndarray) and a.dtype.kind == "i" and type(b) is int and b > 0:
            return a - b * (a // b)
        return np.mod(a, b)

    return Backend(
        "numpy", lambda x: isinstance(x, np.ndarray),
        mod=mod, div=np.floor_divide, ite=np.where,
        eq=operator.eq, lt=operator.lt, le=operator.le,
        and_=every, or_=some, not_=np.logical_not,
    )


INT = Backend(
    "int", lambda x: isinstance(x, (int, bool)) or _numpy_scalar(x, "integer") or _numpy_scalar(x, "bool_"),
    mod=operator.mod, div=operator.floordiv,
    ite=lambda c, a, b: a if c else b,
    eq=operator.eq, lt=operator.lt, le=operator.le,
    and_=lambda *xs: all(xs), or_=lambda *xs: any(xs), not_=operator.not_,
)


def _sympy_backend() -> Backend:
    import sympy

    def is_sympy(x):
        return isinstance(x, sympy.Basic)

    conditions = (sympy.logic.boolalg.BooleanFunction, sympy.logic.boolalg.BooleanAtom, sympy.core.relational.Relational)

    def ite(c, a, b):
        if c is sympy.true or c is True:
            return a
        if c is sympy.false or c is False:
            return b
        if all(isinstance(sympy.sympify(x), conditions) for x in (a, b)):
            return sympy.Or(sympy.And(c, a), sympy.And(sympy.Not(c), b))     # a choice of conditions
        return sympy.Piecewise((a, c), (b, True))

    return Backend(
        "sympy", is_sympy,
        mod=sympy.Mod, div=lambda a, b: sympy.floor(a / b), ite=ite,
        eq=sympy.Eq, lt=sympy.Lt, le=sympy.Le,
        and_=sympy.And, or_=sympy.Or, not_=sympy.Not,
    )


# Checked in order: the first backend that handles any argument wins, so a Term mixed with ints is
# a Term and a numpy array mixed with ints is an array. A (module, factory) entry is built on first
# use once its module is loaded (before that no value of it can exist), so using the DSL imports
# neither sympy nor numpy.
_BACKENDS: list = [_TERM, ("sympy", _sympy_backend), ("numpy", _numpy_backend), INT]


@contextmanager
def extra_backend(backend: Backend):
    """`backend` (e.g. Z3's, in tests) checked ahead of the built-in ones inside the block only:
    outside it, which backend a value gets never depends on what an earlier caller did."""
    _BACKENDS.insert(0, backend)
    try:
        yield backend
    finally:
        _BACKENDS.remove(backend)


def backend_of(*args) -> Backend:
    for i, b in enumerate(_BACKENDS):
        if not isinstance(b, Backend):
            module, factory = b
            if module not in sys.modules:
                continue
            b = _BACKENDS[i] = factory()
        if any(b.handles(a) for a in args):
            return b
    raise TypeError(f"no backend for {[type(a).__name__ for a in args]}")


def mod(a, b):
    """Floor modulo a mod b for b > 0: the result lies in [0, b)."""
    return backend_of(a, b).mod(a, b)


def div(a, b):
    """Floor division a \\ b for b > 0."""
    return backend_of(a, b).div(a, b)


def ite(c, a, b):
    """If-then-else on values: a where c holds, else b. Of two Steps (`ringproof.schedules.dsl`):
    the step chosen per iteration, on every backend a `Choice` of both (the prover and the ring
    model split the phase into one form per branch)."""
    choose = getattr(a, "__ringproof_choice__", None) or getattr(b, "__ringproof_choice__", None)
    if choose is not None:
        return choose(c, a, b)
    return backend_of(c, a, b).ite(c, a, b)


def eq(a, b):
    return backend_of(a, b).eq(a, b)


def ne(a, b):
    return not_(eq(a, b))


def lt(a, b):
    return backend_of(a, b).lt(a, b)


def le(a, b):
    return backend_of(a, b).le(a, b)


def gt(a, b):
    return lt(b, a)


def ge(a, b):
    return le(b, a)


def and_(*xs):
    return backend_of(*xs).and_(*xs)


def or_(*xs):
    return backend_of(*xs).or_(*xs)


def not_(a):
    return backend_of(a).not_(a)


def between(lo, x, hi):
    """lo ≤ x ≤ hi."""
    return and_(le(lo, x), le(x, hi))


def wrap(x, m):
    """The 1-based ring position of x: ((x - 1) mod m) + 1, in [1, m]."""
    return mod(x - 1, m) + 1


# Each operator as the DSL helper (or Python operator) that builds it on any backend (`evaluate`).
_HELPERS = {**_PYTHON, **{op.name: globals()[op.helper] for op in OPERATORS.values() if op.helper}}
