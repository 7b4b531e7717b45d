"""The context-parallel targets (ring-attention, ring-attention-causal, striped, zigzag: the forward
in one ring pass with online softmax; and their backward rings) as DSL schedules: proved at tier
parametric, in agreement with enumeration, their pairs those of the layout formulas, their mutants
(the scores' pass: a wrong pairing, a mask off by one, no hop; the forward: a missing rescale)
refuted and replayed."""

import pytest
import sympy

from helpers.twins import assert_same_check_replays

from ringproof.proofs.cli.targets import registry
from ringproof.proofs.cp.conform import ring_pairs
from ringproof.proofs.options import Options
from ringproof.proofs.ring.prover import verify as _verify
from ringproof.proofs.ring.session import Session
from ringproof.proofs.results import DEFAULT_PROPERTIES, Verdict
from ringproof.proofs.figures.memory import held
from ringproof.schedules import context_parallel as cpm
from ringproof.schedules.expr import ite, le, lt, mod

NAMES = list(cpm.SCHEDULES)


def verify(schedule, opts=Options()):
    """The prover with a session of this test's own: nothing it finds is cached for later tests
    (a report test counts the side conditions its own proofs discharge)."""
    return _verify(schedule, opts, Session(opts.budget))


TARGETS = NAMES + [f"{name}-bwd" for name in NAMES]


@pytest.fixture(scope="module")
def sessions():
    """target -> the session of its whole proof, for this module's tests that read the same
    derivation (the counts of `test_the_move_counts_...`, the memory table's exact peaks) or the
    counter's answers for its shape (the balance claims) rather than derive them again."""
    return {}


@pytest.fixture(scope="module")
def whole(sessions):
    """target -> the results of its whole proof (every property, default options), proved once in
    this module (in its session of `sessions`) for the tests that read them."""
    done = {}

    def results(name):
        if name not in done:
            done[name] = _verify(registry()[name], Options(), sessions.setdefault(name, Session()))
        return done[name]
    return results


@pytest.mark.parametrize("name", TARGETS)
def test_each_target_proves_at_tier_parametric(name, whole):
    """Every property proved; the proved cycles and ops, and the exact memory peak where the target
    marks its stays (ring-attention), are the ring model's at sizes beyond those `counts` and `held`
    check by enumeration."""
    from ringproof.model.ring.machine import run
    from ringproof.model.ring.memory import peak_per_pe
    from ringproof.model.ring.trace import build_trace

    schedule = registry()[name]
    results = whole(name)
    assert {r.tier for r in results} == {"parametric"}
    for r in results:
        assert r.verdict is Verdict.PROVED, (r.property, r.phase, r.reason)
    (c,) = [r.details for r in results if r.property == "counts"]
    unit = cpm.SCHEDULES[name.removesuffix("-bwd")].unit
    for m, d in ((4, 4), (3, 6)):
        n = 4 * unit(m)
        ring = run(schedule, n, m, d=d)
        at = {"n": n, "m": m, "d": d}
        assert sympy.sympify(c["cycles"]).subs(at) == ring.cycles, (n, m, d)
        for kind, form in c["ops"].items():
            assert sympy.sympify(form).subs(at) == ring.ops.get(kind, 0), (kind, n, m, d)
        if c["memory"]["closed_form"] is not None:
            peak = max(peak_per_pe(build_trace(schedule, n, m, d)))
            assert sympy.sympify(c["memory"]["closed_form"]).subs(at) == peak, (n, m, d)
    assert (c["memory"]["closed_form"] is not None) == (name in ("ring-attention", "ring-attention-bwd")), \
        c["memory"]["reason"]


