"""The report's sentences: properties in words, each target's result as a theorem, and the prover's
reasons translated from Z3's terms into the DSL's own names (i, j, l, n, m, mod, div, ite).

The normalizer splits a loop index j into digits, j = start + j_q·m + j_r with 0 ≤ j_r < m, and names
them `a.j.q`, `a.j.r` (iteration `a`; a second iteration of the same check is `b`, a third `c`); `k`
is n div m. A reason shows them as `(j div m)`, `(j mod m)` (counted from the loop's first value),
`j′` for iteration b's j, and `(n div m)`.
"""

from __future__ import annotations

import re

from ringproof.errors import InternalError
from ringproof.proofs.cli.targets import MACHINES
from ringproof.proofs.results import PROPERTY_TABLE

# property -> what "proved" means, in words: the property table's (a property without words is
# named as it is: the report stays generic over the table)
PROPERTY_WORDS = {p.name: p.words for p in PROPERTY_TABLE if p.words}

MARKS = {"proved": "✓", "refuted": "✗", "unknown": "?"}

# machine (a target's, `targets.machine`) -> (the model its counterexamples are replayed on, its
# targets in words): the legend's ✗
MACHINE_WORDS = {"ring": ("the ring model", "ring targets"),
                 "packed": ("the packed ring model", "packed sequences"),
                 "allgather": ("the all-gather model", "all-gather targets")}
if set(MACHINE_WORDS) != set(MACHINES):
    raise InternalError(f"report words: MACHINE_WORDS names {sorted(MACHINE_WORDS)}, the machines are "
                        f"{sorted(MACHINES)}")


def legend(machines=("ring",)) -> dict:
    """{mark: its meaning} for a report of targets on `machines`: ✗ names the model on which a
    counterexample is replayed, each machine's where the targets run on more than one."""
    given = set(machines)
    used = [m for m in MACHINES if m in given] or ["ring"]
    models = [MACHINE_WORDS[m][0] + (f" ({MACHINE_WORDS[m][1]})" if len(used) > 1 else "") for m in used]
    on = models[0] if len(models) == 1 else ", ".join(models[:-1]) + " or " + models[-1]
    return {"✓": "proved for every size the row's conditions allow",
            "✗": f"refuted: a counterexample, replayed on {on}",
            "?": "unknown: neither proved nor refuted (timeout, solver unknown, outside the normalized fragment)",
            "—": "not checked in this run"}


_PRIME = {"a": "", "b": "′", "c": "″"}
_DIGIT = re.compile(r"\b([abc])\.([A-Za-z_]\w*)\.([qr])\b")
_INDEX = re.compile(r"\b([abc])\.([A-Za-z_]\w*)\b")
_HELPER = re.compile(r"\b_d\d+\.[qrp]\b")
_OPS = [("If(", "ite("), ("And(", "and_("), ("Or(", "or_("), ("Not(", "not_("), ("<=", "≤"), (">=", "≥"),
        ("==", "="), ("!=", "≠"), (" % ", " mod "), ("+ -1*", "− "), ("+ -", "− "), ("-1*", "−"), ("*", "·")]


def property_words(name: str) -> str:
    return PROPERTY_WORDS.get(name, name)


def dsl_term(text: str) -> str:
    """A Z3 term as printed by the prover, in the DSL's names."""
    text = _DIGIT.sub(lambda x: f"({x[2]}{_PRIME[x[1]]} {'div' if x[3] == 'q' else 'mod'} m)", text)
    text = _INDEX.sub(lambda x: f"{x[2]}{_PRIME[x[1]]}", text)
    text = _HELPER.sub("t", text)        # a fresh digit of a div/mod by 2 or 3: no DSL name
    text = re.sub(r"\bkd\b", "(d div m)", re.sub(r"\bk\b", "(n div m)", text))
    for z3_op, ours in _OPS:
        text = text.replace(z3_op, ours)
    return text


_BOUND = re.compile(r"not normalized: cannot bound (.*?) within a few multiples of (\S+) \(([^()]*)\)")


def dsl_reason(reason: str) -> str:
    """A result's reason with every Z3 term in the DSL's names and the normalizer's wording explained."""
    def bound(x):
        unit = {"k": "n div m", "m": "m", "kd": "d div m"}.get(x[2], x[2])
        what = "a carry into the next digit" if x[3] == "carry" else x[3].replace("k·m", "n").replace("kd·m", "d")
        return (f"outside the normalized fragment: {dsl_term(x[1])} could not be placed within a few "
                f"multiples of {unit} (to rewrite {what})")

    return _BOUND.sub(bound, reason)


DIGITS_NOTE = ("In these reasons (j div m) and (j mod m) are the digits of loop index j counted from "
               "its first value (j = start + (j div m)·m + (j mod m)); j′ is a second iteration's j; "
               "t is a digit the prover introduced for a div or mod by 2 or 3.")


def conditions_words(conditions: list[str], tier: str = "parametric", bounds: dict | None = None) -> str:
    """'n ≥ 1, m ≥ 1 with m | n' and so on, from the conditions every verdict assumed, within what
    `tier` covers (per-m: each m up to --max-m; bounded: each size up to --max-n, enumerated)."""
    params = ["n", "m"] + (["d"] if any("d" in c for c in conditions) else [])
    given = f" with {' and '.join(conditions)}" if conditions else ""
    bounds = bounds or {}
    if tier == "per-m":
        return f"every m ≤ {bounds.get('max_m', '--max-m')} and all integers {', '.join(p for p in params if p != 'm')} ≥ 1{given}"
    if tier == "bounded":
        return (f"every size with n ≤ {bounds.get('max_n', '--max-n')}, m ≤ {bounds.get('max_m', '--max-m')} "
                f"(each enumerated){given}")
    return f"all integers {', '.join(params)} ≥ 1{given}"


