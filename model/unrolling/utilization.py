"""Spatial-unrolling utilization model of a PE-array accelerator (Colleman et al., COAC, section II-III).

A layer is the 7-loop nest G, K, C, Ox, Oy, Fx, Fy (K and C counted per group). A spatial unrolling
(SU) gives each loop an unroll factor; their product is the number of PEs. The model gives the PE
utilization, the bandwidth-limited temporal utilization for the innermost temporal loop 'for C',
'for K', 'for Ox/Oy' or 'for G', their product, and the latency (cycles) that follows; then the best
single SU and the best pair of SUs for a network. docs/unrolling.md reconstructs the formulas.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ringproof.errors import BadInput

LOOPS = ("G", "K", "C", "Ox", "Oy", "Fx", "Fy")
LAYER_KINDS = ("conv", "pointwise", "depthwise", "matmul")
INNERMOST = ("C", "K", "Ox/Oy", "G")


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise BadInput(f"expected a positive integer for {name}, but got {name}={value!r}")
    return int(value)


@dataclass(frozen=True)
class Layer:
    """One layer as a loop nest; `count` is how many times the network runs it."""

    name: str
    kind: str
    G: int = 1
    K: int = 1
    C: int = 1
    Ox: int = 1
    Oy: int = 1
    Fx: int = 1
    Fy: int = 1
    stride: int = 1
    count: int = 1

    def __post_init__(self):
        if self.kind not in LAYER_KINDS:
            raise BadInput(f"expected kind in {LAYER_KINDS}, but got kind={self.kind!r} for layer {self.name!r}")
        for field in (*LOOPS, "stride", "count"):
            _positive_int(f"{self.name}.{field}", getattr(self, field))
        if self.kind == "depthwise" and (self.K, self.C) != (1, 1):
            raise BadInput(f"a depthwise layer has K = C = 1, but got K={self.K}, C={self.C} for {self.name!r}")

    @property
    def bounds(self) -> tuple[int, ...]:
        return tuple(getattr(self, loop) for loop in LOOPS)

    @property
    def macs(self) -> int:
        """MACs of one run of the layer."""
        return math.prod(self.bounds)


def conv(name, K, C, Ox, Oy, Fx=3, Fy=3, stride=1, count=1) -> Layer:
    """Classical (or, with Fx = Fy = 1, pointwise) convolution: C input and K output channels."""
    kind = "pointwise" if (Fx, Fy) == (1, 1) else "conv"
    return Layer(name, kind, K=K, C=C, Ox=Ox, Oy=Oy, Fx=Fx, Fy=Fy, stride=stride, count=count)


def depthwise(name, G, Ox, Oy, Fx=3, Fy=3, stride=1, count=1) -> Layer:
    """Depthwise convolution: G channels, each its own group with one input and one output channel."""
    return Layer(name, "depthwise", G=G, Ox=Ox, Oy=Oy, Fx=Fx, Fy=Fy, stride=stride, count=count)


def matmul(name, P, Q, R, heads=1, count=1) -> Layer:
    """H independent products (P x Q)(Q x R) cast as a grouped 1x1 convolution (section II-B2).

    G = H groups of C = Q input and K = R output channels each (H*Q and H*R channels in total), and
    Ox = Oy = sqrt(P), which needs P to be a perfect square.
    """
    P = _positive_int(f"{name}.P", P)
    side = math.isqrt(P)
    if side * side != P:
        raise BadInput(f"the matmul cast needs a square P, but got P={P} for {name!r}")
    return Layer(name, "matmul", G=heads, K=R, C=Q, Ox=side, Oy=side, count=count)


@dataclass(frozen=True)
class SpatialUnrolling:
    """Unroll factors of the 7 loops; the PE array has their product of PEs."""

    factors: tuple[int, ...]

    def __post_init__(self):
        if len(self.factors) != len(LOOPS):
            raise BadInput(f"expected {len(LOOPS)} factors {LOOPS}, but got factors={self.factors!r}")
        for loop, f in zip(LOOPS, self.factors):
            _positive_int(f"{loop}_u", f)

    @classmethod
    def of(cls, **factors: int) -> "SpatialUnrolling":
        unknown = set(factors) - set(LOOPS)
        if unknown:
            raise BadInput(f"expected loops among {LOOPS}, but got {sorted(unknown)}")
        return cls(tuple(factors.get(loop, 1) for loop in LOOPS))

    @property
    def nb_pes(self) -> int:
        return math.prod(self.factors)

    def __getitem__(self, loop: str) -> int:
        return self.factors[LOOPS.index(loop)]

    def as_dict(self) -> dict[str, int]:
        return {loop: f for loop, f in zip(LOOPS, self.factors) if f > 1}

    def __str__(self) -> str:
        return "·".join(f"{loop}{f}" for loop, f in self.as_dict().items()) or "1"


@dataclass(frozen=True)
class Memory:
    """Bits per cycle the lower memory level delivers per operand; p = bits of a weight or input word."""

    bw_w: int = 2048
    bw_i: int = 2048
    bw_o: int = 2048
    precision: int = 8

    def __post_init__(self):
        for field in ("bw_w", "bw_i", "bw_o", "precision"):
            _positive_int(field, getattr(self, field))


def temporal_steps(layer: Layer, su: SpatialUnrolling) -> tuple[int, ...]:
    """Trip count ceil(D / D_u) of each loop left to the temporal unrolling."""
    return tuple(-(-d // u) for d, u in zip(layer.bounds, su.factors))


def ideal_cycles(layer: Layer, su: SpatialUnrolling) -> int:
    """Cycles of one run of the layer without stalls: the product of the temporal trip counts."""
    return math.prod(temporal_steps(layer, su))


def pe_utilization(layer: Layer, su: SpatialUnrolling) -> Fraction:
    """prod D / prod (D_u * ceil(D / D_u)) over the 7 loops: useful MACs over PE-cycles."""
    return Fraction(layer.macs, su.nb_pes * ideal_cycles(layer, su))


def input_footprint(unrolled: int, kernel: int, stride: int) -> int:
    """Input pixels along one axis read by `unrolled` outputs and `kernel` taps: s(O_u - 1) + F_u."""
    return stride * (unrolled - 1) + kernel


def needs(g, k, c, ox, oy, fx, fy, stride, p) -> dict:
    """Bits per cycle of W, I and O when not stationary (outputs at 2p), from SU factors.

    Plain arithmetic, so the same formula serves ints, numpy arrays and Z3 terms.
    """
    return {
        "W": p * g * c * k * fx * fy,
        "I": p * g * c * (stride * (ox - 1) + fx) * (stride * (oy - 1) + fy),
        "O": 2 * p * g * k * ox * oy,
    }


def bits_needed(layer: Layer, su: SpatialUnrolling, precision: int) -> dict[str, int]:
    """`needs` of this SU for this layer's stride."""
    return needs(*su.factors, layer.stride, precision)