def test_the_memory_table_of_context_parallel_md_is_what_prove_prints(sessions):
    """Each exact peak read in the session of its target's whole proof where this module ran it."""
    import re
    from pathlib import Path
    text = (Path(__file__).parent.parent / "docs" / "context-parallel.md").read_text()
    rows = re.findall(r"^\| `([a-z-]+)` \| ([^|]+) \| ([^|]+) \| (\d+(?: / \d+)+) \|$", text, re.M)
    assert len(rows) == 8
    reg = registry()
    for name, inputs, exact, peaks in rows:
        got = held.summary(reg[name], sessions.setdefault(name, Session()))
        assert got["at"]["per_pe"] == [int(x) for x in peaks.split("/")], name
        if exact.startswith("on request"):      # its form: test_prove_exact_peak_derives_... (slow)
            assert got["reason"] == held.ON_REQUEST, name
            continue
        assert exact.startswith("—") == (got["closed_form"] is None), name     # no proved peak claimed
        if got["closed_form"] is not None:     # "form where n/m ≥ a and m ≥ b (c cases in all)"
            form, least_k, least_m, cases = re.fullmatch(r"(.+) where n/m ≥ (\d+) and m ≥ (\d+) \((\d+) cases in all\)",
                                                         exact).groups()
            derived = sympy.sympify(got["closed_form"])
            assert len(derived.args) == int(cases), name
            doc = sympy.sympify(re.sub(r"(\d)([a-z(])", r"\1*\2", form.replace("·", "*").replace("−", "-")))
            for k, m, d in ((int(least_k), int(least_m), 2), (int(least_k) + 1, int(least_m) + 2, 12)):
                at = {"n": k * m, "m": m, "d": d}
                assert derived.subs(at) == doc.subs(at), (name, at)
        if got["inputs_on_pe"] is None:
            assert inputs.startswith("not derived"), name
        else:
            doc = sympy.sympify(re.sub(r"(\d)([a-z])", r"\1*\2", inputs.split(" (")[0].replace("·", "*")))
            assert sympy.simplify(doc - sympy.sympify(got["inputs_on_pe"])) == 0, name


# the counts are left out: the bounded tier would derive the same closed forms again (most of its
# time) and compare them by enumeration as the parametric `counts` does; `test_each_target_proves_...`
# compares them with the ring model
BOUNDED = tuple(p for p in DEFAULT_PROPERTIES if p != "counts")


@pytest.mark.parametrize("name", TARGETS)
def test_the_bounded_tier_agrees(name):
    results = verify(registry()[name], Options(properties=BOUNDED, tier="bounded",
                                               max_n=8 if name in NAMES else 6))
    assert {r.verdict for r in results} == {Verdict.PROVED}, [(r.property, r.reason) for r in results]


