"""The one place a module may keep answers of its own: memos of pure functions, each registered.

A function memoized with `pure` computes its answer from its arguments alone (immutable sympy
expressions, ints, strings, tuples of them): no solver, budget, option or schedule enters it, so
its answer is the same in every session, and keeping it across sessions cannot change a verdict.
Every cache of solver answers, and of anything a budget can change, belongs to a `Session`
(`proofs/ring/session.py`). `MEMOS` lists the memos made here, by module and name; no other
module-level cache is allowed (`tests/test_session.py`), and docs/architecture.md says why these
are kept rather than moved to the session.
"""

from __future__ import annotations

import functools

MEMOS: dict = {}          # "module.name" -> the memoized function (its cache_info, cache_clear)


def pure(maxsize: int | None):
    """Memoize a pure function (see the module doc), at most `maxsize` answers (None: no bound)."""
    def wrap(fn):
        memo = functools.lru_cache(maxsize=maxsize)(fn)
        MEMOS[f"{fn.__module__}.{fn.__qualname__}"] = memo
        return memo
    return wrap
