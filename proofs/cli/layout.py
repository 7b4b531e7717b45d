"""`prove layout TARGET --against MAP [--max-n N --max-m M]`: a load balancer's index map against
a context-parallel target's token layout at every valid size (proofs/cp/layout.py); for a varlen
target, `[--max-docs D --max-len T --max-m M]` over every lengths vector of packed documents."""

from __future__ import annotations

from ringproof.errors import BadInput
from ringproof.proofs.cli.common import ArgumentParser, Exit, bounded_int, write_json
from ringproof.proofs.cp.adapters import LAYOUT_ADAPTERS, index_map
from ringproof.proofs.cli.targets import layouts, parallel

# the defaults of each kind of target, one place for the help and the checks
SEQUENCE_DEFAULTS = {"max_n": 256, "max_m": 8}
VARLEN_DEFAULTS = {"max_docs": 3, "max_len": 64, "max_m": 4}


def parser() -> ArgumentParser:
    from ringproof.proofs.cp.layout import MAX_PACKED_LEN, VARLEN_LIMIT
    from ringproof.schedules.documents import VARLEN

    p = ArgumentParser(prog="prove layout", description="Check an index map (seq_len, world_size) -> "
                       "0-based positions, whose consecutive seq_len/world_size slices are the tokens "
                       "of ranks 0..world_size-1 in local order, against a target's layout for every "
                       "size the target allows up to the bounds. For a varlen target the map is "
                       "(lengths, world_size) -> positions over the packed documents (in the padded "
                       "sequence where the target pads), checked at every lengths vector within "
                       "--max-docs and --max-len and every world size up to --max-m; where the "
                       "target's side condition fails the map must raise.",
                       epilog="exit codes: 0 equal at every size, 1 a difference (the first (n, m, rank, "
                       "slot) printed; for a varlen target the first (lengths, m, rank, slot) with the "
                       "pairs per rank of both, or a map that answered outside the side condition), "
                       "64 bad input or a map that cannot be imported or called.")
    p.later(lambda: f"one of {', '.join([*layouts(), *VARLEN])} (a -bwd name shares its layout)",
            p.add_argument("target", help="a context-parallel target"))
    p.add_argument("--against", required=True, metavar="MAP",
                   help=f"{', '.join(LAYOUT_ADAPTERS)} or MODULE:CALLABLE (a module name or a .py file)")
    p.add_argument("--max-n", type=bounded_int(1, None, "a sequence length"), default=None,
                   help=f"largest sequence length checked (default {SEQUENCE_DEFAULTS['max_n']}; "
                   "single-sequence targets)")
    p.add_argument("--max-m", type=bounded_int(1, None, "a world size"), default=None,
                   help=f"largest world size checked (default {SEQUENCE_DEFAULTS['max_m']}; "
                   f"{VARLEN_DEFAULTS['max_m']} for a varlen target)")
    p.add_argument("--max-docs", type=bounded_int(1, None, "a number of documents"), default=None,
                   help=f"most documents in a packed sequence (default {VARLEN_DEFAULTS['max_docs']}; "
                   "varlen targets)")
    p.add_argument("--max-len", type=bounded_int(1, MAX_PACKED_LEN, "a packed length"), default=None,
                   help=f"largest packed length T = L_1 + ... + L_D (default {VARLEN_DEFAULTS['max_len']}; "
                   f"varlen targets; at most {VARLEN_LIMIT:,} (lengths, m) pairs in all)")
    p.add_argument("--json", action="store_true", help="the outcome as JSON (docs/json-schemas/layout.json)")
    return p


