"""Reports: the JSON against its schema, the HTML in a real browser, the pictures, the exported
SMT-LIB queries re-checked by two solvers, and cvc5 as a second opinion on every unsat."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import z3

from ringproof.proofs.cli.main import main
from ringproof.proofs.ring.properties import derive
from ringproof.proofs.ring.prover import Options, verify
from ringproof.proofs.ring.smt import discharge
from ringproof.proofs.results import Verdict

ROOT = Path(__file__).resolve().parent.parent
SOLVER_PROPS = ("well-formed", "coverage", "no-conflict", "ring-locality", "data-flow")


def call(*argv):
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def _no_pdf_note() -> str:
    from ringproof.proofs.report import pdf

    return "" if pdf.browser() else f"prove report: report.pdf not written: {pdf.MISSING}\n"


_NO_PDF = _no_pdf_note()


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    code, out, err = call("report", "algo1", "algo1-printed", "--property", "ring-locality",
                          "--out", str(d), "--front", "no", "--json")
    assert code == 0, err                        # the printed variant's refutation is the expected one
    assert json.loads(out)["verdict"] == "refuted"
    assert err in ("", _NO_PDF)              # no progress on a non-terminal; at most the PDF's note
    return d


def test_report_json_validates_against_its_schema(report_dir):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "report.schema.json").read_text())
    doc = json.loads((report_dir / "report.json").read_text())
    jsonschema.validate(doc, schema)
    broken = dict(doc, targets=[dict(doc["targets"][0], verdict="maybe")])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_a_report_of_ring_targets_replays_on_the_ring_model(report_dir):
    md = (report_dir / "report.md").read_text()
    assert "✗ refuted: a counterexample, replayed on the ring model;" in md
    assert "packed ring model" not in md and "all-gather model" not in md


def test_report_says_what_proofs_rested_on_and_replays_refutations(report_dir):
    doc = json.loads((report_dir / "report.json").read_text())
    algo1, printed = doc["targets"]
    proof = algo1["proofs"][0]
    assert proof["lemmas"] and proof["side_conditions"] > 0 and proof["z3"]
    ref = printed["refutations"][0]
    assert ref["replay"].startswith("prove simulate algo1-printed")
    assert ref["picture"] and "cell failing" in ref["picture"]["svg"]
    assert {d["defect"] for d in printed["defects"]} == {"C-mod", "phase1-assign", "phase2-B-mod", "phase3-assign"}
    md = (report_dir / "report.md").read_text()
    assert "Printed versus repaired formulas" in md and printed["command"] in md


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _open_in_browser(page: Path) -> tuple[str, list[str]]:
    """The DOM after loading `page` in headless Chromium, and the console messages it logged."""
    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium package)")
    run = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                          "--v=0", "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    return run.stdout, [ln for ln in run.stderr.splitlines() if "CONSOLE" in ln]


def test_the_browser_check_sees_console_errors(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text("<!doctype html><script>console.error('broken page')</script>")
    _, console = _open_in_browser(page)
    assert any("broken page" in ln for ln in console)


def test_html_opens_in_a_browser_with_one_cell_per_pe_and_cycle(report_dir):
    dom, console = _open_in_browser(report_dir / "report.html")
    assert console == []
    doc = json.loads((report_dir / "report.json").read_text())
    pic = doc["targets"][0]["picture"]
    section = dom.split(f'id="t-{doc["targets"][0]["target"]}"')[1].split("<h2")[0]
    svgs = [s for s in re.findall(r"<svg.*?</svg>", section, re.S) if f'data-n="{pic["n"]}" data-m="{pic["m"]}"' in s]
    assert len(svgs) == len(pic["rows"]) > 1           # wrapped into rows that fit the page
    assert all(int(re.search(r'width="(\d+)"', s)[1]) <= 1100 for s in svgs)
    cells = [c for s in svgs for c in re.findall(r'class="cell[^"]*" data-pe="(\d+)" data-cycle="(\d+)"', s)]
    assert sorted(cells) == sorted((str(p), str(t)) for p in range(1, pic["m"] + 1) for t in pic["cycles"])
    ids = re.findall(r'\bid="([^"]+)"', dom)
    assert len(ids) == len(set(ids))                    # every element id unique in the page
    assert all(f"url(#{i})" in dom for i in ids if i.startswith("arrow"))


def test_picture_of_a_refuted_instance_marks_the_failing_cell(tmp_path):
    from ringproof.model.ring.machine import run
    from ringproof.schedules.algo1 import ALGO1_PRINTED

    out = tmp_path / "cex.svg"
    code, _, err = call("simulate", "algo1-printed", "-n", "4", "-m", "2", "--picture", str(out))
    assert code == 1, err
    broken = {(it["pe"], it["cycle"]) for v in run(ALGO1_PRINTED, 4, 2).violations for it in v.iterations}
    marked = {(int(p), int(t)) for p, t in
              re.findall(r'class="cell failing" data-pe="(\d+)" data-cycle="(\d+)"', out.read_text())}
    assert marked and marked == broken


def test_picture_of_a_valid_instance_marks_nothing(tmp_path):
    out = tmp_path / "ok.svg"
    code, _, err = call("simulate", "algo1", "-n", "12", "-m", "4", "--picture", str(out))
    assert code == 0, err
    text = out.read_text()
    assert "failing" not in text and text.count('class="cell"') == 4 * int(re.search(r'data-cycles="(\d+)"', text)[1])


def _query(schedule, tmp_path, verdict):
    """Export the first parametric check of `schedule` that Z3 decides as `verdict`."""
    for check in derive(schedule):
        o = discharge(check, smt2_dir=str(tmp_path))
        if o.verdict is verdict:
            return Path(o.smt2).read_text()
    raise AssertionError(f"no {verdict} check")


def _cvc5(text: str) -> str:
    cvc5 = pytest.importorskip("cvc5")
    solver = cvc5.Solver()
    symbols = cvc5.SymbolManager(solver.getTermManager())
    parser = cvc5.InputParser(solver, symbols)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "q")
    answer = ""
    while not (cmd := parser.nextCommand()).isNull():
        answer = cmd.invoke(solver, symbols).strip() or answer
    return answer


def _z3(text: str) -> str:
    s = z3.Solver()
    s.from_string(text)
    return str(s.check())


def test_exported_query_is_unsat_in_z3_and_cvc5(tmp_path):
    from ringproof.schedules.algo1 import ALGO1

    text = _query(ALGO1, tmp_path, Verdict.PROVED)
    assert ":named negated-goal" in text and ":named lemma." in text
    assert _z3(text) == "unsat" and _cvc5(text) == "unsat"


def test_wrong_query_is_sat_in_z3_and_cvc5(tmp_path):
    from ringproof.schedules.algo1 import ALGO1_PRINTED

    text = _query(ALGO1_PRINTED, tmp_path, Verdict.REFUTED)
    assert _z3(text) == "sat" and _cvc5(text) == "sat"


def test_cvc5_agrees_on_algorithm_1_coverage():
    pytest.importorskip("cvc5")
    from ringproof.schedules.algo1 import ALGO1

    results = verify(ALGO1, Options(("coverage",), cross_check="cvc5"))
    assert results and all(r.verdict is Verdict.PROVED for r in results)
    assert all(r.solver["cross_check"]["answers"] == {"unsat": r.solver["queries"]} for r in results)


@pytest.mark.parametrize("name", ["ALGO1", pytest.param("ALGO2", marks=pytest.mark.slow),
                                  pytest.param("ALGO3", marks=pytest.mark.slow)])
def test_cvc5_agrees_on_every_query(name):
    """cvc5 re-checks every unsat query (ALGO2 and ALGO3: 20-45 s each, slow; the default run keeps
    ALGO1's every query, the same cross-check path)."""
    pytest.importorskip("cvc5")
    from ringproof.schedules import algo1, algo2, algo3

    schedule = {"ALGO1": algo1.ALGO1, "ALGO2": algo2.ALGO2, "ALGO3": algo3.ALGO3}[name]
    results = verify(schedule, Options(SOLVER_PROPS, cross_check="cvc5", cross_timeout=600))
    assert all(not r.solver.get("disagreements") for r in results)
    assert all(r.solver["cross_check"]["z3_unsat"] == r.solver["queries"] for r in results
               if r.verdict is Verdict.PROVED)


def test_a_disagreement_makes_the_verdict_unknown(monkeypatch):
    from ringproof.proofs.ring import smtlib
    from ringproof.schedules.algo1 import ALGO1

    monkeypatch.setattr(smtlib, "check_with_cvc5", lambda text, ms: {"solver": "cvc5", "version": "x",
                                                                    "answer": "sat", "seconds": 0.0})
    results = verify(ALGO1, Options(("no-conflict",), cross_check="cvc5", jobs=1))
    assert results and all(r.verdict is Verdict.UNKNOWN and "SOLVERS DISAGREE" in r.reason for r in results)


def _validates_with_front(out: Path) -> str:
    """report.json in `out` against its schema, with the front's tables; the HTML page without its
    pictures."""
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads((out / "report.json").read_text())
    jsonschema.validate(doc, json.loads((ROOT / "docs" / "report.schema.json").read_text()))
    assert doc["front"]["table_i"] and doc["front"]["cbmf"]
    return re.sub(r"<svg.*?</svg>", "", (out / "report.html").read_text(), flags=re.S)


def test_report_of_algorithm_3_with_front_validates(tmp_path):
    """The front and a counted target's typeset counts, on one target and its counts alone (every
    registered target, every property: test_full_report_with_front_validates, slow). Algorithm 3:
    its claims and a residue class as Algorithm 2's, in a quarter of the CPU (Algorithm 2's cycles,
    nested cases, take most of its report's: test_algorithm_2s_cycles_per_class_match_the_trace)."""
    code, out, err = call("report", "algo3", "--property", "counts", "--out", str(tmp_path), "--quiet")
    assert code == 0, err
    page = _validates_with_front(tmp_path)
    counts = page.split("<h3>Counts")[1].split("</table>")[0]
    assert "<math>" in counts and "**" not in counts          # counts typeset, not sympy's text
    assert "✓ equal" in page and "n ≡ 0 (mod 2)" in page   # claims compared; a residue class per row


@pytest.mark.slow
def test_full_report_with_front_validates(tmp_path):
    """Every registered target in one report (48 s; the front and the typeset counts of one target:
    test_report_of_algorithm_3_with_front_validates)."""
    jsonschema = pytest.importorskip("jsonschema")
    code, _, err = call("report", "--out", str(tmp_path))
    assert code in (0, 1, 2), err
    doc = json.loads((tmp_path / "report.json").read_text())
    jsonschema.validate(doc, json.loads((ROOT / "docs" / "report.schema.json").read_text()))
    from ringproof.proofs.cli.targets import registry

    assert [t["target"] for t in doc["targets"]] == list(registry())     # every registered one
    assert doc["front"]["table_i"] and doc["front"]["cbmf"]
    page = re.sub(r"<svg.*?</svg>", "", (tmp_path / "report.html").read_text(), flags=re.S)
    counts = page.split("<h3>Counts")[1].split("</table>")[0]
    assert "<math>" in counts and "**" not in counts          # counts typeset, not sympy's text
    assert "✓ equal" in page and "n ≡ 0 (mod 2)" in page   # claims compared; a residue class per row


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_goes_to_a_terminal_stderr(tmp_path):
    err = _Terminal()
    code = main(["report", "algo1", "--property", "no-conflict", "--format", "json", "-o",
                 str(tmp_path / "r.json")], io.StringIO(), err)
    assert code == 0 and "[1/1] algo1 ... proved" in err.getvalue()


def test_several_targets_need_an_output_directory():
    code, _, err = call("report", "algo1", "algo2")
    assert code == 64 and "--out" in err and len(err.splitlines()) == 1


def test_quiet_report_prints_no_progress(tmp_path):
    err = _Terminal()
    code = main(["report", "algo1", "--property", "no-conflict", "--format", "json", "--quiet", "-o",
                 str(tmp_path / "r.json")], io.StringIO(), err)
    assert code == 0 and err.getvalue() == ""


# ------------------------------------------------------------------ a report to put beside the paper

def _no_proofs(monkeypatch):
    from ringproof.proofs.ring import prover
    def refuse(*a, **k):
        raise AssertionError("a proof ran before the output paths were checked")

    monkeypatch.setattr(prover, "verify", refuse)


@pytest.mark.parametrize("argv, says", [
    (["--out", "/proc/no/such"], "--out '/proc/no/such' cannot be written"),
    (["--out", str(ROOT / "README.md")], "is a file; name a directory"),
    (["--format", "html", "-o", "/no/such/dir/r.html"], "does not exist"),
    (["--format", "pdf"], "--format pdf needs -o FILE"),
])
def test_output_paths_are_checked_before_any_proof(monkeypatch, argv, says):
    _no_proofs(monkeypatch)
    code, out, err = call("report", "algo1", *argv)
    assert code == 64 and out == "" and len(err.splitlines()) == 1 and says in err


def test_pdf_without_chromium_says_so_before_any_proof(monkeypatch, tmp_path):
    from ringproof.proofs.report import pdf

    monkeypatch.setattr(pdf, "browser", lambda: None)
    _no_proofs(monkeypatch)
    code, _, err = call("report", "algo1", "--format", "pdf", "-o", str(tmp_path / "r.pdf"))
    assert code == 64 and "no Chromium found" in err and "apt-get install chromium" in err


def test_report_ends_with_one_line_naming_the_files_and_each_verdict(tmp_path, monkeypatch):
    from ringproof.proofs.report import pdf

    monkeypatch.setattr(pdf, "browser", lambda: None)      # the PDF is tested on its own below
    code, out, err = call("report", "algo1", "algo1-printed", "--property", "ring-locality",
                          "--out", str(tmp_path), "--front", "no")
    assert code == 0                                        # the only refutation is an expected one
    assert out == (f"report: {tmp_path}/ (report.md, report.html, report.json): algo1 proved, "
                   "algo1-printed refuted (expected); the printed variant refuted as expected and "
                   "nothing else refuted, so exit 0\n")
    assert err == f"prove report: report.pdf not written: {pdf.MISSING}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "report.json", "report.md"]


def test_report_pdf_is_printed_by_chromium(tmp_path):
    if _chromium() is None:
        pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium package)")
    code, _, err = call("report", "algo1", "--property", "no-conflict", "--format", "pdf",
                        "-o", str(tmp_path / "r.pdf"))
    assert code == 0, err
    assert (tmp_path / "r.pdf").read_bytes().startswith(b"%PDF")


