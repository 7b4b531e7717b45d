"""The docs cannot drift: every command and every output block in README.md, docs/tutorial.md and
docs/dsl.md is run here and compared.

- A fenced block whose lines start with `$ prove ...` is a transcript: each command is run from the
  repository's root and its stdout must equal the lines printed under it (the seconds column and
  `total … s` aside, which vary from run to run).
- A `prove ...` command in the text is run with its placeholders filled in (`INSTANCES`: one
  concrete command per documented form, and every documented form must have one); it must end
  with the exit code the docs give it (bad input only where the docs say the form refuses it).
- A Python block is executed; what it defines is compared with the example it quotes.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import json
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest

from ringproof.proofs.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("README.md", "docs/tutorial.md", "docs/dsl.md")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"`((?:prove|ringproof|python -m ringproof) [^`]*)`")


def run(argv: list[str]):
    out, err = io.StringIO(), io.StringIO()
    return main(argv, out, err), out.getvalue(), err.getvalue()


def _mask(text: str) -> str:
    """Timings vary: the seconds column of a verdict table, `total 0.04 s`, `in 0.22 s`."""
    text = re.sub(r"(?m)(  )\d+\.\d\d$", r"\1S", text)
    return re.sub(r"\b\d+\.\d\d s\b", "S s", text)


def transcripts():
    for doc in DOCS:
        for lang, body in FENCE.findall((ROOT / doc).read_text()):
            if lang or not body.startswith("$ "):
                continue
            for chunk in re.split(r"(?m)^(?=\$ )", body):
                if chunk:
                    cmd, _, expected = chunk.partition("\n")
                    yield pytest.param(cmd[2:], expected, id=f"{doc}: {cmd[2:]}")


@pytest.mark.parametrize("cmd, expected", list(transcripts()))
def test_every_transcript_prints_what_the_docs_show(cmd, expected, monkeypatch):
    monkeypatch.chdir(ROOT)
    argv = shlex.split(cmd)
    assert argv[0] == "prove"
    code, out, err = run(argv[1:])
    assert code in (0, 1), err
    assert _mask(out) == _mask(expected)


# --------------------------------------------------------------------- commands in the text

def documented() -> set[str]:
    """Every `prove ...` form written in the docs' text (not in a fenced block), whitespace joined."""
    found = set()
    for doc in DOCS:
        text = FENCE.sub("", (ROOT / doc).read_text())
        found |= {" ".join(c.split()).replace("\\|", "|") for c in INLINE.findall(text)}
    return found


