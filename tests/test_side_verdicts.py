"""Verdicts at the edges of a schedule's side conditions and load claims (issue 45, "Verdicts this
must add"): each case is a user's schedule file, proved with `prove` as a user would."""

import json
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from helpers.cli import call
from ringproof import Options, Verdict, run, verify
from ringproof.proofs.cli.targets import load_file

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

ZIGZAG = '''
from ringproof import (HOME, MAC, At, Copy, Either, Loop, Phase, Schedule, Step, computation, div, eq, ite,
                       le, lt, mod, wrap)

CAUSAL = computation("causal-scores", {"q": "n d", "k": "n d", "w1": "n n"},
                     ["w1[A, B] += q[A, C] * k[B, C] if B <= A"])
q, kk = CAUSAL.inputs
w1 = CAUSAL.output
H = CHUNK


def token(P, pe, i):
    return ite(le(i, H(P)), (pe - 1) * H(P) + i, (2 * P.m - pe) * H(P) + i - H(P))


def owner(P, A):
    g = div(A - 1, H(P))
    return ite(lt(g, P.m), g + 1, 2 * P.m - g)


def local(P, A):
    return ite(lt(div(A - 1, H(P)), P.m), 0, H(P)) + mod(A - 1, H(P)) + 1


def step(P, ix):
    A, B = token(P, ix.l, ix.i), token(P, mod(ix.l - ix.s, P.m) + 1, ix.b)
    key = Either(eq(ix.s, 1), HOME, At("scores", dict(s=ix.s - 1, i=1, b=ix.b, c=ix.c, l=wrap(ix.l - 1, P.m))))
    return Step(pe=ix.l, op=MAC, target=w1[A, B], operands=(q[A, ix.c], kk[B, ix.c]), guard=le(B, A),
                send=Copy(kk[B, ix.c], when=eq(ix.i, 1), source=key), first=eq(ix.c, 1),
                prev=At("scores", dict(s=ix.s, i=ix.i, b=ix.b, c=ix.c - 1, l=ix.l)),
                sources=(HOME, Either(eq(ix.i, 1), key, At("scores", dict(s=ix.s, i=1, b=ix.b, c=ix.c, l=ix.l)))))


def inverse(P, key):
    A, B, C = key
    l = owner(P, A)
    return dict(s=mod(l - owner(P, B), P.m) + 1, i=local(P, A), b=local(P, B), c=C, l=l)


PHASE = Phase("scores", (Loop("s", 1, "m"), Loop("i", 1, "k"), Loop("b", 1, "k"), Loop("c", 1, "d")),
              step, inverse=inverse)
SCHEDULE = Schedule("my-zigzag", CAUSAL, (PHASE,), home=lambda P, ref: owner(P, ref.idx[0]),
                    requires=REQUIRES, DERIVED
                    notes={"claims": CLAIMS})
'''


def _zigzag(tmp_path, requires="lambda P: eq(mod(P.n, 2 * P.m), 0)", chunk="lambda P: P.h",
            derived='derived={"h": lambda P: div(P.n, 2 * P.m)},',
            claims='{"cycles": "n**3/m", "MAC": "m*h*n*(2*m*h + 1)"}', name="my_zigzag.py"):
    path = tmp_path / name
    path.write_text(ZIGZAG.replace("REQUIRES", requires).replace("CHUNK", chunk).replace("DERIVED", derived)
                    .replace("CLAIMS", claims))
    return path


# ------------------------------------------------ a side condition that admits sizes where it breaks

def test_a_side_condition_admitting_a_broken_size_refutes_the_counts_there(tmp_path):
    """'n even' where the zigzag needs 2m | n: at n=2, m=2 the chunk size h is 0 and the schedule
    breaks. The counts' claim check meets that size first; it is the schedule refuted (exit 1, the
    ring model's run at that size replayed), not ringproof broken (it was exit 70)."""
    path = _zigzag(tmp_path, requires="lambda P: eq(mod(P.n, 2), 0)")
    code, out, err = call(str(path), "--property", "counts", "--json")
    assert code == 1, (code, err)
    (row,) = json.loads(out)["results"]
    assert row["verdict"] == "refuted" and "the schedule breaks at n=2, m=2" in row["reason"], row["reason"]
    cex = row["counterexample"]
    assert (cex["n"], cex["m"]) == (2, 2) and cex["replay"]["confirmed"] and cex["replay"]["breaks"]
    ring = run(load_file(path), 2, 2)
    assert not ring.ok and ring.ops["MAC"] == cex["replay"]["measured"]


def test_a_valid_run_measuring_another_count_stays_an_internal_error():
    """The other side of the line: where the ring model's run is valid, a derived count it
    contradicts is ringproof wrong (exit 70), never the schedule refuted."""
    from ringproof import ALGO1, InternalError
    from ringproof.proofs.ring.prover import _count_replay
    assert run(ALGO1, 4, 2).ok
    with pytest.raises(InternalError, match="in a valid run"):
        _count_replay(ALGO1, "MAC", 4, 2, 4, derived=1, claimed=2)


