"""A report document (the data of `collect` and `front`) as Markdown, self-contained HTML or JSON.

The document: {"schema", "schema_version", "generated": {command, versions, options},
"front": {...} or null, "targets": [...]}; docs/report.schema.json describes it.
"""

from __future__ import annotations

import html
import json

from ringproof.proofs.jsonout import strict

COLOURS = {"proved": "#2e7d32", "refuted": "#c62828", "unknown": "#ef6c00"}


def to_json(doc: dict) -> str:
    return json.dumps(strict(doc), indent=2, allow_nan=False) + "\n"


# ----------------------------------------------------------------------------- shared content

def _z3(stats: dict) -> str:
    return ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in stats.items())


def _cross(p: dict) -> str:
    c = p.get("cross_check")
    if not c:
        return "—"
    answers = ", ".join(f"{a} {n}" for a, n in c["answers"].items())
    loud = " — DISAGREEMENT" if p.get("disagreements") else ""
    return f"{c['solver']} {c['version']}: {answers} of {c['z3_unsat']} z3-unsat{loud}"


def _proof_rows(t: dict) -> list[list[str]]:
    return [[p["property"], p["phase"], p["verdict"], str(p["queries"]), ", ".join(p["lemmas"]) or "—",
             str(p["side_conditions"]), _z3(p["z3"]), _cross(p), str(len(p.get("smt2", [])))]
            for p in t["proofs"]]


PROOF_HEAD = ["property", "phase", "verdict", "queries", "normalization lemmas", "side conditions",
              "Z3 statistics (summed)", "second solver", ".smt2 files"]


def _count_rows(c: dict) -> list[list[str]]:
    def per(forms):
        return "; ".join(f"{x['class']}: {x['formula']}" if x["class"] else x["formula"] for x in forms or [])

    return [[r["quantity"], r["derived"] if r["derived"] is not None else "not derived",
             per(r["per_residue"]) or "(a sum: see the verdict)", per(r.get("claim_per_residue")) or "—"]
            for r in c["rows"]]


COUNT_HEAD = ["quantity", "derived", "derived, per residue class", "paper's claim, per residue class"]


def _table_i_rows(front: dict) -> list[list[str]]:
    return [[f"({r['n']}, {r['m']})", str(r["paper"]), str(r["ours"]), str(r["closed_form"]),
             str(r["ops_per_pe"]), str(r["beyond_ops"]), r["paper_es"],
             f"{r['difference']:+d}" if r["difference"] else "0", r["why"]] for r in front["table_i"]]


TABLE_I_HEAD = ["(n, m)", "paper Algo.2", "ours (trace)", "closed form", "(#ops)/m", "cycles beyond ops",
                "paper ES", "ours − paper", "why"]


def _table_ii_rows(front: dict) -> list[list[str]]:
    mark = lambda ours, paper: f"{ours} {'✓' if str(ours) == str(paper) else '✗'}"
    return [[f"({r['n']}, {r['m']})", str(r["paper"]), mark(r["ours"], r["paper"]), str(r["closed_form"]),
             mark(r["paper_formula"], r["paper"]), r["paper_es"], r["all_ops_per_pe"], r["macs_per_pe"],
             str(r["algo1_paper"]), mark(r["algo1_ours"], r["algo1_paper"])] for r in front["table_ii"]]


TABLE_II_HEAD = ["(n, m)", "paper Algo.3", "ours (ring model)", "(2·(n div 2)+4)·n²/m", "paper's n²(n+2)/m+2n²/m",
                 "paper ES", "all ops/m", "MACs/m", "paper Algo.1", "ours Algo.1"]


def _es_rows(front: dict) -> list[list[str]]:
    return [[r["variant"], str(r["n"]), str(r["m"]), r["paper"], r["ours"], r["lemma_bound"], r["seconds"]]
            for r in front["es_minima"]]


ES_HEAD = ["variant", "n", "m", "paper ES", "ours: minimum (and how T − 1 is refuted)", "lemma bound", "our seconds"]
ES_NOTE = ("Recorded by `python benchmarks/es_tables.py` (docs/es_tables.md; minutes of SAT search, so not "
           "re-run here). T − 1 is refuted by slot counting (lemma L1) or by lemma L2b below, each proved "
           "for every n; from the lemma bound on, by the SAT solver. The masked bounds rest on the "
           "barriers between phases (fair readings).")


def _lemma_rows(front: dict) -> list[list[str]]:
    return [[x["name"], x["statement"], x["method"], "proved" if x["proved"] else "NOT proved"]
            for x in front["lower_bound_lemmas"]]


