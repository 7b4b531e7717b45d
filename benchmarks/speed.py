"""The speed figures of issue #13, each with its peer measured in the same run.

    python benchmarks/speed.py [--repeat 5] [--quick] [--doc docs/performance.md]

Every figure is a fresh `prove ...` process (what a user waits for): the median wall time of
--repeat runs (one for the long ones) and the largest peak memory. Peers, where one exists: raw Z3
on Algorithm 1's phase-1 injectivity without the normalization (bench_algo1.raw_injectivity) for
the parametric proofs, `--jobs 1` for two workers, the whole-trace simulator it replaced
(bench_simulate, the test oracle) for the simulator, the bit-level check of one instance for the
bounded sweep (as the issue compares them), and the per-cycle encoding of the same run for the
bit-level check (bench_bounded). --quick leaves out n = 512, max-n 96 and the bit-level check.
--doc writes the table, the machine and its load average to a Markdown file.

--against REV also runs every `prove` figure on the code of git revision REV (a git worktree in a
temporary folder, imported through PYTHONPATH ahead of the installed tree), each run of it right
after the same run here, so that both see the same load; the table gains REV's seconds and exit
codes and the ratio REV / here. The peers are measured once.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))        # the peers of the other benchmarks
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

# `prove` as its console script runs it (`run`: no teardown of the objects at exit), or `main` where a
# revision measured with --against has no `run`
PROVE = ("import sys, importlib; c = importlib.import_module('ringproof.proofs.cli.main'); "
         "c.run() if hasattr(c, 'run') else sys.exit(c.main(sys.argv[1:]))")


def as_users(env: dict | None = None) -> dict:
    """`env` (default: this process's) as on a user's machine, where Python caches the bytecode of
    the modules it compiles: without PYTHONDONTWRITEBYTECODE, which some machines set, a fresh
    `prove` recompiles every module of the project (about 0.15 s of CPU) on every run, which a
    user pays once after installing."""
    return {k: v for k, v in (os.environ if env is None else env).items() if k != "PYTHONDONTWRITEBYTECODE"}


def process(argv: list[str], env: dict | None = None, code: str = PROVE) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds of it and its workers, peak resident GiB, exit code) of one fresh
    `prove` process (`code`: another entry), with the bytecode cached as a user's Python does
    (`as_users`); -P: the working folder is not on sys.path, so a checkout's `ringproof/` folder
    there is not imported in place of the tree being measured."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-P", "-c", code, *argv],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=as_users(env))
    _, status, usage = os.wait4(proc.pid, 0)
    return (time.perf_counter() - t0, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 2**20,
            os.waitstatus_to_exitcode(status))


def run(argv: list[str], env: dict | None = None, code: str = PROVE) -> tuple[float, float, int]:
    """(wall seconds, peak resident GiB, exit code) of one fresh process (`process`)."""
    wall, _, gib, code_ = process(argv, env, code)
    return wall, gib, code_


def _summary(runs, cmd: str) -> dict:
    return {"cmd": cmd, "s": statistics.median(r[0] for r in runs), "gib": max(r[1] for r in runs),
            "exit": sorted({r[2] for r in runs})}


def measure(argv: list[str], repeat: int, env: dict | None = None, code: str = PROVE, name: str = "",
            against: dict | None = None) -> dict:
    """The figure of `argv`; with `against` (the environment of another revision) each run is
    followed by the same run there, whose figure is the result's "then"."""
    here, there = [], []
    for _ in range(repeat):
        here.append(run(argv, env, code))
        if against is not None:
            there.append(run(argv, {**against, **(env or {})}, code))
    out = _summary(here, name or "prove " + " ".join(argv))
    if against is not None:
        out["then"] = _summary(there, out["cmd"])
    return out


@contextlib.contextmanager
def revision(rev: str):
    """The environment in which `prove` runs the code of git revision `rev`: a detached worktree in
    a temporary folder and, beside it, the `ringproof` package laid out as pyproject.toml's
    package-dir maps it (links), first on PYTHONPATH. Removed afterwards."""
    repo = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="speed-against-") as tmp:
        tree, pkg = Path(tmp) / "tree", Path(tmp) / "pkg"
        subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", "--quiet", str(tree), rev], check=True)
        try:
            mapping = tomllib.loads((tree / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
            top = pkg / "ringproof"
            top.mkdir(parents=True)
            for entry in (tree / mapping["ringproof"]).iterdir():
                (top / entry.name).symlink_to(entry)
            for name, folder in mapping.items():
                if name != "ringproof":
                    (top / name.split(".", 1)[1]).symlink_to(tree / folder)
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(pkg), os.environ.get("PYTHONPATH")]))}
            probe = "import ringproof.proofs.cli.verify as m; print(m.__file__)"
            where = subprocess.run([sys.executable, "-P", "-c", probe], env=env, capture_output=True, text=True,
                                   check=True).stdout.strip()
            if not where.startswith(str(pkg)):
                raise SystemExit(f"--against {rev}: `prove` still imports {where}, not the revision's tree")
            yield env
        finally:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)], check=False)


