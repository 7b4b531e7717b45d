"""Bad input is one line with exit 64, never a traceback: malformed steps, found inputs, a broken pipe."""

import textwrap

import pytest

from helpers.cli import call, one_line_error


STEP_FILE = textwrap.dedent('''\
    from dataclasses import replace
    from ringproof import ALGO1, Loop
    from ringproof.schedules import algo1
    _o = ALGO1.phases[0]
    def step(P, ix):
        st = _o.step.__wrapped__(P, ix)
        {body}
    SCHEDULE = replace(ALGO1, name="x", phases=(replace(_o, step=step{extra}),) + ALGO1.phases[1:])
    ''')


MALFORMED = [   # (body, extra, what the one line says): bad input to the prover and the simulator
    ("return None", "", "must return a Step"),
    ("return replace(st, target=algo1.w1[st.target.idx[0], 1.5])", "", "must be an integer formula"),
    ("return replace(st, target=algo1.w1[st.target.idx[0], 'x'])", "", "must be an integer formula"),
    ("return st", ", loops=(Loop('h', 1, 'q'),) + _o.loops[1:]", "is not an int, 'n'"),
    ("return st", ", loops=(Loop('h', 1, 2.5),) + _o.loops[1:]", "is not an int, 'n'"),
]
REFUSED = [    # Python operators on index values: fine on ints, refused on the prover's terms
    ("return st", ", loops=(Loop('h', 1, lambda P, ix: P.n / 2),) + _o.loops[1:]", "div(a, b)"),
    ("return replace(st, pe=ix.l % P.m)", "", "mod(a, b)"),
    ("return replace(st, pe=ix.l // 1)", "", "div(a, b)"),
    ("return replace(st, guard=ix.l < 2)", "", "lt(a, b)"),
]


@pytest.mark.parametrize("command", ["prove", "simulate"])
@pytest.mark.parametrize("body,extra,needle", MALFORMED + REFUSED)
def test_malformed_steps_are_one_line_exit_64(tmp_path, body, extra, needle, command):
    if command == "simulate" and (body, extra, needle) in REFUSED:
        pytest.skip("runs on ints")
    path = tmp_path / "bad.py"
    path.write_text(STEP_FILE.format(body=body, extra=extra))
    argv = ["simulate", str(path), "-n", "4", "-m", "2"] if command == "simulate" else \
        [str(path), "--property", "coverage"]
    code, out, err = call(*argv)
    assert code == 64, (out, err)
    line = one_line_error(err)
    assert str(path) in line and needle in line


@pytest.mark.parametrize("argv,needle", [
    (["README.md"], "not a schedule file"),
    (["a" * 5000 + ".py"], "cannot read schedule file"),
    (["a" * 5000], "unknown target"),
    (["algo1", "--timeout", "nan"], "positive, finite"),
    (["algo1", "--timeout", "inf"], "positive, finite"),
    (["algo1", "--jobs", "-3"], "--jobs"),
    (["search", "plain", "-n", "4", "-m", "2", "--solver", "bogus"], "invalid choice"),
    (["search", "plain", "-n", "4", "-m", "2", "--timeout", "nan"], "positive, finite"),
    (["search", "plain", "-n", "5", "-m", "2"], "m must divide n"),
    (["simulate", "algo1", "-n", "4", "-m", "2", "--seed", "-1"], "--seed"),
    (["report", "algo1", "--tier", "per-m", "--max-m", "-2"], "--max-m"),
    (["simulate", "algo1", "-n", "1000000000", "-m", "1000"], "limited to 1.5 GiB"),
    (["simulate", "algo1", "-n", str(10 ** 12), "-m", "1000"], "limited to 1.5 GiB"),
    (["report", "algo1", "-n", "1000000000", "-m", "1000"], "limited to n ≤"),
    (["algo1", "--tier", "bounded", "--max-n", "100000"], "limited to n ≤"),
    (["unroll", "--pes", str(10 ** 30)], "at most"),
    (["unroll", "--pes", "2097152"], "too many spatial unrollings"),
    (["balance", "notes.txt"], "not an instance file"),
])
def test_found_inputs_are_one_line_exit_64(argv, needle, tmp_path, monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "README.md").write_text("# not a schedule\n")
    (tmp_path / "notes.txt").write_text("hello\n")
    code, out, err = call(*argv)
    assert code == 64, (argv, out, err)
    assert needle in one_line_error(err)
    assert len(err) < 400
    assert Path(tmp_path).exists()


def test_balance_rejects_an_instance_without_patches(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("bank0,bank1\n")
    code, out, err = call("balance", str(path))
    assert code == 64 and "no patches" in one_line_error(err)


def test_broken_pipe_is_quiet():
    import subprocess
    import sys
    from pathlib import Path

    prove = Path(sys.executable).parent / "prove"
    proc = subprocess.run(f"{prove} unroll --pes 256 | head -1",
                          shell=True, capture_output=True, text=True, timeout=120)
    assert proc.stdout.startswith("PE array of 256") and proc.stderr == "", proc.stderr


# one bad input per subcommand (and the default, verify): `--debug` is for internal errors only
BAD_PER_SUBCOMMAND = {
    None: ["nosuch-target"],
    "simulate": ["simulate", "algo1", "-n", "5", "-m", "2"],
    "report": ["report", "algo1", "--tier", "per-m", "--max-m", "-2"],
    "search": ["search", "plain", "-n", "5", "-m", "2"],
    "bound": ["bound", "nosuch"],
    "balance": ["balance", "notes.txt"],
    "unroll": ["unroll", "--pes", "2097152"],
    "layout": ["layout", "zigzag", "--against", "nosuch_module_x:fn"],
    "conform": ["conform", "zigzag", "--impl", "nosuch"],
}


def test_every_subcommand_has_a_bad_input_case():
    from ringproof.proofs.cli.main import SUBCOMMANDS
    assert set(BAD_PER_SUBCOMMAND) == {None, *SUBCOMMANDS}


@pytest.mark.parametrize("where", ["first", "last"])
@pytest.mark.parametrize("sub", list(BAD_PER_SUBCOMMAND), ids=str)
def test_bad_input_stays_one_line_with_debug(sub, where, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("hello\n")
    argv = BAD_PER_SUBCOMMAND[sub]
    code, out, err = call(*(["--debug", *argv] if where == "first" else [*argv, "--debug"]))
    assert code == 64, (out, err)
    assert one_line_error(err).startswith("prove: error: ")


def test_a_schedule_function_that_raises_is_one_line_with_debug(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text(STEP_FILE.format(body="raise ValueError('mine')", extra=""))
    code, out, err = call(str(path), "--property", "coverage", "--debug")
    assert code == 64 and "mine" in one_line_error(err)


def test_an_internal_error_shows_its_traceback_with_debug_only(monkeypatch):
    from ringproof.proofs.cli import simulate

    def broken(*args):
        raise ZeroDivisionError("ours")

    monkeypatch.setattr(simulate, "main", broken)
    code, _, err = call("simulate", "algo1", "-n", "4", "-m", "2")
    assert code == 70 and "--debug" in one_line_error(err)
    code, _, err = call("simulate", "algo1", "-n", "4", "-m", "2", "--debug")
    assert code == 70 and "Traceback" in err and err.rstrip().endswith("ZeroDivisionError: ours")
