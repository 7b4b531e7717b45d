"""The schedule DSL: what a schedule author writes, and nothing else.

A `Schedule` solves a `Problem` (which arrays exist and which equations define them) as a sequence of
`Phase`s. A phase is a sequential loop nest, the parallel PE index `l ∈ [1, m]`, and a `step` function
that returns, for one iteration, the `Step` it performs. Formulas inside `step` use `+ - *` and the
helpers of `ringproof.schedules.expr` (`mod`, `div`, `ite`, `eq`, `lt`, ...), so the same function runs on
ints, numpy arrays, sympy and the prover's terms.

Time: the cycles of a phase are the tuples of its sequential loop indices in lexicographic order (one
cycle per tuple, whether or not any PE works in it); phases follow one another, except the phases
of a lock-step group (`Phase(..., group=...)`, and the forms of a step chosen by `ite`), which start
together and share cycles tuple by tuple.

Witnesses, checked by the prover like loop invariants:
- `first` / `prev` on an accumulating step: whether this is the first contribution to the target and,
  if not, the iteration (`At`) that made the previous one;
- `sources`, one per operand: `HOME` (an input placed on this PE) or the iteration `At` that held the
  value just before (same PE earlier, or the previous PE one cycle earlier and sent it); `Either`
  chooses between two witnesses by a condition;
- `inverse` on a phase: for each required contribution, the iteration that performs it.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import os
import sys
from dataclasses import InitVar, dataclass, field, replace
from types import SimpleNamespace
from collections.abc import Mapping
from typing import Any, Callable


from ringproof.errors import BadInput
from ringproof.schedules.expr import user_line
from ringproof.schedules.shape import ANY_D, PARAMETERS, D_IS_N, Least, Shape
from ringproof.schedules.usercode import contained, shown


class Op(enum.Enum):
    """What a PE does in one cycle."""

    MAC = "MAC"    # target += operand0 · operand1
    EAC = "EAC"    # target += exp(operand0) [or exp(operand0 − operand1) [· operand2]: online, below]
    DIV = "DIV"    # target  = exp(operand0) / operand1
    MAX = "MAX"    # target  = max(target, operand0): a running max
    NORM = "NORM"  # target  = operand0 / operand1: the final division of online softmax
    MOVE = "MOVE"  # no arithmetic: the cycle only forwards a datum

    @property
    def accumulates(self) -> bool:
        return self in (Op.MAC, Op.EAC, Op.MAX)

    def __repr__(self):
        return f"Op.{self.name}"


MAC, EAC, DIV, MAX, NORM, MOVE = Op.MAC, Op.EAC, Op.DIV, Op.MAX, Op.NORM, Op.MOVE
ARITHMETIC = tuple(op.value for op in Op if op is not Op.MOVE)   # the kinds utilization counts
ALWAYS_COUNTED = ("MAC", "EAC", "DIV", "MOVE")   # in every op tally; MAX and NORM where a schedule runs them
CLAIM_KINDS = ("cycles",) + tuple(op.value for op in Op)   # the counts `Notes.claims` may name


def rescaled(problem: "Problem", array: "Array") -> bool:
    """Is `array` an online-softmax accumulator (its equation `t += exp(a − b)[ * c] rescaled`)? It
    is kept relative to its reference b, which a schedule may read while b still grows: each term
    first rescales it by exp(ref − b) to b's value at that term (docs/context-parallel.md, "Online
    softmax"); NORM brings two such accumulators to one reference before it divides."""
    return any(e.target == array and e.rescaled for e in problem.equations)
LOAD_CLAIMS = ("balance", "memory")     # and the load figures (spread of ops over PEs, peak held)
RESERVED = PARAMETERS + ("l",)   # the names of P and the PE index: no loop may take one


@dataclass(frozen=True)
class Array:
    """A named array; `dims` are the names of the sizes its indices range over ('n', 'd', or another
    parameter or derived parameter of the schedule), indices are 1-based."""

    name: str
    dims: tuple[str, ...]
    is_input: bool = False

    def __getitem__(self, idx) -> "Ref":
        idx = idx if isinstance(idx, tuple) else (idx,)
        if len(idx) != len(self.dims):
            raise BadInput(f"{user_line(__file__)}array {self.name} takes {len(self.dims)} indices, "
                           f"got {len(idx)}")
        for x in idx:
            if not _is_index(x):
                raise BadInput(f"{user_line(__file__)}an index of {self.name} must be an integer "
                               f"formula, got {type(x).__name__} {str(x)[:40]!r}")
        return Ref(self, idx)

    def __repr__(self):
        return self.name


def _is_index(x) -> bool:
    """Integer values of every backend; floats, strings, None and booleans are not indices. (numpy
    is not imported for this: without it loaded there are no numpy values.)"""
    if isinstance(x, (bool, float, complex, str, bytes)) or x is None:
        return False
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(x, (np.bool_, np.floating)):
            return False
        if isinstance(x, np.ndarray):
            return x.dtype.kind in "iu"
    return True


@dataclass(frozen=True)
class Ref:
    """One array element, e.g. w1[A, B]."""

    array: Array
    idx: tuple

    def __repr__(self):
        return f"{self.array.name}[{', '.join(map(repr, self.idx))}]"


@dataclass(frozen=True)
class Send:
    """What a step sends to PE l mod m + 1 after its op, arriving one cycle later.

    Sending the step's own accumulating target moves it (the running sum travels); anything else,
    and any datum sent where `copy` holds, is copied. `as_` stores the copy under another name, which
    the problem must declare equal (symmetric w1[A,B] = w1[B,A]). A send happens wherever `when`
    holds, also in an iteration whose guard is false (the PE then only forwards: a MOVE cycle).
    `source` witnesses where a forwarded datum comes from when it is neither an operand nor the
    step's own result.
    """

    datum: Ref
    when: Any = True
    copy: Any = False
    as_: Ref | None = None
    source: Any = None

    @property
    def stored(self) -> Ref:
        return self.as_ if self.as_ is not None else self.datum


def Move(datum: Ref, when=True) -> Send:
    return Send(datum, when)


def Copy(datum: Ref, when=True, as_: Ref | None = None, source=None) -> Send:
    return Send(datum, when, copy=True, as_=as_, source=source)


@dataclass(frozen=True)
class At:
    """A witness iteration: a phase name and its loop indices (including `l`)."""

    phase: str
    idx: dict

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.idx.items())
        return f"At({self.phase!r}, {args})"


