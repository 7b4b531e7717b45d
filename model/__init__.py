"""Machines that run schedules: the cycle-level ring (`ring`), the bit-level Boolean ring
(`bitlevel`), the bank/cluster device (`device`) and the spatial-unrolling model (`unrolling`).
Machines hold no solvers; those live in `ringproof.proofs`."""
