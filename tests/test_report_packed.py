"""`prove report` of the packed-sequence targets: a varlen one (packed on the ring) and an all-gather
one each get a section like the ring targets' (results, theorem over documents, side condition and
the packing that breaks without it, the sums over documents typeset, no sympy text), report.json
valid against its schema; a mutant varlen file gives its refutation with the replay, exit 1."""

from __future__ import annotations

import io
import json
import re
import textwrap
from pathlib import Path

import pytest

from ringproof.errors import BadInput
from ringproof.proofs.cli import report
from ringproof.proofs.cli.main import main
from ringproof.proofs.report import pdf

ROOT = Path(__file__).resolve().parent.parent
SYMPY_TEXT = ("Sum(", "Piecewise(", "**", "L[i]", "IndexedBase")


def sympy_text(text: str) -> list[str]:
    """The sympy spellings in a page (Markdown's **bold** aside)."""
    text = re.sub(r"\*\*[^*\n]+\*\*", "", text)
    return [s for s in SYMPY_TEXT if s in text]


def call(*argv):
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def packed_dir(tmp_path_factory):
    """One report of zigzag-varlen and llama3-varlen (no PDF: the browser is not this file's subject)."""
    d = tmp_path_factory.mktemp("packed")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pdf, "browser", lambda: None)
        code, out, err = call("report", "zigzag-varlen", "llama3-varlen", "--out", str(d), "--front", "no")
    assert code == 0, err
    assert "zigzag-varlen proved, llama3-varlen proved" in out
    return d


def _sections(d: Path) -> dict:
    return {t["target"]: t for t in json.loads((d / "report.json").read_text())["targets"]}


def test_the_packed_report_json_validates_against_its_schema(packed_dir):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "report.schema.json").read_text())
    doc = json.loads((packed_dir / "report.json").read_text())
    jsonschema.validate(doc, schema)
    got = _sections(packed_dir)
    varlen, gather = got["zigzag-varlen"], got["llama3-varlen"]
    assert (varlen["machine"], gather["machine"]) == ("packed", "allgather")
    assert varlen["picture"]["svg"].startswith("<svg") and "base zigzag" in varlen["picture"]["of"]
    assert gather["picture"] is None and gather["grid"] is None      # no ring pass on the all-gather machine
    assert sum(gather["packing"]["pairs_per_rank"]) == 3 * 4 // 2 + 5 * 6 // 2   # every document-causal pair once
    broken = json.loads(json.dumps(doc))
    broken["targets"][1]["packing"]["command"] = "simulate it"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_the_theorem_names_documents_and_the_side_condition_its_breaking_packing(packed_dir):
    got = _sections(packed_dir)
    for name in ("zigzag-varlen", "llama3-varlen"):
        th = got[name]["theorem"]
        assert th["kind"] == "theorem" and "every number of documents D ≥ 1" in th["words"]
    assert "2m | L_i for every document i" in got["zigzag-varlen"]["theorem"]["words"]
    assert "m | T = Σ L_i" in got["llama3-varlen"]["theorem"]["words"]
    md = (packed_dir / "report.md").read_text()
    assert "- assumed: 2m | L_i for every document i" in md
    assert "prove simulate zigzag-varlen --lengths 5 -m 2" in md            # the packing that breaks without it
    page = (packed_dir / "report.html").read_text()
    assert "the base zigzag&#x27;s ring pass for one document" in page


def test_the_sums_over_documents_are_typeset_with_no_sympy_text(packed_dir):
    md = (packed_dir / "report.md").read_text()
    page = (packed_dir / "report.html").read_text()
    assert sympy_text(md) == sympy_text(page) == []
    assert "| cycles | Σ_{i=1}^{D} ((2·d·L_i + d + 2·L_i)·L_i/m) |" in md
    assert "pairs computed = Σ_{i=1}^{D} ((L_i + 1)·L_i/2) per query head" in md
    assert "spread (max − min over PEs) = 0 for every packing" in md
    # MathML: Σ with its limits i = 1 and D, a document's length L subscript i
    assert re.search(r"<munderover><mo>&#x2211;</mo><mrow><mi>i</mi><mo>=</mo><mn>1</mn></mrow><mi>D</mi>", page)
    assert "<msub><mi>L</mi><mi>i</mi></msub>" in page
    assert "<msup><mi>S</mi><mn>2</mn></msup>" in page                   # the all-gather spread bound S²·(m − 1)
    assert "One packing on the all-gather model: lengths 3,5, m = 2" in md
    assert "What the proofs rested on" in md and "llama3-varlen: segment queries" in md


