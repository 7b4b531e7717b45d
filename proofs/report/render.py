"""A report document (the data of `collect` and `front`) as Markdown, self-contained HTML or JSON.

The document: {"schema", "schema_version", "generated": {command, versions, options},
"front": {...} or null, "targets": [...]}; docs/report.schema.json describes it.
"""

from __future__ import annotations

import html
import json
import re

from ringproof.proofs.jsonout import strict
from ringproof.proofs.report import maths
from ringproof.proofs.report.words import DIGITS_NOTE, MARKS, dsl_reason, legend

COLOURS = {"proved": "#2e7d32", "refuted": "#c62828", "unknown": "#ef6c00"}


def to_json(doc: dict) -> str:
    return json.dumps(strict(doc), indent=2, allow_nan=False) + "\n"


# ----------------------------------------------------------------------------- shared content

Z3_UNITS = {"max memory": "MB", "rlimit count": "resource units", "time": "s"}


def _z3(stats: dict) -> str:
    """Z3's statistics, each with its unit."""
    return ", ".join(f"{k} {v:g}" + (f" {Z3_UNITS[k]}" if k in Z3_UNITS else "") if isinstance(v, float)
                     else f"{k} {v:,}" + (f" {Z3_UNITS[k]}" if k in Z3_UNITS else "") for k, v in stats.items())


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
        return "; ".join(f"{x['class']}: {maths.plain(x['formula'])}" if x["class"] else maths.plain(x["formula"])
                         for x in forms or [])

    return [[r["quantity"], maths.plain(r["derived"]) if r["derived"] is not None else "not derived",
             per(r.get("per_class") or r["per_residue"]) or "(a sum: see the verdict)", per(r.get("claim_per_residue")) or "—",
             r.get("claim_check") or "—"]
            for r in c["rows"]]