def test_report_reads_like_a_paper(report_dir):
    page = (report_dir / "report.html").read_text()
    doc = json.loads((report_dir / "report.json").read_text())
    text = re.sub(r"<svg.*?</svg>", "", page, flags=re.S)
    assert "<h2 id='summary'>Summary</h2>" in text and "table class='summary'" in text
    for mark in ("✓", "✗", "?", "—"):
        assert f"<b>{mark}</b>" in text                     # every mark has its legend
    assert "Theorem (algo1).</b> For all integers n, m ≥ 1 with m | n" in text
    assert "Refuted (algo1-printed).</b>" in text and "its refutation is expected" in text
    assert "<details><summary>What the proofs rested on" in text and "resource units" in text
    assert " MB" in text
    raw = [r["reason"] for t in doc["targets"] for r in t["refutations"]]
    assert any(re.search(r"\b[ab]\.[a-z]+\.[qr]\b|If\(", r) for r in raw)   # the JSON keeps Z3's terms
    assert not re.search(r"\b[ab]\.[a-z]+\.[qr]\b|If\(", text)            # the page never shows them
    assert "@media print" in text


def test_reasons_are_translated_into_the_dsls_names():
    from ringproof.proofs.report.words import dsl_reason

    got = dsl_reason("PE in range: not normalized: cannot bound -2 + If(a.j.r == 0, 0, a.j.r) + -1*b.i + k "
                     "within a few multiples of k (mod k·m); no counterexample with n ≤ 24")
    assert got == ("PE in range: outside the normalized fragment: -2 + ite((j mod m) = 0, 0, (j mod m)) − i′ + "
                   "(n div m) could not be placed within a few multiples of n div m (to rewrite mod n); "
                   "no counterexample with n ≤ 24")


