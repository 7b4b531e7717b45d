"""Independent cycle-by-cycle checker of a bit-level run (no solver; shares only the record types).

It replays a `Run` on the machine of docs/bitlevel.md and lists every rule the run breaks.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from ringproof.model.bitlevel.types import BARRIERS, OP_KINDS, PHASE_OF, VARIANTS, BitOp, Run
from ringproof.model.ring.rules import RULES, assume

assume("the bit-level checker (model/bitlevel/check.py)", persists=True)


def required_ops(variant: str, n: int, d: int) -> Counter:
    """Multiset of canonical op keys (kind, i, j, l) the variant must execute exactly once each."""
    need = Counter()
    pairs = [(i, j) for i in range(n) for j in range(n) if variant != "masked" or j <= i]
    for i, j in pairs:
        for l in range(d):
            if variant != "symmetric" or i <= j:
                need[("MAC1", i, j, l)] += 1
            need[("MAC3", i, j, l)] += 1
        need[("EAC", i, j, None)] += 1
        need[("DIV", i, j, None)] += 1
    return need


def _key(variant: str, op: BitOp) -> tuple:
    if variant == "symmetric" and op.kind == "MAC1":
        return ("MAC1", min(op.i, op.j), max(op.i, op.j), op.l)
    return (op.kind, op.i, op.j, op.l)


def _w1(variant: str, i: int, j: int) -> tuple:
    return ("w1", min(i, j), max(i, j)) if variant == "symmetric" else ("w1", i, j)


def _needs(variant: str, op: BitOp) -> tuple[list[tuple], tuple | None, tuple | None]:
    """(final data read, accumulator added to, datum produced) of one op."""
    i, j, l = op.i, op.j, op.l
    if op.kind == "MAC1":
        a, b = (("x", i, l), ("x", j, l)) if variant == "symmetric" else (("q", i, l), ("k", j, l))
        return [a, b], _w1(variant, i, j), None
    if op.kind == "EAC":
        return [_w1(variant, i, j)], ("s", i), ("e", i, j)
    if op.kind == "DIV":
        return [("e", i, j), ("s", i)], None, ("w", i, j)
    v = ("x", j, l) if variant == "symmetric" else ("v", j, l)
    return [("w", i, j), v], ("y", i, l), None


def _inputs(variant: str, n: int, d: int) -> list[tuple]:
    names = ("x",) if variant == "symmetric" else ("q", "k", "v")
    return [(a, i, l) for a in names for i in range(n) for l in range(d)]


def initial_memory(run: Run) -> tuple[dict[int, set], list[str]]:
    """PE -> input data at cycle 0 (default PE i mod m), and the placement's errors."""
    inputs = _inputs(run.variant, run.n, run.d)
    mem: dict[int, set] = defaultdict(set)
    errors = []
    placement = run.placement or {}
    for datum in placement:
        if datum not in set(inputs):
            errors.append(f"placement names {datum!r}, which is not an input of {run.variant} attention")
    for datum in inputs:
        where = placement.get(datum, datum[1] % run.m)
        pes = [where] if isinstance(where, int) else list(where)
        for p in pes:
            if not isinstance(p, int) or not 0 <= p < run.m:
                errors.append(f"placement puts {datum!r} on PE {p!r}, outside 0..{run.m - 1}")
            else:
                mem[p].add(datum)
    return mem, errors


def _structure(run: Run) -> list[str]:
    bad = []
    if run.variant not in VARIANTS:
        return [f"unknown variant {run.variant!r}"]
    if run.barriers not in BARRIERS:
        return [f"unknown barrier mode {run.barriers!r}"]
    if min(run.n, run.m, run.d) < 1 or run.T < 0:
        return [f"sizes must be positive: n={run.n}, m={run.m}, d={run.d}, T={run.T}"]
    for op in run.ops:
        if op.kind not in OP_KINDS:
            bad.append(f"{op}: unknown kind")
        elif not (0 <= op.t < run.T and 0 <= op.p < run.m and 0 <= op.i < run.n and 0 <= op.j < run.n):
            bad.append(f"{op}: cycle, PE or index out of range")
        elif (op.l is None) != (op.kind in ("EAC", "DIV")) or (op.l is not None and not 0 <= op.l < run.d):
            bad.append(f"{op}: l must be in 0..d-1 for MAC1/MAC3 and None for EAC/DIV")
    for s in run.sends:
        if not (0 <= s.t < run.T and 0 <= s.p < run.m):
            bad.append(f"{s}: cycle or PE out of range")
    return bad


