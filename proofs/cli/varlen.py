"""`prove NAME` and `prove simulate NAME --lengths …` for the varlen (packed-sequence) targets.

The proof (`ringproof.proofs.varlen.verify`) covers every m, every number of documents and every
lengths vector meeting the side condition; `--tier bounded --lengths L -m M` runs one packing on
the packed ring model, as `prove simulate` does with its pairs and numerics.
"""

from __future__ import annotations

from dataclasses import replace

from ringproof.errors import BadInput, Exit
from ringproof.proofs.cli.common import write_json
from ringproof.proofs.results import Verdict

MAX_SWEEP_TOKENS = 64


def lengths_of(args) -> list[tuple[int, ...]]:
    from ringproof.schedules.documents import parse_lengths

    return [parse_lengths(text) for text in (args.lengths or [])]


def prove(args, opts, v, stdout, stderr) -> int:
    """`prove NAME` of a varlen target: the table, the sums over documents, the side condition."""
    from ringproof.proofs.cli.common import Progress
    from ringproof.proofs.cli.verify import print_table
    from ringproof.proofs.ring.session import Session
    from ringproof.proofs.varlen.verify import prove as prove_varlen
    from ringproof.schedules import context_parallel as cp

    backward = v.backward
    vectors = lengths_of(args)
    if opts.tier == "bounded" or vectors:
        return _bounded(args, v, vectors, stdout)
    if opts.tier != "parametric":
        raise BadInput(f"{args.target}: tier {opts.tier} is not one of a varlen target (parametric: every m, "
                       "D and lengths vector; bounded: --lengths L -m M)")
    from ringproof.proofs.options import DEFAULTS
    from ringproof.proofs.varlen.verify import SWEEP_TOKENS
    tokens = SWEEP_TOKENS if args.max_n == DEFAULTS.max_n else args.max_n      # --max-n: T of the cross-check
    if tokens > MAX_SWEEP_TOKENS:
        raise BadInput(f"--max-n {tokens}: the packed cross-check runs every packing up to T ≤ {MAX_SWEEP_TOKENS} tokens")
    with Progress(stderr, not (args.json or args.quiet)) as progress:
        results, needed, _ = prove_varlen(v, replace(opts, progress=progress), Session(opts.budget),
                                          max_tokens=tokens, backward=backward)
    results = [r for r in results if r.property in opts.properties]
    verdict = Verdict.combine(r.verdict for r in results)
    if args.json:
        write_json("prove", {"target": args.target, "schedule": args.target, "verdict": verdict.value,
                             "look": [], "results": [r.to_json() for r in results],
                             "conditions": [{"condition": c["condition"], "counterexample":
                                             c["counterexample"].to_json() if c["counterexample"] else None}
                                            for c in needed]}, stdout)
        return verdict.exit_code
    base = cp.BACKWARDS[f"{v.base.name}-bwd"] if backward else cp.FORWARDS[v.base.name]
    plain = [replace(r, details={}) for r in results]
    print_table(args.target, base, plain, stdout)
    counts = next((r for r in results if r.property == "counts"), None)
    if counts is not None:
        _figures(counts.details, stdout)
    stdout.write("\nper document: the base " + base.name + "'s proof, for one document of any length; "
                 "the composition lemma (by induction over the documents) makes the packed schedule\n")
    _conditions(args.target, v, needed, stdout)
    return verdict.exit_code


def _conditions(target, v, needed, out) -> None:
    """The side condition, and the smallest packing that breaks without it (its replay command)."""
    out.write("\nassumed: " + (", ".join(c["condition"] for c in needed) or "nothing beyond D ≥ 1, L_i ≥ 1") + "\n")
    for c in needed:
        cex = c["counterexample"]
        if cex is None:
            out.write(f"  without {c['condition']}: no packing with D ≤ 3, T ≤ 24, m ≤ 4 breaks\n")
            continue
        lengths = ",".join(map(str, cex.replay["lengths"]))
        out.write(f"  without {c['condition']}: lengths {lengths} at m={cex.m} break {cex.check.split(': ')[-1]} "
                  f"({cex.message}): prove simulate {target} --lengths {lengths} -m {cex.m}\n")


