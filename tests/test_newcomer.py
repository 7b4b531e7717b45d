"""What a newcomer meets first (issue #48): optional parts missing say how to install them, output
paths and formats are refused up front, and what the terminal and the report print reads as
mathematics and plain words, not as sympy or private notation."""

import sys

import pytest

from helpers.cli import call, one_line_error


def test_conform_of_a_users_function_without_torch_is_bad_input_with_the_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)          # as if torch were not installed
    code, out, err = call("conform", "zigzag", "--impl", "os:getcwd")
    assert code == 64 and out == "", err
    line = one_line_error(err)
    assert "needs torch" in line and "pip install -e '.[torch]'" in line


def _file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_file_that_only_imports_a_registered_schedule_is_refused(tmp_path):
    path = _file(tmp_path, "mine.py", "from ringproof import ALGO1\n")
    code, out, err = call(path, "--property", "well-formed")
    assert code == 64 and out == ""
    line = one_line_error(err)
    assert "defines no schedule of its own" in line and "prove algo1" in line and "SCHEDULE = ALGO1" in line
    ok = _file(tmp_path, "alias.py", "from ringproof import ALGO1\nSCHEDULE = ALGO1\n")
    assert call(ok, "--property", "well-formed")[0] == 0            # said so: proved from the file


def test_a_malformed_claim_names_file_and_line_in_one_line_without_sympy(tmp_path):
    from pathlib import Path

    text = (Path(__file__).parent.parent / "examples" / "matvec.py").read_text()
    assert '"cycles": "n*d/m"' in text
    path = _file(tmp_path, "claim.py", text.replace('"cycles": "n*d/m"', '"cycles": "n*d/"'))
    for argv in ([path], ["simulate", path, "-n", "4", "-m", "2"]):
        code, out, err = call(*argv)
        assert code == 64 and out == ""
        line = one_line_error(err)
        assert line.startswith(f"prove: error: {path}:") and "'n*d/' is not a formula" in line
        assert "Sympify" not in line and "\\n" not in line


def _no_proofs(monkeypatch):
    from ringproof.proofs.ring import prover

    def refuse(*a, **k):
        raise AssertionError("a proof ran before the arguments were checked")

    monkeypatch.setattr(prover, "verify", refuse)
    monkeypatch.setattr(prover, "verify_with_conditions", refuse)


@pytest.mark.parametrize("argv, says", [
    (["-o", "r.txt"], "cannot tell the format from .txt"),
    (["-o", "report"], "cannot tell the format from no extension"),
    (["--out", "d", "-o", "r.html"], "-o is for one file without --out"),
    (["--out", "d", "--format", "html"], "--format is for one file without --out"),
])
def test_report_refuses_an_output_it_cannot_tell_or_two_that_conflict(monkeypatch, tmp_path, argv, says):
    monkeypatch.chdir(tmp_path)
    _no_proofs(monkeypatch)
    code, out, err = call("report", "algo1", *argv)
    assert code == 64 and out == "", err
    assert says in one_line_error(err)


@pytest.mark.parametrize("name, fmt", [("r.html", "<!doctype html"), ("r.json", "{"), ("r.md", "# ")])
def test_report_takes_the_format_from_the_files_extension(tmp_path, name, fmt):
    code, _, err = call("report", "algo1", "--property", "well-formed", "-o", str(tmp_path / name), "--quiet")
    assert code == 0, err
    assert (tmp_path / name).read_text().lstrip().lower().startswith(fmt)


def test_simulate_refuses_a_picture_that_is_not_svg(tmp_path):
    code, out, err = call("simulate", "algo1", "-n", "4", "-m", "2", "--picture", str(tmp_path / "x.png"))
    assert code == 64 and out == "" and not (tmp_path / "x.png").exists()
    assert "name a .svg file" in one_line_error(err)


def test_a_users_schedule_gets_no_papers_claim_column(tmp_path):
    from pathlib import Path

    example = Path(__file__).parent.parent / "examples" / "matvec.py"
    out = tmp_path / "r.html"
    code, _, err = call("report", str(example), "--property", "counts", "-o", str(out), "--quiet")
    assert code == 0, err
    page = out.read_text()
    assert "paper's claim" not in page and "claimed" in page          # its own claims, compared


def test_the_terminal_and_the_report_show_forms_not_sympy(tmp_path):
    code, out, err = call("algo1", "--property", "counts", "--quiet")
    assert code == 0, err
    foot = out.split("cycles = ")[1]
    assert "2·n²·(n + 1)/m" in foot and "**" not in foot and "n·(3·n + 1)/m" in foot
    from ringproof.proofs.report.maths import in_words, text

    assert text("n**2*(n + floor(n/2) + 1)/m") == "n²·(n + ⌊n/2⌋ + 1)/m"
    assert text("Piecewise((n, Eq(Mod(n, 2), 0)), (n + 1, True))") == "{n if (n mod 2) = 0; n + 1 otherwise}"
    line = in_words("the summand k**2*m + k*Piecewise((Mod(h, m), m >= 2), (0, True)) is not a polynomial in h")
    assert line == "the summand k²·m + k·{(h mod m) if m ≥ 2; 0 otherwise} is not a polynomial in h"


