"""`prove unroll`: spatial unrollings for MobileViT-S on a PE array, and the Z3 facts behind them."""

from __future__ import annotations

import math

from ringproof.model.unrolling.mobilevit import mobilevit_s
from ringproof.model.unrolling.utilization import LOOPS, LayerResult, Memory, Plan, network_macs, plan
from ringproof.errors import BadInput
from ringproof.proofs.cli.common import ArgumentParser, Exit, positive_int, seconds, write_json
from ringproof.proofs.results import Verdict

DEFAULT_ARRAYS = (256, 8192)
MAX_SUS = 200_000     # candidate SUs of one array (docs/unrolling.md §1: what this costs)
MAX_PES = 2 ** 24

EPILOG = """\
Latency of a layer = ideal cycles / temporal utilization; a network's latency sums its layers, each
on the faster of the supported SUs. gain_2su = latency with the best 1 SU / latency with the best 2.

exit codes: 0 success (with --facts: every fact proved), 1 a formula fact refuted, 2 a fact unknown
(solver timeout or unknown), 64 bad input (e.g. --pes 0, a non-integer).
"""


OLD_MS = 1000   # a --timeout this large is read as milliseconds (CHANGELOG.md); no fact needs 1000 s


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="prove unroll", description=__doc__, epilog=EPILOG,
                       )
    p.add_argument("--pes", type=positive_int, help=f"PEs in the array (default: both {DEFAULT_ARRAYS})")
    p.add_argument("--bw", type=positive_int, default=2048, help="bits/cycle of each operand memory (2048)")
    p.add_argument("--bw-w", type=positive_int, help="weight bandwidth, bits/cycle (default --bw)")
    p.add_argument("--bw-i", type=positive_int, help="input bandwidth, bits/cycle (default --bw)")
    p.add_argument("--bw-o", type=positive_int, help="output bandwidth, bits/cycle (default --bw)")
    p.add_argument("--precision", type=positive_int, default=8, help="bits of a weight or input word (8)")
    p.add_argument("--prune", action="store_true",
                   help="search only the SUs the paper's pruning keeps (default: every SU)")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.add_argument("--facts", action="store_true",
                   help="prove the formula facts in Z3 and check the literal readings of the paper")
    p.add_argument("--timeout", type=seconds, default=None,
                   help=f"with --facts: seconds per Z3 fact (20); a value of {OLD_MS} or more is read as the "
                        "milliseconds, with a note")
    p.add_argument("--timeout-ms", type=positive_int, help="with --facts: the same limit in milliseconds")
    return p


def main(argv, stdout, stderr) -> int:
    args = parser().parse(argv, stdout)
    if args is None:
        return Exit.OK
    timeout_ms = _timeout_ms(args, stderr)
    if args.facts:
        return _facts(args, stdout, timeout_ms)
    if args.timeout is not None or args.timeout_ms is not None:
        stderr.write("prove unroll: note: --timeout limits the Z3 facts of --facts only; the "
                     "utilization model runs without a solver\n")
    memory = Memory(args.bw_w or args.bw, args.bw_i or args.bw, args.bw_o or args.bw, args.precision)
    layers = mobilevit_s()
    if args.pes:
        _check_array(args.pes)
    plans = [plan(layers, n, memory, args.prune) for n in ((args.pes,) if args.pes else DEFAULT_ARRAYS)]
    if args.json:
        docs = [_plan_json(p, layers, memory, args.prune) for p in plans]
        out = docs[0] if args.pes else {"arrays": docs}
        write_json("unroll", out, stdout)
        return Exit.OK
    for p in plans:
        _print_plan(p, layers, stdout)
    if len(plans) > 1:
        stdout.write("gain_2su by PE array: " + ", ".join(f"{p.nb_pes}: {p.gain:.3f}" for p in plans) + "\n")
    return Exit.OK


def _check_array(pes: int) -> None:
    """Refuse up front an array whose candidate SUs (ordered factorizations of pes into 7 loop
    factors) are too many to rank in bounded time, naming the limit."""
    if pes > MAX_PES:
        raise BadInput(f"--pes {pes}: the model ranks arrays of at most {MAX_PES:,} PEs "
                       "(the paper's arrays have 256 and 8192)")
    count, rest, p = 1, pes, 2
    while p * p <= rest and count <= MAX_SUS:
        e = 0
        while rest % p == 0:
            rest, e = rest // p, e + 1
        count *= math.comb(e + len(LOOPS) - 1, len(LOOPS) - 1)
        p += 1
    if rest > 1 and count <= MAX_SUS:
        count *= len(LOOPS)
    if count > MAX_SUS:
        raise BadInput(f"--pes {pes}: too many spatial unrollings to rank (more than {MAX_SUS:,} "
                       "factorizations into 7 loop factors; the paper's arrays have 256 and 8192 PEs)")