def test_algorithm_2s_cycles_per_class_match_the_trace():
    """The per-class forms of the report (n/m and m mod 2) against the trace's cycles, an
    independent count; a form sympy cannot close gives None, never a guess."""
    from ringproof.model.ring.trace import build_trace
    from ringproof.proofs.report.maths import class_forms, parse
    from ringproof.proofs.figures.counting import M, N, counts
    from ringproof.schedules.algo2 import ALGO2

    forms = class_forms(str(counts(ALGO2).cycles))
    assert forms and len(forms) == 4 and all("floor" not in f["formula"] for f in forms)
    for f in forms:
        k_part, m_part = f["class"].split(", ")
        k_parity, m_parity = int(k_part == "n/m odd"), int(m_part == "m odd")
        sizes = [(k * m, m) for m in range(1, 7) for k in range(1, 5) if k % 2 == k_parity and m % 2 == m_parity]
        for n, m in sizes:
            assert parse(f["formula"]).subs({N: n, M: m}) == build_trace(ALGO2, n, m).cycles, (f, n, m)
    assert class_forms("floor(n/3)*m") is None         # n mod 3 is not a class here: no form claimed


def test_a_proved_exact_peak_is_typeset_as_its_table_of_cases():
    """The HTML report shows a proved exact memory peak typeset (`render._peak_html`): a Piecewise as
    its table of cases, the last one "otherwise" (not sympy's "True"); nothing where the peak is
    not proved."""
    from ringproof.proofs.report import maths, render
    got = render._peak_html({"closed_form": "Piecewise((3*n*(2*d + 1)/m, (m >= 3) & (n/m >= 3)), (4*d + 3, True))"})
    assert "Exact memory peak" in got and got.count("<tr>") == 2 and "otherwise" in got and "True" not in got
    assert render._peak_html({"closed_form": None, "reason": "not derived"}) == "" == render._peak_html({})
    assert "otherwise" in maths.typeset("Piecewise((n, m >= 2), (2*n, True))")


