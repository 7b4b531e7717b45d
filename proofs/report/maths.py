"""Counts typeset: a closed form (sympy text in n, m, d) as presentation MathML, which browsers render
with no script and nothing fetched; a piecewise form as a short table of its cases."""

from __future__ import annotations

import html

import sympy
from sympy.printing.mathml import MathMLPresentationPrinter

from ringproof.proofs.ring.counting import D, M, N

_LOCALS = {"n": N, "m": M, "d": D}


class _Printer(MathMLPresentationPrinter):
    """sympy's presentation printer, with `x mod m` infix (sympy writes mod(x, m))."""

    def _print_Mod(self, e):
        row = self.dom.createElement("mrow")
        for part in (self._print(e.args[0]), self._mo("mod"), self._print(e.args[1])):
            row.appendChild(part)
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
    body = "".join(f"<tr><td>{mathml(v)}</td><td>{'otherwise' if c is True else 'if ' + mathml(c)}</td></tr>"
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
