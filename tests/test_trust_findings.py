"""What a refutation says: witness-only findings replayed, readable counts, progress only on a terminal."""

import io
import textwrap

import pytest

from helpers.cli import call
from ringproof.proofs.cli import main


WRONG_PREV = textwrap.dedent('''\
    from dataclasses import replace
    from ringproof import ALGO1, At
    _o = ALGO1.phases[0]
    def step(P, ix):
        st = _o.step.__wrapped__(P, ix)
        return replace(st, prev=At("phase1", dict(h=ix.h, i=ix.i, j=ix.j - 1, l=ix.l)))
    SCHEDULE = replace(ALGO1, name="bad-witness", phases=(replace(_o, step=step),) + ALGO1.phases[1:])
    ''')


def test_a_witness_only_refutation_says_so_and_its_replay_refutes_again(tmp_path):
    import re

    path = tmp_path / "witness.py"
    path.write_text(WRONG_PREV)
    code, out, err = call(str(path), "--property", "ring-locality")
    assert code == 1, err
    head = re.search(rf"^{re.escape(str(path))}:4: refuted ring-locality/phase1 at n=(\d+), m=(\d+): ",
                     out, re.M)
    assert head, out
    assert "computes the right result" in out and "only a witness is wrong" in out
    replay = re.search(r"replay: prove (.*)$", out, re.M).group(1).split()
    assert replay[-4:] == ["-n", head.group(1), "-m", head.group(2)]
    code, again, err = call(*replay)
    assert code == 1 and "refuted" in again, err


def test_a_real_bug_is_not_called_witness_only():
    code, out, _ = call("algo1-printed", "--property", "ring-locality")
    assert code == 1 and "schedules/algo1.py:" in out and "only a witness" not in out


def test_counts_print_readably_and_keep_the_full_form_in_json():
    import json

    code, out, err = call("algo2", "--property", "counts")
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("cycles = "))
    assert len(line) < 400 and "Piecewise" not in line, line
    code, out, _ = call("algo2", "--property", "counts", "--json")
    details = json.loads(out)["results"][0]["details"]
    assert "Piecewise" in details["cycles"] and details["readable"]["cycles"] in line


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("flags,shown", [((), True), (("--quiet",), False), (("--json",), False)])
def test_progress_only_on_a_terminal_and_not_with_json_or_quiet(flags, shown):
    out, err = io.StringIO(), _Terminal()
    code = main(["algo1", "--tier", "bounded", "--max-n", "4", "--property", "coverage", *flags], out, err)
    assert code == 0
    assert ("\r" in err.getvalue() and "enumerating" in err.getvalue()) == shown
    assert err.getvalue().split("\r")[-1].strip() == ""    # the line is cleared when the work is done
    _, _, plain = call("algo1", "--tier", "bounded", "--max-n", "4", "--property", "coverage")
    assert plain == ""                           # not a terminal: nothing