class _Home:
    def __repr__(self):
        return "HOME"


HOME = _Home()  # source witness: an input placed on this PE by the schedule's `home`


@dataclass(frozen=True)
class Either:
    """Witness `then` where `cond` holds, else `other`."""

    cond: Any
    then: Any
    other: Any


@dataclass(frozen=True)
class Step:
    """What one iteration does: one op on PE `pe`, optionally one send."""

    pe: Any
    op: Op
    target: Ref | None
    operands: tuple = ()
    send: Send | None = None
    guard: Any = True          # False: no op in this iteration (the send may still forward)
    first: Any = None          # accumulating ops: is this the first contribution?
    prev: Any = None           # accumulating ops: At(...) of the previous contribution
    sources: tuple = ()        # one witness per operand

    @staticmethod
    def __ringproof_choice__(cond, then, other) -> "Choice":
        return Choice(cond, then, other)


@dataclass(frozen=True)
class Choice:
    """`ite(cond, Step(...), Step(...))`: the step an iteration performs, chosen by a condition of
    the iteration (its op kind with it: EAC on some PEs, DIV on others in one cycle). A phase whose
    step is a Choice runs as one *form* per branch (`Schedule` splits it): the forms share the
    phase's loops and cycles (a lock-step group named after the phase), and each form is the branch
    with its guard and its send restricted to the iterations that choose it."""

    cond: Any
    then: Any
    other: Any

    @staticmethod
    def __ringproof_choice__(cond, then, other) -> "Choice":
        return Choice(cond, then, other)

    def branches(self, cond=True) -> list:
        """[(condition, Step)] of every branch, nested choices flattened, in the order written."""
        from ringproof.schedules.expr import and_, not_
        out = []
        for c, x in ((self.cond, self.then), (not_(self.cond), self.other)):
            here = c if cond is True else and_(cond, c)
            if isinstance(x, Choice):
                out += x.branches(here)
            elif isinstance(x, Step):
                out.append((here, x))
            else:
                raise BadInput(f"{user_line(__file__)}ite of steps: a branch is a {type(x).__name__}, not a Step")
        return out


@dataclass(frozen=True)
class Loop:
    """A sequential loop `name ∈ [lo, hi]`; a bound is an int, a parameter name ('n', 'm', 'k',
    'd', or one the schedule derives, e.g. 'K') or a callable `(P, ix) -> value` of the parameters
    and the outer indices.

    `through` (outermost loop only) is a counting hint: a callable `(P, V) -> value` giving the
    cycles the phase spends in iterations lo..V of this loop. It is used where a sum has no closed
    form sympy can find, and only after `ringproof.proofs.ring.induction` proves it (base V = lo, step V-1 → V).

    `ring_step=True` (outermost loop only) says that each iteration of this loop is one ring step:
    the balance is then also derived per ring step (active ops on PE l in step s).
    """

    name: str
    lo: Any
    hi: Any
    through: Any = None
    ring_step: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise BadInput(f"{user_line(__file__, dataclasses.__file__)}loop name {self.name!r} is not an identifier")
        if self.name in RESERVED:
            raise BadInput(f"{user_line(__file__, dataclasses.__file__)}loop {self.name!r}: {self.name} names a "
                           f"parameter (or the PE index l); name the loop otherwise "
                           f"(loop names must differ from {', '.join(RESERVED)})")
        for b in (self.lo, self.hi):     # a name other than a parameter's: the Schedule checks it is derived
            if not (callable(b) or b.isidentifier() if isinstance(b, str) else _is_index(b)):
                raise BadInput(f"{user_line(__file__)}loop {self.name}: {_NOT_A_BOUND.format(b=b)}")
        if self.through is not None:
            object.__setattr__(self, "through", guarded(self.through, f"the counting hint of loop {self.name}"))

    def bounds(self, P, ix):
        return _bound(self.lo, P, ix), _bound(self.hi, P, ix)


_NOT_A_BOUND = ("bound {b!r} is not an int, " + ", ".join(map(repr, PARAMETERS))
                + ", a derived parameter of the schedule or a callable (P, ix) -> value")


def _bound(b, P, ix):
    if isinstance(b, str):
        if not hasattr(P, b):
            raise BadInput(f"unknown loop bound {b!r}: expected an int, {', '.join(map(repr, PARAMETERS))}, "
                           "a derived parameter or a callable")
        return getattr(P, b)
    if callable(b):
        value = guarded(b, "a loop bound")(P, ix)
        if not _is_index(value):
            raise BadInput(f"{where(b)}: a loop bound gave {type(value).__name__} {str(value)[:40]!r}, "
                           "not an integer")
        return value
    return b


def _caller() -> str:
    """`file:line` of the first frame outside this module and the dataclass machinery: where the
    user wrote the Phase (or derived it)."""
    frame = sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename in (__file__, "<string>")
                                 or frame.f_code.co_filename.endswith("dataclasses.py")):
        frame = frame.f_back
    return f"{shown(frame.f_code.co_filename)}:{frame.f_lineno}" if frame is not None else ""


def where(fn) -> str:
    """`file:line` of a user's function, for messages."""
    code = getattr(fn, "__code__", None)
    return f"{shown(code.co_filename)}:{code.co_firstlineno}" if code else repr(fn)


def guarded(fn, what: str, returns: type | None = None):
    """`fn` with any exception it raises that is not a RingproofError (sys.exit included, Ctrl-C not)
    turned into BadInput naming the user's file and line, and its prints sent to stderr (a schedule's
    functions are the user's code; their bugs are bad input, never an internal error or a refutation;
    `usercode.contained`). `returns` checks the type of what `fn` gives back."""
    if getattr(fn, "__ringproof_guarded__", False) or not callable(fn):
        return fn
    code = getattr(fn, "__code__", None)

    def call(*args):
        with contained(what, lambda: where(fn), code.co_filename if code else None):   # its prints to stderr
            out = fn(*args)
        if returns is not None and not isinstance(out, returns):
            want = " or ".join(t.__name__ for t in returns) if isinstance(returns, tuple) else returns.__name__
            raise BadInput(f"{where(fn)}: {what} must return a {want}, got {type(out).__name__}")
        return out

    functools.update_wrapper(call, fn)    # name, module, doc: the wrapper reads as the user's function
    call.__ringproof_guarded__ = True
    return call