def _cbmf_rows(front: dict) -> list[list[str]]:
    return [[c["reading"], c["heuristic"], "; ".join("(" + ", ".join(p) + ")" for p in c["patches"]),
             str(c["near"]), c["heuristic_makespan"], c["optimum"] or "not proven",
             "refuted" if c["refuted"] else "not refuted"] for c in front["cbmf"]]


CBMF_HEAD = ["reading", "schedule", "patches (bank shares)", "near bank of each cluster", "makespan",
             "proven optimum", "claim"]


def _defect_rows(t: dict) -> list[list[str]]:
    return [[d["defect"], d["phase"], d["field"], d["printed"], d["repaired"]] for d in t["defects"]]


DEFECT_HEAD = ["defect", "phase", "field", "printed", "repaired"]


def _iters(cex: dict) -> list[str]:
    return [", ".join(f"{k}={v}" for k, v in it.items()) for it in cex["iterations"]]


# ----------------------------------------------------------------------------- Markdown

def _md_table(head, rows) -> list[str]:
    esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
    return ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)] + \
        ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]


def to_markdown(doc: dict) -> str:
    g = doc["generated"]
    out = ["# ringproof report", "", f"Reproduce: `{g['command']}`", "",
           "Versions: " + ", ".join(f"{k} {v}" for k, v in g["versions"].items() if v), ""]
    front = doc.get("front")
    if front:
        out += ["## Table I (Algorithm 2, symmetric attention)", ""] + _md_table(TABLE_I_HEAD, _table_i_rows(front))
        out += ["", "## Table II (Algorithm 3, masked attention)", ""] + _md_table(TABLE_II_HEAD, _table_ii_rows(front))
        out += ["", front["table_ii_why"], "", "## ES minima on the bit-level machine", "", ES_NOTE, ""]
        out += _md_table(ES_HEAD, _es_rows(front)) + [""] + _md_table(["lemma", "statement", "method", "verdict"],
                                                                       _lemma_rows(front))
        out += ["", "## Fair readings", ""]
        for r in front["fair_readings"]:
            out += [f"- **{r['topic']}.** Paper: {r['paper']} Ours: {r['ours']} ({r['where']})"]
        out += [""] + _md_table(CBMF_HEAD, _cbmf_rows(front))
    for t in doc["targets"]:
        out += _md_target(t)
    return "\n".join(out) + "\n"


def _md_target(t: dict) -> list[str]:
    out = ["", f"## {t['schedule']}: **{t['verdict']}**", "", t["doc"], "", f"Reproduce: `{t['command']}`", ""]
    out += _md_table(["property", "phase", "verdict", "tier", "seconds"],
                     [[r["property"], r["phase"], r["verdict"], r["tier"], f"{r['seconds']:.2f}"] for r in t["results"]])
    if t["proofs"]:
        out += ["", "### What the proofs rested on", ""] + _md_table(PROOF_HEAD, _proof_rows(t))
    if t["counts"]:
        out += ["", f"### Counts ({t['counts']['verdict']})", ""] + _md_table(COUNT_HEAD, _count_rows(t["counts"]))
        if t["counts"]["reason"]:
            out += ["", t["counts"]["reason"]]
    for r in t["refutations"]:
        out += ["", f"### {r['verdict']}: {r['property']} / {r['phase']}", "", r["reason"]]
        cex = r["counterexample"]
        if cex:
            out += ["", f"Counterexample n = {cex['n']}, m = {cex['m']}: {cex['message']}", ""]
            out += [f"- {line}" for line in _iters(cex)]
            out += ["", f"Replay: `{r['replay']}`"]
    if t["defects"]:
        out += ["", "### Printed versus repaired formulas", ""] + _md_table(DEFECT_HEAD, _defect_rows(t))
    g = t["grid"]
    out += ["", f"### Schedule, {len(g['cycles'])} of {g['cycles_total']} cycles (n = {g['n']}, m = {g['m']})", "",
            "| PE | " + " | ".join(str(c) for c in g["cycles"]) + " |", "| --- |" + " --- |" * len(g["cycles"])]
    out += [f"| {p} | " + " | ".join(c or "·" for c in row) + " |" for p, row in enumerate(g["cells"], 1)]
    return out


# ----------------------------------------------------------------------------- HTML

CSS = ("body{font-family:sans-serif;margin:2em;max-width:110em;color:#222}"
       "table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #bbb;padding:3px 6px;"
       "font-size:13px;vertical-align:top}th{background:#f0f0f0}code{font-size:12px}"
       "td.f{font-family:monospace;font-size:11px;max-width:40em;word-break:break-all}"
       ".pic{overflow-x:auto;border:1px solid #ddd;padding:4px;margin:.6em 0}"
       "h2{border-bottom:2px solid #ccc;margin-top:2em}.loud{color:#c62828;font-weight:bold}")


