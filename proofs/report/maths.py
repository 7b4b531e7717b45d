"""Counts typeset: a closed form (sympy text in n, m, d) as presentation MathML, which browsers render
with no script and nothing fetched; a piecewise form as a short table of its cases."""

from __future__ import annotations

import html
import itertools

import sympy
from sympy.printing.mathml import MathMLPresentationPrinter

from ringproof.proofs.figures.counting import D, M, N

_LOCALS = {"n": N, "m": M, "d": D}


class _Printer(MathMLPresentationPrinter):
    """sympy's presentation printer, with `x mod m` infix (sympy writes mod(x, m))."""

    def _print_Mod(self, e):
        row = self.dom.createElement("mrow")
        for part in (self._print(e.args[0]), self._mo("mod"), self._print(e.args[1])):
            row.appendChild(part)
        return row

    def _print_Piecewise(self, e):
        """{ value if condition / value otherwise: a brace and a two-column table."""
        table = self.dom.createElement("mtable")
        table.setAttribute("columnalign", "left left")
        for value, cond in e.args:
            tr = self.dom.createElement("mtr")
            for part in (self._print(value), self._case(cond)):
                td = self.dom.createElement("mtd")
                td.appendChild(part)
                tr.appendChild(td)
            table.appendChild(tr)
        row = self.dom.createElement("mrow")
        brace = self._mo("{")
        brace.setAttribute("stretchy", "true")
        row.appendChild(brace)
        row.appendChild(table)
        return row

    def _case(self, cond):
        row = self.dom.createElement("mrow")
        text = self.dom.createElement("mtext")
        text.appendChild(self.dom.createTextNode("\u2003otherwise" if cond == sympy.true else "\u2003if\u2002"))
        row.appendChild(text)
        if cond != sympy.true:
            row.appendChild(self._print(cond))
        return row

    def _mo(self, text):
        mo = self.dom.createElement("mo")
        mo.appendChild(self.dom.createTextNode(text))
        return mo


def parse(text: str) -> sympy.Expr | None:
    try:
        return sympy.sympify(text, locals=_LOCALS)
    except (sympy.SympifyError, SyntaxError, TypeError):
        return None


def mathml(expr) -> str:
    """<math> of a sympy expression (a Piecewise as cases: see `cases`)."""
    return f"<math>{_Printer().doprint(expr)}</math>"


def cases(expr) -> list[tuple[sympy.Expr, object]]:
    """[(value, condition)] of a top-level Piecewise, else [(expr, True)]."""
    if isinstance(expr, sympy.Piecewise):
        return [(v, c) for v, c in expr.args]
    return [(expr, True)]


def typeset(text: str | None) -> str:
    """HTML of one count: MathML, a Piecewise as a small table of cases ('otherwise' for the last);
    text that sympy cannot read is shown as code."""
    if text is None:
        return "—"
    expr = parse(text)
    if expr is None:
        return f"<code>{html.escape(text)}</code>"
    rows = cases(expr)
    if len(rows) == 1:
        return mathml(expr)
    body = "".join(f"<tr><td>{mathml(v)}</td><td>{'otherwise' if c in (True, sympy.true) else 'if ' + mathml(c)}</td></tr>"
                   for v, c in rows)
    return f"<table class='cases'>{body}</table>"


def plain(text: str | None) -> str:
    """One count for Markdown: sympy's one-line form with · and ⌊ ⌋, no Python syntax."""
    if text is None:
        return "—"
    expr = parse(text)
    if expr is None:
        return text
    out = sympy.sstr(expr).replace("**", "^").replace("*", "·")
    return out


# ------------------------------------------------------------------ per class of n/m and m

_A, _B = sympy.symbols("A B", integer=True, nonnegative=True)
CHECK_M, CHECK_N = 12, 60       # each class form is compared with the proved form up to these sizes


def _polynomial(p, gens):
    try:
        return sympy.Poly(sympy.expand(p), *gens)
    except sympy.PolynomialError:
        return None


def _nonneg(p, gens) -> bool:
    """p ≥ 0 wherever every generator is ≥ 0: each coefficient of p is a non-negative number."""
    poly = _polynomial(p, gens)
    return poly is not None and all(c.is_number and c >= 0 for c in poly.coeffs())


def _intdiv(num, den, gens):
    """(quotient, remainder) of polynomials, the quotient taking only terms with integer
    coefficients (grevlex order); the rest stays in the remainder."""
    p, q = sympy.Poly(num, *gens), sympy.Poly(den, *gens)
    lead, qc = q.terms(order="grevlex")[0]
    quot = rem = sympy.Integer(0)
    while not p.is_zero:
        mono, c = p.terms(order="grevlex")[0]
        ratio = c / qc
        term = sympy.Mul(*[g ** e for g, e in zip(gens, mono)])
        if all(e >= f for e, f in zip(mono, lead)) and ratio.is_integer:
            t = ratio * sympy.Mul(*[g ** (e - f) for g, e, f in zip(gens, mono, lead)])
            quot, p = quot + t, p - sympy.Poly(t, *gens) * q
        else:
            rem, p = rem + c * term, p - sympy.Poly(c * term, *gens)
    return quot, rem