# documented form -> (the concrete command run, the exit codes the docs promise). "{tmp}" is a
# fresh directory. Sizes are the smallest that exercise the form, except where the form fixes them.
# The paper's targets run one property here (a whole proof took 3-5 s each); the whole commands are
# `WHOLE`'s, run by the slow `test_every_documented_whole_proof_runs`.
INSTANCES = {
    "prove algo1": ("prove algo1 --property coverage", {0}),
    "prove algo1-printed": ("prove algo1-printed", {1}),
    "prove algo2": ("prove algo2 --property coverage", {0}),
    "prove algo2-printed": ("prove algo2-printed --property coverage", {1}),
    "prove algo3": ("prove algo3 --property coverage", {0}),
    "prove algo3-printed": ("prove algo3-printed --property well-formed", {1}),
    "prove algo2-fast": ("prove algo2-fast --property coverage", {0}),
    "prove algo2-even": ("prove algo2-even --property coverage", {0}),
    "prove algo3-fast": ("prove algo3-fast --property coverage", {0}),
    "prove bound {plain,symmetric,masked} [--json]": ("prove bound masked --json", {0}),
    "prove algo1-general": ("prove algo1-general --property coverage", {0}),
    "prove my_schedule.py": ("prove examples/my_schedule.py --property coverage", {0}),
    "prove TARGET": ("prove algo2-general --property well-formed", {0}),
    "prove TARGET --tier per-m --max-m 8": ("prove algo1 --tier per-m --max-m 8 --property no-conflict", {0}),
    "prove TARGET --property coverage --json": ("prove algo3-general --property coverage --json", {0}),
    "prove algo1 --tier bounded --method bitlevel -n 6 -m 3": ("prove algo1 --tier bounded --method bitlevel -n 6 -m 3", {0}),
    "prove search {plain,symmetric,masked} -n N -m M [--json]": ("prove search masked -n 3 -m 3 --json", {0}),
    "prove search ... [--barriers {global,pe,none}] [--cube-depth K] [--workers W] [--width P] "
    "[--cluster ADDRESS] [--state FILE]":
        ("prove search plain -n 2 -m 2 --barriers pe --cube-depth 1 --workers 1 --width 1 --state {tmp}/state", {0}),
    "prove simulate algo1 -n 15 -m 5 [--json] [--picture FILE.svg]":
        ("prove simulate algo1 -n 15 -m 5 --json --picture {tmp}/s.svg", {0}),
    "prove simulate algo1-general -n 512 -d 64 -m 16 --heads 12 [--batch B] [--scale paper|sdpa|X]":
        ("prove simulate algo1-general -n 32 -d 16 -m 16 --heads 12 --batch 2 --scale sdpa", {0}),
    "prove report [TARGETS...] --out DIR": ("prove report algo1 --property coverage --out {tmp}/r --front no", {0}),
    "prove report": ("prove report algo3 --property no-conflict --format json -o {tmp}/r.json", {0}),
    "prove report algo1 --format html -o report.html [-n 4 -m 2]":
        ("prove report algo1 --property coverage --format html -o {tmp}/report.html -n 4 -m 2", {0}),
    "prove report ... --cross-check cvc5 [--smt2 DIR]":
        ("prove report algo1 --property no-conflict --format md -o {tmp}/r.md --cross-check cvc5 --smt2 {tmp}/q", {0}),
    "prove balance [--patches N --banks B --clusters Q --skew S --overlap F --seed K --time-limit S] [--json]":
        ("prove balance --patches 12 --banks 2 --clusters 4 --skew 0.5 --overlap 0.2 --seed 1 --time-limit 30 --json", {0}),
    "prove balance --time-limit": ("prove balance --patches 8 --banks 2 --clusters 4 --time-limit 30", {0}),
    "prove unroll [--pes N] [--json]": ("prove unroll --pes 256 --json", {0}),
    "prove unroll --timeout": ("prove unroll --pes 256 --timeout 1000", {0}),
    "prove --version": ("prove --version", {0}),
    "prove --help": ("prove --help", {0}),
    "prove examples/ring_contiguous.py": ("prove examples/ring_contiguous.py --property coverage", {0}),
    "prove examples/matvec_padded.py": ("prove examples/matvec_padded.py --property counts", {0}),
    "prove examples/concurrent_ops.py": ("prove examples/concurrent_ops.py --property no-conflict", {0}),
    "prove simulate": ("prove simulate examples/ring_zigzag.py -n 6 -m 2", {64}),   # 2m does not divide n
    "prove simulate examples/matvec.py -n 8 -d 4 -m 2": ("prove simulate examples/matvec.py -n 8 -d 4 -m 2", {0}),
    "prove path/to/file.py": ("prove examples/my_schedule.py --property no-conflict", {0}),
    "prove simulate path/to/file.py -n 6 -m 3": ("prove simulate examples/my_schedule.py -n 6 -m 3", {0}),
    "prove simulate FILE -n N -d D -m M": ("prove simulate examples/matmul.py -n 4 -d 2 -m 2", {0}),
    "prove ring-attention": ("prove ring-attention --property coverage", {0}),
    # the derivation itself (a minute): test_prove_exact_peak_derives_and_proves_the_registered_peaks_on_request (slow)
    "prove ring-attention-causal --exact-peak": ("prove ring-attention-causal --exact-peak --property no-conflict", {0}),
    "prove zigzag --exact-peak": ("prove zigzag --exact-peak --property no-conflict", {0}),
    "prove striped --exact-peak": ("prove striped --exact-peak --property no-conflict", {0}),
    "prove algo2 --exact-peak": ("prove algo2 --exact-peak --property no-conflict", {0}),
    "prove algo2-general --exact-peak": ("prove algo2-general --exact-peak --property no-conflict", {0}),
    "prove striped-bwd --exact-peak": ("prove striped-bwd --exact-peak --property no-conflict", {0}),
    "prove zigzag-bwd --exact-peak": ("prove zigzag-bwd --exact-peak --property no-conflict", {0}),
    "prove ring-attention-causal-bwd --exact-peak": ("prove ring-attention-causal-bwd --exact-peak --property no-conflict", {0}),
    "prove ring-attention-causal-bwd --idle-pes": ("prove ring-attention-causal-bwd --property counts --idle-pes", {0}),
    "prove simulate zigzag -n 16 -m 4 -d 8 --idle-pes": ("prove simulate zigzag -n 8 -m 2 -d 2 --idle-pes", {0}),
    "prove ring-attention-bwd": ("prove ring-attention-bwd --property placement", {0}),
    "prove layout TARGET --against MAP [--max-n N --max-m M]":
        ("prove layout zigzag --against torch-head-tail --max-n 32 --max-m 4", {0}),
    "prove conform TARGET --impl NAME [--world-sizes 2,3,4] [-n N,...] [--dtype float16]":
        ("prove conform zigzag --impl ring-flash-attn --world-sizes 2 -n 8", {0}),
    "prove conform": ("prove conform striped --impl ring-flash-attn --world-sizes 2 -n 8", {0}),
    "prove zigzag-varlen": ("prove zigzag-varlen --property coverage", {0}),
    "prove simulate zigzag-varlen --lengths 4,8,4 -m 2 -d 4": ("prove simulate zigzag-varlen --lengths 4,8,4 -m 2 -d 4", {0}),
    "prove llama3": ("prove llama3 --property coverage", {0}),
    "prove llama3-varlen": ("prove llama3-varlen --property placement", {0}),
    "prove TARGET --property balance": ("prove algo1 --property balance", {0}),
    "prove layout zigzag-varlen --against torch-per-document-head-tail":
        ("prove layout zigzag-varlen --against torch-per-document-head-tail --max-docs 2 --max-len 8 --max-m 2", {1}),
    "prove conform zigzag-varlen --impl ring-flash-attn --lengths 4,8,4":
        ("prove conform zigzag-varlen --impl ring-flash-attn --world-sizes 2 --lengths 4,8,4", {0}),
    "prove conform zigzag --impl torch": ("prove conform zigzag --impl torch --world-sizes 2 -n 8 --rotate alltoall", {0}),
    "prove conform llama3-varlen --impl ring-flash-attn --lengths 4,8,4":
        ("prove conform llama3-varlen --impl ring-flash-attn --world-sizes 2 --lengths 4,8,4", {0}),
    "prove layout permutation --against torch-ptrr":
        ("prove layout permutation --against torch-ptrr --max-n 512 --max-m 2", {0}),
    "prove examples/allgather_segments.py": ("prove examples/allgather_segments.py --property coverage", {0}),
}
NEEDS_CVC5 = {"prove report ... --cross-check cvc5 [--smt2 DIR]"}
NEEDS_TORCH = {"prove layout TARGET --against MAP [--max-n N --max-m M]",
               "prove layout zigzag-varlen --against torch-per-document-head-tail",
               "prove conform zigzag --impl torch", "prove layout permutation --against torch-ptrr"}
