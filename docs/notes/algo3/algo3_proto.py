"""Prototype of the repaired Algorithm 3 (masked / causal self-attention) of Yu & Fujita.

Every index formula is written with the helpers below (mod, div, ite, comparisons, and_/or_/not_,
max_) and `+ - *` only, so the same function runs on Python ints, numpy int arrays and Z3 terms
(no Python `if` on index values, no `%`/`//` on possibly negative numbers).  The lead's DSL has
the same helper names (schedules/expr.py).

Conventions (machine.md): PEs l = 1..m, k = n/m, d = n, rows/columns 1-based.
Datum names: ('q',A,C) ('k',B,C) ('v',B,C) ('w1',A,B) ('s',A) ('w',A,B) ('y',A,C).

Phases (run one after another; cycle = phase start + lexicographic rank of the sequential loops):
  p1   : for h in [0, n\\2], i in [1,k], j in [1,n], l in [1,m] (parallel)   -- row groups
  p2s1 : for i in [1,k], j in [1,n], l                                      -- EAC (or MOVE)
  p2s2 : for i in [1,k], j in [1,n], l                                      -- DIV (or MOVE)
  p3   : for h in [0, n\\2], i in [1,k], j in [1,n], l                       -- row groups

Group h (0 <= h < n/2) holds row n-h (B = 1..n-h) and row h (B = 1..h): n entries; group 0 is
row n alone (row 0 does not exist); for even n the group h = n/2 is the middle row n/2 alone
(only n/2 of its n chains are active: the paper's 'trade off').

`variant` of phase 1: 'printed' (Algo.3 line 7: B = (l-j)%m+(i-1)m+1, partial sum always moved,
also after j = n) or 'algo1' (Algo.1 line 6: B = ((l-j)%m+(i-1)m-1)%n+1, no move after j = n).
Both leave w1[A,B] on PE == Bo (mod m) (Bo = column of the chain inside the group, see below).
"""
from __future__ import annotations

import numpy as np

try:  # optional backend
    import z3
except ImportError:  # pragma: no cover
    z3 = None


# ----------------------------------------------------------------------------- helpers

def _is_z3(*xs):
    return z3 is not None and any(isinstance(x, z3.ExprRef) for x in xs)


def _is_np(*xs):
    return any(isinstance(x, np.ndarray) for x in xs)


def mod(a, b):
    """floor modulo by a positive divisor"""
    if _is_z3(a, b):
        return a % b          # Z3 Int %: Euclidean == floor for b > 0
    return a % b              # Python/numpy: floor


def div(a, b):
    """floor division by a positive divisor"""
    if _is_z3(a, b):
        return a / b          # Z3 Int /: Euclidean == floor for b > 0
    return a // b


def ite(c, a, b):
    if _is_z3(c, a, b):
        return z3.If(c, a, b)
    if _is_np(c, a, b):
        return np.where(c, a, b)
    return a if c else b      # c is a Python bool here (ints only)


def eq(a, b):
    return a == b


def ne(a, b):
    return a != b


def lt(a, b):
    return a < b


def le(a, b):
    return a <= b


def gt(a, b):
    return a > b


def ge(a, b):
    return a >= b


def and_(*xs):
    if _is_z3(*xs):
        return z3.And(*xs)
    if _is_np(*xs):
        return np.logical_and.reduce(np.broadcast_arrays(*xs))
    return all(xs)


def or_(*xs):
    if _is_z3(*xs):
        return z3.Or(*xs)
    if _is_np(*xs):
        return np.logical_or.reduce(np.broadcast_arrays(*xs))
    return any(xs)


def not_(a):
    if _is_z3(a):
        return z3.Not(a)
    if _is_np(a):
        return np.logical_not(a)
    return not a


def max_(a, b):
    return ite(ge(a, b), a, b)


def prev_pe(l, m):
    """the PE before l on the ring"""
    return mod(l - 2, m) + 1


# ----------------------------------------------------------------------------- shared pieces

def is_short(A, n):
    """row A is the short member of its group (packed behind row n-A): 2A < n"""
    return lt(2 * A, n)


