"""A user's all-gather schedule file: Llama 3 context parallelism over packed documents, its
segments written out as a reader of `llama3_flash_attn_prepare_cu_seqlens` would write them.

`prove examples/allgather_segments.py` proves it for every m, T and lengths vector, as
`prove llama3-varlen` is proved (docs/context-parallel.md, "Your own all-gather schedule");
`prove simulate examples/allgather_segments.py --lengths 4,8,4 -m 2` runs one packing. Rank r of m
holds the tokens [lo, hi) = [rS, (r + 1)S); a document C (its first token C.c, length C.L)
meeting the rank is one segment: its queries are the document's tokens inside the rank, its keys
run from the document's first token to the segment's last query. Each formula takes the rank's
record R (R.r, R.lo, R.hi) and the document's C (C.c, C.L, C.i), and is written with the DSL
helpers, so it runs on ints and on the prover's symbols alike. Change one (say, `k_lo` returning
R.lo: the keys from the rank's first token) and `prove` refutes it with the smallest packing.
"""

from ringproof import AllGather, and_, ite, le, lt


def first_query(R, C):
    """cu_seqlens_q[0] = 0: a document that began on an earlier rank starts at the rank's first token."""
    return ite(le(R.lo, C.c), C.c, R.lo)


def query_end(R, C):
    """cu_seqlens_q[-1] = S: a document that goes on to the next rank stops at the rank's end."""
    end = C.c + C.L
    return ite(le(end, R.hi), end, R.hi)


def first_key(R, C):
    """local_k_slice from the document's first token, wherever it lies."""
    return C.c


def meets(R, C):
    """The documents of cu_seqlens[left : right + 1]: those with a token in [lo, hi)."""
    return and_(lt(C.c, R.hi), lt(R.lo, C.c + C.L))


SCHEDULE = AllGather("my-llama3-varlen", False,
                     "packed documents on all-gather context parallelism, segments written out",
                     meets=meets, q_lo=first_query, q_hi=query_end, k_lo=first_key, k_hi=query_end)
