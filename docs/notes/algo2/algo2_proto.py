"""Algorithm 2 of Yu & Fujita (symmetric attention, q = k = v = x), repaired, as index formulas.

Every formula is written with the helpers below (mod/div = floor mod/div by a positive divisor,
ite/eq/lt/.../and_/or_/not_/min_/max_) so that it evaluates unchanged on Python ints, numpy arrays,
sympy and Z3 terms: no Python `if` on index values, no `%`/`//` on possibly negative numbers.
Each step lists its alternatives as *cases* with a guard (exactly one guard holds per iteration).

Phases (run one after another; l in [1, m] is the parallel PE index):
  '1'  : h in [0, n div 2], i in [1, k], j in [1, n + e(h)], l      MAC (j <= n) / MOVE (j > n)
          h = 1..h' (h' = (n-1) div 2) are the paired diagonals, h = 0 the main diagonal and,
          for even n, h = n/2 the half-wrapped diagonal computed completely (d*n/2 redundant MACs).
  '2a' : i in [1, k], j in [1, n], l     EAC s[A] += exp(w1[A,B])   (Algorithm 1, phase 2 step 1)
  '2b' : i in [1, k], j in [1, n], l     DIV w[A,B] = exp(w1[A,B]) / s[A]   (step 2)
  '3'  : h in [1, n], i in [1, k], j in [1, n], l   MAC y[h,C] += w[h,B] * x[B,C]

Inputs: x[A, C] on PE ((C-1) mod m) + 1 (by column, as in Algorithm 1).

mode = 'alias' (default): a pair of diagonals h ≡ 0 (mod m), 1 <= h < n/2, has its mirror on the
  SAME PE as the computed element; no copy is made and phases 2a/2b read the computed element
  w1[B, A] in place of w1[A, B] (operand name formula `w1_name`).  Costs 0 cycles.
mode = 'circle': the mirror copy goes once round the ring (m hops, m-1 MOVE cycles per block)
  and phases 2a/2b read w1[A, B] literally, exactly as in Algorithm 1.

`defects` put back printed defects (see PRINTED_DEFECTS / NOTES.md); `printed()` = all of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

# ----------------------------------------------------------------------------- helpers (backends)


def _kind(*xs):
    for x in xs:
        t = type(x).__module__
        if t.startswith("z3"):
            return "z3"
    for x in xs:
        if type(x).__module__.startswith("sympy"):
            return "sympy"
    for x in xs:
        if isinstance(x, np.ndarray):
            return "np"
    return "int"


def mod(a, b):
    """floor modulo, b > 0: result in [0, b)."""
    k = _kind(a, b)
    if k == "z3":
        import z3
        return a % b                      # Z3 int % is Euclidean == floor mod for b > 0
    if k == "sympy":
        import sympy
        return sympy.Mod(a, b)
    return np.mod(a, b) if k == "np" else a % b


def div(a, b):
    """floor division, b > 0."""
    k = _kind(a, b)
    if k == "z3":
        return a / b                      # Z3 int division is Euclidean == floor for b > 0
    if k == "sympy":
        import sympy
        return sympy.floor(a / b)
    return np.floor_divide(a, b) if k == "np" else a // b


def ite(c, a, b):
    """if-then-else on values (also on Python objects when c is a concrete bool)."""
    k = _kind(c, a, b) if not isinstance(a, (tuple, str)) else _kind(c)
    if k == "z3":
        import z3
        return z3.If(c, a, b)
    if k == "sympy":
        import sympy
        return sympy.Piecewise((a, c), (b, True))
    if k == "np":
        return np.where(c, a, b)
    return a if c else b


def eq(a, b):
    k = _kind(a, b)
    if k == "sympy":
        import sympy
        return sympy.Eq(a, b)
    return a == b


def ne(a, b):
    return not_(eq(a, b))


def lt(a, b):
    return a < b


def le(a, b):
    return a <= b


def gt(a, b):
    return a > b


def ge(a, b):
    return a >= b


def and_(*xs):
    k = _kind(*xs)
    if k == "z3":
        import z3
        return z3.And(*xs)
    if k == "sympy":
        import sympy
        return sympy.And(*xs)
    if k == "np":
        out = np.asarray(xs[0], dtype=bool)
        for x in xs[1:]:
            out = np.logical_and(out, x)
        return out
    return all(bool(x) for x in xs)


def or_(*xs):
    k = _kind(*xs)
    if k == "z3":
        import z3
        return z3.Or(*xs)
    if k == "sympy":
        import sympy
        return sympy.Or(*xs)
    if k == "np":
        out = np.asarray(xs[0], dtype=bool)
        for x in xs[1:]:
            out = np.logical_or(out, x)
        return out
    return any(bool(x) for x in xs)


def not_(a):
    k = _kind(a)
    if k == "z3":
        import z3
        return z3.Not(a)
    if k == "sympy":
        import sympy
        return sympy.Not(a)
    return np.logical_not(a) if k == "np" else (not a)


def min_(a, b):
    return ite(le(a, b), a, b)


def max_(a, b):
    return ite(le(a, b), b, a)


def wrap(x, m):
    """1-based ring position ((x-1) mod m) + 1."""
    return mod(x - 1, m) + 1


def cmod(a, b):
    """C's `%` (remainder with the sign of the dividend): ONLY for the printed variant (ints)."""
    return int(math.fmod(a, b))


