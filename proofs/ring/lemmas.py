"""The rewrite rules of the normalization, each a general lemma proven once in Z3.

Every rule `ringproof.proofs.ring.normalize` applies is an instance of one lemma below; the instance's side
condition (a range fact about one subterm) is discharged separately, under the query's assumptions.
A lemma's result is cached on disk by the SHA-256 of its SMT-LIB text, so a changed statement is
proven again and an unchanged one costs nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import z3

from ringproof.proofs.memos import pure
from ringproof.proofs.ring import budgets

MOD_WINDOWS = [(a, b) for a in range(-3, 1) for b in range(1, 5)]   # x ∈ [a·m, b·m)
BLOCK_WINDOWS = [(a, b) for a in range(-2, 1) for b in range(1, 4)]  # q ∈ [a·k, b·k)
CONST_DIVISORS = (2, 3)                                               # X div c with X = q·m + r
BLOCK_DIVISORS = (2, 3, 4)                                            # X div c·m (chunks of n/(c·m))


def div_const_cases(q, r, m, hq, hr, p, c: int):
    """Linear form of q·m + r = c·(hq·m + hr) + p for canonical r, hr and 0 ≤ p < c."""
    return z3.Or(*[z3.And(q - c * hq == t, r - c * hr - p == -t * m) for t in range(c)])


def carry(x, m, a: int, b: int):
    """c(x) = ⌊x / m⌋ for x ∈ [a·m, b·m), as an If-chain (linear when m is a variable)."""
    c = z3.IntVal(b - 1)
    for t in range(b - 2, a - 1, -1):
        c = z3.If(x < (t + 1) * m, z3.IntVal(t), c)
    return c


@dataclass(frozen=True)
class Lemma:
    name: str
    statement: z3.BoolRef
    doc: str

    def digest(self) -> str:
        return hashlib.sha256(self.statement.sexpr().encode()).hexdigest()


def _library() -> list[Lemma]:
    x, m, q, r, k, j, lo, jq, jr = z3.Ints("x m q r k j lo jq jr")
    out = []
    for a, b in MOD_WINDOWS:
        c = carry(x, m, a, b)
        out.append(Lemma(
            f"mod-window[{a},{b}]",
            z3.ForAll([x, m], z3.Implies(z3.And(m > 0, a * m <= x, x < b * m),
                                         z3.And(x % m == x - c * m, x / m == c))),
            f"x ∈ [{a}m, {b}m) ⇒ x mod m = x − c·m and x div m = c, c an If-chain"))
    for a, b in BLOCK_WINDOWS:
        c = carry(q, k, a, b)
        out.append(Lemma(
            f"block-window[{a},{b}]",
            z3.ForAll([q, r, k, m], z3.Implies(
                z3.And(k > 0, m > 0, 0 <= r, r < m, a * k <= q, q < b * k),
                z3.And((q * m + r) % (k * m) == (q - c * k) * m + r, (q * m + r) / (k * m) == c))),
            f"0 ≤ r < m, q ∈ [{a}k, {b}k) ⇒ (q·m + r) mod (k·m) = (q − c·k)·m + r"))
    hq, hr, p = z3.Ints("hq hr p")
    for c in CONST_DIVISORS:
        X = q * m + r
        out.append(Lemma(
            f"div-const[{c}]",
            z3.ForAll([q, r, m, hq, hr, p], z3.Implies(
                z3.And(m > 0, 0 <= r, r < m, 0 <= hr, hr < m, 0 <= p, p < c),
                (X == c * (hq * m + hr) + p) == div_const_cases(q, r, m, hq, hr, p, c))),
            f"the digits (hq, hr) of X div {c} and p = X mod {c} satisfy linear case constraints"))
        out.append(Lemma(
            f"div-const-exists[{c}]",
            z3.ForAll([q, r, m], z3.Implies(z3.And(m > 0, 0 <= r, r < m), z3.And(
                0 <= (X / c) % m, (X / c) % m < m, 0 <= X % c, X % c < c,
                X == c * (((X / c) / m) * m + (X / c) % m) + X % c))),
            f"X div {c} and X mod {c} always exist in that digit form"))
    t, e = z3.Ints("t e")
    for c in BLOCK_DIVISORS:
        X = (c * t + e) * m + r
        out.append(Lemma(
            f"block-const[{c}]",
            z3.ForAll([t, e, r, m], z3.Implies(z3.And(m > 0, 0 <= r, r < m, 0 <= e, e < c),
                                               z3.And(X / (c * m) == t, X % (c * m) == e * m + r))),
            f"0 ≤ r < m, 0 ≤ e < {c} ⇒ (({c}t + e)·m + r) div {c}m = t and mod {c}m = e·m + r"))
    out.append(Lemma(
        "digit-compare",
        z3.ForAll([q, r, m], z3.Implies(z3.And(m > 0, 0 <= r, r < m), z3.And(
            (q * m + r == 0) == z3.And(q == 0, r == 0), (q * m + r < 0) == (q < 0)))),
        "0 ≤ r < m ⇒ (q·m + r = 0 ⇔ q = 0 ∧ r = 0) and (q·m + r < 0 ⇔ q < 0)"))
    out.append(Lemma(
        "carry",
        z3.ForAll([q, r, m, x], z3.Implies(m > 0, q * m + r == (q + x) * m + (r - x * m))),
        "q·m + r = (q + c)·m + (r − c·m) for every c"))
    out.append(Lemma(
        "radix-swap",
        z3.ForAll([q, k, m], (q * k) * m == (q * m) * k),
        "(a·U)·m = (a·m)·U: a multiple of n moves between the digits of m and the blocks of U"))
    out.append(Lemma(
        "digit-split",
        z3.ForAll([j, lo, k, m], z3.Implies(
            z3.And(k > 0, m > 0),
            (z3.And(lo <= j, j <= lo + k * m - 1)) == z3.And(
                0 <= (j - lo) / m, (j - lo) / m < k,
                j == lo + ((j - lo) / m) * m + (j - lo) % m))),
        "j ∈ [lo, lo + k·m − 1] ⇔ j = lo + jq·m + jr with jq ∈ [0, k), jr ∈ [0, m)"))
    out.append(Lemma(
        "digit-split-box",
        z3.ForAll([jq, jr, lo, k, m], z3.Implies(
            z3.And(k > 0, m > 0, 0 <= jq, jq < k, 0 <= jr, jr < m),
            z3.And(lo <= lo + jq * m + jr, lo + jq * m + jr <= lo + k * m - 1,
                   (jq * m + jr) / m == jq, (jq * m + jr) % m == jr))),
        "the digits of lo + jq·m + jr are jq and jr"))
    return out


def cache_dir() -> Path:
    return Path(os.environ.get("RINGPROOF_CACHE", Path.home() / ".cache" / "ringproof"))


@dataclass(frozen=True)
class LemmaResult:
    name: str
    proved: bool
    seconds: float
    cached: bool
    reason: str = ""


def _read_cache(path: Path) -> dict:
    """The cache {SHA-256 of a lemma: True}, or {} (and so rebuilt) if it is missing, unreadable or
    of another shape: a broken file never breaks a run, and no entry is trusted that is not True."""
    try:
        cache = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(cache, dict):
        return {}
    return {k: True for k, v in cache.items()
            if isinstance(k, str) and len(k) == 64 and v is True}


@pure(2)
def _digested(library) -> tuple:
    """[(lemma, its digest)] of `library()`: the statements are constants, built and printed once
    per process (printing them is slow, and each fresh session reads the cache)."""
    return tuple((lemma, lemma.digest()) for lemma in library())


def prove_library(timeout_ms: int = 30000, use_cache: bool = True) -> list[LemmaResult]:
    """Prove every lemma (or take its cached result); a lemma not proved is reported, never assumed."""
    path = cache_dir() / "lemmas.json"
    cache = _read_cache(path) if use_cache else {}
    results, changed = [], not cache
    for lemma, key in _digested(_library):
        if cache.get(key) is True:
            results.append(LemmaResult(lemma.name, True, 0.0, True))
            continue
        fresh = z3.Context()        # a lemma's proof never depends on what the process did before
        s = z3.Solver(ctx=fresh)
        s.set("rlimit", budgets.LEMMA)
        s.set("timeout", timeout_ms)
        s.add(z3.Not(lemma.statement).translate(fresh))
        t0 = time.perf_counter()
        verdict = s.check()
        ok = verdict == z3.unsat
        results.append(LemmaResult(lemma.name, ok, time.perf_counter() - t0, False,
                                   "" if ok else f"z3 answered {verdict}"))
        if ok:
            cache[key] = True
            changed = True
    if changed and use_cache:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(cache, indent=0))
        except OSError:
            pass
    return results