def group_of(A, n):
    """group h of row A: h = A for short rows, n-A otherwise (row n -> 0, middle row n/2 -> n/2)"""
    return ite(is_short(A, n), A, n - A)


def bo_of(A, B, n):
    """column Bo of the phase-1/3 chain that carries (A, B): B shifted behind row n-A for short rows"""
    return ite(is_short(A, n), B + n - A, B)


def col_C(n, m, i, j, l):
    """C of Algo.1 line 7 / Algo.3 line 8 (repaired): C == l (mod m); every C once per chain"""
    return mod((l - 1) + div(j - 1, m) * m + (i - 1) * m, n) + 1


def group_row(n, h, Bo):
    """Algo.3 lines 7,9,10: A = n-h; if A < B then A = h; B -= n-h  (+ middle-row guard, l.12-13)"""
    long_ = le(Bo, n - h)
    A = ite(long_, n - h, h)
    B = ite(long_, Bo, Bo - (n - h))
    guard = or_(lt(2 * h, n), long_)          # middle group (2h = n): only row n/2, B <= n/2
    return A, B, guard


# ----------------------------------------------------------------------------- phase 1

def p1_bo(n, m, i, j, l, variant="printed"):
    if variant == "printed":                  # Algo.3 line 7
        return mod(l - j, m) + (i - 1) * m + 1
    return mod(mod(l - j, m) + (i - 1) * m - 1, n) + 1   # Algo.1 line 6


def p1_inv(n, m, A, B, C, variant="printed"):
    """coverage inverse: (A, B, C), B <= A  ->  (h, i, j, l) of phase 1"""
    k = div(n, m)
    h = group_of(A, n)
    Bo = bo_of(A, B, n)
    l = mod(C - 1, m) + 1
    if variant == "printed":
        i = div(Bo - 1, m) + 1
        r = mod(l - Bo, m)                    # (j-1) mod m
    else:
        i = div(mod(Bo, n), m) + 1
        r = mod(l - Bo - 1, m)
    p = mod(div(C - 1, m) - (i - 1), k)       # (j-1) div m
    return h, i, p * m + r + 1, l


def p1_last(n, m, A, B, variant="printed"):
    """the phase-1 iteration that made w1[A,B] final where phase 2 finds it (j = n of its chain);
    'printed': it MOVES it from PE Bo-1 to PE Bo; 'algo1': it keeps it on PE Bo"""
    k = div(n, m)
    Bo = bo_of(A, B, n)
    if variant == "printed":
        return group_of(A, n), div(Bo - 1, m) + 1, n, mod(Bo - 2, m) + 1
    return group_of(A, n), div(mod(Bo, n), m) + 1, n, mod(Bo - 1, m) + 1


def phase1(n, m, h, i, j, l, variant="printed"):
    k = div(n, m)
    Bo = p1_bo(n, m, i, j, l, variant)
    C = col_C(n, m, i, j, l)
    A, B, guard = group_row(n, h, Bo)
    move = eq(j, j) if variant == "printed" else ne(j, n)   # send w1[A,B] (move)?
    return dict(
        guard=guard, op="MAC", A=A, B=B, C=C, Bo=Bo,
        target=("w1", A, B), operands=(("q", A, C), ("k", B, C)),
        send=("w1", A, B), send_kind="move", send_if=move,
        cycle=(h * k + (i - 1)) * n + (j - 1),
        first=eq(j, 1),
        prev=(h, i, j - 1, prev_pe(l, m)),
        sources=("home", "home"),
    )


# ----------------------------------------------------------------------------- phase 2

def p2_first_j(n, m, A):
    """first j of the s[A] chain with an unmasked entry (closed form, checked by brute force):
    1 for rows with 2A >= n; for short rows (2A < n), with i-1 = (A-1)\\m, a0 = (A-1)%m:
    1 + (k-2i+1)m + max(0, m-1-2a0)"""
    k = div(n, m)
    i = div(A - 1, m) + 1
    a0 = mod(A - 1, m)
    return ite(is_short(A, n), 1 + (k - 2 * i + 1) * m + max_(0, m - 1 - 2 * a0), 1)


