"""How things are proved: the ring prover (`ring`), the optimal-schedule search (`search`), the
MINIMAX balancer (`balance`), the unrolling facts (`unrolling`), reports (`report`) and the `prove`
command (`cli`). Shared records live in `results`."""