COUNT_HEAD = ["quantity", "derived", "derived, per residue class", "paper's claim, per residue class",
              "claim against derived"]


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
ES_NOTE = ("Recorded by python benchmarks/es_tables.py (docs/es_tables.md; minutes of SAT search, so not "
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
    """Each defect's printed and repaired formula, a long one as the stretch where the two differ."""
    return [[d["defect"], d["phase"], d["field"], *differing(readable(d["printed"]), readable(d["repaired"]))]
            for d in t["defects"]]


def readable(formula: str) -> str:
    """A schedule formula as the DSL prints it, with its floor division and remainder in words
    (`a \\ b` as `a div b`, `a % b` as `a mod b`), as the report's reasons say them."""
    return formula.replace(" \\ ", " div ").replace(" % ", " mod ")


SHORT = 300      # characters of a printed or repaired formula shown whole; a longer one around its differences
CONTEXT = 60     # characters the two share shown before the first difference, and half of it after the last


def differing(printed: str, repaired: str) -> tuple[str, str]:
    """The printed and the repaired formula, each whole when at most SHORT characters; a longer one
    cut to at most SHORT characters from a little before the first character where the two differ,
    with which characters those are (the whole formulas are in report.json, and folded in the HTML):
    a printed variant's formula runs to tens of thousands of characters with one bracket moved."""
    common = min(len(printed), len(repaired))
    first = next((i for i, (a, b) in enumerate(zip(printed, repaired)) if a != b), common)
    same_end = next((i for i, (a, b) in enumerate(zip(reversed(printed), reversed(repaired))) if a != b), common)
    start = max(0, first - CONTEXT)
    start = printed.rfind(" ", 0, start) + 1 if start else 0          # from a word's start
    cut = []
    for text in (printed, repaired):
        if len(text) <= SHORT:
            cut.append(text)
            continue
        last = max(len(text) - same_end, first)                          # where the last difference ends
        end = min(len(text), max(last + CONTEXT // 2, first + 1), start + SHORT)
        further = "; the two differ further on" if last > end else ""
        cut.append(("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
                   + f" [characters {start + 1:,} to {end:,} of {len(text):,}{further}]")
    return cut[0], cut[1]


DEFECT_HEAD = ["defect", "phase", "field", "printed", "repaired"]


STAR_NOTE = ("* in the paper's ES column: not a search result but its estimate (#computations)/(#PEs), "
             "printed where the search did not finish; TO: the paper's search timed out; (16), (25): "
             "values the paper reports unachievable.")
TICK_NOTE = "✓ / ✗ after a figure: it equals / differs from the printed cycles of the same algorithm in that row."


def summary_rows(doc: dict) -> tuple[list[str], list[list[str]]]:
    """The summary: one row per target, one column per property checked (in the property table's
    order), a mark per cell, the conditions, the verdict (an expected refutation said so)."""
    from ringproof.proofs.results import PROPERTIES

    seen = {r["property"] for t in doc["targets"] for r in t["results"]}
    props = [p for p in PROPERTIES if p in seen] + sorted(seen - set(PROPERTIES))
    rows = []
    for t in doc["targets"]:
        cells = []
        for p in props:
            verdicts = [r["verdict"] for r in t["results"] if r["property"] == p]
            v = "refuted" if "refuted" in verdicts else "unknown" if "unknown" in verdicts else \
                "proved" if verdicts else None
            cells.append(MARKS[v] if v else "—")
        verdict = t["verdict"] + (" (expected: as printed in the paper)"
                                  if t.get("expected") == t["verdict"] != "proved" else "")
        rows.append([t["target"], *cells, "; ".join(t.get("conditions", [])) or "—", verdict])
    return ["target", *props, "for all sizes with", "verdict"], rows


def _iters(cex: dict) -> list[str]:
    return [", ".join(f"{k}={v}" for k, v in it.items()) for it in cex["iterations"]]


def _legend_of(doc: dict) -> dict:
    """The marks' meanings for the report's targets: a counterexample replayed on their machines' models."""
    return legend(t.get("machine", "ring") for t in doc["targets"])


def _is_packed(t: dict) -> bool:
    """A packed-sequence target's section (varlen on the ring, all-gather): its figures are sums
    over the documents, its conditions on the lengths."""
    return t.get("machine", "ring") != "ring"


PACKED_COUNT_HEAD = ["quantity", "derived closed form (a sum over the documents i = 1..D, L_i the length of document i)"]
ALLGATHER_COUNT_HEAD = ["quantity", "derived closed form (L_i the length of document i, T = Σ L_i, S = T/m tokens per "
                        "rank, H and Hk query and KV heads, s KV heads gathered at a time, d the head dimension)"]


def _count_head(t: dict) -> list[str]:
    return ALLGATHER_COUNT_HEAD if t.get("machine") == "allgather" else PACKED_COUNT_HEAD
PACKED_PROOF_HEAD = ["property", "phase", "verdict", "rests on (obligations and lemmas)", "base's proof",
                     "solver queries", "Z3 statistics (summed)", "closed forms"]


def _packed_proof_rows(t: dict) -> list[list[str]]:
    def identities(p):
        c = p.get("closed forms")
        return ", ".join(f"{k} {'✓' if ok else '✗'}" for k, ok in c.items()) if c else "—"

    return [[p["property"], p["phase"], p["verdict"], ", ".join(p["lemmas"]) or "—", p.get("base") or "—",
             str(p["queries"]) if p.get("base") else "—", _z3(p["z3"]) or "—", identities(p)] for p in t["proofs"]]


def _cex_size(cex: dict) -> str:
    """A counterexample's size as it is replayed: a packing's lengths and m, else n and m."""
    lengths = (cex.get("replay") or {}).get("lengths")
    if lengths:
        return f"lengths {','.join(map(str, lengths))} (T = {sum(lengths)}), m = {cex['m']}"
    return f"n = {cex['n']}, m = {cex['m']}"


def assumed_lines(t: dict) -> list[str]:
    """A packed target's side condition, and per condition the smallest packing that breaks
    without it with its replay (`prove NAME`'s "assumed:" lines)."""
    lines = ["assumed: " + (", ".join(t.get("conditions", [])) or "nothing beyond D ≥ 1, L_i ≥ 1")]
    for w in t.get("without", []):
        cex = w["counterexample"]
        if t.get("machine") == "allgather":
            continue
        if cex is None:
            lines.append(f"without {w['condition']}: no packing with D ≤ 3, T ≤ 24, m ≤ 4 breaks")
            continue
        lengths = ",".join(map(str, cex["replay"]["lengths"]))
        lines.append(f"without {w['condition']}: lengths {lengths} at m = {cex['m']} break "
                     f"{cex['check'].split(': ')[-1]} ({cex['message']}): replay "
                     f"prove simulate {t['target']} --lengths {lengths} -m {cex['m']}")
    return lines


def packing_title(p: dict) -> str:
    return (f"One packing on {p['model']}: lengths {','.join(map(str, p['lengths']))}, m = {p['m']}, "
            "pairs per rank")


def packing_rows(p: dict) -> tuple[list[str], list[list[str]]]:
    """One packing's run as a table: a row per rank, its pairs (per ring step on the ring, its
    query and key segments on all-gather)."""
    first = p["ranks_from"]
    if "segments" in p:
        head = ["rank", "pairs (per query head)", "cu_seqlens_q", "cu_seqlens_k", "local key slice"]
        rows = [[str(r + first), str(n), str(s["q"]), str(s["k"]), f"[{s['local_k_slice'][0]}, {s['local_k_slice'][1]})"]
                for r, (n, s) in enumerate(zip(p["pairs_per_rank"], p["segments"]))]
        return head, rows
    steps = p.get("pairs_per_step") or []
    head = ["rank", "pairs"] + [f"ring step {s + 1}" for s in range(len(steps))]
    return head, [[str(r + first), str(n)] + [str(step[r]) for step in steps] for r, n in enumerate(p["pairs_per_rank"])]


# ----------------------------------------------------------------------------- Markdown

def _md_table(head, rows) -> list[str]:
    esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
    return ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)] + \
        ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]


def to_markdown(doc: dict) -> str:
    g = doc["generated"]
    out = ["# ringproof report", "", f"Reproduce: `{g['command']}`", "",
           "Versions: " + ", ".join(f"{k} {v}" for k, v in g["versions"].items() if v), "", "## Summary", ""]
    out += _md_table(*summary_rows(doc)) + ["", "; ".join(f"{k} {v}" for k, v in _legend_of(doc).items()) + ".", ""]
    front = doc.get("front")
    if front:
        out += ["## Table I (Algorithm 2, symmetric attention)", ""] + _md_table(TABLE_I_HEAD, _table_i_rows(front))
        out += ["", STAR_NOTE, "", "## Table II (Algorithm 3, masked attention)", ""]
        out += _md_table(TABLE_II_HEAD, _table_ii_rows(front))
        out += ["", STAR_NOTE + " " + TICK_NOTE, "", front["table_ii_why"], "",
                "## ES minima on the bit-level machine", "", ES_NOTE, ""]
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
    th = t.get("theorem")
    out = ["", f"## {t['schedule']}: **{t['verdict']}**", "", t["doc"], ""]
    out += [f"> **{th['kind'].capitalize()}.** {th['words']}", ""] if th else []
    out += [f"Reproduce: `{t['command']}`", ""]
    out += _md_table(["property", "phase", "verdict", "tier", "seconds"],
                     [[r["property"], r["phase"], r["verdict"], r["tier"], f"{r['seconds']:.2f}"] for r in t["results"]])
    if _is_packed(t):
        out += [""] + [f"- {line}" for line in assumed_lines(t)]
    if t["counts"] and _is_packed(t):
        over = ": sums over the documents" if t.get("machine") == "packed" else ""
        out += ["", f"### Counts ({t['counts']['verdict']}){over}", ""]
        out += _md_table(_count_head(t), [[r["quantity"], maths.plain(r["derived"])] for r in t["counts"]["rows"]])
        if t["counts"]["reason"]:
            out += ["", maths.in_words(t["counts"]["reason"])]
        out += [x for line in t["counts"].get("load", []) for x in ("", line)]
    elif t["counts"]:
        head, rows = _claim_columns(t["counts"], COUNT_HEAD, _count_rows(t["counts"]), 3)
        out += ["", f"### Counts ({t['counts']['verdict']})", ""] + _md_table(head, rows)
        if t["counts"]["reason"]:
            out += ["", maths.in_words(t["counts"]["reason"])]
        out += [x for line in t["counts"].get("load", []) for x in ("", line)]
    translated = False
    for r, rest in _by_property(t["refutations"]):
        words = maths.in_words(r.get("reason_dsl") or dsl_reason(r["reason"]))
        out += ["", f"### {r['verdict']}: {r['property']} / {r['phase']}", "", words]
        translated = translated or words != r["reason"]
        cex = r["counterexample"]
        if cex:
            out += ["", f"Counterexample {_cex_size(cex)}: {cex['message']}"]
            out += [""] + [f"- {line}" for line in _iters(cex)] if cex["iterations"] else []
            out += ["", f"Replay: `{r['replay']}`"]
        if rest:
            out += ["", _more(r, rest) + " (each in full in report.json)"]
    if translated:
        out += ["", DIGITS_NOTE]
    if t["defects"]:
        rows = _defect_rows(t)
        out += ["", "### Printed versus repaired formulas", ""] + _md_table(DEFECT_HEAD, rows)
        if any(r[3:] != [readable(d["printed"]), readable(d["repaired"])] for r, d in zip(rows, t["defects"])):
            out += ["", f"A formula longer than {SHORT} characters is shown from a little before its first "
                    "difference; report.json holds each whole."]
    g = t["grid"]
    if g:
        of = f": {t['picture']['of']}" if (t.get("picture") or {}).get("of") else ""
        out += ["", f"### Schedule, {len(g['cycles'])} of {g['cycles_total']} cycles (n = {g['n']}, m = {g['m']}){of}", "",
                "| PE | " + " | ".join(str(c) for c in g["cycles"]) + " |", "| --- |" + " --- |" * len(g["cycles"])]
        out += [f"| {p} | " + " | ".join(c or "·" for c in row) + " |" for p, row in enumerate(g["cells"], 1)]
    if t.get("packing"):
        head, rows = packing_rows(t["packing"])
        out += ["", f"### {packing_title(t['packing'])}", ""] + _md_table(head, rows)
        out += ["", f"Replay: `{t['packing']['command']}`"]
    if t["proofs"] and _is_packed(t):
        out += ["", "<details><summary>What the proofs rested on (the obligations, the composition lemma, "
                "the base's proof or the closed forms' identities)</summary>", ""]
        out += _md_table(PACKED_PROOF_HEAD, _packed_proof_rows(t)) + ["", "</details>"]
    elif t["proofs"]:
        out += ["", "<details><summary>What the proofs rested on (Z3 statistics summed; max memory in MB, "
                "rlimit count in Z3's resource units)</summary>", ""] + _md_table(PROOF_HEAD, _proof_rows(t))
        out += ["", "</details>"]
    return out


def _by_property(refutations: list[dict]) -> list[tuple[dict, list[dict]]]:
    """(first, the rest) per property and verdict, in the order they first come: a printed
    variant's refutation reads as one counterexample per property, the others counted and folded."""
    groups: dict = {}
    for r in refutations:
        groups.setdefault((r["property"], r["verdict"]), []).append(r)
    return [(rs[0], rs[1:]) for rs in groups.values()]


def _more(first: dict, rest: list[dict]) -> str:
    phases = ", ".join(dict.fromkeys(r["phase"] for r in rest))
    return (f"{len(rest)} more {first['property']} {'check' if len(rest) == 1 else 'checks'} "
            f"{first['verdict']} ({phases})")


# ----------------------------------------------------------------------------- HTML

# On paper (@media print): a heading, a lead-in line or a summary stays with what follows it, and a
# table, a picture, a load line, the counts with their load lines or the exact peak is not split where
# it fits on a page, so that no formula or table starts a page cut off from what names it.
CSS = """
body{font-family:Georgia,'DejaVu Serif',serif;margin:2em auto;max-width:62em;padding:0 1.5em;color:#222;
 line-height:1.45}
h1{font-size:1.9em;margin-bottom:.2em}h2{border-bottom:2px solid #ccc;margin-top:2.2em;font-size:1.45em}
h3{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-family:'DejaVu Sans',sans-serif}
td,th{border:1px solid #bbb;padding:3px 7px;font-size:13px;vertical-align:top}th{background:#f0f0f0;text-align:left}
code{font-size:12px;background:#f5f5f5;padding:0 2px}
td.f{font-family:'DejaVu Sans Mono',monospace;font-size:11px;max-width:32em;overflow-wrap:anywhere}
table.summary td.mark{text-align:center;font-size:16px}td:first-child,table.grid th{white-space:nowrap}
table.grid td{text-align:center}.secs{font-weight:normal;color:#555;font-size:11px}table{max-width:100%}
table.cases{margin:0}table.cases td{border:none;padding:1px 6px}div.peak{overflow-x:auto;overflow-y:hidden}div.peak table.cases td{padding:4px 6px}
.proved{color:#2e7d32;font-weight:bold}.refuted{color:#c62828;font-weight:bold}.unknown{color:#ef6c00;font-weight:bold}
.theorem{border-left:4px solid #2e7d32;background:#f4f9f4;padding:.5em 1em;margin:1em 0}
.theorem.refutation{border-color:#c62828;background:#fdf3f3}.theorem.open{border-color:#ef6c00;background:#fff7ef}
.legend,.note{font-size:13px;color:#444}.reason{overflow-wrap:anywhere}
code.long{display:block;overflow-wrap:anywhere;max-width:40em}
.pic svg{max-width:100%;height:auto;display:block;margin:.3em 0}
details{margin:.6em 0}summary{cursor:pointer;color:#333}
table.counts summary,table.counts td:nth-child(2){white-space:nowrap}
math{font-size:1.1em;math-style:normal}mtable,mtd{math-style:normal}
@media print{body{max-width:none;margin:0;padding:0;font-size:10.5pt}td,th{font-size:8.5pt;padding:2px 4px}
 .pic svg{max-width:100%}h2{break-before:auto}
 h2,h3,h4,summary,summary+p.note,p.reproduce,p.lead,p.legend,p.cex{break-after:avoid}
 table,tr,.pic svg,.theorem,.load,.reason,p.legend,div.counts,div.peak{break-inside:avoid}details{display:block}
 details>summary{list-style:none}a{color:inherit;text-decoration:none}
 table.proofs,table.defects{width:100%;break-inside:auto}table.proofs td,table.defects td{font-size:7.5pt}td.f{max-width:none}}
"""


def _cell(c) -> str:
    """A table cell: a verdict coloured, a mark coloured, anything else escaped."""
    text = str(c)
    cls = next((v for v, mark in MARKS.items() if text == mark), None)
    if cls:
        return f"<td class='mark {cls}'>{text}</td>"
    first = text.split(" ")[0]
    if first in COLOURS:
        return f"<td class='{first}'>{html.escape(text)}</td>"
    return f"<td>{html.escape(text)}</td>"


def _html_table(head, rows, mono=(), raw=(), cls="") -> str:
    e = html.escape
    body = "".join("<tr>" + "".join(
        f"<td>{c}</td>" if i in raw else f"<td class='f'>{e(str(c))}</td>" if i in mono else _cell(c)
        for i, c in enumerate(row)) + "</tr>" for row in rows)
    return (f"<table{f' class={cls!r}' if cls else ''}><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in head)
            + f"</tr></thead><tbody>{body}</tbody></table>")


def _legend(marks) -> str:
    return "<p class='legend'>" + "; ".join(f"<b>{html.escape(k)}</b> {html.escape(v)}" for k, v in marks) + ".</p>"


def to_html(doc: dict) -> str:
    e = html.escape
    g = doc["generated"]
    names = ", ".join(t["schedule"] for t in doc["targets"])
    opts = g["options"]
    head, rows = summary_rows(doc)
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
             f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>ringproof report: {e(names)}"
             f"</title><style>{CSS}</style></head><body>", "<h1>ringproof report</h1>",
             f"<p>{len(doc['targets'])} schedule{'s' if len(doc['targets']) != 1 else ''} of self-attention on a "
             f"unidirectional ring of m processing elements, verified by Z3 at tier <b>{e(opts['tier'])}</b> "
             "(parametric: for every n with m | n, not for sampled sizes"
             + ("; a packed-sequence target: for every m, number of documents and lengths vector its side "
                "condition admits" if any(_is_packed(t) for t in doc["targets"]) else "") + "). "
             f"Reproduce: <code>{e(g['command'])}</code></p>",
             "<h2 id='summary'>Summary</h2>",
             _html_table(head,
                         [[f"<a href='#t-{e(r[0])}'>{e(r[0])}</a>", *r[1:]] for r in rows],
                         raw=(0,), cls="summary"),
             _legend([(k, v) for k, v in _legend_of(doc).items()] + [("(expected)", "the variant as printed in the paper, "
                                                                         "whose defects the refutation shows")]),
             "<details><summary>Versions and options</summary><p>" + e(", ".join(
                 f"{k} {v}" for k, v in g["versions"].items() if v)) + "</p><p>" + e(", ".join(
                 f"{k} {v}" for k, v in opts.items())) + " (timeout: seconds per solver query)</p></details>"]
    front = doc.get("front")
    if front:
        parts += ["<h2 id='table-i'>Table I (Algorithm 2, symmetric attention)</h2>",
                  _html_table(TABLE_I_HEAD, _table_i_rows(front)), f"<p class='legend'>{e(STAR_NOTE)}</p>",
                  "<h2 id='table-ii'>Table II (Algorithm 3, masked attention)</h2>",
                  _html_table(TABLE_II_HEAD, _table_ii_rows(front)),
                  f"<p class='legend'>{e(STAR_NOTE)} {e(TICK_NOTE)}</p><p>{e(front['table_ii_why'])}</p>",
                  "<h2 id='es'>ES minima on the bit-level machine</h2>",
                  f"<p>{e(ES_NOTE)}</p>", _html_table(ES_HEAD, _es_rows(front)),
                  _html_table(["lemma", "statement", "method", "verdict"], _lemma_rows(front)),
                  "<h2 id='fair'>Fair readings</h2><ul>"]
        parts += [f"<li><b>{e(r['topic'])}.</b> Paper: {e(r['paper'])} Ours: {e(r['ours'])} "
                  f"<i>({e(r['where'])})</i></li>" for r in front["fair_readings"]]
        parts += ["</ul>", _html_table(CBMF_HEAD, _cbmf_rows(front))]
    parts += [_html_target(t) for t in doc["targets"]]
    parts.append("</body></html>")
    return _unique_ids("\n".join(parts) + "\n")