# ----------------------------------------------------------------------------- references / steps

def ref(array, *idx):
    return (array,) + tuple(idx)


def ref_ite(c, r1, r2):
    """ite on two references to the same array, index by index."""
    assert r1[0] == r2[0]
    return (r1[0],) + tuple(ite(c, a, b) for a, b in zip(r1[1:], r2[1:]))


HOME = "HOME"


@dataclass(frozen=True)
class At:
    phase: str
    idx: tuple          # ((name, value), ...) including l

    def __repr__(self):
        return f"At({self.phase!r}, {', '.join(f'{k}={v}' for k, v in self.idx)})"


def at(phase, **idx):
    return At(phase, tuple(idx.items()))


@dataclass(frozen=True)
class Either:
    cond: object
    then: object
    other: object


def resolve(w):
    """Evaluate an Either-tree of witnesses for concrete indices."""
    while isinstance(w, Either):
        w = w.then if w.cond else w.other
    return w


@dataclass
class Send:
    datum: tuple
    kind: str            # 'move' | 'copy'
    as_: tuple | None = None
    when: object = True

    @property
    def stored(self):
        return self.as_ if self.as_ is not None else self.datum


@dataclass
class Step:
    guard: object
    pe: object
    op: str                      # MAC | EAC | DIV | MOVE
    target: tuple | None
    operands: tuple
    sends: tuple = ()            # alternatives with disjoint `when`; at most one fires
    first: object = None
    prev: object = None
    sources: tuple = ()          # one witness per operand
    line: str = ""               # printed line(s) this case corresponds to


PRINTED_DEFECTS = (
    "C-mod",        # l.8   (j-1)%m·m where (j-1)\m·m is meant
    "assign",       # l.13  w'_AB = x_A[C]·x_B[C] where += is meant
    "jn-move",      # l.16  at j = n the own accumulator w'_AB is *transferred* (= moved away)
    "else-h",       # l.19  `else` read as belonging to `if h >= 1` (no transfer for j < n)
    "extra-loop",   # l.14-34: j = n hop + p' more hops (p+1 hops), store only if h%m = 1 at j = n
    "E-block",      # l.26  E = (l-p-1)%m + (i-1)m + 1: block convention of l.25 of Algo 1, not l.7
    "no-alias",     # h%m = 0 (1 <= h < n/2): no mirror is ever made, phase 2 reads w1[A,B]
    "trunc-B",      # l.7  `%` as C remainder: ((l-j)%m + (i-1)m - 1)%n + 1 can be <= 0
    "trunc-A",      # l.12 `%` as C remainder: (B - h - 1)%n + 1 can be <= 0
    "trunc-E",      # l.26 `%` as C remainder: (l - p - 1)%m can be < 0
)
# 'else-h' and 'jn-move' are alternative literal readings; 'printed()' uses jn-move (the text says
# "transfer", which on this machine moves an accumulator) and the else <-> `if j = n` pairing.
PRINTED_LITERAL = ("C-mod", "assign", "jn-move", "extra-loop", "E-block", "no-alias")


