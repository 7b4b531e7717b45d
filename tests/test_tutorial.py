"""docs/tutorial.md's commands give the verdicts it quotes."""

import io
import json
from pathlib import Path

from ringproof.proofs.cli.main import main

EXAMPLES = Path(__file__).parent.parent / "examples"


def prove(*argv):
    out, err = io.StringIO(), io.StringIO()
    return main([str(a) for a in argv], out, err), out.getvalue()


def test_matvec_is_proved_and_runs():
    code, out = prove(EXAMPLES / "matvec.py", "--json")
    assert code == 0, out
    results = json.loads(out)["results"]
    assert {r["property"] for r in results} == {"well-formed", "coverage", "no-conflict", "ring-locality", "counts"}
    counts = next(r for r in results if r["property"] == "counts")["details"]
    assert (counts["cycles"], counts["ops"]["MAC"]) == ("d*n/m", "d*n")
    assert prove("simulate", EXAMPLES / "matvec.py", "-n", 8, "-d", 4, "-m", 2)[0] == 0


def test_broken_matvec_is_refuted_with_the_documented_counterexample():
    code, out = prove(EXAMPLES / "matvec_broken.py", "--property", "ring-locality")
    assert code == 1
    assert ("matvec.py:26: refuted ring-locality/rows at n=2, d=2, m=2: prev witness: the partial sum is "
            "here: fails at n=2, d=2, m=2") in out
    assert "a: rows at i=1, j=2, l=1" in out and "prev: rows at i=1, j=1, l=2" in out
    assert "--tier bounded --property ring-locality -n 2 -d 2 -m 2" in out and "run: prove simulate" in out
    replay = out.split("replay: prove ")[1].split("\n")[0].split()
    assert prove(*replay)[0] == 1      # the replay re-runs the same failing check at that size
    assert prove("simulate", EXAMPLES / "matvec_broken.py", "-n", 2, "-d", 2, "-m", 2)[0] == 1


def test_matmul_from_algorithm_1s_phase_is_proved():
    code, out = prove(EXAMPLES / "matmul.py")
    assert code == 0, out
    assert "cycles = d·n²/m; ops = MAC: d·n²; utilization = 1" in out
