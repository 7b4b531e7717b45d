"""`prove unroll` through main(argv, stdout, stderr), no subprocess."""

import io
import json

import pytest

import ringproof.proofs.unrolling.facts as unrolling_facts
from ringproof.proofs.cli import main
from ringproof.proofs.unrolling.facts import FactResult, Verdict


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(["unroll", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


def test_json_has_the_contract_keys():
    code, out, err = run("--pes", "64", "--json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert {"best_1su", "best_2su", "gain_2su", "layers"} <= set(doc)
    assert doc["gain_2su"] == pytest.approx(doc["best_1su"]["latency_cycles"] / doc["best_2su"]["latency_cycles"])
    assert doc["gain_2su"] >= 1
    assert len(doc["best_2su"]["sus"]) == 2
    cycles = sum(layer["2su"]["cycles"] for layer in doc["layers"])
    assert cycles == pytest.approx(doc["best_2su"]["latency_cycles"])
    for layer in doc["layers"]:
        assert 0 < layer["1su"]["utilization"] <= 1


def test_table_reports_both_arrays_and_the_gain_grows():
    code, out, _ = run("--bw", "1024")
    assert code == 0
    assert "PE array of 256" in out and "PE array of 8192" in out and "s3.mvit.tf.qk" in out
    line = out.strip().splitlines()[-1]
    gains = dict(part.split(": ") for part in line.split("array: ")[1].split(", "))
    assert float(gains["8192"]) > float(gains["256"]) >= 1


def test_prune_flag_searches_the_pruned_space():
    _, full, _ = run("--pes", "256", "--json")
    _, pruned, _ = run("--pes", "256", "--json", "--prune")
    assert json.loads(pruned)["candidates"] < json.loads(full)["candidates"]
    assert json.loads(pruned)["pruned"] is True


@pytest.mark.parametrize("argv", [["--pes", "0"], ["--pes", "x"], ["--pes", "1"], ["--bw", "-3"],
                                  ["--pes", "2.5"], ["--frob"]])
def test_bad_input_exits_64_with_one_line(argv):
    code, out, err = run(*argv)
    assert code == 64 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_help_states_exit_codes():
    code, out, _ = run("--help")
    assert code == 0 and "64 bad input" in out and "1 a formula fact refuted" in out


def fake(verdict):
    return lambda facts, timeout: [FactResult(f.name, f.statement, verdict, 0.0) for f in facts]


@pytest.mark.parametrize("verdict,code", [(Verdict.PROVED, 0), (Verdict.REFUTED, 1), (Verdict.UNKNOWN, 2)])
def test_facts_exit_code_follows_the_verdicts(monkeypatch, verdict, code):
    monkeypatch.setattr(unrolling_facts, "prove_all", fake(verdict))   # the CLI imports it when run
    assert run("--facts")[0] == code
    assert json.loads(run("--facts", "--json")[1])["facts"][0]["verdict"] == verdict.value


@pytest.mark.slow
def test_facts_for_real():
    code, out, _ = run("--facts")
    assert code == 0 and "refuted" in out  # the misreadings, not the facts
