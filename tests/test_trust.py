"""A verifier that never lies and never crashes (issue #12): the formula proved is the formula
that runs; every bad input is one line with its exit code."""

import io
import textwrap

import pytest

from ringproof import BadInput, eq, mod, same, var
from ringproof.proofs.cli import main
from ringproof.proofs.ring.formulas import check_formulas
from ringproof.schedules.expr import Term


def call(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


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
    assert "test_trust.py:" in str(err.value) and helper in str(err.value)


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


# ----------------------------------------------------------------------------- no tracebacks

STEP_FILE = textwrap.dedent('''\
    from dataclasses import replace
    from ringproof import ALGO1, Loop
    from ringproof.schedules import algo1
    _o = ALGO1.phases[0]
    def step(P, ix):
        st = _o.step.__wrapped__(P, ix)
        {body}
    SCHEDULE = replace(ALGO1, name="x", phases=(replace(_o, step=step{extra}),) + ALGO1.phases[1:])
    ''')


MALFORMED = [   # (body, extra, what the one line says): bad input to the prover and the simulator
    ("return None", "", "must return a Step"),
    ("return replace(st, target=algo1.w1[st.target.idx[0], 1.5])", "", "must be an integer formula"),
    ("return replace(st, target=algo1.w1[st.target.idx[0], 'x'])", "", "must be an integer formula"),
    ("return st", ", loops=(Loop('h', 1, 'q'),) + _o.loops[1:]", "is not an int, 'n'"),
    ("return st", ", loops=(Loop('h', 1, 2.5),) + _o.loops[1:]", "is not an int, 'n'"),
]
REFUSED = [    # Python operators on index values: fine on ints, refused on the prover's terms
    ("return st", ", loops=(Loop('h', 1, lambda P, ix: P.n / 2),) + _o.loops[1:]", "div(a, b)"),
    ("return replace(st, pe=ix.l % P.m)", "", "mod(a, b)"),
    ("return replace(st, pe=ix.l // 1)", "", "div(a, b)"),
    ("return replace(st, guard=ix.l < 2)", "", "lt(a, b)"),
]


@pytest.mark.parametrize("command", ["prove", "simulate"])
@pytest.mark.parametrize("body,extra,needle", MALFORMED + REFUSED)
def test_malformed_steps_are_one_line_exit_64(tmp_path, body, extra, needle, command):
    if command == "simulate" and (body, extra, needle) in REFUSED:
        pytest.skip("runs on ints")
    path = tmp_path / "bad.py"
    path.write_text(STEP_FILE.format(body=body, extra=extra))
    argv = ["simulate", str(path), "-n", "4", "-m", "2"] if command == "simulate" else \
        [str(path), "--property", "coverage"]
    code, out, err = call(*argv)
    assert code == 64, (out, err)
    line = one_line_error(err)
    assert str(path) in line and needle in line


@pytest.mark.parametrize("argv,needle", [
    (["README.md"], "not a schedule file"),
    (["a" * 5000 + ".py"], "cannot read schedule file"),
    (["a" * 5000], "unknown target"),
    (["algo1", "--timeout", "nan"], "positive, finite"),
    (["algo1", "--timeout", "inf"], "positive, finite"),
    (["algo1", "--jobs", "-3"], "--jobs"),
    (["search", "plain", "-n", "4", "-m", "2", "--solver", "bogus"], "invalid choice"),
    (["search", "plain", "-n", "4", "-m", "2", "--timeout", "nan"], "positive, finite"),
    (["search", "plain", "-n", "5", "-m", "2"], "m must divide n"),
    (["simulate", "algo1", "-n", "4", "-m", "2", "--seed", "-1"], "--seed"),
    (["report", "algo1", "--tier", "per-m", "--max-m", "-2"], "--max-m"),
    (["simulate", "algo1", "-n", "1000000000", "-m", "1000"], "limited to 1.5 GiB"),
    (["simulate", "algo1", "-n", str(10 ** 12), "-m", "1000"], "limited to 1.5 GiB"),
    (["report", "algo1", "-n", "1000000000", "-m", "1000"], "limited to n ≤"),
    (["algo1", "--tier", "bounded", "--max-n", "100000"], "limited to n ≤"),
    (["unroll", "--pes", str(10 ** 30)], "at most"),
    (["unroll", "--pes", "2097152"], "too many spatial unrollings"),
    (["balance", "notes.txt"], "not an instance file"),
])
def test_found_inputs_are_one_line_exit_64(argv, needle, tmp_path, monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "README.md").write_text("# not a schedule\n")
    (tmp_path / "notes.txt").write_text("hello\n")
    code, out, err = call(*argv)
    assert code == 64, (argv, out, err)
    assert needle in one_line_error(err)
    assert len(err) < 400
    assert Path(tmp_path).exists()


def test_balance_rejects_an_instance_without_patches(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("bank0,bank1\n")
    code, out, err = call("balance", str(path))
    assert code == 64 and "no patches" in one_line_error(err)


def test_broken_pipe_is_quiet():
    import subprocess
    import sys
    from pathlib import Path

    prove = Path(sys.executable).parent / "prove"
    proc = subprocess.run(f"{prove} unroll --pes 256 | head -1",
                          shell=True, capture_output=True, text=True, timeout=120)
    assert proc.stdout.startswith("PE array of 256") and proc.stderr == "", proc.stderr


# ----------------------------------------------------------------------------- Ctrl-C

def _live(group: int) -> list[str]:
    import subprocess

    ps = subprocess.run(["ps", "-o", "pid=,stat=", "-g", str(group)], capture_output=True, text=True)
    return [line for line in ps.stdout.splitlines() if line.split()[1][0] != "Z"]


def _interrupting_command(monkeypatch, body):
    """`prove algo1` whose verification runs `body` instead (in this process)."""
    from ringproof.proofs.cli import verify

    monkeypatch.setattr(verify, "main", lambda argv, out, err: body())


def _ctrl_c():
    """What Python's SIGINT handler does (`prove`'s own); not a real signal, whose wakeup byte would
    also cancel Z3's context in this process for the tests that follow."""
    import signal

    from ringproof.proofs import interrupts

    interrupts._on_sigint(signal.SIGINT, None)


def test_a_ctrl_c_swallowed_by_a_finalizer_still_ends_in_130(monkeypatch):
    """Python cannot raise a KeyboardInterrupt inside __del__ (Z3's objects have one): the command
    must not go on to report what it computed, nor print the ignored exception."""
    class Finalized:
        def __del__(self):
            _ctrl_c()                 # inside the finalizer: Python cannot raise it here

    def body():
        Finalized()
        return 0

    _interrupting_command(monkeypatch, body)
    code, _, err = call("algo1")
    assert code == 130 and err.strip() == "prove: interrupted", err


def test_an_error_after_a_ctrl_c_is_an_interrupt_not_an_internal_error(monkeypatch):
    """Z3 answers an interrupted call with its own error ("push canceled"), ctypes wraps a
    KeyboardInterrupt in ArgumentError: after a Ctrl-C, either is exit 130."""
    def body():
        try:
            _ctrl_c()
        except KeyboardInterrupt:
            raise RuntimeError("push canceled") from None
        return 0

    _interrupting_command(monkeypatch, body)
    code, _, err = call("algo1")
    assert code == 130 and err.strip() == "prove: interrupted", err
    code, _, _ = call("simulate", "algo1", "-n", "4", "-m", "2")     # the next command starts afresh
    assert code == 0


# It ended by SIGINT (-2) in a loaded full run: a Ctrl-C swallowed by a Z3 finalizer, or turned
# into ctypes' ArgumentError or Z3's "canceled" (the tests above), now all exit 130.
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_stops_within_a_second_and_leaves_no_worker(jobs):
    """SIGINT to the whole process group, as a terminal's Ctrl-C sends it, in the middle of the
    parametric proofs (in-process Z3 with --jobs 1, a pool of workers with --jobs 2)."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    prove = Path(sys.executable).parent / "prove"
    # per-m with many m: thousands of queries, still running when the interrupt comes
    proc = subprocess.Popen([str(prove), "algo2", "--tier", "per-m", "--max-m", "64", "--jobs", jobs], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(6)
    assert proc.poll() is None, "finished before the interrupt: the test would prove nothing"
    start = time.perf_counter()
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    stopped = time.perf_counter() - start
    assert proc.returncode == 130 and err.strip() == "prove: interrupted", err
    assert stopped < 3.0, stopped          # a second idle; some slack for a loaded machine
    time.sleep(0.5)
    assert _live(proc.pid) == []


# ----------------------------------------------------------------------------- strict JSON

SCHEMAS = __import__("pathlib").Path(__file__).parent.parent / "docs" / "json-schemas"


def strict_json(text: str):
    import json

    def refuse(token):
        raise AssertionError(f"non-strict JSON constant {token}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("schema,argv", [
    ("prove", ["algo1-printed", "--property", "ring-locality", "--json"]),
    ("prove", ["algo1", "--property", "coverage", "--json", "--tier", "bounded", "--max-n", "4"]),
    ("simulate", ["simulate", "algo1-printed", "-n", "4", "-m", "2", "--json"]),
    ("simulate", ["simulate", "algo1", "-n", "4", "-m", "2", "--json"]),
    ("../report.schema", ["report", "algo1", "--format", "json", "--tier", "bounded", "--max-n", "4",
                          "--property", "coverage"]),
    ("search", ["search", "plain", "-n", "2", "-m", "1", "--json"]),
    ("balance", ["balance", "--patches", "8", "--clusters", "4", "--json"]),
    ("unroll", ["unroll", "--pes", "256", "--json"]),
])
def test_json_is_strict_and_follows_its_schema(schema, argv):
    import json

    import jsonschema

    code, out, err = call(*argv)
    assert code in (0, 1), err
    doc = strict_json(out)
    jsonschema.validate(doc, json.loads((SCHEMAS / f"{schema}.json").read_text()))
    assert doc["schema_version"] == 1


def test_an_infinite_error_is_null_with_a_reason():
    code, out, _ = call("simulate", "algo1-printed", "-n", "4", "-m", "2", "--json")
    doc = strict_json(out)
    assert code == 1 and doc["max_rel_error"] is None and "finite" in doc["max_rel_error_reason"]


def test_every_schema_is_a_valid_schema():
    import json

    import jsonschema

    for path in SCHEMAS.glob("*.json"):
        jsonschema.Draft202012Validator.check_schema(json.loads(path.read_text()))


# ----------------------------------------------------------------------------- lemma cache

@pytest.mark.parametrize("content", ["[1, 2, 3]", "7", '{"abc": true}', '{"' + "0" * 64 + '": "yes"}',
                                     "not json", ""])
def test_a_lemma_cache_of_the_wrong_shape_is_rebuilt(tmp_path, monkeypatch, content):
    import json

    from ringproof.proofs.ring import lemmas

    monkeypatch.setenv("RINGPROOF_CACHE", str(tmp_path))
    (tmp_path / "lemmas.json").write_text(content)
    results = lemmas.prove_library(timeout_ms=60000)
    assert all(r.proved and not r.cached for r in results), [r for r in results if not r.proved or r.cached]
    cache = json.loads((tmp_path / "lemmas.json").read_text())
    assert isinstance(cache, dict) and len(cache) == len(results) and set(cache.values()) == {True}
    assert all(r.cached for r in lemmas.prove_library(timeout_ms=60000))


# ----------------------------------------------------------------------------- findings

WRONG_PREV = textwrap.dedent('''\
    from dataclasses import replace
    from ringproof import ALGO1, At
    _o = ALGO1.phases[0]
    def step(P, ix):
        st = _o.step.__wrapped__(P, ix)
        return replace(st, prev=At("phase1", dict(h=ix.h, i=ix.i, j=ix.j - 1, l=ix.l)))
    SCHEDULE = replace(ALGO1, name="bad-witness", phases=(replace(_o, step=step),) + ALGO1.phases[1:])
    ''')


def test_a_witness_only_refutation_says_so_and_its_replay_refutes_again(tmp_path):
    import re

    path = tmp_path / "witness.py"
    path.write_text(WRONG_PREV)
    code, out, err = call(str(path), "--property", "ring-locality")
    assert code == 1, err
    head = re.search(rf"^{re.escape(str(path))}:4: refuted ring-locality/phase1 at n=(\d+), m=(\d+): ",
                     out, re.M)
    assert head, out
    assert "computes the right result" in out and "only a witness is wrong" in out
    replay = re.search(r"replay: prove (.*)$", out, re.M).group(1).split()
    assert replay[-4:] == ["-n", head.group(1), "-m", head.group(2)]
    code, again, err = call(*replay)
    assert code == 1 and "refuted" in again, err


def test_a_real_bug_is_not_called_witness_only():
    code, out, _ = call("algo1-printed", "--property", "ring-locality")
    assert code == 1 and "schedules/algo1.py:" in out and "only a witness" not in out


def test_counts_print_readably_and_keep_the_full_form_in_json():
    import json

    code, out, err = call("algo2", "--property", "counts")
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("cycles = "))
    assert len(line) < 400 and "Piecewise" not in line, line
    code, out, _ = call("algo2", "--property", "counts", "--json")
    details = json.loads(out)["results"][0]["details"]
    assert "Piecewise" in details["cycles"] and details["readable"]["cycles"] in line


# ----------------------------------------------------------------------------- progress

class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("flags,shown", [((), True), (("--quiet",), False), (("--json",), False)])
def test_progress_only_on_a_terminal_and_not_with_json_or_quiet(flags, shown):
    out, err = io.StringIO(), _Terminal()
    code = main(["algo1", "--tier", "bounded", "--max-n", "4", "--property", "coverage", *flags], out, err)
    assert code == 0
    assert ("\r" in err.getvalue() and "enumerating" in err.getvalue()) == shown
    assert err.getvalue().split("\r")[-1].strip() == ""    # the line is cleared when the work is done
    _, _, plain = call("algo1", "--tier", "bounded", "--max-n", "4", "--property", "coverage")
    assert plain == ""                           # not a terminal: nothing


# ----------------------------------------------------------------------------- determinism

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


# ----------------------------------------------------------------------------- literal sizes

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
