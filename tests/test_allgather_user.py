"""A user's all-gather schedule file (`SCHEDULE = AllGather(...)`): proved as the registered
targets are, a broken one refuted with a counterexample whose printed commands replay it, a bad
one one line and exit 64."""

from __future__ import annotations

import io
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ringproof.proofs.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "allgather_segments.py"


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def write(tmp_path, body: str) -> str:
    path = tmp_path / "my_allgather.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


def test_the_example_is_proved_and_simulated():
    code, out, _ = cli(str(EXAMPLE), "--quiet")
    assert code == 0 and "refuted" not in out and "unknown" not in out and "at most S²·(m − 1)" in out
    code, out, _ = cli("simulate", str(EXAMPLE), "--lengths", "4,8,4", "-m", "2")
    assert code == 0 and "pairs per rank (ranks 0..m−1): 20, 36" in out


# the mutants, as a user would write them: (formula replaced, the smallest packing it breaks)
BROKEN = {
    "k_lo=lambda R, C: R.lo": "--lengths 2 -m 2",                     # keys from the rank's first token
    "q_hi=lambda R, C: C.c + C.L": "--lengths 2 -m 2",               # cu_seqlens_q not clipped at the end
    "q_lo=lambda R, C: C.c": "--lengths 2 -m 2",                     # a crossing document counted twice
}


@pytest.mark.parametrize("formula", sorted(BROKEN))
def test_a_broken_file_is_refuted_and_its_commands_replay_it(tmp_path, formula):
    path = write(tmp_path, f'''
        from ringproof import AllGather
        SCHEDULE = AllGather("broken", False, "one formula wrong", {formula})
    ''')
    code, out, _ = cli(path, "--quiet")
    assert code == 1 and "refuted coverage/forward" in out and BROKEN[formula] in out
    message = re.search(r"counterexample: [^:]*: (.*)", out).group(1)
    for line in ("replay", "run"):
        cmd = shlex.split(re.search(rf"^  {line}: prove (.*)$", out, re.M).group(1))
        code, again, _ = cli(*cmd)
        assert code == 1 and message in again                        # the model run again says the same


def test_a_broken_file_in_json(tmp_path):
    import json

    path = write(tmp_path, '''
        from ringproof import AllGather
        SCHEDULE = AllGather("broken", False, "keys from the rank's start", k_lo=lambda R, C: R.lo)
    ''')
    code, out, _ = cli(path, "--json")
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "refuted" and data["schedule"] == "broken"
    cex = next(r["counterexample"] for r in data["results"] if r["verdict"] == "refuted")
    assert cex["replay"]["lengths"] == [2] and cex["m"] == 2 and cex["replay"]["replayed"] is True


def test_the_registered_target_from_a_file_is_the_registered_one(tmp_path):
    path = write(tmp_path, '''
        from dataclasses import replace
        from ringproof.schedules.allgather import ALLGATHER
        SCHEDULE = replace(ALLGATHER["llama3"], name="mine")
    ''')
    code, out, _ = cli(path, "--tier", "bounded", "-n", "12", "-m", "3")
    assert code == 0 and "pairs per rank [10, 26, 42]" in out and "proved" in out


@pytest.mark.parametrize("body, says", [
    ("SCHEDULE = AllGather('x', False, 'd', k_lo=3)", "k_lo must be a function (R, C)"),
    ("SCHEDULE = AllGather('x', 'no', 'd')", "single must be True"),
    ("SCHEDULE = AllGather('x', False, 'd', k_lo=lambda R, C: 1 // 0)", "ZeroDivisionError"),
    ("SCHEDULE = AllGather('x', False, 'd', k_lo=lambda R, C: C.c if C.c > 0 else R.lo)", "Z3Exception"),
    ("SCHEDULE = AllGather('x', False, 'd', k_lo=lambda R, C: C.c / 1)", "not an int"),
    ("SCHEDULE = AllGather('x', False, 'd', causal=False)", "only the causal kernel"),
    ("SCHEDULE = AllGather('x', False, 'd', k_lo=lambda R: R.lo)", "TypeError"),
])
def test_a_bad_file_is_one_line(tmp_path, body, says):
    path = write(tmp_path, "from ringproof import AllGather\n" + body + "\n")
    concrete = says != "Z3Exception"             # Python `if` on a size runs on ints: only the proof refuses it
    for argv in ((path, "--quiet"), ("simulate", path, "--lengths", "2,2", "-m", "2"))[:1 + concrete]:
        code, out, err = cli(*argv)
        assert code == 64 and says in err and "Traceback" not in err and err.count("\n") == 1, err
        assert err.startswith("prove: error: ") and "my_allgather.py" in err


def test_allgather_is_exported_lazily():
    probe = ("import sys, ringproof; before = 'ringproof.schedules.allgather' in sys.modules; "
             "cls = ringproof.AllGather; print(before, cls.__module__, 'AllGather' in ringproof.__all__)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "ringproof.schedules.allgather", "True"]
