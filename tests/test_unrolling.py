"""The unrolling model against brute-force execution of small loop nests, and the SU selection."""

import itertools
import math
import random
from fractions import Fraction

import numpy as np
import pytest

from ringproof.model.unrolling.mobilevit import mobilevit_s
from ringproof.model.unrolling.utilization import (
    LOOPS, MOVING, Layer, Memory, SpatialUnrolling, best_pair, best_single, bits_needed, conv, depthwise,
    enumerate_sus, evaluate_layer, innermost_options, latency_matrix, matmul, network_macs, pe_utilization, plan,
    temporal_utilization, temporal_utilization_for,
)
from ringproof.errors import BadInput


def simulate(layer: Layer, su: SpatialUnrolling, inputs, weights):
    """Run the nest cycle by cycle: each cycle every PE does O += I * W for its unrolled indices,
    or idles when an index falls outside its loop bound. Returns outputs, useful MACs and cycles."""
    G, K, C, OX, OY, FX, FY = layer.bounds
    s = layer.stride
    out = np.zeros((G, K, OX, OY), dtype=np.int64)
    steps = [range(-(-d // u)) for d, u in zip(layer.bounds, su.factors)]
    lanes = list(itertools.product(*[range(u) for u in su.factors]))
    useful = cycles = 0
    for tile in itertools.product(*steps):
        cycles += 1
        for lane in lanes:
            g, k, c, ox, oy, fx, fy = (t * u + l for t, u, l in zip(tile, su.factors, lane))
            if g < G and k < K and c < C and ox < OX and oy < OY and fx < FX and fy < FY:
                out[g, k, ox, oy] += inputs[g, c, s * ox + fx, s * oy + fy] * weights[g, k, c, fx, fy]
                useful += 1
    return out, useful, cycles


def reference(layer: Layer, inputs, weights):
    G, K, C, OX, OY, FX, FY = layer.bounds
    s = layer.stride
    out = np.zeros((G, K, OX, OY), dtype=np.int64)
    for fx, fy in itertools.product(range(FX), range(FY)):
        patch = inputs[:, :, fx:fx + s * OX:s, fy:fy + s * OY:s]  # (G, C, OX, OY)
        out += np.einsum("gcxy,gkc->gkxy", patch, weights[:, :, :, fx, fy])
    return out


def operands(layer: Layer, rng):
    G, K, C, OX, OY, FX, FY = layer.bounds
    s = layer.stride
    inputs = rng.integers(-3, 4, size=(G, C, s * (OX - 1) + FX, s * (OY - 1) + FY))
    return inputs, rng.integers(-3, 4, size=(G, K, C, FX, FY))


def random_layer(rng: random.Random) -> Layer:
    kind = rng.choice(["conv", "depthwise", "matmul"])
    if kind == "depthwise":
        return depthwise("dw", rng.randint(1, 4), rng.randint(1, 5), rng.randint(1, 5), rng.randint(1, 3),
                         rng.randint(1, 3), stride=rng.randint(1, 2))
    if kind == "matmul":
        return matmul("mm", rng.randint(1, 3) ** 2, rng.randint(1, 4), rng.randint(1, 4), heads=rng.randint(1, 3))
    return conv("cv", rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 5), rng.randint(1, 5),
                rng.randint(1, 3), rng.randint(1, 3), stride=rng.randint(1, 2))


def random_su(rng: random.Random, nb_pes: int) -> SpatialUnrolling:
    return rng.choice(enumerate_sus(nb_pes, prune=False))


@pytest.mark.parametrize("seed", range(40))
def test_pe_utilization_matches_cycle_by_cycle_execution(seed):
    rng = random.Random(seed)
    layer, su = random_layer(rng), random_su(rng, rng.choice([2, 4, 6, 8, 12]))
    inputs, weights = operands(layer, np.random.default_rng(seed))
    out, useful, cycles = simulate(layer, su, inputs, weights)
    assert np.array_equal(out, reference(layer, inputs, weights))  # every MAC done exactly once
    assert useful == layer.macs
    assert pe_utilization(layer, su) == Fraction(useful, su.nb_pes * cycles)
    assert evaluate_layer(layer, su, Memory(10**9, 10**9, 10**9)).cycles == cycles  # ample bandwidth: no stalls


def test_fig1_example_runs_at_full_pe_utilization():
    layer = conv("fig1", K=32, C=8, Ox=32, Oy=32)  # 'for k = 0:4' with K_u = 8; C = C_u = 8
    su = SpatialUnrolling.of(C=8, K=8)
    assert pe_utilization(layer, su) == 1
    assert evaluate_layer(layer, su, Memory(10**9, 10**9, 10**9)).cycles == 4 * 32 * 32 * 3 * 3


def test_matmul_cast_as_grouped_convolution_computes_the_products():
    rng = np.random.default_rng(7)
    H, P, Q, R = 3, 4, 5, 2
    a, b = rng.integers(-3, 4, size=(H, P, Q)), rng.integers(-3, 4, size=(H, Q, R))
    layer = matmul("mm", P, Q, R, heads=H)
    side = layer.Ox
    inputs = a.reshape(H, side, side, Q).transpose(0, 3, 1, 2)  # pixel (x, y) is row x * side + y
    weights = b.transpose(0, 2, 1)[..., None, None]
    out, _, _ = simulate(layer, SpatialUnrolling.of(G=2, K=2, Ox=2), inputs, weights)
    assert np.array_equal(out.transpose(0, 2, 3, 1).reshape(H, P, R), a @ b)
    assert layer.macs == H * P * Q * R


def brute_temporal(layer: Layer, su: SpatialUnrolling, memory: Memory, order) -> Fraction:
    """Steps over cycles of the temporal nest in `order` (outer to inner): a step loads every operand
    whose tile changed (all three on the first step), taking max(1, bits / bandwidth) cycles."""
    deps = {"W": {"G", "K", "C", "Fx", "Fy"}, "I": {"G", "C", "Ox", "Oy", "Fx", "Fy"}, "O": {"G", "K", "Ox", "Oy"}}
    need = bits_needed(layer, su, memory.precision)
    bw = {"W": memory.bw_w, "I": memory.bw_i, "O": memory.bw_o}
    steps = dict(zip(LOOPS, (-(-d // u) for d, u in zip(layer.bounds, su.factors))))
    previous, cycles, count = None, Fraction(0), 0
    for index in itertools.product(*[range(steps[loop]) for loop in order]):
        now = dict(zip(order, index))
        moved = [x for x in deps if previous is None or any(now[d] != previous[d] for d in deps[x])]
        cycles += max([Fraction(1)] + [Fraction(need[x], bw[x]) for x in moved])
        previous, count = now, count + 1
    return Fraction(count) / cycles


def orders_with_innermost(layer, su, innermost):
    steps = dict(zip(LOOPS, (-(-d // u) for d, u in zip(layer.bounds, su.factors))))
    inner = max(("Ox", "Oy"), key=lambda x: steps[x]) if innermost == "Ox/Oy" else innermost
    rest = [loop for loop in LOOPS if loop != inner]
    return rest + [inner]


@pytest.mark.parametrize("seed", range(60))
def test_temporal_formula_bounds_brute_force_and_is_exact_when_stationary_operands_fit(seed):
    rng = random.Random(seed)
    layer, su = random_layer(rng), random_su(rng, rng.choice([2, 4, 8, 12]))
    memory = Memory(*(rng.choice([8, 16, 32, 64, 128, 256]) for _ in range(3)), precision=rng.choice([1, 8]))
    need = bits_needed(layer, su, memory.precision)
    bw = {"W": memory.bw_w, "I": memory.bw_i, "O": memory.bw_o}
    for innermost in innermost_options(layer, su):
        formula = temporal_utilization_for(layer, su, memory, innermost)
        brute = brute_temporal(layer, su, memory, orders_with_innermost(layer, su, innermost))
        assert 0 < brute <= formula <= 1
        stationary = set(need) - set(MOVING[innermost])
        if all(need[x] <= bw[x] for x in stationary):
            assert brute == formula


def test_temporal_formula_is_the_limit_of_long_innermost_loops():
    memory = Memory(64, 64, 16)  # the stationary output is the costliest load of this SU
    su = SpatialUnrolling.of(C=4, K=4)
    formula = temporal_utilization_for(conv("c", 4, 4, 1, 1, 1, 1), su, memory, "C")
    gaps = []
    for c in (8, 32, 128):
        layer = conv("c", K=8, C=c, Ox=1, Oy=1, Fx=1, Fy=1)
        gaps.append(formula - brute_temporal(layer, su, memory, ["G", "Ox", "Oy", "Fx", "Fy", "K", "C"]))
    assert gaps[0] > gaps[1] > gaps[2] > 0


def test_temporal_choice_is_the_best_option():
    layer, su, memory = conv("c", 64, 64, 16, 16, 1, 1), SpatialUnrolling.of(K=16, C=2, Ox=4, Oy=2), Memory(256, 128, 512)
    value, loop = temporal_utilization(layer, su, memory)
    assert value == max(temporal_utilization_for(layer, su, memory, x) for x in innermost_options(layer, su))
    assert value == temporal_utilization_for(layer, su, memory, loop)


def test_single_step_layer_loads_every_operand_once():
    layer, su = conv("tiny", 2, 2, 1, 1, 1, 1), SpatialUnrolling.of(K=2, C=2)
    assert innermost_options(layer, su) == ()
    assert temporal_utilization(layer, su, Memory(8, 8, 8, precision=8)) == (Fraction(8, 32), "none")  # W and O: 32 bits at 8 per cycle


@pytest.mark.parametrize("nb_pes", [1, 6, 16, 64])
def test_enumeration_covers_the_array_exactly(nb_pes):
    full = enumerate_sus(nb_pes, prune=False)
    assert all(su.nb_pes == nb_pes for su in full)
    assert len(set(full)) == len(full)
    pruned = enumerate_sus(nb_pes)
    assert set(pruned) <= set(full)
    assert all(su["Ox"] >= su["Oy"] for su in pruned)


def test_enumeration_count_is_the_number_of_ordered_factorizations():
    # 2^k into 7 ordered factors: C(k + 6, 6); the pruned space fixes the Ox/Oy split: C(k + 5, 5)
    for k in range(0, 6):
        assert len(enumerate_sus(2**k, prune=False)) == math.comb(k + 6, 6)
        assert len(enumerate_sus(2**k)) == math.comb(k + 5, 5)


def test_paper_sus_are_in_the_space():
    table_1 = [(256, dict(K=8, Ox=8, Oy=4)), (256, dict(K=4, Ox=8, Oy=8)),
               (8192, dict(C=2, K=16, Ox=16, Oy=16)), (8192, dict(C=4, K=8, Ox=16, Oy=16))]
    table_3 = [(8192, dict(K=16, Fx=2, Fy=2, Ox=16, Oy=8)), (8192, dict(C=64, K=2, Ox=8, Oy=8)),
               (8192, dict(C=2, K=4, Fx=4, Fy=4, Ox=8, Oy=8))]
    for nb_pes, factors in table_1 + table_3:
        su = SpatialUnrolling.of(**factors)
        assert su in enumerate_sus(nb_pes, prune=False)
        assert su in enumerate_sus(nb_pes) or su["Fx"] != su["Fy"]


def square_layers():
    return [conv("a", 8, 4, 16, 16, 3, 3), conv("b", 16, 16, 16, 16, 1, 1), depthwise("c", 32, 16, 16),
            matmul("d", 256, 8, 4, heads=4)]


@pytest.mark.parametrize("nb_pes", [8, 16])
def test_pruning_loses_no_optimum_when_the_splits_divide_the_layers(nb_pes):
    layers, memory = square_layers(), Memory(64, 64, 128)
    full, pruned = enumerate_sus(nb_pes, prune=False), enumerate_sus(nb_pes)
    assert best_single(layers, pruned, memory).latency == best_single(layers, full, memory).latency
    assert best_pair(layers, pruned, memory).latency == best_pair(layers, full, memory).latency


def exhaustive_pair(layers, sus, memory):
    m = latency_matrix(layers, sus, memory)
    return min(np.minimum(m[i], m[j]).sum() for i, j in itertools.combinations(range(len(sus)), 2))


@pytest.mark.parametrize("nb_pes,bw", [(4, 64), (8, 2048), (12, 128), (16, 256)])
def test_best_pair_is_optimal_over_the_enumerated_space(nb_pes, bw):
    layers, memory = mobilevit_s()[::3], Memory(bw, bw, bw)
    sus = enumerate_sus(nb_pes, prune=False)
    pair = best_pair(layers, sus, memory)
    assert pair.latency == pytest.approx(exhaustive_pair(layers, sus, memory), rel=1e-12)
    m = latency_matrix(layers, sus, memory)
    assert pair.latency == pytest.approx(np.minimum(*m[[sus.index(s) for s in pair.sus]]).sum(), rel=1e-12)
    assert best_single(layers, sus, memory).latency == m.sum(axis=1).min()


def test_latency_matrix_agrees_with_exact_evaluation():
    layers, memory = mobilevit_s(), Memory(1024, 512, 2048)
    sus = random.Random(3).sample(enumerate_sus(256, prune=False), 25)
    m = latency_matrix(layers, sus, memory)
    exact = np.array([[float(evaluate_layer(layer, su, memory).cycles) for layer in layers] for su in sus])
    assert np.allclose(m, exact, rtol=1e-12)


def test_gain_of_two_sus_grows_with_the_array():
    layers, memory = mobilevit_s(), Memory()
    small, large = plan(layers, 256, memory), plan(layers, 8192, memory)
    assert 1 <= small.gain < large.gain
    assert small.pair.latency <= small.single.latency


def test_pruning_loses_the_best_single_su_on_mobilevit_at_8192_pes():
    layers, memory = mobilevit_s(), Memory()
    assert plan(layers, 8192, memory, prune=True).single.latency > plan(layers, 8192, memory).single.latency


def test_mobilevit_s_table():
    layers = mobilevit_s()
    assert 1.9e9 < network_macs(layers) < 2.1e9  # the paper reports 2.0 G (multiply-adds) for MobileViT-S
    assert [layer.K for layer in layers if layer.name.endswith("project")] == [32, 64, 64, 96, 128, 160]
    assert {layer.kind for layer in layers} == {"conv", "pointwise", "depthwise", "matmul"}
    assert all(layer.Ox == layer.Oy and layer.Fx == layer.Fy for layer in layers)  # pruning's condition


@pytest.mark.parametrize("make,match", [
    (lambda: conv("x", 0, 1, 1, 1), "x.K=0"),
    (lambda: matmul("m", 12, 2, 2), "square P"),
    (lambda: Layer("d", "depthwise", G=2, K=2), "K = C = 1"),
    (lambda: Layer("z", "fc"), "kind"),
    (lambda: SpatialUnrolling((1, 2)), "7 factors"),
    (lambda: SpatialUnrolling.of(Z=2), "loops among"),
    (lambda: Memory(bw_i=0), "bw_i=0"),
    (lambda: enumerate_sus(2.5), "nb_pes=2.5"),
])
def test_bad_arguments_name_argument_and_value(make, match):
    with pytest.raises(BadInput, match=match):
        make()