def _coverage(run: Run) -> list[str]:
    need = required_ops(run.variant, run.n, run.d)
    have = Counter(_key(run.variant, op) for op in run.ops)
    bad = [f"op {k} missing" for k in need if have[k] == 0]
    bad += [f"op {k} executed {c} times" for k, c in have.items() if k in need and c > 1]
    bad += [f"op {k} is not an op of {run.variant} attention" for k in have if k not in need]
    slots = Counter((op.p, op.t) for op in run.ops)
    bad += [f"PE {p} runs {c} ops in cycle {t}" for (p, t), c in sorted(slots.items()) if c > RULES.ops_per_cycle]
    return bad


def _barriers(run: Run) -> list[str]:
    """Global barriers: every op of a phase before every op of a later phase. Per-PE barriers: the
    same on each PE alone. None: only the operands order the ops."""
    if run.barriers == "none":
        return []
    groups = defaultdict(lambda: defaultdict(list))  # scope -> phase -> cycles
    for op in run.ops:
        groups[None if run.barriers == "global" else op.p][PHASE_OF[op.kind]].append(op.t)
    bad = []
    for scope, times in sorted(groups.items(), key=lambda kv: -1 if kv[0] is None else kv[0]):
        where = "" if scope is None else f" on PE {scope}"
        for a, b in ((1, 2), (2, 3), (1, 3)):
            if times[a] and times[b] and max(times[a]) >= min(times[b]):
                bad.append(f"barrier violated{where}: a phase-{a} op in cycle {max(times[a])} "
                           f"but a phase-{b} op in cycle {min(times[b])}")
    return bad


def check_run(run: Run) -> list[str]:
    """Replay `run` cycle by cycle; [] if it is a valid run, else the violations found."""
    bad = _structure(run)
    if bad:
        return bad
    mem, bad = initial_memory(run)
    bad += _coverage(run) + _barriers(run)
    v = run.variant
    need = required_ops(v, run.n, run.d)
    total = Counter()  # accumulator -> number of ops it receives
    for key in need:
        _, acc, _ = _needs(v, BitOp(0, 0, key[0], key[1], key[2], key[3]))
        if acc:
            total[acc] += 1
    known = set(_inputs(v, run.n, run.d)) | set(total)
    for key in need:
        _, _, out = _needs(v, BitOp(0, 0, key[0], key[1], key[2], key[3]))
        if out:
            known.add(out)
    count = Counter()  # accumulator -> ops done so far
    where: dict[tuple, int] = {}  # partial accumulator -> its PE
    ops_at, sends_at = defaultdict(list), defaultdict(list)
    for op in run.ops:
        ops_at[op.t].append(op)
    for s in run.sends:
        sends_at[s.t].append(s)
    for t in range(run.T):
        made = defaultdict(set)  # PE -> data produced or finished in this cycle
        touched = {}
        for op in sorted(ops_at[t], key=lambda o: o.p):
            reads, acc, out = _needs(v, op)
            for x in reads:
                if x not in mem[op.p]:
                    bad.append(f"{op}: operand {x} is not on PE {op.p} at the start of cycle {t}")
            if acc:
                if acc in touched:
                    bad.append(f"{op}: accumulator {acc} gets a second op in cycle {t}")
                elif acc in where and where[acc] != op.p:
                    bad.append(f"{op}: partial sum {acc} is on PE {where[acc]}, not PE {op.p}")
                elif count[acc] >= total[acc]:
                    bad.append(f"{op}: accumulator {acc} is already complete")
                touched[acc] = op.p
            if out:
                made[op.p].add(out)
        for acc, p in touched.items():
            count[acc] += 1
            where[acc] = p
            if count[acc] == total[acc]:
                del where[acc]
                made[p].add(acc)
        links = Counter(s.p for s in sends_at[t])
        bad += [f"link {p}->{RULES.next_pe(p, run.m, first=0)} carries {c} data in cycle {t}"
                for p, c in links.items() if c > RULES.link_capacity]
        arrive, moved = defaultdict(set), {}
        for s in sends_at[t]:
            x = s.datum
            if x not in known:
                bad.append(f"{s}: {x!r} is not a datum of {v} attention with these sizes")
            elif x in where:
                if where[x] != s.p:
                    bad.append(f"{s}: partial sum {x} is on PE {where[x]}, not PE {s.p}")
                elif x in moved:
                    bad.append(f"{s}: partial sum {x} moves twice in cycle {t}")
                else:
                    moved[x] = RULES.next_pe(s.p, run.m, first=0)
            elif x in mem[s.p] or x in made[s.p]:
                arrive[RULES.next_pe(s.p, run.m, first=0)].add(x)
            else:
                bad.append(f"{s}: {x} is not on PE {s.p} at the start of cycle {t} nor produced there in it")
        for p, xs in made.items():
            mem[p] |= xs
        for p, xs in arrive.items():
            mem[p] |= xs
        where.update(moved)
    return bad
