"""`prove layout TARGET --against MAP [--max-n N --max-m M]`: a load balancer's index map against
a context-parallel target's token layout at every valid size (proofs/cp/layout.py); for a varlen
target, `[--max-docs D --max-len T --max-m M]` over every lengths vector of packed documents; for
`permutation` (`permutation-varlen`), a balancer that is no registered layout: a permutation at every
size, the layouts it equals and its balance beside head-tail's (`--table`: per size)."""

from __future__ import annotations

from ringproof.errors import BadInput
from ringproof.proofs.cli.common import ArgumentParser, Exit, bounded_int, write_json
from ringproof.proofs.cp.adapters import LAYOUT_ADAPTERS, index_map
from ringproof.proofs.cli.targets import layouts, parallel

# the defaults of each kind of target, one place for the help and the checks
SEQUENCE_DEFAULTS = {"max_n": 256, "max_m": 8}
VARLEN_DEFAULTS = {"max_docs": 3, "max_len": 64, "max_m": 4}
PERMUTATION_DEFAULTS = {"max_n": 1024, "max_m": 8}
PERMUTATION_VARLEN_DEFAULTS = {"max_docs": 2, "max_len": 512, "max_m": 4, "step": 32}


def parser() -> ArgumentParser:
    from ringproof.proofs.cp.layout import MAX_PACKED_LEN, PERMUTATION, PERMUTATION_VARLEN, VARLEN_LIMIT
    from ringproof.schedules.documents import VARLEN

    p = ArgumentParser(prog="prove layout", description="Check an index map (seq_len, world_size) -> "
                       "0-based positions, whose consecutive seq_len/world_size slices are the tokens "
                       "of ranks 0..world_size-1 in local order, against a target's layout for every "
                       "size the target allows up to the bounds. For a varlen target the map is "
                       "(lengths, world_size) -> positions over the packed documents (in the padded "
                       "sequence where the target pads), checked at every lengths vector within "
                       "--max-docs and --max-len and every world size up to --max-m; where the "
                       "target's side condition fails the map must raise. For permutation "
                       "(permutation-varlen, lengths multiples of --len-step) the map must be a "
                       "permutation of the tokens in equal slices, the same on a second call, where it "
                       "answers (an adapter: inside its domain); the layouts it equals and the pairs per "
                       "rank under the causal (document-causal) mask beside head-tail's are printed.",
                       epilog="exit codes: 0 equal at every size, 1 a difference (the first (n, m, rank, "
                       "slot) printed; for a varlen target the first (lengths, m, rank, slot) with the "
                       "pairs per rank of both, or a map that answered outside the side condition), "
                       "64 bad input or a map that cannot be imported or called; for permutation: 0 a "
                       "permutation wherever it answered, 1 the first size where it is not, 64 as above or "
                       "a map that answered nowhere.")
    p.later(lambda: f"one of {', '.join([*layouts(), *VARLEN, PERMUTATION, PERMUTATION_VARLEN])} "
                    "(a -bwd name shares its layout)",
            p.add_argument("target", help="a context-parallel target"))
    p.add_argument("--against", required=True, metavar="MAP",
                   help=f"{', '.join(LAYOUT_ADAPTERS)} or MODULE:CALLABLE (a module name or a .py file)")
    p.add_argument("--max-n", type=bounded_int(1, None, "a sequence length"), default=None,
                   help=f"largest sequence length checked (default {SEQUENCE_DEFAULTS['max_n']}; "
                   f"single-sequence targets; {PERMUTATION_DEFAULTS['max_n']} for permutation)")
    p.add_argument("--max-m", type=bounded_int(1, None, "a world size"), default=None,
                   help=f"largest world size checked (default {SEQUENCE_DEFAULTS['max_m']}; "
                   f"{VARLEN_DEFAULTS['max_m']} for a varlen target)")
    p.add_argument("--max-docs", type=bounded_int(1, None, "a number of documents"), default=None,
                   help=f"most documents in a packed sequence (default {VARLEN_DEFAULTS['max_docs']}; "
                   f"varlen targets; {PERMUTATION_VARLEN_DEFAULTS['max_docs']} for permutation-varlen)")
    p.add_argument("--max-len", type=bounded_int(1, MAX_PACKED_LEN, "a packed length"), default=None,
                   help=f"largest packed length T = L_1 + ... + L_D (default {VARLEN_DEFAULTS['max_len']}; "
                   f"{PERMUTATION_VARLEN_DEFAULTS['max_len']} for permutation-varlen; "
                   f"varlen targets; at most {VARLEN_LIMIT:,} (lengths, m) pairs in all)")
    p.add_argument("--len-step", type=bounded_int(1, MAX_PACKED_LEN, "a length step"), default=None,
                   help=f"every document length a multiple of it (permutation-varlen; default "
                   f"{PERMUTATION_VARLEN_DEFAULTS['step']})")
    p.add_argument("--table", action="store_true",
                   help="permutation targets: the balance per size (permutation-varlen: per (T, m))")
    p.add_argument("--json", action="store_true", help="the outcome as JSON (docs/json-schemas/layout.json)")
    return p