@dataclass(frozen=True)
class Phase:
    """A loop nest and its step. `relies_on` states, for each other phase whose formulas this
    phase's witnesses assume, what they assume ({phase name: "what"}): a change to that phase
    should be checked against it (`Schedule.derive` lists these, before any proof runs)."""

    name: str
    loops: tuple[Loop, ...]
    step: Callable[[Any, Any], Step]
    inverse: Callable[[Any, tuple], dict] | None = None
    doc: str = ""
    relies_on: dict = field(default_factory=dict)
    defined_at: str = field(default="", compare=False, repr=False)   # file:line of Phase(...) in the user's code
    group: str | None = None   # phases of one group run in lock step: they start in the same cycle
    recount: "Recount | None" = None   # a counting hint for its balance over the terms (checked; `derive` drops it)

    def __post_init__(self):
        if not self.defined_at:
            object.__setattr__(self, "defined_at", _caller())
        names = [lp.name for lp in self.loops]
        if len(set(names)) != len(names):
            raise BadInput(f"{user_line(__file__, dataclasses.__file__)}phase {self.name}: loop names repeat: {names}")
        if any(lp.ring_step for lp in self.loops[1:]):
            raise BadInput(f"{user_line(__file__, dataclasses.__file__)}phase {self.name}: only the outermost "
                           "loop may be its ring step (ring_step=True)")
        object.__setattr__(self, "step", guarded(self.step, f"the step of phase {self.name}", (Step, Choice)))
        if isinstance(self.inverse, dict):
            object.__setattr__(self, "inverse", {a: guarded(f, f"the inverse witness of phase {self.name} ({a})")
                                                 for a, f in self.inverse.items()})
        elif self.inverse is not None:
            object.__setattr__(self, "inverse", guarded(self.inverse, f"the inverse witness of phase {self.name}"))

    @property
    def index_names(self) -> tuple[str, ...]:
        return tuple(lp.name for lp in self.loops) + ("l",)

    def derive(self, name: str | None = None, *, bounds: dict | None = None, inverse=None,
               relies_on: dict | None = None, doc: str | None = None, **fields) -> "Phase":
        """This phase with some parts changed, without copying its step.

        `fields`: Step fields (pe, op, target, operands, send, guard, first, prev, sources), each a
        value or a function `(P, ix, step) -> value` of the parameters, the indices and the step
        this phase computes; `bounds`: {loop name: (lo, hi)}; `inverse`, `relies_on`, `doc`:
        replaced where given.
        """
        unknown = set(fields) - set(Step.__dataclass_fields__)
        if unknown:
            raise BadInput(f"phase {self.name}: derive got {sorted(unknown)}, not Step fields "
                           f"({', '.join(Step.__dataclass_fields__)})")
        names = [lp.name for lp in self.loops]
        for loop in bounds or {}:
            if loop not in names:
                raise BadInput(f"phase {self.name} has no loop {loop!r} (loops: {', '.join(names)})")
        base = getattr(self.step, "__wrapped__", self.step)
        changes = {k: (v if callable(v) else (lambda P, ix, st, v=v: v)) for k, v in fields.items()}

        def step(P, ix):
            st = base(P, ix)
            return replace(st, **{k: fn(P, ix, st) for k, fn in changes.items()})

        # findings point at the user's own change where there is one, else at the phase derived from
        step.__wrapped__ = next((v for v in fields.values() if callable(v)), base)

        loops = tuple(replace(lp, lo=bounds[lp.name][0], hi=bounds[lp.name][1])
                      if lp.name in (bounds or {}) else lp for lp in self.loops)
        return Phase(name or self.name, loops, step if changes else self.step,
                     self.inverse if inverse is None else inverse, self.doc if doc is None else doc,
                     self.relies_on if relies_on is None else relies_on, group=self.group)


@dataclass(frozen=True)
class Recount:
    """A counting hint for a phase's balance over its terms (`ringproof.proofs.figures.recount`): the
    terms its `inverse` puts on PE l are in bijection with the points u of the nest `loops` (Loops
    over the hint's own names) where `guard(P, u)` holds and `pe(P, u)` = l. `to(P, key)` maps a
    term to its point, `back(P, u)` a point to its term (tuples). Used only after Z3 proves, for
    every n: each term maps into the nest under the guard, back to itself, and onto a point whose
    `pe` is the inverse's PE; each point maps back to a term (within its extents, where the
    equation's mask holds) and `to` that point again."""

    loops: tuple[Loop, ...]
    guard: Callable
    pe: Callable
    to: Callable
    back: Callable


@dataclass(frozen=True)
class Equation:
    """How the problem defines one array: target[key] = reduction over `reduce` of op(operands).

    `operands(P, *key, r)` gives the operand references of the term for reduction index r (no r
    for DIV); `reduce_at = (operand, position)` says where a step's operands carry r; `where` masks
    terms (masked attention).
    """

    target: Array
    op: Op
    operands: Callable
    reduce: str | None = None
    reduce_at: tuple[int, int] | None = None
    where: Callable | None = None
    rescaled: bool = False     # online softmax: target kept relative to operand 2, read running

    def key_arity(self) -> int:
        return len(self.target.dims) + (1 if self.reduce else 0)


@dataclass(frozen=True)
class Problem:
    """A variant of attention: its arrays and the equations that define the computed ones."""

    name: str
    inputs: tuple[Array, ...]
    equations: tuple[Equation, ...]
    output: Array                            # the first output (a problem may have several)
    symmetric_pairs: tuple[Array, ...] = ()  # arrays with a[A, B] = a[B, A]
    outputs: tuple[Array, ...] = ()          # every output; () means (output,)
    # arrays computed once per pair (their equation masks B ≤ A) whose reads may name either
    # orientation: a step reading a[A, B] may name a[B, A], the element that exists
    transposable: tuple[Array, ...] = ()

    def __post_init__(self):
        if not self.outputs:
            object.__setattr__(self, "outputs", (self.output,))
        for a in self.symmetric_pairs:
            why = _not_symmetric(self, a)
            if why:
                raise BadInput(f"{user_line(__file__, dataclasses.__file__, _COMPUTATION)}problem {self.name}: "
                               f"{a.name} is declared symmetric, but {why}")
        for a in self.transposable:
            why = _not_transposable(self, a)
            if why:
                raise BadInput(f"{user_line(__file__, dataclasses.__file__, _COMPUTATION)}problem {self.name}: "
                               f"{a.name} is declared transposable, but {why}")

    def equation_for(self, array: Array) -> Equation:
        for e in self.equations:
            if e.target == array:
                return e
        raise BadInput(f"problem {self.name} defines no equation for array {array.name}")


