"""MobileViT-S (Mehta & Rastegari, arXiv:2110.02178) as a table of loop-nest layers.

Sources of each number are in docs/unrolling.md: the stage table of the paper (input 256x256,
channels 16-32-64-64-96-128-160-640, transformer widths d = 144/192/240 with L = 2/4/3 layers,
2x2 patches, MV2 expansion 4) and our reading of the reference implementation for what the table
leaves open (4 heads, FFN width 2d, expansion applied to the block's input channels).
"""

from __future__ import annotations

from ringproof.model.unrolling.utilization import Layer, conv, depthwise, matmul

EXPANSION = 4  # MV2 expansion of MobileViT-S
HEADS = 4
PATCH = 2  # patch side: a 2x2 patch has 4 pixels, each the start of an independent token sequence
FFN_RATIO = 2


def mv2(name: str, cin: int, cout: int, side_in: int, stride: int, count: int = 1) -> list[Layer]:
    """MobileNetV2 inverted residual: 1x1 expand, 3x3 depthwise (stride), 1x1 project."""
    hidden, side_out = cin * EXPANSION, side_in // stride
    return [
        conv(f"{name}.expand", hidden, cin, side_in, side_in, 1, 1, count=count),
        depthwise(f"{name}.dw", hidden, side_out, side_out, 3, 3, stride=stride, count=count),
        conv(f"{name}.project", cout, hidden, side_out, side_out, 1, 1, count=count),
    ]


def mobilevit_block(name: str, c: int, d: int, depth: int, side: int) -> list[Layer]:
    """Local 3x3 and 1x1 convs, `depth` transformer layers on unfolded 2x2 patches, 1x1 and fusion 3x3.

    Tokens: side^2 pixels in PATCH^2 sequences of N = side^2 / PATCH^2 tokens. Linear layers act on
    every pixel (a 1x1 conv over side x side); attention is HEADS x PATCH^2 independent products
    (grouped 1x1 convs with P = N, as the paper's matmul cast).
    """
    n, head_dim, groups = side * side // (PATCH * PATCH), d // HEADS, HEADS * PATCH * PATCH
    t = f"{name}.tf"
    return [
        conv(f"{name}.local3x3", c, c, side, side, 3, 3),
        conv(f"{name}.local1x1", d, c, side, side, 1, 1),
        conv(f"{t}.qkv", 3 * d, d, side, side, 1, 1, count=depth),
        matmul(f"{t}.qk", n, head_dim, n, heads=groups, count=depth),
        matmul(f"{t}.av", n, n, head_dim, heads=groups, count=depth),
        conv(f"{t}.proj", d, d, side, side, 1, 1, count=depth),
        conv(f"{t}.ffn1", FFN_RATIO * d, d, side, side, 1, 1, count=depth),
        conv(f"{t}.ffn2", d, FFN_RATIO * d, side, side, 1, 1, count=depth),
        conv(f"{name}.fold1x1", c, d, side, side, 1, 1),
        conv(f"{name}.fuse3x3", c, 2 * c, side, side, 3, 3),
    ]


def mobilevit_s() -> list[Layer]:
    """Every MAC layer of MobileViT-S at 256x256 input (pooling, norms and softmax carry no MACs)."""
    return [
        conv("stem", 16, 3, 128, 128, 3, 3, stride=2),
        *mv2("s1.mv2", 16, 32, 128, 1),
        *mv2("s2.mv2down", 32, 64, 128, 2),
        *mv2("s2.mv2", 64, 64, 64, 1, count=2),
        *mv2("s3.mv2down", 64, 96, 64, 2),
        *mobilevit_block("s3.mvit", 96, 144, 2, 32),
        *mv2("s4.mv2down", 96, 128, 32, 2),
        *mobilevit_block("s4.mvit", 128, 192, 4, 16),
        *mv2("s5.mv2down", 128, 160, 16, 2),
        *mobilevit_block("s5.mvit", 160, 240, 3, 8),
        conv("head.conv1x1", 640, 160, 8, 8, 1, 1),
        matmul("head.linear", 1, 640, 1000),
    ]