def raw_z3(timeout_s: float) -> dict:
    from bench_algo1 import raw_injectivity

    verdict, secs = raw_injectivity(timeout_s)
    return {"cmd": f"raw Z3, Algorithm 1 phase-1 injectivity, no normalization (timeout {timeout_s:g} s)",
            "s": secs, "gib": float("nan"), "exit": [verdict]}


def figures(repeat: int, quick: bool, against: dict | None = None) -> list[tuple[str, dict, dict | None, str]]:
    """(measure, figure, peer, target) rows; with `against`, each figure also measured there."""
    from bench_bounded import BITLEVEL, per_cycle_peer
    from bench_simulate import OLD

    rows = [("imports alone", measure(["--help"], repeat, against=against), None, "< 0.3 s")]
    algos = {a: measure([a, "--quiet"], repeat, against=against) for a in ("algo1", "algo2", "algo3")}
    peer = raw_z3(30.0)
    for a, f in algos.items():
        rows.append((f"`prove {a}` (warm lemma cache)", f, peer, "< 2 s"))
    rows.append(("all three in sequence (sum of medians)", _sequence(algos.values()), None, "< 5 s"))
    rows.append(("cold cache, all three (median of sums)", _cold(algos, repeat, against), None, "< 8 s"))
    for cp in ("ring-attention-causal", "zigzag"):        # balance per ring step in the counts task
        rows.append((f"`prove {cp}`", measure([cp, "--quiet"], repeat, against=against), None, "< 5 s (issue #28)"))
    one = measure(["algo2", "--quiet", "--jobs", "1"], repeat, against=against)
    rows.append(("`prove algo2`, 2 workers", measure(["algo2", "--quiet", "--jobs", "2"], repeat, against=against),
                 one, "≥ 1.6× faster"))
    for n in (128, 256) + (() if quick else (512,)):
        argv = ["simulate", "algo1", "-n", str(n), "-m", "16"]
        old = measure(argv, 1, code=OLD, name=f"whole-trace simulator (test oracle), n = {n}") \
            if n <= 128 else None
        rows.append((f"`prove simulate algo1 -n {n} -m 16`", measure(argv, 1, against=against), old,
                     "n = 512: < 30 s, < 2 GB"))
    rows.append(("BERT-base on the ring (one head simulated)", measure(
        ["simulate", "algo1-general", "-n", "512", "-d", "64", "-m", "16", "--heads", "12"], 1, against=against),
        None, "< 10 s, < 2 GB (issue #15)"))
    bit = None if quick else measure(BITLEVEL, 1, against=against)
    for max_n in (64,) + (() if quick else (96,)):
        rows.append((f"`prove algo1 --tier bounded --max-n {max_n}`",
                     measure(["algo1", "--tier", "bounded", "--max-n", str(max_n), "--quiet"], 1, against=against),
                     bit, "< 5 s (64), < 30 s (96)"))
    if bit is not None:
        rows.append(("bit-level check n = 15, m = 5", bit, per_cycle_peer(1), "< 27.4 s, < 1 GiB"))
    return rows


def _sequence(figs) -> dict:
    figs = list(figs)
    out = {"cmd": "prove algo1; prove algo2; prove algo3", "s": sum(f["s"] for f in figs),
           "gib": max(f["gib"] for f in figs), "exit": sorted({e for f in figs for e in f["exit"]})}
    if all("then" in f for f in figs):
        out["then"] = _sequence(f["then"] for f in figs)
    return out


