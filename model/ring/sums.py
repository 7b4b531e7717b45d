"""The running-sum rules of the ring machine, checked a block of iterations at a time in cycle order.

A sum's nodes are the iterations that touch it: its terms and the cycles that only forward it. In
time order, the first node must start the sum, no two nodes share a cycle, and each node that does
not restart it is on the PE where the previous one left it (its PE, or the next one if it moved the
sum). Between blocks only one record per datum is kept: its last node and where that left the sum,
and the cycle of its last term; so memory is O(data), whatever the number of iterations.

A node is named by its global iteration number g = (cycle·m + its position in the cycle (the loop
index l's place))·K + its phase's number (K phases), which orders iterations in time as the whole
trace orders them and tells apart the phases of a lock-step group, which share cycles.
"""

from __future__ import annotations

import numpy as np


class RunningSums:
    """The records of every datum's running sum, and the checks of a block's nodes against them."""

    def __init__(self, size: int, m: int, phases: int = 1):
        self.m, self.K = m, phases
        self.last = np.full(size, -1, dtype=np.int64)     # g of the datum's last node so far
        self.left = np.zeros(size, dtype=np.int32)        # PE where that node left the sum
        self.final = np.full(size, -1, dtype=np.int64)    # cycle of its last term (-1: none)

    def block(self, pt, offer, name, k: int = 0) -> None:
        """Check the nodes of a block (whole consecutive cycles, well-formed) against the records and
        update them; `offer(family, key, rule, message, gs)` receives each broken rule, `name(id)`
        names a datum."""
        m, K = self.m, self.K
        if pt.step.target is not None and pt.active.all():   # every iteration is a node
            sel, ids = None, pt.target
        else:
            sel = np.flatnonzero(pt.node & (pt.target >= 0))
            ids = pt.target[sel]
        S = ids.size
        if not S:
            return
        lo = int(ids.min())
        bits = max(S - 1, 1).bit_length()
        wide = (int(ids.max()) - lo + 1) << bits >= 2**31
        key = (ids - lo).astype(np.int64 if wide else np.int32)   # by datum, then time: one sort
        key <<= bits
        key |= np.arange(S, dtype=key.dtype)
        key.sort()
        p = key & ((1 << bits) - 1)
        if sel is not None:
            p = sel[p]
        sid = (key >> bits) + lo                              # datum of each node, p its position
        pe, starts = pt.pe[p], pt.starts[p]
        c0 = int(pt.cycle[0])
        cyc = p // m                                          # cycle − c0: a block is whole cycles
        left = pe + pt.moves[p]                               # where the node leaves the sum
        left[left > m] = 1
        head = np.ones(S, dtype=bool)
        head[1:] = sid[1:] != sid[:-1]
        heads = np.flatnonzero(head)
        before = self.last[sid[heads]]                        # the sums' records, for each first node
        has = np.ones(S, dtype=bool)
        has[heads] = before >= 0
        prev_t = np.empty(S, dtype=cyc.dtype)                 # the previous node of the same sum
        prev_t[1:] = cyc[:-1]
        prev_t[heads] = np.maximum(before // (m * K) - c0, -1)      # (an earlier block: before this one)
        prev_left = np.empty(S, dtype=left.dtype)
        prev_left[1:] = left[:-1]
        prev_left[heads] = self.left[sid[heads]]

        def g(i):                                              # the number of node i or of its previous
            return ((c0 + int(cyc[i])) * m + int(p[i]) % m) * K + k

        def g_prev(i):
            return int(before[np.searchsorted(heads, i)]) if head[i] else g(i - 1)

        for i in np.flatnonzero(~has & ~starts)[:1]:          # sorted by datum: the smallest first
            offer(("unstarted",), (int(sid[i]),), "ring-locality",
                  f"the sum {name(sid[i])} is continued before it is started", (g(i),))
        clash = has & (prev_t == cyc)
        for i in np.flatnonzero(clash)[:1]:
            offer(("twice",), (int(sid[i]), g_prev(i)), "no-conflict",
                  f"{name(sid[i])} is touched twice in cycle {c0 + cyc[i]}", (g_prev(i), g(i)))
        for i in np.flatnonzero(has & ~clash & ~starts & (pe != prev_left))[:1]:
            offer(("lost",), (int(sid[i]), g_prev(i)), "ring-locality",
                  f"the partial sum {name(sid[i])} is on PE {prev_left[i]}, not on PE {pe[i]} "
                  "where it is needed next", (g_prev(i), g(i)))

        tails = np.append(heads[1:] - 1, S - 1)
        self.last[sid[tails]] = ((c0 + cyc[tails].astype(np.int64)) * m + p[tails] % m) * K + k
        self.left[sid[tails]] = left[tails]
        if not pt.active.all():
            act = np.flatnonzero(pt.active[p])
            sid, cyc = sid[act], cyc[act]
        ends = np.flatnonzero(sid[1:] != sid[:-1])
        ends = np.append(ends, sid.size - 1) if sid.size else ends
        self.final[sid[ends]] = c0 + cyc[ends]                # the cycle of each sum's last term

    def final_nodes(self, lo: int, hi: int):
        """(ids, PE, cycle) of the finished sums among data lo..hi-1: where and from when each is
        available (one cycle after its last node)."""
        ids = lo + np.flatnonzero(self.last[lo:hi] >= 0)
        return ids, self.left[ids], self.last[ids] // (self.m * self.K) + 1
