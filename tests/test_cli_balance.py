"""`prove balance`: exit codes, JSON keys, bad input as one stderr line."""

import io
import json

import pytest

from ringproof.proofs import cli


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["balance", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


def test_default_instance_is_proven_and_reported():
    code, out, err = run("--patches", "96", "--clusters", "16")
    assert code == 0 and not err
    assert "proven optimal" in out
    for name in ("optimum", "RR", "CBMF", "balanced", "weighted", "greedy"):
        assert any(line.startswith(name) for line in out.splitlines()), name


def test_json_keys_and_consistency():
    code, out, _ = run("--json", "--patches", "120", "--banks", "3", "--clusters", "6", "--skew", "0.8",
                       "--overlap", "0.2", "--seed", "4", "--time-limit", "30")
    data = json.loads(out)
    opt = data["optimum"]
    assert code == 0 and opt["proven"] is True and opt["makespan"] == opt["lower_bound"]
    assert {"makespan", "lower_bound", "proven", "seconds"} <= set(opt)
    assert set(data["schedules"]) == {"RR", "CBMF", "balanced", "weighted", "greedy"}
    for s in data["schedules"].values():
        assert s["ratio"] == pytest.approx(s["makespan"] / opt["makespan"]) and s["ratio"] >= 1


def test_time_limit_hit_exits_2_with_gap_and_never_claims_proven():
    code, out, _ = run("--json", "--time-limit", "0.001")
    opt = json.loads(out)["optimum"]
    assert code == (0 if opt["proven"] else 2)
    if code == 2:
        assert opt["makespan"] > opt["lower_bound"] and opt["gap"] > 0
    code, out, _ = run("--time-limit", "0.001")
    assert ("NOT proven" in out) == (code == 2)


def test_instance_file(tmp_path):
    f = tmp_path / "i.csv"
    f.write_text("1,0\n1,0\n1,0\n")
    code, out, _ = run(str(f), "--clusters", "2", "--json")
    data = json.loads(out)
    assert code == 0 and data["optimum"]["makespan"] == 2 and data["schedules"]["CBMF"]["makespan"] == 3


@pytest.mark.parametrize("argv, word", [
    (["--patches", "-5"], "patches"),
    (["--clusters", "-1"], "clusters"),
    (["--banks", "4", "--clusters", "3"], "near cluster"),
    (["--skew", "2"], "--skew"),
    (["--time-limit", "-1"], "--time-limit"),
    (["--per-hop", "-1"], "per_hop"),
    (["--bogus"], "unrecognized"),
])
def test_bad_input_exits_64_with_one_line(argv, word):
    code, out, err = run(*argv)
    assert code == 64 and not out
    assert err.startswith("prove: error: ") and word in err and err.count("\n") == 1


def test_bad_file_exits_64(tmp_path):
    f = tmp_path / "bad.json"
    f.write_text(json.dumps({"banks": 2, "near": [0, 3], "patches": [[0.5, 0.6]]}))
    code, _, err = run(str(f))
    assert code == 64 and err.startswith("prove: error: ")


def test_help_states_exit_codes():
    code, out, _ = run("--help")
    assert code == 0 and "exit codes" in out and "64" in out and "time limit" in out