def _timeout_ms(args, stderr) -> int:
    if args.timeout_ms is not None:
        return args.timeout_ms
    if args.timeout is None:
        return 20_000
    if args.timeout >= OLD_MS:
        stderr.write(f"prove unroll: note: --timeout is in seconds now; {args.timeout:g} is read as "
                     f"milliseconds ({args.timeout / 1000:g} s)\n")
        return int(args.timeout)
    return int(args.timeout * 1000)


def _facts(args, stdout, timeout_ms: int) -> int:
    from ringproof.proofs.unrolling.facts import FACTS, MISREADINGS, prove_all   # z3: not for --help

    facts, misreadings = prove_all(FACTS, timeout_ms), prove_all(MISREADINGS, timeout_ms)
    if args.json:
        write_json("unroll-facts", {"facts": [r.as_dict() for r in facts],
                                       "misreadings": [r.as_dict() for r in misreadings]}, stdout)
    else:
        stdout.write(f"{'fact':34} {'verdict':8} {'s':>6}  statement\n")
        for r in facts:
            stdout.write(f"{r.name:34} {r.verdict.value:8} {r.seconds:6.2f}  {r.statement}\n")
            if r.verdict is not Verdict.PROVED:
                stdout.write(f"{'':50}{r.reason} {dict(r.counterexample) or ''}\n")
        stdout.write("\nliteral readings of the printed paper (expected refuted):\n")
        for r in misreadings:
            stdout.write(f"{r.name:34} {r.verdict.value:8} {r.seconds:6.2f}  {r.statement}\n")
            stdout.write(f"{'':50}{r.reason} {dict(r.counterexample) or ''}\n")
    verdicts = {r.verdict for r in facts}
    if Verdict.REFUTED in verdicts:
        return Exit.REFUTED
    return Exit.UNKNOWN if Verdict.UNKNOWN in verdicts else Exit.OK


def _dims(layer) -> str:
    return " ".join(f"{loop}{getattr(layer, loop)}" for loop in LOOPS if getattr(layer, loop) > 1)


def _print_plan(p: Plan, layers, out) -> None:
    macs = network_macs(layers)
    out.write(f"PE array of {p.nb_pes} ({p.candidates} candidate SUs)\n")
    out.write(f"  1 SU : {p.single.sus[0]}  latency {p.single.latency:,.0f} cycles, "
              f"utilization {macs / (p.nb_pes * p.single.latency):.3f}\n")
    for i, su in enumerate(p.pair.sus):
        out.write(f"  2 SUs: #{i + 1} {su}\n")
    out.write(f"         latency {p.pair.latency:,.0f} cycles, utilization "
              f"{macs / (p.nb_pes * p.pair.latency):.3f}, gain_2su {p.gain:.3f}\n")
    out.write(f"  {'layer':24} {'x':>2} {'dims':30} {'1SU ut':>6} {'inner':>5}  {'2SU':>3} {'ut':>6} {'inner':>5}\n")
    for one, two, i in zip(p.single_layers, p.pair_layers, p.pair.choice):
        out.write(f"  {one.layer.name:24} {one.layer.count:>2} {_dims(one.layer):30} "
                  f"{float(one.utilization):6.3f} {one.innermost:>5}  #{i + 1:<2} "
                  f"{float(two.utilization):6.3f} {two.innermost:>5}\n")
    out.write("\n")


def _result_json(r: LayerResult) -> dict:
    return {"su": r.su.as_dict(), "pe_utilization": float(r.pe_utilization),
            "temporal_utilization": float(r.temporal_utilization), "utilization": float(r.utilization),
            "innermost": r.innermost, "cycles": float(r.cycles)}


def _plan_json(p: Plan, layers, memory: Memory, pruned: bool) -> dict:
    macs = network_macs(layers)

    def selection(s):
        return {"sus": [su.as_dict() for su in s.sus], "latency_cycles": s.latency,
                "utilization": macs / (p.nb_pes * s.latency)}

    return {
        "pes": p.nb_pes,
        "memory": {"bw_w": memory.bw_w, "bw_i": memory.bw_i, "bw_o": memory.bw_o,
                   "precision": memory.precision},
        "pruned": pruned,
        "candidates": p.candidates,
        "best_1su": selection(p.single),
        "best_2su": selection(p.pair),
        "gain_2su": p.gain,
        "layers": [
            {"name": one.layer.name, "kind": one.layer.kind,
             "dims": {loop: getattr(one.layer, loop) for loop in LOOPS},
             "stride": one.layer.stride, "count": one.layer.count, "macs": one.layer.macs,
             "1su": _result_json(one), "2su": dict(_result_json(two), su_index=i)}
            for one, two, i in zip(p.single_layers, p.pair_layers, p.pair.choice)
        ],
    }
