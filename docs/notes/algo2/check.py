"""Brute-force replay of algo2_proto records on the ring machine of /work/scratch/machine.md.

Checks, cycle by cycle: phase windows and cycle formulas (= lexicographic rank), one op per
(PE, cycle), one datum per link per cycle, presence of every operand at the start of the cycle,
finality of every value read, moves vs copies (a move takes the running sum away; only final data
are copied; a copy is renamed only w1[A,B] -> w1[B,A]), accumulators start at 0 on the PE of their
first contribution, the `first`/`prev`/`source` witnesses (against what actually happened), coverage
(every required term exactly once) and the coverage inverse, and y against numpy
softmax(x xᵀ) x (row softmax), relative error <= 1e-9.

usage: python check.py            # all (n, m), m | n, n <= 16, modes alias and circle + printed
"""

from __future__ import annotations

import itertools
import sys
from collections import Counter, defaultdict

import numpy as np

import algo2_proto as A2
from algo2_proto import At


class Fail(Exception):
    pass


def key_of(rec):
    return (rec["phase"], tuple(sorted(rec["idx"].items())))


def at_key(a: At):
    return (a.phase, tuple(sorted((k, int(v)) for k, v in a.idx)))


def symmetric_ok(a, b):
    return a == b or (a[0] == b[0] == "w1" and a[1] == b[2] and a[2] == b[1])


def required(P, name):
    return P.n if name[0] in ("w1", "s", "y") else 1