NEEDS_RING_FLASH_ATTN = {"prove conform TARGET --impl NAME [--world-sizes 2,3,4] [-n N,...] [--dtype float16]",
                         "prove conform", "prove conform zigzag-varlen --impl ring-flash-attn --lengths 4,8,4",
                         "prove conform llama3-varlen --impl ring-flash-attn --lengths 4,8,4"}


def test_every_documented_command_has_an_instance():
    assert documented() == set(INSTANCES)


@pytest.mark.parametrize("form", sorted(INSTANCES))
def test_every_documented_command_runs(form, tmp_path, monkeypatch):
    if form in NEEDS_CVC5:
        pytest.importorskip("cvc5")
    if form in NEEDS_TORCH | NEEDS_RING_FLASH_ATTN:
        pytest.importorskip("torch")
    # installed, not imported: its package __init__ needs flash-attn's GPU kernels, which
    # `prove conform` does without (an import here skipped these commands wherever it was installed)
    if form in NEEDS_RING_FLASH_ATTN and importlib.util.find_spec("ring_flash_attn") is None:
        pytest.skip("ring-flash-attn is not installed: pip install -e .[cp]")
    monkeypatch.chdir(ROOT)
    cmd, codes = INSTANCES[form]
    code, out, err = run(shlex.split(cmd.format(tmp=tmp_path))[1:])
    assert code in codes, err
    if "--json" in cmd:
        json.loads(out)


WHOLE = {"prove algo1": {0}, "prove algo2": {0}, "prove algo3": {0}, "prove algo2-printed": {1},
         "prove algo3-printed": {1}}


