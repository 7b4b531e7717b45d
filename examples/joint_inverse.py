"""One array's terms split over two phases, covered exactly once by a joint inverse.

Matrix-vector y = a·x as in examples/matvec.py, its row blocks split between two phases that run
one after the other: `top` does block 1 (rows 1..m), `rest` blocks 2..k. Neither phase's own
inverse can name every term of y; the schedule's joint inverse `inverses={"y": ...}` says, for each
term, which phase and which iteration does it (an `Either` whose condition splits the terms). The
prover checks that no term is done by both phases and that every term is done where the joint
inverse says, so every term exactly once, for every n.
"""

from ringproof import ANY_D, HOME, MAC, At, Either, Loop, Move, Phase, Schedule, Step, computation, div, eq, le, mod, ne, wrap

MATVEC = computation("matvec", {"a": "n d", "x": "d", "y": "n"}, ["y[A] += a[A, C] * x[C]"])
a, x = MATVEC.inputs
y = MATVEC.output


def rows(name):
    def step(P, ix):
        A = mod(ix.l - ix.j, P.m) + (ix.i - 1) * P.m + 1      # the row whose sum is on PE l
        C = ix.l + div(ix.j - 1, P.m) * P.m                   # the column PE l holds
        return Step(pe=ix.l, op=MAC, target=y[A], operands=(a[A, C], x[C]),
                    send=Move(y[A], when=ne(ix.j, P.d)), first=eq(ix.j, 1),
                    prev=At(name, dict(i=ix.i, j=ix.j - 1, l=wrap(ix.l - 1, P.m))), sources=(HOME, HOME))
    return step


def at(P, key, phase):
    A, C = key
    l = mod(C - 1, P.m) + 1
    return At(phase, dict(i=div(A - 1, P.m) + 1, j=div(C - 1, P.m) * P.m + mod(l - A, P.m) + 1, l=l))


def joint(P, key, top_rows=lambda P: P.m):
    """The joint inverse of y: rows 1..m are top's, the others rest's."""
    return Either(le(key[0], top_rows(P)), at(P, key, "top"), at(P, key, "rest"))


def home(P, ref):
    return mod(ref.idx[-1] - 1, P.m) + 1


TOP = Phase("top", (Loop("i", 1, 1), Loop("j", 1, "d")), rows("top"))
REST = Phase("rest", (Loop("i", 2, "k"), Loop("j", 1, "d")), rows("rest"))
SCHEDULE = Schedule("joint-inverse", MATVEC, (TOP, REST), home=home, shape=ANY_D, inverses={"y": joint},
                    notes={"claims": {"cycles": "n*d/m", "MAC": "n*d"}})
