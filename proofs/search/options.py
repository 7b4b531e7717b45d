"""How the optimal-schedule search looks for the minimum, with every default written once (`search`
and `prove search`'s options read them from here). None of them changes a minimum the search
proves; a timeout or `max_T` may leave none proven."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Callable

from ringproof.proofs.search.portfolio import DEFAULT_SOLVER


@dataclass(frozen=True)
class SearchOptions:
    max_T: int | None = None         # give up above this many cycles (None: the lemma bound + 2n + 4)
    timeout: float | None = None     # seconds for the whole search (None: no limit)
    solver: str = DEFAULT_SOLVER     # "portfolio", a pysat solver name or "z3"
    lemmas: bool = True              # start at the lemma bound L1 + L2b + L3 (False: slot counting)
    depth: int = 0                   # split each T into m^depth cubes
    workers: int = 1                 # local processes running cubes
    cluster: str | None = None       # the address of a Dask scheduler to run the cubes on instead
    state: str | None = None         # a file of finished cubes to resume from and record to
    width: int | None = None         # solver processes per cube (None: the cores shared by the workers)
    progress: Callable | None = None  # progress(attempt): each solver call
    on_cube: Callable | None = None   # on_cube(cube, verdict, seconds, done, total): each finished cube

    def with_keywords(self, caller: str, keywords: dict) -> SearchOptions:
        """These options with some fields given by name (the keyword form of `search`'s call)."""
        names = {f.name for f in fields(self)}
        for name in keywords:
            if name not in names:
                raise TypeError(f"{caller}() got an unexpected keyword argument {name!r}")
        return replace(self, **keywords) if keywords else self


DEFAULTS = SearchOptions()
CLI_DEFAULTS = replace(DEFAULTS, timeout=600.0, workers=os.cpu_count() or 1)  # `prove search`'s
