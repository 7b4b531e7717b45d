"""Matrix-vector multiplication y = a·x on a ring of m PEs (docs/tutorial.md, step 1).

a is n×d, x has d entries. PE l holds the columns C ≡ l (mod m) of a and the entries x[C]. The
running sum y[A] walks the ring: at step j it is on PE l with (l − j) mod m fixed, and PE l adds the
term of the column it holds in run div(j − 1, m). Block i handles rows (i − 1)·m + 1 .. i·m, all m
PEs busy on m different rows at once. Valid for every n, d with m | n and m | d.
"""

from ringproof import ANY_D, HOME, MAC, At, Loop, Move, Phase, Schedule, Step, computation, div, eq, mod, ne, wrap

MATVEC = computation("matvec", {"a": "n d", "x": "d", "y": "n"}, ["y[A] += a[A, C] * x[C]"])
a, x = MATVEC.inputs
y = MATVEC.output


def row(P, ix):
    """The row whose sum is on PE l at step j of block i: constant along the sum's path."""
    return mod(ix.l - ix.j, P.m) + (ix.i - 1) * P.m + 1


def column(P, ix):
    """The column PE l works on: one it holds (≡ l mod m), a new one every m steps."""
    return ix.l + div(ix.j - 1, P.m) * P.m


def step(P, ix):
    A, C = row(P, ix), column(P, ix)
    return Step(pe=ix.l, op=MAC, target=y[A], operands=(a[A, C], x[C]),
                send=Move(y[A], when=ne(ix.j, P.d)),       # the sum moves on, except at the end
                first=eq(ix.j, 1),                        # the first term starts the sum
                prev=At("rows", dict(i=ix.i, j=ix.j - 1, l=wrap(ix.l - 1, P.m))),
                sources=(HOME, HOME))                     # both operands are held from the start


def inverse(P, key):
    """Coverage witness: the iteration that adds a[A, C]·x[C]."""
    A, C = key
    l = mod(C - 1, P.m) + 1
    return dict(i=div(A - 1, P.m) + 1, j=div(C - 1, P.m) * P.m + mod(l - A, P.m) + 1, l=l)


def home(P, ref):
    """Every input starts on the PE of its column: a[A, C] and x[C] on PE ((C − 1) mod m) + 1."""
    return mod(ref.idx[-1] - 1, P.m) + 1


ROWS = Phase("rows", (Loop("i", 1, "k"), Loop("j", 1, "d")), step, inverse=inverse)

SCHEDULE = Schedule("matvec", MATVEC, (ROWS,), home=home, shape=ANY_D,
                    notes={"claims": {"cycles": "n*d/m", "MAC": "n*d"}})