def _print_rules() -> dict[str, set[str]]:
    """{declaration: the selectors that carry it} of the report's print CSS (`@media print`)."""
    from ringproof.proofs.report.render import CSS

    rules: dict[str, set[str]] = {}
    block = CSS.split("@media print{", 1)[1]
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", block):
        for decl in body.split(";"):
            rules.setdefault(decl.strip(), set()).update(s.strip() for s in selectors.split(","))
    return rules


def test_on_paper_headings_and_lead_ins_stay_with_what_follows(tmp_path):
    """The print CSS keeps each heading, lead-in line and summary with what follows it and does not
    split a formula's box, and the page carries the classes those rules name: the counts with their
    load lines in one box, the exact peak's lead-in, the 'Reproduce' line before its grid."""
    from ringproof.proofs.report import render
    from ringproof.proofs.report.pdf import printable

    rules = _print_rules()
    assert {"h2", "h3", "h4", "summary", "p.lead", "p.reproduce", "p.cex"} <= rules["break-after:avoid"]
    assert {"table", "tr", ".load", ".theorem", "p.legend", "div.counts", "div.peak"} <= rules["break-inside:avoid"]
    out = tmp_path / "r.html"
    code, _, err = call("report", "algo1", "--property", "counts", "-o", str(out), "--quiet")
    assert code == 0, err
    page = printable(out.read_text())
    assert re.search(r"<div class='counts'><h3>Counts.*?</table>.*?<div class='load'>memory: .*?</div>\s*</div>",
                     page, flags=re.S)
    assert "<p class='reproduce'>Reproduce: " in page
    assert "<p class='lead'>Exact memory peak" in render._peak_html({"closed_form": "n*(3*n + 1)/m"})
    assert "<details>" not in page and "<details open><summary>Versions and options" in page
    assert "<thead><tr><th>quantity</th>" in page              # a long table's head repeats on every page