# operands that change every cycle when the loop is innermost; the others stay in the PEs
MOVING = {"C": ("W", "I"), "K": ("W", "O"), "Ox/Oy": ("I", "O"), "G": ("W", "I", "O")}


def temporal_utilization_for(layer, su, memory: Memory, innermost: str) -> Fraction:
    """min(1, BW_x / x_needed for each operand x that moves when `innermost` is the inner loop)."""
    if innermost not in MOVING:
        raise BadInput(f"expected innermost in {INNERMOST}, but got innermost={innermost!r}")
    need = bits_needed(layer, su, memory.precision)
    bw = {"W": memory.bw_w, "I": memory.bw_i, "O": memory.bw_o}
    return min([Fraction(1)] + [Fraction(bw[x], need[x]) for x in MOVING[innermost]])


def innermost_options(layer: Layer, su: SpatialUnrolling) -> tuple[str, ...]:
    """Loops among C, K, Ox/Oy, G that have a temporal trip count above 1 for this SU."""
    steps = dict(zip(LOOPS, temporal_steps(layer, su)))
    steps["Ox/Oy"] = max(steps["Ox"], steps["Oy"])
    return tuple(loop for loop in INNERMOST if steps[loop] > 1)


def temporal_utilization(layer: Layer, su: SpatialUnrolling, memory: Memory) -> tuple[Fraction, str]:
    """Best temporal utilization over the innermost-loop options, and that loop.

    A layer that the SU runs in one temporal step loads every operand once ('none', the 'for G' form).
    """
    options = innermost_options(layer, su)
    if not options:
        return temporal_utilization_for(layer, su, memory, "G"), "none"
    return max((temporal_utilization_for(layer, su, memory, loop), loop) for loop in options)


