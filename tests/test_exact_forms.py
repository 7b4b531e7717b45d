"""The help gaps.py gives Z3: floors and Mods made exact under a case's substitution (checked, and
equal to the original at every size tried), and queries asked in a child process that is ended when
it overruns."""

import itertools
import time

import pytest
import sympy as sp
import z3

from ringproof.errors import InternalError
from ringproof.proofs.search import isolated
from ringproof.proofs.search.exact_forms import divide, exact, floor_of, integer_valued
from ringproof.proofs.search.to_z3 import ToZ3
from ringproof.proofs.search.validity import valid

U, V = sp.symbols("u v", integer=True, nonnegative=True)
n, m = sp.symbols("n m", integer=True, positive=True)


def in_range(r, b):
    """0 ≤ r < b for all u, v ≥ 0, by Z3."""
    tr = ToZ3({"u": z3.Int("u"), "v": z3.Int("v")})
    zr, zb = tr(r), tr(b)
    return valid(z3.And(0 <= zr, zr < zb), [z3.Int("u") >= 0, z3.Int("v") >= 0] + tr.side, rlimit=1_000_000)


def test_a_quotient_is_taken_only_with_its_remainder_proved_in_range():
    x = (2 * U * V + U + V) / (2 * U + 1)          # ⌊n/2⌋ / m at m = 2u + 1, n = m(2v + 1)
    assert floor_of(x, in_range) == V
    assert floor_of(x, lambda r, b: False) == sp.floor(x)
    assert floor_of(U ** 2 / 2 + V, in_range) == sp.floor(U ** 2 / 2 + V)      # not decided: kept


def test_an_integer_valued_polynomial_is_its_own_floor():
    assert integer_valued(U * (U + 1) * (U + 2) / 6, [U]) and integer_valued((U ** 2 - U) / 2 + U * V, [U, V])
    assert not integer_valued(U * V / 2, [U, V]) and not integer_valued(U ** 3 / 3, [U])
    assert floor_of((U ** 2 - U) / 2, lambda r, b: False) == U ** 2 / 2 - U / 2


@pytest.mark.parametrize("a,b", [(2 * U * V + U + V, 2 * U + 1), (4 * U * V + 2 * U + 2 * V + 1, 2),
                                 (U ** 3 - 5 * V + 7, U + 2), (sp.Rational(3, 2) * U + V, 3)])
def test_the_division_identity(a, b):
    for gens in itertools.permutations((U, V)):
        q, r = divide(a, b, gens)
        assert sp.expand(a - b * q - r) == 0
        assert all(c.is_integer for c in sp.Poly(q, U, V).coeffs())


def test_an_exact_form_equals_the_original_at_every_size_tried():
    h = sp.floor(n / 2)
    e = sp.Mod(h, m) * sp.floor(h / m) + sp.Piecewise((1, sp.Eq(n, 2 * h)), (sp.ceiling(n * (n + 1) / (2 * m)), True))
    case = {m: 2 * U + 1, n: (2 * U + 1) * (2 * V + 1)}
    form = exact(e.subs(case, simultaneous=True), in_range)
    assert not form.has(sp.floor, sp.ceiling, sp.Mod, sp.Piecewise)
    for u, v in itertools.product(range(6), range(6)):
        assert form.subs({U: u, V: v}) == e.subs({m: 2 * u + 1, n: (2 * u + 1) * (2 * v + 1)}), (u, v)


def test_a_child_past_its_deadline_is_ended_and_a_new_one_answers(monkeypatch):
    monkeypatch.setattr(isolated, "COMMAND", [isolated.sys.executable, "-c", "import time; time.sleep(60)"])
    monkeypatch.setattr(isolated, "GRACE", 0.2)
    monkeypatch.setattr(isolated, "_child", {})        # this process's child aside, for a sleeping one
    start = time.perf_counter()
    assert isolated.check("(assert false)", rlimit=1000, seconds=0.5) == "unknown"
    assert time.perf_counter() - start < 10
    monkeypatch.undo()
    assert isolated.check("(assert false)", rlimit=1000, seconds=5) == "unsat"


def test_a_query_z3_cannot_read_is_an_internal_error():
    with pytest.raises(InternalError):
        isolated.check("(assert (undeclared))", rlimit=1000, seconds=5)


def test_an_interrupted_query_ends_its_child(monkeypatch):
    """Its answer would otherwise be read as the next query's."""
    monkeypatch.setattr(isolated, "_child", {})
    isolated.check("(assert false)", rlimit=1000, seconds=5)
    proc = isolated._child[isolated.os.getpid()]

    def interrupted(*args):
        raise KeyboardInterrupt
    monkeypatch.setattr(isolated.select, "select", interrupted)
    with pytest.raises(KeyboardInterrupt):
        isolated.check("(assert true)", rlimit=1000, seconds=5)
    assert proc.poll() is not None and isolated.os.getpid() not in isolated._child


def test_a_query_reads_the_same_whatever_the_process_asked_before(monkeypatch):
    """FreshInt's names count up over the process; the query Z3 gets is renamed in order."""
    sent = []
    monkeypatch.setattr(isolated, "check", lambda smt2, **limits: sent.append(smt2) or "unsat")

    def ask():
        x, f = z3.Int("x"), z3.FreshInt("floor")
        return valid(x - f >= 0, [f <= x], rlimit=1000)
    assert ask()
    [z3.FreshInt("floor") for _ in range(25)]
    assert ask()
    assert sent[0] == sent[1] and "floor" in sent[0] and "!" not in sent[0]