def _integer_valued(x, gens) -> bool:
    """A polynomial with rational coefficients is integer at every integer point iff it is on a
    grid of deg + 1 consecutive integers per variable (its finite differences)."""
    poly = _polynomial(x, gens)
    if poly is None:
        return False
    deg = poly.total_degree()
    return all(sympy.expand(x).subs(dict(zip(gens, point))).is_integer
               for point in itertools.product(range(deg + 1), repeat=len(gens)))


def _floor(x, gens):
    """floor(x) as a polynomial when provable: P = Q·q + r with 0 ≤ r < Q for all non-negative
    generators, or x integer-valued; else None."""
    num, den = sympy.fraction(sympy.together(sympy.expand(x)))
    if not (num.free_symbols | den.free_symbols) <= set(gens):
        return None
    try:
        q, r = _intdiv(sympy.expand(num), sympy.expand(den), gens)
    except (sympy.PolynomialError, IndexError):
        return None
    if _nonneg(r, gens) and _nonneg(den - r - 1, gens):
        return q
    return sympy.expand(x) if den.is_number and _integer_valued(x, gens) else None


def _without_floors(e, gens):
    while True:
        for f in sorted(e.atoms(sympy.floor), key=sympy.count_ops):
            v = _floor(f.args[0], gens)
            if v is not None:
                e = e.xreplace({f: v})
                break
        else:
            return e


def _closed(e) -> bool:
    return not e.has(sympy.floor, sympy.ceiling, sympy.Mod, sympy.Piecewise)


def closed_text(text: str) -> bool:
    """A count's text has no floor, mod or cases left."""
    e = parse(text)
    return e is not None and _closed(e)


def class_forms(text: str, square: bool = True) -> list[dict] | None:
    """A count with floor, mod or cases in n and m, in each class of n/m mod 2 and m mod 2, as one
    polynomial (over m) per class: n = (2A + a)(2B + b), m = 2B + b, each floor removed where the
    division is proved to leave a remainder in [0, divisor) for all A, B ≥ 0 (or the argument is
    integer-valued), and the result compared with the proved form at every n ≤ CHECK_N, m ≤
    CHECK_M of its class. None when a class does not close or a comparison fails."""
    expr = parse(text)
    if expr is None or _closed(expr) or (not square and expr.has(D) and any(
            f.has(D) for f in expr.atoms(sympy.floor, sympy.Mod))):
        return None
    gens = (_A, _B) + ((D,) if expr.has(D) else ())
    expr_f = expr.replace(lambda x: isinstance(x, sympy.Mod),
                          lambda x: x.args[0] - x.args[1] * sympy.floor(x.args[0] / x.args[1]))
    out = []
    for a, b in itertools.product((0, 1), (0, 1)):
        e = expr_f.subs({N: (2 * _A + a) * (2 * _B + b), M: 2 * _B + b})
        for _ in range(6):
            e = sympy.piecewise_fold(_without_floors(e, gens))
            if isinstance(e, sympy.Piecewise):
                e = sympy.Piecewise(*[(sympy.simplify(v), sympy.simplify(c)) for v, c in e.args])
            e = sympy.simplify(e)
            if _closed(e):
                break
        if not _closed(e):
            return None
        form = sympy.factor(sympy.expand(e.subs({_A: (N / M - a) / 2, _B: (M - b) / 2})))
        for m in range(1, CHECK_M + 1):
            if m % 2 != b:
                continue
            for n in range(m, CHECK_N + 1, m):
                for d in ((n,) if square or not expr.has(D) else range(m, 3 * m + 1, m)):
                    if (n // m) % 2 == a and _at(form, n, m, d) != _at(expr, n, m, d):
                        return None
        out.append({"class": f"n/m {('even', 'odd')[a]}, m {('even', 'odd')[b]}", "formula": str(form)})
    return _merged(out)


def _at(e, n: int, m: int, d: int):
    """e at n, m, d: the numbers put in with `xreplace`, whose constructors evaluate floor, mod and
    cases (a tenth of `subs`'s time, the same value at every size a class form is compared at), by
    `subs` where that leaves no number."""
    point = {N: sympy.Integer(n), M: sympy.Integer(m), D: sympy.Integer(d)}
    v = e.xreplace(point)
    return v if v.is_Number else e.subs(point)


def _merged(forms: list[dict]) -> list[dict]:
    """Classes with one formula said once ('n/m even' for both parities of m)."""
    by = {}
    for f in forms:
        by.setdefault(f["formula"], []).append(f["class"])
    out = []
    for formula, classes in by.items():
        if len(classes) == 2 and classes[0].split(", ")[0] == classes[1].split(", ")[0]:
            label = classes[0].split(", ")[0]
        elif len(classes) == 2 and classes[0].split(", ")[1] == classes[1].split(", ")[1]:
            label = classes[0].split(", ")[1]
        else:
            label = "; ".join(classes) if len(classes) < 4 else "all n, m"
        out.append({"class": label, "formula": formula})
    return out