def main(argv, stdout, stderr) -> int:
    args = parser().parse(argv, stdout)
    if args is None:
        return 0
    from ringproof.schedules.documents import varlen

    from ringproof.proofs.cp.layout import PERMUTATION, PERMUTATION_VARLEN

    if args.target in (PERMUTATION, PERMUTATION_VARLEN):
        return _permutation(args, stdout)
    for option in ("len_step", "table"):
        if getattr(args, option) not in (None, False):
            raise BadInput(f"layout: --{option.replace('_', '-')} is for {PERMUTATION} and "
                           f"{PERMUTATION_VARLEN}; {args.target} is a layout target")
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


# --------------------------------------------------------------------------- permutation targets

def _permutation(args, stdout) -> int:
    """`prove layout permutation[-varlen] --against MAP`: the map a permutation at every size where
    it answers (an adapter: inside its domain), the layouts it equals, its balance beside head-tail's."""
    from ringproof.proofs.cp.layout import PERMUTATION_VARLEN, check_permutation, check_permutation_varlen

    packed = args.target == PERMUTATION_VARLEN
    defaults = PERMUTATION_VARLEN_DEFAULTS if packed else PERMUTATION_DEFAULTS
    given = {"max_n": args.max_n, "max_m": args.max_m, "max_docs": args.max_docs,
             "max_len": args.max_len, "step": args.len_step}
    for key, value in given.items():
        if value is not None and key not in defaults:
            option = "--len-step" if key == "step" else f"--{key.replace('_', '-')}"
            raise BadInput(f"layout: {option} is not an option of {args.target}; it takes "
                           f"{', '.join('--len-step' if k == 'step' else '--' + k.replace('_', '-') for k in defaults)}")
    bounds = {key: given[key] if given[key] is not None else value for key, value in defaults.items()}
    fn = index_map(args.against, varlen=packed)
    row = LAYOUT_ADAPTERS.get(args.against)
    domain = (row.domain, row.domain_text) if row is not None and row.domain is not None else (None, "")
    check = (check_permutation_varlen if packed else check_permutation)(
        fn, **bounds, domain=domain[0], domain_text=domain[1])
    if args.json:
        write_json("layout", _permutation_json(args, check), stdout)
        return Exit.OK if check.ok else Exit.REFUTED
    stdout.write(_permutation_text(args.against, check, packed, args.table))
    return Exit.OK if check.ok else Exit.REFUTED


def _bounds_text(check, packed: bool) -> str:
    b = check.bounds
    text = (f"D ≤ {b['max_docs']}, T ≤ {b['max_len']}, lengths multiples of {b['step']}, m ≤ {b['max_m']}"
            if packed else f"n ≤ {b['max_n']}, m ≤ {b['max_m']}")
    return text + (f", {check.domain_text}" if check.domain_text else (", m | T" if packed else ", m | n"))


