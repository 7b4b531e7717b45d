"""The speed figures of the `prove` command, each with its peer measured in the same run.

    python benchmarks/speed.py [--repeat 5] [--full] [--doc docs/performance.md]

Every figure is a fresh `prove ...` process (what a user waits for): the median wall time of
--repeat runs and the largest peak memory. Peers, where one exists: raw Z3 on Algorithm 1's
phase-1 injectivity without the normalization (bench_algo1.raw_injectivity) for the parametric
proofs, `--jobs 1` for two workers, the bit-level check of one instance for the bounded sweep
(--full only: it takes minutes and GiBs). --doc writes the table, the machine and its load average
to a Markdown file.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))        # bench_algo1's raw-Z3 baseline
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def run(argv: list[str], env: dict | None = None) -> tuple[float, float, int]:
    """(wall seconds, peak resident GiB, exit code) of one `prove` process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "ringproof.proofs.cli.main", *argv],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t0, usage.ru_maxrss / 2**20, proc.returncode


def measure(argv: list[str], repeat: int, env: dict | None = None) -> dict:
    runs = [run(argv, env) for _ in range(repeat)]
    return {"cmd": "prove " + " ".join(argv), "s": statistics.median(r[0] for r in runs),
            "gib": max(r[1] for r in runs), "exit": sorted({r[2] for r in runs})}


def raw_z3(timeout_s: float) -> dict:
    from bench_algo1 import raw_injectivity

    verdict, secs = raw_injectivity(timeout_s)
    return {"cmd": f"raw Z3, Algorithm 1 phase-1 injectivity, no normalization (timeout {timeout_s:g} s)",
            "s": secs, "gib": float("nan"), "exit": [verdict]}


def figures(repeat: int, full: bool) -> list[tuple[str, dict, dict | None, str]]:
    """(measure, figure, peer, target) rows."""
    rows = []
    rows.append(("imports alone", measure(["--help"], repeat), None, "< 0.3 s"))
    algos = {a: measure([a], repeat) for a in ("algo1", "algo2", "algo3")}
    peer = raw_z3(30.0)
    for a, f in algos.items():
        rows.append((f"`prove {a}` (warm lemma cache)", f, peer, "< 2 s"))
    seq = {"cmd": "prove algo1; prove algo2; prove algo3", "s": sum(f["s"] for f in algos.values()),
           "gib": max(f["gib"] for f in algos.values()), "exit": sorted({e for f in algos.values() for e in f["exit"]})}
    rows.append(("all three in sequence (sum of medians)", seq, None, "< 5 s"))
    with tempfile.TemporaryDirectory() as cold:
        env = {**os.environ, "RINGPROOF_CACHE": cold}
        c = {"cmd": "all three, empty lemma cache", "s": 0.0, "gib": 0.0, "exit": []}
        for a in algos:
            s, gib, code = run([a], env)
            c["s"] += s
            c["gib"] = max(c["gib"], gib)
            c["exit"] = sorted(set(c["exit"]) | {code})
        rows.append(("cold cache, all three", c, None, "< 8 s"))
    one = measure(["algo2", "--jobs", "1"], repeat)
    rows.append(("`prove algo2`, 2 workers", measure(["algo2", "--jobs", "2"], repeat), one, "≥ 1.6× faster"))
    for n in (64, 128) + ((256, 512) if full else ()):
        rows.append((f"`prove simulate algo1 -n {n} -m 16`",
                     measure(["simulate", "algo1", "-n", str(n), "-m", "16"], 1), None, "n = 512: < 30 s, < 2 GB"))
    bit = measure(["algo1", "--tier", "bounded", "--method", "bitlevel", "-n", "15", "-m", "5",
                   "--timeout", "600"], 1) if full else None
    for max_n in (64,) + ((96,) if full else ()):
        rows.append((f"`prove algo1 --tier bounded --max-n {max_n}`",
                     measure(["algo1", "--tier", "bounded", "--max-n", str(max_n)], 1), bit,
                     "< 5 s (64), < 30 s (96)"))
    if bit is not None:
        rows.append(("bit-level check n = 15, m = 5", bit, None, "< 27.4 s, < 1 GiB"))
    return rows


def table(rows) -> str:
    out = ["| measure | command | seconds | peak GiB | exit | peer | ratio (peer / figure) | target |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for what, f, peer, target in rows:
        ratio = f"{peer['s'] / f['s']:.2f}" if peer else ""
        peer_txt = f"{peer['cmd']}: {peer['s']:.2f} s ({', '.join(map(str, peer['exit']))})" if peer else ""
        out.append(f"| {what} | `{f['cmd']}` | {f['s']:.2f} | {f['gib']:.2f} | "
                   f"{', '.join(map(str, f['exit']))} | {peer_txt} | {ratio} | {target} |")
    return "\n".join(out)


def machine() -> str:
    import z3

    return (f"{platform.node() or 'host'}: {os.cpu_count()} cores, {platform.machine()}, "
            f"Python {platform.python_version()}, Z3 {z3.get_version_string()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs per figure (the median is shown)")
    ap.add_argument("--full", action="store_true", help="add simulate n = 256, 512, bounded n ≤ 96 "
                    "and the bit-level check (minutes, GiBs)")
    ap.add_argument("--doc", type=Path, help="write the table as Markdown to this file")
    args = ap.parse_args()
    load0 = os.getloadavg()
    rows = figures(args.repeat, args.full)
    load1 = os.getloadavg()
    text = table(rows)
    print(text)
    load = (f"load average (1, 5, 15 min) {', '.join(f'{x:.1f}' for x in load0)} before, "
            f"{', '.join(f'{x:.1f}' for x in load1)} after")
    print(load)
    if args.doc:
        args.doc.write_text(DOC.format(machine=machine(), load=load, repeat=args.repeat, table=text,
                                       date=time.strftime("%Y-%m-%d %H:%M")))


DOC = """# Performance

Generated by `python benchmarks/speed.py --doc docs/performance.md` ({date}); do not edit by hand.

Machine: {machine}; {load}. The machine was shared with other work while this ran: figures of a
loaded machine are upper bounds, and the ratio to a peer measured in the same run is the figure to
compare. Seconds are medians of {repeat} fresh `prove` processes (one for the long ones); peak GiB
is the largest resident size of one process; exit is the command's exit code (0 proved, 2 unknown).

{table}

Where the time went and what changed: the side conditions of the normalization (about 3,000 per
Algorithm 2 run) are settled by interval reasoning where the assumptions box each variable
(`proofs/ring/intervals.py`, tested against Z3 on random instances) and otherwise by one
incremental Z3 solver per set of relevant assumptions (push/pop), not a fresh solver per
condition; the counts (sympy) run in the worker pool beside the solver checks; `prove --help`
and the DSL import neither sympy, numpy, Z3, scipy nor the SAT solvers.
"""

if __name__ == "__main__":
    main()