def _unique_ids(page: str) -> str:
    """Every SVG's marker ids made unique in the page (each picture defines its own `arrow`)."""
    count = iter(range(1, 10**9))

    def one(svg):
        k = next(count)
        return re.sub(r'id="([\w-]+)"', rf'id="\1-{k}"', svg[0]).replace("url(#arrow)", f"url(#arrow-{k})")

    return re.sub(r"<svg.*?</svg>", one, page, flags=re.S)


def _counts_html(c: dict) -> str:
    """One row per quantity and residue class: the closed form typeset, the paper's claim and how it
    compares on the quantity's first row."""
    rows, refined = [], False
    for r in c["rows"]:
        claim, check = r.get("claim"), r.get("claim_check")
        mark = "✓ " if check == "equal" else "✗ " if check and check.startswith("differs") else "? "
        same = mark + check if check else "—"
        derived, per = r["derived"], r.get("per_class") or r["per_residue"] or []
        forms = ([("all n, m", derived)] if not derived or len(derived) <= LONG or len(per) < 2 else []) + \
            ([(x["class"], x["formula"]) for x in per] if len(per) > 1 else [])
        refined |= bool(r.get("per_class"))
        for k, (cls, form) in enumerate(forms):
            shown = "not derived" if not form else _form(form)
            first = k == 0
            rows.append([html.escape(r["quantity"]) if first else "", html.escape(cls), shown,
                         (maths.typeset(claim) if claim else "—") if first else "",
                         html.escape(same) if first else ""])
    note = (f"<p class='note'>A count given per class of n/m and m is the derived form rewritten in that "
            f"class (each floor removed where the remainder is proved to lie in [0, divisor)) and equal "
            f"to it at every n ≤ {maths.CHECK_N}, m ≤ {maths.CHECK_M} of the class.</p>") if refined else ""
    head, rows = _claim_columns(c, ["quantity", "for", "derived closed form", "paper's claim", "claim against derived"],
                                rows, 3)
    return _html_table(head, rows, raw=tuple(range(len(head))), cls="counts") + note


