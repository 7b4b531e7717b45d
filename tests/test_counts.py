"""Counts that never lie (issue #23): each case found wrong by a user's schedule file, with the
correct claim proved and the wrong one refuted (replayed on the ring model); every claim checked or
refused; no derived count used before it equals enumeration."""

import io
import runpy
import textwrap

import pytest

from ringproof import BadInput, InternalError
from ringproof.proofs.cli import main
from ringproof.schedules.dsl import RESERVED, Loop
from ringproof.schedules.shape import ANY_D, D_IS_N
from ringproof.proofs.ring.budgets import Budget
from ringproof.proofs.ring.session import Session


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
        from ringproof.proofs.figures.counting import counts

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


@pytest.mark.parametrize("name", RESERVED)
def test_a_loop_named_as_a_parameter_is_bad_input_at_its_line(tmp_path, name):
    """A loop `d` with a hint in P.d: inside the hint's induction P.d would be the loop index."""
    path = schedule_file(tmp_path, LOOP_NAMED + "SCHEDULE = ALGO1\n", name=name)
    code, out, err = call(path, "--property", "counts")
    assert code == 64 and f"{path}:4:" in err and "names a parameter" in err, (out, err)
    with pytest.raises(BadInput):
        Loop(name, 1, "n")


def test_a_derived_count_that_differs_from_enumeration_is_an_internal_error(monkeypatch):
    """Never a proof: a counter bug shows at the first size it is wrong, with the phase."""
    from ringproof.proofs.figures import counting
    from ringproof.schedules.algo1 import ALGO1

    real = counting.count
    monkeypatch.setattr(counting, "count", lambda *a: real(*a) + counting.M - 1)    # wrong for m > 1
    with pytest.raises(InternalError, match=r"phase phase1: the derived cycles .* at n=2, m=2"):
        counting.counts(ALGO1, Session())      # a session of its own: nothing cached


# ----------------------------------------------------------------------------- read in the code

BENT_MATVEC = '''\
    import runpy
    from dataclasses import replace

    from ringproof import mod, wrap

    _base = runpy.run_path("{examples}/matvec.py")["SCHEDULE"]
    _rows = _base.phases[0]


    def step(P, ix):
        st = _rows.step(P, ix)
        {bend}
        return st


    SCHEDULE = replace(_base, name="bent", phases=(replace(_rows, step=step),))
    '''


@pytest.mark.parametrize("bend", [
    # differs on ints only where d ≠ n: sampled only at d = n, it was never seen
    "if isinstance(P.d, int) and P.d != P.n:\n            st = replace(st, pe=wrap(ix.l + 1, P.m))",
    # its formula names kd: evaluating it raised KeyError, which skipped the comparison
    "st = replace(st, pe=ix.l + 0 * P.kd if not isinstance(ix.j, int) else wrap(ix.l + 1, P.m))",
])
def test_the_formula_that_runs_is_sampled_at_d_other_than_n_and_with_kd(tmp_path, bend):
    import pathlib

    examples = pathlib.Path(__file__).resolve().parents[1] / "examples"
    path = schedule_file(tmp_path, BENT_MATVEC, examples=examples, bend=bend)
    code, out, err = call(path, "--property", "coverage")
    assert code == 64 and "not the formula the prover would check" in err, (out, err)


def test_symmetric_declarations_are_shown_or_refused():
    """A computed array declared symmetric whose terms are not symmetric in A and B would make
    transposed copies legal: refused; the paper's symmetric problem is shown symmetric."""
    from ringproof import computation
    from ringproof.schedules.problems import SYMMETRIC

    assert [a.name for a in SYMMETRIC.symmetric_pairs] == ["w1"]
    arrays = {"q": "n d", "k": "n d", "x": "n d", "w1": "n n", "s": "n"}
    for eq, why in (("w1[A, B] += q[A, C] * k[B, C]", "terms with A and B swapped"),
                    ("w1[A, B] += x[A, C] * x[B, C] if B <= A", "mask with A and B swapped"),
                    ("s[A] += exp(x[A, C])", "extents")):
        with pytest.raises(BadInput, match=why):
            computation("c", arrays, [eq], symmetric=(eq[:eq.index("[")],))
    with pytest.raises(BadInput, match="input"):
        computation("c", arrays, ["w1[A, B] += x[A, C] * x[B, C]"], symmetric=("q",))


