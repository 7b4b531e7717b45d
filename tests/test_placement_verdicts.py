"""Placement completeness (issue 45, "Verdicts this must add"): a gradient brought home by its last
`Move` proves without `ends=`, a placement equal to `owner` on every size normalizes, and a
placement meaning "where the inputs live" follows a derived schedule's `home`. Every proof is
checked against the enumerated twin; every wrong placement is refuted with a replayed
counterexample."""

import json
from dataclasses import replace
from types import SimpleNamespace

import pytest

from helpers.cli import call
from helpers.twins import assert_same_check_replays
from ringproof import ALGO1, HOME, Options, Verdict, verify, wrap
from ringproof.model.ring.trace import build_trace
from ringproof.proofs.cli.targets import load_file
from ringproof.proofs.ring.iterations import It
from ringproof.proofs.ring.properties import check_trace
from ringproof.schedules.dsl import params
from ringproof.schedules.expr import evaluate, var

# dv = pᵀ·g with the contiguous layout: the sums of one key block travel the ring with it, and the
# send after the last row of ring step m, the return hop, brings them home. No `ends=`.
BACKWARD = '''
from ringproof import HOME, MAC, At, Loop, Move, Phase, Schedule, Step, and_, computation, div, eq, ge, ite, mod, ne, wrap

GRAD = computation("dv", {"p": "n n", "g": "n d", "dv": "n d"}, ["dv[B, C] += p[A, B] * g[A, C]"])
p, g = GRAD.inputs
dv = GRAD.output


def owner(P, A):
    return div(A - 1, P.k) + 1


def step(P, ix):
    A = (ix.l - 1) * P.k + ix.i
    B = mod(ix.l - ix.s, P.m) * P.k + ix.b
    first_row = eq(ix.i, 1)
    return Step(pe=ix.l, op=MAC, target=dv[B, ix.c], operands=(p[A, B], g[A, ix.c]),
                send=Move(dv[B, ix.c], when=SEND),
                first=eq(ix.s + ix.i, 2),
                prev=At("dv", dict(s=ite(first_row, ix.s - 1, ix.s), b=ix.b, c=ix.c,
                                   i=ite(first_row, P.k, ix.i - 1),
                                   l=ite(first_row, wrap(ix.l - 1, P.m), ix.l))),
                sources=(HOME, HOME))


def inverse(P, key):
    B, C, A = key
    l = owner(P, A)
    return dict(s=mod(l - owner(P, B), P.m) + 1, b=mod(B - 1, P.k) + 1, c=C, i=mod(A - 1, P.k) + 1, l=l)


PHASE = Phase("dv", (Loop("s", 1, "m"), Loop("b", 1, "k"), Loop("c", 1, "d"), Loop("i", 1, "k")),
              step, inverse=inverse)
SCHEDULE = Schedule("my-backward", GRAD, (PHASE,), home=lambda P, ref: owner(P, ref.idx[0]),
                    placement=lambda P, ref: PLACEMENT)
'''

HOME_HOP = "eq(ix.i, P.k)"                      # on after the block's last row; at s = m, home
OWNER = "owner(P, ref.idx[0])"


def _backward(tmp_path, send=HOME_HOP, placement=OWNER, name="my_backward.py"):
    path = tmp_path / name
    path.write_text(BACKWARD.replace("SEND", send).replace("PLACEMENT", placement))
    return path


def _placement(path, *args):
    """(exit code, the one placement row) of `prove PATH --property placement --json ARGS`."""
    code, out, err = call(str(path), "--property", "placement", "--json", *args)
    (row,) = json.loads(out)["results"]
    return code, row


def _replayed(path, row, n, m):
    """The row is a refutation at (n, m) whose counterexample the enumerated twin confirms."""
    assert row["verdict"] == "refuted" and row["tier"] == "parametric", row["reason"]
    cex = row["counterexample"]
    assert (cex["n"], cex["m"]) == (n, m) and cex["replay"]["confirmed"] and cex["replay"]["same_check"], cex
    found = check_trace(build_trace(load_file(path), n, m), ["placement"])[("placement", row["phase"])]
    assert any(f.check == cex["check"] for f in found)
    return cex


