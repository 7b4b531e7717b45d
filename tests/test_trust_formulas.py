"""The formula proved is the formula that runs: Python's own operations on symbolic index values are
refused at the user's line, and a step that differs on ints from its formulas is bad input."""

import textwrap

import pytest

from ringproof import BadInput, eq, mod, same, var
from ringproof.schedules.expr import Term
from ringproof.proofs.ring.formulas import check_formulas
from helpers.cli import call, one_line_error


# A user's phase 1 of Algorithm 1 with its column bent at one iteration, written two ways: with
# Python's `==` (which on a symbolic index would be False everywhere: the prover would check the
# unbent schedule) and with a test that only holds on ints.
BENT = textwrap.dedent('''\
    from dataclasses import replace

    from ringproof import ALGO1, mod
    from ringproof.schedules import algo1

    _orig = ALGO1.phases[0]


    def step(P, ix):
        st = _orig.step.__wrapped__(P, ix)
        C = st.operands[0].idx[1]
        {test}
            C = mod(C, P.n) + 1
        return replace(st, operands=(algo1.q[st.target.idx[0], C], algo1.k[st.target.idx[1], C]))


    SCHEDULE = replace(ALGO1, name="bent", phases=(replace(_orig, step=step),) + ALGO1.phases[1:])
    ''')


@pytest.mark.parametrize("argv,helper", [
    (["--property", "coverage", "--tier", "parametric"], "eq(a, b)"),
    (["--property", "coverage", "--tier", "per-m", "--max-m", "2"], "eq(a, b)"),
    (["simulate", "-n", "4", "-m", "2"], "use ite"),    # the simulator's index arrays refuse it too
])
def test_python_comparison_on_a_symbolic_index_is_never_proved(tmp_path, argv, helper):
    path = tmp_path / "bent.py"
    path.write_text(BENT.format(test="if ix.j == 1:"))
    argv = argv[:1] + [str(path)] + argv[1:] if argv[0] == "simulate" else [str(path)] + argv
    code, out, err = call(*argv)
    assert code == 64, (out, err)
    line = one_line_error(err)
    assert f"{path}:12:" in line and helper in line


def test_a_step_that_differs_on_ints_is_bad_input(tmp_path):
    path = tmp_path / "sneaky.py"
    path.write_text(BENT.format(test="if isinstance(ix.j, int) and ix.j in (1,):"))
    code, out, err = call(str(path), "--property", "coverage")
    assert code == 64, (out, err)
    line = one_line_error(err)
    assert f"{path}:9:" in line and "not the formula the prover would check" in line


@pytest.mark.parametrize("expr,helper", [
    (lambda j: j == 1, "eq(a, b)"), (lambda j: j != 1, "ne(a, b)"), (lambda j: j < 1, "lt(a, b)"),
    (lambda j: j <= 1, "le(a, b)"), (lambda j: j > 1, "gt(a, b)"), (lambda j: j >= 1, "ge(a, b)"),
    (lambda j: 1 == j, "eq(a, b)"), (lambda j: bool(j), "ite(c, a, b)"), (lambda j: j % 2, "mod(a, b)"),
    (lambda j: 7 % j, "mod(a, b)"), (lambda j: j // 2, "div(a, b)"), (lambda j: j / 2, "div(a, b)"),
    (lambda j: float(j), "float()"), (lambda j: int(j), "int()"), (lambda j: [0, 1][j], "index"),
    (lambda j: j in [1, 2], "eq(a, b)"), (lambda j: 1 if j else 0, "ite(c, a, b)"),
])
def test_python_operations_on_terms_are_refused_at_the_line(expr, helper):
    with pytest.raises(BadInput) as err:
        expr(var("j"))
    assert "test_trust_formulas.py:" in str(err.value) and helper in str(err.value)


def test_same_compares_trees():
    j = var("j")
    assert same(mod(j + 1, var("m")), mod(j + 1, var("m")))
    assert not same(j + 1, j + 2) and not same(j, 1)
    assert same(eq(j, 1), eq(j, 1))
    assert len({j, j, var("j")}) == 2          # hashing is by identity, never by ==
    assert isinstance(j + 1, Term)


def test_registered_schedules_agree_on_ints_and_terms():
    from ringproof.proofs.cli.targets import registry

    for schedule in registry().values():
        check_formulas(schedule, sizes=((4, 2), (6, 3)), per_size=8)