def test_an_unknown_answer_is_never_cached_as_false():
    """A side condition Z3 could not settle under a small budget is not kept as false (and is
    proved under a larger one, whose session is another)."""
    import z3

    from ringproof.proofs.ring.normalize import Ctx

    def ctx(session):
        c = Ctx(session=session, nonlinear=True)
        c.assumptions += [x >= 1, x <= c.k * c.m]
        return c

    x = z3.Int("x")
    small = Session(Budget(side_condition_rlimit=1))
    fact = x * x <= (ctx(small).k * ctx(small).m) * (ctx(small).k * ctx(small).m)
    assert ctx(small).prove(fact) is False             # not shown with a budget of 1
    assert all(verdict is not False for verdict, *_ in small.proven.values())   # and not kept
    assert ctx(Session()).prove(fact) is True


def test_a_misspelled_tier_is_bad_input():
    from ringproof.proofs.ring.prover import Options

    with pytest.raises(BadInput, match="per-m"):
        Options(tier="perm")


def test_the_sampled_bound_of_a_claim_is_the_one_named():
    """Claims are sampled at n, d ≤ 12 where d is a parameter of its own, else n ≤ 24; past that,
    Z3 finds the smallest size where the forms differ (one it cannot read stays unknown)."""
    from ringproof.proofs.figures.counting import N, check_claim, claim_bound

    assert claim_bound(D_IS_N) == (24, 24) and claim_bound(ANY_D) == (12, 12)
    derived = N * N
    sneaky = "n**2 + Piecewise((1, n > 12), (0, True))"
    assert check_claim(derived, sneaky, shape=ANY_D)[:3] == (13, 1, 1)
    assert check_claim(derived, sneaky, shape=D_IS_N)[:2] == (13, 1)
    assert check_claim(derived, "n**2 + Piecewise((1, n > 40), (0, True))", shape=D_IS_N)[:2] == (41, 1)


def test_counting_honours_the_seed(monkeypatch):
    """Every Z3 query of the counts runs with the seed asked for (`--seed`)."""
    import z3

    from ringproof.proofs.figures import counting
    from ringproof.schedules.algo2 import ALGO2

    seeds = []
    real = z3.Solver.set

    def spy(self, *args, **kw):
        if args and args[0] == "random_seed":
            seeds.append(args[1])
        return real(self, *args, **kw)

    monkeypatch.setattr(z3.Solver, "set", spy)
    counting.counts(ALGO2, Session(Budget(seed=7)))     # a session of its own: nothing cached
    assert seeds and min(seeds) >= 7, seeds     # induction tries seed, seed + 1, ...


def test_the_es_section_reads_its_table_from_a_regular_install(tmp_path):
    """Not from the source tree: the table ships as package data (build_py copies what a regular
    install holds)."""
    import pathlib
    import subprocess
    import sys
    import sysconfig

    root = pathlib.Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py",
                    "--build-lib", str(tmp_path)], cwd=root, check=True, capture_output=True)
    env = {"PYTHONPATH": f"{tmp_path}:{sysconfig.get_paths()['purelib']}", "PATH": "/usr/bin:/bin"}
    got = subprocess.run([sys.executable, "-S", "-c", "import ringproof.proofs.report.paper as p; "
                          "print(p.__file__); print(len(p.es_minima()))"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert got[0].startswith(str(tmp_path)) and int(got[1]) > 0, got


TIDY_FORMS = ["n**3 + n**2*floor(n/2) + n**2", "(n**3/2 + n**2/2)/(m*(n**2*floor(n/2)/m + n**2/m))",
              "-n**2*ceiling(n/2)/m + n**2*floor(n/2)/m + n*ceiling(n/2)**2/(2*m) - n*floor(n/2)/(2*m)",
              "2*d*n**2/m**2 + d*n/m", "(k*m + k)/(k*m*m)"]


@pytest.mark.parametrize("form", TIDY_FORMS)
def test_tidy_factors_as_simplify_then_factor(form):
    """tidy factors without sympy's simplify (counting._factored): the same forms as with it."""
    import sympy
    from ringproof.proofs.figures.counting import tidy
    n, m, d, k = sympy.symbols("n m d k", positive=True, integer=True)
    e = sympy.sympify(form, locals={"n": n, "m": m, "d": d, "k": k})
    assert str(tidy(e)) == str(sympy.factor(sympy.simplify(e)))
