"""Run a CNF on a CDCL solver: python-sat's CaDiCaL (or another pysat solver) or Z3's SAT core.

pysat's CaDiCaL cannot be interrupted, so a call with a timeout runs in a forked child process that
is killed when the time is up; the verdict is then UNKNOWN, never a guess. "portfolio" races Kissat
and CaDiCaL in two children on the same CNF (both complete, so either verdict is the answer).
"""

from __future__ import annotations

import multiprocessing
import signal
import multiprocessing.connection
import time

from ringproof.proofs.threads import alone, paused
from ringproof.model.bitlevel.types import SatVerdict
from ringproof.proofs.workers import die_with_parent, starting

DEFAULT_SOLVER = "portfolio"
PORTFOLIO = ("kissat404", "cadical195")  # raced in two processes; the first verdict wins
SOLVERS = ("portfolio", "z3", "cadical103", "cadical153", "cadical195", "gluecard3", "gluecard4",
           "glucose3", "glucose4", "glucose42", "kissat404", "lingeling", "maplechrono", "maplecm",
           "maplesat", "mergesat3", "minicard", "minisat22")   # names `solve` accepts


def _pysat(name: str, clauses: list[list[int]]):
    from pysat.solvers import Solver

    with Solver(name=name, bootstrap_with=clauses) as s:
        return (SatVerdict.SAT, s.get_model()) if s.solve() else (SatVerdict.UNSAT, None)


def _z3(clauses: list[list[int]], nv: int, timeout: float | None):
    import z3

    ctx = z3.Context()
    s = z3.SolverFor("QF_FD", ctx=ctx)
    s.set("random_seed", 0)
    if timeout is not None:
        s.set("timeout", max(1, int(timeout * 1000)))
    v = [None] + [z3.Bool(f"v{k}", ctx) for k in range(1, nv + 1)]
    for c in clauses:
        s.add(z3.Or([v[x] if x > 0 else z3.Not(v[-x]) for x in c], ctx))
    r = s.check()
    if r == z3.sat:
        mdl = s.model()
        return SatVerdict.SAT, [k if z3.is_true(mdl.eval(v[k], model_completion=True)) else -k
                             for k in range(1, nv + 1)]
    return (SatVerdict.UNSAT, None) if r == z3.unsat else (SatVerdict.UNKNOWN, None)


def _child(conn, name, clauses):
    _deaf()
    verdict, model = _pysat(name, clauses)
    conn.send((verdict.value, model))
    conn.close()


def _race(names, clauses, timeout):
    procs, conns = _spawn(_child, [(name, clauses) for name in names])
    verdict, model = SatVerdict.UNKNOWN, None
    try:
        ready = multiprocessing.connection.wait(conns, timeout)
        if ready:
            value, model = ready[0].recv()
            verdict = SatVerdict(value)
    finally:                       # also on Ctrl-C: no solver outlives the search
        _stop(procs, conns)
    return verdict, model


def _deaf() -> None:
    """In a solver child: Ctrl-C is the parent's (it kills its children), and blocked, not only
    ignored: pysat's solve installs its own SIGINT handler, which raised "Caught keyboard interrupt"
    and printed a child's traceback under the parent's "prove: interrupted"."""
    die_with_parent()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _enumerate(conn, name, clauses, count, block):
    """Child: up to `count` models, each sent when found, the next one excluded by `block(model)`;
    None when there is no further model. Kissat is not incremental: one model."""
    _deaf()
    from pysat.solvers import Solver

    with Solver(name=name, bootstrap_with=clauses) as s:
        for k in range(count if name != "kissat404" else 1):
            if k:
                s.add_clause(block(model))
            if not s.solve():
                break
            model = s.get_model()
            conn.send(model)
    conn.send(None)
    conn.close()


def _spawn(target, jobs):
    procs, conns = [], []
    with paused():          # fork from one thread (proofs/threads.py), else from a fork server
        ctx = multiprocessing.get_context("fork" if alone() else "forkserver")
        for job in jobs:
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=target, args=(send,) + tuple(job), daemon=True)
            with starting():    # Ctrl-C held back until the child ignores it (workers.py)
                proc.start()
            send.close()
            procs.append(proc)
            conns.append(recv)
    return procs, conns


def _stop(procs, conns) -> None:
    for proc, conn in zip(procs, conns):
        proc.kill()
        proc.join()
        conn.close()