def test_a_printed_variant_reads_as_one_counterexample_per_property(tmp_path):
    import re

    out = tmp_path / "r.html"
    code, _, err = call("report", "algo1-printed", "--property", "coverage", "-o", str(out), "--quiet")
    assert code == 0, err                             # refuted as expected
    page = re.sub(r"<svg.*?</svg>", "", out.read_text(), flags=re.S)
    shown, folded = page.split("<details class='fold'>", 1) if "<details class='fold'>" in page else (page, "")
    assert shown.count("<h4>") == 1 and re.search(r"\d+ more coverage checks? refuted", folded)
    from ringproof.proofs.report.pdf import printable

    printed = printable(page)
    assert "<details open><summary>What the proofs rested on" in printed      # open on paper
    assert "<details class='fold'>" in printed                                 # the long ones still folded


def test_the_exact_peaks_cases_are_typeset_once(tmp_path):
    out = tmp_path / "r.html"
    code, _, err = call("report", "ring-attention", "--property", "counts", "-o", str(out), "--quiet")
    assert code == 0, err
    page = out.read_text()
    assert "Piecewise" not in page and "**" not in page
    assert page.count("<table class='cases'>") == 1      # the peak's cases once, typeset


def _numerics_of(reference, noise):
    """`conform._numerics` of a run whose outputs are `reference` plus `noise` (one rank, n = 1)."""
    torch = pytest.importorskip("torch")
    import types

    from ringproof.proofs.cp import conform

    want = [torch.full((1, 1, 2, 4), float(x), dtype=torch.float64) for x in reference]
    got = [w + e for w, e in zip(want, noise)]
    local = [types.SimpleNamespace(grad=g) for g in got[1:]]
    case = types.SimpleNamespace(reference=lambda *a: want)
    return {name: err for name, (err, _) in
            conform._numerics(torch, case, None, None, None, None, torch.tensor([0]), got[0], local).items()}


def test_conforms_error_has_an_absolute_floor_and_still_catches_a_wrong_value():
    """dq and dk at n = 1 are exactly 0 (the softmax over one key has zero gradient): float32
    noise there reads as noise against `errors.FLOOR`, not as 1e+291; a wrong value still fails."""
    from ringproof.proofs.cp.conform import TOLERANCE
    from ringproof.proofs.cp.errors import FLOOR, error_scale

    assert error_scale(0.0) == FLOOR and error_scale(0.5) == 0.5            # relative above the floor
    noisy = _numerics_of([0.5, 0.0, 0.0, 0.9], [0.0, 4e-9, -4e-9, 0.0])
    assert noisy["dq"] == pytest.approx(4e-9 / FLOOR) and noisy["dq"] < TOLERANCE["float64"]
    assert noisy["out"] == 0.0
    wrong = _numerics_of([0.5, 0.0, 0.0, 0.9], [0.0, 1e-3, 0.0, 0.0])
    assert wrong["dq"] > TOLERANCE["float16"] * 4                            # 1e-3 off a zero quantity fails
    relative = _numerics_of([0.5, 0.2, 0.2, 0.9], [0.01, 0.0, 0.0, 0.0])
    assert relative["out"] == pytest.approx(0.02)                            # relative to its largest |value|


def test_conform_at_n_1_reads_float32_noise_as_conforming():
    pytest.importorskip("torch")
    code, out, err = call("conform", "ring-attention-causal", "--impl", "torch", "--world-sizes", "1",
                          "-n", "1", "--rotate", "alltoall", "--dtype", "float64")
    assert code == 0, out + err
    error = float(out.split("max error ")[1].split()[0])
    assert error < 1e-5, out


def test_the_report_says_div_mod_and_floor_not_the_dsls_backslash(tmp_path):
    """The DSL prints floor division as `\\` and the remainder as `%`; what the report shows says
    `div`, `mod` and ⌊ ⌋ instead: the derived sizes in a theorem, the printed-versus-repaired table."""
    import re

    for target, prop, says in (("zigzag", "well-formed", "Here h = ⌊n/(2·m)⌋."),
                               ("algo1-printed", "coverage", "Printed versus repaired")):
        out = tmp_path / f"{target}.html"
        code, _, err = call("report", target, "--property", prop, "-o", str(out), "--quiet")
        assert code == 0, err
        page = re.sub(r"<svg.*?</svg>", "", out.read_text(), flags=re.S).replace("property \\ phase", "")
        assert says in page and " \\ " not in page and " % " not in page
