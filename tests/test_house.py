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
