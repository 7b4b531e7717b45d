"""Algorithm 2 against the paper's Table I: prints a Markdown table (pasted in docs/algo2.md).

    python benchmarks/table1.py

Per row: the paper's Algo.2 and ES cycles, this schedule's cycles (enumerated trace and closed
form), the arithmetic ops per PE (MAC + EAC + DIV)/m, the cycles spent beyond them, and the reason
for any difference from the paper (rows computed by `ringproof.proofs.report.paper.table_i`).
"""

from __future__ import annotations

from ringproof.proofs.report.paper import table_i

HEAD = ["(n,m)", "paper Algo.2", "algo2 (trace)", "closed form", "(#ops)/m",
        "cycles beyond ops", "paper ES", "algo2 − paper", "why"]


def main():
    lines = ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    for r in table_i():
        d = r["difference"]
        cells = [f"({r['n']},{r['m']})", r["paper"], r["ours"], r["closed_form"], r["ops_per_pe"],
                 r["beyond_ops"], r["paper_es"], f"{d:+d}" if d else "0", r["why"]]
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