def test_the_legend_names_the_models_the_targets_run_on(packed_dir):
    """A refutation of a packed target replays on the packed ring model, an all-gather one's on the
    all-gather model: the summary's legend names those, not the ring model."""
    md = (packed_dir / "report.md").read_text()
    page = (packed_dir / "report.html").read_text()
    both = "replayed on the packed ring model (packed sequences) or the all-gather model (all-gather targets)"
    assert f"✗ refuted: a counterexample, {both};" in md and both in page
    assert "replayed on the ring model" not in md + page


@pytest.mark.parametrize("name, model", [("algo1", "the ring model"), ("zigzag-varlen", "the packed ring model"),
                                         ("llama3-varlen", "the all-gather model"), ("llama3", "the all-gather model")])
def test_the_legend_of_one_target_names_its_machines_model(name, model):
    from ringproof.proofs.cli import targets
    from ringproof.proofs.report.words import legend

    assert legend([targets.machine(name)])["✗"] == f"refuted: a counterexample, replayed on {model}"
    assert legend(iter([targets.machine(name), targets.machine(name)])) == legend([targets.machine(name)])


def test_a_mutant_varlen_file_is_refuted_with_its_replay_exit_1(tmp_path):
    path = tmp_path / "my_varlen.py"
    path.write_text(textwrap.dedent('''
        from ringproof import VARLEN, Varlen, and_, le

        ZIGZAG = VARLEN["zigzag-varlen"]
        SCHEDULE = Varlen("sees-the-previous-document", ZIGZAG.base, False, "a wrong mask",
                          mask=lambda Q, K, q, k: and_(le(Q.i - 1, K.i), le(K.i, Q.i), le(k, q)))
    '''))
    md = tmp_path / "r.md"
    code, out, err = call("report", str(path), "--property", "coverage", "-o", str(md), "--quiet")
    assert code == 1, err
    text = md.read_text()
    assert "## sees-the-previous-document: **refuted**" in text
    assert "### refuted: coverage" in text
    assert f"Replay: `prove simulate {path} --lengths 2,2 -m 1" in text
    assert "(the smallest packing found: lengths 2,2 at m = 1, replayed on the model)" in text
    assert "Counterexample lengths 2,2 (T = 4), m = 1" in text
    assert sympy_text(text) == []


def test_no_target_means_every_target_of_the_table(monkeypatch):
    from ringproof.proofs.cli.targets import table

    assert "packed-sequence" in report.EPILOG
    names = []
    monkeypatch.setattr(report, "resolve", lambda name: names.append(name) or object())
    monkeypatch.setattr(report, "_outputs", lambda args: (_ for _ in ()).throw(BadInput("outputs")))
    with pytest.raises(BadInput, match="outputs"):
        report.main(["--out", "unused"], io.StringIO(), io.StringIO())
    assert names == list(table()) and {"zigzag-varlen-bwd", "llama3", "llama3-varlen"} <= set(names)


def test_a_report_at_tier_bounded_or_per_m_claims_only_the_sizes_it_covered(tmp_path):
    """The theorem's words follow the weakest tier of the proved rows: at tier bounded the sizes up
    to --max-n, at per-m the m up to --max-m, never "for all integers n"; a packed target's report
    is at tier parametric only, and another tier is refused in one line."""
    import io

    import pytest

    from ringproof.errors import BadInput
    from ringproof.proofs.cli import report

    for tier, extra, want in (("bounded", ["--max-n", "6", "--max-m", "3"], "every size with n ≤ 6, m ≤ 3"),
                              ("per-m", ["--max-m", "2"], "every m ≤ 2 and all integers n ≥ 1")):
        out = tmp_path / f"{tier}.md"
        code = report.main(["algo1", "--tier", tier, *extra, "-o", str(out), "--quiet"], io.StringIO(), io.StringIO())
        text = out.read_text()
        theorem = next(line for line in text.splitlines() if "**Theorem.**" in line)
        assert code == 0 and want in theorem and "For all integers" not in theorem, theorem
    with pytest.raises(BadInput, match="zigzag-varlen is a packed-sequence target, reported at tier parametric"):
        report.main(["zigzag-varlen", "--tier", "bounded", "-o", str(tmp_path / "z.md")], io.StringIO(), io.StringIO())
