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


_S = sympy.Symbol("S")        # all-gather's tokens per rank (not sympy's S singleton)


def parse(text: str) -> sympy.Expr | None:
    """A form's sympy text read back: n, m, d the counts' symbols; L[i] (l[i]) a document's
    (real) length in a sum over the documents, S the tokens per rank."""
    local = {**_LOCALS, "S": _S}
    for name in ("L", "l"):
        if f"{name}[" in text:
            local[name] = sympy.IndexedBase(name)
    try:
        return sympy.sympify(text, locals=local)
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


def plain(text_form: str | None) -> str:
    """One count for Markdown: sympy's one-line form with · and ⌊ ⌋, no Python syntax (a sum over
    the documents as `text` writes it)."""
    if text_form is None:
        return "—"
    expr = parse(text_form)
    if expr is None:
        return text_form
    if expr.has(sympy.Sum) or expr.atoms(sympy.Indexed):      # a sum over the documents: Σ_{i=1}^{D} …
        return text(text_form, None)
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


# ------------------------------------------------------------------ forms in words, for the terminal

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


class _Text(sympy.printing.str.StrPrinter):
    """sympy's one-line printer, for people: n³ for n**3, · for *, ⌊x⌋ ⌈x⌉ for floor and ceiling,
    `x mod m`, ≤ ≥ ≠, `and`, and cases as {v if c; w otherwise}."""

    def _print_Pow(self, e, rational=False):
        base, exp = e.args
        if exp.is_Integer and exp > 1:
            b = self._print(base)
            b = b if base.is_Atom else f"({b})"
            return b + str(exp).translate(_SUPERSCRIPT)
        return super()._print_Pow(e, rational)

    def _print_floor(self, e):
        return f"⌊{self._print(e.args[0])}⌋"

    def _print_ceiling(self, e):
        return f"⌈{self._print(e.args[0])}⌉"

    def _print_Mod(self, e):
        a, b = (self._print(x) if x.is_Atom or isinstance(x, sympy.Pow) else f"({self._print(x)})" for x in e.args)
        return f"({a} mod {b})"

    def _print_Relational(self, e):
        op = {"==": "=", "!=": "≠", "<=": "≤", ">=": "≥"}.get(e.rel_op, e.rel_op)
        return f"{self._print(e.lhs)} {op} {self._print(e.rhs)}"

    def _print_And(self, e):
        return " and ".join(self._print(a) for a in e.args)

    def _print_Or(self, e):
        return " or ".join(f"({self._print(a)})" if isinstance(a, sympy.And) else self._print(a) for a in e.args)

    def _print_Sum(self, e):
        """Σ_{i=1}^{D} (body): a sum over the documents, as a reader writes it."""
        body = self._print(e.function)
        limits = "".join(f"Σ_{{{self._print(i)}={self._print(a)}}}^{{{self._print(b)}}} " for i, a, b in e.limits)
        return limits + (body if e.function.is_Atom or isinstance(e.function, (sympy.Indexed, sympy.Pow, sympy.Piecewise))
                         else f"({body})")

    def _print(self, expr, **kwargs):
        if isinstance(expr, sympy.Indexed):     # L_i (Indexed prints itself as L[i] before any _print_ method)
            return f"{self._print(expr.base.label)}_{'_'.join(self._print(i) for i in expr.indices)}"
        return super()._print(expr, **kwargs)

    def _print_Piecewise(self, e):
        parts = [f"{self._print(v)} otherwise" if c == sympy.true else f"{self._print(v)} if {self._print(c)}"
                 for v, c in e.args]
        return "{" + "; ".join(parts) + "}"


def text(form: str | None, limit: int | None = 160) -> str:
    """One closed form (sympy text) in words and signs a reader knows: `2·n³/m`, `⌊n/2⌋`, cases
    as {v if c; w otherwise}; longer than `limit` characters, its length (--json has it whole).
    Text sympy cannot read is returned as it is."""
    if form is None:
        return "—"
    expr = parse(form)
    if expr is None:
        return form
    out = _Text().doprint(expr).replace("*", "·")
    out = __import__("re").sub(r"\(\(([^()]+ mod [^()]+)\)\)", r"(\1)", out)     # (x mod m) once
    if limit is not None and len(out) > limit:
        return f"a closed form of {len(out)} characters (full form with --json)"
    return out


