"""A query as a standalone SMT-LIB 2 script, and a second opinion on it from cvc5.

The script asserts, each under a name: the iteration space (`assumption.N`), the hypotheses
(`hypothesis.N`), the negated goal (`negated-goal`) and the instances of the normalization lemmas
the query was built with (`lemma.NAME.N`, each valid on its own). `unsat` means the check holds.
"""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path

import z3

STATS = ("conflicts", "decisions", "propagations", "rlimit count", "max memory")


def script(title: str, assumptions, hypotheses, negated_goal, instances) -> str:
    """The SMT-LIB 2 text of one query (QF_NIA where a lemma instance multiplies variables)."""
    named = [(f"assumption.{i}", a) for i, a in enumerate(assumptions)]
    named += [(f"hypothesis.{i}", h) for i, h in enumerate(hypotheses)]
    named.append(("negated-goal", negated_goal))
    named += [(f"lemma.{name}.{i}", f) for i, (name, f) in enumerate(instances)]
    decls = z3.Solver()
    decls.add(*[f for _, f in named])
    lines = [f"; {title}", "; unsat = the check holds for every n, m", "(set-logic ALL)",
             "(set-option :produce-unsat-cores true)"]
    lines += [ln for ln in decls.sexpr().splitlines() if ln.startswith("(declare-")]
    lines += [f"(assert (! {f.sexpr()} :named {_symbol(n)}))" for n, f in named]
    lines.append("(check-sat)")
    return "\n".join(lines) + "\n"


def _symbol(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9.\-_]", "_", name)


def file_name(title: str, m_value: int | None, text: str) -> str:
    """phase.property.check[.mM].HASH.smt2: readable, and distinct for distinct queries."""
    stem = re.sub(r"_+", "_", _symbol(title)).strip("_") or "query"
    tag = hashlib.sha256(text.encode()).hexdigest()[:8]
    return f"{stem}.{tag}.smt2" if m_value is None else f"{stem}.m{m_value}.{tag}.smt2"


def write(directory: str, title: str, m_value: int | None, text: str) -> str:
    path = Path(directory) / file_name(title, m_value, text)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def z3_statistics(solver: z3.Solver) -> dict:
    """The few Z3 statistics a report shows (numbers only)."""
    st = solver.statistics()
    return {k: st.get_key_value(k) for k in st.keys() if k in STATS}


def check_with_cvc5(text: str, timeout_ms: int) -> dict:
    """cvc5's answer on an SMT-LIB script: {"solver", "version", "answer", "seconds"}."""
    try:
        import cvc5
    except ImportError:
        return {"solver": "cvc5", "version": None, "answer": "unavailable", "seconds": 0.0,
                "reason": "the cvc5 package is not installed (pip install cvc5)"}
    t0 = time.perf_counter()
    solver = cvc5.Solver()
    solver.setOption("tlimit-per", str(int(timeout_ms)))
    symbols = cvc5.SymbolManager(solver.getTermManager())
    parser = cvc5.InputParser(solver, symbols)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "query")
    answer = ""
    while True:
        cmd = parser.nextCommand()
        if cmd.isNull():
            break
        answer = cmd.invoke(solver, symbols).strip() or answer
    return {"solver": "cvc5", "version": cvc5.__version__, "answer": answer or "none",
            "seconds": round(time.perf_counter() - t0, 4)}


def check_with_z3(text: str, timeout_ms: int) -> str:
    """Z3's answer on an SMT-LIB script, parsed afresh (a re-check of an exported file)."""
    s = z3.Solver()
    s.set("timeout", int(timeout_ms))
    s.from_string(text)
    return str(s.check())
