"""Run a CNF on a CDCL solver: python-sat's CaDiCaL (or another pysat solver) or Z3's SAT core.

pysat's CaDiCaL cannot be interrupted, so a call with a timeout runs in a forked child process that
is killed when the time is up; the verdict is then UNKNOWN, never a guess. "portfolio" races Kissat
and CaDiCaL in two children on the same CNF (both complete, so either verdict is the answer).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import time

from ringproof.model.bitlevel.types import Verdict
from ringproof.proofs.workers import die_with_parent

DEFAULT_SOLVER = "portfolio"
PORTFOLIO = ("kissat404", "cadical195")  # raced in two processes; the first verdict wins
SOLVERS = ("portfolio", "z3", "cadical103", "cadical153", "cadical195", "gluecard3", "gluecard4",
           "glucose3", "glucose4", "glucose42", "kissat404", "lingeling", "maplechrono", "maplecm",
           "maplesat", "mergesat3", "minicard", "minisat22")   # names `solve` accepts


def _pysat(name: str, clauses: list[list[int]]):
    from pysat.solvers import Solver

    with Solver(name=name, bootstrap_with=clauses) as s:
        return (Verdict.SAT, s.get_model()) if s.solve() else (Verdict.UNSAT, None)


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
        return Verdict.SAT, [k if z3.is_true(mdl.eval(v[k], model_completion=True)) else -k
                             for k in range(1, nv + 1)]
    return (Verdict.UNSAT, None) if r == z3.unsat else (Verdict.UNKNOWN, None)


def _child(conn, name, clauses):
    die_with_parent()
    verdict, model = _pysat(name, clauses)
    conn.send((verdict.value, model))
    conn.close()


def _race(names, clauses, timeout):
    ctx = multiprocessing.get_context("fork")
    procs, conns = [], []
    for name in names:
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(send, name, clauses), daemon=True)
        proc.start()
        send.close()
        procs.append(proc)
        conns.append(recv)
    verdict, model = Verdict.UNKNOWN, None
    try:
        ready = multiprocessing.connection.wait(conns, timeout)
        if ready:
            value, model = ready[0].recv()
            verdict = Verdict(value)
    finally:                       # also on Ctrl-C: no solver outlives the search
        for proc, conn in zip(procs, conns):
            proc.kill()
            proc.join()
            conn.close()
    return verdict, model


def solve(clauses: list[list[int]], nv: int, solver: str = DEFAULT_SOLVER,
          timeout: float | None = None) -> tuple[Verdict, set[int] | None, float]:
    """(verdict, set of true variables or None, seconds)."""
    start = time.perf_counter()
    if timeout is not None and timeout <= 0:
        return Verdict.UNKNOWN, None, 0.0
    if solver == "z3":
        verdict, model = _z3(clauses, nv, timeout)
    elif solver == "portfolio":
        verdict, model = _race(PORTFOLIO, clauses, timeout)
    elif timeout is None:
        verdict, model = _pysat(solver, clauses)
    else:
        verdict, model = _race((solver,), clauses, timeout)
    true = {x for x in model if x > 0} if model else None
    return verdict, true, time.perf_counter() - start
