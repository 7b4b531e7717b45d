"""Property-based fuzzing of the `prove` command (issue #12): random argument vectors and random
malformed schedule files never print a traceback and exit only with a documented code.

Every generated command ends with options that keep a valid one cheap (bounded tier at n ≤ 4, tiny
instances), so the few examples run in seconds."""

import io

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ringproof.proofs.cli import main

CODES = {0, 1, 2, 64, 70, 130}

TOKENS = ["algo1", "algo2-printed", "nowhere.py", "README.md", "--json", "--tier", "bounded",
          "per-m", "parametric", "--max-n", "--max-m", "-n", "-m", "--seed", "--timeout", "--jobs",
          "--property", "coverage", "counts", "speed", "--method", "bitlevel", "--pes", "--solver",
          "bogus", "z3", "--format", "md", "html", "json", "--cycles", "--quiet", "--debug",
          "0", "1", "2", "3", "4", "-1", "nan", "inf", "1e999", "x", "", "--", "-", "plain", "masked"]

CHEAP = {  # appended last, so argparse keeps these values for any option given twice
    "": ["--tier", "bounded", "--max-n", "3", "--property", "well-formed"],
    "simulate": ["-n", "2", "-m", "1"],
    "report": ["--tier", "bounded", "--max-n", "3", "--property", "well-formed", "-n", "2", "-m", "1"],
    "search": ["plain", "-n", "2", "-m", "1", "--timeout", "20"],
    "balance": ["--patches", "6", "--clusters", "4", "--timeout", "20"],
    "unroll": ["--pes", "16"],
}

LINES = [
    "from ringproof import *",
    "from dataclasses import replace",
    "SCHEDULE = 3",
    "SCHEDULE = replace(ALGO1, name='f')",
    "SCHEDULE = replace(ALGO1, phases=())",
    "raise ValueError('at import')",
    "import nonexistent_module",
    "def f(:",
    "x = 1 / 0",
    "_o = ALGO1.phases[0]",
    "SCHEDULE = replace(ALGO1, phases=(replace(_o, step=lambda P, ix: None),))",
    "SCHEDULE = replace(ALGO1, phases=(replace(_o, step=lambda P, ix: 1 if ix.j == 1 else 2),))",
    "SCHEDULE = replace(ALGO1, phases=(replace(_o, loops=(Loop('h', 1, 'q'),)),))",
    "SCHEDULE = replace(ALGO1, phases=(replace(_o, loops=(Loop('h', 1, lambda P, ix: P.n % 2),)),))",
    "SCHEDULE = replace(ALGO1, phases=(_o, _o))",
    "SCHEDULE = Schedule('s', PLAIN, (), None)",
    "\x00",
]


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out, err)
    return code, err.getvalue()


FUZZ = settings(max_examples=30, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@FUZZ
@given(sub=st.sampled_from(sorted(CHEAP)), tokens=st.lists(st.sampled_from(TOKENS) | st.text(max_size=8),
                                                             max_size=6))
def test_random_argv_never_shows_a_traceback(sub, tokens, tmp_path_factory):
    import os

    os.chdir(tmp_path_factory.getbasetemp())
    argv = ([sub] if sub else []) + tokens + CHEAP[sub]
    code, err = run(argv)
    assert code in CODES, (argv, code, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 1, (argv, err)


@FUZZ
@given(lines=st.lists(st.sampled_from(LINES), min_size=1, max_size=5),
       simulate=st.booleans())
def test_random_schedule_files_never_show_a_traceback(lines, simulate, tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "schedule.py"
    path.write_text("\n".join(lines) + "\n")
    argv = ["simulate", str(path), "-n", "2", "-m", "1"] if simulate else \
        [str(path), "--tier", "bounded", "--max-n", "2", "--property", "well-formed"]
    code, err = run(argv)
    assert code in CODES, (lines, code, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 1, (lines, err)