@pytest.mark.parametrize("name", NAMES)
def test_the_schedule_computes_the_pairs_of_the_layout_formulas(name):
    """Rank r at ring step s: its queries with rank (r − s) mod m's keys, where the mask allows —
    written independently with plain lists of tokens."""
    cp = cpm.SCHEDULES[name]
    for m in range(1, 5):
        for n in range(cp.unit(m), 4 * cp.unit(m) + 1, cp.unit(m)):
            P = cp.params(n, m)
            tokens = cp.positions(P).tolist()
            k = n // m
            want = {(r, s, qt, kt) for r in range(m) for s in range(m)
                    for qt in tokens[r * k:(r + 1) * k] for kt in tokens[((r - s) % m) * k:((r - s) % m + 1) * k]
                    if kt <= qt or not cp.causal}
            assert ring_pairs(registry()[name], n, m) == want, (name, n, m)
            assert len(want) == (n * (n + 1) // 2 if cp.causal else n * n)     # every pair once


def test_the_fused_backward_computes_the_pairs_of_the_ring_pass_at_their_step_and_rank():
    """Each form of the backward's ring step (dq, dk, dv) takes exactly the (rank, step, query, key)
    pairs of the scores' ring pass, the pairs `prove conform` holds a library's backward calls to."""
    import types

    import numpy as np

    for name in NAMES:
        cp = cpm.SCHEDULES[name]
        for m in (1, 2, 3, 4):
            for n in (cp.unit(m), 2 * cp.unit(m), 3 * cp.unit(m)):
                P = cp.params(n, m)
                want = ring_pairs(registry()[name], n, m)
                s, l, i, b = (x.ravel() for x in np.meshgrid(*(np.arange(1, x + 1) for x in (m, m, P.k, P.k)),
                                                             indexing="ij"))
                for u, form in enumerate(registry()[f"{name}-bwd"].phases, 1):
                    st = form.step(P, types.SimpleNamespace(s=s, i=i, b=b, u=u, c=1, l=l))
                    A, B = st.operands[0].idx                       # ds[A, B] or p[A, B]
                    pe, guard, A, B = (np.broadcast_to(np.asarray(x), s.shape) for x in (st.pe, st.guard, A, B))
                    keep = guard.astype(bool)
                    got = set(zip((pe[keep] - 1).tolist(), (s[keep] - 1).tolist(), (A[keep] - 1).tolist(),
                                  (B[keep] - 1).tolist()))
                    assert got == want, (name, form.name, n, m)


def test_the_fused_backward_is_drawn_one_cell_per_pe_and_cycle(tmp_path):
    """The report's picture of a fused ring step: every PE in every cycle shown, nothing failing."""
    import io
    import re

    from ringproof.proofs.cli.main import main as prove

    out = tmp_path / "bwd.svg"
    code = prove(["simulate", "zigzag-bwd", "-n", "4", "-m", "2", "--picture", str(out)], io.StringIO(), io.StringIO())
    assert code == 0
    text = out.read_text()
    assert "failing" not in text and text.count('class="cell"') == 2 * int(re.search(r'data-cycles="(\d+)"', text)[1])


def test_zigzag_balances_the_causal_pairs_and_contiguous_does_not():
    """Causal pairs per rank at n = 16, m = 4: 10/26/42/58 contiguous, 34 each zigzag and striped."""
    def per_rank(name):
        pairs = ring_pairs(registry()[name], 16, 4)
        return [sum(1 for p in pairs if p[0] == r) for r in range(4)]
    assert per_rank("ring-attention-causal") == [10, 26, 42, 58]
    assert per_rank("zigzag") == [34] * 4
    assert per_rank("striped") == [28, 32, 36, 40]


def _mutants():
    zig = cpm.RING_PASSES["zigzag"]
    causal = cpm.RING_PASSES["ring-attention-causal"]

    def pairing(P, ix, st):      # tail chunk 2m − 2 − r: two ranks share a chunk
        def tok(r, j):
            return ite(lt(j, P.h), r * P.h + j, (2 * P.m - 2 - r) * P.h + j - P.h) + 1
        A, B = tok(ix.l - 1, ix.i - 1), tok(mod(ix.l - ix.s, P.m), ix.b - 1)
        return st.target.array[A, B]

    def operands(P, ix, st):
        A, B = pairing(P, ix, st).idx
        return (st.operands[0].array[A, ix.c], st.operands[1].array[B, ix.c])

    def strict(P, ix, st):       # the mask off by one: B < A
        return lt(st.operands[1].idx[0], st.target.idx[0])

    return {"zigzag wrong pairing": zig.derive("zigzag-pairing", {"ring": dict(target=pairing, operands=operands)}),
            "zigzag mask off by one": zig.derive("zigzag-mask", {"ring": dict(guard=strict)}),
            "causal no hop": causal.derive("causal-no-hop", {"ring": dict(send=None)}),
            "causal mask off by one": causal.derive("causal-mask", {"ring": dict(guard=lambda P, ix, st: le(
                st.operands[1].idx[0], st.target.idx[0] - 1))})}


@pytest.mark.parametrize("name", ["zigzag wrong pairing", "zigzag mask off by one", "causal no hop",
                                  "causal mask off by one"])
def test_mutants_are_refuted_replayed_and_found_at_their_smallest_size(name):
    schedule = _mutants()[name]
    props = ("coverage", "ring-locality")             # what a pairing, a mask or a hop decides
    refuted = [r for r in verify(schedule, Options(properties=props)) if r.verdict is Verdict.REFUTED]
    assert refuted and all(r.tier == "parametric" for r in refuted)
    for r in refuted:
        assert schedule.admits(r.counterexample.n, r.counterexample.m)
        assert_same_check_replays(schedule, r)
    bounded = [r for r in verify(schedule, Options(properties=props, tier="bounded", max_n=4))
               if r.verdict is Verdict.REFUTED]
    smallest = min((r.counterexample.n, r.counterexample.m) for r in bounded)
    # the smallest size the side condition allows: the wrong pairing gives one rank its head chunk
    # twice and the mask off by one drops the diagonal, at once; without the hop, the ring-locality
    # witness of a key read at slot i > 1 fails already at one rank (from two ranks on the keys of
    # another rank never arrive)
    assert smallest == {"zigzag wrong pairing": (2, 1), "zigzag mask off by one": (2, 1),
                        "causal no hop": (2, 1), "causal mask off by one": (1, 1)}[name]


def test_a_condition_is_shown_necessary_only_at_sizes_the_other_conditions_allow():
    """m | d broken alone keeps zigzag's 2m | n: no counterexample at a size zigzag refuses."""
    from ringproof.proofs.ring.conditions import conditions

    for c in conditions(registry()["zigzag"]):
        cex = c["counterexample"]
        if c["condition"] == "m | d" and cex is not None:
            assert registry()["zigzag"].admits(cex.n, cex.m, cex.d)


@pytest.mark.parametrize("name", NAMES)
def test_the_pairs_per_rank_closed_forms_agree_with_enumeration(name):
    cp = cpm.SCHEDULES[name]
    for m in range(1, 7):
        for n in range(cp.unit(m), 32 + 1, cp.unit(m)):
            P = cp.params(n, m)
            pairs = ring_pairs(registry()[name], n, m)
            counted = [sum(1 for p in pairs if p[0] == r) for r in range(m)]
            assert counted == [cp.pairs(P, r) for r in range(m)], (name, n, m)


def test_a_claim_of_balance_0_is_refuted_for_contiguous_causal_and_not_for_zigzag(sessions):
    """The imbalanced example: rank r computes k²·r + k(k+1)/2 pairs; zigzag's spread is 0, derived
    for every n (`spread`: its guarded nest counted on PE l). In the sessions of the targets' whole
    proofs where this module ran them: the counter's answers for their shapes are reused."""
    from dataclasses import replace

    claims = {"balance": "0"}
    causal = replace(registry()["ring-attention-causal"], notes={"claims": claims})
    (result,) = _verify(causal, Options(properties=("counts",)), sessions.setdefault("ring-attention-causal", Session()))
    assert result.verdict is Verdict.REFUTED
    cex = result.counterexample
    assert (cex.n, cex.m) == (2, 2)            # the smallest size with two ranks: 1 pair against 2
    zigzag = replace(registry()["zigzag"], notes={"claims": claims})
    (result,) = _verify(zigzag, Options(properties=("counts",)), sessions.setdefault("zigzag", Session()))
    assert result.verdict is Verdict.PROVED


def test_the_backward_ring_proves_placement_and_the_unmasked_one_balance(whole):
    """Read off its whole proof (`whole`: proved once in this module, every property)."""
    bwd = registry()["ring-attention-bwd"]
    assert [p.name for p in bwd.phases] == ["ring.MAC1", "ring.MAC2", "ring.MAC3"]   # one ring pass: dq, dk, dv
    assert len(set(bwd.slots)) == 1                                                  # in lock step
    results = whole("ring-attention-bwd")
    assert {r.phase for r in results if r.property == "placement"} == {"dq", "dk", "dv"}
    assert {r.verdict for r in results if r.property == "placement"} == {Verdict.PROVED}
    (counts,) = [r for r in results if r.property == "counts"]
    assert counts.details["balance"]["spread"] == "0"


def _mutate(schedule, name, forms, **changes):
    """`schedule` with the forms `forms` of its fused ring step changed (each change a function
    (P, ix, step) -> the Step field's new value, `step` the form's own: its guard and send already
    restricted to the iterations that choose it)."""
    return schedule.derive(name, {form: changes for form in forms})


def _fused_mutants():
    from ringproof.schedules.dsl import Move
    from ringproof.schedules.expr import and_

    def pairing(P, ix, st):      # zigzag's tail chunk 2m − 2 − r: two ranks share a chunk
        def tok(r, j):
            return ite(lt(j, P.h), r * P.h + j, (2 * P.m - 2 - r) * P.h + j - P.h) + 1
        A, B = tok(ix.l - 1, ix.i - 1), tok(mod(ix.l - ix.s, P.m), ix.b - 1)
        at = {"dq": (A, ix.c), "q": (A, ix.c), "g": (A, ix.c), "o": (A, ix.c), "dk": (B, ix.c), "dv": (B, ix.c),
              "k": (B, ix.c), "v": (B, ix.c), "ds": (A, B), "p": (A, B), "w1": (A, B), "mx": (A,), "l": (A,)}
        return lambda ref: ref.array[at[ref.array.name]]

    def strict(cp):              # the mask off by one: key B < query A
        return lambda P, ix, st: and_(st.guard, lt(cpm._key(cp, P, ix), cpm._row(cp, P, ix.l, ix.i)))

    wrong = dict(target=lambda P, ix, st: pairing(P, ix, st)(st.target),
                 operands=lambda P, ix, st: tuple(map(pairing(P, ix, st), st.operands)))
    zig, causal = cpm.SCHEDULES["zigzag"], cpm.SCHEDULES["ring-attention-causal"]
    backward, forward = list(cpm.BACKWARD_FORMS.values()), list(cpm.FORMS.values())
    return {
        "no return hop": _mutate(registry()["ring-attention-bwd"], "no-return-hop", backward[1:],
                                 send=lambda P, ix, st: Move(st.target, when=and_(st.send.when, lt(ix.s, P.m)))),
        "zigzag-bwd wrong pairing": _mutate(registry()["zigzag-bwd"], "zigzag-bwd-pairing", backward, **wrong),
        "zigzag-bwd mask off by one": _mutate(registry()["zigzag-bwd"], "zigzag-bwd-mask", backward, guard=strict(zig)),
        "causal-bwd mask off by one": _mutate(registry()["ring-attention-causal-bwd"], "causal-bwd-mask", backward,
                                              guard=strict(causal)),
        "zigzag wrong pairing": _mutate(registry()["zigzag"], "zigzag-fused-pairing", forward, **wrong),
        "causal mask off by one": _mutate(registry()["ring-attention-causal"], "causal-fused-mask", forward,
                                          guard=strict(causal)),
    }


@pytest.mark.parametrize("name, prop, smallest", [("no return hop", "placement", (2, 2)),
                                                  ("zigzag-bwd wrong pairing", "coverage", (2, 1)),
                                                  ("zigzag-bwd mask off by one", "coverage", (2, 1)),
                                                  ("causal-bwd mask off by one", "coverage", (1, 1)),
                                                  ("zigzag wrong pairing", "coverage", (2, 1)),
                                                  ("causal mask off by one", "coverage", (1, 1))])
def test_fused_mutants_are_refuted_replayed_and_found_at_their_smallest_size(name, prop, smallest):
    """The fused ring steps' mutants (backward, and the forward's ring step as a whole): without the
    return hop dk and dv end one rank short of home (placement; at one rank they are home, so two
    ranks are the least); a wrong chunk pairing or the mask off by one miss or repeat a term at once
    (coverage). Each refutation is replayed by the concrete twin of its check on the ring model's
    trace, and the bounded tier's smallest counterexample is the least size the flaw can show at."""
    schedule = _fused_mutants()[name]
    refuted = [r for r in verify(schedule, Options(properties=(prop,))) if r.verdict is Verdict.REFUTED]
    assert refuted and all(r.tier == "parametric" for r in refuted)
    for r in refuted:
        assert schedule.admits(r.counterexample.n, r.counterexample.m)
        assert_same_check_replays(schedule, r)
    bounded = [r for r in verify(schedule, Options(properties=(prop,), tier="bounded", max_n=4))
               if r.verdict is Verdict.REFUTED]
    assert min((r.counterexample.n, r.counterexample.m) for r in bounded) == smallest


def _not_rescaled(problem):
    """The forward's problem with its sums plain: their reference must be read final."""
    from dataclasses import replace
    return replace(problem, equations=tuple(replace(e, rescaled=False) for e in problem.equations))


@pytest.mark.parametrize("name", ["ring-attention", "zigzag"])
def test_the_forward_without_the_rescale_is_refuted_at_its_smallest_size(name):
    """One ring step folds its block's max before its sums read it: sums not rescaled read a max
    that a later block may still raise. Refuted (data-flow, both sums) at the smallest size with
    two blocks; the ring model, run there, finds the read of a max that is not final, and its y
    (the sums reading the max of their cycle, not rescaled) is not softmax attention."""
    from ringproof.model.ring.machine import run

    cp = cpm.SCHEDULES[name]
    schedule = cpm.ring_forward(cp, _not_rescaled(cpm.FORWARD if not cp.causal else cpm.CAUSAL_FORWARD))
    # data-flow only: `rescaled` changes what a read may see, not which terms are done where
    refuted = [r for r in verify(schedule, Options(properties=("data-flow",))) if r.verdict is Verdict.REFUTED]
    assert {(r.property, r.phase) for r in refuted} == {("data-flow", "ring.EAC1"), ("data-flow", "ring.EAC2")}
    for r in refuted:
        assert (r.counterexample.n, r.counterexample.m) == (cp.unit(2), 2)
        assert_same_check_replays(schedule, r)
    ring = run(schedule, cp.unit(2), 2, d=2)
    assert not ring.ok and "mx[" in ring.violations[0].message and "with its final value" in ring.violations[0].message
    assert ring.max_rel_error > 0.05
    rescaled = run(registry()[name], cp.unit(2), 2, d=2)             # the same reads, rescaled: right
    assert rescaled.ok and rescaled.max_rel_error < 1e-12


@pytest.mark.parametrize("name", ["zigzag", "ring-attention-causal", "zigzag-bwd"])
def test_the_move_counts_are_derived_and_agree_with_the_ring_model_beyond_the_checked_sizes(name, sessions):
    """A rank forwards keys in the steps its mask skips: those MOVE cycles are derived in closed form
    (the PE index's digits split as for balance), checked by enumeration up to n = 12 by `counts`
    itself, and here against the ring model at larger sizes (the counts of the target's whole proof
    where this module ran it)."""
    from ringproof.model.ring.machine import run
    from ringproof.proofs.figures.counting import counts

    schedule = registry()[name]
    c = counts(schedule, sessions.setdefault(name, Session()))
    assert c.ops["MOVE"] is not None and "MOVE" not in c.why, c.why
    for n, m, d in ((16, 4, 4), (24, 2, 2), (16, 8, 8)):
        assert c.at(n, m, d, schedule.shape)["ops"]["MOVE"] == run(schedule, n, m, d=d).ops["MOVE"], (n, m, d)


def test_the_forms_of_a_step_run_it_once_at_one_size_and_give_what_they_give_alone(monkeypatch):
    """Ring-attention's four forms (its step an `ite` of steps) evaluated one after another at one
    size run the phase's step once (`trace.indexed`'s read-only index arrays, `dsl._form_step`);
    on indices that could change (writable arrays) each runs it anew, with the same steps."""
    import numpy as np
    from types import SimpleNamespace

    from ringproof.model.ring.trace import indexed
    from ringproof.schedules import dsl
    schedule = registry()["ring-attention"]
    forms = [p for p in schedule.phases if p.name.startswith("ring.")]
    P = dsl.params(8, 2)
    calls, branches = [], dsl.Choice.branches
    monkeypatch.setattr(dsl.Choice, "branches", lambda self, *a: calls.append(1) or branches(self, *a))
    kept = [f.step(P, SimpleNamespace(**indexed(f, P, 2)[3])) for f in forms]
    once, calls[:] = len(calls), []
    alone = [f.step(P, SimpleNamespace(**{k: v.copy() for k, v in indexed(f, P, 2)[3].items()})) for f in forms]
    assert len(forms) == 4 and once > 0 and len(calls) == 4 * once
    size = indexed(forms[0], P, 2)[1] * 2
    for a, b in zip(kept, alone):
        assert a.op == b.op and a.target.array == b.target.array
        for x, y in [(a.pe, b.pe), (a.guard, b.guard), *zip(a.target.idx, b.target.idx)]:
            assert np.array_equal(np.broadcast_to(x, size), np.broadcast_to(y, size))