def simulate(P, x, max_errors=5, recs=None):
    """Returns (errors, y, cycles)."""
    n, m = P.n, P.m
    recs = recs if recs is not None else A2.records(P)
    errors = []

    def err(msg):
        errors.append(msg)
        if len(errors) >= max_errors:
            raise Fail()

    by_key = {key_of(r): r for r in recs}
    st = A2.starts(P)
    try:
        # ---- phase windows, cycle formula == lexicographic rank, one op per (PE, cycle)
        order = list(A2.PHASES) + ["end"]
        for ph, nxt in zip(order, order[1:]):
            rank = 0
            for ix in A2.loops(P, ph):
                c = A2.cycle(P, ph, ix)
                if c != st[ph] + rank:
                    err(f"cycle formula {ph} {ix}: {c} != start+rank {st[ph] + rank}")
                rank += 1
            if st[ph] + rank != st[nxt]:
                err(f"phase {ph} window: {st[ph]}+{rank} != next start {st[nxt]}")
        busy = set()
        for r in recs:
            if r["pe"] != r["idx"]["l"] or not 1 <= r["pe"] <= m:
                err(f"pe {r['pe']} of {r['phase']} {r['idx']}")
            if (r["pe"], r["cycle"]) in busy:
                err(f"two ops on PE {r['pe']} at cycle {r['cycle']}")
            busy.add((r["pe"], r["cycle"]))

        # ---- replay
        store = [dict() for _ in range(m + 1)]        # pe -> name -> entry
        for A in range(1, n + 1):
            for C in range(1, n + 1):
                store[A2.wrap(C, m)][("x", A, C)] = dict(val=x[A - 1, C - 1], cnt=1, final=True,
                                                         prov="HOME")
        acc_cnt = Counter()
        acc_last = {}                                  # name -> record of last contribution
        contrib = Counter()
        who = {}                                       # contribution key -> record key
        arrivals = defaultdict(list)                   # cycle -> [(pe, name, entry)]
        bycycle = defaultdict(list)
        for r in recs:
            bycycle[r["cycle"]].append(r)

        def in_range(name):
            return all(1 <= v <= n for v in name[1:])

        for t in sorted(set(bycycle) | set(arrivals)):
            for pe, name, entry in arrivals.pop(t, []):
                old = store[pe].get(name)
                if old is not None:
                    if not (old["final"] and entry["final"] and old["val"] == entry["val"]):
                        err(f"t={t}: {name} arrives at PE {pe} where a different {name} is")
                store[pe][name] = entry
            for r in bycycle.get(t, []):
                pe, op = r["pe"], r["op"]
                where = f"t={t} PE{pe} {r['phase']}{r['idx']}"
                vals = []
                for opnd, src in zip(r["operands"], r["sources"]):
                    if not in_range(opnd):
                        err(f"{where}: operand {opnd} out of range")
                        continue
                    e = store[pe].get(opnd)
                    if e is None:
                        err(f"{where}: operand {opnd} absent")
                        vals.append(np.nan)
                        continue
                    if not e["final"]:
                        err(f"{where}: operand {opnd} not final ({e['cnt']} terms)")
                    vals.append(e["val"])
                    # source witness: must name the iteration that put this copy here
                    if src == A2.HOME:
                        ok = e["prov"] == "HOME"
                    else:
                        wk = at_key(src)
                        ok = e["prov"] == wk
                        W = by_key.get(wk)
                        if W is None:
                            ok = False
                        elif ok and W["pe"] != pe:
                            ok = (W["pe"] == A2.wrap(pe - 1, m) and W["cycle"] < t
                                  and W["send"] is not None and W["send"]["stored_as"] == opnd)
                    if not ok:
                        err(f"{where}: source witness {src} of {opnd} wrong (actual {e['prov']})")
                T = r["target"]
                if op in ("MAC", "EAC"):
                    if not in_range(T):
                        err(f"{where}: target {T} out of range")
                        continue
                    cnt = acc_cnt[T]
                    if r["first"]:
                        if cnt:
                            err(f"{where}: first contribution to {T} but it has {cnt} terms")
                        store[pe][T] = dict(val=0.0, cnt=0, final=False, prov=None)
                    else:
                        if not cnt:
                            err(f"{where}: {T} has no previous contribution but first=False")
                        pk = at_key(r["prev"])
                        last = acc_last.get(T)
                        if last is None or key_of(last) != pk:
                            err(f"{where}: prev witness {r['prev']} of {T} wrong "
                                f"(actual {None if last is None else key_of(last)})")
                        else:
                            moved = (last["send"] is not None and last["send"]["kind"] == "move"
                                     and last["send"]["datum"] == T)
                            okp = ((last["pe"] == A2.wrap(pe - 1, m) and last["cycle"] == t - 1
                                    and moved)
                                   or (last["pe"] == pe and last["cycle"] < t and not moved))
                            if not okp:
                                err(f"{where}: prev {pk} of {T} is not at (pe-1,t-1)+move "
                                    f"or (pe,earlier)+kept")
                        if T not in store[pe]:
                            err(f"{where}: running {T} absent")
                            store[pe][T] = dict(val=0.0, cnt=cnt, final=False, prov=None)
                    e = store[pe][T]
                    if e["final"]:
                        err(f"{where}: {T} already final")
                    if op == "MAC" and T[0] == "w1":
                        (a1, A, C), (a2, B, C2) = r["operands"]
                        if (A, B) != T[1:] or C != C2:
                            err(f"{where}: MAC {T} with operands {r['operands']}")
                        ck = ("w1", A, B, C)
                        e["val"] += vals[0] * vals[1]
                    elif op == "MAC":                       # y[A, C] += w[A, B] x[B, C]
                        (_, A, B), (_, B2, C) = r["operands"]
                        if T[1:] != (A, C) or B != B2:
                            err(f"{where}: MAC {T} with operands {r['operands']}")
                        ck = ("y", A, C, B)
                        e["val"] += vals[0] * vals[1]
                    else:                                   # s[A] += exp(w1[A, B])
                        o = r["operands"][0]
                        A = T[1]
                        if o[1] == A:
                            B = o[2]
                        elif o[2] == A:
                            B = o[1]                        # read under the symmetric name
                        else:
                            err(f"{where}: EAC {T} with {o}")
                            B = -1
                        ck = ("s", A, B)
                        e["val"] += np.exp(vals[0])
                    e["cnt"] += 1
                    acc_cnt[T] += 1
                    e["final"] = e["cnt"] == required(P, T)
                    e["prov"] = key_of(r)
                    acc_last[T] = r
                    contrib[ck] += 1
                    who.setdefault(ck, key_of(r))
                elif op == "DIV":
                    o, so = r["operands"]
                    A, B = T[1], T[2]
                    if so != ("s", A) or not (o == ("w1", A, B) or o == ("w1", B, A)):
                        err(f"{where}: DIV {T} with {r['operands']}")
                    if acc_cnt[T] or any(T in store[p] for p in range(1, m + 1)):
                        err(f"{where}: {T} assigned twice")
                    store[pe][T] = dict(val=np.exp(vals[0]) / vals[1], cnt=1, final=True,
                                        prov=key_of(r))
                    acc_cnt[T] += 1
                    contrib[("w", A, B)] += 1
                    who.setdefault(("w", A, B), key_of(r))
                elif op != "MOVE":
                    err(f"{where}: unknown op {op}")
                # ---- send (at most one per PE per cycle: one record per (PE, cycle))
                sd = r["send"]
                if sd is None:
                    continue
                D, S = sd["datum"], sd["stored_as"]
                e = store[pe].get(D)
                if e is None:
                    err(f"{where}: sends {D} which is absent")
                    continue
                dest = A2.wrap(pe + 1, m)
                if sd["kind"] == "move":
                    if D != T or op not in ("MAC", "EAC"):
                        err(f"{where}: move of {D} which is not its own accumulator target")
                    if S != D:
                        err(f"{where}: move of {D} 'stored as' {S}: only a copy may be renamed; "
                            f"a move takes the finished {D} away from PE {pe} (phase 2 reads it there)")
                    del store[pe][D]
                    arrivals[t + 1].append((dest, D, dict(e)))
                else:
                    if not e["final"]:
                        err(f"{where}: copy of non-final {D}")
                    if not symmetric_ok(D, S):
                        err(f"{where}: copy of {D} stored as {S}: names not declared equal")
                    if S[0] == "w1" and S != D and e["final"]:
                        contrib[("w1",) + S[1:]] += 1            # a mirror delivered
                        who.setdefault(("w1",) + S[1:], key_of(r))
                    ne = dict(e, prov=key_of(r))
                    arrivals[t + 1].append((dest, S, ne))

        # ---- end state: finality, coverage, inverse, numbers
        for T, c in acc_cnt.items():
            if c != required(P, T):
                err(f"{T}: {c} contributions, {required(P, T)} required")
        inv = A2.inverse_map(P)
        for ck in inv:
            want = 1
            got = contrib.get(ck, 0)
            if ck[0] == "w1" and len(ck) == 3 and A2.aliased(P, ck[1], ck[2]):
                continue        # alias mode: no copy; phase 2 reads w1[B, A] (checked above)
            if got != want:
                err(f"coverage: {ck} done {got} times")
                continue
            wk = at_key(inv[ck])
            if who.get(ck) != wk:
                err(f"inverse: {ck} -> {inv[ck]} but done by {who.get(ck)}")
        extra_terms = set(contrib) - set(inv)
        if extra_terms:
            err(f"terms not required: {sorted(extra_terms)[:3]}")
        y = np.full((n, n), np.nan)
        for C in range(1, n + 1):
            for A in range(1, n + 1):
                e = store[A2.wrap(C, m)].get(("y", A, C))
                if e is None or not e["final"]:
                    err(f"y[{A},{C}] missing/not final on PE {A2.wrap(C, m)}")
                else:
                    y[A - 1, C - 1] = e["val"]
        W = x @ x.T
        Sm = np.exp(W - W.max(axis=1, keepdims=True))
        ref = (Sm / Sm.sum(axis=1, keepdims=True)) @ x
        rel = np.max(np.abs(y - ref)) / np.max(np.abs(ref))
        if not rel <= 1e-9:
            err(f"y differs from numpy: rel err {rel:.3g}")
    except Fail:
        pass
    return errors, st["end"]


