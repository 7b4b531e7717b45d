"""Matrix-vector multiplication (examples/matvec.py, d = n) whose rows phase idles K extra cycles
per block, K = K(n) the least K ≥ 1 with K(K+3)/2 ≥ n: a derived size with no closed form in the
DSL's operators, declared once by its characterising condition (`Least`) and used in a loop bound and
in the cycle claim. The prover knows K only by that condition (docs/dsl.md).
"""

from ringproof import HOME, MAC, At, Least, Loop, Move, Phase, Schedule, Step, computation, div, eq, ge, le, lt, mod, wrap

MATVEC = computation("matvec", {"a": "n n", "x": "n", "y": "n"}, ["y[A] += a[A, C] * x[C]"])
a, x = MATVEC.inputs
y = MATVEC.output


def step(P, ix):
    A, C = mod(ix.l - ix.j, P.m) + (ix.i - 1) * P.m + 1, ix.l + div(ix.j - 1, P.m) * P.m
    return Step(pe=ix.l, op=MAC, target=y[A], operands=(a[A, C], x[C]),
                guard=le(ix.j, P.n),                       # steps n + 1 .. n + K idle
                send=Move(y[A], when=lt(ix.j, P.n)),
                first=eq(ix.j, 1),
                prev=At("rows", dict(i=ix.i, j=ix.j - 1, l=wrap(ix.l - 1, P.m))),
                sources=(HOME, HOME))


def inverse(P, key):
    A, C = key
    l = mod(C - 1, P.m) + 1
    return dict(i=div(A - 1, P.m) + 1, j=div(C - 1, P.m) * P.m + mod(l - A, P.m) + 1, l=l)


ROWS = Phase("rows", (Loop("i", 1, "k"), Loop("j", 1, lambda P, ix: P.n + P.K)), step, inverse=inverse)

SCHEDULE = Schedule("matvec-padded", MATVEC, (ROWS,), home=lambda P, ref: mod(ref.idx[-1] - 1, P.m) + 1,
                    derived={"K": Least(lambda P, K: ge(K * (K + 3), 2 * P.n), hi=lambda P: P.n)},
                    notes={"claims": {"cycles": "n*(n + K)/m", "MAC": "n**2"}})