_COMPUTATION = os.path.join(os.path.dirname(__file__), "computation.py")


def _not_transposable(problem: "Problem", a: Array) -> str:
    """"" if a's terms are the same with A and B swapped and its mask is exactly B ≤ A (one
    orientation of each pair computed); else why not."""
    from dataclasses import replace as _replace

    from ringproof.schedules.expr import le, render, var

    eqn = next((e for e in problem.equations if e.target == a), None)
    if eqn is None or eqn.where is None:
        return "its equation does not keep one orientation (mask 'if B <= A')"
    P = SimpleNamespace(**{p: var(p) for p in ("n", "m", "k", "d", "kd")})
    r = [var("_R")] if eqn.reduce else []
    if render(eqn.where(P, var("_A"), var("_B"), *r)) != render(le(var("_B"), var("_A"))):
        return "its mask is not 'if B <= A' on its two indices"
    unmasked = _replace(eqn, where=None)
    other = _replace(problem, equations=tuple(unmasked if e is eqn else e for e in problem.equations),
                     symmetric_pairs=(), transposable=())
    return _not_symmetric(other, a)


def _not_symmetric(problem: "Problem", a: Array) -> str:
    """"" if a[A, B] = a[B, A] for every n follows from a's equation: swapping A and B gives the
    same terms (the same operands, a product's in either order; an operand itself declared
    symmetric in either orientation) under the same mask; else why that is not shown."""
    from ringproof.schedules.expr import render, var

    eqn = next((e for e in problem.equations if e.target == a), None)
    if eqn is None:
        return "no equation computes it (an input's symmetry cannot be checked)"
    if len(a.dims) != 2 or a.dims[0] != a.dims[1]:
        return f"its extents are {' '.join(a.dims)}, not two equal ones"
    P = SimpleNamespace(**{p: var(p) for p in PARAMETERS})
    x, y, r = var("_A"), var("_B"), ([var("_R")] if eqn.reduce else [])
    sym = {s.name for s in problem.symmetric_pairs}

    def refs(*key):
        out = [(ref.array.name, tuple(render(i) for i in ref.idx)) for ref in eqn.operands(P, *key, *r)]
        out = [(name, tuple(sorted(idx)) if name in sym else idx) for name, idx in out]
        return sorted(out) if eqn.op is Op.MAC else out

    if refs(x, y) != refs(y, x):
        return "its terms with A and B swapped are not its terms"
    if eqn.where is not None:
        def atoms(*key):
            c = eqn.where(P, *key, *r)
            return {render(t) for t in (c.args if getattr(c, "op", None) == "and" else (c,))}
        if atoms(x, y) != atoms(y, x):
            return "its mask with A and B swapped is not its mask"
    return ""


class _Keyed(Mapping):
    """A record read also as the dict of string keys it is written as, one key per field:
    `record["claims"]`, `record.get("peak")`, `{**record, "peak": ...}`."""

    def __getitem__(self, key):
        if key not in self._fields():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self):
        return iter(self._fields())

    def __len__(self):
        return len(self._fields())

    def __bool__(self):
        """Whether any field is set (every default is empty)."""
        return any(getattr(self, k) for k in self._fields())

    @classmethod
    def _fields(cls) -> tuple:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def of(cls, given, where: str):
        """`given` as the record: the record itself, or its dict form (a user's schedule file
        writes that, docs/dsl.md); BadInput for a key the record does not have."""
        if isinstance(given, cls):
            return given
        if not isinstance(given, Mapping):
            raise BadInput(f"{user_line(__file__, dataclasses.__file__)}{where}: expected a dict of "
                           f"{', '.join(cls._fields())}, got {type(given).__name__}")
        unknown = [k for k in given if k not in cls._fields()]
        if unknown:
            raise BadInput(f"{user_line(__file__, dataclasses.__file__)}{where}: unknown key {unknown[0]!r}; "
                           f"one of {', '.join(cls._fields())}")
        return cls(**{k: cls._CONVERT.get(k, lambda v: v)(v) for k, v in given.items()})


@dataclass(frozen=True)
class Notes(_Keyed):
    """What a schedule states beside its phases (`Schedule.notes`). `claims`: {count or load
    figure: formula (str)}, each checked (`CLAIM_KINDS`, `LOAD_CLAIMS`); `look`: where else to look
    before a refutation of a derived schedule says so (`Schedule.derive`)."""

    claims: dict = field(default_factory=dict)
    look: tuple = ()

    _CONVERT = {"claims": dict, "look": tuple}


@dataclass(frozen=True)
class Stays(_Keyed):
    """A schedule's hints of the memory a PE holds (`Schedule.stays`, each checked by the prover,
    `ringproof.proofs.figures.memory.stays`).

    `last`: {(phase, array): (P, ix) -> condition}: the use of the array's datum there is the last of
    its stay on the PE; `alone`: {(phase, array): ...}: the copy the iteration sends is not used
    where it arrives; `home`: {(phase, array): ...}: the output the iteration sends is kept where it
    arrives, its last stay there; `guard`: {phase: (P, ix) -> condition}: the step's guard as the
    occupancy's counts read it (checked equal at every iteration); `peak`: ((phase, (P) -> {index:
    value, "l": PE}), ...): iterations at which a PE may hold the most; `unused`: {input: (P, idx)
    -> condition}: the entries no op reads; `ledger`: {phase: ...}: a phase's stay events over a
    padded nest (`ringproof.proofs.figures.memory.ledger`); `on_request`: the exact peak is long to
    derive, so only `prove --exact-peak` derives it (`Options.exact_peak`)."""

    last: dict = field(default_factory=dict)
    alone: dict = field(default_factory=dict)
    home: dict = field(default_factory=dict)
    guard: dict = field(default_factory=dict)
    peak: tuple = ()
    unused: dict = field(default_factory=dict)
    ledger: dict = field(default_factory=dict)
    on_request: bool = False

    _CONVERT = {"last": dict, "alone": dict, "home": dict, "guard": dict, "peak": tuple, "unused": dict,
                "ledger": dict, "on_request": bool}


