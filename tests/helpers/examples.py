"""The files of examples/ loaded as modules, as `prove FILE` loads a user's schedule (the folder on
the path while it runs, so an example may import its neighbours)."""

import importlib.util
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"


def load(name: str):
    """examples/NAME.py as a module."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(EXAMPLES))