@pytest.mark.slow
@pytest.mark.parametrize("cmd", sorted(WHOLE))
def test_every_documented_whole_proof_runs(cmd, monkeypatch):
    """The documented whole proofs with the exit codes the docs give them (the default run: one
    property each in `test_every_documented_command_runs`; every property of each proved or refuted
    in test_algo1.py's `parametric`, test_algo2.py's and test_algo3.py's `parametric` and counts
    tests, the printed ones' defects in `test_each_printed_defect_*`)."""
    monkeypatch.chdir(ROOT)
    code, _, err = run(shlex.split(cmd)[1:])
    assert code in WHOLE[cmd], err


def test_the_json_keys_the_readme_names():
    """README: `prove TARGET --property coverage --json` prints {"target", "results": [{"property",
    "phase", "verdict", "tier", "seconds", "counterexample"}]}."""
    code, out, _ = run(["algo1", "--property", "coverage", "--json"])
    doc = json.loads(out)
    assert code == 0 and "target" in doc
    assert all(set(r) >= {"property", "phase", "verdict", "tier", "seconds", "counterexample"} for r in doc["results"])


def test_the_setup_commands_name_what_pyproject_defines():
    """`pip install -e '.[X]'` extras exist, and `-m slow` is a registered marker."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    text = (ROOT / "README.md").read_text()
    extras = {e for group in re.findall(r"pip install -e '\.\[([\w,]+)\]'", text) for e in group.split(",")}
    assert extras and extras <= set(config["project"]["optional-dependencies"])
    assert any(m.startswith("slow:") for m in config["tool"]["pytest"]["ini_options"]["markers"])
    assert set(config["project"]["scripts"]) == {"prove", "ringproof"}


def test_the_readme_layout_names_folders_and_files_that_exist():
    layout = next(body for lang, body in FENCE.findall((ROOT / "README.md").read_text())
                  if not lang and body.startswith("ringproof/"))
    tracked = {Path(p).name for p in subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True,
                                                   text=True, check=True).stdout.split()}
    for line in layout.splitlines():
        folder = re.match(r"^(\w+)/", line)
        if folder:
            assert (ROOT / folder[1]).is_dir(), line
        for name in _names(line):
            assert name in tracked, f"README's layout names {name}, which the repository does not have"


def _names(line: str):
    """File names in a layout line; `algo1-3.md` stands for algo1.md, algo2.md, algo3.md."""
    for name in re.findall(r"\b([\w-]+\.(?:py|md))\b", line):
        short = re.fullmatch(r"(\w+?)(\d)-(\d)\.(\w+)", name)
        if short:
            yield from (f"{short[1]}{i}.{short[4]}" for i in range(int(short[2]), int(short[3]) + 1))
        else:
            yield name


# --------------------------------------------------------------------- Python blocks

def python_blocks(doc: str) -> list[str]:
    return [body for lang, body in FENCE.findall((ROOT / doc).read_text()) if lang == "python"]


def test_tutorial_python_blocks_are_the_examples():
    declare, derive = python_blocks("docs/tutorial.md")
    namespace: dict = {}
    exec(declare, namespace)
    from ringproof.proofs.cli.targets import load_file

    example = load_file(ROOT / "examples" / "matvec.py")
    ours, theirs = namespace["MATVEC"], example.problem
    assert (ours.name, ours.inputs, ours.output) == (theirs.name, theirs.inputs, theirs.output)
    shape = lambda p: [(e.target, e.op, e.reduce, e.reduce_at, e.where) for e in p.equations]  # noqa: E731
    assert shape(ours) == shape(theirs)
    assert derive.strip() in (ROOT / "examples" / "matvec_broken.py").read_text()


def test_dsl_python_block_builds_algorithm_1s_phase_1():
    """docs/dsl.md's block is Algorithm 1's phase 1 (its inverse elided): the same step on ints."""
    from types import SimpleNamespace

    from ringproof.schedules.algo1 import ALGO1

    block = next(b for b in python_blocks("docs/dsl.md") if "PHASE1 = Phase(" in b)
    namespace: dict = {}
    exec(block, namespace)
    ours, theirs = namespace["PHASE1"], ALGO1.phase("phase1")
    assert [lp.name for lp in ours.loops] == [lp.name for lp in theirs.loops]
    n, m = 6, 3
    P = SimpleNamespace(n=n, m=m, k=n // m, d=n, kd=n // m)
    for h, i, j, l in [(1, 1, 1, 1), (2, 2, 3, 2), (6, 1, 6, 3), (3, 2, 4, 1)]:
        ix = SimpleNamespace(h=h, i=i, j=j, l=l)
        a, b = ours.step(P, ix), theirs.step(P, ix)
        assert (a.pe, a.target, a.operands) == (b.pe, b.target, b.operands)


@pytest.mark.slow
def test_the_readme_simulate_at_the_size_it_writes():
    """The default run takes that form at n = 32 (INSTANCES); here at the size README writes."""
    code, out, err = run(shlex.split("simulate algo1-general -n 512 -d 64 -m 16 --heads 12"))
    assert code == 0, err
    assert "12 heads" in out


# --------------------------------------------------------------------- names of the code

PACKAGES = {"ringproof": "ringproof", "schedules": "ringproof.schedules", "model": "ringproof.model",
            "proofs": "ringproof.proofs"}
DOTTED = re.compile(r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\([^`]*\))?`")
FORM = re.compile(r"(?:MAC|EAC|DIV|MAX|NORM|MOVE)\d*")      # `ring.MAC`: phase ring's form MAC


def _modules() -> dict[str, Path]:
    """{dotted module name: its file} of the package."""
    found = {}
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            found[".".join((package, *parts))] = path
    return found


def _defined(path: Path) -> set[str]:
    """Names a module defines or imports at its top level, and its classes' members as Class.name
    and as name (a method in a profile, `normalize.cond`)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            for n in ast.walk(node):
                member = n.name if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) else \
                    n.id if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) else None
                if member:
                    names |= {member, f"{node.name}.{member}"}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _json_keys() -> set[str]:
    """Every property name of the shipped JSON schemas (`memory.closed_form` is a key, not code)."""
    keys = set()

    def walk(node):
        if isinstance(node, dict):
            keys.update(node.get("properties", {}) if isinstance(node.get("properties"), dict) else ())
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    for schema in [*(ROOT / "docs" / "json-schemas").glob("*.json"), ROOT / "docs" / "report.schema.json"]:
        walk(json.loads(schema.read_text()))
    return keys


