"""Balance and memory as properties of the table: asked for by name, each a row with a verdict, a
tier, a reason and a counterexample; a false claim refuted (exit 1), a figure not derived or not
standing unknown, a derived figure compared with enumeration proved. The counts row keeps its
`balance` and `memory` details as they were. The library calls share one session (`session`):
a copy with other claims reuses its target's counts, as `prove report` does."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from helpers.cli import call
from ringproof.proofs.cli.targets import registry
from ringproof.proofs.options import Options
from ringproof.proofs.results import Verdict
from ringproof.proofs.ring.prover import verify
from ringproof.proofs.ring.session import Session


@pytest.fixture(scope="module")
def session():
    return Session(Options().budget)


def _claiming(name: str, **claims):
    S = registry()[name]
    return replace(S, notes={**S.notes, "claims": {**S.notes.get("claims", {}), **claims}})


def _rows(results) -> dict:
    return {r.property: r for r in results}


def test_figure_rows_are_asked_by_name_and_the_counts_details_stay(session):
    rows = _rows(verify(registry()["algo1"], Options(properties=("counts", "balance", "memory"), jobs=1), session))
    assert set(rows) == {"counts", "balance", "memory"}
    balance, memory, counts = rows["balance"], rows["memory"], rows["counts"]
    assert balance.verdict is Verdict.PROVED and balance.tier == "parametric" and balance.phase == "all"
    assert balance.details["spread"] == "0" == counts.details["balance"]["spread"]
    # memory rests on ring-locality and data-flow: the run proves them itself where not asked
    assert memory.verdict is Verdict.PROVED and memory.details["closed_form"] == "n*(3*n + 1)/m", memory.reason
    assert {r.property for r in verify(registry()["algo1"], Options(jobs=1), session)} >= {"counts"}
    assert "balance" not in {r.property for r in verify(registry()["algo1"], Options(jobs=1), session)}


def test_a_false_balance_claim_refutes_the_balance_row_with_a_replayed_counterexample(session):
    S = _claiming("algo1", balance="1")
    rows = _rows(verify(S, Options(properties=("counts", "balance"), jobs=1), session))
    assert rows["balance"].verdict is Verdict.REFUTED and rows["counts"].verdict is Verdict.REFUTED
    cex = rows["balance"].counterexample
    assert cex is not None and cex.replay["confirmed"] and cex.replay["count"] == "balance"
    assert rows["balance"].details["claim"] == "1"


def test_a_false_memory_claim_refutes_the_memory_row(session):
    S = _claiming("algo1", memory="n*(3*n + 2)/m")
    (row,) = verify(S, Options(properties=("memory",), jobs=1), session)
    assert row.verdict is Verdict.REFUTED and row.counterexample.replay["count"] == "memory"
    assert "measured peak" in row.reason


def test_a_figure_not_derived_is_unknown_with_why(session):
    (row,) = verify(registry()["algo3"], Options(properties=("memory",), jobs=1), session)
    assert row.verdict is Verdict.UNKNOWN and row.details["closed_form"] is None
    assert "exact peak" in row.reason


def test_a_figure_whose_sources_are_proved_only_for_small_n_is_unknown(session):
    opts = Options(properties=("memory",), tier="bounded", max_n=4, jobs=1)
    (row,) = verify(registry()["algo1"], opts, session)
    assert row.verdict is Verdict.UNKNOWN and row.tier == "bounded"
    assert "derived for every n, not proved" in row.reason and "proved only for n ≤ 4" in row.reason
    assert row.details["derived"] == "n*(3*n + 1)/m" and row.details["closed_form"] is None


def test_prove_property_balance_exits_by_its_verdict(tmp_path):
    code, out, _ = call("algo1", "--property", "balance", "--json", "--jobs", "1")
    doc = json.loads(out)
    assert code == 0 and [r["property"] for r in doc["results"]] == ["balance"]
    assert doc["results"][0]["verdict"] == "proved"
    code, out, _ = call("algo1", "--property", "balance", "--jobs", "1", "--quiet")
    assert code == 0 and "balance   all" in out and "spread (max − min active ops over PEs) = 0" in out


def test_prove_a_schedule_file_with_a_false_balance_claim_exits_1(tmp_path):
    path = tmp_path / "claims.py"
    path.write_text("from dataclasses import replace\n"
                    "from ringproof.schedules.algo1 import ALGO1\n"
                    "SCHEDULE = replace(ALGO1, notes={**ALGO1.notes, 'claims': {**ALGO1.notes['claims'], "
                    "'balance': '1'}})\n")
    code, out, _ = call(str(path), "--property", "balance", "--jobs", "1", "--quiet")
    assert code == 1 and "refuted balance/all at n=1, m=1" in out and "claim balance = 1" in out
    code, out, _ = call(str(path), "--property", "balance", "--json", "--jobs", "1")
    (row,) = json.loads(out)["results"]
    assert code == 1 and row["verdict"] == "refuted" and row["counterexample"]["replay"]["measured"] == 0
