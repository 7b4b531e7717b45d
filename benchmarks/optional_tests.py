"""How many tests each optional part enables: the tests that skip when that part is hidden.

    python benchmarks/optional_tests.py [--jobs N]

Prints a Markdown table for docs/testing.md: for each optional part (Chromium, torch, ring-flash-attn,
pdftotext), the number of tests of the default run (`-m "not slow"`) that skip without it. Every part
must be installed on the machine that runs this (it says which is missing otherwise).

How: a test can need a part only if the part's name occurs in its own source, its decorators or a
function or fixture of its module that it reaches (`candidates`, by reading the test files). Those
candidates are run with the part hidden (`pytest -p optional_tests`, `RINGPROOF_HIDE=PART`: a
module set to None in sys.modules, as an absent one is to `import` and `importlib.util.find_spec`;
a program's name answered None by `shutil.which`) and the ones that skip are counted; a candidate
that does not skip just runs. The figure is a count of pytest items (each parametrization one).
"""

from __future__ import annotations

import argparse
import ast
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

# part -> (what installs it, what hides it: 'module:NAME' or 'program:NAME,...', the text that marks
# a test as possibly needing it, what it adds)
PARTS = {
    "Chromium": ("apt-get install chromium", "program:chromium,chromium-browser,google-chrome,google-chrome-stable",
                 r"_chromium|browser\(\)|Chromium|print_pdf", "report.pdf; the HTML report opened in a real browser"),
    "torch": ("pip install -e '.[torch]' (or '.[cp]')", "module:torch", r"""["']torch["']|\btorch\.""",
              "cross-checks against PyTorch's SDPA; prove conform of a user's function and of --impl torch"),
    "ring-flash-attn": ("pip install -e '.[cp]'", "module:ring_flash_attn", r"ring_flash_attn|ring-flash-attn|needs_library",
                        "prove conform against ring-flash-attn"),
    "pdftotext": ("apt-get install poppler-utils", "program:pdftotext", r"pdftotext|_pdf_pages",
                  "the printed report's pages read back as text"),
}


# ----------------------------------------------------------------------------- the plugin (-p optional_tests)

def pytest_configure(config):
    """Hide the part named by RINGPROOF_HIDE for the whole test process."""
    hide = os.environ.get("RINGPROOF_HIDE")
    if not hide:
        return
    kind, names = PARTS[hide][1].split(":")
    if kind == "module":
        sys.modules[names] = None               # `import` raises ImportError, find_spec answers None
    else:
        hidden, which = set(names.split(",")), shutil.which
        shutil.which = lambda cmd, *a, **k: None if Path(str(cmd)).name in hidden else which(cmd, *a, **k)


def _record(kind: str, nodeid: str) -> None:
    if os.environ.get("RINGPROOF_OUT"):
        with open(os.environ["RINGPROOF_OUT"], "a", encoding="utf-8") as f:
            f.write(json.dumps([kind, nodeid]) + "\n")


def pytest_runtest_logreport(report):
    if report.skipped:
        _record("test", report.nodeid)


def pytest_collectreport(report):
    """A module that skips as it is imported (a module-level importorskip): its tests, counted later."""
    if report.skipped and report.nodeid.endswith(".py"):
        _record("module", report.nodeid)


# ----------------------------------------------------------------------------- the candidates

def _reached(tree: ast.Module) -> dict[str, set[str]]:
    """{module-level function name: the module-level names it reaches, itself included}, through
    calls, decorators and fixture parameters."""
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    uses = {name: {x.id for x in ast.walk(node) if isinstance(x, ast.Name)} | {a.arg for a in node.args.args}
            for name, node in defs.items()}
    reach = {}
    for name in defs:
        seen, todo = set(), [name]
        while todo:
            f = todo.pop()
            if f not in seen:
                seen.add(f)
                todo += [u for u in uses.get(f, ()) if u in defs or u in uses]
        reach[name] = seen
    return reach


def candidates(part: str) -> list[str]:
    """The test files and test functions ('file::name') that may need `part`."""
    mark = re.compile(PARTS[part][2])
    out = []
    for path in sorted(TESTS.glob("test_*.py")):
        source = path.read_text(encoding="utf-8")
        if not mark.search(source):
            continue
        tree = ast.parse(source)
        top = "\n".join(ast.get_source_segment(source, n) or "" for n in tree.body
                        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
        names = {n.name: ast.get_source_segment(source, n) or "" for n in tree.body
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        assigned = {t.id: ast.get_source_segment(source, n) or "" for n in tree.body if isinstance(n, ast.Assign)
                    for t in n.targets if isinstance(t, ast.Name)}
        texts = {**assigned, **names}
        rel = path.relative_to(ROOT)
        if re.search(r"importorskip\(", top) and mark.search(top):     # the whole module needs it
            out.append(str(rel))
            continue
        for name, reached in _reached(tree).items():
            if name.startswith("test_") and any(mark.search(texts.get(r, "")) for r in reached):
                out.append(f"{rel}::{name}")
        out += [f"{rel}::{n.name}" for n in tree.body if isinstance(n, ast.ClassDef) and n.name.startswith("Test")
                and mark.search(ast.get_source_segment(source, n) or "")]
    return out


def missing() -> list[str]:
    import importlib.util

    gone = []
    for part, (_, hide, _, _) in PARTS.items():
        kind, names = hide.split(":")
        found = importlib.util.find_spec(names) if kind == "module" else any(map(shutil.which, names.split(",")))
        if not found:
            gone.append(part)
    return gone


def skipped_without(part: str, jobs: int) -> int:
    """How many of `part`'s candidates skip when it is hidden."""
    tests = candidates(part)
    if not tests:
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "skipped.jsonl"
        out.touch()
        env = {**os.environ, "RINGPROOF_HIDE": part, "RINGPROOF_OUT": str(out),
               "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "optional_tests", "-m", "not slow", "-p", "no:cacheprovider",
               *(["-n", str(jobs)] if jobs > 1 else []), *tests]
        subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        found = {tuple(json.loads(line)) for line in out.read_text(encoding="utf-8").splitlines()}
    tests = {nodeid for kind, nodeid in found if kind == "test"}
    modules = sorted(nodeid for kind, nodeid in found if kind == "module")
    return len(tests) + (len(_items(modules)) if modules else 0)


def _items(modules: list[str]) -> list[str]:
    """The test items of `modules` as collected with every part present."""
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow",
                          "-p", "no:cacheprovider", *modules], cwd=ROOT, capture_output=True, text=True)
    return [line for line in run.stdout.splitlines() if "::" in line]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=1, help="pytest-xdist workers (default 1)")
    args = p.parse_args(argv)
    gone = missing()
    if gone:
        print(f"optional_tests: install {', '.join(gone)} first: the count is of the tests that skip without "
              "each part, so each must be there to begin with", file=sys.stderr)
        return 64
    rows = [(part, PARTS[part][0], skipped_without(part, args.jobs), PARTS[part][3]) for part in PARTS]
    print("| optional part | install | tests that skip without it | what it adds |")
    print("| --- | --- | --- | --- |")
    for part, install, count, adds in rows:
        print(f"| {part} | `{install}` | {count} | {adds} |")
    print(f"\nGenerated by `python benchmarks/optional_tests.py` on {datetime.date.today().isoformat()}, "
          f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()} "
          f"(the default run, `-m \"not slow\"`; torch is in both [torch] and [cp]).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