def _names(solver: str, width: int) -> tuple[str, ...]:
    """The solvers run on one CNF: the portfolio's first `width` (at least one), or `solver`."""
    return PORTFOLIO[:max(1, width)] if solver == "portfolio" else (solver,)


def models(clauses: list[list[int]], nv: int, block, count: int, solver: str = DEFAULT_SOLVER,
           timeout: float | None = None, more: float = 10.0,
           width: int = len(PORTFOLIO)) -> tuple[SatVerdict, list[set[int]], float]:
    """(verdict, up to `count` models as sets of true variables, seconds): the first solver to answer
    decides the verdict; if SAT, its further models (each excluded by `block(model)`, a clause) are
    taken while they come within `more` seconds each (a constant for speed only). Z3: one model.
    `width` bounds the processes (the portfolio's solvers) run at once."""
    start = time.perf_counter()
    if timeout is not None and timeout <= 0:
        return SatVerdict.UNKNOWN, [], 0.0
    if solver == "z3":
        verdict, model, secs = solve(clauses, nv, solver, timeout)
        return verdict, [model] if model else [], secs
    procs, conns = _spawn(_enumerate, [(name, clauses, count, block) for name in _names(solver, width)])
    found: list[set[int]] = []
    try:
        ready = multiprocessing.connection.wait(conns, timeout)
        if not ready:
            return SatVerdict.UNKNOWN, [], time.perf_counter() - start
        conn = ready[0]
        model = conn.recv()
        while model is not None:
            found.append({x for x in model if x > 0})
            if len(found) >= count or not conn.poll(more):
                break
            model = conn.recv()
    except EOFError:   # a child died (e.g. out of memory): what it sent stands, nothing else is guessed
        pass
    finally:
        _stop(procs, conns)
    return (SatVerdict.SAT if found else SatVerdict.UNSAT), found, time.perf_counter() - start


def first_witness(cnfs: list[list[list[int]]], solver: str = DEFAULT_SOLVER, timeout: float | None = None
                  ) -> tuple[int | None, SatVerdict, set[int] | None, float]:
    """Race several CNFs, one process each (solver `solver`, Kissat for portfolio), for a witness:
    (index of the first SAT CNF or None, verdict: SAT, UNSAT when every CNF is, else UNKNOWN, its true
    variables, seconds). An UNSAT CNF drops out of the race; the others go on."""
    start = time.perf_counter()
    if timeout is not None and timeout <= 0:
        return None, SatVerdict.UNKNOWN, None, 0.0
    name = PORTFOLIO[0] if solver == "portfolio" else solver
    procs, conns = _spawn(_child, [(name, c) for c in cnfs])
    live = dict(zip(conns, range(len(cnfs))))
    verdict = SatVerdict.UNSAT
    try:
        while live:
            left = None if timeout is None else max(0.0, timeout - (time.perf_counter() - start))
            ready = multiprocessing.connection.wait(list(live), left)
            if not ready:
                verdict = SatVerdict.UNKNOWN
                break
            for conn in ready:
                k = live.pop(conn)
                try:
                    value, model = conn.recv()
                except EOFError:   # a child died: its CNF is undecided
                    verdict = SatVerdict.UNKNOWN
                    continue
                if SatVerdict(value) is SatVerdict.SAT:
                    return k, SatVerdict.SAT, {x for x in model if x > 0}, time.perf_counter() - start
    finally:
        _stop(procs, conns)
    return None, verdict, None, time.perf_counter() - start


def solve(clauses: list[list[int]], nv: int, solver: str = DEFAULT_SOLVER,
          timeout: float | None = None, width: int = len(PORTFOLIO)) -> tuple[SatVerdict, set[int] | None, float]:
    """(verdict, set of true variables or None, seconds); `width` as in `models`."""
    start = time.perf_counter()
    if timeout is not None and timeout <= 0:
        return SatVerdict.UNKNOWN, None, 0.0
    if solver == "z3":
        verdict, model = _z3(clauses, nv, timeout)
    elif solver == "portfolio":
        verdict, model = _race(_names(solver, width), clauses, timeout)
    elif timeout is None:
        verdict, model = _pysat(solver, clauses)
    else:
        verdict, model = _race((solver,), clauses, timeout)
    true = {x for x in model if x > 0} if model else None
    return verdict, true, time.perf_counter() - start