def _unresolved(text: str, modules: dict, keys: set) -> list[str]:
    """The `module.name` references of `text` whose module is one of the package's (by its last
    name, or dotted from ringproof) and whose name it does not define."""
    leaf: dict = {}
    for dotted in modules:
        leaf.setdefault(dotted.rsplit(".", 1)[-1], []).append(dotted)
    defined: dict = {}
    bad = []
    for ref in DOTTED.findall(text):
        parts = ref.split(".")
        if parts[-1] in ("py", "md", "json", "html", "toml") or FORM.fullmatch(parts[-1]) \
                or all(p in keys for p in parts):
            continue
        found = False
        for module in ["ringproof"] if parts[0] == "ringproof" else leaf.get(parts[0], []):
            rest = parts[1:]
            while rest and f"{module}.{rest[0]}" in modules:
                module, rest = f"{module}.{rest[0]}", rest[1:]
            names = defined.setdefault(module, _defined(modules[module]))
            found = found or not rest or ".".join(rest[:2]) in names or (len(rest) == 1 and rest[0] in names)
        if not found and (parts[0] == "ringproof" or parts[0] in leaf):
            bad.append(ref)
    return bad


def test_the_module_names_the_docs_write_exist():
    """A backticked `spread.chunked` or `algo1.phase2a` in README or docs/ names a module of the
    package and a name it defines (read from its source): a renamed function leaves no stale name."""
    modules, keys = _modules(), _json_keys()
    stale = {doc.name: _unresolved(doc.read_text(), modules, keys)
             for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]}
    assert not {doc: refs for doc, refs in stale.items() if refs}


def test_a_stale_module_name_is_found():
    modules, keys = _modules(), _json_keys()
    assert _unresolved("`spread._chunked`, `algo1._phase2a`, `ringproof.proofs.figures.spread.nothing`",
                       modules, keys) == ["spread._chunked", "algo1._phase2a", "ringproof.proofs.figures.spread.nothing"]
    assert _unresolved("`spread.chunked`, `normalize.cond`, `ring.MAC2`, `memory.closed_form`, `report.html`, "
                       "`Schedule.stays`, `conform.Packed.call`", modules, keys) == []
