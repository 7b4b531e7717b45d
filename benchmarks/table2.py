"""Table II of Yu & Fujita (masked self-attention) beside the cycles of our Algorithm 3.

    python benchmarks/table2.py

Prints a Markdown table: the paper's Algo.3 and ES columns, our cycle count (ring model run, which
also checks y against numpy), the paper's stated formula, and the two lower bounds "(#ops)/(#PEs)"
the ES values can be read as (rows computed by `ringproof.proofs.report.paper.table_ii`).
"""

from __future__ import annotations

from ringproof.proofs.report.paper import table_ii

HEADER = ("(n, m)", "Algo.3 paper", "Algo.3 ours", "(2·(n div 2)+4)·n²/m",
          "paper's n²(n+2)/m+2n²/m", "ES paper", "all ops/m = n(n+1)²/m", "MACs/m = n²(n+1)/m",
          "Algo.1 paper", "Algo.1 ours")


def _mark(ours, paper) -> str:
    return f"{ours} {'✓' if str(ours) == str(paper) else '✗'}"


def table() -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in table_ii():
        assert r["ours_valid"], (r["n"], r["m"])
        cells = (f"{r['n']}, {r['m']}", r["paper"], _mark(r["ours"], r["paper"]), r["closed_form"],
                 _mark(r["paper_formula"], r["paper"]), r["paper_es"], r["all_ops_per_pe"], r["macs_per_pe"],
                 r["algo1_paper"], _mark(r["algo1_ours"], r["algo1_paper"]))
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