def _claim_columns(c: dict, head: list[str], rows: list[list[str]], at: int):
    """The claim columns (from `at` on) as the counts' claims are: none where no quantity has one; the
    paper's only for the paper's schedules, another's (a user's file, a context-parallel target) its own."""
    if not any(r.get("claim") for r in c["rows"]):
        return head[:at], [r[:at] for r in rows]
    if c.get("claims_by", "paper") != "paper":
        head = head[:at] + [h.replace("paper's claim", "claimed") for h in head[at:]]
    return head, rows


LONG = 160       # a closed form longer than this (characters of sympy text) is shown per residue class


def _form(text: str) -> str:
    """A class's closed form: typeset, or when very long folded as text (sympy could not simplify it)."""
    if len(text) <= LONG:
        return maths.typeset(text)
    return (f"<details class='fold'><summary>{len(text)} characters with floor, mod or cases (show)</summary>"
            f"<code class='long'>{html.escape(maths.plain(text))}</code></details>")


def _theorem_html(t: dict) -> str:
    th = t.get("theorem")
    if not th:
        return ""
    e = html.escape
    label = {"theorem": "Theorem", "refutation": "Refuted", "open": "Not decided"}[th["kind"]]
    out = f"<div class='theorem {th['kind']}'><p><b>{label} ({e(t['target'])}).</b> {e(th['words'])}"
    c = t.get("counts")
    if th["kind"] == "theorem" and c and c["verdict"] == "proved":
        forms = [(r["quantity"], r["derived"]) for r in c["rows"] if r["derived"] and "Sum" not in r["derived"]]
        cyc = next((f for q, f in forms if q == "cycles"), None)
        per_class = next((r.get("per_class") for r in c["rows"] if r["quantity"] == "cycles"), None)
        if cyc and maths.parse(cyc) is not None and len(maths.cases(maths.parse(cyc))) == 1 and len(cyc) < 120:
            out += f" It takes <math><mi>T</mi><mo>=</mo></math>{maths.mathml(maths.parse(cyc))} cycles."
        elif per_class:
            out += (" Its cycle count is a polynomial in n and m in each class of n/m and m mod 2, given "
                    "under Counts.")
    out += "</p>"
    without = [w for w in t.get("without", []) if w["counterexample"]]
    if _is_packed(t):
        out += "<p class='note'>" + "<br>".join(e(line) for line in assumed_lines(t)) + "</p>"
    elif without:
        out += "<p class='note'>Each condition is needed: " + "; ".join(
            f"without {e(w['condition'])}, {e(w['counterexample']['check'])} fails at "
            f"n = {w['counterexample']['n']}, m = {w['counterexample']['m']}" for w in without) + ".</p>"
    return out + "</div>"