_FORM_FIELDS = {"balance": ("spread", "derived", "per_pe", "per_phase", "per_step"),
                "memory": ("closed_form", "derived", "inputs_on_pe")}


def load_lines(balance: dict | None, memory: dict | None, show=text, escape=None) -> list[str]:
    """The balance and memory lines (`spread.readable`, `held.readable`) with every closed form in
    them put by `show` (default `text`; the HTML report passes MathML): the forms are handed to the
    line writers as placeholders, so that each is found exactly, never guessed from the words."""
    import re

    from ringproof.proofs.figures import spread
    from ringproof.proofs.figures.memory import held

    forms: list[str] = []

    def hold(v):
        if isinstance(v, dict):
            return {k: hold(x) for k, x in v.items()}
        if not isinstance(v, str) or parse(v) is None or not parse(v).free_symbols:
            return v
        forms.append(v)
        return f"Rpform{len(forms) - 1}x"

    lines = []
    for details, fields, write in ((balance, _FORM_FIELDS["balance"], spread.readable),
                                   (memory, _FORM_FIELDS["memory"], held.readable)):
        if details:
            held_back = {k: hold(v) if k in fields else v for k, v in details.items()}
            lines.append(write(held_back))
    if escape is not None:               # the words escaped (HTML), the forms put in as `show` makes them
        lines = [escape(line) for line in lines]
    return [re.sub(r"Rpform(\d+)x", lambda m: show(forms[int(m[1])]), line) for line in lines]


def text_parts(value: str) -> str:
    """A count as the prover's `readable` gives it (a form, `n even: form; n odd: form`, or a
    summary in words) with each form in it put as `text` puts it."""
    if parse(value) is not None:
        return text(value, None)
    parts = []
    for part in value.split("; "):
        label, sep, form = part.rpartition(": ")
        parts.append(f"{label}{sep}{text(form, None)}" if sep and parse(form) is not None else part)
    return "; ".join(parts)


_FUNCS = {"Piecewise", "Mod", "Max", "Min", "floor", "ceiling", "Eq", "Ne", "True", "False", "Sum", "Abs"}
_RUN = __import__("re").compile(r"[\w\s*+\-/()<>=!&|,.]+")


def _formula_like(span: str) -> bool:
    """Could `span` be one sympy form? An operator or a known function, balanced parentheses, and
    no two words side by side or word of three letters or more that is no function (prose)."""
    import re

    if span.count("(") != span.count(")") or not re.search(r"\*|/|\b(?:Piecewise|Mod|floor|ceiling|Max|Min)\(", span):
        return False
    if re.search(r"[A-Za-z_]\w*\s+[A-Za-z_]\w*", span):
        return False
    return all(w in _FUNCS or len(w) <= 2 or re.fullmatch(r"[a-z]\d*", w)
               for w in re.findall(r"[A-Za-z_]\w*", span))


def in_words(line: str, show=text) -> str:
    """A line of the prover's prose with each sympy form in it (the longest span at each place that
    reads as one) put by `show`: `k**2*m + k*Piecewise(...)` as `k²·m + k·{…}`."""
    out, i = [], 0
    while i < len(line):
        run = _RUN.match(line, i)
        if run is None:
            out.append(line[i])
            i += 1
            continue
        j, text_run, done = run.end(), line[i:run.end()], False
        starts = [k for k in range(len(text_run)) if (k == 0 or not text_run[k - 1].isalnum())
                  and (text_run[k].isalnum() or text_run[k] == "(")]
        pos = 0
        pieces = []
        for k in starts:
            if k < pos:
                continue
            for e in range(len(text_run), k, -1):
                span = text_run[k:e].rstrip(" ,.")
                if not span or (e < len(text_run) and text_run[e - 1].isalnum() and text_run[e].isalnum()):
                    continue
                if _formula_like(span) and (expr := parse(span)) is not None and getattr(expr, "free_symbols", None):
                    pieces += [text_run[pos:k], show(span)]
                    pos = k + len(span)
                    break
        pieces.append(text_run[pos:])
        out.append("".join(pieces))
        i = j
    return "".join(out)
