"""`prove search`: output, JSON keys, exit codes."""

import io
import json

import pytest

from ringproof.proofs.cli import main


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(["search", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


def test_json_keys_and_proven_minimum():
    code, out, _ = run("masked", "-n", "3", "-m", "3", "--json")
    doc = json.loads(out)
    assert code == 0
    assert {"min_cycles", "unsat_below", "seconds", "lemma_below"} <= doc.keys()
    assert doc["min_cycles"] == 17 and doc["unsat_below"] == 16 and doc["proven"] is True
    assert doc["unsat_by"] == "lemma L2b" and doc["lemma_below"] == 16  # no solver call below 17


def test_no_lemmas_lets_the_solver_refute():
    code, out, _ = run("masked", "-n", "3", "-m", "3", "--json", "--no-lemmas")
    doc = json.loads(out)
    assert code == 0 and doc["min_cycles"] == 17
    assert doc["unsat_by"] == "SAT solver" and doc["lemma_below"] == 15  # 16 passes slot counting


def test_text_output_has_table():
    code, out, _ = run("plain", "-n", "2", "-m", "2")
    assert code == 0
    assert "minimum 12 cycles (proven)" in out and "T=11 unsatisfiable (slot counting" in out
    assert out.splitlines()[2].split()[:3] == ["t", "PE1", "PE2"]


def test_timeout_exits_2_without_claiming():
    code, out, _ = run("masked", "-n", "4", "-m", "4", "--timeout", "0.01", "--json")
    doc = json.loads(out)
    assert code == 2 and doc["min_cycles"] is None and doc["proven"] is False


@pytest.mark.parametrize("argv", [("masked", "-n", "0", "-m", "3"), ("cubic", "-n", "2", "-m", "2"),
                                  ("plain", "-n", "2"), ("plain", "-n", "2", "-m", "-1"),
                                  ("plain", "-n", "x", "-m", "2")])
def test_bad_input_exits_64_with_one_line(argv):
    code, out, err = run(*argv)
    assert code == 64 and out == "" and len(err.strip().splitlines()) == 1


def test_help_exits_0():
    code, out, _ = run("--help")
    assert code == 0 and "exit codes" in out


def test_json_has_barriers_and_cubes():
    code, out, _ = run("masked", "-n", "2", "-m", "2", "--json", "--barriers", "none", "--cube-depth", "1",
                       "--workers", "1")
    doc = json.loads(out)
    assert code == 0 and doc["barriers"] == "none" and doc["cubes"] >= 2 and 1 <= doc["cubes_done"] <= doc["cubes"]
    assert doc["proven"] is True


def test_progress_only_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    out, err = io.StringIO(), Tty()
    assert main(["search", "masked", "-n", "2", "-m", "2", "--cube-depth", "1", "--workers", "1"], out, err) == 0
    assert "cube T=" in err.getvalue() and " full: " in err.getvalue()
    assert run("masked", "-n", "2", "-m", "2", "--cube-depth", "1", "--workers", "1")[2] == ""


@pytest.mark.parametrize("argv", [("--barriers", "some"), ("--workers", "0"), ("--width", "0"),
                                  ("--cube-depth", "9"),
                                  ("--state", "/nonexistent-folder/s.json")])
def test_bad_search_options_exit_64(argv):
    code, out, err = run("plain", "-n", "2", "-m", "2", *argv)
    assert code == 64 and out == "" and len(err.strip().splitlines()) == 1


def test_width_reaches_the_search(monkeypatch):
    import ringproof.proofs.search.minimum as minimum

    seen = {}
    real = minimum.search
    monkeypatch.setattr(minimum, "search", lambda *a, **kw: seen.update(kw) or real(*a, **kw))
    code, out, _ = run("masked", "-n", "3", "-m", "3", "--width", "1", "--json")
    assert code == 0 and json.loads(out)["min_cycles"] == 17 and seen["options"].width == 1
