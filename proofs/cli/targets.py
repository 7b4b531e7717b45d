"""Resolve a TARGET argument: a registered algorithm name or the path of a user's schedule file."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

from ringproof.schedules import usercode
from ringproof.schedules.dsl import Schedule
from ringproof.schedules.usercode import deepest_line, time_limit
from ringproof.errors import BadInput, InternalError


# the machines a target runs on: the ring pass of Algorithms 1-3 and context parallelism, packed
# sequences on that ring (proofs/varlen) and all-gather context parallelism (proofs/allgather)
MACHINES = ("ring", "packed", "allgather")


@dataclass(frozen=True)
class Target:
    """A registered target: `name`, the schedule it proves (`attribute` of the module `module` of
    ringproof.schedules, or its entry `key` where that is a dict; for another machine the function
    `attribute` called with the name), for a context-parallel one `context`, its row of
    `context_parallel.SCHEDULES` (the token layout `prove layout` and `prove conform` check; None
    for the paper's), and its `machine`: one of MACHINES."""

    name: str
    module: str
    attribute: str
    key: str | None = None
    context: str | None = None
    machine: str = "ring"

    def __post_init__(self):
        if self.machine not in MACHINES:
            raise InternalError(f"target {self.name}: machine {self.machine!r} is not one of {', '.join(MACHINES)}")

    def schedule(self):
        """The target's schedule (a `Schedule` on the ring machine, else that machine's record), its
        module imported on first use (only that one)."""
        found = getattr(importlib.import_module(f"ringproof.schedules.{self.module}"), self.attribute)
        if self.machine != "ring":
            return found(self.name)
        schedule = found if self.key is None else found[self.key]
        if schedule.name != self.name:
            where = self.attribute if self.key is None else f"{self.attribute}[{self.key!r}]"
            raise InternalError(f"the registry names {self.module}.{where} {self.name!r}, the schedule {schedule.name!r}")
        return schedule

    def parallel(self):
        """The target's `context_parallel.ContextParallel` row, or None (a paper target)."""
        if self.context is None:
            return None
        from ringproof.schedules.context_parallel import SCHEDULES
        return SCHEDULES[self.context]


# The paper's registered schedules, one row each. `find` finds one of them from this tuple alone,
# so `prove algo1` imports the one module its schedule needs.
PAPER = (Target("algo1", "algo1", "ALGO1"), Target("algo1-printed", "algo1", "ALGO1_PRINTED"),
         Target("algo1-general", "algo1", "ALGO1_GENERAL"), Target("algo2", "algo2", "ALGO2"),
         Target("algo2-printed", "algo2", "ALGO2_PRINTED"), Target("algo2-general", "algo2", "ALGO2_GENERAL"),
         Target("algo2-fast", "algo2_fast", "ALGO2_FAST"), Target("algo2-even", "algo2_even", "ALGO2_EVEN"),
         Target("algo3", "algo3", "ALGO3"), Target("algo3-printed", "algo3", "ALGO3_PRINTED"),
         Target("algo3-general", "algo3", "ALGO3_GENERAL"), Target("algo3-fast", "algo3_fast", "ALGO3_FAST"))


def _context_parallel() -> tuple[Target, ...]:
    """Two targets per row of `context_parallel.SCHEDULES`: its forward NAME and backward NAME-bwd."""
    from ringproof.schedules.context_parallel import SCHEDULES
    return tuple(t for name in SCHEDULES for t in (Target(name, "context_parallel", "FORWARDS", name, name),
                                                   Target(f"{name}-bwd", "context_parallel", "BACKWARDS",
                                                          f"{name}-bwd", name)))


def _packed() -> tuple[Target, ...]:
    """The packed-sequence targets: each row of `documents.VARLEN` (NAME and NAME-bwd) and of
    `allgather.ALLGATHER`."""
    from ringproof.schedules.allgather import ALLGATHER
    from ringproof.schedules.documents import VARLEN
    return (*(Target(n, "documents", "varlen", machine="packed") for name in VARLEN for n in (name, f"{name}-bwd")),
            *(Target(name, "allgather", "allgather", machine="allgather") for name in ALLGATHER))


def table() -> dict[str, Target]:
    """Every registered target by its name, in order: the one table the CLI (`prove TARGET`, its
    help, `prove report`, `prove layout`, `prove conform`) reads."""
    return {t.name: t for t in (*PAPER, *_context_parallel(), *_packed())}


def machine(name: str) -> str:
    """The machine of target `name`: its row's, else (a file or an unknown name) the ring's."""
    found = find(name)
    return found.machine if found is not None else "ring"


def find(name: str) -> Target | None:
    """The registered target `name`, or None."""
    return next((t for t in PAPER if t.name == name), None) or table().get(name)


def registry() -> dict:
    """Every registered schedule of the ring machine (a `Schedule`) by its name: what `prove report`
    with no target, its front and the ring's tests run."""
    return {t.name: t.schedule() for t in (*PAPER, *_context_parallel())}


def layouts() -> list[str]:
    """The names of the context-parallel targets' rows (a NAME-bwd target shares NAME's layout)."""
    return [t.name for t in table().values() if t.context == t.name]


def parallel(name: str, what: str = "context-parallel"):
    """The `context_parallel.ContextParallel` row of target `name` (NAME-bwd: NAME's); BadInput
    naming the rows where `name` is not a context-parallel target."""
    found = find(name)
    if found is None or found.context is None:
        raise BadInput(f"unknown {what} target {name[:80]!r}: expected one of {', '.join(layouts())}")
    return found.parallel()


def printed_defects(target: str):
    """(variant, defect names) of a registered printed variant, for its formula differences; else None."""
    from ringproof.schedules import algo1, algo2, algo3

    mods = {f"{mod.__name__.rsplit('.', 1)[-1]}-printed": mod for mod in (algo1, algo2, algo3)}
    mod = mods.get(target)
    return (mod.variant, mod.PRINTED_DEFECTS) if mod else None


def resolve(target: str) -> Schedule:
    found = find(target)
    if found is not None:
        return found.schedule()
    path = Path(target)
    if path.suffix == ".py":
        return load_file(path)
    if _exists(path):
        raise BadInput(f"{target!r} is not a schedule file: a schedule file is Python source ending in .py")
    raise BadInput(f"unknown target {target[:40]!r}: expected {_names()}; or a schedule file (.py)")


def _names() -> str:
    """The registered targets for the unknown-target line, a family a word: a name's variants
    (-printed, -general, -fast, …) after it, a context-parallel one's -bwd twin said once."""
    rows = table()
    names = [name for name in sorted(rows) if rows[name].machine == "ring"
             and not (name.endswith("-bwd") and name[:-4] in rows)]
    families: dict = {}
    for name in names:
        head = name.split("-")[0] if name.startswith("algo") else name
        families.setdefault(head, []).append(name)
    words = [f"{head} ({', '.join(n[len(head):] for n in rest if n != head)})" if len(rest) > 1 else rest[0]
             for head, rest in families.items()]
    packed = [n for n, row in rows.items() if row.machine != "ring" and not (n.endswith("-bwd") and n[:-4] in rows)]
    return ", ".join(words) + "; context-parallel: also NAME-bwd; packed: " + ", ".join(packed)


def _ours(schedule: Schedule) -> str | None:
    """`module.NAME` of ringproof's own module that holds `schedule` (a user's file imported it), else None."""
    for name, mod in list(sys.modules.items()):
        if name.startswith("ringproof.schedules.") and mod is not None:
            for attr, value in vars(mod).items():
                if value is schedule and attr.isupper():
                    return f"{name.removeprefix('ringproof.schedules.')}.{attr}"
    return None


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:          # e.g. a name longer than the file system allows
        return False


def load_file(path: Path) -> Schedule:
    """Import a user's schedule file and return its schedule (`SCHEDULE`, or its only Schedule)."""
    try:
        is_file, is_dir = path.is_file(), path.is_dir()
    except OSError as err:
        raise BadInput(f"cannot read schedule file {str(path)[:80]!r}: {err.strerror}") from None
    if is_dir:
        raise BadInput(f"{str(path)!r} is a directory; a schedule file is Python source ending in .py")
    if not is_file:
        raise BadInput(f"schedule file {str(path)!r} does not exist")
    name = f"ringproof_user_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with time_limit(usercode.IMPORT_SECONDS, f"importing {path}", (spec.origin, str(path.resolve()))), \
                contextlib.redirect_stdout(sys.stderr):
            spec.loader.exec_module(module)     # what it prints goes to stderr: stdout is ours
    except BadInput as err:
        located = str(path) in str(err) or str(path.resolve()) in str(err)
        raise BadInput(str(err) if located else f"{path}: {err}") from None
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # noqa: B036 -- a user's file may fail in any way, sys.exit included
        line = deepest_line(err, spec.origin) or deepest_line(err, str(path.resolve())) or str(path)
        if isinstance(err, SystemExit):
            raise BadInput(f"{line}: importing {path} called sys.exit({err.code!r}); a schedule file "
                           "must not exit") from None
        raise BadInput(f"cannot import {path}: {line}: {type(err).__name__}: {err}") from None
    from ringproof.schedules.allgather import AllGather
    from ringproof.schedules.documents import Varlen

    if isinstance(getattr(module, "SCHEDULE", None), (Schedule, Varlen, AllGather)):
        return module.SCHEDULE        # a Varlen, an AllGather: packed sequences (`prove` routes them)
    if "SCHEDULE" in vars(module):
        raise BadInput(f"{path}: SCHEDULE = {repr(module.SCHEDULE)[:40]} is not a Schedule "
                       "(assign SCHEDULE = Schedule(...), or Varlen(...), AllGather(...) for packed sequences)")
    every = [(k, v) for k, v in vars(module).items() if isinstance(v, Schedule)]
    found = [v for k, v in every if _ours(v) is None]
    if len(found) == 1:
        return found[0]
    if not found and every:             # only imported ones: which it would have proved is a guess
        k, v = every[0]
        raise BadInput(f"{path} defines no schedule of its own: {k} is ringproof's {_ours(v)} "
                       f"(`prove {v.name}`); assign SCHEDULE = {k} to prove it from this file")
    if not found:
        raise BadInput(f"{path} defines no Schedule (assign one to SCHEDULE)")
    raise BadInput(f"{path} defines {len(found)} schedules; say which one with SCHEDULE = ...")