# ------------------------------------------------ a side condition no size, or few sizes, satisfy

def test_a_side_condition_no_size_satisfies_is_vacuous_on_every_path(tmp_path):
    """2m | n and n < m together admit no size: every property on every phase, counts (balance
    and memory with it) included, is `unknown`, saying it is vacuous (exit 2): never proved, and
    no path fails on the empty set of sizes (a memory path raised IndexError, exit 70)."""
    path = _zigzag(tmp_path, requires="lambda P: and_(eq(mod(P.n, 2 * P.m), 0), lt(P.n, P.m))")
    path.write_text(path.read_text().replace("le, lt, mod, wrap)", "le, lt, mod, wrap, and_)"))
    for tier in ("parametric", "bounded"):
        code, out, err = call(str(path), "--tier", tier, "--json")
        assert code == 2, (tier, code, err)
        rows = json.loads(out)["results"]
        assert {r["property"] for r in rows} >= {"well-formed", "coverage", "no-conflict", "ring-locality", "counts"}
        assert all(r["verdict"] == "unknown" and r["reason"].startswith("vacuous: no size satisfies") for r in rows)
    code, out, _ = call(str(path))
    assert code == 2 and "(admits no size)" in out.split("assumed:")[1].splitlines()[0]


def test_a_side_condition_leaving_finitely_many_sizes_names_them():
    """2m | n and n ≤ 4: the "assumed:" line names the three sizes it leaves, the same the
    enumeration of every size up to 40 finds (Z3 shows none beyond)."""
    from ringproof.proofs.ring.conditions import admitted
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        path = _zigzag(Path(tmp), requires="lambda P: and_(eq(mod(P.n, 2 * P.m), 0), le(P.n, 4))")
        path.write_text(path.read_text().replace("le, lt, mod, wrap)", "le, lt, mod, wrap, and_)"))
        schedule = load_file(path)
        code, out, err = call(str(path), "--property", "coverage")
    enumerated = schedule.shape.sizes(40)
    assert enumerated == [(2, 1, 2), (4, 1, 4), (4, 2, 4)]
    assert admitted(schedule) == ("finite", enumerated)
    assert code in (0, 2), err
    assumed = out.split("assumed:")[1].splitlines()[0]
    assert assumed.endswith("(admits only n=2, m=1; n=4, m=1; n=4, m=2)"), assumed
    assert admitted(load_file(_zigzag(Path(tempfile.mkdtemp())))) == ("many", [])


def test_figures_are_checked_where_the_side_condition_admits_only_larger_sizes(tmp_path):
    """n ≥ 14: no size n, d ≤ 12 to compare the figures with enumeration at, so they are compared
    at the smallest admitted ones instead (it was an IndexError, and no figure checked)."""
    from ringproof.proofs.figures.counting import check_sizes
    path = tmp_path / "big_matvec.py"
    path.write_text(textwrap.dedent(f'''
        import sys
        from dataclasses import replace
        sys.path.insert(0, {str(EXAMPLES)!r})
        from matvec import SCHEDULE as MATVEC
        from ringproof import ge
        SCHEDULE = replace(MATVEC, name="big-matvec", requires=lambda P: ge(P.n, 14))
    '''))
    sizes = check_sizes(load_file(path).shape)
    assert sizes and all(n >= 14 for n, _, _ in sizes)
    code, out, err = call(str(path), "--property", "counts")
    assert code == 0, err
    assert "spread (max − min active ops over PEs) = 0 for every n" in out


# ------------------------------------------------ a false load claim that agrees on the sizes sampled

def _claiming(tmp_path, base: str, claims: dict, name: str):
    """A user's file: a registered schedule or an example under a name of its own, with claims."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(f'''
        import sys
        from dataclasses import replace
        sys.path.insert(0, {str(EXAMPLES)!r})
        {base}
        SCHEDULE = replace(BASE, name={name!r}, notes={{**BASE.notes, "claims": {{**BASE.notes.get("claims", {{}}), **{claims!r}}}}})
    '''))
    return path


def _refuted_at(path, n, m):
    code, out, err = call(str(path), "--property", "counts", "--json")
    assert code == 1, (code, err, out[-2000:])
    (row,) = json.loads(out)["results"]
    cex = row["counterexample"]
    assert row["verdict"] == "refuted" and (cex["n"], cex["m"]) == (n, m), row["reason"]
    assert cex["replay"]["confirmed"]
    return cex


def test_a_memory_claim_agreeing_up_to_n_24_is_refuted_past_it(tmp_path):
    """Algorithm 1's peak n(3n + 1)/m, claimed with + max(0, n − 24): equal at every size the
    claims were sampled at (n ≤ 12 against the ring model, n ≤ 24 against the form), unknown
    before; Z3 finds where the difference is not 0, n = 25, and the ring model's peak there
    refutes the claim."""
    path = _claiming(tmp_path, "from ringproof import ALGO1 as BASE", {"memory": "n*(3*n + 1)/m + Max(0, n - 24)"},
                     "algo1_memory")
    cex = _refuted_at(path, 25, 1)
    from ringproof.model.ring.trace import build_trace
    from ringproof.proofs.figures.memory.held import peak_per_pe
    assert max(peak_per_pe(build_trace(load_file(path), 25, 1, 25))) == cex["replay"]["measured"] == 25 * 76


def test_a_balance_claim_agreeing_up_to_n_24_is_refuted_past_it(tmp_path):
    """The zigzag's spread is 0; claimed max(0, n − 26), first different at n = 28 (2m | n)."""
    path = _claiming(tmp_path, "from ring_zigzag import SCHEDULE as BASE", {"balance": "Max(0, n - 26)"},
                     "zigzag_balance")
    cex = _refuted_at(path, 28, 1)
    from ringproof.proofs.figures.spread import per_pe, spread_of
    assert spread_of(per_pe(load_file(path), 28, 1, 28)) == cex["replay"]["measured"] == 0


