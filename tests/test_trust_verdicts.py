"""Verdicts that do not depend on the machine: a lemma cache of the wrong shape is rebuilt, the load
changes no verdict, a bug behind a literal size is refuted at its smallest n."""

import textwrap

import pytest

from helpers.cli import call
from ringproof.proofs.ring.lemmas import _library as whole_library


def _two_lemmas():
    """The first two lemmas of the library: enough to read a broken cache and rebuild it."""
    return whole_library()[:2]


@pytest.mark.parametrize("content", ["[1, 2, 3]", "7", '{"abc": true}', '{"' + "0" * 64 + '": "yes"}',
                                     "not json", ""])
def test_a_lemma_cache_of_the_wrong_shape_is_rebuilt(tmp_path, monkeypatch, content):
    """Every broken content is read as no cache and rebuilt; the empty file rebuilds the whole
    library, the others two of its lemmas (reading the file does not depend on which)."""
    import json

    from ringproof.proofs.ring import lemmas
    monkeypatch.setenv("RINGPROOF_CACHE", str(tmp_path))
    if content:
        monkeypatch.setattr(lemmas, "_library", _two_lemmas)
    (tmp_path / "lemmas.json").write_text(content)
    results = lemmas.prove_library(timeout_ms=60000)
    assert len(results) == (2 if content else len(whole_library()))
    assert all(r.proved and not r.cached for r in results), [r for r in results if not r.proved or r.cached]
    cache = json.loads((tmp_path / "lemmas.json").read_text())
    assert isinstance(cache, dict) and len(cache) == len(results) and set(cache.values()) == {True}
    assert all(r.cached for r in lemmas.prove_library(timeout_ms=60000))




def _spin(stop):
    while not stop.is_set():
        sum(i * i for i in range(10_000))


@pytest.mark.slow
def test_verdicts_do_not_depend_on_the_load():
    """The same verdicts for algo1-3 alone and beside two CPU-bound processes: Z3 stops on its
    resource limits (deterministic), the wall-clock timeout is only a backstop."""
    import json
    import multiprocessing as mp

    def verdicts():
        out = {}
        for target in ("algo1", "algo2", "algo3"):
            code, text, err = call(target, "--json", "--jobs", "1")
            out[target] = (code, sorted((r["property"], r["phase"], r["verdict"])
                                        for r in json.loads(text)["results"]))
        return out

    alone = verdicts()
    stop = mp.Event()
    spinners = [mp.Process(target=_spin, args=(stop,), daemon=True) for _ in range(2)]
    for p in spinners:
        p.start()
    try:
        loaded = verdicts()
    finally:
        stop.set()
        for p in spinners:
            p.join(timeout=10)
    assert loaded == alone
    assert all(code == 0 for code, _ in alone.values()), alone


LITERAL_GUARD = textwrap.dedent('''\
    from dataclasses import replace
    from ringproof import ALGO1, ge, ite
    from ringproof.schedules import algo1
    _o = ALGO1.phases[0]
    def step(P, ix):
        st = _o.step.__wrapped__(P, ix)
        C = st.operands[0].idx[1]
        C = ite(ge(P.n, {literal}), {then}, C)
        return replace(st, operands=(algo1.q[st.target.idx[0], C], algo1.k[st.target.idx[1], C]))
    SCHEDULE = replace(ALGO1, name="guarded", phases=(replace(_o, step=step),) + ALGO1.phases[1:])
    ''')


def _literal_guard(tmp_path, literal, bug):
    path = tmp_path / f"guard{literal}{'bug' if bug else ''}.py"
    path.write_text(LITERAL_GUARD.format(literal=literal, then="1" if bug else "C"))
    return call(str(path), "--property", "coverage", "--json")


def _check_literal_guard(tmp_path, literal):
    import json

    code, out, err = _literal_guard(tmp_path, literal, bug=True)
    assert code == 1, err
    (phase1,) = [r for r in json.loads(out)["results"] if r["phase"] == "phase1"]
    cex = phase1["counterexample"]
    assert phase1["verdict"] == "refuted" and phase1["tier"] == "parametric"
    assert (cex["n"], cex["m"]) == (literal, 1) and not cex["replay"]["witness_only"]
    code, out, err = _literal_guard(tmp_path, literal, bug=False)
    assert code == 0, out + err


def test_a_bug_behind_a_literal_size_is_refuted_at_its_smallest_n(tmp_path):
    _check_literal_guard(tmp_path, 12)


@pytest.mark.slow
def test_a_bug_behind_n_at_least_40_is_refuted_at_n_40(tmp_path):
    _check_literal_guard(tmp_path, 40)