TIER_ORDER = ("bounded", "per-m", "parametric")       # weakest first


def weakest_tier(results: list[dict]) -> str:
    """The tier a statement of the proved results may claim: the weakest of theirs."""
    tiers = {r["tier"] for r in results if r["verdict"] == "proved"}
    return next((x for x in TIER_ORDER if x in tiers), "parametric")


def theorem(section: dict, derived: dict | None = None) -> dict:
    """The target's result as a statement: {"kind": theorem|refutation|open, "words": text,
    "holds": [property words], "fails": [...], "open": [...]} from its results; `derived`: the
    derived sizes as a reader writes them (default: the section's, in the prover's syntax)."""
    by_prop: dict[str, list[str]] = {}
    for r in section["results"]:
        by_prop.setdefault(r["property"], []).append(r["verdict"])
    proved = [p for p, v in by_prop.items() if all(x == "proved" for x in v)]
    failed = [p for p, v in by_prop.items() if "refuted" in v]
    undecided = [p for p, v in by_prop.items() if p not in proved and p not in failed]
    where = conditions_words(section.get("conditions", ["m | n"]), weakest_tier(section["results"]),
                             section.get("bounds"))
    name = section["schedule"]
    if not failed and not undecided:
        words = (f"For {where}, the schedule {name} on a ring of m PEs is correct: "
                 + "; ".join(property_words(p) for p in proved) + ".")
        kind = "theorem"
    elif failed:
        sizes = sorted({(c["n"], c["m"]) for r in section["refutations"] if (c := r["counterexample"])})
        at = ", ".join(f"({n}, {m})" for n, m in sizes[:3])
        words = (f"The schedule {name} is not correct: {', '.join(failed)} fail"
                 + (f" (counterexamples at (n, m) = {at}, the smallest found for each check)" if at else "") + ".")
        kind = "refutation"
    else:
        words = (f"For {where}, the schedule {name} satisfies "
                 + ("; ".join(property_words(p) for p in proved) or "no property decided")
                 + f". Not decided: {', '.join(undecided)}.")
        kind = "open"
    derived = section.get("derived") if derived is None else derived      # the sizes as a reader writes them
    if derived:
        words += " Here " + "; ".join(f"{k} = {v}" for k, v in derived.items()) + "."
    if section.get("expected") == "refuted":
        words += " This is the variant as printed in the paper: its refutation is expected."
    return {"kind": kind, "words": words, "holds": proved, "fails": failed, "open": undecided}


def packed_theorem(section: dict, record) -> dict:
    """A packed target's result as a statement over documents: for every m, every number of
    documents D and every lengths vector the side condition admits (all-gather: with its head
    layout), what holds; a refutation names its smallest packing."""
    by_prop: dict[str, list[str]] = {}
    for r in section["results"]:
        by_prop.setdefault(r["property"], []).append(r["verdict"])
    proved = [p for p, v in by_prop.items() if all(x == "proved" for x in v)]
    failed = [p for p, v in by_prop.items() if "refuted" in v]
    undecided = [p for p, v in by_prop.items() if p not in proved and p not in failed]
    name = section["schedule"]
    if section.get("machine") == "allgather":
        docs = ("one document of T tokens" if getattr(record, "single", False)
                else "every number of documents D ≥ 1 and all document lengths L_1, …, L_D ≥ 1")
        where = f"every m ≥ 1, {docs} with {record.requires_text}, Hk | H and s | Hk"
        what = (f"the all-gather schedule {name} (each rank's queries against the gathered keys"
                + ("" if getattr(record, "single", False) else ", document by document") + ")")
    else:
        where = (f"every m ≥ 1, every number of documents D ≥ 1 and all document lengths L_1, …, L_D with "
                 f"{record.requires_text}")
        what = (f"the packed schedule {name} (the base {section.get('base') or record.base.name}'s ring pass run on "
                "each document at its offset)")
    if not failed and not undecided:
        words = f"For {where}, {what} is correct: " + "; ".join(property_words(p) for p in proved) + "."
        kind = "theorem"
    elif failed:
        shown = [c for r in section["refutations"] if (c := r["counterexample"]) and c.get("replay", {}).get("lengths")]
        packings = list(dict.fromkeys((tuple(c["replay"]["lengths"]), c["m"]) for c in shown))
        again = ", replayed on the model" if shown and all(c["replay"].get("replayed") for c in shown) else ""
        at = ", ".join(f"lengths {','.join(map(str, L))} at m = {m}" for L, m in packings[:3])
        words = (f"The packed schedule {name} is not correct for every packing of documents: {', '.join(failed)} "
                 "fail" + (f" (the smallest packing found: {at}{again})" if at else "") + ".")
        kind = "refutation"
    else:
        words = (f"For {where}, {what} satisfies " + ("; ".join(property_words(p) for p in proved)
                                                       or "no property decided") + f". Not decided: {', '.join(undecided)}.")
        kind = "open"
    return {"kind": kind, "words": words, "holds": proved, "fails": failed, "open": undecided}
