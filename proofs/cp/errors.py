"""The numerical error `prove conform` reports: an output's or gradient's largest |difference| from
the float64 reference, relative to the quantity's largest |value| or, where that is below `FLOOR`,
to `FLOOR`.

Why the floor: a quantity that is zero in exact arithmetic (dq and dk at n = 1, the softmax over a
single key having zero gradient) has a reference of 0 or of rounding noise, and a difference
relative to it means nothing (float32 noise would read as an error of 1e+291). Against
max(largest |reference|, FLOOR) the error is relative where the quantity is of the inputs' size and
absolute, in units of FLOOR, where it is near zero: `error ≤ tolerance` is numpy.allclose's
|got − ref| ≤ atol + rtol·|ref| with rtol = tolerance and atol = tolerance·FLOOR, the maximum of
the two terms over the quantity instead of their sum per element.
"""

from __future__ import annotations

# The inputs q, k, v, dO are uniform in [−1, 1], so outputs and gradients are of size 0.1 to 1 (an
# output is a convex combination of rows of v); 2^-6 lies below every such quantity at the sizes
# `prove conform` runs, so only a quantity near zero is measured against it.
FLOOR = 2.0 ** -6


def error_scale(largest: float) -> float:
    """What a difference is divided by, for a quantity whose largest |reference value| is `largest`."""
    return max(largest, FLOOR)
