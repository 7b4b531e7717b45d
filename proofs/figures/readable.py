"""Counts for a person: a closed form split by the residue of n where it is piecewise in n.

`floor(n/2)` or `n mod 3` make sympy's closed forms long case analyses; in each residue class
n = c·ν + s they become polynomials, so `n even: …; n odd: …` reads where the whole does not. A form
that stays long is summarized with its value at a sample size; `--json` always has the full form.
"""

from __future__ import annotations

import math

import sympy

from ringproof.proofs.figures.counting import M, N, divisors_of

LIMIT = 160          # characters a printed form may take
SAMPLE = (8, 2)      # (n, m) a long form is evaluated at


def readable(e, limit: int = LIMIT) -> str:
    if e is None:
        return "not derived"
    text = str(e)
    if len(text) <= limit:
        return text
    parts = _by_residue(e)
    if parts and all(len(p) <= limit for p in parts):
        return "; ".join(parts)
    n, m = SAMPLE
    try:
        value = sympy.nsimplify(e.subs({N: n, M: m}).doit())
    except (TypeError, ValueError):
        value = "?"
    return f"a closed form of {len(text)} characters (full form with --json); at n={n}, m={m}: {value}"


def _by_residue(e) -> list[str]:
    divisors = divisors_of(e, N)
    if not divisors:
        return []
    c = math.lcm(*divisors)
    nu = sympy.Symbol("_nu", integer=True, nonnegative=True)
    out = []
    for s in range(c):
        form = e.xreplace({N: c * nu + s}).xreplace({nu: (N - s) / c})      # floor and mod of n by c fold away
        if form.has(nu):
            return []
        out.append(f"{_label(c, s)}: {form}")
    return out


def _label(c: int, s: int) -> str:
    if c == 2:
        return "n even" if s == 0 else "n odd"
    return f"n ≡ {s} (mod {c})"
