"""`prove llama3[-varlen]` and `prove simulate llama3[-varlen] --lengths …` (all-gather machine).

The proof (`ringproof.proofs.allgather.verify`) covers every m, T and lengths vector with m | T;
`--tier bounded --lengths L -m M` (llama3: -n T) runs packings on the all-gather model. The
backward is the same target's `backward` rows: it reuses the forward's segments (the library
computes cu_seqlens once per call), only the reduce-scatter is its own.
"""

from __future__ import annotations

from types import SimpleNamespace

from ringproof.errors import BadInput, Exit
from ringproof.proofs.cli.common import write_json
from ringproof.proofs.results import Verdict


def _vectors(args, t) -> list[tuple[int, ...]]:
    from ringproof.schedules.documents import parse_lengths

    vectors = [parse_lengths(text) for text in (args.lengths or [])]
    if getattr(args, "n", None) is not None:
        vectors.append((args.n,))
    return vectors


def prove(args, opts, t, stdout) -> int:
    from ringproof.proofs.allgather.verify import prove as prove_allgather, readable
    from ringproof.proofs.cli.verify import print_table

    vectors = _vectors(args, t)
    if opts.tier == "bounded" or vectors:
        return _bounded(args, t, vectors, stdout)
    if opts.tier != "parametric":
        raise BadInput(f"{args.target}: tier {opts.tier} is not one of an all-gather target (parametric: every m, "
                       "T and lengths vector; bounded: --lengths L -m M)")
    results = [r for r in prove_allgather(t) if r.property in opts.properties]
    verdict = Verdict.combine(r.verdict for r in results)
    if args.json:
        write_json("prove", {"target": args.target, "schedule": args.target, "verdict": verdict.value, "look": [],
                             "results": [r.to_json() for r in results],
                             "conditions": [{"condition": t.requires_text, "counterexample": None}]}, stdout)
        return verdict.exit_code
    from dataclasses import replace
    print_table(args.target, SimpleNamespace(phases=()), [replace(r, details={}) for r in results], stdout)
    counts = next((r for r in results if r.details), None)
    if counts is not None:
        stdout.write("\n" + readable(t, counts.details) + "\n")
    stdout.write(f"\nassumed: {t.requires_text} (S = T/m tokens per rank)\n")
    return verdict.exit_code


def _bounded(args, t, vectors, stdout) -> int:
    from ringproof.model.allgather.run import run

    if not vectors or args.m is None:
        raise BadInput(f"{args.target} --tier bounded checks packings: give --lengths L_1,L_2,... (llama3: -n T) and -m M")
    rows, verdict = [], Verdict.PROVED
    for lengths in vectors:
        got = run(t, lengths, args.m, d=args.d or 2, seed=args.seed)
        ok = got.first_difference is None and max(got.error.values(), default=0.0) <= 1e-9
        verdict = Verdict.combine([verdict, Verdict.PROVED if ok else Verdict.REFUTED])
        rows.append({"lengths": list(lengths), "m": args.m, "verdict": "proved" if ok else "refuted",
                     "first_difference": got.first_difference, "pairs_per_rank": got.pairs, "max_rel_error": got.error})
    from ringproof.proofs.cli.varlen import write_packings

    return write_packings(args, rows, verdict, "the all-gather model", lambda row: (
        f"every document-causal pair once, on its query's rank, pairs per rank {row['pairs_per_rank']}"), stdout)


def simulate(args, t, stdout) -> int:
    """One packing on the all-gather model: segments, pairs, data held and received, numerics."""
    from ringproof.model.allgather.run import run

    vectors = _vectors(args, t)
    if len(vectors) != 1:
        raise BadInput(f"prove simulate {args.target} runs one packing: give --lengths L_1,L_2,... once (llama3: -n T), and -m")
    lengths = vectors[0]
    d = args.d or 2
    got = run(t, lengths, args.m, d=d, seed=args.seed)
    ok = got.first_difference is None and max(got.error.values(), default=0.0) <= 1e-9
    segs = [t.prepare_cu_seqlens(lengths, args.m, r) for r in range(args.m)] if ok else []
    data = {"target": args.target, "lengths": list(lengths), "m": args.m, "d": d,
            "first_difference": got.first_difference, "pairs_per_rank": got.pairs,
            "held_per_rank": [{"forward": f, "backward": b} for f, b in got.held], "received_per_rank": got.received,
            "cu_seqlens": [{"q": list(q), "k": list(k), "local_k_slice": list(s)} for q, k, s in segs],
            "max_rel_error": got.error}
    if args.json:
        write_json("simulate", data, stdout)
        return Exit.OK if ok else Exit.REFUTED
    stdout.write(f"{args.target}, lengths {','.join(map(str, lengths))}, m={args.m}, d={d}: "
                 + ("valid" if ok else f"differs: {got.first_difference or 'numerics'}") + "\n")
    if got.pairs:
        stdout.write("  pairs per rank (ranks 0..m−1): " + ", ".join(map(str, got.pairs)) + "\n")
        for r, (q, k, s) in enumerate(segs):
            stdout.write(f"  rank {r}: cu_seqlens_q {list(q)}, cu_seqlens_k {list(k)}, local_k_slice [{s[0]}, {s[1]})\n")
        f, b = got.held[0]
        stdout.write(f"  held per rank: forward {sum(f.values())} ({', '.join(f'{n} {x}' for n, x in f.items())}); "
                     f"backward {sum(b.values())}\n")
        stdout.write("  received per rank: " + ", ".join(f"{n} {x}" for n, x in got.received[0].items()) + "\n")
    if got.error:
        stdout.write("  max relative error vs the per-document reference: "
                     + ", ".join(f"{k} {x:.2g}" for k, x in got.error.items()) + "\n")
    return Exit.OK if ok else Exit.REFUTED