def _html_table(head, rows, mono=()) -> str:
    e = html.escape
    body = "".join("<tr>" + "".join(
        f"<td class='f'>{e(str(c))}</td>" if i in mono else
        (f"<td style='color:{COLOURS[c]};font-weight:bold'>{c}</td>" if c in COLOURS else f"<td>{e(str(c))}</td>")
        for i, c in enumerate(row)) + "</tr>" for row in rows)
    return "<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + f"</tr>{body}</table>"


def to_html(doc: dict) -> str:
    e = html.escape
    g = doc["generated"]
    names = ", ".join(t["schedule"] for t in doc["targets"])
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>ringproof report: {e(names)}"
             f"</title><style>{CSS}</style></head><body>", "<h1>ringproof report</h1>",
             f"<p>Reproduce: <code>{e(g['command'])}</code></p>",
             "<p>Versions: " + e(", ".join(f"{k} {v}" for k, v in g["versions"].items() if v)) + "</p>"]
    front = doc.get("front")
    if front:
        parts += ["<h2>Table I (Algorithm 2, symmetric attention)</h2>", _html_table(TABLE_I_HEAD, _table_i_rows(front)),
                  "<h2>Table II (Algorithm 3, masked attention)</h2>", _html_table(TABLE_II_HEAD, _table_ii_rows(front)),
                  f"<p>{e(front['table_ii_why'])}</p>", "<h2>ES minima on the bit-level machine</h2>",
                  f"<p>{e(ES_NOTE)}</p>", _html_table(ES_HEAD, _es_rows(front)),
                  _html_table(["lemma", "statement", "method", "verdict"], _lemma_rows(front)),
                  "<h2>Fair readings</h2><ul>"]
        parts += [f"<li><b>{e(r['topic'])}.</b> Paper: {e(r['paper'])} Ours: {e(r['ours'])} "
                  f"<i>({e(r['where'])})</i></li>" for r in front["fair_readings"]]
        parts += ["</ul>", _html_table(CBMF_HEAD, _cbmf_rows(front))]
    parts += [_html_target(t) for t in doc["targets"]]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _html_target(t: dict) -> str:
    e = html.escape
    parts = [f"<h2 id='{e(t['target'])}'>{e(t['schedule'])}: <span style='color:{COLOURS[t['verdict']]}'>"
             f"{t['verdict']}</span></h2>", f"<p>{e(t['doc'])}</p>", f"<p>Reproduce: <code>{e(t['command'])}</code></p>",
             _html_table(["property", "phase", "verdict", "tier", "seconds"],
                         [[r["property"], r["phase"], r["verdict"], r["tier"], f"{r['seconds']:.2f}"]
                          for r in t["results"]])]
    if any(p.get("disagreements") for p in t["proofs"]):
        parts.append("<p class='loud'>The second solver disagrees with Z3 on some query: those verdicts are unknown.</p>")
    if t["proofs"]:
        parts += ["<h3>What the proofs rested on</h3>", _html_table(PROOF_HEAD, _proof_rows(t), mono=(4,))]
    if t["counts"]:
        parts += [f"<h3>Counts ({t['counts']['verdict']})</h3>",
                  _html_table(COUNT_HEAD, _count_rows(t["counts"]), mono=(1, 2, 3)),
                  f"<p>{e(t['counts']['reason'])}</p>" if t["counts"]["reason"] else ""]
    for r in t["refutations"]:
        parts.append(f"<h3>{r['verdict']}: {e(r['property'])} / {e(r['phase'])}</h3><p>{e(r['reason'])}</p>")
        cex = r["counterexample"]
        if cex:
            items = "".join(f"<li>{e(line)}</li>" for line in _iters(cex))
            parts.append(f"<p>Counterexample n = {cex['n']}, m = {cex['m']}: {e(cex['message'])}</p><ul>{items}</ul>"
                         f"<p>Replay: <code>{e(r['replay'])}</code></p>")
        if r["picture"]:
            parts.append(f"<div class='pic'>{r['picture']['svg']}</div>")
    if t["defects"]:
        parts += ["<h3>Printed versus repaired formulas</h3>", _html_table(DEFECT_HEAD, _defect_rows(t), mono=(3, 4))]
    p = t["picture"]
    parts += [f"<h3>Schedule, {len(p['cycles'])} of {p['cycles_total']} cycles (n = {p['n']}, m = {p['m']}): "
              "the first cycles of every phase</h3>", f"<div class='pic'>{p['svg']}</div>"]
    return "\n".join(parts)


RENDER = {"md": to_markdown, "html": to_html, "json": to_json}