@dataclass(frozen=True)
class Schedule:
    """A schedule: phases run in order (a lock-step group's together); `home(P, ref)` is the initial
    PE of each input element. `inverses`: {array: (P, key) -> At or Either of At}, the joint
    inverse of an array several phases compute (which phase and iteration does each term).

    `shape` (`ringproof.schedules.shape`): which sizes are free. `D_IS_N` (the default, the paper's):
    the schedule is written for d = n, P.d is P.n and the prover treats them as one parameter.
    `ANY_D`: d is a parameter of its own, with m | d (P.kd = d/m), and every check holds for all
    n, d with m dividing both. `square=False` is another spelling of `shape=ANY_D`.

    `requires(P)`: a side condition on the sizes beyond m | n, written with the DSL helpers
    (`eq(mod(P.n, 2 * P.m), 0)`); every tier assumes it and sizes that break it are not run.
    `derived`: {name: (P) -> value}, parameters computed from the others (`"h": lambda P:
    div(P.n, 2 * P.m)`), seen as `P.<name>` by every function of the schedule (steps, loop bounds,
    inverses, home) and usable in claims.

    `placement(P, ref)` (same signature as `home`): the PE on which each output element must end;
    `placement=HOME`, or a function giving the same formula as `home` on every output, means where
    the inputs of those indices live: it follows `home` into a schedule derived with another one.
    `ends(P, ref)`: optionally, the iteration (`At`) that last touches it — a witness, checked —
    for a running sum whose moves do not determine where it ends.

    `notes`: a `Notes` (claims checked, where else to look), `stays`: a `Stays` (the memory hints);
    each also as its dict form, {"claims": {...}} and {"last": {...}, "peak": [...], ...}, which is
    converted here.
    """

    name: str
    problem: Problem
    phases: tuple[Phase, ...]
    home: Callable
    doc: str = ""
    notes: Notes = field(default_factory=Notes)
    shape: Shape = D_IS_N
    square: InitVar[bool | None] = None
    requires: Callable | None = None
    derived: dict = field(default_factory=dict)
    placement: Callable | None = None
    ends: Callable | None = None
    inverses: dict = field(default_factory=dict)
    stays: Stays = field(default_factory=Stays)

    def __post_init__(self, square):
        object.__setattr__(self, "notes", Notes.of(self.notes, f"schedule {self.name}: notes"))
        object.__setattr__(self, "stays", Stays.of(self.stays, f"schedule {self.name}: stays"))
        if square is not None:
            object.__setattr__(self, "shape", D_IS_N if square else ANY_D)
        object.__setattr__(self, "home", guarded(self.home, f"the home placement of schedule {self.name}"))
        if self.placement is HOME or _unbound_home(self):
            object.__setattr__(self, "placement", _at_home(self.home))
        for fld, what in (("requires", "the side condition"), ("placement", "the placement"),
                          ("ends", "the end witness")):
            if getattr(self, fld) is not None:
                object.__setattr__(self, fld, guarded(getattr(self, fld), f"{what} of schedule {self.name}"))
        computed = {e.target.name for e in self.problem.equations}
        for name, fn in self.inverses.items():
            if name not in computed or not callable(fn):
                raise BadInput(f"{user_line(__file__, dataclasses.__file__)}schedule {self.name}: inverses "
                               f"maps an array the problem computes ({', '.join(sorted(computed))}) to a function "
                               f"(P, key) -> At or Either of At, got {name!r}")
        object.__setattr__(self, "inverses", {name: guarded(fn, f"the joint inverse of {name} in schedule {self.name}")
                                              for name, fn in self.inverses.items()})
        loops = {lp.name for p in self.phases for lp in p.loops}
        for name, fn in self.derived.items():
            if name in RESERVED or not name.isidentifier() or not (callable(fn) or isinstance(fn, Least)):
                raise BadInput(f"{user_line(__file__, dataclasses.__file__)}schedule {self.name}: derived "
                               f"parameter {name!r} must be a new name bound to a function (P) -> value or a Least")
            if name in loops and isinstance(fn, Least):     # both would be one symbol of the counter
                raise BadInput(f"{user_line(__file__, dataclasses.__file__)}schedule {self.name}: derived "
                               f"parameter {name!r} is also the name of a loop; name one of them otherwise")
        arrays = list(self.problem.inputs) + [e.target for e in self.problem.equations]
        for a in arrays:
            for dim in a.dims:
                if dim not in PARAMETERS and dim not in self.derived:
                    raise BadInput(f"{user_line(__file__, dataclasses.__file__)}schedule {self.name}: array "
                                   f"{a.name} ranges over {dim!r}, which is neither a parameter "
                                   f"({', '.join(PARAMETERS)}) nor derived by the schedule")
        for p in self.phases:
            for lp in p.loops:
                for b in (lp.lo, lp.hi):
                    if isinstance(b, str) and b not in PARAMETERS and b not in self.derived:
                        raise BadInput(f"{user_line(__file__, dataclasses.__file__)}phase {p.name}, loop "
                                       f"{lp.name}: {_NOT_A_BOUND.format(b=b)}")
        if self.derived:          # idempotent: a copy (`replace`) keeps what already sees these parameters
            object.__setattr__(self, "derived", {name: _guarded_derived(name, fn) for name, fn in self.derived.items()})
            see = functools.partial(with_derived, self.derived)
            for fld in ("home", "requires", "placement", "ends"):
                object.__setattr__(self, fld, _seeing(getattr(self, fld), see))
            object.__setattr__(self, "inverses", {a: _seeing(f, see) for a, f in self.inverses.items()})
            object.__setattr__(self, "phases", tuple(_phase_seeing(p, see) for p in self.phases))
        derived = tuple(self.derived.items())
        if self.requires is not self.shape.requires or derived != self.shape.derived:   # its enumerators honour them
            object.__setattr__(self, "shape", replace(self.shape, requires=self.requires, derived=derived))
        phases, forks = split_forms(self.phases, self.shape)
        if self.derived:          # each form is built of its phase's parts, which see them
            for p in phases:
                _mark_seeing(p, derived)
        object.__setattr__(self, "phases", phases)
        if forks:
            if self.ends is not None:
                object.__setattr__(self, "ends", _rewired(self.ends, forks, _rewire))
            object.__setattr__(self, "inverses", {a: _rewired(f, forks, _rewire) for a, f in self.inverses.items()})
        _check_groups(self)
        names = [p.name for p in self.phases]
        grouped = [p.group for i, p in enumerate(self.phases) if p.group is not None
                   and (i == 0 or self.phases[i - 1].group != p.group)]
        if len(set(grouped)) != len(grouped):
            raise BadInput(f"schedule {self.name}: the phases of a group must be consecutive "
                           f"(group {next(g for g in grouped if grouped.count(g) > 1)!r})")
        if len(set(names)) != len(names):
            raise BadInput(f"schedule {self.name}: phase names repeat: {names}")
        if not self.phases:
            raise BadInput(f"schedule {self.name} has no phases")
        claims = self.notes.claims
        unknown = [k for k in claims if k not in CLAIM_KINDS + LOAD_CLAIMS]
        if unknown:
            raise BadInput(f"{user_line(__file__, dataclasses.__file__)}schedule {self.name}: unknown claim "
                           f"{unknown[0]!r}; a claim names one of {', '.join(CLAIM_KINDS + LOAD_CLAIMS)}")
        for kind, text in claims.items():      # a formula's syntax, named by file and line, before any proof
            if isinstance(text, str):
                try:
                    ast.parse(text.strip(), mode="eval")
                except SyntaxError as err:
                    raise BadInput(f"{user_line(__file__, dataclasses.__file__)}schedule {self.name}: claim "
                                   f"{kind!r}: {text!r} is not a formula in n, m, d ({err.msg})") from None

    def admits(self, n: int, m: int, d: int | None = None) -> bool:
        """Do the sizes (m | n assumed) satisfy the schedule's side condition `requires`?"""
        return self.shape.admits(n, m, d)

    def requirement(self) -> str | None:
        """The side condition as written in the prover's syntax (for the "assumed:" line)."""
        if self.requires is None:
            return None
        from ringproof.schedules.expr import lift, render, var
        return render(lift(self.requires(self.shape.record(var))))

    def derivations(self) -> dict:
        """{name: its definition in the prover's syntax} of the derived parameters (the "derived:" line)."""
        from ringproof.schedules.expr import lift, render, var
        P = with_derived(self.derived, self.shape.record(var))
        out = {}
        for name, fn in self.derived.items():
            if isinstance(fn, Least):
                lo, hi = (render(lift(b)) for b in fn.bounds(P))
                out[name] = f"the least {name} in {lo}..{hi} with {render(lift(fn.cond(P, var(name))))}"
            else:
                out[name] = render(lift(getattr(P, name)))
        return out

    def phase(self, name: str) -> Phase:
        for p in self.phases:
            if p.name == name:
                return p
        raise BadInput(f"schedule {self.name} has no phase {name!r}")

    @property
    def slots(self) -> tuple[int, ...]:
        """For each phase, the number of its time slot: phases follow one another, except the
        members of a lock-step group (consecutive phases of one `group`), which share a slot and
        start in the same cycle."""
        out, prev = [], None
        for p in self.phases:
            out.append(0 if not out else out[-1] + (p.group is None or p.group != prev))
            prev = p.group
        return tuple(out)

    def phase_index(self, name: str) -> int:
        return [p.name for p in self.phases].index(self.phase(name).name)

    def dependents(self, name: str) -> list[str]:
        """What other phases' witnesses assume about phase `name` (their `relies_on`)."""
        return [f"{p.name} relies on {name}: {p.relies_on[name]}" for p in self.phases
                if name in p.relies_on and p.name != name]

    def derive(self, name: str, changes: dict, **fields) -> "Schedule":
        """A schedule built from this one: `changes` maps a phase name to a Phase or to the keyword
        arguments of `Phase.derive`; `fields` replace Schedule fields (problem, home, notes, ...).
        `notes.look` lists, for each changed phase, the witnesses of other phases that rest on
        it (`dependents`): where else to look before a refutation says so."""
        for p in changes:
            self.phase(p)
        phases = tuple(p if p.name not in changes else
                       (changes[p.name] if isinstance(changes[p.name], Phase) else p.derive(**changes[p.name]))
                       for p in self.phases)
        notes = Notes.of(fields.pop("notes", self.notes), f"schedule {name}: notes")
        notes = replace(notes, look=tuple(line for p in changes for line in self.dependents(p)))
        return replace(self, name=name, phases=phases, notes=notes, **fields)

    def __repr__(self):
        return f"Schedule({self.name!r}, problem={self.problem.name}, phases={[p.name for p in self.phases]})"


