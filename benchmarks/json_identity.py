"""`prove TARGET --json` of every registered target, here and at another revision, compared.

    python benchmarks/json_identity.py --against REV [--jobs 1] [--keep DIR]
    python benchmarks/json_identity.py dump [--rev REV] --out DIR [--jobs 1]
    python benchmarks/json_identity.py compare OLD_DIR NEW_DIR

A change of the prover's plumbing must leave every document as it was: the same values under the
same keys, where the new one may only add (a key of a dict, a result row of a property the old
revision did not report). Seconds and solver statistics (`solver.z3`, `solver.cross_check.seconds`)
differ from run to run and are left out. `--against` dumps both revisions one target after the
other (each pair under the same load) and prints, per target, "same", "added: ..." or what
differs; its exit code is 1 where any document lost or changed a value.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed import PROVE, as_users, revision  # noqa: E402

# properties a new revision may add as result rows
ADDED_PROPERTIES = ("balance", "memory")


def targets() -> list[str]:
    """Every registered target (what `prove report` with no target runs), of this tree."""
    from ringproof.proofs.cli.targets import registry
    return sorted(registry())


def dump(target: str, jobs: int, env: dict | None = None) -> dict:
    """`prove TARGET --json --jobs JOBS` run as a fresh process (in `env`: another revision)."""
    proc = subprocess.run([sys.executable, "-P", "-c", PROVE, target, "--json", "--quiet", "--jobs", str(jobs)],
                          capture_output=True, text=True, env=as_users(env))
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        doc = {"unparsed": proc.stdout[-2000:], "stderr": proc.stderr[-2000:]}
    return {"exit": proc.returncode, "doc": doc}


def steady(x, path: tuple = ()):
    """`x` without what differs between runs: every `seconds`, the solvers' statistics."""
    if isinstance(x, dict):
        return {k: steady(v, path + (k,)) for k, v in x.items()
                if k != "seconds" and not (k == "z3" and path[-1:] == ("solver",))}
    if isinstance(x, list):
        return [steady(v, path) for v in x]
    return x


def differences(old, new, where: str = "") -> tuple[list[str], list[str]]:
    """(what `new` lost or changed of `old`, what it added), as paths."""
    lost, added = [], []
    if isinstance(old, dict) and isinstance(new, dict):
        for k in old:
            if k not in new:
                lost.append(f"{where}.{k} removed")
            else:
                a, b = differences(old[k], new[k], f"{where}.{k}")
                lost += a
                added += b
        added += [f"{where}.{k}" for k in new if k not in old]
    elif where.endswith(".results") and isinstance(old, list) and isinstance(new, list):
        key = (lambda r: (r.get("property"), r.get("phase")))
        rows = {key(r): r for r in new}
        for r in old:
            if key(r) not in rows:
                lost.append(f"{where}[{key(r)}] removed")
            else:
                a, b = differences(r, rows[key(r)], f"{where}[{'/'.join(map(str, key(r)))}]")
                lost += a
                added += b
        for r in new:
            if key(r) not in {key(o) for o in old}:
                (added if r.get("property") in ADDED_PROPERTIES else lost).append(
                    f"{where}[{'/'.join(map(str, key(r)))}] row")
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a_, b_) in enumerate(zip(old, new)):
            a, b = differences(a_, b_, f"{where}[{i}]")
            lost += a
            added += b
    elif old != new:
        lost.append(f"{where}: {json.dumps(old)[:120]} -> {json.dumps(new)[:120]}")
    return lost, added


def compare(old: dict, new: dict) -> tuple[list[str], list[str]]:
    """`differences` of two dumps (exit codes included), seconds and statistics left out."""
    lost, added = differences(steady(old["doc"]), steady(new["doc"]))
    if old["exit"] != new["exit"]:
        lost.insert(0, f"exit {old['exit']} -> {new['exit']}")
    return lost, added


def report(name: str, lost: list, added: list) -> str:
    if lost:
        return f"{name}: DIFFERS\n" + "".join(f"    {x}\n" for x in lost[:20])
    return f"{name}: " + (f"same; added: {', '.join(added[:12])}" + (" ..." if len(added) > 12 else "")
                          if added else "same")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", nargs="?", choices=("against", "dump", "compare"), default="against")
    p.add_argument("dirs", nargs="*", help="compare: OLD_DIR NEW_DIR")
    p.add_argument("--against", metavar="REV", help="the revision to compare with")
    p.add_argument("--rev", help="dump: the revision to dump (default: this tree)")
    p.add_argument("--out", help="dump: the folder to write TARGET.json into")
    p.add_argument("--keep", help="against: also write both revisions' dumps under this folder")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--only", action="append", help="these targets only (repeatable)")
    args = p.parse_args(argv)
    names = args.only or targets()
    if args.mode == "compare":
        bad = 0
        for name in names:
            old_f, new_f = (Path(d) / f"{name}.json" for d in args.dirs)
            if not old_f.exists() or not new_f.exists():
                print(f"{name}: missing")
                bad += 1
                continue
            lost, added = compare(json.loads(old_f.read_text()), json.loads(new_f.read_text()))
            print(report(name, lost, added), flush=True)
            bad += bool(lost)
        return 1 if bad else 0
    if args.mode == "dump":
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)

        def write(env):
            for name in names:
                (out / f"{name}.json").write_text(json.dumps(dump(name, args.jobs, env)))
                print(f"{name}: dumped", flush=True)
        if args.rev:
            with revision(args.rev) as env:
                write(env)
        else:
            write(None)
        return 0
    if not args.against:
        p.error("--against REV")
    bad = 0
    with revision(args.against) as env:
        for name in names:
            old, new = dump(name, args.jobs, env), dump(name, args.jobs)
            if args.keep:
                for sub, d in (("old", old), ("new", new)):
                    (Path(args.keep) / sub).mkdir(parents=True, exist_ok=True)
                    (Path(args.keep) / sub / f"{name}.json").write_text(json.dumps(d))
            lost, added = compare(old, new)
            print(report(name, lost, added), flush=True)
            bad += bool(lost)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
