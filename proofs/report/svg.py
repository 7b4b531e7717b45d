"""The schedule of one instance as an SVG grid of PEs × cycles, in the manner of the paper's Fig. 2.

Each cell holds the op of that PE in that cycle and its indices (A, B, C): the target's indices,
then the summation index the operands add. A send is an arrow to the next PE one cycle later (the
ring is unidirectional; PE m sends to PE 1, drawn as a stub marked ↻). Columns are shaded by
phase. Only the chosen cycles are drawn; a gap between them is a thin dashed line.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from types import SimpleNamespace

import numpy as np

from ringproof.model.ring.trace import PhaseTrace, Stream, Trace

SHADES = ["#dbe9f6", "#fde2c8", "#e3f1d9", "#f2dcf0", "#fff3bf", "#e0e0e0"]
CELL_W, CELL_H, GAP, LEFT, TOP = 84, 38, 16, 56, 44   # GAP: between PE rows, for arrows


@dataclass(frozen=True)
class Cell:
    pe: int
    cycle: int
    op: str          # MAC, EAC, DIV, MOVE, or "" (idle)
    indices: str     # "(A, B, C)" or the datum only forwarded
    datum: str       # the op's target, or the datum forwarded, e.g. "w1[1, 2]"
    phase: str
    send: bool


def default_cycles(trace: Trace, per_phase: int = 6) -> list[int]:
    """`per_phase` cycles of every phase from its first busy one, so that every phase is seen."""
    return _from_first_busy([(pt, pt.cycle[pt.busy]) for pt in trace.phases], per_phase)


def first_cycles(stream: Stream, per_phase: int = 6) -> list[int]:
    """`default_cycles` of a schedule read lazily (any size): each phase up to its first busy block."""
    firsts = []
    for k in range(len(stream.tuples)):
        busy = np.zeros(0, dtype=np.int64)
        for pt in stream.blocks(k):
            busy = pt.cycle[pt.busy]
            if busy.size:
                break
        firsts.append((SimpleNamespace(start=stream.starts[k], tuples=stream.tuples[k]), busy))
    return _from_first_busy(firsts, per_phase)


def window(stream: Stream, cycles) -> Trace:
    """The trace a picture of `cycles` needs, at any size: those cycles, and each phase's first block
    of cycles, on which the summation index a cell shows is decided (`_free_positions`: a few
    cycles may not tell it; a small instance's phases are read whole)."""
    lead = [c for s, t in zip(stream.starts, stream.tuples) for c in range(s, s + min(t, stream.per_block))]
    return stream.window(set(cycles) | set(lead))


def _from_first_busy(phases, per_phase: int) -> list[int]:
    """(phase's start and tuples, cycles of its busy iterations) -> the cycles to show."""
    out = []
    for pt, busy in phases:
        first = int(busy.min()) if busy.size else pt.start
        out += range(first, min(first + per_phase, pt.start + pt.tuples))
    return out


def around(cycles, trace, context: int = 3) -> list[int]:
    """The given cycles with `context` cycles either side (for a counterexample's failing cells);
    `trace`: a Trace or a Stream (its number of cycles)."""
    return sorted({t + d for t in cycles for d in range(-context, context + 1) if 0 <= t + d < trace.cycles})


def failing_cells(trace: Trace, iterations) -> set[tuple[int, int]]:
    """(PE, cycle) of each iteration named by a counterexample (rows with a 'phase' and indices)."""
    out = set()
    for it in iterations:
        try:
            pt = trace.phase(it.get("phase", ""))
        except KeyError:
            continue
        names = pt.phase.index_names
        if not all(k in it for k in names):
            continue
        pos = int(pt.locate({k: np.array([it[k]]) for k in names})[0])
        if pos >= 0:
            out.add((int(pt.pe[pos]), int(pt.cycle[pos])))
    return out


def cells(trace: Trace, cycles) -> dict[tuple[int, int], Cell]:
    """(PE, cycle) -> Cell for the busy PEs of the given cycles."""
    want = np.zeros(trace.cycles, dtype=bool)
    want[list(cycles)] = True
    out = {}
    for pt in trace.phases:
        free = _free_positions(pt, trace)
        for i in np.nonzero(pt.busy & want[pt.cycle])[0]:
            t, p = int(pt.cycle[i]), int(pt.pe[i])
            if (p, t) in out:
                continue
            if pt.active[i]:
                idx = _unravel(trace, int(pt.target[i]))
                idx += [_unravel(trace, int(pt.operands[o][i]))[q] for o, q in free]
                op, what = pt.op.value, "(" + ", ".join(map(str, idx)) + ")" if idx else "(?)"
                datum = trace.layout.name(int(pt.target[i]))
            else:
                op, datum = "MOVE", trace.layout.name(int(pt.sent[i]))
                what = datum if int(pt.sent[i]) >= 0 else "out of range"
            out[(p, t)] = Cell(p, t, op, what, datum, pt.phase.name, bool(pt.send[i]))
    return out


def _unravel(trace: Trace, ident: int) -> list[int]:
    if ident < 0:
        return []
    name = trace.layout.name(ident)
    return [int(x) for x in name[name.index("[") + 1:-1].split(",")]


def _free_positions(pt: PhaseTrace, trace: Trace) -> list[tuple[int, int]]:
    """(operand, position) of the operand indices that are not target indices in this phase (the
    summation index), each distinct one once; decided on the phase's active iterations."""
    act = np.nonzero(pt.active & (pt.target >= 0))[0]
    if act.size == 0:
        return []

    def columns(ids):
        rows = [_unravel(trace, int(x)) for x in ids[act]]
        width = min((len(r) for r in rows), default=0)
        return [np.array([r[q] for r in rows]) for q in range(width)]

    bound = columns(pt.target)
    free: list = []
    for o, ids in enumerate(pt.operands):
        if (ids[act] < 0).any():
            continue
        for q, col in enumerate(columns(ids)):
            if not any(np.array_equal(col, b) for b in bound):
                free.append((o, q))
                bound.append(col)
    return free


def phases_of(trace: Trace, cycles) -> dict[int, str]:
    """cycle -> the name of the phase running then, for the given cycles (not all: there may be
    millions)."""
    return {t: pt.phase.group or pt.phase.name for pt in trace.phases for t in cycles
            if pt.start <= t < pt.start + pt.tuples}


PER_ROW = 12     # cycles per row of a picture that fits a page (12 × CELL_W + LEFT ≈ 1070 px)


def rows(trace: Trace, cycles, marked=(), per_row: int = PER_ROW) -> list[str]:
    """The picture wrapped into rows of at most `per_row` cycles, so it fits the page's width; the
    legend under the last row."""
    cycles = sorted(set(cycles))
    chunks = [cycles[i:i + per_row] for i in range(0, len(cycles), per_row)] or [[]]
    return [picture(trace, c, marked, legend=k == len(chunks) - 1) for k, c in enumerate(chunks)]


def picture(trace: Trace, cycles=None, marked=(), title: str = "", legend: bool = True) -> str:
    """The SVG text: one rect.cell per (PE, cycle) shown; marked (PE, cycle) cells outlined red."""
    cycles = sorted(set(cycles if cycles is not None else default_cycles(trace)))
    m = trace.m
    busy = cells(trace, cycles)
    phase_at = phases_of(trace, cycles)
    names = [pt.phase.name for pt in trace.phases]
    shade = {p: SHADES[i % len(SHADES)] for i, p in enumerate(names)}
    col = {t: i for i, t in enumerate(cycles)}
    width, height = max(LEFT + CELL_W * len(cycles) + 12, 520), TOP + (CELL_H + GAP) * m + (42 if legend else 4)
    x = lambda t: LEFT + CELL_W * col[t]
    y = lambda p: TOP + (CELL_H + GAP) * (p - 1)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="schedule" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, monospace" font-size="11" '
           f'data-n="{trace.n}" data-m="{m}" data-cycles="{len(cycles)}">',
           f"<title>{escape(title or f'{trace.schedule.name}, n = {trace.n}, m = {m}')}</title>",
           '<defs><marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M0,0 L8,4 L0,8 z" fill="#333"/></marker></defs>']
    for i, t in enumerate(cycles):           # phase band and cycle numbers
        ph = phase_at.get(t, "")
        if i == 0 or phase_at.get(cycles[i - 1]) != ph:
            out.append(f'<text x="{x(t) + 3}" y="13" font-weight="bold" fill="#444">{escape(ph)}</text>')
        out.append(f'<rect x="{x(t)}" y="18" width="{CELL_W}" height="8" fill="{shade.get(ph, "#fff")}"/>')
        out.append(f'<text x="{x(t) + CELL_W / 2}" y="{TOP - 6}" text-anchor="middle" fill="#555">{t}</text>')
        if i and cycles[i - 1] != t - 1:
            out.append(f'<line class="gap" x1="{x(t)}" y1="18" x2="{x(t)}" y2="{y(m) + CELL_H}" '
                       'stroke="#999" stroke-width="3" stroke-dasharray="2,3"/>')
    for p in range(1, m + 1):
        out.append(f'<text x="6" y="{y(p) + CELL_H / 2 + 4}" font-weight="bold">PE {p}</text>')
        for t in cycles:
            c = busy.get((p, t))
            bad = (p, t) in set(marked)
            fill = shade.get(phase_at.get(t, ""), "#fff") if c else "#fafafa"
            stroke = 'stroke="#c62828" stroke-width="3"' if bad else 'stroke="#999" stroke-width="0.6"'
            tip = f"<title>{c.op} {escape(c.datum)}, PE {p}, cycle {t}</title>" if c else ""
            out.append(f'<rect class="cell{" failing" if bad else ""}" data-pe="{p}" data-cycle="{t}" '
                       f'x="{x(t)}" y="{y(p)}" width="{CELL_W}" height="{CELL_H}" fill="{fill}" {stroke}>{tip}</rect>')
            if c:
                out.append(f'<text x="{x(t) + 5}" y="{y(p) + 15}" font-weight="bold">{c.op}</text>')
                text = c.indices if len(c.indices) <= 13 else c.indices[:12] + "…"
                out.append(f'<text x="{x(t) + 5}" y="{y(p) + 31}" font-size="10">{escape(text)}</text>')
    for (p, t), c in busy.items():           # transfers: PE p at t to PE p mod m + 1 at t + 1
        if not c.send:
            continue
        x0, y0 = x(t) + CELL_W - 24, y(p) + CELL_H
        if p < m and t + 1 in col:
            x1, y1 = x(t + 1) + 20, y(p + 1)
        else:                                   # wrap-around to PE 1, or a next cycle not shown
            x1, y1 = x0 + 10, y0 + GAP - 3
            if p == m:
                out.append(f'<text x="{x1 + 3}" y="{y1 + 1}" font-size="11" fill="#333">↻</text>')
        out.append(f'<line class="send" x1="{x0}" y1="{y0}" x2="{x1}" y2="{y1}" stroke="#333" '
                   'stroke-width="1.2" marker-end="url(#arrow)"/>')
    lines = ["arrow: a send to the next PE, arriving one cycle later; ↻ PE m → PE 1; dashed: cycles left out"]
    if marked:
        lines.append("red: the iterations of the counterexample")
    for i, line in enumerate(lines if legend else []):
        out.append(f'<text x="{LEFT}" y="{y(m) + CELL_H + GAP + 10 + 13 * i}" font-size="10" '
                   f'fill="#444">{escape(line)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