# --------------------------------------------------------------------------- placement at home


def _at_home(home):
    """The placement "where the inputs live": `home` on the output's indices, marked so that a
    schedule built from this one (`replace`, `Schedule.derive`) rebinds it to its own `home`."""
    def placement(P, ref):
        return home(P, ref)

    placement.__ringproof_home__ = home
    return placement


def _unbound_home(schedule: "Schedule") -> bool:
    """Does the schedule's placement mean "where the inputs live" without being bound to its own
    `home` yet: one `_at_home` made for another home (the schedule replaced it), or a function
    giving, on a symbolic element of each output, the same formula as `home`? A function the
    probe cannot run on symbols is not read as home."""
    place = schedule.placement
    if place is None:
        return False
    bound = getattr(place, "__ringproof_home__", None)
    if bound is not None:
        return bound is not schedule.home
    from ringproof.schedules.expr import lift, same, var
    P = SimpleNamespace(**vars(schedule.shape.record(var)), **{name: var(name) for name in schedule.derived})
    try:
        for a in schedule.problem.outputs:
            ref = a[tuple(var(f"?{i}") for i in range(len(a.dims)))]
            if not same(lift(guarded(place, "the placement")(P, ref)), lift(schedule.home(P, ref))):
                return False
    except Exception:      # noqa: BLE001 (a user's function the probe cannot run: not read as home)
        return False
    return True


# --------------------------------------------------------------------------- lock-step groups


def _check_groups(schedule: "Schedule") -> None:
    """The phases of a group share cycles tuple by tuple: the same loop names, and the same bounds
    but for the outermost loop's upper one (the group lasts as its longest member); they accumulate
    different arrays (the ring model checks one array's running sums a phase at a time)."""
    from ringproof.schedules.expr import lift, render, var
    slots = schedule.slots
    P = schedule.shape.record(var)
    for s in set(slots):
        members = [p for p, x in zip(schedule.phases, slots) if x == s]
        if len(members) < 2:
            continue
        first = members[0]
        for p in members[1:]:
            if [lp.name for lp in p.loops] != [lp.name for lp in first.loops]:
                raise BadInput(f"{p.defined_at}: phase {p.name}: the phases of group {p.group!r} must have the "
                               f"same loops ({', '.join(lp.name for lp in first.loops)})")
            ix = SimpleNamespace(**{name: var(name) for name in p.index_names})
            for depth, (a, b) in enumerate(zip(p.loops, first.loops)):
                pairs = [(a.lo, b.lo)] + ([(a.hi, b.hi)] if depth else [])
                for x, y in pairs:
                    if render(lift(_bound(x, P, ix))) != render(lift(_bound(y, P, ix))):
                        raise BadInput(f"{p.defined_at}: phase {p.name}: the phases of group {p.group!r} may "
                                       f"differ only in the outermost loop's upper bound (loop {a.name})")
        made: dict = {}
        for p in members:
            try:
                st = p.step(P, SimpleNamespace(**{name: var(name) for name in p.index_names}))
            except Exception:          # its error shows where the prover or the model calls it
                continue
            if isinstance(st, Step) and st.op.accumulates and st.target is not None:
                other = made.setdefault(st.target.array.name, p.name)
                if other != p.name:
                    raise BadInput(f"{p.defined_at}: phases {other} and {p.name} of group {p.group!r} both "
                                   f"accumulate {st.target.array.name}; the phases of a group accumulate "
                                   "different arrays")