def p2_inv(n, m, A, B):
    """coverage inverse: (A, B), B <= A  ->  (i, j, l) of phase 2 (both steps)"""
    k = div(n, m)
    i = div(A - 1, m) + 1
    Bb = ite(is_short(A, n), mod(B - A - 1, n) + 1, B)
    l = mod(Bb - 1, m) + 1
    p = mod(div(Bb - 1, m) - (i - 1), k)
    return i, p * m + mod(l - A, m) + 1, l


def phase2(n, m, i, j, l, step, variant="printed"):
    k = div(n, m)
    A = mod(l - j, m) + (i - 1) * m + 1                       # line 18 (+1 restored)
    Bb = mod((l - 1) + div(j - 1, m) * m + (i - 1) * m, n) + 1  # line 19 (repaired like C)
    B = ite(is_short(A, n), mod(Bb - (n - A) - 1, n) + 1, Bb)  # lines 20-21
    unmasked = le(B, A)                                       # line 22
    jf = p2_first_j(n, m, A)
    src_w1 = p1_last(n, m, A, B, variant)
    if step == 1:
        return dict(
            guard=ge(j, jf),                  # idle before s[A] exists
            op=ite(unmasked, "EAC", "MOVE"), unmasked=unmasked, A=A, B=B, Bb=Bb,
            target=("s", A), operands=(("w1", A, B),),       # operand only when EAC
            send=("s", A), send_kind="move", send_if=eq(j, j),
            cycle=(i - 1) * n + (j - 1),
            first=eq(j, jf),
            prev=(i, j - 1, prev_pe(l, m)),   # EAC or MOVE of the same chain, (pe-1, t-1), moved
            sources=(("p1",) + tuple(src_w1),),
        )
    src_s = ite(eq(j, 1), 1, 2)               # step of the iteration that brought s[A]
    return dict(
        guard=eq(j, j),
        op=ite(unmasked, "DIV", "MOVE"), unmasked=unmasked, A=A, B=B, Bb=Bb,
        target=("w", A, B), operands=(("w1", A, B), ("s", A)),  # MOVE: operands[1] only
        send=("s", A), send_kind="copy", send_if=eq(j, j),
        cycle=(i - 1) * n + (j - 1),
        first=None, prev=None,
        # s[A]: j = 1 -> step 1 (i, n, l-1) moved it here (it arrived after the last j of
        # block i of step 1); j > 1 -> step 2 (i, j-1, l-1) copied it at t-1.
        sources=(("p1",) + tuple(src_w1), None),   # s[A]: see src_s_step / src_s_idx
        src_s_step=src_s, src_s_idx=(i, ite(eq(j, 1), n, j - 1), prev_pe(l, m)),
    )


# ----------------------------------------------------------------------------- phase 3

def y_prev(n, m, A, B, C):
    """prev witness of y[A,C] += w[A,B] v[B,C]: returns (first, Bprev).

    y[A,C] is stationary on PE l = (C-1)%m+1; its contributions come in the order of
    rho(Bo) = ((Bo-1)\\m)*m + (l-Bo)%m over the chain columns Bo of row A: the prefix [1, A]
    (2A >= n) or the suffix [n-A+1, n] (2A < n, Bo = B+n-A).  Bprev is the B of the
    contribution just before (meaningless when first)."""
    l = mod(C - 1, m) + 1
    l0 = l - 1
    lm = mod(l, m)                            # offset of the last column of a full block
    short = is_short(A, n)
    Bo = bo_of(A, B, n)
    beta = div(Bo - 1, m)
    o = mod(Bo - 1, m)
    r = mod(l0 - o, m)                        # position inside the block
    o1 = mod(o + 1, m)                        # offset one position earlier
    # prefix [1, A]: allowed offsets in block beta are [0, c_beta]
    betaA = div(A - 1, m)
    c_beta = ite(eq(beta, betaA), mod(A - 1, m), m - 1)
    pW1 = and_(ge(r, 1), le(o1, c_beta))
    pW2 = and_(ge(r, 1), gt(o1, c_beta), lt(l0, o))
    p_first = and_(not_(pW1), not_(pW2), eq(beta, 0))
    p_bo = ite(pW1, beta * m + o1 + 1,
               ite(pW2, beta * m + 1, (beta - 1) * m + lm + 1))
    # suffix [n-A+1, n]: allowed offsets [a_beta, m-1]
    betaS = div(n - A, m)
    a = mod(n - A, m)
    a_beta = ite(eq(beta, betaS), a, 0)
    a_prevb = ite(eq(beta - 1, betaS), a, 0)
    sW1 = and_(ge(r, 1), ge(o1, a_beta))
    sW2 = and_(ge(r, 1), lt(o1, a_beta), le(a_beta, l0))
    s_first = and_(not_(sW1), not_(sW2), eq(beta, betaS))
    s_bo = ite(sW1, beta * m + o1 + 1,
               ite(sW2, beta * m + a_beta + 1, (beta - 1) * m + max_(a_prevb, lm) + 1))
    first = ite(short, s_first, p_first)
    Bprev = ite(short, s_bo - (n - A), p_bo)
    return first, Bprev


