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