def test_a_long_printed_formula_is_shown_where_it_differs():
    from ringproof.proofs.report.render import SHORT, differing

    shared = "(l - j) % m + (i - 1)·m + " * 200
    printed, repaired = shared + "(l + (j - 1) \\ m)·m" + shared, shared + "(l - 1 + ((j - 1) \\ m)·m)" + shared
    a, b = differing(printed, repaired)
    assert "(l + (j - 1) \\ m)·m" in a and "(l - 1 + ((j - 1) \\ m)·m)" in b
    assert a.startswith("…") and len(a) < SHORT + 80 and f"of {len(printed):,}]" in a
    assert "differ further on" not in a                      # one difference: all of it shown
    assert differing("j = n + 1", "j = n") == ("j = n + 1", "j = n")        # short ones whole
    far = repaired[:-5] + "XXXXX"               # a second difference 5,000 characters on
    assert "the two differ further on" in differing(printed, far)[1]


def _pdf_pages(pdf: Path) -> list[str]:
    """The text of each page of `pdf` (pdftotext, from poppler-utils); skips where it is missing."""
    if shutil.which("pdftotext") is None:
        pytest.skip("no pdftotext on this machine (Debian: apt-get install poppler-utils)")
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return text.split("\f")


def test_a_printed_variant_prints_in_a_few_pages_and_no_heading_ends_a_page(tmp_path):
    """algo3-printed's formulas run to 68,000 characters: printed whole they took 41 pages; cut to
    where they differ, the report of the variant is a few pages, and no heading is the last line of
    a page (the print CSS keeps it with what follows)."""
    if _chromium() is None:
        pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium package)")
    out = tmp_path / "r.pdf"
    code, _, err = call("report", "algo3-printed", "--property", "well-formed", "-o", str(out), "--quiet")
    assert code == 0, err
    pages = len(re.findall(rb"/Type\s*/Page\b(?!s)", out.read_bytes()))
    assert 1 < pages <= 8, pages
    headings = ("Refutations and open checks", "Printed versus repaired formulas", "Schedule, ",
                "What the proofs rested on", "refuted: well-formed")
    for k, text in enumerate(_pdf_pages(out)[:-1], 1):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        assert lines and not lines[-1].startswith(headings), (k, lines[-1])
