"""The ring's rules, written once: what every machine, checker and twin of this project assumes.

m PEs in a unidirectional ring; a datum sent on PE p arrives on the PE `hop` places on one cycle
later; a link carries `link_capacity` data per cycle; a PE starts `ops_per_cycle` ops (or forwards)
per cycle; a datum that reached a PE stays there (`persists`). `next_pe` is written with the DSL's
backend-generic helpers, so the simulator (numpy), the bit-level checker (ints, PEs from 0) and the
prover's symbolic twins (Terms) compute the same successor.

A reader that cannot take another value of a rule (a CNF clause pattern, a twin written for one op
per slot) states what it assumes with `assume`, at import: a second machine (a bidirectional ring,
a link carrying a block per cycle) is a new `RingRules`, and every reader that does not follow it
fails loudly, naming itself (`unmet`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ringproof.schedules.expr import mod


@dataclass(frozen=True)
class RingRules:
    hop: int = 1
    link_capacity: int = 1
    ops_per_cycle: int = 1
    persists: bool = True

    def next_pe(self, p, m, first: int = 1):
        """The PE a datum sent on PE p reaches (PEs numbered first .. first + m − 1)."""
        shifted = p if self.hop == first else p + (self.hop - first)
        return mod(shifted, m) + first if first else mod(shifted, m)


RULES = RingRules()

_ASSUMED: list = []     # (reader, {rule: the value it is written for})


def assume(reader: str, **rules) -> None:
    """`reader` is written for these values of the rules only; raise if RULES says otherwise."""
    unknown = set(rules) - {f.name for f in fields(RingRules)}
    if unknown:
        raise ValueError(f"{reader}: no such rule: {', '.join(sorted(unknown))}")
    _ASSUMED.append((reader, rules))
    problems = unmet(RULES)
    if problems:
        raise ImportError("; ".join(f"{r}: {why}" for r, why in problems.items()))


def unmet(rules: RingRules) -> dict[str, str]:
    """Each reader written for other values than `rules` -> which (a test tries a second machine)."""
    out = {}
    for reader, wanted in _ASSUMED:
        bad = [f"{name} = {value}, not {getattr(rules, name)}" for name, value in wanted.items()
               if getattr(rules, name) != value]
        if bad:
            out[reader] = "written for " + ", ".join(bad)
    return out