def sizes(nmax=16):
    return [(n, m) for n in range(1, nmax + 1) for m in range(1, n + 1) if n % m == 0]


def main():
    rng = np.random.default_rng(1)
    bad = 0
    print("== repaired schedule: all (n, m), m | n, n <= 16")
    for mode in ("alias", "circle"):
        rows = []
        for n, m in sizes():
            P = A2.params(n, m, mode=mode)
            x = rng.standard_normal((n, n)) * 0.5
            recs = A2.records(P)
            errors, cyc = simulate(P, x, recs=recs)
            closed = A2.total_cycles_closed(n, m, mode)
            macs = sum(1 for r in recs if r["phase"] == "1" and r["op"] == "MAC")
            moves = sum(1 for r in recs if r["op"] == "MOVE")
            want = n * n * (n + 1) // 2 if n % 2 else n * n * (n + 2) // 2
            if macs != want:
                errors.append(f"phase-1 MACs {macs} != {want}")
            if errors or cyc != closed:
                bad += 1
                print(f"  FAIL {mode} n={n} m={m}: cycles {cyc} closed {closed}: {errors[:3]}")
            rows.append(f"({n},{m})={cyc}" + (f"[{moves // m}mv]" if moves else ""))
        print(f"  {mode}: {len(rows)} sizes OK unless listed; cycles: " + " ".join(rows))

    print("\n== printed defects, each alone on top of the repaired schedule (alias mode):"
          " smallest failing (n, m), overall and with m >= 2")
    for d, mmin in itertools.product(A2.PRINTED_DEFECTS, (1, 2)):
        found = None
        for n, m in sizes(12):
            if m < mmin:
                continue
            P = A2.params(n, m, defects=(d, "E-block") if d == "trunc-E" else (d,))
            try:
                errors, cyc = simulate(P, rng.standard_normal((n, n)) * 0.5, max_errors=1)
            except Exception as ex:          # out-of-range names etc.
                errors = [f"crash {type(ex).__name__}: {ex}"]
            if errors:
                found = (n, m, errors[0])
                break
        print(f"  {d:11s} m>={mmin}: " + (f"n={found[0]} m={found[1]}: {found[2]}" if found else "no failure n<=12"))

    print("\n== printed pseudo-code, literal reading", A2.PRINTED_LITERAL)
    for n, m in [(2, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 3), (6, 6), (9, 3), (15, 5), (15, 15)]:
        P = A2.printed(n, m)
        errors, cyc = simulate(P, rng.standard_normal((n, n)) * 0.5, max_errors=1)
        print(f"  n={n} m={m}: cycles {cyc}; first error: {errors[0] if errors else None}")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