def _ratio(work) -> str:
    from ringproof.proofs.cp.layout import max_over_mean

    value = max_over_mean(work)
    return "-" if value is None else f"{value:.4f}"


# the figures of a permutation target's rows: (label, JSON key, the row's per-rank counts)
def _metrics(against: str, packed: bool):
    against = against if against in LAYOUT_ADAPTERS else "map"
    rows = [(against, "work", lambda r: r.work), ("head-tail", "head_tail", lambda r: r.head_tail)]
    if packed:
        rows.append(("per-document head-tail", "per_document", lambda r: r.per_document))
    tiles = [(against, "tiles", lambda r: r.tiles), ("head-tail", "head_tail_tiles", lambda r: r.head_tail_tiles)]
    if packed:
        tiles.append(("per-document head-tail", "per_document_tiles", lambda r: r.per_document_tiles))
    return rows, tiles


def _values(rows, key):
    from ringproof.proofs.cp.layout import max_over_mean

    return [(max_over_mean(key(r)), r) for r in rows if max_over_mean(key(r)) is not None]


def _summary(name: str, rows, key) -> str:
    """The worst and the mean over `rows` of max/mean of `key(row)` (rows where it is defined)."""
    values = _values(rows, key)
    if not values:
        return f"{name} -"
    worst, at = max(values, key=lambda pair: pair[0])
    mean = sum(v for v, _ in values) / len(values)
    where = f"n={at.n}" if at.lengths is None else f"lengths {','.join(map(str, at.lengths))}"
    return f"{name} worst {worst:.4f} (at {where}, m={at.m}), mean {mean:.4f} over {len(values):,}"


def _versus(rows, mine, theirs) -> tuple[int, int, int]:
    """Sizes where the map's busiest rank has fewer, as many, more than the other layout's."""
    pairs = [(max(mine(r)), max(theirs(r))) for r in rows if mine(r) is not None and theirs(r) is not None]
    return (sum(a < b for a, b in pairs), sum(a == b for a, b in pairs), sum(a > b for a, b in pairs))


def _permutation_text(against: str, check, packed: bool, table: bool) -> str:
    unit = "(lengths, m) pairs" if packed else "sizes"
    bounds = _bounds_text(check, packed)
    if not check.ok:
        return (f"{against} is not a permutation: {check.fault}\n(the first fault: {unit} smallest first "
                f"({bounds}); a permutation at the {check.sizes - 1:,} before it)\n")
    skipped = []
    if check.refused:
        skipped.append(f"it raised at {check.refused:,} (refused)")
    if check.outside:
        skipped.append(f"{check.outside:,} outside its domain not called")
    lines = [f"{against} is a permutation (every token once, each rank the same count, the same "
             f"on a second call) at all {check.sizes:,} {unit} where it answered ({bounds})"
             + (f"; {', '.join(skipped)}" if skipped else "")]
    counts = check.layout_counts()
    named = [f"{name} at {count:,}" for name, count in counts.items() if name != "none"]
    none = counts.get("none", 0)
    lines.append("layouts: " + (", ".join(named) if named else "no registered layout anywhere")
                 + (f"; none of ringproof's layouts at {none:,} (no ring schedule here assumes it "
                    "there)" if none else ""))
    mask = "document-causal" if packed else "causal"
    pairs, tiles = _metrics(against, packed)
    for what, metric in ((f"pairs per rank under the {mask} mask", pairs),
                         ("non-empty 128x128 tiles per rank (flex attention's work)", tiles)):
        lines.append(f"balance, {what}, max/mean: " + "; ".join(
            _summary(against if i == 0 else name, check.rows, key) for i, (name, _, key) in enumerate(metric)))
        fewer, same, more = _versus(check.rows, metric[0][2], metric[1][2])
        lines.append(f"  its busiest rank beside head-tail's: fewer at {fewer:,}, as many at {same:,}, "
                     f"more at {more:,}")
    if table:
        lines.extend(_varlen_table(check.rows, pairs, tiles) if packed else _sequence_table(check.rows, pairs, tiles))
    return "\n".join(lines) + "\n"


