"""Ring Attention's contiguous layout: the scores w1 = q·kᵀ with each PE holding one block of tokens.

PE l holds tokens (l − 1)·k + 1 .. l·k of q and k (k = n/m). Its rows of q stay; the key blocks
travel the ring: in ring step s PE l works on key block ((l − s) mod m) + 1, which it received from
PE l − 1 during step s − 1 (PE l − 1 copies each key element on while it uses it for its first row).
The running sums w1[A, B] stay on the PE that owns row A. Valid for every n with m | n.
"""

from ringproof import HOME, MAC, At, Copy, Either, Loop, Phase, Schedule, Step, computation, div, eq, mod, wrap

SCORES = computation("scores", {"q": "n d", "k": "n d", "w1": "n n"}, ["w1[A, B] += q[A, C] * k[B, C]"])
q, kk = SCORES.inputs
w1 = SCORES.output


def row(P, ix):
    """Row A: token i of PE l's own block."""
    return (ix.l - 1) * P.k + ix.i


def key(P, ix):
    """Key B: token b of the block PE l holds in ring step s."""
    return mod(ix.l - ix.s, P.m) * P.k + ix.b


def step(P, ix):
    A, B = row(P, ix), key(P, ix)
    return Step(pe=ix.l, op=MAC, target=w1[A, B], operands=(q[A, ix.c], kk[B, ix.c]),
                send=Copy(kk[B, ix.c], when=eq(ix.i, 1)),      # pass the key block on
                first=eq(ix.c, 1),
                prev=At("scores", dict(s=ix.s, i=ix.i, b=ix.b, c=ix.c - 1, l=ix.l)),
                sources=(HOME, Either(eq(ix.i, 1),
                                      Either(eq(ix.s, 1), HOME,
                                             At("scores", dict(s=ix.s - 1, i=1, b=ix.b, c=ix.c,
                                                               l=wrap(ix.l - 1, P.m)))),
                                      At("scores", dict(s=ix.s, i=1, b=ix.b, c=ix.c, l=ix.l)))))


def inverse(P, key):
    """The iteration that adds q[A, C]·k[B, C]."""
    A, B, C = key
    l = div(A - 1, P.k) + 1
    return dict(s=mod(l - div(B - 1, P.k) - 1, P.m) + 1, i=mod(A - 1, P.k) + 1,
                b=mod(B - 1, P.k) + 1, c=C, l=l)


def home(P, ref):
    """Token A of q and k on PE ((A − 1) div k) + 1: contiguous blocks."""
    return div(ref.idx[0] - 1, P.k) + 1


PHASE = Phase("scores", (Loop("s", 1, "m"), Loop("i", 1, "k"), Loop("b", 1, "k"), Loop("c", 1, "d")),
              step, inverse=inverse)

SCHEDULE = Schedule("ring-contiguous", SCORES, (PHASE,), home=home,
                    notes={"claims": {"cycles": "n**3/m", "MAC": "n**3"}})