def test_a_claim_equal_in_another_form_is_proved_and_one_z3_cannot_read_names_its_bound():
    """max((m + 3n²)/m, n(3n + 1)/m) is Algorithm 1's peak written otherwise: Z3 shows the
    difference 0 at every size (cross-checked here at every size n ≤ 60). A claim through a size
    defined by a condition (K of matvec-padded) is beyond Z3's reading: unknown, naming n ≤ 24."""
    import sympy
    from ringproof.proofs.figures.counting import M, N, check_claim
    from ringproof.proofs.ring.smt import small_sizes
    from ringproof.schedules.shape import D_IS_N
    peak = N * (3 * N + 1) / M
    claim = "Max((m + 3*n**2)/m, n*(3*n + 1)/m)"
    assert check_claim(peak, claim) is None
    assert all((peak - sympy.sympify(claim, locals={"n": N, "m": M})).subs({N: n, M: m}) == 0
               for n, _, m in small_sizes(D_IS_N, 60))
    from test_derived import PADDED
    from ringproof.proofs.figures.counting import counts, derived_parameters
    c = counts(PADDED)
    bad = check_claim(c.cycles, "n*(n + K)/m + Max(0, K - 8)", shape=PADDED.shape,
                      derived_params=derived_parameters(PADDED))
    assert bad[0] is None
    (r,) = verify(replace(PADDED, notes={"claims": {"cycles": "n*(n + K)/m + Max(0, K - 8)"}}),
                  Options(properties=("counts",)))
    assert r.verdict is Verdict.UNKNOWN and "for every n ≤ 24 only" in r.reason, r.reason


# ------------------------------------------------ a chunk size the side condition makes exact, inline

@pytest.mark.parametrize("chunk", ["lambda P: div(P.k, 2)", "lambda P: div(P.n, 2 * P.m)"])
def test_a_chunk_size_written_inline_proves_as_the_derived_one(tmp_path, chunk):
    """With 2m | n required, the zigzag written with div(k, 2) (or n div 2m) for its chunk size and
    no `derived=` proves every property, with the same counts, balance and memory figures, as the
    one naming h (it was unknown on every property: "product of two values that both involve m");
    cross-checked by the bounded tier at every size n ≤ 8."""
    claims = '{"cycles": "n**3/m", "MAC": "n**2*(n + 1)/2"}'
    named = _zigzag(tmp_path, claims=claims, name="named.py")
    inline = _zigzag(tmp_path, chunk=chunk, derived="", claims=claims, name="inline.py")
    runs = []
    for path in (named, inline):
        code, out, err = call(str(path), "--json")
        assert code == 0, (path.name, err, out[-3000:])
        runs.append(json.loads(out)["results"])
    assert [(r["property"], r["phase"], r["verdict"], r["tier"]) for r in runs[0]] == \
        [(r["property"], r["phase"], r["verdict"], r["tier"]) for r in runs[1]]
    figures = [next(r for r in rs if r["property"] == "counts")["details"] for rs in runs]
    for key in ("cycles", "ops", "balance", "memory"):
        want, got = figures[0][key], figures[1][key]
        if key == "memory":
            want, got = ({k: v for k, v in x.items() if k != "derived_sizes"} for x in (want, got))
        assert want == got, key
    code, _, err = call(str(inline), "--tier", "bounded", "--max-n", "8")
    assert code == 0, err


def test_an_inline_chunk_under_a_side_condition_that_does_not_make_it_exact_is_not_taken(tmp_path):
    """n even does not make 2 divide k: the chunk is not split exactly and the schedule, broken at
    n=2, m=2, is refuted there, never proved."""
    path = _zigzag(tmp_path, requires="lambda P: eq(mod(P.n, 2), 0)", chunk="lambda P: div(P.k, 2)", derived="")
    from ringproof.proofs.ring.properties import shape_of
    assert shape_of(load_file(path))[1] == 1
    code, out, _ = call(str(path), "--property", "coverage", "--json")
    assert code == 1 and {r["verdict"] for r in json.loads(out)["results"]} == {"refuted"}
