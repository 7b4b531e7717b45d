"""The `prove` command: output, JSON keys, exit codes, bad input."""

import io
import json
import textwrap

import pytest

from ringproof.proofs.cli import main


def call(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_prove_algo1_json():
    code, out, err = call("algo1", "--json", "--property", "coverage", "--property", "counts")
    assert code == 0, err
    data = json.loads(out)
    assert data["target"] == "algo1"
    assert {r["property"] for r in data["results"]} == {"coverage", "counts"}
    for r in data["results"]:
        assert set(r) >= {"property", "phase", "verdict", "tier", "seconds", "counterexample"}
        assert r["verdict"] == "proved" and r["tier"] == "parametric"


def test_prove_table_and_refutation_exit_1():
    code, out, _ = call("algo1-printed", "--property", "ring-locality")
    assert code == 1
    assert "refuted" in out and "prove simulate algo1-printed -n" in out


def test_simulate_json_keys():
    code, out, _ = call("simulate", "algo1", "-n", "6", "-m", "3", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["cycles"] == 168
    assert data["ops"] == {"MAC": 432, "EAC": 36, "DIV": 36, "MOVE": 0}
    assert data["utilization"] == 1.0 and data["max_rel_error"] < 1e-9


def test_simulate_printed_version_fails():
    code, out, _ = call("simulate", "algo1-printed", "-n", "4", "-m", "2")
    assert code == 1 and "FAILED" in out


@pytest.mark.parametrize("argv,needle", [
    (["simulate", "algo1", "-n", "6", "-m", "4"], "multiple of m"),
    (["simulate", "algo1", "-n", "0", "-m", "1"], "at least 1"),
    (["simulate", "algo1", "-n", "x", "-m", "1"], "invalid int"),
    (["algo7"], "unknown target"),
    (["algo1", "--tier", "exhaustive"], "invalid choice"),
    (["algo1", "--property", "speed"], "unknown property"),
    (["algo1", "--max-n", "0", "--tier", "bounded"], "--max-n"),
    (["nowhere/schedule.py"], "does not exist"),
    (["algo2", "-n", "5", "-m", "2"], "--method bitlevel"),
])
def test_bad_input_exits_64_with_one_line(argv, needle):
    code, out, err = call(*argv)
    assert code == 64
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_user_schedule_files(tmp_path):
    good = tmp_path / "good.py"
    good.write_text(textwrap.dedent("""
        from dataclasses import replace
        from ringproof.schedules.algo1 import ALGO1
        SCHEDULE = replace(ALGO1, name="mine")
    """))
    assert call(str(good), "--property", "no-conflict")[0] == 0
    broken = tmp_path / "broken.py"
    broken.write_text("import nothing_here\n")
    code, _, err = call(str(broken))
    assert code == 64 and "cannot import" in err and "ModuleNotFoundError" in err
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    code, _, err = call(str(empty))
    assert code == 64 and "defines no Schedule" in err


def test_malformed_schedule_is_bad_input(tmp_path):
    f = tmp_path / "malformed.py"
    f.write_text(textwrap.dedent("""
        from dataclasses import replace
        from ringproof.schedules.algo1 import ALGO1
        p1 = ALGO1.phases[0]
        def step(P, ix):
            return replace(p1.step(P, ix), sources=())
        SCHEDULE = replace(ALGO1, phases=(replace(p1, step=step),) + ALGO1.phases[1:])
    """))
    code, _, err = call(str(f))
    assert code == 64 and "source witnesses" in err


def test_help_lists_exit_codes():
    code, out, _ = call("--help")
    assert code == 0 and "64 bad input" in out


@pytest.mark.parametrize("fmt,needle", [("md", "| property |"), ("html", "<table"), ("json", '"grid"')])
def test_report_formats(tmp_path, fmt, needle):
    out = tmp_path / f"r.{fmt}"
    code, _, err = call("report", "algo1", "--property", "no-conflict", "--format", fmt, "-o", str(out),
                        "-n", "4", "-m", "2")
    assert code == 0, err
    text = out.read_text()
    assert needle in text and "MAC w1[1, 1]" in text


def test_report_of_a_refuted_schedule_shows_the_replay():
    code, out, _ = call("report", "algo1-printed", "--property", "ring-locality")
    assert code == 0 and "Replay: `prove simulate algo1-printed" in out   # refuted as expected: exit 0


def test_the_text_output_says_what_the_second_solver_answered():
    pytest.importorskip("cvc5")
    from ringproof.proofs.cli.main import main as prove_main
    import io
    out, err = io.StringIO(), io.StringIO()
    code = prove_main(["algo1", "--property", "coverage", "--cross-check", "cvc5", "--quiet"], out, err)
    assert code == 0 and "cross-check: cvc5" in out.getvalue() and "it agreed on every one" in out.getvalue()


@pytest.mark.parametrize("target, says", [("zigzag", "2m | n"), ("algo1", "Algorithm 1"),
                                          ("zigzag-varlen", "every lengths vector"), ("llama3", "gathers")])
def test_target_help_says_what_the_target_is(target, says):
    import io
    from ringproof.proofs.cli.main import main as prove_main
    out = io.StringIO()
    assert prove_main([target, "--help"], out, io.StringIO()) == 0
    head, _, rest = out.getvalue().partition("usage: prove")
    assert head.startswith(f"{target}: ") and says in head and rest


def test_help_without_a_target_is_the_generic_help():
    import io
    from ringproof.proofs.cli.main import main as prove_main
    out = io.StringIO()
    assert prove_main(["--help"], out, io.StringIO()) == 0 and out.getvalue().startswith("usage: prove")


def test_a_counterexample_iteration_reads_without_the_solvers_row_names():
    from ringproof.proofs.cli.verify import readable_iteration
    assert readable_iteration({"role": "key", "key1": 1, "key2": 3}) == "the term (1, 3)"
    assert readable_iteration({"role": "a", "phase": "phase1", "i": 1, "l": 2}) == "a: phase1 at i=1, l=2"
    assert readable_iteration({"phase": "ring", "s": 1}) == "ring at s=1"
