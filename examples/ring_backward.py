"""A backward-like pass with the contiguous layout: dv = pᵀ·g, where the gradient sums travel.

dv[B, C] = Σ_A p[A, B]·g[A, C] (the value gradient of attention: p the probabilities, g the output
gradient). PE l holds the rows (l − 1)·k + 1 .. l·k of p and g. The running sums dv[B, C] of one
key block travel the ring with it: in ring step s PE l adds the terms of its own rows to the sums
of block ((l − s) mod m) + 1 and sends them on. After m steps a block's sums have visited every PE
and the last send — the return hop — brings them home, to the PE that holds block B: `placement`
says so and `ends` names the iteration that sends them there (checked).
"""

from ringproof import HOME, MAC, At, Loop, Move, Phase, Schedule, Step, computation, div, eq, ite, mod, wrap

GRAD = computation("dv", {"p": "n n", "g": "n d", "dv": "n d"}, ["dv[B, C] += p[A, B] * g[A, C]"])
p, g = GRAD.inputs
dv = GRAD.output


def owner(P, A):
    return div(A - 1, P.k) + 1


def step(P, ix):
    A = (ix.l - 1) * P.k + ix.i                          # one of PE l's own rows
    B = mod(ix.l - ix.s, P.m) * P.k + ix.b               # the key block visiting PE l in step s
    first_row = eq(ix.i, 1)
    return Step(pe=ix.l, op=MAC, target=dv[B, ix.c], operands=(p[A, B], g[A, ix.c]),
                send=Move(dv[B, ix.c], when=eq(ix.i, P.k)),       # on to the next PE after its rows
                first=eq(ix.s + ix.i, 2),                       # step 1, first row
                prev=At("dv", dict(s=ite(first_row, ix.s - 1, ix.s), b=ix.b, c=ix.c,
                                   i=ite(first_row, P.k, ix.i - 1),
                                   l=ite(first_row, wrap(ix.l - 1, P.m), ix.l))),
                sources=(HOME, HOME))


def inverse(P, key):
    B, C, A = key
    l = owner(P, A)
    return dict(s=mod(l - owner(P, B), P.m) + 1, b=mod(B - 1, P.k) + 1, c=C, i=mod(A - 1, P.k) + 1, l=l)


def home(P, ref):
    """Rows of p and g on the PE of their block."""
    return owner(P, ref.idx[0])


def placement(P, ref):
    """dv[B, C] must end on the PE that holds block B."""
    return owner(P, ref.idx[0])


def ends(P, ref):
    """The last term of dv[B, C]: ring step m, the last row, on the PE just before B's home."""
    B, C = ref.idx
    return At("dv", dict(s=P.m, b=mod(B - 1, P.k) + 1, c=C, i=P.k, l=wrap(owner(P, B) - 1, P.m)))


PHASE = Phase("dv", (Loop("s", 1, "m"), Loop("b", 1, "k"), Loop("c", 1, "d"), Loop("i", 1, "k")),
              step, inverse=inverse)

SCHEDULE = Schedule("ring-backward", GRAD, (PHASE,), home=home, placement=placement, ends=ends,
                    notes={"claims": {"cycles": "n**3/m", "MAC": "n**3"}})
