"""Algorithm 3 as printed (as literally as the extracted text allows), with switchable repairs.

Literal readings used (line numbers of the printed Algorithm 3):
  2-3   h' = (n odd) ? (n-1)/2 : n/2-1;  for h in [0, h']
  7     A = n-h;  B = (l-j) % m + (i-1)m + 1                      (% = floor mod)
  8     C = (l + (j-1)\\m)·m + (i-1)·m - 1 % n + 1                (\\ = integer division; % binds
                                                                  tighter than -: "1 % n" = 1)
  9-10  if A < B then A = h; B %= (n-h)
  11    w'_AB += q_A[C]·k_B[C]; transfer w'_AB   (always: a move of the running sum)
  12-13 even n: one more group, A = n/2 always, computed only if A >= B (transfer only then)
  18    A = (l-j) % m + (i-1)·m
  19    B = [l + (j-1)\\m]·m + (i-1)·m - 1 % n + 1
  20-21 if A < n/2 then B = (B - (n-A) - 1) % n + 1
  22-24 if A >= B then sum_A += exp(w'_AB);  transfer sum_A   (always: a move)
  26-27 step 2: the same loops, if A >= B: w_AB = exp(w'_AB)/sum_A; always send sum_A (a copy)
  29-30 phase 3: the loops of phase 1 (lines 2-13), y_A[C] += w_AB·v_B[C]; send w_AB (a copy)
        whenever the MAC is done ("local data" of w_AB exists only then)

Repairs (each can be switched on alone):
  C8   C = ((l-1) + ((j-1)\\m)·m + (i-1)·m) % n + 1             (Algo.1 line 7, correctly bracketed)
  B19  B = ((l-1) + ((j-1)\\m)·m + (i-1)·m) % n + 1
  A18  A = (l-j) % m + (i-1)·m + 1                               (Algo.1 line 16)
  T24  no transfer of sum_A before its first contribution (the PE idles)
Reading switch:
  trunc  % truncates toward zero (C semantics) instead of floor
"""
from __future__ import annotations

import math

import algo3_proto as P
from check import Violation, all_sizes, simulate

ALL = ("C8", "B19", "A18", "T24")


def generate(n, m, fix=ALL, trunc=False):
    k = n // m

    def pm(a, b):                          # the paper's %
        return int(math.fmod(a, b)) if trunc else a % b

    def C_of(i, j, l, key):
        if key in fix:
            return pm((l - 1) + ((j - 1) // m) * m + (i - 1) * m, n) + 1
        return (l + (j - 1) // m) * m + (i - 1) * m - pm(1, n) + 1

    hp = (n - 1) // 2 if n % 2 else n // 2 - 1
    groups = list(range(0, hp + 1)) + ([n // 2] if n % 2 == 0 else [])
    L = dict(p1=len(groups) * k * n, p2s1=k * n, p2s2=k * n, p3=len(groups) * k * n)
    start = dict(p1=0, p2s1=L["p1"], p2s2=L["p1"] + L["p2s1"], p3=L["p1"] + L["p2s1"] + L["p2s2"])
    recs = []

    def group_iter(ph):
        for gi, h in enumerate(groups):
            middle = n % 2 == 0 and gi == len(groups) - 1
            for i in range(1, k + 1):
                for j in range(1, n + 1):
                    for l in range(1, m + 1):
                        A = n - h if not middle else n // 2
                        B = pm(l - j, m) + (i - 1) * m + 1
                        C = C_of(i, j, l, "C8")
                        if middle:
                            if not A >= B:
                                continue
                        elif A < B:
                            A = h
                            B = pm(B, n - h)
                        t = start[ph] + (gi * k + (i - 1)) * n + (j - 1)
                        yield (h, i, j, l), t, A, B, C

    for idx, t, A, B, C in group_iter("p1"):
        recs.append(dict(phase="p1", idx=idx, pe=idx[3], cycle=t, op="MAC", target=("w1", A, B),
                         operands=[("q", A, C), ("k", B, C)], send=(("w1", A, B), "move")))
    for step in (1, 2):
        ph = "p2s%d" % step
        started = set()
        for i in range(1, k + 1):
            for j in range(1, n + 1):
                for l in range(1, m + 1):
                    A = pm(l - j, m) + (i - 1) * m + (1 if "A18" in fix else 0)
                    B = C_of(i, j, l, "B19")
                    if A < n / 2:
                        B = pm(B - (n - A) - 1, n) + 1
                    t = start[ph] + (i - 1) * n + (j - 1)
                    rec = dict(phase=ph, idx=(i, j, l), pe=l, cycle=t)
                    if step == 1:
                        if A >= B:
                            started.add(A)
                            rec.update(op="EAC", target=("s", A), operands=[("w1", A, B)])
                        else:
                            if "T24" in fix and A not in started:
                                continue
                            rec.update(op="MOVE", target=("s", A), operands=[])
                        rec["send"] = (("s", A), "move")
                    else:
                        if A >= B:
                            rec.update(op="DIV", target=("w", A, B), operands=[("w1", A, B), ("s", A)])
                        else:
                            rec.update(op="MOVE", target=None, operands=[("s", A)])
                        rec["send"] = (("s", A), "copy")
                    recs.append(rec)
    for idx, t, A, B, C in group_iter("p3"):
        recs.append(dict(phase="p3", idx=idx, pe=idx[3], cycle=t, op="MAC", target=("y", A, C),
                         operands=[("w", A, B), ("v", B, C)], send=(("w", A, B), "copy")))
    return recs, start, L


def first_failure(fix, trunc=False, nmax=17, nmin=1, mmin=1):
    for n, m in all_sizes(nmax):
        if n < nmin or m < mmin:
            continue
        recs, start, L = generate(n, m, fix, trunc)
        try:
            simulate(recs, n, m, start, L, witnesses=False)
        except Violation as e:
            return n, m, str(e)
    return None


def same_as_repaired(nmax):
    keys = ("phase", "idx", "pe", "cycle", "op", "target", "operands", "send")
    for n, m in all_sizes(nmax):
        a, _, _ = generate(n, m, ALL)
        b, _, _ = P.generate(n, m, "printed")
        A = sorted(tuple(str(r[x]) for x in keys) for r in a)
        B = sorted(tuple(str(r[x]) for x in keys) for r in b)
        if A != B:
            return n, m
    return None


def report(nmax=17):
    print("printed pseudo-code with all repairs == repaired prototype (ops, targets, sends, cycles):",
          "yes, n <=", nmax if same_as_repaired(nmax) is None else same_as_repaired(nmax))
    for nmin, mmin in ((1, 1), (2, 1), (2, 2)):
        print(f"--- smallest counterexamples with n >= {nmin}, m >= {mmin}")
        print("fully literal:", first_failure((), False, nmax, nmin, mmin))
        for d in ALL:
            print(f"defect {d} alone (all other lines repaired):",
                  first_failure(tuple(x for x in ALL if x != d), False, nmax, nmin, mmin))
        print("reading: % truncating (C semantics), everything else repaired:",
              first_failure(ALL, True, nmax, nmin, mmin))
    print("all repairs:", first_failure(fix=ALL, nmax=nmax) or "no violation")


if __name__ == "__main__":
    report()
