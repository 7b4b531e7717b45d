"""Issue 27's front: every path a new user found answered in one line with the right exit code,
the entry points, and the one CLI skeleton every subcommand uses."""

from __future__ import annotations

import io
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ringproof.errors import Exit
from ringproof.proofs.cli import main
from ringproof.proofs.cli.main import SUBCOMMANDS

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def call(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("argv, says", [
    (["algo1", "--smt2", "/proc/no/such/dir"], "--smt2 '/proc/no/such/dir' cannot be written"),
    (["algo1", "--smt2", str(ROOT / "README.md")], "is a file; name a directory"),
    (["search", "plain", "-n", "4", "-m", "0"], "argument -m: expected an integer at least 1, got 0"),
    (["search", "plain", "-n", "4", "-m", "2", "--state", "/tmp"], "is a directory"),
    (["balance", "--patches", "0"], "argument --patches: expected an integer at least 1, got 0"),
    (["simulate", "algo1", "-n", "4", "-m", "2", "--scale", "-1"], "--scale must be a positive"),
    (["simulate", "algo1", "-n", "4", "-m", "2", "--scale", "nan"], "--scale must be a positive"),
    (["simulate", "algo1", "-n", "4", "-m", "2", "--picture", "/tmp"], "--picture '/tmp' is a directory"),
    (["simulate", "algo1", "-n", "4", "-m", "2", "--picture", "/no/such/x.svg"], "does not exist"),
])
def test_found_bad_inputs_are_one_line_and_64(argv, says):
    code, out, err = call(*argv)
    assert code == Exit.BAD_INPUT and out == ""
    assert says in one_line(err)


def test_picture_says_what_it_shows_and_that_it_replaced_a_file(tmp_path):
    pic = tmp_path / "s.svg"
    code, _, err = call("simulate", "algo1", "-n", "6", "-m", "3", "--picture", pic)
    assert code == 0 and pic.read_text().startswith("<svg")
    assert f"picture {pic}: 24 of 168 cycles, the first 6 of each phase (--cycles)" in err
    assert "replaced" not in err
    code, _, err = call("simulate", "algo1", "-n", "6", "-m", "3", "--picture", pic, "--cycles", "2")
    assert code == 0 and "(replaced the file there): 8 of 168 cycles, the first 2" in err


def test_unroll_timeout_without_facts_says_it_applies_to_facts_only():
    code, _, err = call("unroll", "--pes", "256", "--timeout", "1000")
    assert code == 0
    assert "1000 is read as milliseconds" in err and "--facts only" in err
    assert "--facts only" not in call("unroll", "--pes", "256")[2]


def test_version_and_both_script_names_and_python_m():
    code, out, _ = call("--version")
    assert code == 0 and out.startswith("ringproof ")
    for cmd in ([str(BIN / "prove")], [str(BIN / "ringproof")], [sys.executable, "-m", "ringproof"]):
        r = subprocess.run(cmd + ["--version"], capture_output=True, text=True, timeout=60)
        assert (r.returncode, r.stdout) == (0, out), cmd


def test_the_command_ends_with_its_code_and_its_output_flushed():
    """`run` (the scripts' and `python -m ringproof`'s entry) ends the process without tearing down
    its objects: the exit code and every line written still come out."""
    r = subprocess.run([sys.executable, "-m", "ringproof", "no-such-target"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 64 and r.stderr.startswith("prove: error: unknown target 'no-such-target'")
    r = subprocess.run([sys.executable, "-m", "ringproof", "simulate", "algo1", "-n", "4", "-m", "2"],
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (0, call("simulate", "algo1", "-n", "4", "-m", "2")[1])


def test_help_lists_every_subcommand_from_the_table():
    code, out, _ = call("--help")
    assert code == 0
    lines = out.split("subcommands (prove SUBCOMMAND --help):\n")[1].split("\n\n")[0].splitlines()
    listed = [line for line in lines if not line.startswith("    ")]      # a long one wraps under itself
    assert [line.split()[0] for line in listed] == list(SUBCOMMANDS)
    assert all(len(line.split(None, 1)[1]) > 20 for line in listed)     # each with what it does
    assert "…" not in "".join(lines) and all(len(line) <= 100 for line in lines)   # whole, never cut off


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_every_subcommand_has_the_skeleton(name):
    """parser() and main(argv, stdout, stderr); --help goes to stdout with exit 0."""
    import importlib

    module = importlib.import_module(SUBCOMMANDS[name])
    assert callable(module.parser) and callable(module.main)
    code, out, err = call(name, "--help")
    assert code == 0 and out.startswith(f"usage: prove {name}") and err == ""


def test_no_cli_module_spells_exit_codes_or_json_on_its_own():
    for path in (ROOT / "proofs" / "cli").glob("*.py"):
        text = path.read_text()
        assert "EXIT_" not in text and "json.dump" not in text and "SCHEMA_VERSION" not in text, path
        assert "def _parser" not in text and "def _positive" not in text, path


def _late_ignorer(ready):
    ready.set()
    time.sleep(0.5)              # Ctrl-C arrives here, before the child ignores it
    from ringproof.proofs.workers import die_with_parent

    die_with_parent()


def test_ctrl_c_while_a_worker_starts_raises_nothing_in_it():
    from ringproof.proofs.workers import starting

    ctx = mp.get_context("fork")
    ready = ctx.Event()
    proc = ctx.Process(target=_late_ignorer, args=(ready,))
    with starting():
        proc.start()
    assert ready.wait(10)
    os.kill(proc.pid, signal.SIGINT)
    proc.join(10)
    assert proc.exitcode == 0       # without `starting`: KeyboardInterrupt, a traceback, exit 1


# ------------------------------------------------------------------ schedule files are contained

MATVEC = (ROOT / "examples" / "matvec.py").read_text()


def _file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_printing_schedule_file_leaves_json_on_stdout(tmp_path, capsys):
    text = 'print("hello from the file")\n' + MATVEC.replace("def step(P, ix):\n", "def step(P, ix):\n    print('in step')\n")
    code, out, _ = call(_file(tmp_path, "noisy.py", text), "--json", "--property", "coverage")
    import json

    assert code == 0 and json.loads(out)["verdict"] == "proved"
    err = capsys.readouterr().err          # the file's prints went to the process's stderr
    assert "hello from the file" in err and "in step" in err


@pytest.mark.parametrize("text, says", [
    ("import sys\nsys.exit(3)\n", "x.py:2: importing {path} called sys.exit(3); a schedule file must not exit"),
    ("raise GeneratorExit('odd')\n", "cannot import {path}: {path}:1: GeneratorExit: odd"),
    ("SCHEDULE = 42\n", "{path}: SCHEDULE = 42 is not a Schedule"),
])
def test_a_schedule_file_that_exits_or_misassigns_is_bad_input(tmp_path, text, says):
    path = _file(tmp_path, "x.py", text)
    code, out, err = call(path)
    assert code == Exit.BAD_INPUT and out == ""
    assert says.format(path=path) in one_line(err)


def test_a_step_that_exits_is_bad_input_at_its_line(tmp_path):
    text = MATVEC.replace("def step(P, ix):\n", "def step(P, ix):\n    raise SystemExit(5)\n")
    path = _file(tmp_path, "exits_in_step.py", text)
    line = text.splitlines().index("    raise SystemExit(5)") + 1
    code, _, err = call(path, "--property", "coverage")
    assert code == Exit.BAD_INPUT and f"{path}:{line}: the step of phase rows called sys.exit(5)" in one_line(err)


def test_a_directory_named_like_a_schedule_file(tmp_path):
    (tmp_path / "x.py").mkdir()
    code, _, err = call(tmp_path / "x.py")
    assert code == Exit.BAD_INPUT and "is a directory" in one_line(err)


@pytest.mark.parametrize("where", ["import", "step"])
def test_a_looping_schedule_file_ends_in_one_line(tmp_path, monkeypatch, where):
    from ringproof.schedules import usercode

    monkeypatch.setattr(usercode, "IMPORT_SECONDS", 1.0)
    monkeypatch.setattr(usercode, "SAMPLING_SECONDS", 1.0)
    loop = "    while True:\n        pass\n"
    text = ("while True:\n    pass\n" if where == "import" else
            MATVEC.replace("def step(P, ix):\n", "def step(P, ix):\n" + loop))
    path = _file(tmp_path, "loops.py", text)
    start = time.monotonic()
    code, _, err = call(path, "--property", "coverage")
    assert code == Exit.BAD_INPUT and time.monotonic() - start < 30
    assert f"{path}:" in err and "did not finish within 1 s" in one_line(err)


@pytest.mark.parametrize("cut, says", [
    (", inverse=inverse)", "phase rows: coverage needs an `inverse` witness"),
    ("                prev=At(\"rows\", dict(i=ix.i, j=ix.j - 1, l=wrap(ix.l - 1, P.m))),\n",
     "phase rows: an accumulating step must give `first` and `prev` (missing: prev"),
])
def test_a_missing_witness_names_the_file_and_line_of_the_phase(tmp_path, cut, says):
    text = MATVEC.replace(cut, ")" if cut.startswith(",") else "")
    path = _file(tmp_path, "nowitness.py", text)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("ROWS = Phase("))
    code, _, err = call(path, "--property", "coverage", "--property", "ring-locality")
    assert code == Exit.BAD_INPUT and f"{path}:{line}: {says}" in one_line(err)
