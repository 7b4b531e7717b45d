"""Brute-force replay of Algorithm-3 records on the ring machine of /work/scratch/machine.md.

Usage:  python check.py                 # repaired schedule, all (n, m), m | n, n <= 17, both variants
        python check.py --printed       # printed pseudo-code: each defect alone + fully literal
        python check.py --nmax 9 --quick

Checks, cycle by cycle: presence of every operand / moved or copied datum at the PE at the start of
the cycle, one op per (PE, cycle), one datum per link per cycle, moves vs copies (a moved datum is
gone from the sender), a running accumulator exists on one PE only and is never copied before it is
final, finality of every value read, single assignment of w, phase windows consecutive and cycle =
phase start + lexicographic rank of the loop indices; then all witnesses (first/prev, sources,
coverage inverse) against what the replay observed, and y against numpy masked attention.
"""
from __future__ import annotations

import argparse
import itertools
import math
import sys

import numpy as np

import algo3_proto as P


class Violation(Exception):
    pass


def required(n, masked=True):
    """required contributions per accumulator / single-assignment datum"""
    need = {}
    for A in range(1, n + 1):
        for B in range(1, (A if masked else n) + 1):
            need[("w1", A, B)] = n
            need[("w", A, B)] = 1
        need[("s", A)] = A if masked else n
        for C in range(1, n + 1):
            need[("y", A, C)] = A if masked else n
    return need


def reference(q, kk, v, masked=True):
    n = q.shape[0]
    W = q @ kk.T
    mask = np.tril(np.ones((n, n), bool)) if masked else np.ones((n, n), bool)
    W = np.where(mask, W, -np.inf)
    W = np.exp(W - W.max(axis=1, keepdims=True))
    W = W / W.sum(axis=1, keepdims=True)
    return W @ v


