import z3

from ringproof.proofs.ring import lemmas
def test_library_proves_cold_and_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("RINGPROOF_CACHE", str(tmp_path))
    cold = lemmas.prove_library()
    assert cold and all(r.proved and not r.cached for r in cold)
    warm = lemmas.prove_library()
    assert all(r.proved and r.cached for r in warm)


def test_a_false_lemma_is_not_proved(tmp_path, monkeypatch):
    monkeypatch.setenv("RINGPROOF_CACHE", str(tmp_path))
    x, m = z3.Ints("x m")
    bad = lemmas.Lemma("false", z3.ForAll([x, m], z3.Implies(m > 0, x % m == x)), "wrong")
    monkeypatch.setattr(lemmas, "_library", lambda: [bad])
    (r,) = lemmas.prove_library()
    assert not r.proved and "sat" in r.reason