def _verdict_grid(t: dict) -> str:
    """Verdicts as a property × phase grid: a mark and the seconds per cell, the tier when it is not
    parametric (a refutation found by enumeration is tier bounded)."""
    props = list(dict.fromkeys(r["property"] for r in t["results"]))
    phases = list(dict.fromkeys(r["phase"] for r in t["results"]))
    at = {(r["property"], r["phase"]): r for r in t["results"]}
    rows = []
    for p in props:
        cells = []
        for ph in phases:
            r = at.get((p, ph))
            if r is None:
                cells.append("<td class='mark'>—</td>")
                continue
            tier = "" if r["tier"] == "parametric" else f", {r['tier']}"
            cells.append(f"<td class='{r['verdict']}' title='{r['verdict']}'>{MARKS[r['verdict']]} "
                         f"<span class='secs'>{r['seconds']:.2f} s{tier}</span></td>")
        rows.append(f"<tr><th>{html.escape(p)}</th>{''.join(cells)}</tr>")
    head = "".join(f"<th>{html.escape(ph)}</th>" for ph in phases)
    return f"<table class='grid'><tr><th>property \\ phase</th>{head}</tr>{''.join(rows)}</table>"


def _smt2_links(proof: dict) -> str:
    """The SMT-LIB files of one result (--smt2) as links, folded: there may be dozens."""
    from pathlib import Path

    files = proof.get("smt2", [])
    if not files:
        return "0"
    links = "<br>".join(f"<a href='{html.escape(Path(f).resolve().as_uri())}'>{html.escape(Path(f).name)}</a>"
                        for f in files)
    return f"<details><summary>{len(files)}</summary>{links}</details>"