def params(n, m, mode="alias", defects=()):
    assert n >= 1 and m >= 1 and n % m == 0
    bad = set(defects) - set(PRINTED_DEFECTS)
    assert not bad, bad
    return SimpleNamespace(n=n, m=m, k=n // m, d=n, mode=mode, defects=frozenset(defects))


def _m(P, a, b, line):
    """`%` of the printed text where a may be negative: floor mod, or C remainder ('trunc-<line>')."""
    return cmod(a, b) if "trunc-" + line in P.defects else mod(a, b)


# ----------------------------------------------------------------------------- index formulas

def h_last(P):
    """h' (l.2): last paired group; groups run h = 0..n div 2 (h = n/2: even-n half group)."""
    return div(P.n - 1, 2)


def is_half(P, h):
    return eq(2 * h, P.n)


def plus(P, h):
    """l.9: (h mod m) <= m/2  ->  A ≡ B + h; else A ≡ B - h (reuse copy travels forward)."""
    return le(2 * mod(h, P.m), P.m)


def hops(P, h):
    """Hops the reuse copy of group h travels: min(h mod m, m - h mod m) (l.24: p').
    0 for h = 0 and the even-n half group (both triangles computed); for h mod m = 0:
    0 ('alias') or m ('circle')."""
    n, m = P.n, P.m
    r = mod(h, m)
    base = min_(r, m - r)
    if P.mode == "circle":
        base = ite(eq(r, 0), m, base)
    return ite(or_(eq(h, 0), is_half(P, h)), 0, base)


def extra(P, h):
    """MOVE cycles appended to every block (h, i): e(h) = max(hops - 1, 0).
    printed ('extra-loop'): p' cycles when h mod m > 1, else 0."""
    if "extra-loop" in P.defects:
        r = mod(h, P.m)
        pp = ite(le(2 * r, P.m), r, P.m - r)
        return ite(and_(gt(r, 1), not_(is_half(P, h))), pp, 0)
    return max_(hops(P, h) - 1, 0)


def _tri(x):
    return div(x * (x + 1), 2)


def _S(P):
    """Σ_{r=0}^{m-1} g(r), g(r) = max(min(r, m-r) - 1, 0):  floor(m²/4) - m + 1."""
    m = P.m
    return div(m * m, 4) - m + 1


def _Ppart(P, rho):
    """Σ_{r=0}^{rho-1} g(r) for 0 <= rho < m."""
    m = P.m
    c = div(m, 2)
    return ite(le(rho, c + 1), _tri(max_(rho - 2, 0)), _S(P) - _tri(max_(m - rho - 1, 0)))


def ecum(P, h):
    """Σ_{u=0}^{h-1} e(u) for 0 <= h <= h'+1 (closed form; checked against the sum)."""
    m = P.m
    s = div(h, m) * _S(P) + _Ppart(P, mod(h, m))
    if P.mode == "circle":
        s = s + (m - 1) * max_(div(h - 1, m), 0)
    return s


def cycle1(P, h, i, j):
    """Phase-1 cycle of iteration (h, i, j): groups of k blocks of n + e(h) steps."""
    E = ecum(P, h)
    if "extra-loop" in P.defects:                  # printed timing: plain sum (ints only)
        E = sum(extra(P, u) for u in range(h))
    return P.k * (P.n * h + E) + (i - 1) * (P.n + extra(P, h)) + (j - 1)


def len1(P):
    """Length of phase 1: k·(n·(n div 2 + 1) + Σ_{h=0}^{h'} e(h))."""
    if "extra-loop" in P.defects:
        return P.k * sum(P.n + extra(P, h) for h in range(P.n // 2 + 1))
    return P.k * (P.n * (div(P.n, 2) + 1) + ecum(P, h_last(P) + 1))


def starts(P):
    t1 = len1(P)
    nk = P.n * P.k
    return {"1": 0, "2a": t1, "2b": t1 + nk, "3": t1 + 2 * nk, "end": t1 + 2 * nk + P.n * nk}


def total_cycles_closed(n, m, mode="alias"):
    """Closed form (see NOTES.md):  (n³ + (n div 2 + 3)·n²)/m + k·X(n, m)."""
    k = n // m
    if m % 2 == 1:
        X = k * (m - 1) * (m - 3) // 8
    elif k % 2 == 0:
        X = k * (m - 2) ** 2 // 8
    else:
        X = (m - 2) * (k * (m - 2) - 2) // 8
    X = max(X, 0)          # m = 1 gives (0)(-2)/8 = 0 anyway; m = 2 gives 0
    if mode == "circle":
        X += (m - 1) * (((n - 1) // 2) // m)
    return (n ** 3 + (n // 2 + 3) * n * n) // m + k * X


def B1(P, l, j, i):
    """Algo.1/2 l.7: B = ((l - j) mod m + (i-1)m - 1) mod n + 1  (B ≡ l - j (mod m))."""
    n, m = P.n, P.m
    return _m(P, _m(P, l - j, m, "B") + (i - 1) * m - 1, n, "B") + 1


def Ccol(P, l, j, i, printed_ok=False):
    """l.8: C = ((l-1) + ((j-1) div m)·m + (i-1)m) mod n + 1  (C ≡ l: x[.,C] is local).
    printed: (j-1) % m instead of (j-1) \\ m."""
    n, m = P.n, P.m
    jm = mod(j - 1, m) if ("C-mod" in P.defects and printed_ok) else div(j - 1, m)
    return mod(l + jm * m + (i - 1) * m - 1, n) + 1


def rowA(P, h, B):
    """l.9-12: A = (B + h - 1) mod n + 1 if (h mod m) <= m/2 else (B - h - 1) mod n + 1."""
    n = P.n
    return ite(plus(P, h), mod(B + h - 1, n) + 1, _m(P, B - h - 1, n, "A") + 1)


def Aphase2(P, l, j, i):
    """Algo.1 l.16: A = (l - j) mod m + (i-1)m + 1 (A ≡ l - j + 1)."""
    return mod(l - j, P.m) + (i - 1) * P.m + 1


# --- which elements phase 1 computes, and where mirrors come from -----------------------------

def delta(P, A, B):
    return mod(A - B, P.n)


def group_of(P, A, B):
    """The group h whose diagonal holds (A, B) or its mirror: min(δ, n - δ)."""
    d = delta(P, A, B)
    return min_(d, P.n - d)


def computed(P, A, B):
    """(A, B) is computed in phase 1 (rather than obtained as a mirror)."""
    n = P.n
    d = delta(P, A, B)
    return or_(eq(d, 0), eq(2 * d, n),
               and_(lt(2 * d, n), plus(P, d)),
               and_(gt(2 * d, n), not_(plus(P, n - d))))


def aliased(P, A, B):
    """Mirror (A, B) that is read under the name of the computed w1[B, A] (mode 'alias'):
    the pair's diagonal is ≡ 0 (mod m), so w1[B, A] already sits on PE ≡ A."""
    if P.mode != "alias" or "no-alias" in P.defects:
        return False
    return and_(not_(computed(P, A, B)), eq(mod(A - B, P.m), 0))


def w1_name(P, A, B):
    """Operand name phases 2a/2b read for w'_AB on PE ≡ B."""
    return ref_ite(aliased(P, A, B), ref("w1", B, A), ref("w1", A, B))


def blk(P, B):
    """Block i of phase 1 whose j = n step leaves w1[., B] on PE ≡ B: (B div m) mod k + 1."""
    return mod(div(B, P.m), P.k) + 1


def inv1(P, A, B, C):
    """Coverage inverse of phase 1: the iteration doing x[A,C]·x[B,C] for computed (A, B)."""
    m, k = P.m, P.k
    i = blk(P, B)
    l = wrap(C, m)
    a = mod(div(C - 1, m) - (i - 1), k)
    j = a * m + mod(l - 1 - B, m) + 1
    return at("1", h=group_of(P, A, B), i=i, j=j, l=l)


def producer1(P, A, B):
    """The phase-1 iteration that finishes the computed w1[A, B] (j = n, PE ≡ B)."""
    return at("1", h=group_of(P, A, B), i=blk(P, B), j=P.n, l=wrap(B, P.m))


def deliverer1(P, A, B):
    """For a mirror (A, B) (w1[B, A] computed on PE ≡ A): the phase-1 iteration whose send stores
    the copy as w1[A, B] on PE ≡ B: step j = n + hops - 1 of block blk(A) on PE ≡ B - 1."""
    h = group_of(P, A, B)
    return at("1", h=h, i=blk(P, A), j=P.n + hops(P, h) - 1, l=wrap(B - 1, P.m))


def src_w1(P, A, B):
    """Source witness of phase 2's operand w1_name(A, B) on PE ≡ B."""
    return Either(computed(P, A, B), producer1(P, A, B),
                  Either(aliased(P, A, B), producer1(P, B, A), deliverer1(P, A, B)))


def inv2(P, A, B):
    """Phase 2a/2b iteration working on (A, B)."""
    m, k = P.m, P.k
    i = div(A - 1, m) + 1
    l = wrap(B, m)
    a = mod(div(B - 1, m) - (i - 1), k)
    return dict(i=i, j=a * m + mod(l - A, m) + 1, l=l)


def inv3(P, A, C, B):
    """Phase 3 iteration computing w[A, B]·x[B, C]."""
    m, k = P.m, P.k
    i = div(B - 1, m) + 1
    l = wrap(C, m)
    a = mod(div(C - 1, m) - (i - 1), k)
    return dict(h=A, i=i, j=a * m + mod(l - B, m) + 1, l=l)


# ----------------------------------------------------------------------------- phases

def step1(P, h, i, j, l):
    n, m = P.n, P.m
    B = B1(P, l, j, i)                       # l.7   (for j > n: E of l.26, same formula)
    A = rowA(P, h, B)                        # l.9-12 (D of l.27-30)
    C = Ccol(P, l, j, i, True)               # l.8
    me, mirror = ref("w1", A, B), ref("w1", B, A)
    left = wrap(l - 1, m)
    H = hops(P, h)
    if "extra-loop" in P.defects:
        # printed: at j = n transfer if h >= 1, stored as w'_BA iff h%m = 1; MOVE step q = j - n
        # forwards the copy with q hops made (E ≡ l - q) and stores it as w'_ED when q = p'.
        r = mod(h, m)
        jn_send = and_(ge(h, 1), not_(is_half(P, h)))
        jn_as = ref_ite(eq(r, 1), mirror, me)
        last = eq(j - n, extra(P, h))
    else:
        jn_send = ge(H, 1)                                  # first hop rides on the j = n step
        jn_as = ref_ite(eq(H, 1), mirror, me)
        last = eq(j, n + H - 1)                             # hop H is made at step n + H - 1
    if "E-block" in P.defects:            # l.26 printed: E = (l - p - 1)%m + (i-1)m + 1
        E = _m(P, l - (j - n) - 1, m, "E") + (i - 1) * m + 1
        D = rowA(P, h, E)                 # l.27-30
        fwd = ref("w1", D, E)
    else:
        fwd = me                          # E = B(l, j), D = A(E): l.7 and l.9-12 with j = n + p - 1
    mv_as = ref_ite(last, ref("w1", fwd[2], fwd[1]), fwd)
    jn_kind = "move" if "jn-move" in P.defects else "copy"
    if "else-h" in P.defects:            # else pairs with `if h >= 1`: j < n sends nothing
        walk = and_(lt(j, n), False)
        jn_send = or_(jn_send, eq(h, 0))  # ... and h = 0 transfers at j = n (a move)
        jn_kind = "move"
    else:
        walk = lt(j, n)
    mac = Step(
        guard=le(j, n), pe=l, op="MAC", target=me,
        operands=(ref("x", A, C), ref("x", B, C)),                                  # l.13: +=
        sends=(Send(me, "move", when=walk),                                         # l.19-20
               Send(me, jn_kind, as_=jn_as, when=and_(eq(j, n), jn_send))),         # l.14-18
        first=True if "assign" in P.defects else eq(j, 1),
        prev=at("1", h=h, i=i, j=j - 1, l=left),
        sources=(HOME, HOME),
        line="l.7-20",
    )
    move = Step(
        guard=gt(j, n), pe=l, op="MOVE", target=None,
        operands=(fwd,),
        sends=(Send(fwd, "copy", as_=mv_as, when=True),),                           # l.31-34
        sources=(at("1", h=h, i=i, j=j - 1, l=left),),
        line="l.22-34",
    )
    return [mac, move]


def step2a(P, i, j, l):
    A = Aphase2(P, l, j, i)                                     # Algo.1 l.16
    B = Ccol(P, l, j, i)                                        # Algo.1 l.17
    return [Step(guard=True, pe=l, op="EAC", target=ref("s", A),
                 operands=(w1_name(P, A, B),),                  # l.18 (alias: w1[B,A])
                 sends=(Send(ref("s", A), "move"),),            # always, also j = n
                 first=eq(j, 1), prev=at("2a", i=i, j=j - 1, l=wrap(l - 1, P.m)),
                 sources=(src_w1(P, A, B),), line="Algo1 l.13-18")]


def step2b(P, i, j, l):
    A = Aphase2(P, l, j, i)
    B = Ccol(P, l, j, i)
    s_src = Either(eq(j, 1), at("2a", i=i, j=P.n, l=wrap(l - 1, P.m)),
                   at("2b", i=i, j=j - 1, l=wrap(l - 1, P.m)))
    return [Step(guard=True, pe=l, op="DIV", target=ref("w", A, B),
                 operands=(w1_name(P, A, B), ref("s", A)),
                 sends=(Send(ref("s", A), "copy", when=lt(j, P.n)),),   # copy along; j=n idle
                 sources=(src_w1(P, A, B), s_src), line="Algo1 l.20-22")]


def step3(P, h, i, j, l):
    n, m, k = P.n, P.m, P.k
    A = h
    B = Aphase2(P, l, j, i)                                     # Algo.1 l.25
    C = Ccol(P, l, j, i)
    jr = mod(j - 1, m)
    w_src = Either(eq(j, 1), at("2b", **inv2(P, A, B)), at("3", h=h, i=i, j=j - 1, l=wrap(l - 1, m)))
    return [Step(guard=True, pe=l, op="MAC", target=ref("y", A, C),
                 operands=(ref("w", A, B), ref("x", B, C)),     # Algo.1 l.24: +=
                 sends=(Send(ref("w", A, B), "copy", when=lt(j, n)),),  # copy along; j=n idle
                 first=and_(eq(i, 1), eq(jr, 0)),
                 prev=at("3", h=h, i=ite(eq(jr, 0), i - 1, i),
                         j=ite(eq(jr, 0), mod(div(j - 1, m) + 1, k) * m + m, j - 1), l=l),
                 sources=(w_src, HOME), line="Algo1 l.23-26")]


PHASES = ("1", "2a", "2b", "3")


def loops(P, phase):
    """Sequential loop nest of a phase (concrete P): yields index dicts without l."""
    n, k = P.n, P.k
    if phase == "1":
        for h in range(0, n // 2 + 1):
            for i in range(1, k + 1):
                for j in range(1, n + extra(P, h) + 1):
                    yield dict(h=h, i=i, j=j)
    elif phase in ("2a", "2b"):
        for i in range(1, k + 1):
            for j in range(1, n + 1):
                yield dict(i=i, j=j)
    else:
        for h in range(1, n + 1):
            for i in range(1, k + 1):
                for j in range(1, n + 1):
                    yield dict(h=h, i=i, j=j)


def cycle(P, phase, ix):
    st = starts(P)
    n, k = P.n, P.k
    if phase == "1":
        return st["1"] + cycle1(P, ix["h"], ix["i"], ix["j"])
    if phase in ("2a", "2b"):
        return st[phase] + (ix["i"] - 1) * n + ix["j"] - 1
    return st["3"] + ((ix["h"] - 1) * k + ix["i"] - 1) * n + ix["j"] - 1


STEP = {"1": step1, "2a": step2a, "2b": step2b, "3": step3}


def records(P):
    """Every iteration of the schedule as a plain record (concrete n, m)."""
    out = []
    for phase in PHASES:
        for ix in loops(P, phase):
            for l in range(1, P.m + 1):
                cases = [s for s in STEP[phase](P, l=l, **ix) if s.guard]
                assert len(cases) == 1, (phase, ix, l)
                s = cases[0]
                sends = [sd for sd in s.sends if sd.when]
                assert len(sends) <= 1
                send = None
                if sends:
                    sd = sends[0]
                    send = dict(datum=sd.datum, kind=sd.kind, stored_as=sd.stored)
                rec = dict(phase=phase, idx=dict(ix, l=l), pe=s.pe, cycle=cycle(P, phase, ix),
                           op=s.op, target=s.target, operands=s.operands, send=send,
                           first=s.first if s.op in ("MAC", "EAC") else None,
                           prev=s.prev if s.op in ("MAC", "EAC") else None,
                           sources=tuple(resolve(w) for w in s.sources), line=s.line)
                out.append(rec)
    return out


def inverse_map(P):
    """Coverage inverse: required contribution -> iteration (At), for the checker.

    ('w1', A, B, C) for computed (A, B): inv1; ('w1', A, B) for mirrors: deliverer1 (or, aliased,
    the producer of w1[B, A]); ('s', A, B), ('w', A, B): phase 2a/2b; ('y', A, C, B): phase 3."""
    n = P.n
    inv = {}
    for A in range(1, n + 1):
        for B in range(1, n + 1):
            if computed(P, A, B):
                for C in range(1, n + 1):
                    inv[("w1", A, B, C)] = inv1(P, A, B, C)
            else:
                inv[("w1", A, B)] = resolve(src_w1(P, A, B))
            inv[("s", A, B)] = at("2a", **inv2(P, A, B))
            inv[("w", A, B)] = at("2b", **inv2(P, A, B))
            for C in range(1, n + 1):
                inv[("y", A, C, B)] = at("3", **inv3(P, A, C, B))
    return inv


def printed(n, m):
    return params(n, m, mode="alias", defects=PRINTED_LITERAL)


if __name__ == "__main__":
    import sys
    n, m = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (6, 3)
    P = params(n, m)
    R = records(P)
    for r in R[: 3 * m]:
        print(r)
    print("cycles", starts(P)["end"], "closed", total_cycles_closed(n, m))
