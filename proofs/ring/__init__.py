"""The ring prover: normalization and its lemma library, obligations derived from a schedule, Z3
discharge, bounded enumeration and `verify`; the figures it derives live in
`ringproof.proofs.figures`.

The figure modules' old names under this package still import (`MOVED`: old name -> module), as
the same module objects, for library callers written against them."""

import importlib
import importlib.abc
import importlib.util
import sys

MOVED = {
    "counting": "ringproof.proofs.figures.counting", "nests": "ringproof.proofs.figures.nests",
    "witness": "ringproof.proofs.figures.signs", "spread": "ringproof.proofs.figures.spread",
    "readable": "ringproof.proofs.figures.readable", "recount": "ringproof.proofs.figures.recount",
    "conjunction": "ringproof.proofs.figures.conjunction",
    "held": "ringproof.proofs.figures.memory.held", "stays": "ringproof.proofs.figures.memory.stays",
    "ledger": "ringproof.proofs.figures.memory.ledger",
    "peak_bound": "ringproof.proofs.figures.memory.peak_bound",
    "sparse": "ringproof.proofs.figures.memory.sparse",
}


class _OldNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `ringproof.proofs.ring.<old>` and hands out the moved module itself."""

    def find_spec(self, fullname, path=None, target=None):
        prefix, _, name = fullname.rpartition(".")
        if prefix == __name__ and name in MOVED:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return importlib.import_module(MOVED[spec.name.rpartition(".")[2]])

    def exec_module(self, module):
        """The moved module ran when it was imported: nothing more to run."""


if not any(isinstance(f, _OldNames) for f in sys.meta_path):
    sys.meta_path.append(_OldNames())


def __getattr__(name):
    if name in MOVED:
        return importlib.import_module(MOVED[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