def _defects_html(t: dict) -> str:
    """The defect table: a long formula as the stretch where printed and repaired differ, the whole
    of it folded beneath (folded on paper too: tens of thousands of characters)."""
    e = html.escape

    def cell(shown, whole):
        if shown == whole:
            return f"<td class='f'>{e(whole)}</td>"
        return (f"<td class='f'>{e(shown)}<details class='fold'><summary>the whole formula, {len(whole):,} "
                f"characters (show)</summary><code class='long'>{e(whole)}</code></details></td>")

    rows = "".join(f"<tr><td>{e(d['defect'])}</td><td>{e(d['phase'])}</td><td>{e(d['field'])}</td>"
                   + cell(row[3], readable(d["printed"])) + cell(row[4], readable(d["repaired"])) + "</tr>"
                   for d, row in zip(t["defects"], _defect_rows(t)))
    return ("<table class='defects'><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in DEFECT_HEAD)
            + f"</tr></thead><tbody>{rows}</tbody></table>")


def _pictures(rows: list[str]) -> str:
    return "<div class='pic'>" + "".join(rows) + "</div>"


def _peak_html(memory: dict) -> str:
    """The exact memory peak proved for every n, typeset (a Piecewise as its table of cases, to which
    the memory line above points); nothing where it is not proved."""
    form = memory.get("closed_form")
    if not form:
        return ""
    return (f"<div class='peak'><p class='lead'>Exact memory peak on the busiest PE, proved for every n:</p>"
            f"{maths.typeset(form)}</div>")


