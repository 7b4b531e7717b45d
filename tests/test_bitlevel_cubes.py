"""Cube-and-conquer: the cubes cover every run (and a split that misses some is caught), split and
unsplit searches agree with 1 and 2 workers, a dead worker's cube is re-run, a search resumes."""

import json
import os

import pytest

from ringproof.errors import BadInput
from ringproof.model.bitlevel import check_run
from ringproof.model.bitlevel.problem import BitProblem
from ringproof.proofs.search.cubes import IncompleteSplit, check_coverage, cubes, split_cover
from ringproof.proofs.search.engine import DaskEngine
from ringproof.proofs.search.minimum import _splits, search

pytestmark = pytest.mark.dask     # Dask's threads outlive it: run last (tests/conftest.py)


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_cubes_cover_every_placement_of_the_decisive_ops(depth):
    prob = BitProblem("masked", 3, 3)
    todo = cubes(prob, 17, depth)
    assert len(todo) == 3 ** depth and len({c.name for c in todo}) == len(todo)
    check_coverage(prob, todo)


@pytest.mark.parametrize("drop", [0, 4, 8])
def test_coverage_check_catches_a_missing_cube(drop):
    prob = BitProblem("masked", 3, 3)
    todo = cubes(prob, 17, 2)
    with pytest.raises(IncompleteSplit, match="miss the runs"):
        check_coverage(prob, todo[:drop] + todo[drop + 1:])


def test_split_cover_catches_a_missing_phase_split():
    mins = BitProblem("masked", 4, 4).phase_minimum()
    T = sum(mins) + 2
    splits = _splits(mins, T)
    split_cover(mins, T, splits)
    with pytest.raises(IncompleteSplit, match="miss"):
        split_cover(mins, T, splits[1:])


def test_split_search_matches_unsplit_in_process():
    """With lemmas off the solver refutes T=16 cube by cube, then finds 17 in one cube."""
    whole = search("masked", 3, 3, lemmas=False, timeout=120)
    split = search("masked", 3, 3, lemmas=False, depth=1, timeout=120)
    assert whole.proven and split.proven
    assert (split.min_cycles, split.unsat_below) == (whole.min_cycles, whole.unsat_below) == (17, 16)
    assert split.cubes_done >= 4 and split.unsat_by == "SAT solver" and check_run(split.schedule) == []


def test_one_process_per_cube_gives_the_same_answer(monkeypatch):
    """width=1 (a cube's share of the cores when workers fill them): one solver, one placement at a
    time; the verdicts are those of the default width."""
    from ringproof.proofs.search import portfolio

    spawned = []
    real = portfolio._spawn
    monkeypatch.setattr(portfolio, "_spawn", lambda target, jobs: spawned.append(len(jobs)) or real(target, jobs))
    narrow = search("masked", 3, 3, lemmas=False, depth=1, timeout=120, width=1)
    assert spawned and max(spawned) == 1
    wide = search("masked", 3, 3, lemmas=False, timeout=120)
    assert (narrow.min_cycles, narrow.unsat_below) == (wide.min_cycles, wide.unsat_below) == (17, 16)
    assert max(spawned) == 2 and portfolio._names("portfolio", 1) == portfolio.PORTFOLIO[:1]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_split_search_matches_unsplit_masked_4(workers):
    whole = search("masked", 4, 4, timeout=600)
    split = search("masked", 4, 4, depth=1, workers=workers, timeout=600)
    assert (split.min_cycles, split.unsat_below) == (whole.min_cycles, whole.unsat_below) == (26, 25)


@pytest.fixture(scope="module")
def cluster():
    """One local Dask cluster of 2 workers for the module, reached by its address like --cluster."""
    eng = DaskEngine(workers=2)
    yield eng
    eng.close()


def test_split_search_on_two_workers_and_resume(tmp_path, cluster):
    """masked n=3 split into cubes on 2 Dask workers (by the cluster's address) gives the unsplit
    minimum; its state file then answers a second search without a solver call, and a half-kept
    state resumes."""
    state = tmp_path / "state.json"
    whole = search("masked", 3, 3, lemmas=False, timeout=120)
    two = search("masked", 3, 3, lemmas=False, depth=1, timeout=120, state=str(state),
                 cluster=cluster.client.scheduler.address)
    assert two.proven and (two.min_cycles, two.unsat_below) == (whole.min_cycles, whole.unsat_below)
    again = search("masked", 3, 3, lemmas=False, depth=1, timeout=120, state=str(state))
    assert (again.min_cycles, again.unsat_below) == (two.min_cycles, two.unsat_below) and again.attempts == ()
    doc = json.loads(state.read_text())
    doc["cubes"] = {k: v for k, v in doc["cubes"].items() if k.startswith("T=16")}  # stopped after T=16
    state.write_text(json.dumps(doc))
    resumed = search("masked", 3, 3, lemmas=False, depth=1, timeout=120, state=str(state))
    assert (resumed.min_cycles, resumed.unsat_below) == (whole.min_cycles, whole.unsat_below)
    assert resumed.attempts and all(a.T == 17 for a in resumed.attempts)  # T=16's cubes were not re-run


def test_dead_worker_task_is_rerun(tmp_path, cluster):
    marker = str(tmp_path / "died")

    def dies_once(x):
        if not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)  # the worker process dies in the middle of its task
        return x * x

    assert sorted(r for _, r in cluster.imap(dies_once, [(k,) for k in range(4)])) == [0, 1, 4, 9]
    assert os.path.exists(marker)


def test_state_of_another_query_is_bad_input(tmp_path):
    state = tmp_path / "state.json"
    search("plain", 2, 2, state=str(state))
    with pytest.raises(BadInput, match="another search"):
        search("masked", 2, 2, state=str(state))
    state.write_text("not json")
    with pytest.raises(BadInput, match="not a search state"):
        search("plain", 2, 2, state=str(state))


def test_a_run_has_one_json_form_read_back_by_the_state():
    """`prove search --json`'s schedule and a state file's witness are the same serialisation, and it
    reads back to the run (a witness replays after a resume)."""
    from ringproof.proofs.search.state import run_from_json, run_to_json

    run = search("masked", 2, 2, lemmas=False, timeout=60).schedule
    doc = run_to_json(run)
    assert doc == {"T": run.T, **run.to_json()}
    query = {"variant": run.variant, "n": run.n, "m": run.m, "d": run.d, "barriers": run.barriers}
    assert run_from_json(json.loads(json.dumps(doc)), query, run.placement) == run
