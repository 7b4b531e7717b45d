"""`prove bound VARIANT`: the lower bound on the cycles of the bit-level machine as a closed form in
n, m, d, proved for every n, d and m | n (docs/optimal.md §1).

Exit codes: 0 every lemma proved, 2 a lemma not proved (the bound is then not claimed), 64 bad input.
"""

from __future__ import annotations

from ringproof.errors import Exit
from ringproof.model.bitlevel.types import VARIANTS
from ringproof.proofs.cli.common import ArgumentParser, write_json


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="prove bound", description=__doc__.split("\n\n")[0],
                       epilog="exit codes: 0 proved, 2 a lemma not proved, 64 bad input")
    p.add_argument("variant", choices=VARIANTS)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def main(argv, stdout, stderr) -> int:
    args = parser().parse(argv, stdout)
    if args is None:
        return Exit.OK
    from ringproof.proofs.search.bound import prove_bound

    proof = prove_bound(args.variant)
    if args.json:
        write_json("bound", proof.as_dict(), stdout, indent=None)
    else:
        verdict = "proved" if proof.proved else "NOT proved"
        print(f"{proof.variant} attention: T >= {proof.bound}  ({verdict} for all n, d >= 1, m | n; "
              f"{proof.seconds:.2f} s)", file=stdout)
        width = max(len(s.name) for s in proof.steps)
        for s in proof.steps:
            rests = f"  [rests on {', '.join(s.rests_on)}]" if s.rests_on else ""
            print(f"  {s.name.ljust(width)}  {'proved' if s.proved else 'NOT proved':10}  {s.method}: "
                  f"{s.statement}{rests}", file=stdout)
    return Exit.OK if proof.proved else Exit.UNKNOWN