# ------------------------------------------------ a gradient brought home by its last Move, no ends=

def test_a_gradient_brought_home_by_its_last_move_proves_placement_without_ends(tmp_path):
    """No witness of where dv ends: the nodes that send dv on before the return hop each have a
    later node of dv (found by inverting `prev`), so only the return hop must land home, which it
    does (it was unknown: z3's counterexample was such an intermediate node, which the trace, where
    the last node is known, did not confirm). The bounded tier agrees at every size it enumerates."""
    path = _backward(tmp_path)
    code, row = _placement(path)
    assert code == 0 and row["verdict"] == "proved" and row["tier"] == "parametric", row["reason"]
    code, row = _placement(path, "--tier", "bounded", "--max-n", "6")
    assert code == 0 and row["verdict"] == "proved" and row["tier"] == "bounded", row["reason"]


def test_without_the_return_hop_the_gradient_is_refuted_where_it_ends(tmp_path):
    """The return hop left out: dv ends one PE short of home, refuted at the smallest size with
    two PEs, the counterexample replayed on the enumerated trace."""
    path = _backward(tmp_path, send="and_(eq(ix.i, P.k), ne(ix.s, P.m))")
    code, row = _placement(path)
    assert code == 1
    cex = _replayed(path, row, 2, 2)
    assert "ends on PE" in cex["message"] and ", not on PE" in cex["message"]


def test_a_wrong_placement_of_a_travelling_gradient_is_refuted_and_replays(tmp_path):
    """The moves are right, the declared placement one PE off: refuted (not unknown), replayed."""
    path = _backward(tmp_path, placement="wrap(owner(P, ref.idx[0]) + 1, P.m)")
    code, row = _placement(path)
    assert code == 1
    _replayed(path, row, 2, 2)


def test_inverting_prev_finds_every_successor_of_a_node(tmp_path):
    """The iterations `_successors` gives for a node, evaluated at every node of the example's
    trace at n=4, m=2, are the ones whose `prev` is that node (enumerated): the inversion is the
    instance the query needs, found as the enumeration finds it."""
    from ringproof.proofs.ring.properties.placement import _successors
    S = load_file(_backward(tmp_path))
    phase = S.phases[0]
    a = It(phase, 0, {name: var(f"a.{name}") for name in phase.index_names})
    successors = _successors(phase, a)
    assert len(successors) >= 2
    P = params(4, 2)
    env = {"m": 2, "n": 4, "k": 2, "d": 4, "kd": 2}
    names = phase.index_names
    box = [dict(zip(names, t)) for t in _box(phase, P)]
    for ix in box:
        st = phase.step(P, SimpleNamespace(**ix))
        if st.first:
            continue
        prev = tuple(st.prev.idx[name] for name in names)
        at_prev = {f"a.{name}": v for name, v in zip(names, prev)}
        found = {tuple(evaluate(c[name], {**env, **at_prev}) for name in names) for c in successors}
        assert tuple(ix[name] for name in names) in found, (ix, prev, found)


def _box(phase, P):
    import itertools
    ranges = []
    for lp in phase.loops:
        lo, hi = lp.bounds(P, SimpleNamespace())
        ranges.append(range(lo, hi + 1))
    return [t + (l,) for t in itertools.product(*ranges) for l in range(1, P.m + 1)]


@pytest.mark.parametrize("target", ["ring-attention-bwd", "ring-attention-causal-bwd"])
def test_the_context_parallel_backwards_prove_placement_without_their_end_witness(target):
    """dk and dv travel with their key block and come home with the return hop: with `ends`
    dropped, placement still proves, the causal one's sums passing the ranks with no term on
    included (a branch of `prev` that leaves an index free tries it at both ends of its loop)."""
    from ringproof.schedules.context_parallel import BACKWARDS
    S = replace(BACKWARDS[target], name=f"{target}-no-ends", ends=None)
    results = verify(S, Options(properties=("placement",)))
    assert {r.phase: r.verdict for r in results} == dict.fromkeys(("dq", "dk", "dv"), Verdict.PROVED), \
        [(r.phase, r.reason) for r in results]


