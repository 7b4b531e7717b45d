"""Counts that never lie (issue #23): each case found wrong by a user's schedule file, with the
correct claim proved and the wrong one refuted (replayed on the ring model); every claim checked or
refused; no derived count used before it equals enumeration."""

import io
import runpy
import textwrap

import pytest

from ringproof import BadInput, InternalError
from ringproof.proofs.cli import main
from ringproof.schedules.dsl import Loop, PARAMETERS


def call(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def schedule_file(tmp_path, source: str, **fields) -> str:
    path = tmp_path / "user.py"
    path.write_text(textwrap.dedent(source).format(**fields))
    return str(path)


CONJUNCTIVE_GUARD = '''\
    from ringproof import ALGO1, Schedule, and_, le

    # phase 1 of Algorithm 1, only the columns j ≤ h (the second atom always holds)
    PHASE = ALGO1.phase("phase1").derive(guard=lambda P, ix, st: and_(le(ix.j, ix.h), le(ix.j, P.n)))
    SCHEDULE = Schedule("conj", ALGO1.problem, (PHASE,), home=ALGO1.home,
                        notes={{"claims": {{"MAC": "{mac}"}}}})
    '''

CONJUNCTIVE_MASK = '''\
    from dataclasses import replace

    from ringproof import ALGO1, HOME, Schedule, and_, computation, le, mod

    # y[A, C] sums w[A, B]·v[B, C] only over B ≤ C and B ≤ A (all indices range over 1..n)
    MASK2 = computation("mask2", {{"w": "n n", "v": "n n", "y": "n n"}},
                        ["y[A, C] += w[A, B] * v[B, C] if B <= C and B <= A"])
    ARRAYS = {{a.name: a for a in MASK2.inputs + (MASK2.output,)}}


    def mine(ref):
        return ARRAYS[ref.array.name][ref.idx]


    def guard(P, ix, st):
        A, C = st.target.idx
        B = st.operands[0].idx[1]
        return and_(le(B, C), le(B, A))


    def home(P, ref):
        return mod(ref.idx[-1 if ref.array.name == "w" else 0] - 1, P.m) + 1


    # phase 3 of Algorithm 1 on these arrays, guarded by the mask
    PHASE = ALGO1.phase("phase3").derive(
        target=lambda P, ix, st: mine(st.target),
        operands=lambda P, ix, st: tuple(mine(r) for r in st.operands),
        send=lambda P, ix, st: replace(st.send, datum=mine(st.send.datum)),
        guard=guard, sources=(HOME, HOME), relies_on={{}})
    SCHEDULE = Schedule("mask2", MASK2, (PHASE,), home=home, notes={{"claims": {{"MAC": "{mac}"}}}})
    '''

EMPTY_RANGE = '''\
    from ringproof import ALGO1, Schedule

    # phase 1 of Algorithm 1 on rows h = 2m+1 .. n only, columns j = 1 .. h: empty while n ≤ 2m
    PHASE = ALGO1.phase("phase1").derive(bounds={{"h": (lambda P, ix: 2 * P.m + 1, "n"),
                                                  "j": (1, lambda P, ix: ix.h)}})
    SCHEDULE = Schedule("empty", ALGO1.problem, (PHASE,), home=ALGO1.home,
                        notes={{"claims": {{"cycles": "{cycles}"}}}})
    '''

EXTRA_CLAIM = '''\
    from dataclasses import replace

    from ringproof import ALGO3

    SCHEDULE = replace(ALGO3, name="algo3-claims", notes={{"claims": {{**ALGO3.notes["claims"], {claim}}}}})
    '''

LOOP_NAMED = '''\
    from ringproof import ALGO1, Loop, Schedule

    _p = ALGO1.phase("phase1")
    LOOPS = (Loop("{name}", 1, "n", through=lambda P, V: V * P.n * P.k),) + _p.loops[1:]
    '''


@pytest.mark.parametrize("claim,code", [("n**2*(n+1)/2", 0), ("n**3", 1)])
def test_conjunctive_guard_keeps_every_bound(tmp_path, claim, code):
    """and_(j ≤ h, j ≤ n): the run does n²(n+1)/2 MACs (40 at n=4, m=2), not n³."""
    got, out, err = call(schedule_file(tmp_path, CONJUNCTIVE_GUARD, mac=claim), "--property", "counts")
    assert got == code, (out, err)
    if code == 1:
        assert "at n=2, m=1" in out and "derived 6, claimed 8" in out
        assert "ring model at n=2, m=1: MAC = 6" in out              # the run that shows it


@pytest.mark.parametrize("claim,code", [("n*(n+1)*(2*n+1)/6", 0), ("n**2*(n+1)/2", 1)])
def test_conjunctive_mask_keeps_every_bound(tmp_path, claim, code):
    """`if B <= C and B <= A`: Σ_A,C min(A, C) terms, not the last bound's Σ_A,C A."""
    got, out, err = call(schedule_file(tmp_path, CONJUNCTIVE_MASK, mac=claim), "--property", "counts")
    assert got == code, (out, err)


EMPTY_TRUE = "Piecewise((n*(n*(n+1) - 2*m*(2*m+1))/(2*m), n >= 2*m+1), (0, True))"


@pytest.mark.parametrize("claim,code", [(EMPTY_TRUE, 0), ("n*(n*(n+1) - 2*m*(2*m+1))/(2*m)", 1)])
def test_an_empty_range_counts_zero(tmp_path, claim, code):
    """Rows 2m+1..n are none for n ≤ 2m: 0 cycles there, never a reversed (negative) sum."""
    got, out, err = call(schedule_file(tmp_path, EMPTY_RANGE, cycles=claim), "--property", "counts")
    assert got == code, (out, err)
    if code == 1:
        assert "at n=1, m=1" in out and "ring model at n=1, m=1: cycles = 0" in out
    else:
        from ringproof.proofs.ring.counting import counts

        c = counts(runpy.run_path(str(tmp_path / "user.py"))["SCHEDULE"])
        assert [c.at(n, m)["cycles"] for n, m in ((1, 1), (2, 1), (3, 1), (4, 2), (6, 2))] == [0, 0, 9, 0, 33]


def test_a_claimed_kind_not_derived_is_unknown_then_refuted_by_the_run(tmp_path):
    """Algorithm 3 forwards sums on masked cycles (2 MOVE cycles at n=2, m=1): `MOVE: 0` is not
    proved. Its MOVE count is not derived (the guard depends on the PE through mod), so the
    parametric verdict is unknown naming MOVE; the bounded tier refutes it with the run."""
    path = schedule_file(tmp_path, EXTRA_CLAIM, claim='"MOVE": "0"')
    code, out, err = call(path, "--property", "counts")
    assert code == 2 and "MOVE not derived" in out, (out, err)
    code, out, err = call(path, "--property", "counts", "--tier", "bounded", "--max-n", "4")
    assert code == 1 and "ring model at n=2, m=1: MOVE = 2" in out, (out, err)
    code, out, err = call("simulate", path, "-n", "4", "-m", "2")
    assert "MOVE 9" in out, out


def test_a_derived_move_count_is_checked(tmp_path):
    """The conjunctive-guard schedule forwards on the cycles j > h: its MOVE count is derived."""
    good = "Piecewise((n*(n-1)*(n-2)/2, n >= 3), (0, True))"
    src = CONJUNCTIVE_GUARD.replace('"MAC": "{mac}"', '"MAC": "{mac}", "MOVE": "{move}"')
    for move, code in ((good, 0), ("0", 1)):
        got, out, err = call(schedule_file(tmp_path, src, mac="n**2*(n+1)/2", move=move), "--property", "counts")
        assert got == code, (move, out, err)


def test_an_unknown_claim_key_is_bad_input_at_its_line(tmp_path):
    path = schedule_file(tmp_path, EXTRA_CLAIM, claim='"MACs": "n**3"')
    for argv in ([path, "--property", "counts"], [path, "--property", "counts", "--tier", "bounded"]):
        code, out, err = call(*argv)
        assert code == 64 and f"{path}:5:" in err and "'MACs'" in err, (out, err)


@pytest.mark.parametrize("name", PARAMETERS)
def test_a_loop_named_as_a_parameter_is_bad_input_at_its_line(tmp_path, name):
    """A loop `d` with a hint in P.d: inside the hint's induction P.d would be the loop index."""
    path = schedule_file(tmp_path, LOOP_NAMED + "SCHEDULE = ALGO1\n", name=name)
    code, out, err = call(path, "--property", "counts")
    assert code == 64 and f"{path}:4:" in err and "names a parameter" in err, (out, err)
    with pytest.raises(BadInput):
        Loop(name, 1, "n")


def test_a_derived_count_that_differs_from_enumeration_is_an_internal_error(monkeypatch):
    """Never a proof: a counter bug shows at the first size it is wrong, with the phase."""
    from ringproof.proofs.ring import counting
    from ringproof.schedules.algo1 import ALGO1

    real = counting.count
    monkeypatch.setattr(counting, "count", lambda *a: real(*a) + counting.M - 1)    # wrong for m > 1
    monkeypatch.setattr(counting, "_COUNTED", {})
    with pytest.raises(InternalError, match=r"phase phase1: the derived cycles .* at n=2, m=2"):
        counting.counts(ALGO1)
