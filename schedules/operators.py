"""The operators of index formulas, written once: every walker and backend reads this table.

A `Term` node's `op` is one of `OPERATORS` (or a leaf: `LEAVES`). Each module that walks Terms or
provides the operators on a backend states, at import, which operators it handles and which it
refuses on purpose (`require_complete`); an operator added here and forgotten there fails loudly at
import, naming the place, instead of being skipped silently.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Operator:
    """One operator: `name` (a Term's `op`), its number of arguments (None: any, at least one),
    the sort it yields ("int", "bool", or "any" for ite: the sort of its branches), the backend
    field and DSL helper that build it (None: Python's own `+ - *` on a Term)."""

    name: str
    arity: int | None
    sort: str
    helper: str | None = None


OPERATORS: dict[str, Operator] = {op.name: op for op in (
    Operator("add", 2, "int"),
    Operator("neg", 1, "int"),
    Operator("mul", 2, "int"),
    Operator("mod", 2, "int", "mod"),
    Operator("div", 2, "int", "div"),
    Operator("ite", 3, "any", "ite"),
    Operator("eq", 2, "bool", "eq"),
    Operator("lt", 2, "bool", "lt"),
    Operator("le", 2, "bool", "le"),
    Operator("and", None, "bool", "and_"),
    Operator("or", None, "bool", "or_"),
    Operator("not", 1, "bool", "not_"),
)}

LEAVES = ("var", "const", "bool")   # ('var', name), ('const', int), ('bool', bool)

# Every completeness check made so far: (where, handled, refused, sorts), re-run by `check_all`.
_CHECKS: list = []


class IncompleteWalker(Exception):
    """A walker or backend does not state how it handles some operator of `OPERATORS`."""


def require_complete(where: str, handled, refused=(), sorts=("int", "bool", "any")) -> None:
    """Raise IncompleteWalker unless `handled` and `refused` (operator names) together are exactly
    the operators of `OPERATORS` whose sort is in `sorts`, with no name in both. Recorded, so
    `check_all` repeats it against the table as it is then."""
    _CHECKS.append((where, frozenset(handled), frozenset(refused), tuple(sorts)))
    _check(*_CHECKS[-1])


def _check(where: str, handled: frozenset, refused: frozenset, sorts: tuple) -> None:
    problem = _problem(where, handled, refused, sorts)
    if problem:
        raise IncompleteWalker(problem)


def _problem(where: str, handled: frozenset, refused: frozenset, sorts: tuple) -> str:
    """What `where` leaves out of the table, or "" if nothing."""
    expected = {op.name for op in OPERATORS.values() if op.sort in sorts}
    missing = expected - handled - refused
    extra = (handled | refused) - expected
    both = handled & refused
    if missing or extra or both:
        parts = [f"{what}: {', '.join(sorted(names))}" for what, names in
                 (("not handled", missing), ("not an operator", extra), ("both handled and refused", both))
                 if names]
        return f"{where} disagrees with schedules/operators.py: {'; '.join(parts)}"
    return ""


def incomplete() -> dict[str, str]:
    """Every place that checked itself at import and no longer agrees with the table as it is now
    -> what it leaves out (a test adds a dummy operator first: every place must appear)."""
    return {where: p for where, *rest in _CHECKS if (p := _problem(where, *rest))}


def checked_places() -> list[str]:
    """The places that made a completeness check, in import order."""
    return [where for where, *_ in _CHECKS]

