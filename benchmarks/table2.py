"""Table II of Yu & Fujita (masked self-attention) beside the cycles of our Algorithm 3.

    python benchmarks/table2.py

Prints a Markdown table: the paper's Algo.3 and ES columns, our cycle count (ring model run, which
also checks y against numpy), the paper's stated formula, and the two lower bounds "(#ops)/(#PEs)"
the ES values can be read as.
"""

from __future__ import annotations

from fractions import Fraction


from ringproof.model.ring.machine import run  # noqa: E402
from ringproof.proofs.ring.counting import claim_at  # noqa: E402
from ringproof.schedules.algo1 import ALGO1  # noqa: E402
from ringproof.schedules.algo3 import ALGO3, CLAIMS  # noqa: E402

# (n, m): (Algo.1, ES as printed, Algo.3) cycles of Table II
TABLE_II = {(3, 3): (24, "17 (16)", 18), (4, 4): (40, "26 (25)", 32), (5, 5): (60, "36*", 40),
            (6, 3): (168, "84*", 120), (6, 6): (84, "42*", 60), (15, 5): (1440, "768*", 810),
            (15, 15): (480, "256*", 270), (17, 17): (612, "324*", 340)}


def _num(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):.2f}"


def rows():
    for (n, m), (a1, es, a3) in TABLE_II.items():
        r = run(ALGO3, n, m)
        assert r.ok, (n, m, r.violations, r.max_rel_error)
        yield dict(
            size=f"{n}, {m}", a3_paper=a3, a3_ours=r.cycles,
            closed=claim_at(CLAIMS["cycles"], n, m),
            formula=_num(Fraction(n * n * (n + 2) + 2 * n * n, m)),
            es=es, ops=_num(Fraction(n * (n + 1) ** 2, m)), macs=_num(Fraction(n * n * (n + 1), m)),
            a1_paper=a1, a1_ours=run(ALGO1, n, m).cycles)


HEADER = ("(n, m)", "Algo.3 paper", "Algo.3 ours", "(2·(n div 2)+4)·n²/m",
          "paper's n²(n+2)/m+2n²/m", "ES paper", "all ops/m = n(n+1)²/m", "MACs/m = n²(n+1)/m",
          "Algo.1 paper", "Algo.1 ours")


def _mark(ours, paper) -> str:
    return f"{ours} {'✓' if str(ours) == str(paper) else '✗'}"


def table() -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in rows():
        cells = (r["size"], r["a3_paper"], _mark(r["a3_ours"], r["a3_paper"]), r["closed"],
                 _mark(r["formula"], r["a3_paper"]), r["es"], r["ops"], r["macs"], r["a1_paper"],
                 _mark(r["a1_ours"], r["a1_paper"]))
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
