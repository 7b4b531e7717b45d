"""`prove llama3[-varlen]` and `prove simulate llama3[-varlen] --lengths …` (all-gather machine),
and the same for a schedule file assigning `SCHEDULE = AllGather(...)`.

The proof (`ringproof.proofs.allgather.verify`) covers every m, T, lengths vector and head layout
with m | T (`--property balance` / `memory`: the counts rows of that name); `--tier bounded --lengths L -m M` (llama3: -n T) runs packings on the all-gather model.
The backward is the same target's `backward` rows: it reuses the forward's segments (the library
computes cu_seqlens once per call), only the reduce-scatter is its own. A user's formulas run as
the user's code (`usercode.contained`): whatever they raise is one line naming the file, exit 64.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
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


@contextlib.contextmanager
def users_code(t, seconds: float):
    """A schedule file's formulas as the user's code: errors one line at its file and line, and a
    time limit; the registered targets' formulas are ours."""
    from ringproof.schedules import usercode
    from ringproof.schedules.allgather import ALLGATHER

    if ALLGATHER.get(t.name) is t:
        yield
        return
    path = t.source() or t.name
    try:
        with usercode.time_limit(seconds, f"proving {usercode.shown(path)}", (path,)), \
                usercode.contained(f"{t.name}'s formulas", usercode.shown(path), path):
            yield
    except BadInput as err:
        shown = usercode.shown(path)
        raise BadInput(str(err) if str(err).startswith(shown) else f"{shown}: {err}") from None


def prove(args, opts, t, stdout) -> int:
    from ringproof.proofs.allgather.verify import prove as prove_allgather, readable
    from ringproof.proofs.cli.verify import print_table

    vectors = _vectors(args, t)
    if opts.tier == "bounded" or vectors:
        with users_code(t, 120.0):
            return _bounded(args, t, vectors, stdout)
    if opts.tier != "parametric":
        raise BadInput(f"{args.target}: tier {opts.tier} is not one of an all-gather target (parametric: every m, "
                       "T and lengths vector; bounded: --lengths L -m M)")
    with users_code(t, 300.0):
        results = [r for r in prove_allgather(t, smt2_dir=opts.smt2_dir) if r.property in opts.properties
                   or (r.property, r.phase) in {("counts", p) for p in ("balance", "memory") if p in opts.properties}]
    verdict = Verdict.combine(r.verdict for r in results)
    if args.json:
        write_json("prove", {"target": args.target, "schedule": t.name, "verdict": verdict.value, "look": [],
                             "results": [r.to_json() for r in results],
                             "conditions": [{"condition": t.requires_text, "counterexample": None}]}, stdout)
        return verdict.exit_code
    print_table(args.target, SimpleNamespace(phases=()), [replace(r, details={}) for r in results], stdout)
    counts = next((r for r in results if r.details and r.verdict is Verdict.PROVED), None)
    if counts is not None:
        stdout.write("\n" + readable(t, counts.details) + "\n")
    stdout.write(f"\nassumed: {t.requires_text} (S = T/m tokens per rank), Hk | H, s | Hk\n")
    return verdict.exit_code


def _bounded(args, t, vectors, stdout) -> int:
    from ringproof.model.allgather import rules
    from ringproof.model.allgather.run import DEFAULT_HEADS
    from ringproof.proofs.allgather.verify import case, derived

    if not vectors or args.m is None:
        raise BadInput(f"{args.target} --tier bounded checks packings: give --lengths L_1,L_2,... (llama3: -n T) and -m M")
    rows, verdict, forms = [], Verdict.PROVED, derived()
    for lengths in vectors:
        got = case(t, lengths, args.m, rules.heads(*DEFAULT_HEADS), forms, d=args.d or 2, seed=args.seed)
        ok = got.first_difference is None
        verdict = Verdict.combine([verdict, Verdict.PROVED if ok else Verdict.REFUTED])
        rows.append({"lengths": list(lengths), "m": args.m, "verdict": "proved" if ok else "refuted",
                     "first_difference": got.first_difference, "pairs_per_rank": got.pairs, "max_rel_error": got.error})
    from ringproof.proofs.cli.varlen import write_packings

    return write_packings(args, rows, verdict, "the all-gather model", lambda row: (
        f"every document-causal pair once, on its query's rank, pairs per rank {row['pairs_per_rank']}"), stdout)


