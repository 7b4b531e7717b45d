"""Load a user's callable named `MODULE:NAME` (a module on the path, or a .py file)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

from ringproof.errors import BadInput

# what the callable an option names is run with: `prove conform --impl` runs it on torch tensors
# in torch.distributed process groups, so without torch that is bad input with its install hint
# (not an internal error in a rank, exit 70), said before the user's module is imported
NEEDS = {"--impl": ("torch", "pip install -e '.[torch]'")}


def load_callable(spec: str, what: str):
    """The callable `spec` names; BadInput (exit 64) when it cannot be imported or is not callable,
    or when what runs it is not installed (`NEEDS`)."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise BadInput(f"{what} {spec[:80]!r}: expected MODULE:CALLABLE (a module name or a .py file)")
    if what in NEEDS:
        package, hint = NEEDS[what]
        try:
            importlib.import_module(package)
        except ImportError:
            raise BadInput(f"{what} {spec[:80]}: running it needs {package}, which is not installed "
                           f"({hint})") from None
    try:
        if module_name.endswith(".py"):
            module = _load_file(Path(module_name))
        else:
            module = importlib.import_module(module_name)
    except BadInput:
        raise
    except Exception as err:  # a user's module may fail in any way; one line says how
        raise BadInput(f"cannot import {module_name} ({what}): {type(err).__name__}: {err}") from None
    fn = module
    for part in attr.split("."):
        fn = getattr(fn, part, None)
        if fn is None:
            raise BadInput(f"{module_name} has no {attr} ({what})")
    if not callable(fn):
        raise BadInput(f"{spec} is a {type(fn).__name__}, not a callable ({what})")
    return fn


def _load_file(path: Path):
    if not path.is_file():
        raise BadInput(f"{path} does not exist")
    name = f"ringproof_user_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