def _figures(details: dict, out) -> None:
    from ringproof.proofs.varlen.verify import readable

    out.write("\n" + readable(details) + "\n")


def _bounded(args, v, vectors, stdout) -> int:
    """One or more packings on the packed ring model (each with -m)."""
    from ringproof.model.ring.packed import run

    if not vectors or args.m is None:
        raise BadInput(f"{args.target} --tier bounded checks packings: give --lengths L_1,L_2,... (repeatable) and -m M")
    rows, verdict = [], Verdict.PROVED
    for lengths in vectors:
        got = run(v, lengths, args.m, d=args.d or 2, seed=args.seed)
        worst = max(got.error.values(), default=0.0)
        ok = got.first_difference is None and worst <= 1e-9
        verdict = Verdict.combine([verdict, Verdict.PROVED if ok else Verdict.REFUTED])
        rows.append({"lengths": list(lengths), "m": args.m, "verdict": "proved" if ok else "refuted",
                     "first_difference": got.first_difference, "pairs_per_rank": got.per_rank,
                     "pairs_per_step": got.pairs, "max_rel_error": got.error})
    return write_packings(args, rows, verdict, "the packed ring model", lambda row: (
        f"every document-causal pair once, pairs per rank {row['pairs_per_rank']}, "
        f"out/dq/dk/dv max relative error {max(row['max_rel_error'].values()):.2g}"), stdout)


def write_packings(args, rows, verdict, model: str, passed, stdout) -> int:
    """The bounded tier's packings, as JSON (`packings`) or a line each: `passed(row)` says what a
    packing that passed showed, `model` which model ran it."""
    if args.json:
        write_json("prove", {"target": args.target, "schedule": args.target, "verdict": verdict.value, "look": [],
                             "results": [], "packings": rows, "conditions": []}, stdout)
    else:
        for row in rows:
            stdout.write(f"{args.target} lengths {','.join(map(str, row['lengths']))}, m={row['m']} (bounded, "
                         f"{model}): {row['verdict']}: {row['first_difference'] or passed(row)}\n")
    return verdict.exit_code


def simulate(args, v, stdout) -> int:
    """`prove simulate NAME --lengths L -m M [-d D]`: one packing on the packed ring model."""
    from ringproof.model.ring.packed import run

    vectors = lengths_of(args)
    if len(vectors) != 1:
        raise BadInput(f"prove simulate {args.target} runs one packing: give --lengths L_1,L_2,... once, and -m")
    got = run(v, vectors[0], args.m, d=args.d or 2, seed=args.seed)
    ok = got.first_difference is None and max(got.error.values(), default=0.0) <= 1e-9
    data = {"target": args.target, "lengths": list(vectors[0]), "m": args.m, "d": args.d or 2,
            "first_difference": got.first_difference, "pairs_per_rank": got.per_rank,
            "pairs_per_step": got.pairs, "max_rel_error": got.error}
    if args.json:
        write_json("simulate", data, stdout)
    else:
        stdout.write(f"{args.target}, lengths {','.join(map(str, vectors[0]))}, m={args.m}, d={data['d']}: "
                     + ("valid" if ok else f"differs: {got.first_difference or 'numerics'}") + "\n")
        if got.pairs:
            stdout.write("  pairs per rank (ranks 1..m): " + ", ".join(map(str, got.per_rank)) + "\n")
            for s, row in enumerate(got.pairs):
                stdout.write(f"  ring step {s + 1}: " + ", ".join(map(str, row)) + "\n")
        if got.error:
            stdout.write("  max relative error vs the per-document reference: "
                         + ", ".join(f"{k} {x:.2g}" for k, x in got.error.items()) + "\n")
    return Exit.OK if ok else Exit.REFUTED