def main(argv, stdout, stderr) -> int:
    args = parser().parse(argv, stdout)
    if args is None:
        return 0
    from ringproof.schedules.documents import varlen

    v = varlen(args.target)
    if v is not None:
        return _varlen(args, v, stdout)
    for option in ("max_docs", "max_len"):
        if getattr(args, option) is not None:
            raise BadInput(f"layout: --{option.replace('_', '-')} is for a varlen target; "
                           f"{args.target} takes --max-n and --max-m")
    from ringproof.proofs.cp.layout import check_layout

    max_n = args.max_n if args.max_n is not None else SEQUENCE_DEFAULTS["max_n"]
    max_m = args.max_m if args.max_m is not None else SEQUENCE_DEFAULTS["max_m"]
    fn = index_map(args.against)
    check = check_layout(fn, args.target, max_n=max_n, max_m=max_m)
    cp = parallel(args.target)
    bounds = f"n ≤ {max_n}, m ≤ {max_m}, {cp.requires_text}"
    if args.json:
        d = check.difference
        write_json("layout", {
            "target": args.target, "against": args.against, "layout": cp.layout.name, "varlen": False,
            "equal": check.ok, "bounds": {"max_n": max_n, "max_m": max_m}, "requires": cp.requires_text,
            "sizes": check.sizes,
            "difference": None if d is None else {"n": d.n, "m": d.m, "rank": d.rank, "slot": d.slot,
                                                  "expected": d.expected, "got": d.got, "text": str(d)},
        }, stdout)
        return Exit.OK if check.ok else Exit.REFUTED
    if check.ok:
        stdout.write(f"{args.against} equals the {cp.layout.name} layout of {args.target} at all "
                     f"{check.sizes} sizes ({bounds})\n")
        return 0
    stdout.write(f"{args.against} differs from the {cp.layout.name} layout of {args.target}: {check.difference}\n"
                 f"(the first difference: sizes in order of n, then m ({bounds}); equal at the "
                 f"{check.sizes - 1} sizes before it)\n")
    return 1


def _varlen(args, v, stdout) -> int:
    from ringproof.proofs.cp.layout import check_varlen_layout

    if args.max_n is not None:
        raise BadInput(f"layout: --max-n is for a single-sequence target; {args.target} takes "
                       "--max-docs, --max-len and --max-m")
    bounds = {key: getattr(args, key) if getattr(args, key) is not None else value
              for key, value in VARLEN_DEFAULTS.items()}
    from ringproof.proofs.cp.layout import VARLEN_LIMIT, varlen_pairs

    pairs = varlen_pairs(**bounds)
    if pairs > VARLEN_LIMIT:
        raise BadInput(f"layout: --max-docs {bounds['max_docs']} --max-len {bounds['max_len']} --max-m "
                       f"{bounds['max_m']} hold {pairs:,} (lengths, m) pairs, over the limit of "
                       f"{VARLEN_LIMIT:,}: lower a bound")
    fn = index_map(args.against, varlen=True)
    check = check_varlen_layout(fn, args.target, **bounds)
    layout = f"per-document {v.base.layout.name} layout"
    text = (f"D ≤ {bounds['max_docs']}, T ≤ {bounds['max_len']}, m ≤ {bounds['max_m']}, "
            f"{v.requires_text}")
    d = check.difference
    if args.json:
        write_json("layout", {
            "target": args.target, "against": args.against, "layout": v.base.layout.name, "varlen": True,
            "equal": check.ok, "bounds": bounds, "requires": v.requires_text,
            "sizes": check.vectors, "refused": check.refused,
            "difference": None if d is None else {
                "lengths": list(d.lengths), "m": d.m, "rank": d.rank, "slot": d.slot,
                "expected": d.expected, "got": d.got,
                "load_expected": None if d.load_expected is None else list(d.load_expected),
                "load_got": None if d.load_got is None else list(d.load_got),
                "document_expected": d.document_expected, "document_got": d.document_got,
                "answered": d.answered, "text": str(d)},
        }, stdout)
        return Exit.OK if check.ok else Exit.REFUTED
    if check.ok:
        others = "" if v.padded else \
            f" its side condition allows, and refused at all {check.refused:,} others"
        stdout.write(f"{args.against} equals the {layout} of {args.target} at all {check.vectors:,} "
                     f"(lengths, m) pairs{others} ({text})\n")
        return Exit.OK
    stdout.write(f"{args.against} differs from the {layout} of {args.target}: {d}\n"
                 f"(the first difference: lengths vectors in order of D, then T, then the lengths, then m "
                 f"({text}); equal at the {check.vectors - (d.answered is None):,} pairs before it "
                 f"that the side condition allows, refused at the {check.refused:,} others)\n")
    return Exit.REFUTED