def _picture_html(t: dict, p: dict) -> list[str]:
    """The schedule picture: the target's first cycles of every phase (a varlen target's: its
    base's ring pass for one document, said so in the heading)."""
    of = f": {p['of']}" if p.get("of") else ": the first cycles of every phase"
    return [f"<h3>Schedule, {len(p['cycles'])} of {p['cycles_total']} cycles (n = {p['n']}, m = {p['m']})"
            f"{html.escape(of)}</h3>",
            "<p class='legend'>Each cell: the op a PE runs in that cycle (MAC, EAC, DIV, MOVE) and its indices "
            "(the target's, then the summation index); columns shaded by phase; an arrow is a send to the next "
            "PE, arriving one cycle later (↻: PE m to PE 1); a dashed line marks cycles left out. PEs are "
            "numbered from 1, cycles from 0 (the first cycle of the run), as every count and counterexample "
            "says them.</p>",
            _pictures(p.get("rows") or [p["svg"]])]


def _fill_html(line: dict) -> str:
    """A packed load line: its words escaped, each form in it typeset."""
    import re

    return re.sub(r"FORM(\d+)", lambda x: maths.typeset(line["forms"][int(x[1])]), html.escape(line["words"]))


def _html_target(t: dict) -> str:
    e = html.escape
    v = t["verdict"]
    expected = " (expected: the variant as printed)" if t.get("expected") == v != "proved" else ""
    parts = [f"<h2 id='t-{e(t['target'])}'>{e(t['schedule'])}: <span class='{v}'>{v}</span>{expected}</h2>",
             f"<p>{e(t['doc'])}</p>", _theorem_html(t), f"<p class='reproduce'>Reproduce: <code>{e(t['command'])}</code></p>",
             _verdict_grid(t)]
    if any(p.get("disagreements") for p in t["proofs"]):
        parts.append("<p class='refuted'>The second solver disagrees with Z3 on some query: those verdicts are "
                     "unknown.</p>")
    if t["counts"] and _is_packed(t):
        c = t["counts"]
        rows = [[e(r["quantity"]), maths.typeset(r["derived"]) if r["derived"] else "not derived"] for r in c["rows"]]
        over = ": sums over the documents" if t.get("machine") == "packed" else ""
        parts += [f"<div class='counts'><h3>Counts (<span class='{c['verdict']}'>{c['verdict']}</span>){over}</h3>", _html_table(_count_head(t), rows, raw=(0, 1), cls="counts"),
                  f"<p class='reason'>{e(maths.in_words(c['reason']))}</p>" if c["reason"] else ""]
        parts += [f"<div class='load'>{_fill_html(line)}</div>" for line in c.get("lines", [])]
        parts.append("</div>")
    elif t["counts"]:
        c = t["counts"]
        parts += [f"<div class='counts'><h3>Counts (<span class='{c['verdict']}'>{c['verdict']}</span>)</h3>", _counts_html(c),
                  f"<p class='reason'>{e(maths.in_words(dsl_reason(c['reason'])))}</p>" if c["reason"] else ""]
        peak = (c.get("memory") or {}).get("closed_form")

        def show(form):      # the forms typeset as the counts are; the exact peak's cases once, below
            if form == peak and len(maths.cases(maths.parse(form))) > 1:
                return "(the exact peak below, case by case)"
            return maths.typeset(form)

        parts += [f"<div class='load'>{line}</div>" for line in maths.load_lines(c.get("balance"), c.get("memory"), show, e)]
        parts += ["</div>", _peak_html(c.get("memory") or {})]
    if t["refutations"]:
        parts.append("<h3>Refutations and open checks</h3>")
        translated = False
        for first, rest in _by_property(t["refutations"]):
            for k, r in enumerate([first] + rest):
                words = r.get("reason_dsl") or dsl_reason(r["reason"])
                translated |= words != r["reason"]
                one = [f"<h4><span class='{r['verdict']}'>{r['verdict']}</span>: {e(r['property'])} / "
                       f"{e(r['phase'])}</h4><p class='reason'>{e(maths.in_words(words))}</p>"]
                cex = r["counterexample"]
                if cex:
                    items = "".join(f"<li>{e(line)}</li>" for line in _iters(cex))
                    items = f"<ul>{items}</ul>" if items else ""
                    one.append(f"<p class='cex'>Counterexample {e(_cex_size(cex))}: {e(cex['message'])}</p>"
                               f"{items}<p>Replay: <code>{e(r['replay'])}</code></p>")
                if r["picture"] and k == 0:      # the first of a property pictured; the others folded
                    one.append(_pictures(r["picture"].get("rows") or [r["picture"]["svg"]]))
                if k == 1:
                    parts.append(f"<details class='fold'><summary>{e(_more(first, rest))} (show)</summary>")
                parts += one
            if rest:
                parts.append("</details>")
        if translated:
            parts.append(f"<p class='note'>{e(DIGITS_NOTE)}</p>")
    if t["defects"]:
        parts += ["<h3>Printed versus repaired formulas</h3>", _defects_html(t)]
    p = t["picture"]
    if p:
        parts += _picture_html(t, p)
    if t.get("packing"):
        head, rows = packing_rows(t["packing"])
        parts += [f"<h3>{e(packing_title(t['packing']))}</h3>", _html_table(head, rows),
                  f"<p class='reproduce'>Replay: <code>{e(t['packing']['command'])}</code></p>"]
    if t["proofs"] and _is_packed(t):
        parts += ["<details><summary>What the proofs rested on: the obligations, the composition lemma, "
                  + ("the base's proof" if t.get("machine") == "packed" else "the closed forms' identities")
                  + "</summary>", "<p class='note'>Per result: the obligations (each proved by Z3 for a generic "
                  "document) and the composition lemma parts it rests on; for a varlen target the base's result "
                  "for one document (its solver queries and Z3 statistics summed); for an all-gather target the "
                  "sympy identities its closed forms rest on.</p>",
                  _html_table(PACKED_PROOF_HEAD, _packed_proof_rows(t), mono=(3, 6), cls="proofs"), "</details>"]
    elif t["proofs"]:
        queries = sum(x["queries"] for x in t["proofs"])
        parts += [f"<details><summary>What the proofs rested on: {queries} solver queries, normalization lemmas, "
                  "Z3 statistics</summary>",
                  "<p class='note'>Per result: the solver queries, the normalization lemmas used (each proved once "
                  "in Z3), the side conditions proven to apply them, Z3's statistics summed over the queries "
                  "(max memory: the maximum, in MB; rlimit count: Z3's deterministic resource units), the second "
                  "solver's answers and the number of SMT-LIB files written (--smt2).</p>",
                  _html_table(PROOF_HEAD, [row[:-1] + [_smt2_links(p)] for row, p in zip(_proof_rows(t), t["proofs"])],
                              mono=(4, 6), raw=(8,), cls="proofs"), "</details>"]
    return "\n".join(parts)


RENDER = {"md": to_markdown, "html": to_html, "json": to_json}
