"""`prove layout TARGET --against MAP [--max-n N --max-m M]`: a load balancer's index map against
a context-parallel target's token layout at every valid size (proofs/cp/layout.py)."""

from __future__ import annotations

from ringproof.proofs.cli.common import ArgumentParser, bounded_int
from ringproof.proofs.cp.adapters import LAYOUT_ADAPTERS, index_map
from ringproof.schedules.context_parallel import SCHEDULES


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="prove layout", description="Check an index map (seq_len, world_size) -> "
                       "0-based positions, whose consecutive seq_len/world_size slices are the tokens "
                       "of ranks 0..world_size-1 in local order, against a target's layout for every "
                       "size the target allows up to the bounds.",
                       epilog="exit codes: 0 equal at every size, 1 a difference (the first (n, m, rank, "
                       "slot) printed), 64 bad input or a map that cannot be imported or called.")
    p.add_argument("target", help=f"one of {', '.join(SCHEDULES)} (a -bwd name shares its layout)")
    p.add_argument("--against", required=True, metavar="MAP",
                   help=f"{', '.join(LAYOUT_ADAPTERS)} or MODULE:CALLABLE (a module name or a .py file)")
    p.add_argument("--max-n", type=bounded_int(1, None, "a sequence length"), default=256,
                   help="largest sequence length checked (default 256)")
    p.add_argument("--max-m", type=bounded_int(1, None, "a world size"), default=8,
                   help="largest world size checked (default 8)")
    return p


def main(argv, stdout, stderr) -> int:
    args = parser().parse(argv, stdout)
    if args is None:
        return 0
    from ringproof.proofs.cp.layout import check_layout

    fn = index_map(args.against)
    check = check_layout(fn, args.target, max_n=args.max_n, max_m=args.max_m)
    cp = SCHEDULES[args.target.removesuffix("-bwd")]
    bounds = f"n ≤ {args.max_n}, m ≤ {args.max_m}, {cp.requires_text}"
    if check.ok:
        stdout.write(f"{args.against} equals the {cp.layout.name} layout of {args.target} at all "
                     f"{check.sizes} sizes ({bounds})\n")
        return 0
    stdout.write(f"{args.against} differs from the {cp.layout.name} layout of {args.target}: {check.difference}\n"
                 f"(the first difference: sizes in order of n, then m ({bounds}); equal at the "
                 f"{check.sizes - 1} sizes before it)\n")
    return 1
