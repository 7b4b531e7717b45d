"""Figures for issue 7: 1-SU vs 2-SU gain on MobileViT-S, pruning loss, search and proof times, and
(if `zigzag-dse` is installed) a cross-check of PE utilization against ZigZag. Prints, never asserts.

    python benchmarks/bench_unroll.py [--no-zigzag]
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time

from ringproof.model.unrolling.mobilevit import mobilevit_s
from ringproof.model.unrolling.utilization import Memory, SpatialUnrolling, network_macs, pe_utilization, plan
from ringproof.proofs.unrolling.facts import FACTS, MISREADINGS, prove

# (PEs, bits/cycle of each operand memory): Table I's arrays and Table II's architectures 1-4
CONFIGS = [(256, Memory(128, 128, 128)), (256, Memory(512, 512, 512)), (256, Memory()),
           (8192, Memory()), (8192, Memory(8192, 8192, 8192)),
           (8192, Memory(4096, 1024, 1024)), (8192, Memory(1024, 4096, 1024)), (8192, Memory(1024, 1024, 4096))]


def gains() -> None:
    layers = mobilevit_s()
    print(f"MobileViT-S: {len(layers)} distinct layers, {network_macs(layers) / 1e9:.3f} G MACs\n")
    print(f"{'PEs':>5} {'BW W/I/O':>15} {'space':>6} {'SUs':>6} {'s':>5} {'1-SU util':>9} {'2-SU util':>9} "
          f"{'gain_2su':>8}  best 1 SU | best 2 SUs")
    for nb_pes, memory in CONFIGS:
        for prune in (False, True):
            start = time.perf_counter()
            p = plan(layers, nb_pes, memory, prune)
            seconds = time.perf_counter() - start
            util = [network_macs(layers) / (nb_pes * s.latency) for s in (p.single, p.pair)]
            bw = f"{memory.bw_w}/{memory.bw_i}/{memory.bw_o}"
            print(f"{nb_pes:>5} {bw:>15} {'pruned' if prune else 'all':>6} {p.candidates:>6} {seconds:5.2f} "
                  f"{util[0]:9.3f} {util[1]:9.3f} {p.gain:8.3f}  {p.single.sus[0]} | "
                  f"{' + '.join(map(str, p.pair.sus))}")


def facts() -> None:
    print("\nZ3 facts (seconds):")
    for fact in FACTS + MISREADINGS:
        r = prove(fact)
        print(f"  {r.name:34} {r.verdict.value:8} {r.seconds:6.2f}  {dict(r.counterexample) or ''}")


ZIGZAG_LAYERS = ["stem", "s1.mv2.expand", "s3.mvit.tf.qk", "s5.mvit.tf.qkv", "s5.mvit.fuse3x3", "head.linear"]
ZIGZAG_SUS = [("K", "C"), ("K", "OX"), ("OX", "OY")]  # each on a 32 x 32 array (D1, D2)
OURS = {"K": "K", "C": "C", "OX": "Ox", "OY": "Oy"}


def zigzag_check() -> None:
    """PE utilization of ZigZag's cost model (mac_spatial_utilization) against ours, tpu_like 32x32."""
    try:
        import zigzag
        from zigzag.api import get_hardware_performance_zigzag
    except ImportError:
        print("\nZigZag cross-check skipped: zigzag-dse is not installed")
        return
    logging.disable(logging.CRITICAL)
    hardware = os.path.join(os.path.dirname(zigzag.__file__), "inputs", "hardware", "tpu_like.yaml")
    layers = {layer.name: layer for layer in mobilevit_s()}
    print("\nPE utilization, ours vs ZigZag (tpu_like, 32 x 32 PEs; G of a matmul run as G separate layers):")
    with tempfile.TemporaryDirectory() as tmp:
        for d1, d2 in ZIGZAG_SUS:
            mapping = os.path.join(tmp, f"{d1}{d2}.yaml")
            with open(mapping, "w") as f:
                f.write(f"- name: default\n  spatial_mapping:\n    D1:\n      - {d1}, 32\n    D2:\n      - {d2}, 32\n"
                        "  memory_operand_links:\n    O: O\n    W: I2\n    I: I1\n")
            workload = [_zigzag_layer(i, layers[name]) for i, name in enumerate(ZIGZAG_LAYERS)]
            _, _, cmes = get_hardware_performance_zigzag(
                workload, hardware, mapping, opt="latency", dump_folder=os.path.join(tmp, "out"),
                lpf_limit=4, loma_show_progress_bar=False)
            su = SpatialUnrolling.of(**{OURS[d1]: 32, OURS[d2]: 32})
            for name, (cme, _) in zip(ZIGZAG_LAYERS, cmes[0][1]):
                ours = float(pe_utilization(layers[name], su))
                print(f"  {str(su):10} {name:18} ours {ours:.4f}  zigzag {cme.mac_spatial_utilization:.4f}")


def _zigzag_layer(i, layer) -> dict:
    s = layer.stride
    return {"id": i, "name": layer.name, "operator_type": "Conv",
            "equation": "O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]",
            "dimension_relations": [f"ix={s}*ox+1*fx", f"iy={s}*oy+1*fy"],
            "loop_dims": ["B", "K", "C", "OY", "OX", "FY", "FX"],
            "loop_sizes": [1, layer.K, layer.C, layer.Oy, layer.Ox, layer.Fy, layer.Fx],
            "operand_precision": {"W": 8, "I": 8, "O": 16, "O_final": 8},
            "operand_source": {"I": i - 1} if i else {}}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-zigzag", action="store_true", help="skip the ZigZag cross-check")
    args = parser.parse_args()
    gains()
    facts()
    if not args.no_zigzag:
        zigzag_check()