@dataclass(frozen=True)
class LayerResult:
    layer: Layer
    su: SpatialUnrolling
    pe_utilization: Fraction
    temporal_utilization: Fraction
    innermost: str
    cycles: Fraction  # all `count` runs, stalls included

    @property
    def utilization(self) -> Fraction:
        return self.pe_utilization * self.temporal_utilization


def evaluate_layer(layer: Layer, su: SpatialUnrolling, memory: Memory) -> LayerResult:
    """PE, temporal and total utilization of a layer on an SU; cycles = ideal cycles / temporal."""
    temp, loop = temporal_utilization(layer, su, memory)
    cycles = layer.count * ideal_cycles(layer, su) / temp
    return LayerResult(layer, su, pe_utilization(layer, su), temp, loop, cycles)


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small) if d * d != n]


def _factorizations(n: int, parts: int):
    if parts == 1:
        yield (n,)
        return
    for d in _divisors(n):
        for rest in _factorizations(n // d, parts - 1):
            yield (d, *rest)


def enumerate_sus(nb_pes: int, prune: bool = True) -> list[SpatialUnrolling]:
    """Every SU whose factors multiply to nb_pes; with `prune`, the paper's SU pruning (II-B1).

    Pruning keeps, for each choice of G_u, K_u, C_u, Fx_u, Fy_u and Ox_u*Oy_u, the one split with
    Ox_u >= Oy_u of least input footprint (Ox_u + Fx_u - 1)(Oy_u + Fy_u - 1), ties to the squarer.
    """
    nb_pes = _positive_int("nb_pes", nb_pes)
    if not prune:
        return [SpatialUnrolling(f) for f in _factorizations(nb_pes, len(LOOPS))]
    sus = []
    for g, k, c, fx, fy, oxy in _factorizations(nb_pes, 6):
        splits = [(a, oxy // a) for a in _divisors(oxy) if a * a >= oxy]
        a, b = min(splits, key=lambda s: (input_footprint(s[0], fx, 1) * input_footprint(s[1], fy, 1),
                                          s[0] - s[1]))
        sus.append(SpatialUnrolling((g, k, c, a, b, fx, fy)))
    return sus


def latency_matrix(layers, sus, memory: Memory) -> np.ndarray:
    """cycles[s, l] of layer l (all its runs) on SU s, vectorized; agrees with `evaluate_layer`."""
    f = np.array([su.factors for su in sus], dtype=np.int64)  # (S, 7)
    out = np.empty((len(sus), len(layers)))
    p = memory.precision
    bw = {"W": memory.bw_w, "I": memory.bw_i, "O": memory.bw_o}
    g, k, c, ox, oy, fx, fy = f.T
    for j, layer in enumerate(layers):
        d = np.array(layer.bounds, dtype=np.int64)
        steps = -(-d // f)  # (S, 7)
        ideal = steps.prod(axis=1).astype(float)
        need = needs(g, k, c, ox, oy, fx, fy, layer.stride, p)
        ratio = {x: np.minimum(1.0, bw[x] / need[x]) for x in need}
        temp = {loop: np.minimum.reduce([ratio[x] for x in MOVING[loop]]) for loop in MOVING}
        has = {"G": steps[:, 0] > 1, "K": steps[:, 1] > 1, "C": steps[:, 2] > 1,
               "Ox/Oy": (steps[:, 3] > 1) | (steps[:, 4] > 1)}
        best = np.where(has["C"] | has["K"] | has["Ox/Oy"] | has["G"], 0.0, temp["G"])
        for loop in INNERMOST:
            best = np.maximum(best, np.where(has[loop], temp[loop], 0.0))
        out[:, j] = layer.count * ideal / best
    return out


@dataclass(frozen=True)
class Selection:
    """The SUs a design supports, each layer run on its fastest one; latency in cycles."""

    sus: tuple[SpatialUnrolling, ...]
    latency: float
    choice: tuple[int, ...]  # index into `sus` for each layer


def best_single(layers, sus, memory: Memory, matrix: np.ndarray | None = None) -> Selection:
    """The one SU of least total latency over the network."""
    m = latency_matrix(layers, sus, memory) if matrix is None else matrix
    i = int(np.argmin(m.sum(axis=1)))
    return Selection((sus[i],), float(m[i].sum()), (0,) * len(layers))


def best_pair(layers, sus, memory: Memory, matrix: np.ndarray | None = None) -> Selection:
    """The pair of SUs minimizing sum over layers of the faster of the two; exact.

    Candidates with equal latency rows are merged and rows dominated by another row dropped (neither
    changes the optimum); then rows are taken in order of the lower bound sum_l min(row_l, best_l), and
    the search stops once the bound reaches the best pair found.
    """
    m = latency_matrix(layers, sus, memory) if matrix is None else matrix
    if len(sus) < 2:
        raise BadInput(f"a pair of SUs needs at least 2 candidates, but got {len(sus)}")
    rows, first = np.unique(m, axis=0, return_index=True)
    keep = _undominated(rows)
    rows, first = rows[keep], first[keep]
    if len(rows) == 1:  # every candidate is as good as the best: any second SU ties
        i = int(first[0])
        j = next(x for x in range(len(sus)) if x != i)
        return _pair(sus, m, i, j)
    floor = rows.min(axis=0)
    bound = np.minimum(rows, floor).sum(axis=1)
    order = np.argsort(bound, kind="stable")
    best_cost, best_ij = math.inf, None
    for pos, a in enumerate(order):
        if bound[a] >= best_cost:
            break
        rest = order[pos + 1:]
        if len(rest) == 0:
            continue
        costs = np.minimum(rows[rest], rows[a]).sum(axis=1)
        b = int(np.argmin(costs))
        if costs[b] < best_cost:
            best_cost, best_ij = float(costs[b]), (int(first[a]), int(first[rest[b]]))
    return _pair(sus, m, *best_ij)


def _pair(sus, m, i, j) -> Selection:
    both = m[[i, j]]
    return Selection((sus[i], sus[j]), float(both.min(axis=0).sum()), tuple(int(x) for x in both.argmin(axis=0)))


def _undominated(rows: np.ndarray) -> np.ndarray:
    """Mask of rows not dominated (<= everywhere, < somewhere) by another row; rows are distinct."""
    order = np.argsort(rows.sum(axis=1), kind="stable")
    kept: list[int] = []
    for i in order:
        if kept and np.any(np.all(rows[kept] <= rows[i], axis=1)):
            continue
        kept.append(int(i))
    mask = np.zeros(len(rows), dtype=bool)
    mask[kept] = True
    return mask


def network_macs(layers) -> int:
    return sum(layer.macs * layer.count for layer in layers)


@dataclass(frozen=True)
class Plan:
    """Best single SU and best SU pair of a network on one PE array, with per-layer results."""

    nb_pes: int
    candidates: int
    single: Selection
    pair: Selection
    single_layers: tuple[LayerResult, ...]
    pair_layers: tuple[LayerResult, ...]

    @property
    def gain(self) -> float:
        """Latency with 1 SU over latency with 2 SUs (>= 1)."""
        return self.single.latency / self.pair.latency


def plan(layers, nb_pes: int, memory: Memory, prune: bool = False) -> Plan:
    """Choose 1 and 2 SUs for `layers` among all SUs of nb_pes PEs (or the pruned ones)."""
    sus = enumerate_sus(nb_pes, prune)
    if len(sus) < 2:
        raise BadInput(f"an array of nb_pes={nb_pes} PEs has a single SU; choose at least 2 PEs")
    m = latency_matrix(layers, sus, memory)
    single, pair = best_single(layers, sus, memory, m), best_pair(layers, sus, memory, m)
    return Plan(nb_pes, len(sus), single, pair,
                tuple(evaluate_layer(layer, single.sus[0], memory) for layer in layers),
                tuple(evaluate_layer(layer, pair.sus[i], memory) for layer, i in zip(layers, pair.choice)))