def _cold(algos, repeat: int, against: dict | None) -> dict:
    """All three with an empty lemma cache each (median of the sums), here and, interleaved, there."""
    sums: dict[str, list] = {"here": [], "then": []}
    for _ in range(repeat):
        for side, base in (("here", os.environ), ("then", against)):
            if base is None:
                continue
            with tempfile.TemporaryDirectory() as cold:
                sums[side].append([run([a, "--quiet"], {**base, "RINGPROOF_CACHE": cold}) for a in algos])
    figs = {side: {"cmd": "prove algo1; prove algo2; prove algo3 (each with an empty lemma cache)",
                   "s": statistics.median(sum(r[0] for r in c) for c in runs),
                   "gib": max(r[1] for c in runs for r in c), "exit": sorted({r[2] for c in runs for r in c})}
            for side, runs in sums.items() if runs}
    return {**figs["here"], **({"then": figs["then"]} if "then" in figs else {})}


def table(rows, rev: str | None = None) -> str:
    then = f" | {rev}: seconds | {rev}: exit | ratio ({rev} / figure)" if rev else ""
    out = ["| measure | command | seconds | peak GiB | exit | peer | ratio (peer / figure) | target" + then + " |",
           "| --- " * (8 + 3 * bool(rev)) + "|"]
    for what, f, peer, target in rows:
        ratio = f"{peer['s'] / f['s']:.2f}" if peer else ""
        peer_txt = f"{peer['cmd']}: {peer['s']:.2f} s ({', '.join(map(str, peer['exit']))})" if peer else ""
        cells = ""
        if rev:
            t = f["then"]
            cells = f" | {t['s']:.2f} | {', '.join(map(str, t['exit']))} | {t['s'] / f['s']:.2f}"
        out.append(f"| {what} | `{f['cmd']}` | {f['s']:.2f} | {f['gib']:.2f} | "
                   f"{', '.join(map(str, f['exit']))} | {peer_txt} | {ratio} | {target}{cells} |")
    return "\n".join(out)


def machine() -> str:
    import z3

    return (f"{platform.node() or 'host'}: {os.cpu_count()} cores, {platform.machine()}, "
            f"Python {platform.python_version()}, Z3 {z3.get_version_string()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs per figure (the median is shown)")
    ap.add_argument("--quick", action="store_true", help="leave out simulate n = 512, bounded "
                    "max-n 96 and the bit-level check")
    ap.add_argument("--doc", type=Path, help="write the table as Markdown to this file")
    ap.add_argument("--against", metavar="REV", help="also run every figure on git revision REV, interleaved")
    args = ap.parse_args()
    load0 = os.getloadavg()
    with revision(args.against) if args.against else contextlib.nullcontext() as against:
        rows = figures(args.repeat, args.quick, against)
    load1 = os.getloadavg()
    text = table(rows, args.against)
    print(text)
    load = (f"load average (1, 5, 15 min) {', '.join(f'{x:.1f}' for x in load0)} before, "
            f"{', '.join(f'{x:.1f}' for x in load1)} after")
    print(load)
    if args.doc:
        against = "" if not args.against else (
            f"Each figure was also measured on revision {args.against} (`--against {args.against}`), each of its "
            "runs right after the same run here, so both saw the same load: the last three columns.\n\n")
        args.doc.write_text(DOC.format(machine=machine(), load=load, repeat=args.repeat, table=text, against=against,
                                       command=" ".join(["python benchmarks/speed.py", *sys.argv[1:]]),
                                       date=time.strftime("%Y-%m-%d %H:%M")) + _notes(args.doc))


NOTES = "## Where the time went, and what changed\n"


def _notes(doc: Path) -> str:
    """The notes of `doc` as written (from NOTES on; a fresh heading where it has none): --doc
    regenerates the table above them only."""
    text = doc.read_text() if doc.exists() else ""
    return text[text.index(NOTES):] if NOTES in text else NOTES


DOC = """# Performance

The table is generated by `{command}` ({date}); do not edit it by hand (the notes below it,
from "Where the time went" on, are kept as written when it is generated again).

Machine: {machine}; {load}. The load average is a trailing average that decays over minutes and
counts this run's own processes, so a value of 1-2 can be the tail of earlier work; where other
work shared the 2 cores, the figures are upper bounds and the ratio to a peer measured in the same
run is the figure to compare. Seconds are medians of {repeat}
fresh `prove` processes (one for the long ones); peak GiB is the largest resident size of one
process; exit is the command's exit code (0 proved, 1 refuted, 2 unknown).

{against}{table}

"""

if __name__ == "__main__":
    main()