def lex_ranks(n, m):
    k = n // m
    g = range(0, n // 2 + 1)
    r = {}
    for ph, loops in (("p1", (g, range(1, k + 1), range(1, n + 1))),
                      ("p2s1", (range(1, k + 1), range(1, n + 1))),
                      ("p2s2", (range(1, k + 1), range(1, n + 1))),
                      ("p3", (g, range(1, k + 1), range(1, n + 1)))):
        r[ph] = {t: x for x, t in enumerate(itertools.product(*loops))}
    return r


def in_range(d, n):
    return all(1 <= x <= n for x in d[1:])


def simulate(recs, n, m, start=None, lens=None, witnesses=True, inv=None, seed=0, masked=True):
    """replay; raise Violation on the first problem; return stats"""
    rng = np.random.default_rng(seed + 1000 * n + m)
    q = rng.standard_normal((n, n)) / math.sqrt(n)
    kk = rng.standard_normal((n, n)) / math.sqrt(n)
    v = rng.standard_normal((n, n))
    inputs = {"q": q, "k": kk, "v": v}
    need = required(n, masked)
    at = {p: {} for p in range(1, m + 1)}     # pe -> datum -> [value, provenance rec id]
    for name, arr in inputs.items():
        for X in range(1, n + 1):
            for C in range(1, n + 1):
                at[(C - 1) % m + 1][(name, X, C)] = [arr[X - 1, C - 1], "home"]
    count = {}                                 # contributions done
    done_contrib = set()
    last_touch = {}                            # accumulator -> rec id of last contribution/move
    key = {}
    for x, r in enumerate(recs):
        kx = (r["phase"], tuple(r["idx"]))
        if kx in key:
            raise Violation(f"duplicate iteration {kx}")
        key[kx] = x
    busy = set()
    order = sorted(range(len(recs)), key=lambda x: recs[x]["cycle"])
    ranks = lex_ranks(n, m)
    if start is not None:
        s = 0
        for ph in ("p1", "p2s1", "p2s2", "p3"):
            if start[ph] != s:
                raise Violation(f"phase window of {ph} starts at {start[ph]}, expected {s}")
            s += lens[ph]
    observed_src = {}                          # (rec id, operand index) -> provenance
    observed_prev = {}
    t_cur = None
    pending = []

    def flush(upto):
        nonlocal pending
        keep = []
        for (t_arr, pe, d, val, prov, kind) in pending:
            if t_arr <= upto:
                if d in at[pe] and d in need and d[0] in ("w1", "s", "y") and kind == "move":
                    raise Violation(f"moved running sum {d} arrives at PE {pe} which already holds it")
                at[pe][d] = [val, prov]
            else:
                keep.append((t_arr, pe, d, val, prov, kind))
        pending = keep

    def final(d):
        if d[0] in ("q", "k", "v"):
            return True
        return count.get(d, 0) == need.get(d, -1)

    for x in order:
        r = recs[x]
        t, pe, ph = r["cycle"], r["pe"], r["phase"]
        where = f"{ph}{tuple(r['idx'])} pe={pe} t={t} op={r['op']}"
        if t_cur is None or t != t_cur:
            flush(t)
            t_cur = t
        if not (1 <= pe <= m):
            raise Violation(f"{where}: PE out of range")
        if (pe, t) in busy:
            raise Violation(f"{where}: two ops on one PE in one cycle")
        busy.add((pe, t))
        if start is not None:
            if not (start[ph] <= t < start[ph] + lens[ph]):
                raise Violation(f"{where}: cycle outside the phase window")
            rk = ranks[ph].get(tuple(r["idx"][:-1]))
            if rk is None or t != start[ph] + rk:
                raise Violation(f"{where}: cycle != phase start + lexicographic rank ({rk})")
        # operands: presence + finality
        vals = []
        for oi, d in enumerate(r["operands"]):
            if not in_range(d, n):
                raise Violation(f"{where}: operand {d} index out of range")
            if d not in at[pe]:
                raise Violation(f"{where}: operand {d} not present on PE {pe}")
            if not final(d):
                raise Violation(f"{where}: operand {d} read before it is final "
                                f"({count.get(d, 0)}/{need.get(d)})")
            vals.append(at[pe][d][0])
            observed_src[(x, oi)] = at[pe][d][1]
        tgt = r["target"]
        op = r["op"]
        if tgt is not None and not in_range(tgt, n):
            raise Violation(f"{where}: target {tgt} index out of range")
        if op in ("MAC", "EAC"):
            if tgt not in need:
                raise Violation(f"{where}: target {tgt} is masked / not required")
            if count.get(tgt, 0) == 0:
                if any(tgt in at[p] for p in at):
                    raise Violation(f"{where}: first contribution but {tgt} already exists")
                if any(pd[2] == tgt for pd in pending):
                    raise Violation(f"{where}: first contribution but {tgt} in flight")
                at[pe][tgt] = [0.0, x]
                observed_prev[x] = None
            else:
                if tgt not in at[pe]:
                    raise Violation(f"{where}: running sum {tgt} not present on PE {pe}")
                others = [p for p in at if p != pe and tgt in at[p]]
                if others:
                    raise Violation(f"{where}: running sum {tgt} also on PEs {others}")
                observed_prev[x] = last_touch[tgt]
            if op == "MAC":
                contrib = (tgt, r["operands"][0], r["operands"][1])
                a, b = r["operands"]
                ok = (tgt[0] == "w1" and a == ("q", tgt[1], a[2]) and b == ("k", tgt[2], a[2])) or \
                     (tgt[0] == "y" and a[0] == "w" and a[1] == tgt[1] and b == ("v", a[2], tgt[2]))
                if not ok:
                    raise Violation(f"{where}: MAC {tgt} += {a}*{b} is not a term of {tgt}")
                if tgt[0] == "y" and a not in need:
                    raise Violation(f"{where}: masked weight {a}")
                at[pe][tgt][0] += vals[0] * vals[1]
            else:
                a = r["operands"][0]
                if not (tgt[0] == "s" and a[0] == "w1" and a[1] == tgt[1]):
                    raise Violation(f"{where}: EAC {tgt} += exp({a}) is not a term")
                contrib = (tgt, a)
                at[pe][tgt][0] += math.exp(vals[0])
            if contrib in done_contrib:
                raise Violation(f"{where}: contribution {contrib} done twice")
            done_contrib.add(contrib)
            count[tgt] = count.get(tgt, 0) + 1
            at[pe][tgt][1] = x
            last_touch[tgt] = x
        elif op == "DIV":
            a, s = r["operands"]
            if not (tgt[0] == "w" and a == ("w1", tgt[1], tgt[2]) and s == ("s", tgt[1])):
                raise Violation(f"{where}: DIV {tgt} = exp({a})/{s} is not the softmax weight")
            if tgt not in need:
                raise Violation(f"{where}: masked weight {tgt}")
            if count.get(tgt, 0):
                raise Violation(f"{where}: {tgt} assigned twice")
            at[pe][tgt] = [math.exp(vals[0]) / vals[1], x]
            count[tgt] = 1
            done_contrib.add((tgt,))
        elif op == "MOVE":
            if tgt is not None:                    # forwards a running sum (phase 2 step 1)
                if tgt not in at[pe]:
                    raise Violation(f"{where}: MOVE of {tgt}, which is not present on PE {pe}")
                observed_prev[x] = last_touch.get(tgt)
                last_touch[tgt] = x
        else:
            raise Violation(f"{where}: unknown op {op}")
        # send
        if r["send"] is not None:
            d, kind = r["send"]
            if d not in at[pe]:
                raise Violation(f"{where}: sends {d}, which is not present on PE {pe}")
            if kind == "copy" and d[0] in ("w1", "s", "y") and not final(d):
                raise Violation(f"{where}: copies running sum {d} before it is final")
            if kind == "move" and not (d == tgt):
                raise Violation(f"{where}: moves {d}, which is not its own target")
            val = at[pe][d][0]
            pending.append((t + 1, pe % m + 1, d, val, x, kind))
            if kind == "move":
                del at[pe][d]
                last_touch[d] = x
    flush(10 ** 18)
    # completeness
    for d, c in need.items():
        if count.get(d, 0) != c:
            raise Violation(f"{d}: {count.get(d, 0)} of {c} contributions")
    y = np.zeros((n, n))
    for A in range(1, n + 1):
        for C in range(1, n + 1):
            hold = [p for p in at if ("y", A, C) in at[p]]
            if len(hold) != 1:
                raise Violation(f"y[{A},{C}] on PEs {hold}")
            y[A - 1, C - 1] = at[hold[0]][("y", A, C)][0]
    ref = reference(q, kk, v, masked)
    err = np.linalg.norm(y - ref) / np.linalg.norm(ref)
    if not err <= 1e-9:
        raise Violation(f"y differs from masked attention: rel. error {err:.3e}")
    if witnesses:
        check_witnesses(recs, key, observed_prev, observed_src, n, m, inv)
    T = sum(lens.values()) if lens is not None else max(r["cycle"] for r in recs) + 1
    last = max(r["cycle"] for r in recs) + 1
    ops = {}
    for r in recs:
        ops[(r["phase"], r["op"])] = ops.get((r["phase"], r["op"]), 0) + 1
    return dict(cycles=T, last=last, err=err, ops=ops)


def has(rec, d):
    return d == rec["target"] or d in rec["operands"] or (rec["send"] and rec["send"][0] == d)


def check_witnesses(recs, key, observed_prev, observed_src, n, m, inv):
    for x, r in enumerate(recs):
        where = f"{r['phase']}{tuple(r['idx'])}"
        tgt = r["target"]
        if r["op"] in ("MAC", "EAC") or (r["op"] == "MOVE" and tgt is not None):
            obs = observed_prev.get(x)
            if r["first"]:
                if obs is not None:
                    raise Violation(f"{where}: witness says first, replay saw prev {obs}")
            else:
                if r["prev"] is None or r["prev"] not in key:
                    raise Violation(f"{where}: prev witness {r['prev']} is no active iteration")
                px = key[r["prev"]]
                p = recs[px]
                if px != obs:
                    raise Violation(f"{where}: prev witness {r['prev']} but replay saw "
                                    f"{(recs[obs]['phase'], recs[obs]['idx']) if obs is not None else None}")
                if p["target"] != tgt:
                    raise Violation(f"{where}: prev {r['prev']} has another target")
                moved = p["send"] == (tgt, "move")
                okA = p["pe"] == P.prev_pe(r["pe"], m) and p["cycle"] == r["cycle"] - 1 and moved
                okB = p["pe"] == r["pe"] and p["cycle"] < r["cycle"] and not moved
                if not (okA or okB):
                    raise Violation(f"{where}: prev {r['prev']} neither (pe-1,t-1,moved) nor "
                                    f"(pe,earlier,kept)")
        for oi, d in enumerate(r["operands"]):
            s = r["sources"][oi]
            obs = observed_src[(x, oi)]
            if s == "home":
                if obs != "home" or P.home_pe(d, m) != r["pe"]:
                    raise Violation(f"{where}: operand {d} witness home, replay {obs}")
                continue
            if s not in key:
                raise Violation(f"{where}: source {s} of {d} is no active iteration")
            sx = key[s]
            S = recs[sx]
            if sx != obs:
                raise Violation(f"{where}: source witness {s} of {d}, replay saw "
                                f"{obs if obs == 'home' else (recs[obs]['phase'], recs[obs]['idx'])}")
            if not has(S, d):
                raise Violation(f"{where}: source {s} never had {d}")
            sent = S["send"] is not None and S["send"][0] == d
            kept = S["pe"] == r["pe"] and S["cycle"] < r["cycle"] and not (sent and S["send"][1] == "move")
            recv = S["pe"] == P.prev_pe(r["pe"], m) and S["cycle"] <= r["cycle"] - 1 and sent
            if not (kept or recv):
                raise Violation(f"{where}: source {s} of {d} neither kept here nor sent here")
    # coverage inverse
    per_phase = {}
    for (need_, idx) in inv:
        ph = need_[0]
        kx = (ph, idx)
        if kx not in key:
            raise Violation(f"inverse {need_} -> {idx}: no active iteration")
        r = recs[key[kx]]
        if r["op"] not in ("MAC", "EAC", "DIV") or (r["target"],) + tuple(r["operands"]) != need_[1:]:
            raise Violation(f"inverse {need_} -> {idx}: iteration does {r['op']} "
                            f"{r['target']} {r['operands']}")
        per_phase.setdefault(ph, set()).add(idx)
    for ph, s in per_phase.items():
        active = sum(1 for r in recs if r["phase"] == ph and r["op"] in ("MAC", "EAC", "DIV"))
        if len(s) != active:
            raise Violation(f"{ph}: inverse hits {len(s)} iterations of {active} ops")


def check_vectorized(n, m, variant):
    """the formulas evaluated on numpy arrays (all iterations at once) agree with the int run"""
    k = n // m
    H, I, J, L = np.meshgrid(np.arange(0, n // 2 + 1), np.arange(1, k + 1), np.arange(1, n + 1),
                             np.arange(1, m + 1), indexing="ij")
    f1 = P.phase1(n, m, H, I, J, L, variant)
    f3 = P.phase3(n, m, H, I, J, L, variant)
    I2, J2, L2 = np.meshgrid(np.arange(1, k + 1), np.arange(1, n + 1), np.arange(1, m + 1),
                             indexing="ij")
    f2 = P.phase2(n, m, I2, J2, L2, 1, variant)
    for idx in itertools.product(range(H.shape[0]), range(k), range(n), range(m)):
        h, i, j, l = idx[0], idx[1] + 1, idx[2] + 1, idx[3] + 1
        g1 = P.phase1(n, m, h, i, j, l, variant)
        g3 = P.phase3(n, m, h, i, j, l, variant)
        for key_ in ("guard", "A", "B", "C", "cycle", "first"):
            assert f1[key_][idx] == g1[key_] and f3[key_][idx] == g3[key_], (key_, idx)
        for a, b in zip(f3["prev"], g3["prev"]):
            if not g3["first"] and g3["guard"]:
                assert a[idx] == b
    for idx in itertools.product(range(k), range(n), range(m)):
        g = P.phase2(n, m, idx[0] + 1, idx[1] + 1, idx[2] + 1, 1, variant)
        for key_ in ("guard", "A", "B", "unmasked", "first"):
            assert f2[key_][idx] == g[key_], (key_, idx)


def check_z3_builds():
    """the formulas also build as Z3 terms (symbolic n, m, loop indices)"""
    import z3
    n, m, h, i, j, l = z3.Ints("n m h i j l")
    f1 = P.phase1(n, m, h, i, j, l)
    f2 = P.phase2(n, m, i, j, l, 1)
    f3 = P.phase3(n, m, h, i, j, l)
    assert isinstance(f3["prev"][2], z3.ExprRef) and isinstance(f2["first"], z3.ExprRef)
    # sample lemma for a fixed instance: phase-1 A >= B whenever the guard holds
    s = z3.Solver()
    N, M = 12, 4
    g = P.phase1(N, M, h, i, j, l)
    s.add(0 <= h, h <= N // 2, 1 <= i, i <= N // M, 1 <= j, j <= N, 1 <= l, l <= M,
          g["guard"], g["A"] < g["B"])
    assert s.check() == z3.unsat
    return True


def all_sizes(nmax):
    return [(n, m) for n in range(1, nmax + 1) for m in range(1, n + 1) if n % m == 0]


def run_repaired(nmax, quick=False):
    ok = True
    for variant in ("printed", "algo1"):
        print(f"== repaired Algorithm 3, phase-1 variant '{variant}'")
        for n, m in all_sizes(nmax):
            recs, start, lens = P.generate(n, m, variant)
            inv = P.inverses(n, m, variant)
            try:
                st = simulate(recs, n, m, start, lens, witnesses=True, inv=inv)
                if not quick:
                    check_vectorized(n, m, variant)
            except (Violation, AssertionError) as e:
                ok = False
                print(f"  FAIL n={n} m={m}: {e}")
                continue
            T = st["cycles"]
            closed = P.total_cycles(n, m)
            o = st["ops"]
            mac1 = o.get(("p1", "MAC"), 0)
            mac3 = o.get(("p3", "MAC"), 0)
            eac = o.get(("p2s1", "EAC"), 0)
            dv = o.get(("p2s2", "DIV"), 0)
            tri = n * (n + 1) // 2
            assert T == closed, (T, closed)
            assert mac1 == mac3 == n * tri and eac == dv == tri
            if variant == "printed":
                print(f"  n={n:2d} m={m:2d}  cycles={T:5d} (closed form {closed}, last op ends {st['last']})  MAC1=MAC3={mac1}"
                      f"  EAC=DIV={eac}  p2 util={eac}/{n * n}  moves(p2s1)={o.get(('p2s1', 'MOVE'), 0)}"
                      f"  err={st['err']:.1e}")
        print(f"  {'all ok' if ok else 'FAILURES'} for n <= {nmax}")
    print("z3 build + sample lemma:", check_z3_builds())
    return ok


def selftest(n=6, m=3):
    """mutations of a valid record list that the checker must refute"""
    import copy
    recs0, start, lens = P.generate(n, m)
    inv0 = P.inverses(n, m)
    simulate(recs0, n, m, start, lens, True, inv0)

    def find(ph, pred):
        return next(x for x, r in enumerate(recs0) if r["phase"] == ph and pred(r))

    muts = {}
    x = find("p3", lambda r: not r["first"])
    muts["p3 prev witness off by one iteration"] = (x, lambda r: r.update(
        prev=("p3", r["prev"][1][:2] + (r["prev"][1][2] - 1,) + r["prev"][1][3:])))
    muts["p3 first witness wrong"] = (x, lambda r: r.update(first=True))
    x1 = find("p1", lambda r: r["idx"][2] == 2)
    muts["p1 partial sum copied instead of moved"] = (x1, lambda r: r.update(send=(r["send"][0], "copy")))
    x2 = find("p2s2", lambda r: r["op"] == "DIV" and r["idx"][1] == 1)
    muts["p2s2 s[A] source wrong step"] = (x2, lambda r: r["sources"].__setitem__(
        1, ("p2s2", r["sources"][1][1])))
    x3 = find("p2s1", lambda r: r["op"] == "MOVE")
    muts["p2s1 MOVE dropped (sum stays behind)"] = (x3, lambda r: r.update(send=None))
    x4 = find("p3", lambda r: r["idx"][2] == 1)
    muts["p3 operand w source = home"] = (x4, lambda r: r["sources"].__setitem__(0, "home"))
    x5 = find("p2s1", lambda r: r["op"] == "EAC")
    muts["p2s1 op one cycle early"] = (x5, lambda r: r.update(cycle=r["cycle"] - 1))
    for name, (x, f) in muts.items():
        recs = copy.deepcopy(recs0)
        f(recs[x])
        try:
            simulate(recs, n, m, start, lens, True, inv0)
            print(f"  NOT CAUGHT: {name}")
        except Violation as e:
            print(f"  caught: {name}: {e}")
    inv = list(inv0)
    inv[3] = (inv[3][0], inv[5][1])
    try:
        simulate(recs0, n, m, start, lens, True, inv)
        print("  NOT CAUGHT: wrong inverse")
    except Violation as e:
        print(f"  caught: wrong inverse: {e}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--nmax", type=int, default=17)
    ap.add_argument("--printed", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    if a.selftest:
        selftest()
    elif a.printed:
        import printed
        printed.report(a.nmax)
    else:
        sys.exit(0 if run_repaired(a.nmax, a.quick) else 1)