def _sequence_table(rows, pairs, tiles) -> list[str]:
    """One line per size: max/mean (spread) of the pairs, then of the tiles, per layout."""
    def cell(work):
        return "-" if work is None else f"{_ratio(work)} ({max(work) - min(work)})"

    heads = [f"pairs {name}" for name, _, _ in pairs] + [f"tiles {name}" for name, _, _ in tiles]
    out = [f"{'n':>6} {'m':>3}  {'layouts':<26}" + "".join(f" {h:>22}" for h in heads)]
    for r in rows:
        out.append(f"{r.n:>6} {r.m:>3}  {','.join(r.layouts) or 'none':<26}"
                   + "".join(f" {cell(key(r)):>22}" for _, _, key in (*pairs, *tiles)))
    return out


def _ratio(work) -> str:
    from ringproof.proofs.cp.layout import max_over_mean

    value = max_over_mean(work)
    return "-" if value is None else f"{value:.4f}"


def _varlen_table(rows, pairs, tiles) -> list[str]:
    """One line per (T, m): how many vectors, where the map's busiest rank has fewer/as many/more
    pairs than head-tail's, and the worst and mean max/mean of each layout, pairs then tiles."""
    groups: dict[tuple[int, int], list] = {}
    for r in rows:
        groups.setdefault((r.total, r.m), []).append(r)

    def stats(group, key):
        values = [v for v, _ in _values(group, key)]
        return "-" if not values else f"{max(values):.4f} {sum(values) / len(values):.4f}"

    heads = [f"pairs {name}" for name, _, _ in pairs] + [f"tiles {name}" for name, _, _ in tiles]
    out = [f"{'T':>6} {'m':>3} {'vectors':>8} {'fewer/same/more':>16}" + "".join(f" {h:>28}" for h in heads)]
    for (total, m), group in sorted(groups.items()):
        versus = "/".join(map(str, _versus(group, pairs[0][2], pairs[1][2])))
        out.append(f"{total:>6} {m:>3} {len(group):>8} {versus:>16}"
                   + "".join(f" {stats(group, key):>28}" for _, _, key in (*pairs, *tiles)))
    return out


def _permutation_json(args, check) -> dict:
    from ringproof.proofs.cp.layout import PERMUTATION_VARLEN, max_over_mean

    packed = args.target == PERMUTATION_VARLEN
    f = check.fault
    pairs, tiles = _metrics(args.against, packed)
    metrics = [(key, fn) for _, key, fn in (*pairs, *tiles)]

    def size(x):
        return {"lengths": list(x.lengths)} if x.lengths is not None else {"n": x.n}

    def figures(key):
        values = [v for v, _ in _values(check.rows, key)]
        return None if not values else {"worst": max(values), "mean": sum(values) / len(values),
                                        "sizes": len(values)}

    return {
        "target": args.target, "against": args.against, "layout": args.target, "varlen": packed,
        "equal": check.ok, "bounds": check.bounds,
        "requires": check.domain_text or ("m | T" if packed else "m | n"),
        "sizes": check.sizes, "refused": check.refused, "outside": check.outside,
        "layouts": check.layout_counts(),
        "balance": {key: figures(fn) for key, fn in metrics},
        "rows": [{**size(r), "m": r.m, "layouts": list(r.layouts),
                  **{key: None if fn(r) is None else list(fn(r)) for key, fn in metrics},
                  **{f"{key}_max_over_mean": max_over_mean(fn(r)) for key, fn in metrics}}
                 for r in check.rows],
        "difference": None if f is None else {
            **size(f), "m": f.m, "rank": f.rank, "slot": f.slot, "expected": f.expected, "got": f.got,
            "fault": f.kind, "first_rank": f.first_rank, "first_slot": f.first_slot, "text": str(f)},
    }