def phase3(n, m, h, i, j, l, variant="printed"):
    k = div(n, m)
    Bo = mod(l - j, m) + (i - 1) * m + 1      # Algo.1 line 25 (= Algo.3 line 7)
    C = col_C(n, m, i, j, l)
    A, B, guard = group_row(n, h, Bo)
    first, Bp = y_prev(n, m, A, B, C)
    i2, j2, l2 = p2_inv(n, m, A, B)           # step-2 DIV that produced w[A,B] (same PE)
    return dict(
        guard=guard, op="MAC", A=A, B=B, C=C, Bo=Bo,
        target=("y", A, C), operands=(("w", A, B), ("v", B, C)),
        send=("w", A, B), send_kind="copy", send_if=eq(j, j),
        cycle=(h * k + (i - 1)) * n + (j - 1),
        first=first,
        prev=p3_inv(n, m, A, Bp, C),
        src_w_from_p2=eq(j, 1),               # j = 1: DIV of step 2; else p3 (h,i,j-1,l-1) copied it
        src_w_p2=(i2, j2, l2),
        src_w_p3=(h, i, j - 1, prev_pe(l, m)),
        sources=None,
    )


def p3_inv(n, m, A, B, C):
    """coverage inverse of phase 3 (same chains as phase 1 'printed')"""
    return p1_inv(n, m, A, B, C, "printed")


# ----------------------------------------------------------------------------- windows

def n_groups(n):
    return div(n, 2) + 1


def phase_lengths(n, m):
    k = div(n, m)
    return dict(p1=n_groups(n) * k * n, p2s1=k * n, p2s2=k * n, p3=n_groups(n) * k * n)


def total_cycles(n, m):
    """closed form: (2*(n\\2) + 4) * n^2 / m  = n^2(n+1)/m + 2n^2/m (odd n), n^2(n+2)/m + 2n^2/m (even)"""
    return (2 * div(n, 2) + 4) * div(n * n, m)


# ----------------------------------------------------------------------------- records

def _datum(t):
    return tuple(int(x) if not isinstance(x, str) else x for x in t)


