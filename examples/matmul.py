"""Matrix-matrix multiplication c = a·bᵀ on a ring of m PEs (docs/tutorial.md, step 4).

The sum c[A, B] = Σ_C a[A, C]·b[B, C] is phase 1 of Algorithm 1 (w1 = q·kᵀ) under other names, so
this schedule is that phase with its arrays renamed by `derive`: no formula is copied, and its
witnesses (first, prev, sources, inverse) come along unchanged.
"""

from ringproof import ALGO1_GENERAL, ANY_D, At, Move, Schedule, computation

MATMUL = computation("matmul", {"a": "n d", "b": "n d", "c": "n n"}, ["c[A, B] += a[A, C] * b[B, C]"])
a, b = MATMUL.inputs
c = MATMUL.output
NAMES = {"w1": c, "q": a, "k": b}


def renamed(ref):
    return NAMES[ref.array.name][ref.idx]


PRODUCT = ALGO1_GENERAL.phase("phase1").derive(
    "product",
    target=lambda P, ix, st: renamed(st.target),
    operands=lambda P, ix, st: tuple(renamed(r) for r in st.operands),
    send=lambda P, ix, st: Move(renamed(st.send.datum), when=st.send.when),
    prev=lambda P, ix, st: At("product", st.prev.idx),          # the phase has a new name
)

SCHEDULE = Schedule("matmul", MATMUL, (PRODUCT,), home=ALGO1_GENERAL.home, shape=ANY_D,
                    notes={"claims": {"cycles": "n**2*d/m", "MAC": "n**2*d"}})