# ------------------------------------------------ a placement equal to owner on every size

GUARDED_OWNER = "ite(ge(P.m, 5), wrap(owner(P, ref.idx[0]) + P.m, P.m), owner(P, ref.idx[0]))"


def test_a_placement_equal_to_owner_for_every_m_normalizes_and_proves(tmp_path):
    """wrap(owner + m, m) is owner for owner in 1..m: the placement chosen by m ≥ 5 proves as plain
    `owner` does. Its index formulas leave radix m (owner is a block of k) and, in blocks of k,
    compare with the literal 5, which splits the query on m (it was unknown: "value mixes digits of
    m with blocks of k", the radix-m reason, kept when the block split's literal went unsaid)."""
    path = _backward(tmp_path, placement=GUARDED_OWNER)
    code, row = _placement(path)
    assert code == 0 and row["verdict"] == "proved", row["reason"]


def test_a_placement_wrong_only_from_m_5_is_refuted_at_m_5(tmp_path):
    """The same shape with owner + 1: right below m = 5, wrong from it; refuted at n = m = 5."""
    path = _backward(tmp_path, placement=GUARDED_OWNER.replace("+ P.m, P.m)", "+ 1, P.m)"))
    code, row = _placement(path)
    assert code == 1
    _replayed(path, row, 5, 5)


# ------------------------------------------------ a placement where the inputs live follows home

def _rotated(P, ix, st):
    return wrap(st.pe + 1, P.m)


def _rotated_home(P, ref):
    return wrap(ALGO1.home(P, ref) + 1, P.m)


ROTATED = {p.name: dict(pe=_rotated) for p in ALGO1.phases}


def test_a_derived_schedule_with_its_home_rotated_proves_placement():
    """Algorithm 1 with every PE one on and its home rotated to match: y ends where column C's
    inputs now live, which its placement (the same formula as Algorithm 1's home) follows."""
    S = ALGO1.derive("algo1-rotated", ROTATED, home=_rotated_home)
    P, ref = params(4, 2), ALGO1.problem.output[1, 2]
    assert S.placement(P, ref) == _rotated_home(P, ref) != ALGO1.placement(P, ref)
    (r,) = verify(S, Options(properties=("placement",)))
    assert r.verdict is Verdict.PROVED and r.tier == "parametric", r.reason
    (r,) = verify(S, Options(properties=("placement",), tier="bounded", max_n=6))
    assert r.verdict is Verdict.PROVED, r.reason


def test_a_rotated_schedule_whose_home_is_not_rotated_is_refuted():
    """The PEs rotated, home not: y ends one PE past where its inputs live; refuted, replayed."""
    S = ALGO1.derive("algo1-rotated-stale", ROTATED)
    (r,) = verify(S, Options(properties=("placement",)))
    assert r.verdict is Verdict.REFUTED and (r.counterexample.n, r.counterexample.m) == (2, 2), r.reason
    assert r.counterexample.message == "y[1, 1] ends on PE 2, not on PE 1"
    assert_same_check_replays(S, r)


def test_only_a_placement_that_means_home_follows_it():
    """A placement of another formula stays as written when home is replaced; `placement=HOME`
    says "where the inputs live" outright; a schedule rebuilt with its own home keeps its
    placement as it is."""
    P, ref = params(4, 2), ALGO1.problem.output[1, 2]
    fixed = replace(ALGO1, home=_rotated_home, placement=lambda P, ref: 1)
    assert fixed.placement(P, ref) == 1
    spelled = replace(ALGO1, placement=HOME)
    assert spelled.placement(P, ref) == ALGO1.home(P, ref)
    assert replace(spelled, home=_rotated_home).placement(P, ref) == _rotated_home(P, ref)
    assert replace(ALGO1, name="again").placement is ALGO1.placement