def generate(n, m, variant="printed"):
    """all iterations of the repaired Algorithm 3 as records (ints)"""
    assert n % m == 0
    k = n // m
    L = phase_lengths(n, m)
    start = dict(p1=0, p2s1=L["p1"], p2s2=L["p1"] + L["p2s1"],
                 p3=L["p1"] + L["p2s1"] + L["p2s2"])
    recs = []
    for h in range(0, n // 2 + 1):
        for i in range(1, k + 1):
            for j in range(1, n + 1):
                for l in range(1, m + 1):
                    f = phase1(n, m, h, i, j, l, variant)
                    if not f["guard"]:
                        continue
                    recs.append(dict(
                        phase="p1", idx=(h, i, j, l), pe=l, cycle=start["p1"] + f["cycle"],
                        op="MAC", target=_datum(f["target"]),
                        operands=[_datum(x) for x in f["operands"]],
                        send=(_datum(f["send"]), "move") if f["send_if"] else None,
                        first=bool(f["first"]),
                        prev=None if f["first"] else ("p1", tuple(int(x) for x in f["prev"])),
                        sources=["home", "home"]))
    for step in (1, 2):
        ph = "p2s%d" % step
        for i in range(1, k + 1):
            for j in range(1, n + 1):
                for l in range(1, m + 1):
                    f = phase2(n, m, i, j, l, step, variant)
                    if not f["guard"]:
                        continue
                    op = f["op"]
                    rec = dict(phase=ph, idx=(i, j, l), pe=l, cycle=start[ph] + f["cycle"], op=op)
                    if step == 1:
                        rec.update(
                            target=_datum(f["target"]),
                            operands=[_datum(f["operands"][0])] if op == "EAC" else [],
                            sources=[("p1", tuple(int(x) for x in f["sources"][0][1:]))]
                            if op == "EAC" else [],
                            send=(_datum(f["send"]), "move"),
                            first=bool(f["first"]),
                            prev=None if f["first"] else (ph, tuple(int(x) for x in f["prev"])))
                    else:
                        s_src = ("p2s%d" % int(f["src_s_step"]),
                                 tuple(int(x) for x in f["src_s_idx"]))
                        if op == "DIV":
                            rec.update(target=_datum(f["target"]),
                                       operands=[_datum(x) for x in f["operands"]],
                                       sources=[("p1", tuple(int(x) for x in f["sources"][0][1:])),
                                                s_src])
                        else:
                            rec.update(target=None, operands=[_datum(f["operands"][1])],
                                       sources=[s_src])
                        rec.update(send=(_datum(f["send"]), "copy"), first=None, prev=None)
                    recs.append(rec)
    for h in range(0, n // 2 + 1):
        for i in range(1, k + 1):
            for j in range(1, n + 1):
                for l in range(1, m + 1):
                    f = phase3(n, m, h, i, j, l, variant)
                    if not f["guard"]:
                        continue
                    src_w = (("p2s2", tuple(int(x) for x in f["src_w_p2"])) if f["src_w_from_p2"]
                             else ("p3", tuple(int(x) for x in f["src_w_p3"])))
                    recs.append(dict(
                        phase="p3", idx=(h, i, j, l), pe=l, cycle=start["p3"] + f["cycle"],
                        op="MAC", target=_datum(f["target"]),
                        operands=[_datum(x) for x in f["operands"]],
                        send=(_datum(f["send"]), "copy"),
                        first=bool(f["first"]),
                        prev=None if f["first"] else ("p3", tuple(int(x) for x in f["prev"])),
                        sources=[src_w, "home"]))
    return recs, start, L


def inverses(n, m, variant="printed"):
    """coverage inverse maps: required contribution -> (phase, idx)"""
    out = []
    for A in range(1, n + 1):
        for B in range(1, A + 1):
            for C in range(1, n + 1):
                out.append((("p1", ("w1", A, B), ("q", A, C), ("k", B, C)),
                            tuple(int(x) for x in p1_inv(n, m, A, B, C, variant))))
                out.append((("p3", ("y", A, C), ("w", A, B), ("v", B, C)),
                            tuple(int(x) for x in p3_inv(n, m, A, B, C))))
            out.append((("p2s1", ("s", A), ("w1", A, B)), tuple(int(x) for x in p2_inv(n, m, A, B))))
            out.append((("p2s2", ("w", A, B), ("w1", A, B), ("s", A)),
                        tuple(int(x) for x in p2_inv(n, m, A, B))))
    return out


def home_pe(datum, m):
    """inputs q, k, v are distributed by column C: PE (C-1)%m+1"""
    return (datum[2] - 1) % m + 1


if __name__ == "__main__":
    import sys
    n, m = int(sys.argv[1]), int(sys.argv[2])
    recs, start, L = generate(n, m)
    for r in recs[:40]:
        print(r)
    print(start, L, "total", total_cycles(n, m))
