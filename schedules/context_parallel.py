"""Context parallelism: the token layouts and ring steps of the schedules LLM training runs.

A ring of m ranks (GPUs as PEs) splits a sequence of n tokens; rank r holds n/m tokens in a local
order (its slots). Queries stay home; the K/V blocks travel one hop per ring step, so at step s
(0 ≤ s < m) rank r holds the K/V block of rank (r − s) mod m and computes the pairs (query, key)
of its queries with that block that the mask allows. The backward pass walks the same ring with
dK/dV travelling beside K/V and one more hop bringing them home.

The layouts (0-based rank r and slot j; k = n/m, h = n/(2m)):

    contiguous  token r·k + j                                    (Ring Attention; m | n)
    striped     token j·m + r                                    (Brandon et al.; m | n)
    zigzag      token r·h + j for j < h, else (2m−1−r)·h + j − h  (head-tail; 2m | n)

Every formula is written once with the DSL's helpers: the same functions give the layout that
`prove layout` compares with a load balancer, the pairs `prove conform` expects of a real library
(`RING_PASSES`: the ring pass of the scores w1[A, B] = Σ_C q[A, C]·k[B, C], B ≤ A where causal, PE l
(1-based) at ring step s (1-based) computing its queries against the key block of PE
((l − s) mod m) + 1, which PE l − 1 copies on while it uses it), and the steps of the registered
schedules the prover proves: the forwards (`FORWARDS`: that ring pass with V travelling beside K
and online softmax folding each block, in one pass) and the backward rings (`BACKWARDS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ringproof.schedules.causal_stays import Readings, causal_backward_stays, causal_stays, half
from ringproof.schedules.computation import computation
from ringproof.schedules.dsl import (EAC, HOME, MAC, MAX, NORM, At, Copy, Either, Loop, Move, Phase, Problem, Schedule,
                                     Step,
                                     params, with_derived)
from ringproof.schedules.expr import and_, div, eq, ge, gt, ite, le, lt, mod, or_, wrap


# --------------------------------------------------------------------------- the layouts


@dataclass(frozen=True)
class Layout:
    """Where tokens live, and what the ring reads of it under the causal mask; one row per layout.

    `token(P, r, j)`: the 0-based token in slot j of rank r; `owner(P, t)` and `slot(P, t)` its
    inverse, of a 0-based token t. Under the causal mask, for query a (0-based) and the block of
    rank r: the keys ≤ a are a prefix of the block's slots, `allowed(P, r, a)` of them; the ring
    steps with any are 1..`last_step(P, a)` (1-based); the rows of rank l's block (1-based) that
    take key slot b at step s are a suffix, and `row_before(P, ix, tokens)` says whether row i − 1
    is one of them too (`tokens`: the same read from the rows' tokens). Each is the layout's own
    reading, which stays in the prover's fragment; `check` compares them with the tokens at import,
    the bounded tier and tests/test_cp_schedules.py at more sizes. `readings`: the causal stay
    hints' readings of the mask (`causal_stays.Readings`)."""

    name: str
    token: Callable
    owner: Callable
    slot: Callable
    allowed: Callable
    last_step: Callable
    row_before: Callable
    readings: Readings


def _at_most(x, size):
    """#{j ∈ [0, size): j ≤ x}."""
    return ite(lt(x, 0), 0, ite(lt(x, size), x + 1, size))


def _own_then_lower(P, ix, tokens):
    """Own block (s = 1): rows from slot b on; a lower rank's block (2 ≤ s ≤ l): every row; else none."""
    return or_(and_(eq(ix.s, 1), gt(ix.i, ix.b)), and_(gt(ix.s, 1), le(ix.s, ix.l)))


CONTIGUOUS = Layout(
    "contiguous", lambda P, r, j: r * P.k + j, lambda P, t: div(t, P.k), lambda P, t: mod(t, P.k),
    allowed=lambda P, r, a: _at_most(a - r * P.k, P.k),
    last_step=lambda P, a: div(a, P.k) + 1,
    row_before=_own_then_lower,
    readings=Readings(
        mask=lambda P, h, ix: or_(and_(eq(ix.s, 1), le(ix.b, ix.i)), and_(gt(ix.s, 1), le(ix.s, ix.l))),
        block_end=lambda P, h, ix: or_(eq(ix.i, P.k), and_(eq(ix.i, 1), gt(ix.s, ix.l))),
        last_key=lambda P, h, ix: and_(eq(ix.s, ix.l), or_(and_(eq(ix.l, 1), eq(ix.b, ix.i)),
                                                           and_(gt(ix.l, 1), eq(ix.b, P.k)))),
        radix=lambda P: P.k,
        step_2_key=lambda P: P.k,
        # in step 1 PE m's occupancy at a row's first dk term is −i² + (3d + 1)i plus terms of the
        # sizes (rows 2 .. k − 1), most at the row ⌊(3d + 1)/2⌋ (d even: rows 3d/2 and 3d/2 + 1
        # tie); where that row is below k − 1 (3d + 4 ≤ 2k) the fixed rows miss it (n = 36, m = 3, d = 6)
        backward_peaks=(("dk", lambda P: {"s": 1, "i": div(3 * P.d + 1, 2), "b": 1, "u": 2, "c": 1, "l": P.m,
                                          "when": le(3 * P.d + 4, 2 * P.k)}),)))

STRIPED = Layout(
    "striped", lambda P, r, j: j * P.m + r, lambda P, t: mod(t, P.m), lambda P, t: div(t, P.m),
    allowed=lambda P, r, a: ite(lt(a, r), 0, _at_most(div(a - r, P.m), P.k)),
    last_step=lambda P, a: ite(lt(a, P.m), a + 1, P.m),
    row_before=lambda P, ix, tokens: tokens,              # by the tokens: key B ≤ the token of row i − 1
    readings=Readings(
        mask=lambda P, h, ix: or_(lt(ix.b, ix.i), and_(eq(ix.b, ix.i), le(ix.s, ix.l))),
        block_end=lambda P, h, ix: or_(eq(ix.i, P.k), and_(eq(ix.i, 1), eq(ix.b, P.k), gt(ix.s, ix.l))),
        last_key=lambda P, h, ix: or_(and_(eq(ix.i, 1), eq(ix.s, ix.l), eq(ix.b, 1)),
                                      and_(gt(ix.i, 1), eq(ix.s, P.m),
                                           or_(and_(lt(ix.l, P.m), eq(ix.b, ix.i - 1)),
                                               and_(eq(ix.l, P.m), eq(ix.b, ix.i))))),
        radix=lambda P: P.m,
        step_2_key=lambda P: P.k,
        # a row takes the keys of the slots before it (and its own where s ≤ l), so in step 2 the
        # scores held peak at the row before the last, its own key (k = 2: the last row's first key)
        peaks=(("scores", lambda P: {"s": 2, "i": P.k - 1, "u": 1, "b": P.k - 1, "c": 1, "l": 3,
                                     "when": and_(ge(P.m, 3), ge(P.k, 2))}),
               ("scores", lambda P: {"s": 2, "i": P.k, "u": 1, "b": 1, "c": 1, "l": 3, "when": ge(P.m, 3)}))))


def _zigzag_token(P, r, j):
    return ite(lt(j, P.h), r * P.h + j, (2 * P.m - 1 - r) * P.h + j - P.h)


def _zigzag_owner(P, t):
    """Chunk g = t div h is rank g's head (g < m) or rank 2m − 1 − g's tail."""
    g = div(t, P.h)
    return ite(lt(g, P.m), g, 2 * P.m - 1 - g)


def _zigzag_slot(P, t):
    return ite(lt(div(t, P.h), P.m), 0, P.h) + mod(t, P.h)


ZIGZAG = Layout(
    "zigzag", _zigzag_token, _zigzag_owner, _zigzag_slot,
    allowed=lambda P, r, a: _at_most(a - r * P.h, P.h) + _at_most(a - (2 * P.m - 1 - r) * P.h, P.h),
    last_step=lambda P, a: ite(lt(div(a, P.h), P.m), div(a, P.h) + 1, P.m),
    # own block: rows from slot b on; a lower rank's block: every row for its head keys (b ≤ h);
    # a higher rank's block: the tail rows (i > h)
    row_before=lambda P, ix, tokens: or_(and_(eq(ix.s, 1), gt(ix.i, ix.b)),
                                         and_(gt(ix.s, 1), le(ix.s, ix.l), le(ix.b, P.h)),
                                         and_(gt(ix.s, 1), gt(ix.s, ix.l), gt(ix.i, P.h + 1))),
    readings=Readings(
        mask=lambda P, h, ix: or_(and_(eq(ix.s, 1), le(ix.b, ix.i)),
                                  and_(gt(ix.s, 1), le(ix.s, ix.l), le(ix.b, h)),
                                  and_(gt(ix.s, ix.l), gt(ix.i, h))),
        # as cases of single comparisons (its untaken keys, b > h for 1 < s ≤ l, in a conjunction
        # split the block's ends past the counter's cases)
        block_end=lambda P, h, ix: eq(ix.i, ite(gt(ix.s, 1), ite(le(ix.s, ix.l), ite(gt(ix.b, h), 1, P.k), P.k), P.k)),
        # the key slot chosen by cases of single comparisons (`ite`), which the counter splits
        # apart cheaply, where a disjunction of conjunctions would be written disjoint by their negations
        last_key=lambda P, h, ix: or_(and_(le(ix.i, h), eq(ix.s, ix.l), eq(ix.b, ite(eq(ix.l, 1), ix.i, h))),
                                      and_(gt(ix.i, h), eq(ix.s, P.m),
                                           eq(ix.b, ite(lt(ix.l, P.m), P.k, ite(eq(P.m, 1), ix.i, h))))),
        radix=half,
        step_2_key=half,                    # the head's last key
        # for k = 2, m ≥ 3 PE 1 holds the most in step 2 at the last row's first score (a higher
        # rank's block in, its own queries' sums begun); with it the largest candidate is the ring
        # model's peak at every size tried, its bound not shown (docs/proofs.md, "Balance and memory")
        peaks=(("scores", lambda P: {"s": 2, "i": P.k, "u": 1, "b": 1, "c": 1, "l": 1, "when": ge(P.m, 3)}),)))

LAYOUTS = {lay.name: lay for lay in (CONTIGUOUS, STRIPED, ZIGZAG)}


# --------------------------------------------------------------------------- the schedules


@dataclass(frozen=True)
class ContextParallel:
    """One context-parallel schedule: its layout, its mask and its side condition.

    `requires(P)`: the side condition beyond m | n (a DSL condition), `requires_text` the same for
    people; `unit(m)`: the least n it allows for m ranks (every valid n is a multiple of it);
    `derived`: parameters its formulas use (zigzag's h = n/(2m))."""

    name: str
    layout: Layout
    causal: bool
    requires: Callable | None
    requires_text: str
    unit: Callable
    doc: str
    pairs: Callable           # (P, r) -> the (query, key) pairs rank r computes, closed form
    spread: str               # max − min over ranks of `pairs`, for people
    derived: dict = field(default_factory=dict)

    def params(self, n: int, m: int, d: int | None = None):
        return with_derived(self.derived, params(n, m, d=d))

    def valid(self, n: int, m: int) -> bool:
        return n >= 1 and m >= 1 and n % self.unit(m) == 0

    def positions(self, P):
        """The tokens of every rank in local order, rank after rank: what a load balancer's index
        map returns (numpy, 0-based)."""
        import numpy as np

        P = with_derived(self.derived, P)
        r, j = np.divmod(np.arange(P.n, dtype=np.int64), P.k)
        return self.layout.token(P, r, j)

    def computes(self, P, query, key):
        """Whether the pair (query token, key token) is one the schedule computes."""
        return le(key, query) if self.causal else True


def _multiple_of_m(m):
    return m


def _multiple_of_2m(m):
    return 2 * m


def _two_m_divides_n(P):
    return eq(mod(P.n, 2 * P.m), 0)


def _h(P):
    return div(P.n, 2 * P.m)


# Pairs per rank (0-based r): contiguous causal, rank r's k queries see the r·k keys before its
# block and a triangle of its own; striped, query j·m + r sees j·m + r + 1 keys; zigzag, head chunk
# r and tail chunk 2m − 1 − r together see (2m − 1)·h² + h·(h + 1) keys, whatever r. Checked
# against the registered schedules' pairs by enumeration (tests/test_cp_schedules.py).
SCHEDULES = {s.name: s for s in (
    ContextParallel("ring-attention", CONTIGUOUS, False, None, "m | n", _multiple_of_m,
                    "Ring Attention (Liu, Zaharia, Abbeel 2023): contiguous blocks, no mask",
                    lambda P, r: P.k * P.n, "0"),
    ContextParallel("ring-attention-causal", CONTIGUOUS, True, None, "m | n", _multiple_of_m,
                    "Ring Attention with the causal mask: contiguous blocks, imbalanced (rank r "
                    "computes more pairs than rank r − 1)",
                    lambda P, r: P.k * P.k * r + div(P.k * (P.k + 1), 2), "k²·(m − 1)"),
    ContextParallel("striped", STRIPED, True, None, "m | n", _multiple_of_m,
                    "Striped attention (Brandon et al. 2023): token t on rank t mod m, causal",
                    lambda P, r: P.m * div(P.k * (P.k - 1), 2) + P.k * (r + 1), "k·(m − 1)"),
    ContextParallel("zigzag", ZIGZAG, True, _two_m_divides_n, "2m | n", _multiple_of_2m,
                    "zigzag / head-tail: 2m chunks of n/(2m) tokens, rank r holds chunks r and "
                    "2m−1−r in that order, causal",
                    lambda P, r: (2 * P.m - 1) * P.h * P.h + P.h * (P.h + 1), "0", {"h": _h}),
)}


def disagreements(cp: ContextParallel, ms=(1, 2, 3)) -> list[str]:
    """Where `cp`'s layout disagrees with its own tokens at n = unit(m) and 2·unit(m) for each m in
    `ms` (empty: nowhere): `owner` and `slot` invert `token`, the tokens are 0..n − 1 once each,
    and under the mask `allowed`, `last_step` and `row_before` read what the tokens say."""
    from types import SimpleNamespace

    lay, out = cp.layout, []
    for m in ms:
        for n in (cp.unit(m), 2 * cp.unit(m)):
            P = cp.params(n, m)
            tokens = {(r, j): lay.token(P, r, j) for r in range(m) for j in range(P.k)}
            if sorted(tokens.values()) != list(range(n)):
                out.append(f"{lay.name}: the tokens at n={n}, m={m} are not 0..{n - 1} once each")
                continue
            out += [f"{lay.name}: owner or slot of token {t} at n={n}, m={m} is not ({r}, {j})"
                    for (r, j), t in tokens.items() if (lay.owner(P, t), lay.slot(P, t)) != (r, j)]
            if not cp.causal:
                continue
            for a in range(n):
                la = lay.owner(P, a)
                taken = [sum(t <= a for (q, _), t in tokens.items() if q == r) for r in range(m)]
                if any(lay.allowed(P, r, a) != taken[r] for r in range(m)):
                    out.append(f"{lay.name}: allowed(r, {a}) at n={n}, m={m} is not the keys ≤ {a} of rank r's block")
                steps = [taken[(la - s) % m] > 0 for s in range(m)]
                if steps != [s < lay.last_step(P, a) for s in range(m)]:
                    out.append(f"{lay.name}: last_step({a}) at n={n}, m={m} is not the last ring step with a key ≤ {a}")
            for s, i, b, l in ((s, i, b, l) for s in range(1, m + 1) for i in range(2, P.k + 1)
                               for b in range(1, P.k + 1) for l in range(1, m + 1)):
                key = tokens[((l - s) % m, b - 1)]
                if key <= tokens[(l - 1, i - 1)]:             # row i takes key slot b at step s
                    before = key <= tokens[(l - 1, i - 2)]
                    if bool(lay.row_before(P, SimpleNamespace(s=s, i=i, b=b, l=l), before)) != before:
                        out.append(f"{lay.name}: row_before at s={s}, i={i}, b={b}, l={l}, n={n}, m={m} "
                                   "is not what the rows' tokens say")
    return out


_WRONG = [line for cp in SCHEDULES.values() for line in disagreements(cp)]
if _WRONG:
    raise ImportError(f"context_parallel.SCHEDULES: {len(_WRONG)} layout readings disagree with the "
                      f"tokens, first {_WRONG[0]}")


def schedule(name: str) -> ContextParallel | None:
    """The context-parallel schedule of a target name (its `-bwd` twin shares it), or None."""
    return SCHEDULES.get(name.removesuffix("-bwd"))


# --------------------------------------------------------------------------- as DSL schedules

SCORES = computation("cp-scores", {"q": "n d", "k": "n d", "w1": "n n"}, ["w1[A, B] += q[A, C] * k[B, C]"])
CAUSAL_SCORES = computation("cp-causal-scores", {"q": "n d", "k": "n d", "w1": "n n"},
                            ["w1[A, B] += q[A, C] * k[B, C] if B <= A"])


def ring_pass(cp: ContextParallel) -> Schedule:
    """The ring pass of `cp` as a DSL schedule: loops s (ring step), i (query slot), b (key slot),
    c (column); PE l computes q[A, c]·k[B, c] for its query A = slot i and the key B = slot b of
    the block it holds. Every index is `cp`'s layout formula shifted to 1-based."""
    problem = CAUSAL_SCORES if cp.causal else SCORES
    q, kk = problem.inputs
    w1 = problem.output
    lay = cp.layout

    def query(P, ix):
        return lay.token(P, ix.l - 1, ix.i - 1) + 1

    def key(P, ix):
        return lay.token(P, mod(ix.l - ix.s, P.m), ix.b - 1) + 1

    def step(P, ix):
        A, B = query(P, ix), key(P, ix)
        arrived = Either(eq(ix.s, 1), HOME,
                         At("ring", dict(s=ix.s - 1, i=1, b=ix.b, c=ix.c, l=wrap(ix.l - 1, P.m))))
        return Step(pe=ix.l, op=MAC, target=w1[A, B], operands=(q[A, ix.c], kk[B, ix.c]),
                    guard=le(B, A) if cp.causal else True,
                    send=Copy(kk[B, ix.c], when=eq(ix.i, 1), source=arrived),   # pass the block on
                    first=eq(ix.c, 1),
                    prev=At("ring", dict(s=ix.s, i=ix.i, b=ix.b, c=ix.c - 1, l=ix.l)),
                    sources=(HOME, Either(eq(ix.i, 1), arrived,
                                          At("ring", dict(s=ix.s, i=1, b=ix.b, c=ix.c, l=ix.l)))))

    def inverse(P, key_):
        A, B, C = key_
        la, lb = lay.owner(P, A - 1), lay.owner(P, B - 1)
        return dict(s=mod(la - lb, P.m) + 1, i=lay.slot(P, A - 1) + 1, b=lay.slot(P, B - 1) + 1,
                    c=C, l=la + 1)

    def home(P, ref):
        return lay.owner(P, ref.idx[0] - 1) + 1

    phase = Phase("ring", (Loop("s", 1, "m", ring_step=True), Loop("i", 1, "k"), Loop("b", 1, "k"), Loop("c", 1, "d")),
                  step, inverse=inverse,
                  doc="PE l at ring step s: q[A, c]·k[B, c] for its query slot i and key slot b of the "
                      "block of PE ((l − s) mod m) + 1, which it copies on")
    macs = "n*(n + 1)*d/2" if cp.causal else "n**2*d"
    return Schedule(cp.name, problem, (phase,), home=home, square=False,
                    doc=f"{cp.doc}; the ring pass of the scores (where and when each (query, key) "
                        "pair is computed)",
                    notes={"claims": {"cycles": "n**2*d/m", "MAC": macs}},
                    requires=cp.requires, derived=cp.derived)


RING_PASSES = {name: ring_pass(cp) for name, cp in SCHEDULES.items()}


# --------------------------------------------------------------------------- the backward pass


def _gradients(name, mask):
    return computation(name, {"ds": "n n", "p": "n n", "q": "n d", "k": "n d", "g": "n d",
                              "dq": "n d", "dk": "n d", "dv": "n d"},
                       [f"dq[A, C] += ds[A, B] * k[B, C]{mask}",
                        f"dk[B, C] += ds[A, B] * q[A, C]{mask}",
                        f"dv[B, C] += p[A, B] * g[A, C]{mask}"], output=("dq", "dk", "dv"))


GRADIENTS, CAUSAL_GRADIENTS = _gradients("cp-gradients", ""), _gradients("cp-causal-gradients", " if B <= A")


def _row(cp, P, l, i):
    """The query in slot i of PE l's own block (1-based)."""
    return cp.layout.token(P, l - 1, i - 1) + 1


def _key(cp, P, ix):
    """The key in slot b of the block PE l holds at ring step s (1-based)."""
    return cp.layout.token(P, mod(ix.l - ix.s, P.m), ix.b - 1) + 1


def _keys_at(cp, P, l, s, A):
    """How many keys of the block PE l holds at ring step s query A takes (a prefix of its slots)."""
    return cp.layout.allowed(P, mod(l - s, P.m), A - 1) if cp.causal else P.k


def _last_step(cp, P, A):
    """The last ring step at which query A takes a key."""
    return cp.layout.last_step(P, A - 1) if cp.causal else P.m


# The forms of the backward's ring step (`ite` of its three Steps, in the order written).
BACKWARD_FORMS = {"dq": "ring.MAC1", "dk": "ring.MAC2", "dv": "ring.MAC3"}


# Memory hints of the non-causal backward (`Schedule.stays`, each checked: 19 checks), derived in
# every run: the dk and dv rows the return hop moves home at ring step m kept there to the end
# ("home"). With its six candidate iterations the peak is derived, for k ≥ 5, m ≥ 3 the Max of
# three (step 1's second row, its row k − 1 where d > 2k, step 2's first row where d > 6k − 2),
# equal to the ring model's at every n, d ≤ 12 (docs/proofs.md, "Balance and memory").


def _last_row(P, ix):
    """The last use of a key or value block on a PE (forward and backward): its last query row (for
    m = 1 also the first, whose copy to itself arrives before the next row's use)."""
    return or_(eq(ix.i, P.k), and_(eq(P.m, 1), eq(ix.i, 1)))


def _last_key(P, ix):
    """A row's last use (q, dO) and dq's last term: the last key of the last ring step."""
    return and_(eq(ix.s, P.m), eq(ix.b, P.k))


def _last_column(P, ix):
    return eq(ix.c, P.d)


BACKWARD_STAYS = {
    "last": {(BACKWARD_FORMS["dq"], "k"): _last_row, (BACKWARD_FORMS["dq"], "dq"): _last_key,
             (BACKWARD_FORMS["dk"], "ds"): _last_column, (BACKWARD_FORMS["dk"], "q"): _last_key,
             (BACKWARD_FORMS["dv"], "p"): _last_column, (BACKWARD_FORMS["dv"], "g"): _last_key},
    "alone": {(BACKWARD_FORMS["dq"], "k"): lambda P, ix: and_(eq(ix.s, P.m), or_(gt(P.m, 1), eq(P.k, 1)))},
    # the sums the last ring step moves on arrive home
    "home": {(BACKWARD_FORMS["dk"], "dk"): lambda P, ix: eq(ix.s, P.m),
             (BACKWARD_FORMS["dv"], "dv"): lambda P, ix: eq(ix.s, P.m)},
    # where a PE holds the most: the first scores (k = 1, m = 1); step 1's dv sums of the last
    # columns, at the last key block or the one before (m = 1); step 1's second row or the one before
    # the last (which is more as d exceeds 2k); step 2's first row at the last key (d ≥ 6k − 2)
    "peak": [(BACKWARD_FORMS["dk"], lambda P: {"s": 1, "i": 1, "b": 1, "u": 2, "c": 1, "l": 1}),
             (BACKWARD_FORMS["dv"], lambda P: {"s": 1, "i": 1, "b": P.k, "u": 3, "c": P.d, "l": 1}),
             (BACKWARD_FORMS["dv"], lambda P: {"s": 1, "i": 1, "b": P.k - 1, "u": 3, "c": P.d, "l": 1,
                                               "when": ge(P.k, 2)}),
             (BACKWARD_FORMS["dk"], lambda P: {"s": 1, "i": 2, "b": 1, "u": 2, "c": 1, "l": 1, "when": ge(P.k, 2)}),
             (BACKWARD_FORMS["dk"], lambda P: {"s": 1, "i": P.k - 1, "b": 1, "u": 2, "c": 1, "l": 1,
                                               "when": ge(P.k, 2)}),
             (BACKWARD_FORMS["dk"], lambda P: {"s": 2, "i": 1, "b": P.k, "u": 2, "c": 1, "l": 1, "when": ge(P.m, 2)})],
}


def ring_backward(cp: ContextParallel) -> Schedule:
    """The backward ring of `cp` in one ring pass, as the libraries run it: with dS = P∘(dP − D) and
    P on the queries' ranks, PE l at ring step s, for its query slot i and each key slot b of the
    block it holds, does (u = 1) dq[A, c] += dS[A, B]·k[B, c], K copied on while its first query
    uses it; (u = 2) dk[B, c] += dS[A, B]·q[A, c] and (u = 3) dv[B, c] += P[A, B]·dO[A, c], the
    sums of the key block it holds: they travel the ring with K (moved on after the block's last
    row) and one more hop, the return hop at step m, brings them home (`placement`). Under the mask
    a sum starts at its first allowed term and passes the ranks with none on."""
    problem = CAUSAL_GRADIENTS if cp.causal else GRADIENTS
    ds, p, q, kk, g = problem.inputs
    dq, dk, dv = (e.target for e in problem.equations)
    lay = cp.layout

    def at(ix, form, **idx):
        return At(BACKWARD_FORMS[form], dict(dict(s=ix.s, i=ix.i, b=ix.b, u=ix.u, c=ix.c, l=ix.l), **idx))

    def owner(P, A):
        return lay.owner(P, A - 1) + 1

    def step(P, ix):
        A, B = _row(cp, P, ix.l, ix.i), _key(cp, P, ix)
        mask = le(B, A) if cp.causal else True
        arrived = Either(eq(ix.s, 1), HOME, at(ix, "dq", s=ix.s - 1, i=1, u=1, l=wrap(ix.l - 1, P.m)))
        back = eq(ix.b, 1)
        grad_q = Step(pe=ix.l, op=MAC, target=dq[A, ix.c], operands=(ds[A, B], kk[B, ix.c]), guard=mask,
                      send=Copy(kk[B, ix.c], when=eq(ix.i, 1), source=arrived),
                      first=and_(eq(ix.s, 1), eq(ix.b, 1)),
                      prev=at(ix, "dq", s=ite(back, ix.s - 1, ix.s),
                              b=ite(back, _keys_at(cp, P, ix.l, ix.s - 1, A), ix.b - 1)),
                      sources=(HOME, Either(eq(ix.i, 1), arrived, at(ix, "dq", i=1, u=1))))
        if cp.causal:                    # row i − 1 took this key too: the sum's previous term
            before = and_(gt(ix.i, 1), lay.row_before(P, ix, le(B, _row(cp, P, ix.l, ix.i - 1))))
        else:
            before = gt(ix.i, 1)

        def travelling(form, target, first_operand, second_operand):
            return Step(pe=ix.l, op=MAC, target=target[B, ix.c],
                        operands=(first_operand[A, B], second_operand[A, ix.c]), guard=mask,
                        send=Move(target[B, ix.c], when=eq(ix.i, P.k)),     # on, and home at s = m
                        first=and_(eq(ix.s, 1), eq(ix.i, ix.b if cp.causal else 1)),
                        prev=at(ix, form, s=ite(before, ix.s, ix.s - 1), i=ite(before, ix.i - 1, P.k),
                                l=ite(before, ix.l, wrap(ix.l - 1, P.m))),
                        sources=(HOME, HOME))

        # u ≤ 1, 1 < u ≤ 2, u > 2: each form's condition a range of u, which the counter splits
        # at once (u ≠ 1 ∧ u ≠ 2 costs it a split of u's range per case)
        return ite(le(ix.u, 1), grad_q,
                   ite(le(ix.u, 2), travelling("dk", dk, ds, q), travelling("dv", dv, p, g)))

    def where(P, A, B, u, c):
        la, lb = lay.owner(P, A - 1), lay.owner(P, B - 1)
        return dict(s=mod(la - lb, P.m) + 1, i=lay.slot(P, A - 1) + 1, b=lay.slot(P, B - 1) + 1, u=u,
                    c=c, l=la + 1)

    inverse = {"dq": lambda P, key_: where(P, key_[0], key_[2], 1, key_[1]),
               "dk": lambda P, key_: where(P, key_[2], key_[0], 2, key_[1]),
               "dv": lambda P, key_: where(P, key_[2], key_[0], 3, key_[1])}

    def home(P, ref):
        """Rows of dS, P, q and dO on their query's PE; rows of k on their key's."""
        return owner(P, ref.idx[0])

    def ends(P, ref):
        """dq's last term on its own PE; dk's and dv's at ring step m on the PE before home."""
        X, C = ref.idx
        if ref.array.name == "dq":
            S = _last_step(cp, P, X)
            return At(BACKWARD_FORMS["dq"], dict(s=S, i=lay.slot(P, X - 1) + 1, b=_keys_at(cp, P, owner(P, X), S, X),
                                                 u=1, c=C, l=owner(P, X)))
        return At(BACKWARD_FORMS[ref.array.name], dict(s=P.m, i=P.k, b=lay.slot(P, X - 1) + 1,
                                                       u=2 if ref.array.name == "dk" else 3, c=C,
                                                       l=wrap(owner(P, X) - 1, P.m)))

    phase = Phase("ring", (Loop("s", 1, "m", ring_step=True), Loop("i", 1, "k"), Loop("b", 1, "k"), Loop("u", 1, 3),
                           Loop("c", 1, "d")), step, inverse=inverse,
                  doc="PE l at ring step s, query slot i, key slot b of the block it holds: dq, then "
                      "the block's travelling dk and dv")
    macs = "3*d*n*(n + 1)/2" if cp.causal else "3*n**2*d"
    return Schedule(f"{cp.name}-bwd", problem, (phase,), home=home, square=False,
                    placement=home, ends=ends,
                    doc=f"{cp.doc}; the backward in one ring pass: dq on the queries' PEs, dk and dv "
                        "travelling with their key block and brought home by the return hop",
                    notes={"claims": {"cycles": "3*n**2*d/m", "MAC": macs}},
                    requires=cp.requires, derived=cp.derived,
                    stays=_backward_stays(cp))


def _backward_stays(cp: ContextParallel) -> dict:
    """The backward's stay hints: the non-causal one's (BACKWARD_STAYS), derived in every run as
    ring-attention's are; the causal ones' (schedules/causal_stays.py), whose peaks are long to
    derive, on request (`prove --exact-peak`; docs/performance.md)."""
    if not cp.causal:
        return dict(BACKWARD_STAYS)
    return {**causal_backward_stays(cp.layout.readings, BACKWARD_FORMS), "on_request": True}


BACKWARDS = {f"{name}-bwd": ring_backward(cp) for name, cp in SCHEDULES.items()}


# --------------------------------------------------------------------------- the forward


def _forward(name, mask):
    return computation(name, {"q": "n d", "k": "n d", "v": "n d", "w1": "n n", "mx": "n", "l": "n",
                              "o": "n d", "y": "n d"},
                       [f"w1[A, B] += q[A, C] * k[B, C]{mask}",
                        f"mx[A] max= w1[A, B]{mask}",
                        f"l[A] += exp(w1[A, B] - mx[A]) rescaled{mask}",
                        f"o[A, C] += exp(w1[A, B] - mx[A]) * v[B, C] rescaled{mask}",
                        "y[A, C] = o[A, C] / l[A]"])


FORWARD, CAUSAL_FORWARD = _forward("cp-forward", ""), _forward("cp-causal-forward", " if B <= A")




# The forms of the forward's ring step (`ite` of its four Steps, in the order written: the phase
# "ring" runs as one form per branch, named after its op kinds). Witnesses name them directly, so
# the step is not run again to find the form chosen at each witness.
FORMS = {"scores": "ring.MAC", "o": "ring.EAC1", "max": "ring.MAX", "l": "ring.EAC2"}


# Memory hints of the non-causal forward (`Schedule.stays`, each checked by the prover, docs/proofs.md
# "Balance and memory"): the exact peak, 3k(2d + 1) for k, m ≥ 3, derived for every n, d, m.

def _received(P, ix):
    """The copy a PE passes on is used by the next PE in the next ring step; at the last step it is
    the next PE's own block, home again and unused -- but for m = 1, where the one PE sends its
    block to itself while its other rows still use it."""
    return and_(eq(ix.s, P.m), or_(gt(P.m, 1), eq(P.k, 1)))


STAYS = {
    "last": {(FORMS["scores"], "q"): lambda P, ix: and_(eq(ix.s, P.m), eq(ix.b, P.k)),
             (FORMS["scores"], "k"): _last_row,
             (FORMS["o"], "v"): _last_row,
             (FORMS["l"], "w1"): lambda P, ix: True,
             (FORMS["l"], "mx"): lambda P, ix: and_(eq(ix.s, P.m), eq(ix.b, P.k)),
             ("out", "o"): lambda P, ix: True,
             ("out", "l"): lambda P, ix: eq(ix.c, P.d),
             ("out", "y"): lambda P, ix: True},
    "alone": {(FORMS["scores"], "k"): _received, (FORMS["o"], "v"): _received},
    # where a PE holds the most: at cycle 0 (k = 1, m = 1: its inputs); in step 1 once the next
    # blocks have arrived, before its own K and V blocks are freed (the row before the last, or the
    # first row's last scores); in step 2 (m ≥ 2), both blocks held and every row's sums begun (the
    # second row, or the first row's last scores)
    "peak": [(FORMS["scores"], lambda P: {"s": 1, "i": 1, "u": 1, "b": 1, "c": 1, "l": 1}),
             (FORMS["l"], lambda P: {"s": 1, "i": P.k - 1, "u": 2, "b": 1, "c": P.d + 1, "l": 1, "when": ge(P.k, 2)}),
             (FORMS["l"], lambda P: {"s": 1, "i": 1, "u": 2, "b": P.k, "c": P.d + 1, "l": 1}),
             (FORMS["o"], lambda P: {"s": 2, "i": 2, "u": 2, "b": 1, "c": 1, "l": 1,
                                     "when": and_(ge(P.m, 2), ge(P.k, 2))}),
             (FORMS["l"], lambda P: {"s": 2, "i": 1, "u": 2, "b": P.k, "c": P.d + 1, "l": 1, "when": ge(P.m, 2)})],
}


def ring_forward(cp: ContextParallel, problem: Problem | None = None) -> Schedule:
    """The forward of `cp` as the libraries run it: one ring pass, K and V travelling in the same
    ring step, each ring step folding its block into the running max and the rescaled sums. PE l at
    ring step s, for its query slot i: (u = 1) for each key slot b of the block it holds, the scores
    w1[A, B] column by column, K copied on, then the running max mx[A] with that key; (u = 2) for
    each key slot b, o[A, c] += exp(w1[A, B] − mx[A])·v[B, c] column by column, V copied on, then
    l[A] += exp(w1[A, B] − mx[A]): the sums read the max of the blocks folded so far and are rescaled
    to it once per block (the online-softmax lemma). Then y = o / l on the query's PE. `problem`:
    another problem of the same arrays (a test's: the sums not rescaled)."""
    problem = problem or (CAUSAL_FORWARD if cp.causal else FORWARD)
    q, kk, v = problem.inputs
    w1, mx, l, o, y = (e.target for e in problem.equations)
    lay = cp.layout

    def at(ix, form="ring", **idx):
        """A witness in the ring step: in form `form` (FORMS; "ring": the form chosen there)."""
        return At(form, dict(dict(s=ix.s, i=ix.i, u=ix.u, b=ix.b, c=ix.c, l=ix.l), **idx))

    def passed(P, ix, form):
        """K (u = 1) or V (u = 2) of slot b, column c: home at step 1, else copied on by PE l − 1."""
        return Either(eq(ix.s, 1), HOME, at(ix, form, s=ix.s - 1, i=1, l=wrap(ix.l - 1, P.m)))

    def held(P, ix, form):
        return Either(eq(ix.i, 1), passed(P, ix, form), at(ix, form, i=1))

    def folded(P, ix, A):
        """(first, prev) of a sum over A's keys in ring-step order, in this (u, c)."""
        back = eq(ix.b, 1)
        return and_(eq(ix.s, 1), eq(ix.b, 1)), at(ix, s=ite(back, ix.s - 1, ix.s),
                                                  b=ite(back, _keys_at(cp, P, ix.l, ix.s - 1, A), ix.b - 1))

    def step(P, ix):
        A, B = _row(cp, P, ix.l, ix.i), _key(cp, P, ix)
        mask = le(B, A) if cp.causal else True
        last = P.d + 1
        score = at(ix, FORMS["scores"], u=1, c=P.d)                                  # w1[A, B], final
        block_max = at(ix, FORMS["max"], u=1, b=_keys_at(cp, P, ix.l, ix.s, A), c=last)   # mx after the block
        first, prev = folded(P, ix, A)
        scores = Step(pe=ix.l, op=MAC, target=w1[A, B], operands=(q[A, ix.c], kk[B, ix.c]), guard=mask,
                      send=Copy(kk[B, ix.c], when=eq(ix.i, 1), source=passed(P, ix, FORMS["scores"])),
                      first=eq(ix.c, 1), prev=at(ix, c=ix.c - 1), sources=(HOME, held(P, ix, FORMS["scores"])))
        running = Step(pe=ix.l, op=MAX, target=mx[A], operands=(w1[A, B],), guard=mask,
                       first=first, prev=prev, sources=(score,))
        values = Step(pe=ix.l, op=EAC, target=o[A, ix.c], operands=(w1[A, B], mx[A], v[B, ix.c]), guard=mask,
                      send=Copy(v[B, ix.c], when=eq(ix.i, 1), source=passed(P, ix, FORMS["o"])),
                      first=first, prev=prev, sources=(score, block_max, held(P, ix, FORMS["o"])))
        total = Step(pe=ix.l, op=EAC, target=l[A], operands=(w1[A, B], mx[A]), guard=mask,
                     first=first, prev=prev, sources=(score, block_max))
        keys = le(ix.u, 1)               # u = 1, written as a range of u (see ring_backward)
        return ite(lt(ix.c, last), ite(keys, scores, values), ite(keys, running, total))

    def divide(P, ix):
        A = _row(cp, P, ix.l, ix.i)
        S = _last_step(cp, P, A)
        end = dict(s=S, i=ix.i, u=2, b=_keys_at(cp, P, ix.l, S, A), l=ix.l)
        return Step(pe=ix.l, op=NORM, target=y[A, ix.c], operands=(o[A, ix.c], l[A]),
                    sources=(At(FORMS["o"], dict(end, c=ix.c)), At(FORMS["l"], dict(end, c=P.d + 1))))

    def where(P, A, B, u, c):
        la, lb = lay.owner(P, A - 1), lay.owner(P, B - 1)
        return dict(s=mod(la - lb, P.m) + 1, i=lay.slot(P, A - 1) + 1, u=u, b=lay.slot(P, B - 1) + 1,
                    c=c, l=la + 1)

    inverse = {"w1": lambda P, key_: where(P, key_[0], key_[1], 1, key_[2]),
               "mx": lambda P, key_: where(P, key_[0], key_[1], 1, P.d + 1),
               "o": lambda P, key_: where(P, key_[0], key_[2], 2, key_[1]),
               "l": lambda P, key_: where(P, key_[0], key_[1], 2, P.d + 1)}

    def home(P, ref):
        return lay.owner(P, ref.idx[0] - 1) + 1

    phases = (Phase("ring", (Loop("s", 1, "m", ring_step=True), Loop("i", 1, "k"), Loop("u", 1, 2), Loop("b", 1, "k"),
                             Loop("c", 1, lambda P, ix: P.d + 1)), step, inverse=inverse,
                    doc="PE l at ring step s, query slot i: the block's scores and running max, then "
                        "its terms of the rescaled sums"),
              Phase("out", (Loop("i", 1, "k"), Loop("c", 1, "d")), divide,
                    inverse=lambda P, key_: dict(i=lay.slot(P, key_[0] - 1) + 1, c=key_[1],
                                                 l=lay.owner(P, key_[0] - 1) + 1),
                    doc="y[A, c] = o[A, c] / l[A] on A's PE"))
    pairs = "n*(n + 1)/2" if cp.causal else "n**2"
    return Schedule(cp.name, problem, phases, home=home, square=False, placement=home,
                    doc=f"{cp.doc}; the whole forward in one ring pass, K and V travelling together, "
                        "online softmax folding each block",
                    notes={"claims": {"cycles": "2*n**2*(d + 1)/m + n*d/m", "MAC": f"({pairs})*d",
                                      "MAX": pairs, "EAC": f"({pairs})*(d + 1)", "NORM": "n*d"}},
                    requires=cp.requires, derived=cp.derived, stays=_forward_stays(cp))


def _forward_stays(cp: ContextParallel) -> dict:
    """The forward's stay hints: the non-causal one's (STAYS); the causal ones' (contiguous, striped,
    zigzag), whose peaks are long to derive, on request (`prove --exact-peak`;
    schedules/causal_stays.py)."""
    if not cp.causal:
        return STAYS
    return {**causal_stays(cp.layout.readings, FORMS), "on_request": True}


FORWARDS = {name: ring_forward(cp) for name, cp in SCHEDULES.items()}
