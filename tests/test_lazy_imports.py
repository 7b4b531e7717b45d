"""Heavy libraries are imported where they are used, not to print help or to use the DSL."""

import subprocess
import sys

import pytest

HEAVY = ("sympy", "z3", "scipy", "pysat", "numpy")

PROBE = """
import io, sys
from ringproof.proofs.cli.main import main
main({argv!r}, io.StringIO(), io.StringIO())
print(",".join(m for m in {heavy!r} if m in sys.modules))
"""


@pytest.mark.parametrize("argv", [["--help"], ["simulate", "--help"],
                                  ["search", "--help"], ["unroll", "--help"]])
def test_help_imports_no_heavy_library(argv):
    out = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv, heavy=HEAVY[:4])],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"prove {' '.join(argv)} imported {out}"


def test_the_dsl_alone_imports_neither_sympy_nor_numpy():
    probe = ("import sys; from ringproof.proofs.cli.targets import registry; "
             "s = registry()['algo1']; print(','.join(m for m in ('sympy', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_a_paper_target_is_resolved_from_its_own_module():
    """`prove algo1` builds neither the other schedules nor the help text (0.1 s of CPU a run);
    `prove --help` still lists every registered name, each its schedule's own."""
    probe = ("import sys; from ringproof.proofs.cli.targets import resolve; from ringproof.proofs.cli.verify import parser; "
             "args = parser().parse(['algo1'], None); s = resolve(args.target); "
             "print(s.name, ','.join(m for m in ('context_parallel', 'algo2', 'algo3') "
             "if 'ringproof.schedules.' + m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["algo1"]
    import io
    from ringproof.proofs.cli.targets import registry
    from ringproof.proofs.cli.verify import parser
    out = io.StringIO()
    assert parser().parse(["--help"], out) is None
    names = registry()
    assert all(s.name == name for name, s in names.items()) and len(names) == 20
    assert all(name in "".join(out.getvalue().split()) for name in names)     # argparse breaks lines at hyphens
