"""The house: one `ringproof` namespace, layers that import one way, errors mapped to exit codes."""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ringproof.errors import InternalError
from ringproof.proofs.cli import main

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"ringproof": "ringproof", "schedules": "ringproof.schedules", "model": "ringproof.model",
           "proofs": "ringproof.proofs"}
LAYER = {"ringproof.schedules": 0, "ringproof.model": 1, "ringproof.proofs": 2}


def _prove() -> str:
    exe = Path(sys.executable).parent / "prove"
    return str(exe) if exe.exists() else "prove"


def test_every_package_folder_is_installed_under_ringproof():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = set()
    for folder, package in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *rel)))
    assert found == listed
    assert set(config["package-dir"].values()) == set(FOLDERS)


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)


@pytest.mark.parametrize("folder", ["schedules", "model", "proofs"])
def test_imports_go_one_way_and_only_through_ringproof(folder):
    """schedules ← model ← proofs, and no module imports a bare `model`, `proofs` or `schedules`."""
    mine = LAYER[FOLDERS[folder]]
    for path in (ROOT / folder).rglob("*.py"):
        for mod in _imports(path):
            assert mod.split(".")[0] not in ("model", "proofs", "schedules"), (path, mod)
            for layer, rank in LAYER.items():
                if mod == layer or mod.startswith(layer + "."):
                    assert rank <= mine, f"{path.relative_to(ROOT)} imports {mod} (a higher layer)"


def _module_of(path: Path) -> str:
    """The dotted name under which `path` (in one of FOLDERS) is installed."""
    folder, *parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join((FOLDERS[folder], *(parts[:-1] if parts[-1] == "__init__" else parts)))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(source: str, me: str, modules: set) -> list[tuple[int, str]]:
    """(line, `module._name`) for each underscore name of another ringproof module that `source`
    (the module `me`) imports, or reads as an attribute of a module it imported."""
    found, bound = [], {}
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:     # relative: from `me` if it is a package, else from its package
                parts = me.split(".")
                parts = parts[:len(parts) - node.level + any(m.startswith(me + ".") for m in modules)]
                base = ".".join(parts + ([base] if base else []))
            if base != "ringproof" and not base.startswith("ringproof."):
                continue
            for alias in node.names:
                if _private(alias.name) and base != me:
                    found.append((node.lineno, f"{base}.{alias.name}"))
                elif f"{base}.{alias.name}" in modules:
                    bound[alias.asname or alias.name] = f"{base}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "ringproof":
                    bound[alias.asname or "ringproof"] = alias.name if alias.asname else "ringproof"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            chain, value = [], node.value
            while isinstance(value, ast.Attribute):
                chain.insert(0, value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                module = ".".join([bound[value.id], *chain])
                if module in modules and module != me:
                    found.append((node.lineno, f"{module}.{node.attr}"))
    return sorted(found)


def test_no_module_uses_another_modules_private_names():
    """An underscore name is its module's own: a name another module (or an example) needs is
    public, with a docstring, or lives in a module both use. Tests and benchmarks may reach in."""
    paths = [p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")]
    modules = {_module_of(p) for p in paths}
    uses = {}
    for path in paths + sorted((ROOT / "examples").glob("*.py")):
        me = _module_of(path) if path in paths else f"examples.{path.stem}"
        for line, name in private_uses(path.read_text(), me, modules):
            uses[f"{path.relative_to(ROOT)}:{line}"] = name
    assert not uses


def test_a_private_name_used_across_modules_is_found():
    modules = {"ringproof.schedules.algo1", "ringproof.schedules.algo3", "ringproof.proofs.cp",
               "ringproof.proofs.cp.conform", "ringproof.proofs.cp.kernels"}
    source = """
from ringproof.schedules.algo1 import PAPER, _phase2a
from ringproof.schedules import algo3
from . import kernels
from .conform import _Packed
import ringproof.schedules.algo1 as a1
x = algo3._chain(P, ix), algo3.phase1(()), kernels._row(q, 0), a1._w1_last, self._own, _mine()
"""
    assert private_uses(source, "ringproof.proofs.cp.allgather_conform", modules) == [
        (2, "ringproof.schedules.algo1._phase2a"), (5, "ringproof.proofs.cp.conform._Packed"),
        (7, "ringproof.proofs.cp.kernels._row"), (7, "ringproof.schedules.algo1._w1_last"),
        (7, "ringproof.schedules.algo3._chain")]
    assert private_uses("from . import _own\nfrom .. import _other", "ringproof.proofs.cp", modules) == [
        (2, "ringproof.proofs._other")]
    assert private_uses("from ringproof.schedules.algo1 import _column\n_column(P)", "ringproof.schedules.algo1",
                        modules) == []


def test_users_own_model_proofs_and_schedules_modules_do_not_collide(tmp_path):
    for name in ("model", "proofs", "schedules"):
        (tmp_path / f"{name}.py").write_text(f'WHO = "the user-{name}"\n')
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def run(*cmd):
        return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    r = run(_prove(), "algo1", "--property", "coverage")
    assert r.returncode == 0, r.stderr
    r = run(_prove(), str(ROOT / "examples" / "my_schedule.py"), "--property", "no-conflict")
    assert r.returncode == 0, r.stderr
    r = run(sys.executable, "-c", "import ringproof, model, proofs, schedules; print(model.WHO, proofs.WHO)")
    assert r.returncode == 0 and r.stdout.split() == ["the", "user-model", "the", "user-proofs"], r


def test_nothing_named_model_proofs_or_schedules_is_installed_at_top_level(tmp_path):
    code = "import importlib.util as u; print([u.find_spec(x) for x in ('model', 'proofs', 'schedules')])"
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "[None, None, None]", r.stdout + r.stderr


def test_the_facade_exports_the_dsl_and_the_prover():
    import ringproof

    for name in ringproof.__all__:
        assert getattr(ringproof, name) is not None, name
    assert ringproof.verify.__module__ == "ringproof.proofs.ring.prover"


BROKEN_STEP = """
from dataclasses import replace
from ringproof import ALGO1, Phase
p = ALGO1.phases[0]

def step(P, ix):
    {body}
    return p.step(P, ix)

SCHEDULE = replace(ALGO1, name="broken", phases=(Phase(p.name, p.loops, step, p.inverse),) + ALGO1.phases[1:])
"""


@pytest.mark.parametrize("body, error", [("None + 1", "TypeError"), ("1 // 0", "ZeroDivisionError"),
                                         ("ix.nothing", "AttributeError")])
def test_a_user_step_that_raises_is_bad_input_naming_its_line(tmp_path, body, error):
    path = tmp_path / "broken.py"
    path.write_text(BROKEN_STEP.format(body=body))
    err = io.StringIO()
    code = main([str(path), "--property", "coverage"], io.StringIO(), err)
    assert code == 64
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and error in lines[0] and f"{path}:7" in lines[0], lines


def test_an_internal_fault_exits_70_never_1(monkeypatch):
    from ringproof.proofs.ring import prover
    def boom(*args, **kwargs):
        raise KeyError("injected fault")

    monkeypatch.setattr(prover, "derive", boom)
    err = io.StringIO()
    assert main(["algo1", "--property", "coverage"], io.StringIO(), err) == InternalError.exit_code == 70
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and "internal error" in lines[0] and "--debug" in lines[0]
    err = io.StringIO()
    assert main(["algo1", "--property", "coverage", "--debug"], io.StringIO(), err) == 70
    assert "Traceback" in err.getvalue()