# --------------------------------------------------------------------------- forms of a Choice


def split_forms(phases, shape: Shape) -> tuple[tuple, dict]:
    """(the phases with each phase whose step is a `Choice` replaced by its forms, {phase name:
    (the phase, its forms' names)}). A form is the phase's loops with one branch of the choice as
    its step, guard and send restricted to where that branch is chosen, in the lock-step group
    named after the phase (or the phase's own group); its inverse is the phase's, or the entry for
    its target's array where `inverse` is a dict. Witnesses `At(phase, ...)` anywhere name the form
    chosen at that iteration (an `Either` over the forms)."""
    forks, out = {}, []
    for p in phases:
        branches = _probe(p, shape)
        if branches is None:
            out.append(p if not isinstance(p.inverse, dict) else replace(p, inverse=_one_inverse(p, shape)))
            continue
        names = _form_names(p.name, [st.op.value for _, st in branches])
        forks[p.name] = (p, names, [None if st.target is None else st.target.array for _, st in branches])
        last: list = [None]       # (key, branches) of p's step last evaluated (`_form_step`)
        for i, (name, (_, st)) in enumerate(zip(names, branches)):
            inverse = p.inverse.get(st.target.array.name) if isinstance(p.inverse, dict) and st.target is not None \
                else None if isinstance(p.inverse, dict) else p.inverse
            out.append(Phase(name, p.loops, _form_step(p, i, len(branches), last), inverse,
                             p.doc or f"{p.name}, where it does {st.op.value}", p.relies_on, p.defined_at,
                             group=p.group or p.name))
    if not forks:
        return tuple(phases), {}
    return tuple(replace(q, step=_rewired(q.step, forks, _rewire_step)) for q in out), forks


def _probe(phase: Phase, shape: Shape):
    """The branches of the phase's step at symbolic indices if it is a Choice, else None (a step
    that fails here fails again, with its message, where the prover or the model calls it)."""
    from ringproof.schedules.expr import var
    try:
        got = phase.step(shape.record(var), SimpleNamespace(**{n: var(n) for n in phase.index_names}))
    except Exception:
        return None
    return got.branches() if isinstance(got, Choice) else None


def _one_inverse(phase: Phase, shape: Shape):
    """A phase that does not choose its step, given an inverse per array: its target's (looked
    up when first asked, so that a step that fails does so where the prover calls it)."""
    def inverse(P, key):
        from ringproof.schedules.expr import var
        st = phase.step(shape.record(var), SimpleNamespace(**{n: var(n) for n in phase.index_names}))
        if st.target is None or st.target.array.name not in phase.inverse:
            raise BadInput(f"{phase.defined_at}: phase {phase.name}: its inverse names arrays "
                           f"{', '.join(phase.inverse)}, not its target's")
        return phase.inverse[st.target.array.name](P, key)

    return inverse


def _form_names(name: str, ops: list) -> list:
    return [f"{name}.{op}" if ops.count(op) == 1 else f"{name}.{op}{ops[:i + 1].count(op)}"
            for i, op in enumerate(ops)]


def _form_step(phase: Phase, i: int, count: int, last: list):
    """The step of the phase's form i of `count`. `last`, shared by the phase's forms: the
    branches of the phase's step at the last call whose indices were all read-only arrays (which
    stay as they are: `model.ring.trace.indexed` hands each form of a phase the same ones) and
    whose sizes were ints, keyed by those arrays (the same objects) and sizes (the same values), so
    that the forms evaluated one after another at the same iterations run the phase's step once."""
    def step(P, ix):
        key, seen = _fixed(P, ix), last[0]        # one read: another thread may set it meanwhile
        if key is not None and seen is not None and seen[0][:2] == key[:2] \
                and all(a is b for a, b in zip(seen[0][2], key[2])):
            branches = seen[1]
        else:
            got = phase.step(P, ix)
            branches = got.branches() if isinstance(got, Choice) else []
            if key is not None:
                last[0] = key, branches
        if len(branches) != count:
            raise BadInput(f"{phase.defined_at}: phase {phase.name}: its step chooses among {count} steps "
                           f"(ite of steps) symbolically but among {len(branches) or 1} here")
        cond, st = branches[i]
        from ringproof.schedules.expr import and_
        guard = cond if st.guard is True else and_(st.guard, cond)
        send = None if st.send is None else replace(st.send, when=cond if st.send.when is True
                                                   else and_(st.send.when, cond))
        return replace(st, guard=guard, send=send)

    functools.update_wrapper(step, phase.step)
    return step


def _fixed(P, ix):
    """(the sizes' names and values, the indices' names, their values) where every size is an int
    and every index a read-only array that owns its data (no other reference can change it), else
    None: `_form_step`'s key."""
    sizes, idx = tuple(vars(P).items()), vars(ix)
    if all(type(v) is int for _, v in sizes) and all(
            getattr(getattr(v, "flags", None), "writeable", True) is False and v.base is None for v in idx.values()):
        return sizes, tuple(idx), tuple(idx.values())
    return None


def _rewired(fn, forks: dict, rewire):
    """fn(P, ...) whose result's witnesses naming a split phase name its forms (`_rewire`)."""
    def call(P, *args):
        return rewire(fn(P, *args), P, forks)

    functools.update_wrapper(call, fn)
    return call


def _rewire_step(st, P, forks):
    if not isinstance(st, Step):
        return st
    send = st.send if st.send is None or st.send.source is None else \
        replace(st.send, source=_rewire(st.send.source, P, forks))
    return replace(st, prev=_rewire_prev(st, P, forks), sources=tuple(_rewire(w, P, forks) for w in st.sources),
                   send=send)