def simulate(args, t, stdout) -> int:
    """One packing on the all-gather model: segments, pairs, data held (measured, beside the
    memory form) and received, numerics; with the closed forms' checks, as the sweep runs it."""
    from ringproof.model.allgather import rules
    from ringproof.proofs.allgather.verify import case, derived

    vectors = _vectors(args, t)
    if len(vectors) != 1:
        raise BadInput(f"prove simulate {args.target} runs one packing: give --lengths L_1,L_2,... once (llama3: -n T), and -m")
    if args.batch != 1:
        raise BadInput(f"prove simulate {args.target}: --batch is not modelled on the all-gather machine")
    lengths = vectors[0]
    d = args.d or 2
    Hd = rules.heads(args.heads, args.kv_heads, args.heads_k_stride)
    forms = derived()
    with users_code(t, 120.0):
        got = case(t, lengths, args.m, Hd, forms, d=d, seed=args.seed)
        ok = got.first_difference is None
        segs = [t.prepare_cu_seqlens(lengths, args.m, r) for r in range(args.m)] if ok else []
    T, S = sum(lengths), sum(lengths) // args.m
    form = {k: forms.at(k, T=T, S=S, d=d, H=Hd.H, Hk=Hd.Hk, s=Hd.s) for k in ("forward", "backward")}
    data = {"target": args.target, "lengths": list(lengths), "m": args.m, "d": d,
            "heads": {"H": Hd.H, "Hk": Hd.Hk, "s": Hd.s, "groups": Hd.G},
            "first_difference": got.first_difference, "pairs_per_rank": got.pairs,
            "spread": max(got.pairs) - min(got.pairs) if got.pairs else None,
            "held_per_rank": [{"forward": f, "backward": b} for f, b in got.held],
            "peak_per_rank": [{"forward": f, "backward": b} for f, b in got.peak], "memory_form": form,
            "received_per_rank": got.received,
            "cu_seqlens": [{"q": list(q), "k": list(k), "local_k_slice": list(s)} for q, k, s in segs],
            "max_rel_error": got.error}
    if args.json:
        write_json("simulate", data, stdout)
        return Exit.OK if ok else Exit.REFUTED
    heads = f", H={Hd.H}, Hk={Hd.Hk}, s={Hd.s} ({Hd.G} head group{'s' if Hd.G > 1 else ''})"
    stdout.write(f"{args.target}, lengths {','.join(map(str, lengths))}, m={args.m}, d={d}{heads}: "
                 + ("valid" if ok else f"differs: {got.first_difference}") + "\n")
    if got.pairs:
        stdout.write("  pairs per rank (ranks 0..m−1): " + ", ".join(map(str, got.pairs))
                     + f" per query head; spread {data['spread']}\n")
        for r, (q, k, s) in enumerate(segs):
            stdout.write(f"  rank {r}: cu_seqlens_q {list(q)}, cu_seqlens_k {list(k)}, local_k_slice [{s[0]}, {s[1]})\n")
        f, b = got.held[0]
        (pf, pb) = got.peak[0]
        stdout.write(f"  held per rank (peak, elements, measured): forward {pf} ({', '.join(f'{n} {x}' for n, x in f.items())}); "
                     f"backward {pb}; the memory form gives {form['forward']}, {form['backward']}\n")
        stdout.write("  received per rank: " + ", ".join(f"{n} {x}" for n, x in got.received[0].items()) + "\n")
    if got.error:
        stdout.write("  max relative error vs the per-document reference: "
                     + ", ".join(f"{k} {x:.2g}" for k, x in got.error.items()) + "\n")
    return Exit.OK if ok else Exit.REFUTED
