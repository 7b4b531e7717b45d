"""Proof reports in Markdown, HTML and JSON: the verdict table, counterexamples, closed-form
counts, and the schedule as a PE × cycle grid (like Fig. 2 of the paper)."""

from __future__ import annotations

import html
from ringproof.proofs.jsonout import dumps

import numpy as np

from ringproof.model.ring.trace import build_trace
from ringproof.proofs.results import Verdict
from ringproof.schedules.dsl import Schedule

PHASE_COLOURS = ["#dbe9f6", "#fde2c8", "#e3f1d9", "#f2dcf0", "#fff3bf", "#e0e0e0"]


def grid(schedule: Schedule, n: int, m: int, max_cycles: int = 24) -> dict:
    """The first cycles of the schedule: rows PEs 1..m, columns cycles, cells 'OP target'."""
    trace = build_trace(schedule, n, m)
    cycles = min(trace.cycles, max_cycles)
    cells = [["" for _ in range(cycles)] for _ in range(m)]
    phase_of = [""] * cycles
    for k, pt in enumerate(trace.phases):
        sel = np.nonzero(pt.busy & (pt.cycle < cycles))[0]
        for i in sel:
            t, p = int(pt.cycle[i]), int(pt.pe[i])
            op = pt.op.value if pt.active[i] else "MOVE"
            what = trace.layout.name(int(pt.target[i])) if pt.active[i] and pt.target[i] >= 0 else \
                trace.layout.name(int(pt.sent[i]))
            arrow = " →" if pt.send[i] else ""
            if 1 <= p <= m:
                cells[p - 1][t] = f"{op} {what}{arrow}"
            phase_of[t] = pt.phase.name
    return {"n": n, "m": m, "cycles_shown": cycles, "cycles_total": trace.cycles,
            "phases": phase_of, "cells": cells}


def to_json(target: str, schedule: Schedule, results, picture: dict | None) -> str:
    return dumps("report", {"target": target, "schedule": schedule.name,
                            "verdict": Verdict.combine(r.verdict for r in results).value,
                            "results": [r.to_json() for r in results], "grid": picture})


def _counts_line(results) -> str:
    c = next((r.details for r in results if r.property == "counts" and r.details), None)
    if not c:
        return ""
    ops = ", ".join(f"{k} = {v}" for k, v in c["ops"].items() if v not in (None, "0"))
    return f"cycles = {c['cycles']}; {ops}; utilization = {c['utilization']}"


def to_markdown(target: str, schedule: Schedule, results, picture: dict | None) -> str:
    verdict = Verdict.combine(r.verdict for r in results).value
    out = [f"# ringproof report: {schedule.name}", "", f"Overall verdict: **{verdict}**", "",
           "| property | phase | verdict | tier | seconds |", "| --- | --- | --- | --- | --- |"]
    out += [f"| {r.property} | {r.phase} | {r.verdict.value} | {r.tier} | {r.seconds:.2f} |" for r in results]
    line = _counts_line(results)
    if line:
        out += ["", f"Counts (closed forms): {line}"]
    for r in results:
        if r.verdict is Verdict.PROVED:
            continue
        out += ["", f"## {r.verdict.value}: {r.property} / {r.phase}", "", r.reason]
        cex = r.counterexample
        if cex:
            out += ["", f"Counterexample n = {cex.n}, m = {cex.m}: {cex.message}", ""]
            out += ["- " + ", ".join(f"{k}={v}" for k, v in it.items()) for it in cex.iterations]
            out += ["", f"Replay: `{cex.command(target)}`"]
    if picture:
        out += ["", f"## Schedule, first {picture['cycles_shown']} of {picture['cycles_total']} cycles "
                f"(n = {picture['n']}, m = {picture['m']})", "",
                "| PE | " + " | ".join(str(t) for t in range(picture["cycles_shown"])) + " |",
                "| --- |" + " --- |" * picture["cycles_shown"]]
        for p, row in enumerate(picture["cells"], 1):
            out.append(f"| {p} | " + " | ".join(c or "·" for c in row) + " |")
    return "\n".join(out) + "\n"


def to_html(target: str, schedule: Schedule, results, picture: dict | None) -> str:
    e = html.escape
    verdict = Verdict.combine(r.verdict for r in results).value
    colour = {"proved": "#2e7d32", "refuted": "#c62828", "unknown": "#ef6c00"}
    rows = "".join(
        f"<tr><td>{e(r.property)}</td><td>{e(r.phase)}</td>"
        f"<td style='color:{colour[r.verdict.value]};font-weight:bold'>{r.verdict.value}</td>"
        f"<td>{r.tier}</td><td>{r.seconds:.2f}</td></tr>" for r in results)
    parts = [f"<!doctype html><meta charset='utf-8'><title>ringproof: {e(schedule.name)}</title>",
             "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
             "td,th{border:1px solid #bbb;padding:3px 6px;font-size:13px}"
             ".grid td{font-family:monospace;font-size:11px;white-space:nowrap}</style>",
             f"<h1>{e(schedule.name)}</h1><p>Overall verdict: "
             f"<b style='color:{colour[verdict]}'>{verdict}</b></p>",
             "<table><tr><th>property</th><th>phase</th><th>verdict</th><th>tier</th><th>seconds</th></tr>"
             f"{rows}</table>"]
    line = _counts_line(results)
    if line:
        parts.append(f"<p>Counts (closed forms): {e(line)}</p>")
    for r in results:
        if r.verdict is Verdict.PROVED:
            continue
        parts.append(f"<h2>{r.verdict.value}: {e(r.property)} / {e(r.phase)}</h2><p>{e(r.reason)}</p>")
        cex = r.counterexample
        if cex:
            items = "".join("<li>" + e(", ".join(f"{k}={v}" for k, v in it.items())) + "</li>"
                            for it in cex.iterations)
            parts.append(f"<p>Counterexample n = {cex.n}, m = {cex.m}: {e(cex.message)}</p><ul>{items}</ul>"
                         f"<p>Replay: <code>{e(cex.command(target))}</code></p>")
    if picture:
        names = sorted(set(picture["phases"]) - {""}, key=picture["phases"].index)
        col = {p: PHASE_COLOURS[i % len(PHASE_COLOURS)] for i, p in enumerate(names)}
        head = "".join(f"<th style='background:{col.get(ph, '#fff')}'>{t}</th>"
                       for t, ph in enumerate(picture["phases"]))
        body = "".join(
            f"<tr><th>PE {p}</th>" + "".join(
                f"<td style='background:{col.get(picture['phases'][t], '#fff')}'>{e(c) or '·'}</td>"
                for t, c in enumerate(row)) + "</tr>"
            for p, row in enumerate(picture["cells"], 1))
        legend = ", ".join(f"<span style='background:{c}'>&nbsp;{e(p)}&nbsp;</span>" for p, c in col.items())
        parts.append(f"<h2>Schedule: first {picture['cycles_shown']} of {picture['cycles_total']} cycles "
                     f"(n = {picture['n']}, m = {picture['m']})</h2><p>{legend}; → marks a send</p>"
                     f"<table class='grid'><tr><th>cycle</th>{head}</tr>{body}</table>")
    return "\n".join(parts) + "\n"


RENDER = {"md": to_markdown, "html": to_html, "json": to_json}