def _rewire_prev(st, P, forks):
    """The previous node of a sum is in the form that accumulates the same array."""
    w = st.prev
    if not isinstance(w, At) or w.phase not in forks or st.target is None:
        return w
    phase, names, arrays = forks[w.phase]
    mine = [name for name, a in zip(names, arrays) if a == st.target.array]
    if len(mine) != 1:
        raise BadInput(f"{phase.defined_at}: phase {phase.name}: {len(mine) or 'none'} of its forms "
                       f"accumulate {st.target.array.name}: a `prev` witness naming the phase needs one")
    return At(mine[0], w.idx)


def _rewire(w, P, forks):
    """A witness with each `At(phase, idx)` of a split phase replaced by the form chosen there."""
    if isinstance(w, Either):
        return Either(w.cond, _rewire(w.then, P, forks), _rewire(w.other, P, forks))
    if not isinstance(w, At) or w.phase not in forks:
        return w
    phase, names, _ = forks[w.phase]
    missing = set(phase.index_names) - set(w.idx)
    if missing:
        raise BadInput(f"{user_line(__file__)}witness At({w.phase!r}) lacks indices {sorted(missing)}")
    branches = phase.step(P, SimpleNamespace(**{k: w.idx[k] for k in phase.index_names})).branches()
    out = At(names[-1], w.idx)
    for (cond, _), name in reversed(list(zip(branches[:-1], names[:-1]))):
        out = Either(cond, At(name, w.idx), out)
    return out


def with_derived(derived: dict, P):
    """P with the derived parameters added (P itself if it has them already): a function's value,
    a `Least`'s found by search on ints and a symbol on the prover's backends."""
    if not derived or all(hasattr(P, name) for name in derived):
        return P
    out = SimpleNamespace(**vars(P))
    for name, fn in dict(derived).items():
        setattr(out, name, fn.value(out, name) if isinstance(fn, Least) else guarded(fn, f"derived parameter {name}")(out))
    return out


def _guarded_derived(name: str, fn):
    """A derived parameter's functions as the user's code (`guarded`)."""
    if not isinstance(fn, Least):
        return guarded(fn, f"derived parameter {name}")
    what = f"derived parameter {name}"
    return Least(guarded(fn.cond, f"the condition of {what}"), guarded(fn.hi, f"the upper bound of {what}"),
                 guarded(fn.lo, f"the lower bound of {what}"))


def _seeing(fn, see):
    """fn(P, ...) called with P's derived parameters added (a user's function: keeps its name,
    file and line through __wrapped__); fn itself where it already sees the same parameters."""
    derived = tuple(see.args[0].items())
    if fn is None or not callable(fn) or _sees(fn, derived):
        return fn

    def call(P, *args):
        return fn(see(P), *args)

    functools.update_wrapper(call, fn)
    return _mark_seeing(call, derived)


def _phase_seeing(phase: Phase, see) -> Phase:
    if _sees(phase, tuple(see.args[0].items())):
        return phase

    def bound(b):
        if isinstance(b, str) and b not in PARAMETERS:       # a derived parameter's name
            return _seeing(_named_bound(b), see)
        return _seeing(b, see)

    loops = tuple(replace(lp, lo=bound(lp.lo), hi=bound(lp.hi), through=_seeing(lp.through, see))
                  for lp in phase.loops)
    inverse = ({a: _seeing(f, see) for a, f in phase.inverse.items()} if isinstance(phase.inverse, dict)
               else _seeing(phase.inverse, see))        # a dict of inverses by array: each sees them
    return replace(phase, loops=loops, step=_seeing(phase.step, see), inverse=inverse)


def _mark_seeing(obj, derived: tuple):
    """obj (a function or a phase), marked as seeing the derived parameters `derived` (items)."""
    object.__setattr__(obj, "__ringproof_sees__", (derived, obj))
    return obj


def _sees(obj, derived: tuple) -> bool:
    """Was obj itself marked as seeing `derived` (`_mark_seeing`)? A wrapper copies its function's
    marks (`functools.update_wrapper`) and a `replace`d phase is a new object: neither is."""
    mark = getattr(obj, "__ringproof_sees__", None)
    return mark is not None and mark[1] is obj and mark[0] == derived


def _named_bound(name: str):
    """The loop bound `name` (a derived parameter) as a function of P."""
    def bound(P, ix):
        return getattr(P, name)
    bound.__ringproof_guarded__ = True
    return bound


def variant_name(base: str, defects, known) -> str:
    """The name of `base` with some printed defects put back; unknown defect names are an error."""
    unknown = set(defects) - set(known)
    if unknown:
        raise ValueError(f"unknown defects {sorted(unknown)}; known: {tuple(known)}")
    return base if not defects else f"{base}-" + "+".join(defects)


def params(n, m, d=None):
    """The parameter record a step sees: n, m, k = n / m, d (= n in the paper), kd = d / m."""
    return ANY_D.params(m, n=n, d=d if d is not None else n)


def check_size(n: int, m: int, d: int | None = None) -> None:
    """Reject sizes the schedules are not defined for, naming the bad argument."""
    for name, val in (("n", n), ("m", m)) + ((("d", d),) if d is not None else ()):
        if not isinstance(val, int) or isinstance(val, bool):
            raise BadInput(f"{name} must be an integer, got {name}={val!r}")
        if val < 1:
            raise BadInput(f"{name} must be at least 1, got {name}={val}")
    if n % m:
        raise BadInput(f"n must be a multiple of m, got n={n}, m={m}")
    if d is not None and d % m:
        raise BadInput(f"d must be a multiple of m, got d={d}, m={m}")


def check_shape(schedule: "Schedule", n: int, m: int, d: int | None) -> int:
    """The d of a run of `schedule`: n where d is not a free size of its shape (which refuses any
    other d), else d; sizes that break the schedule's side condition are refused."""
    if d is None or d == n:
        d = n
    elif not schedule.shape.is_free("d"):
        raise BadInput(f"schedule {schedule.name} is written for d = n (the paper's shape), got n={n}, "
                       f"d={d}; its formulas bound column indices by n (use a -general schedule)")
    else:
        check_size(n, m, d)
    if not schedule.admits(n, m, d):
        raise BadInput(f"schedule {schedule.name} requires {schedule.requirement()}, which n={n}, m={m}"
                       + (f", d={d}" if schedule.shape.is_free("d") else "") + " breaks")
    return d
